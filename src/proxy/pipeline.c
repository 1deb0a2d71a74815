/* pipeline.c - dispatch once: classify, era, handler, checks, route,
 * handler start (pipeline.h gives the order and why). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/server.h"
#include "mcp/era.h"
#include "proxy/auth_wait.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "net/redis.h"
#include "proxy/pipeline.h"
#include "proxy/pool.h"
#include "proxy/route.h"
#include "proxy/stateful.h"
#include "proxy/txn.h"

struct mgw_pipeline *mgw_pipeline_new(struct event_base *base,
                                      const struct mgw_serve_conf *conf,
                                      const struct mgw_routes *routes,
                                      struct mgw_upstreams *ups,
                                      unsigned n_workers, uint64_t seed,
                                      char *err, size_t errlen)
{
	struct mgw_pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pl->base = base;
	pl->conf = conf;
	pl->routes = routes;
	pl->ups = ups;
	mgw_log_limit_init(&pl->rl_log, "rate_limits.redis", 1, MGW_LOG_WARN);
	mgw_log_limit_init(&pl->mrtr_log, "mrtr_guard.redis", 1, MGW_LOG_WARN);
	mgw_log_limit_init(&pl->task_log, "task_affinity.redis", 1, MGW_LOG_WARN);
	pl->pool = mgw_upool_new(base, ups, n_workers, seed, err, errlen);
	if (!pl->pool) {
		free(pl);
		return NULL;
	}
	return pl;
}

int mgw_pipeline_enable_stateful(struct mgw_pipeline *pl,
                                 struct mgw_sf_shared *sh, char *err,
                                 size_t errlen)
{
	if (pl->sf)
		return MGW_EINVAL;
	pl->sf = mgw_sf_new(sh, pl, err, errlen);
	return pl->sf ? 0 : MGW_ENOMEM;
}

int mgw_pipeline_enable_auth(struct mgw_pipeline *pl, struct mgw_keyring *keys,
                             char *err, size_t errlen)
{
	if (pl->auth)
		return MGW_EINVAL;
	pl->auth = mgw_auth_wait_new(pl->base, &pl->conf->auth, keys);
	if (!pl->auth) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	return 0;
}

int mgw_pipeline_idle(const struct mgw_pipeline *pl)
{
	return pl->live == 0 && mgw_sf_idle(pl->sf);
}

void mgw_pipeline_free(struct mgw_pipeline *pl)
{
	if (!pl)
		return;
	if (pl->live)
		mgw_warn(NULL, "pipeline freed with %zu requests in progress",
		         pl->live);
	/* before the pool: it cancels upstream requests of its own */
	mgw_sf_free(pl->sf);
	mgw_auth_wait_free(pl->auth);
	mgw_upool_free(pl->pool);
	mgw_redis_free(pl->rl_redis); /* waiting checks' replies: MGW_EIO */
	mgw_redis_free(pl->mrtr_redis);
	for (size_t i = 0; i < pl->n_task_redis; i++)
		mgw_redis_free(pl->task_redis[i]);
	free(pl->task_redis);
	free(pl);
}

struct mgw_redis *mgw_pipeline_redis(struct mgw_pipeline *pl,
                                     struct mgw_redis **slot,
                                     const struct mgw_redis_conf *c,
                                     struct mgw_log_limit *lim,
                                     const char *what)
{
	struct mgw_redis_opts o = {0};
	char err[256];

	if (*slot || !c->url)
		return *slot;
	o.url = c->url;
	o.tls = &c->tls;
	o.timeout = c->timeout;
	o.sentinels = (const char *const *)c->sentinels;
	o.n_sentinels = c->n_sentinels;
	o.master_name = c->master_name;
	*slot = mgw_redis_new(pl->base, &o, err, sizeof(err));
	if (!*slot && mgw_log_limit_ok(lim))
		mgw_warn(NULL, "%s: %s", what, err);
	return *slot;
}

/* Stateful (sessions terminated here) or stateless balancing. */
static const struct mgw_handler *choose(const struct mgw_txn *t)
{
	const struct mgw_pipeline *pl = t->pl;
	struct mgw_http_exchange *x = t->x;

	if (pl->sf && mgw_sf_claims(pl->conf->mode, mgw_http_method(x),
	                            mgw_http_path(x), mgw_http_req_headers(x),
	                            t->have_msg ? &t->msg : NULL, t->era))
		return &mgw_stateful_handler;
	return &mgw_stateless_handler;
}

/* From the routed checks on: the phase t->route is set for. */
static void run_routed(struct mgw_txn *t)
{
	if (mgw_checks_run(t, MGW_PHASE_ROUTED) != MGW_CHECK_PASS)
		return;
	t->h->start(t);
}

/* From the request checks on (t->check_next says which). */
static void run_request(struct mgw_txn *t)
{
	struct mgw_http_exchange *x = t->x;

	if (mgw_checks_run(t, MGW_PHASE_REQUEST) != MGW_CHECK_PASS)
		return;
	/* Mcp-Method / Mcp-Name are trusted for routing only on requests of
	 * a header-validating version (streamable-http "Server
	 * Validation"); legacy requests match on their path.  Only a POST
	 * carries the message they mirror (and that sep2243 confirms them
	 * against): other methods match on their path too. */
	t->route = mgw_routes_match(t->pl->routes, mgw_http_path(x),
	                            mgw_http_req_headers(x),
	                            t->era == MGW_ERA_IS_MODERN && t->have_msg);
	if (!t->route) {
		mgw_txn_fail(t, MGW_PERR_NO_ROUTE, NULL);
		return;
	}
	t->check_next = 0;
	run_routed(t);
}

void mgw_pipeline_resume(struct mgw_txn *t)
{
	t->pending_cancel = NULL;
	t->pending_arg = NULL;
	if (t->route)
		run_routed(t);
	else
		run_request(t);
}

void mgw_pipeline_on_request(struct mgw_http_exchange *x, void *arg)
{
	struct mgw_pipeline *pl = arg;
	const struct mgw_headers *h = mgw_http_req_headers(x);
	struct mgw_txn *t = mgw_txn_new(pl, x);

	if (!t) {
		mgw_http_respond(x, 500, NULL, NULL, NULL, 0);
		return;
	}
	t->h = &mgw_stateless_handler;  /* until chosen: answers only */
	if (mgw_txn_classify(t) != 0) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return;
	}
	t->era = mgw_mcp_detect_era(h, t->have_msg ? &t->msg : NULL);
	t->h = choose(t);
	t->check_next = 0;
	run_request(t);
}
