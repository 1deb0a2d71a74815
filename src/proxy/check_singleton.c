/* check_singleton.c - a header the gateway reads and acts on, sent more
 * than once, is refused (400, -32016) instead of the first value
 * winning: a proxy in front and the gateway (or the gateway and the
 * upstream) could each take another one.  Host and Content-Length are
 * refused by the HTTP layer already; the list here is what the proxy
 * reads.  The three SEP-2243 headers get MCP's own HeaderMismatch
 * (-32020), which the specification gives a header sent twice; the
 * others the gateway's -32016. */
#include "autoconf.h"

#include <stdint.h>
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

/* Spelled as they are named in the answer; sep2243: MCP's own
 * HeaderMismatch answers it. */
#define SINGLETONS(X)                                                       \
	X("Authorization", 0) X("Mcp-Session-Id", 0)                        \
	X("MCP-Protocol-Version", 1) X("Mcp-Method", 1) X("Mcp-Name", 1)    \
	X("Last-Event-ID", 0) X("Content-Length", 0) X("Origin", 0)
#define S(name, sep2243) {name, sizeof(name) - 1, sep2243},
static const struct singleton {
	const char *name;
	size_t len;
	int sep2243;
} singletons[] = {SINGLETONS(S)};
#undef S
#define N_SINGLETONS (sizeof(singletons) / sizeof(singletons[0]))

/* Bit n set: some singleton's name is n bytes long (all are shorter than
 * 32), so most fields are passed over after one test. */
#define BIT(name, sep2243) | UINT32_C(1) << (sizeof(name) - 1)
static const uint32_t length_mask = 0 SINGLETONS(BIT);
#undef BIT

static const struct singleton *repeated(const struct mgw_headers *h)
{
	unsigned seen[N_SINGLETONS] = {0};

	for (size_t i = 0; i < h->n; i++) {
		size_t n = h->v[i].name_len;

		if (n >= 32 || !(length_mask >> n & 1))
			continue;
		for (size_t k = 0; k < N_SINGLETONS; k++)
			if (mgw_header_is(&h->v[i], singletons[k].name,
			                  singletons[k].len) &&
			    ++seen[k] > 1)
				return &singletons[k];
	}
	return NULL;
}

const char *mgw_check_repeated_header(const struct mgw_headers *h)
{
	const struct singleton *s = repeated(h);

	return s ? s->name : NULL;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const struct singleton *s = repeated(mgw_http_req_headers(t->x));
	char msg[96];

	if (!s)
		return MGW_CHECK_PASS;
	snprintf(msg, sizeof(msg), "header %s sent more than once", s->name);
	t->note = "repeated header";
	if (!s->sep2243) {
		mgw_txn_fail(t, MGW_PERR_BAD_HEADER, msg);
		return MGW_CHECK_ANSWERED;
	}
	return mgw_check_reject(t, 400, MGW_MCP_HEADER_MISMATCH, msg, NULL,
	                        t->as_json, "repeated header");
}

const struct mgw_check mgw_check_singleton = {
	"singleton-headers", MGW_PHASE_REQUEST, MGW_H_ALL, run,
};
