/* check_metrics.c - GET admin.metrics_path (/metrics): the Prometheus
 * metrics (metrics.h), answered by the gateway itself to the clients
 * admin.metrics allows, on the listener admin.metrics_listener names (or
 * any).  HEAD gets the same head without the body; another method 405
 * with Allow.  For everyone else, and with admin.metrics: off, the path
 * is not special and goes upstream like any other (as /mcpgw/stats). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "http/headers.h"
#include "http/server.h"
#include "proxy/auth_wait.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/metrics.h"
#include "proxy/pipeline.h"
#include "proxy/txn.h"
#include "util/prom.h"

static int allowed(const struct mgw_pipeline *pl, struct mgw_http_exchange *x)
{
	enum mgw_stats_access who = pl->conf->metrics;

	if (pl->metrics->listener >= 0 &&
	    mgw_http_listener_index(x) != (unsigned)pl->metrics->listener)
		return 0;
	return who == MGW_STATS_ANY ||
	       (who == MGW_STATS_LOOPBACK && mgw_http_peer_is_loopback(x));
}

static void not_allowed(struct mgw_txn *t)
{
	static const char msg[] = "only GET and HEAD are served here\n";
	struct mgw_proxy_reply r = {
		.status = 405, .content_type = "text/plain; charset=utf-8",
		.body = strdup(msg), .len = sizeof(msg) - 1,
	};
	struct mgw_headers allow;

	t->note = "metrics: method";
	mgw_headers_init(&allow);
	if (!r.body || mgw_headers_adds(&allow, "Allow", "GET, HEAD") != 0) {
		mgw_proxy_reply_deinit(&r);
		mgw_headers_deinit(&allow);
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return;
	}
	mgw_txn_reply(t, &r, &allow);
	mgw_headers_deinit(&allow);
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	struct mgw_pipeline *pl = t->pl;
	const char *m = mgw_http_method(t->x), *path = pl->conf->metrics_path;
	char *body = NULL;
	size_t len = 0;

	if (!pl->metrics || pl->conf->metrics == MGW_STATS_OFF || !path ||
	    strcmp(mgw_http_path(t->x), path) != 0 || !allowed(pl, t->x))
		return MGW_CHECK_PASS;
	if (strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0) {
		not_allowed(t);
		return MGW_CHECK_ANSWERED;
	}
	if (mgw_metrics_page(pl->metrics, pl->routes, pl->ups,
	                     pl->sf ? pl->sf->sh : NULL,
	                     pl->auth ? mgw_auth_wait_keyring(pl->auth) : NULL,
	                     &body, &len) != 0) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return MGW_CHECK_ANSWERED;
	}
	t->note = "metrics";
	/* the layer sends no body on HEAD, and the length of this one */
	mgw_txn_respond_typed(t, 200, MGW_PROM_CONTENT_TYPE, body, len);
	free(body);
	return MGW_CHECK_ANSWERED;
}

const struct mgw_check mgw_check_metrics = {
	"metrics", MGW_PHASE_REQUEST, MGW_H_ALL, run,
};
