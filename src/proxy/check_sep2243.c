/* check_sep2243.c - SEP-2243 header validation of modern POSTs on routes
 * that validate (validate_headers, the default), for both handlers.
 *
 * Which bodies are judged does not depend on how the body is labelled
 * (issue 15, the body-form class): a POST that leans on its MCP headers
 * (its route matched on Mcp-Method / Mcp-Name, or it carries either
 * header) must have a body the gateway reads as JSON-RPC and that agrees
 * with them, whatever its Content-Type, with or without a UTF-8 BOM
 * (which the reader ignores, RFC 8259 8.1).  Otherwise a body the gateway
 * cannot read, or reads differently from the backend, could take a
 * route its headers chose and name another tool to the backend.  A body
 * in a content coding (gzip, ...) cannot be read here: 415.  A POST
 * with neither header nor a JSON body (an OAuth form POSTed with a
 * protocol header, say) is not an MCP message and passes unjudged. */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "http/headers.h"
#include "http/server.h"
#include "mcp/sep2243.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/route-t.h"
#include "proxy/txn.h"

int mgw_body_content_coded(const struct mgw_headers *h)
{
	for (size_t i = 0; h && i < h->n; i++) {
		const char *v = h->v[i].value;

		if (!MGW_HEADER_IS(&h->v[i], "content-encoding"))
			continue;
		/* a list of codings, applied in order; "identity" is none */
		while (*v) {
			size_t n;

			v += strspn(v, " \t,");
			n = strcspn(v, " \t,");
			if (n && !(n == 8 && strncasecmp(v, "identity", 8) == 0))
				return 1;
			v += n;
		}
	}
	return 0;
}

enum mgw_confirm mgw_confirm_need(const struct mgw_headers *h,
                                  const struct mgw_jrpc_msg *m,
                                  int route_on_headers)
{
	int leans = route_on_headers || mgw_headers_get(h, "mcp-method") ||
	            mgw_headers_get(h, "mcp-name");

	if (!leans && !mgw_jrpc_parsed(m) &&
	    !mgw_proxy_is_json_type(mgw_headers_get(h, "content-type")))
		return MGW_CONFIRM_NONE;
	if (mgw_body_content_coded(h))
		return MGW_CONFIRM_CODED;
	if (m->kind == MGW_JRPC_INVALID)
		return MGW_CONFIRM_INVALID;
	return MGW_CONFIRM_VALIDATE;
}

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

/* 415 with Accept-Encoding: identity (RFC 9110 15.5.16, 12.5.3): the
 * gateway reads bodies only as sent, uncoded. */
static enum mgw_check_verdict reject_coded(struct mgw_txn *t)
{
	struct mgw_proxy_reply r;
	struct mgw_headers extra;

	t->pl->st.rejected_headers++;
	t->note = "content-coded body";
	mgw_headers_init(&extra);
	if (mgw_headers_adds(&extra, "Accept-Encoding", "identity") != 0 ||
	    mgw_proxy_reply_build(&r, 415, MGW_JRPC_INVALID_REQUEST,
	                          "Unsupported Media Type: a body with a "
	                          "Content-Encoding cannot be checked against its "
	                          "MCP headers; send it uncoded",
	                          NULL, 1,
	                          mgw_proxy_reply_id(&t->msg)) != 0)
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
	else
		mgw_txn_reply(t, &r, &extra);
	mgw_headers_deinit(&extra);
	return MGW_CHECK_ANSWERED;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const struct mgw_headers *h;
	struct mgw_sep2243_verdict v;

	if (!t->route->conf->validate_headers || t->era != MGW_ERA_IS_MODERN ||
	    !t->have_msg)
		return MGW_CHECK_PASS;
	h = mgw_http_req_headers(t->x);
	switch (mgw_confirm_need(h, &t->msg,
	                         t->route->mcp_method || t->route->mcp_name)) {
	case MGW_CONFIRM_NONE:
		return MGW_CHECK_PASS;
	case MGW_CONFIRM_CODED:
		return reject_coded(t);
	case MGW_CONFIRM_INVALID:
		return mgw_check_reject_body(t);
	case MGW_CONFIRM_VALIDATE:
		break;
	}
	mgw_sep2243_validate(h, &t->msg, NULL, NULL, 0, &v);
	return v.ok ? MGW_CHECK_PASS : reject(t, &v);
}

const struct mgw_check mgw_check_sep2243 = {
	"sep2243", MGW_PHASE_ROUTED, MGW_H_ALL, run,
};
