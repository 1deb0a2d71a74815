/* check_body.c - a sessionless POST of a legacy (or unknown) era in
 * stateful or auto mode whose JSON body the gateway could not read.  It
 * may be an initialize the replica accepts, whose session the gateway
 * would then not know (every later request of it a 404), so it is
 * refused (400 with the reader's error) rather than forwarded. */
#include "autoconf.h"

#include "http/server.h"
#include "proxy/checks.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	if (t->pl->conf->mode == MGW_MODE_STATELESS ||
	    t->era == MGW_ERA_IS_MODERN || !mgw_check_json_body(t) ||
	    mgw_jrpc_parsed(&t->msg) || mgw_http_req_header(t->x, "mcp-session-id"))
		return MGW_CHECK_PASS;
	return mgw_check_reject_body(t);
}

const struct mgw_check mgw_check_unreadable = {
	"unreadable-sessionless", MGW_PHASE_REQUEST, MGW_H_ALL, run,
};
