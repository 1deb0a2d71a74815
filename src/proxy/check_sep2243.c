/* check_sep2243.c - SEP-2243 header validation of modern requests on
 * routes that validate (validate_headers, the default).  Only JSON bodies
 * are checked: a modern-looking header on some other POST (an OAuth form,
 * say) is not an MCP message.  A JSON body the reader refused is answered
 * here too: routing has trusted its Mcp-Method / Mcp-Name, which nothing
 * could check. */
#include "autoconf.h"

#include "http/server.h"
#include "mcp/sep2243.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/route-t.h"
#include "proxy/txn.h"

/* Answers a validation failure (400, -32020 or -32022). */
static enum mgw_check_verdict reject(struct mgw_txn *t,
                                     const struct mgw_sep2243_verdict *v)
{
	json_t *data = NULL;

	if (v->code == MGW_MCP_UNSUPPORTED_VERSION)
		data = mgw_sep2243_unsupported_data(NULL, v->requested);
	return mgw_check_reject(t, v->status ? v->status : 400, v->code,
	                        v->message, data, 1, "header validation failed");
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	struct mgw_sep2243_verdict v;

	if (!t->route->conf->validate_headers || t->era != MGW_ERA_IS_MODERN ||
	    !mgw_check_json_body(t))
		return MGW_CHECK_PASS;
	if (t->msg.kind == MGW_JRPC_INVALID)
		return mgw_check_reject_body(t);
	mgw_sep2243_validate(mgw_http_req_headers(t->x), &t->msg, NULL, NULL, 0,
	                     &v);
	return v.ok ? MGW_CHECK_PASS : reject(t, &v);
}

const struct mgw_check mgw_check_sep2243 = {
	"sep2243", MGW_PHASE_ROUTED, MGW_H_STATELESS, run,
};
