/* check_health.c - the gateway's own health, answered by the gateway to
 * every client on every listener and never forwarded:
 *   GET /mcpgw/healthz   liveness: 200 when every worker's loop turned in
 *                        the last MGW_LIVENESS_STALE_MS (liveness.h), else
 *                        503 naming the first stuck worker;
 *   GET /mcpgw/readyz    readiness: 503 "draining" once a stop was asked
 *                        for (SIGTERM: the drain.delay before the
 *                        listeners close); else 200 when every upstream
 *                        group a route uses has a server available now
 *                        (up, not ejected, not draining), else 503
 *                        naming the first group without one.
 * Both answer a small JSON object; HEAD is answered like GET. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/server.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/liveness.h"
#include "proxy/pipeline.h"
#include "proxy/route.h"
#include "proxy/txn.h"
#include "proxy/upstream.h"
#include "util/time.h"

/* The group of a route with no server available at now, or NULL. */
static const struct mgw_upstream_group *unready_group(const struct mgw_routes *rt,
                                                      uint64_t now)
{
	for (size_t i = 0; i < rt->n; i++) {
		const struct mgw_upstream_group *g = rt->v[i].group;
		size_t s;

		for (s = 0; s < g->n_servers; s++)
			if (mgw_upstream_available(&g->servers[s], now))
				break;
		if (s == g->n_servers)
			return g;
	}
	return NULL;
}

static void answer(struct mgw_txn *t, int ok, const char *what, const char *why)
{
	char body[256];
	int n;

	n = snprintf(body, sizeof(body), "{\"status\":\"%s\"%s%s%s}\n",
	             ok ? "ok" : "unavailable", why ? ",\"reason\":\"" : "",
	             why ? why : "", why ? "\"" : "");
	if (n < 0 || (size_t)n >= sizeof(body))
		n = snprintf(body, sizeof(body), "{\"status\":\"%s\"}\n",
		             ok ? "ok" : "unavailable");
	t->note = what;
	mgw_txn_respond_typed(t, ok ? 200 : 503, "application/json", body,
	                      (size_t)n);
}

static void healthz(struct mgw_txn *t)
{
	size_t first = 0;
	char why[80];

	if (mgw_liveness_stale(t->pl->live_beats, mgw_now_ms(), &first) == 0) {
		answer(t, 1, "healthz", NULL);
		return;
	}
	snprintf(why, sizeof(why), "worker %zu loop stalled", first);
	answer(t, 0, "healthz", why);
}

static void readyz(struct mgw_txn *t)
{
	const struct mgw_upstream_group *g = unready_group(t->pl->routes,
	                                                   mgw_now_ms());
	char why[160];

	if (mgw_liveness_draining(t->pl->live_beats)) {
		answer(t, 0, "readyz", "draining");
		return;
	}
	if (!g) {
		answer(t, 1, "readyz", NULL);
		return;
	}
	/* group names are configuration identifiers: no quoting needed, but
	 * keep the JSON valid whatever they hold */
	snprintf(why, sizeof(why), "no server available in upstream group %.100s",
	         strpbrk(g->name, "\"\\") ? "(unnamed)" : g->name);
	answer(t, 0, "readyz", why);
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const char *m = mgw_http_method(t->x), *p = mgw_http_path(t->x);

	if (strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0)
		return MGW_CHECK_PASS;
	if (strcmp(p, MGW_PROXY_HEALTHZ_PATH) == 0)
		healthz(t);
	else if (strcmp(p, MGW_PROXY_READYZ_PATH) == 0)
		readyz(t);
	else
		return MGW_CHECK_PASS;
	return MGW_CHECK_ANSWERED;
}

const struct mgw_check mgw_check_health = {
	"health", MGW_PHASE_REQUEST, MGW_H_ALL, run,
};
