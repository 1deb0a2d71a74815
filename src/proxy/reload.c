/* reload.c - `mcpgw serve` configuration reload on SIGHUP.
 *
 * On the main thread, off the workers' loops: the file is loaded and
 * checked as at start (the command line applied over it); what cannot
 * change without a restart (mode, workers, a stateful mode's sessions:)
 * refuses the reload; a new generation is built (upstream groups with
 * the health state of every unchanged server, routes, the stateful
 * handler's share of the same session stores, a health checker that goes
 * on from the old verdicts).  Then the workers are parked for the swap
 * (see worker.h): each gets a new pipeline, listeners are bound
 * or closed, and they go on.  Requests already in progress finish on the
 * pipeline and generation they started with, freed once idle.  Any
 * failure leaves the running configuration as it was. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "core/cfgschema.h"
#include "core/errors.h"
#include "core/log.h"
#include "http/conf_limits.h"
#include "proxy/conf_serve.h"
#include "proxy/health.h"
#include "proxy/metrics.h"
#include "proxy/pipeline.h"
#include "proxy/reload.h"
#include "proxy/route.h"
#include "proxy/serve-t.h"
#include "proxy/stateful.h"
#include "proxy/upstream.h"
#include "proxy/worker.h"
#include "session/conf_sessions.h"
#include "util/time.h"

/* How long the main thread waits for every worker to park. */
#define PARK_TIMEOUT 5.0

void mgw_serve_gen_free(struct mgw_serve_gen *g)
{
	if (!g)
		return;
	mgw_sf_shared_free(g->sf);
	mgw_keyring_free(g->keys);
	mgw_routes_free(g->routes);
	mgw_upstreams_free(g->ups);
	if (!g->stores_owner)
		mgw_config_free(g->cfg);
	free(g);
}

struct mgw_serve_gen *mgw_serve_gen_new(struct mgw_config *cfg,
                                        struct mgw_sf_shared *prev_sf,
                                        struct event_base *house, char *err,
                                        size_t errlen)
{
	struct mgw_serve_gen *g = calloc(1, sizeof(*g));

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	atomic_init(&g->refs, 0);
	g->cfg = cfg;
	g->ups = mgw_upstreams_new(&cfg->serve, err, errlen);
	if (!g->ups)
		goto fail;
	g->routes = mgw_routes_new(&cfg->serve, g->ups, err, errlen);
	if (!g->routes)
		goto fail;
	if (cfg->serve.mode != MGW_MODE_STATELESS) {
		char why[900];

		if (prev_sf)
			g->sf = mgw_sf_shared_next(prev_sf, &cfg->serve, g->routes,
			                           why, sizeof(why));
		else
			g->sf = mgw_sf_shared_new(&cfg->serve, g->routes, house, why,
			                          sizeof(why));
		if (!g->sf) {
			snprintf(err, errlen, "sessions: %s", why);
			goto fail;
		}
		g->stores_owner = prev_sf == NULL;
	}
	if (cfg->serve.auth.enabled) {
		g->keys = mgw_keyring_new(house, &cfg->serve.auth, err, errlen);
		if (!g->keys)
			goto fail;
	}
	return g;
fail:
	g->cfg = NULL;           /* the caller's */
	g->stores_owner = 1;
	mgw_serve_gen_free(g);
	return NULL;
}

/* Frees the retired generations no pipeline uses any more. */
void mgw_serve_gen_collect(struct serve *sv, int all)
{
	struct mgw_serve_gen **pp = &sv->retired;

	while (*pp) {
		struct mgw_serve_gen *g = *pp;

		if (!all && atomic_load(&g->refs) > 0) {
			pp = &g->next;
			continue;
		}
		*pp = g->next;
		mgw_debug(NULL, "reload: generation %u freed", g->seq);
		/* a stores owner's snapshot stays (sv->stores_cfg) */
		mgw_serve_gen_free(g);
	}
}

/* ---- what a reload may change ---- */

static int compatible(const struct serve *sv, const struct mgw_config *next,
                      char *why, size_t whylen)
{
	const struct mgw_config *cur = sv->cfg;
	unsigned nw = mgw_serve_workers(next);

	if (next->serve.mode != cur->serve.mode) {
		snprintf(why, whylen, "mode: %s -> %s needs a restart",
		         mgw_config_mode_name(cur->serve.mode),
		         mgw_config_mode_name(next->serve.mode));
		return 0;
	}
	if (nw != sv->n_workers) {
		snprintf(why, whylen, "workers: %u -> %u needs a restart",
		         sv->n_workers, nw);
		return 0;
	}
	if (cur->serve.mode != MGW_MODE_STATELESS &&
	    !mgw_cfg_equal(&mgw_sessions_conf_section, &cur->serve.sessions,
	                   &next->serve.sessions)) {
		snprintf(why, whylen, "sessions: changed; the session stores "
		         "are kept across reloads, so this needs a restart");
		return 0;
	}
	if (!mgw_cfg_equal(&mgw_http_limits_section, &cur->limits, &next->limits))
		mgw_warn(NULL, "reload: limits: and timeouts: of the listeners "
		         "keep their values until a restart");
	return 1;
}

/* ---- listeners ---- */

static int same_spec(const struct mgw_serve_lst *l, const struct mgw_listen_spec *s)
{
	return strcmp(l->address, s->address) == 0 &&
	       strcmp(l->cert, s->cert ? s->cert : "") == 0 &&
	       strcmp(l->key, s->key ? s->key : "") == 0;
}

struct lst_diff {
	struct mgw_listen_spec added[MGW_CLI_MAX_LISTEN];
	size_t n_added;
	int keep[MGW_CLI_MAX_LISTEN];   /* per sv->lst entry */
	size_t n_removed;
};

static void diff_listeners(const struct serve *sv,
                           const struct mgw_listen_spec *ls, size_t n,
                           struct lst_diff *d)
{
	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < sv->n_lst; j++)
			if (same_spec(&sv->lst[j], &ls[i]))
				break;
		if (j < sv->n_lst)
			d->keep[j] = 1;
		else
			d->added[d->n_added++] = ls[i];
	}
	for (size_t j = 0; j < sv->n_lst; j++)
		d->n_removed += !d->keep[j];
}

static void close_listener(struct serve *sv, const char *bound)
{
	for (unsigned w = 0; w < sv->n_workers; w++)
		(void)mgw_worker_unlisten(sv->workers[w], bound);
}

/* Closes the listeners the new file no longer has (among the n_old that
 * were there before the reload), and compacts sv->lst. */
static void close_removed(struct serve *sv, const struct lst_diff *d,
                          size_t n_old)
{
	size_t k = 0;

	for (size_t j = 0; j < sv->n_lst; j++) {
		if (j < n_old && !d->keep[j]) {
			mgw_info(NULL, "reload: closing listener %s", sv->lst[j].bound);
			close_listener(sv, sv->lst[j].bound);
			continue;
		}
		if (k != j)
			sv->lst[k] = sv->lst[j];
		k++;
	}
	sv->n_lst = k;
}

/* ---- the swap, with every worker parked ---- */

static void free_pipelines(struct mgw_pipeline **pls, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		mgw_pipeline_free(pls[i]);
}

static int build_pipelines(struct serve *sv, struct mgw_serve_gen *g,
                           struct mgw_pipeline **pls, char *err, size_t errlen)
{
	for (unsigned i = 0; i < sv->n_workers; i++) {
		pls[i] = mgw_pipeline_new(sv->workers[i]->base, &g->cfg->serve,
		                          g->routes, g->ups, sv->n_workers, 0, err,
		                          errlen);
		if (!pls[i] ||
		    (g->sf && mgw_pipeline_enable_stateful(pls[i], g->sf, err,
		                                           errlen) != 0) ||
		    (g->keys && mgw_pipeline_enable_auth(pls[i], g->keys, err,
		                                         errlen) != 0)) {
			free_pipelines(pls, i + 1);
			return MGW_EINVAL;
		}
	}
	return 0;
}

/* Parked: new pipelines, new listeners, removed listeners, the swap.
 * Returns 0, or an error with nothing changed. */
static int swap_parked(struct serve *sv, struct mgw_serve_gen *g,
                       const struct lst_diff *d, char *err, size_t errlen)
{
	struct mgw_pipeline **pls = calloc(sv->n_workers, sizeof(*pls));
	size_t first = sv->n_lst;

	if (!pls) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	if (build_pipelines(sv, g, pls, err, errlen) != 0)
		goto fail;
	if (d->n_added && mgw_serve_bind(sv, d->added, d->n_added, first) != 0) {
		/* what was bound of them goes again */
		for (size_t i = first; i < first + d->n_added; i++)
			if (sv->lst[i].bound[0])
				close_listener(sv, sv->lst[i].bound);
		sv->n_lst = first;
		snprintf(err, errlen, "a new listener could not be opened (see "
		         "above)");
		free_pipelines(pls, sv->n_workers);
		goto fail;
	}
	close_removed(sv, d, first);
	for (unsigned i = 0; i < sv->n_workers; i++) {
		struct mgw_worker *w = sv->workers[i];

		atomic_fetch_add(&sv->gen->refs, 1);
		if (mgw_worker_swap(w, pls[i], &sv->gen->refs) != 0) {
			atomic_fetch_sub(&sv->gen->refs, 1);
			mgw_err(NULL, "reload: worker %u keeps the old configuration "
			        "(out of memory)", i);
			mgw_pipeline_free(pls[i]);
		}
		w->shutdown_timeout = g->cfg->shutdown_timeout;
	}
	free(pls);
	return 0;
fail:
	free(pls);
	return MGW_EINVAL;
}

/* ---- the reload ---- */

static void refuse(struct serve *sv, const char *why)
{
	sv->reloads_failed++;
	mgw_metrics_reload_done(0);
	mgw_err(NULL, "reload refused, the running configuration stays: %s", why);
}

static size_t count_servers(const struct mgw_upstreams *ups)
{
	size_t n = 0;

	for (size_t i = 0; i < ups->n_groups; i++)
		n += ups->groups[i].n_servers;
	return n;
}

/* The new generation goes live; the old one is retired. */
static void go_live(struct serve *sv, struct mgw_serve_gen *g,
                    struct mgw_health *health)
{
	struct mgw_serve_gen *old = sv->gen;

	mgw_health_free(sv->health);
	sv->health = health;
	mgw_health_start(health);
	g->seq = old->seq + 1;
	old->next = sv->retired;
	sv->retired = old;
	sv->gen = g;
	sv->cfg = g->cfg;
	sv->ups = g->ups;
	sv->routes = g->routes;
	sv->sf = g->sf;
	mgw_serve_gen_collect(sv, 0);
}

void mgw_serve_reload(struct serve *sv)
{
	struct mgw_listen_spec ls[MGW_CLI_MAX_LISTEN];
	struct mgw_config *cfg = NULL;
	struct mgw_serve_gen *g = NULL;
	struct mgw_health *health = NULL;
	struct lst_diff d;
	char err[1024];
	size_t n_ls = 0, kept;
	uint64_t parked;

	if (!sv->path) {
		refuse(sv, "SIGHUP without a configuration file (-c FILE) to "
		       "reload");
		return;
	}
	mgw_info(NULL, "reload: loading %s", sv->path);
	cfg = mgw_config_load(sv->path, err, sizeof(err));
	if (!cfg) {
		refuse(sv, err);
		return;
	}
	if (mgw_serve_prepare(sv->flags, cfg, ls, &n_ls) != 0) {
		refuse(sv, "the file is not a valid serve configuration (see "
		       "above)");
		goto fail;
	}
	if (!compatible(sv, cfg, err, sizeof(err))) {
		refuse(sv, err);
		goto fail;
	}
	g = mgw_serve_gen_new(cfg, sv->sf, sv->base, err, sizeof(err));
	if (!g) {
		refuse(sv, err);
		goto fail;
	}
	kept = mgw_upstreams_adopt(g->ups, sv->ups);
	if (g->keys)
		mgw_keyring_adopt(g->keys, sv->gen->keys);
	health = mgw_health_new(sv->base, g->ups, err, sizeof(err));
	if (!health) {
		refuse(sv, err);
		goto fail;
	}
	mgw_health_adopt(health, sv->health);
	diff_listeners(sv, ls, n_ls, &d);
	parked = mgw_now_ns();
	if (mgw_workers_park(&sv->park, sv->workers, sv->n_workers,
	                     PARK_TIMEOUT) != 0) {
		refuse(sv, "a worker did not answer within 5 s");
		goto fail;
	}
	if (swap_parked(sv, g, &d, err, sizeof(err)) != 0) {
		mgw_workers_release(&sv->park);
		refuse(sv, err);
		goto fail;
	}
	mgw_workers_release(&sv->park);
	parked = mgw_now_ns() - parked;
	go_live(sv, g, health);
	(void)mgw_serve_apply_logs(sv->flags, cfg, 1);
	sv->reloads++;
	mgw_metrics_reload_done(1);
	mgw_warn(NULL, "reload: done, generation %u: %zu upstream groups, %zu "
	         "servers (%zu kept their health state), %zu routes, "
	         "listeners +%zu -%zu; workers paused %.2f ms", g->seq,
	         g->ups->n_groups, count_servers(g->ups), kept, g->routes->n,
	         d.n_added, d.n_removed, (double)parked / 1e6);
	return;
fail:
	mgw_health_free(health);
	if (g) {
		g->stores_owner = 1;     /* cfg is freed below */
		mgw_serve_gen_free(g);
	}
	mgw_config_free(cfg);
}
