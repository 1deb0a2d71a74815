/* check_endpoint.c - stateless mode serves the MCP endpoint with POST
 * only: a GET or DELETE aimed at it (mgw_proxy_is_mcp_endpoint) is
 * answered 405 with Allow: POST; other GETs are forwarded. */
#include "autoconf.h"

#include <string.h>

#include "http/headers.h"
#include "http/server.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/txn.h"

int mgw_proxy_is_mcp_endpoint(const char *method, const char *path,
                              const struct mgw_headers *h)
{
	const char *accept;

	if (strcmp(method, "GET") != 0 && strcmp(method, "DELETE") != 0)
		return 0;
	if (path && strcmp(path, "/mcp") == 0)
		return 1;
	if (h && (mgw_headers_get(h, "mcp-session-id") ||
	          mgw_headers_get(h, "mcp-protocol-version") ||
	          mgw_headers_get(h, "last-event-id")))
		return 1;
	if (strcmp(method, "GET") != 0 || !h)
		return 0;
	for (size_t i = 0; i < h->n; i++) {
		if (!MGW_HEADER_IS(&h->v[i], "accept"))
			continue;
		/* any mention, with or without parameters or q-values */
		accept = h->v[i].value;
		if (strstr(accept, "text/event-stream"))
			return 1;
	}
	return 0;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	struct mgw_headers allow;
	struct mgw_proxy_reply r;

	if (!mgw_proxy_is_mcp_endpoint(mgw_http_method(t->x), mgw_http_path(t->x),
	                               mgw_http_req_headers(t->x)))
		return MGW_CHECK_PASS;
	t->pl->st.errors[MGW_PERR_METHOD]++;
	t->note = "no GET/DELETE in stateless mode";
	mgw_headers_init(&allow);
	if (mgw_headers_adds(&allow, "Allow", "POST") != 0 ||
	    mgw_proxy_reply_error(&r, MGW_PERR_METHOD,
	                          "stateless MCP endpoint: only POST is served",
	                          t->as_json, NULL) != 0) {
		mgw_headers_deinit(&allow);
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return MGW_CHECK_ANSWERED;
	}
	mgw_txn_reply(t, &r, &allow);
	mgw_headers_deinit(&allow);
	return MGW_CHECK_ANSWERED;
}

const struct mgw_check mgw_check_endpoint = {
	"stateless-endpoint", MGW_PHASE_REQUEST, MGW_H_STATELESS, run,
};
