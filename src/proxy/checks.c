/* checks.c - the table of request checks and its runner (checks.h). */
#include "autoconf.h"

#include "http/server.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/txn.h"

/* The order of the checks: the repeated-header and Origin checks cover
 * every page, the gateway's own included; the Protected Resource
 * Metadata needs no token; authentication comes first among the routed
 * checks (it needs the route: auth: may be off on it); task affinity
 * comes after the sep2243 check, which confirms Mcp-Name = taskId. */
static const struct mgw_check *const table[] = {
	&mgw_check_singleton,
	&mgw_check_origin,
	&mgw_check_prm,
	&mgw_check_health,
	&mgw_check_admin,
	&mgw_check_metrics,
	&mgw_check_unreadable,
	&mgw_check_endpoint,
	&mgw_check_auth,
	&mgw_check_sep2243,
	&mgw_check_policy,
	&mgw_check_ratelimit,
	&mgw_check_affinity,    /* it may ask Redis; before the guard, which
	                         * must be last */
	&mgw_check_mrtr,        /* last: a request refused before it keeps
	                         * its requestState unused */
};

const struct mgw_check *const *mgw_checks_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

enum mgw_check_verdict mgw_checks_run(struct mgw_txn *t,
                                      enum mgw_check_phase phase)
{
	while (t->check_next < sizeof(table) / sizeof(table[0])) {
		const struct mgw_check *c = table[t->check_next++];
		enum mgw_check_verdict v;

		if (c->phase != phase || !(c->handlers & t->h->bit))
			continue;
		v = c->run(t);
		if (v == MGW_CHECK_PASS && t->have_msg &&
		    mgw_jrpc_tree_failed(&t->msg)) {
			/* the check read a view of the body (built on first
			 * use, mcp/jsonrpc.h) that no memory was left for:
			 * it judged an empty one */
			mgw_txn_fail(t, MGW_PERR_INTERNAL,
			             "no memory to read the request body");
			return MGW_CHECK_ANSWERED;
		}
		if (v == MGW_CHECK_PENDING)
			mgw_txn_watch_client(t); /* a client leaving frees t */
		if (v != MGW_CHECK_PASS)
			return v;
	}
	return MGW_CHECK_PASS;
}

int mgw_check_json_body(const struct mgw_txn *t)
{
	return t->have_msg &&
	       (mgw_jrpc_parsed(&t->msg) ||
	        mgw_proxy_is_json_type(mgw_http_req_header(t->x, "content-type")));
}

enum mgw_check_verdict mgw_check_reject(struct mgw_txn *t, int status,
                                        int code, const char *msg,
                                        json_t *data, int as_json,
                                        const char *note)
{
	struct mgw_proxy_reply r;

	t->pl->st.rejected_headers++;
	t->note = note;
	if (mgw_proxy_reply_build(&r, status, code, msg, data, as_json,
	                          mgw_proxy_reply_id(t->have_msg ? &t->msg
	                                                         : NULL)) != 0)
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
	else
		mgw_txn_reply(t, &r, NULL);
	return MGW_CHECK_ANSWERED;
}

enum mgw_check_verdict mgw_check_reject_body(struct mgw_txn *t)
{
	return mgw_check_reject(t, 400, t->msg.error_code, t->msg.error_msg,
	                        NULL, 1, "invalid JSON-RPC");
}
