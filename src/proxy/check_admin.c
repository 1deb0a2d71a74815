/* check_admin.c - GET /mcpgw/stats, answered by the gateway itself
 * (admin.h) to the clients admin.stats allows; for everyone else the
 * path is not special and goes upstream like any other. */
#include "autoconf.h"

#include <string.h>

#include "http/server.h"
#include "proxy/admin.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/stateful-t.h"
#include "proxy/txn.h"

static int allowed(enum mgw_stats_access who, const struct mgw_http_exchange *x)
{
	return who == MGW_STATS_ANY ||
	       (who == MGW_STATS_LOOPBACK && mgw_http_peer_is_loopback(x));
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	struct mgw_pipeline *pl = t->pl;
	struct mgw_proxy_reply r = {0};

	if (strcmp(mgw_http_method(t->x), "GET") != 0 ||
	    strcmp(mgw_http_path(t->x), MGW_PROXY_STATS_PATH) != 0 ||
	    !allowed(pl->conf->stats, t->x))
		return MGW_CHECK_PASS;
	if (mgw_admin_stats_body(pl->ups, pl->sf ? pl->sf->sh : NULL, pl->mrtr,
	                         pl->conf->mode, &r.body, &r.len) != 0) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return MGW_CHECK_ANSWERED;
	}
	r.status = 200;
	r.content_type = "application/json";
	t->note = "stats";
	mgw_txn_reply(t, &r, NULL);
	return MGW_CHECK_ANSWERED;
}

const struct mgw_check mgw_check_admin = {
	"admin", MGW_PHASE_REQUEST, MGW_H_ALL, run,
};
