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
	struct mgw_proxy_reply r;
	json_t *data = NULL;

	t->pl->st.rejected_headers++;
	t->note = "header validation failed";
	if (v->code == MGW_MCP_UNSUPPORTED_VERSION)
		data = mgw_sep2243_unsupported_data(NULL, v->requested);
	if (mgw_proxy_reply_build(&r, v->status ? v->status : 400, v->code,
	                          v->message, data, 1,
	                          mgw_proxy_reply_id(&t->msg)) != 0)
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
	else
		mgw_txn_reply(t, &r, NULL);
	return MGW_CHECK_ANSWERED;
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
