/* check_singleton.c - a header the gateway reads and acts on, sent more
 * than once, is refused (400, -32016) instead of the first value
 * winning: a proxy in front and the gateway (or the gateway and the
 * upstream) could each take another one.  Host and Content-Length are
 * refused by the HTTP layer already; the list here is what the proxy
 * reads.  The three SEP-2243 headers get MCP's own HeaderMismatch
 * (-32020), which the specification gives a header sent twice; the
 * others the gateway's -32016. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "http/headers.h"
#include "http/server.h"
#include "mcp/jsonrpc.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline-t.h"
#include "proxy/txn.h"

/* Spelled as they are named in the answer. */
static const char *const singletons[] = {
	"Authorization", "Mcp-Session-Id", "MCP-Protocol-Version",
	"Mcp-Method", "Mcp-Name", "Last-Event-ID", "Content-Length",
	"Origin",
};
#define N_SINGLETONS (sizeof(singletons) / sizeof(singletons[0]))

const char *mgw_check_repeated_header(const struct mgw_headers *h)
{
	unsigned seen[N_SINGLETONS] = {0};

	for (size_t i = 0; i < h->n; i++)
		for (size_t k = 0; k < N_SINGLETONS; k++)
			if (mgw_header_is(&h->v[i], singletons[k],
			                  strlen(singletons[k])) &&
			    ++seen[k] > 1)
				return singletons[k];
	return NULL;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const char *name = mgw_check_repeated_header(mgw_http_req_headers(t->x));
	struct mgw_proxy_reply r;
	char msg[96];

	if (!name)
		return MGW_CHECK_PASS;
	snprintf(msg, sizeof(msg), "header %s sent more than once", name);
	t->note = "repeated header";
	if (strncmp(name, "Mcp-M", 5) != 0 && strncmp(name, "Mcp-N", 5) != 0 &&
	    strcmp(name, "MCP-Protocol-Version") != 0) {
		mgw_txn_fail(t, MGW_PERR_BAD_HEADER, msg);
		return MGW_CHECK_ANSWERED;
	}
	t->pl->st.rejected_headers++;
	if (mgw_proxy_reply_build(&r, 400, MGW_MCP_HEADER_MISMATCH, msg, NULL,
	                          t->as_json,
	                          mgw_proxy_reply_id(t->have_msg ? &t->msg
	                                                         : NULL)) != 0)
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
	else
		mgw_txn_reply(t, &r, NULL);
	return MGW_CHECK_ANSWERED;
}

const struct mgw_check mgw_check_singleton = {
	"singleton-headers", MGW_PHASE_REQUEST, MGW_H_ALL, run,
};
