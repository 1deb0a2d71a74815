/* check_policy.c - a route's tool policy (policy.h): a request whose
 * method, tool, prompt or resource the lists chosen for its principal
 * refuse gets 403 with a JSON-RPC error (-32018, data {reason: "policy",
 * method, name}) carrying its id, before any upstream is contacted.  The
 * name judged is always the body's (params.name / params.uri), never
 * Mcp-Name, so a header that disagrees with the body (validate_headers
 * off, or a legacy request) changes nothing.  A legacy batch is judged
 * element by element and refused whole when one element is refused; a
 * POST body that is not a JSON-RPC message cannot be judged and is
 * refused (400) on a route with a policy.  Runs after the auth check
 * (t->principal) and sep2243, for both handlers. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/policy.h"
#include "proxy/route-t.h"
#include "proxy/txn.h"

static const char *const what[MGW_POL_KINDS] = {
	"method", "tool", "prompt", "resource",
};

static enum mgw_check_verdict deny(struct mgw_txn *t, const char *method,
                                   const char *name, enum mgw_policy_kind k)
{
	const struct mgw_proxy_error_info *e =
		mgw_proxy_error_info(MGW_PERR_FORBIDDEN);
	struct mgw_proxy_reply r;
	char msg[320];
	json_t *data;

	snprintf(msg, sizeof(msg), "%s '%.200s' not allowed on this route",
	         what[k], k == MGW_POL_METHODS ? method : (name ? name : ""));
	data = json_pack("{s:s, s:s}", "reason", "policy", "method", method);
	if (data && name)
		json_object_set_new(data, "name", json_string(name));
	t->note = "policy";
	if (mgw_proxy_reply_build(&r, e->status, e->code, msg, data, 1,
	                          mgw_proxy_reply_id(&t->msg)) != 0)
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
	else
		mgw_txn_reply(t, &r, NULL);
	return MGW_CHECK_ANSWERED;
}

/* The name an element of a batch carries (as mgw_jrpc_classify finds it
 * for a single message). */
static const char *element_name(json_t *o, const char *method)
{
	json_t *params = json_object_get(o, "params");
	enum mgw_policy_kind k = mgw_policy_name_kind(method);

	if (k == MGW_POL_METHODS || !json_is_object(params))
		return NULL;
	return json_string_value(json_object_get(params,
	                         k == MGW_POL_RESOURCES ? "uri" : "name"));
}

static enum mgw_check_verdict judge_batch(struct mgw_txn *t,
                                          const struct mgw_policy_lists *l)
{
	enum mgw_policy_kind k;
	size_t i;
	json_t *o;

	json_array_foreach(mgw_jrpc_root(&t->msg), i, o) {
		const char *method = json_string_value(json_object_get(o, "method"));
		const char *name = element_name(o, method);

		if (!json_is_object(o) || !method)
			continue; /* responses (and junk the upstream refuses) */
		if (!mgw_policy_allows(l, method, !json_object_get(o, "id"), name,
		                       &k))
			return deny(t, method, name, k);
	}
	return MGW_CHECK_PASS;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const struct mgw_route_conf *rc = t->route->conf;
	const struct mgw_policy_lists *l;
	enum mgw_policy_kind k;

	if (!t->have_msg || !mgw_policy_active(rc))
		return MGW_CHECK_PASS;
	l = mgw_policy_select(rc, t->principal);
	switch (t->msg.kind) {
	case MGW_JRPC_REQUEST:
	case MGW_JRPC_NOTIFICATION:
		if (mgw_policy_allows(l, t->msg.method,
		                      t->msg.kind == MGW_JRPC_NOTIFICATION,
		                      t->msg.name, &k))
			return MGW_CHECK_PASS;
		return deny(t, t->msg.method, t->msg.name, k);
	case MGW_JRPC_BATCH:
		return judge_batch(t, l);
	case MGW_JRPC_RESPONSE:
		return MGW_CHECK_PASS;
	case MGW_JRPC_INVALID:
		break;
	}
	return mgw_check_reject_body(t);
}

const struct mgw_check mgw_check_policy = {
	"policy", MGW_PHASE_ROUTED, MGW_H_ALL, run,
};
