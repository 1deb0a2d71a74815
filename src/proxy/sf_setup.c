/* sf_setup.c - the stateful handler's stores (shared by the workers),
 * its per-worker state, and its counters for /mcpgw/stats. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/errors.h"
#include "core/log.h"
#include "proxy/pipeline.h"
#include "proxy/repin.h"
#include "proxy/sf_bus.h"
#include "proxy/sf_req.h"
#include "proxy/stateful.h"
#include "session/store.h"

/* A route choosing the sealed store over another default store keeps its
 * tokens header-sized (doc/sessions.md). */
#define SEALED_ROUTE_INIT_MAX (8 * 1024)

static int route_kind(const struct mgw_serve_conf *conf,
                      const struct mgw_route_conf *r)
{
	int k = r->session_store;

	if (k == MGW_SESSION_STORE_DEFAULT || k < 0 || k >= MGW_SF_STORE_KINDS)
		k = conf->sessions.store;
	return k;
}

/* Which store each route uses, for the routes of one generation; every
 * kind they need must be open in core.  Returns 0, MGW_ENOMEM or
 * MGW_EINVAL (err says which route needs a store that is not open). */
static int map_routes(struct mgw_sf_shared *sh, const struct mgw_routes *routes,
                      char *err, size_t errlen)
{
	sh->n_routes = routes->n;
	sh->route_store = calloc(routes->n ? routes->n : 1, sizeof(*sh->route_store));
	if (!sh->route_store) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	for (size_t i = 0; i < routes->n; i++) {
		int k = route_kind(sh->conf, routes->v[i].conf);

		sh->route_store[i] = k;
		if (!sh->core->stores[k].st) {
			snprintf(err, errlen, "route %zu uses a session store that "
			         "was not open at start (a new store needs a restart)",
			         i + 1);
			return MGW_EINVAL;
		}
	}
	return 0;
}

static int open_stores(struct mgw_sf_core *core, const struct mgw_serve_conf *conf,
                       const struct mgw_routes *routes,
                       struct event_base *house, char *err, size_t errlen)
{
	struct mgw_session_env env;
	int used[MGW_SF_STORE_KINDS] = {0};

	used[conf->sessions.store] = 1;
	for (size_t i = 0; i < routes->n; i++)
		used[route_kind(conf, routes->v[i].conf)] = 1;
	memset(&env, 0, sizeof(env));
	env.house_base = house;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		struct mgw_sf_store *s = &core->stores[k];

		if (!used[k])
			continue;
		s->conf = conf->sessions;
		s->conf.store = (enum mgw_session_store_conf)k;
		if (k == MGW_SESSION_STORE_SEALED &&
		    conf->sessions.store != MGW_SESSION_STORE_SEALED &&
		    s->conf.max_initialize_bytes > SEALED_ROUTE_INIT_MAX)
			s->conf.max_initialize_bytes = SEALED_ROUTE_INIT_MAX;
		s->st = mgw_session_store_new(&s->conf, &env, err, errlen);
		if (!s->st)
			return MGW_EINVAL;
	}
	return 0;
}

static void core_unref(struct mgw_sf_core *core)
{
	if (!core || atomic_fetch_sub(&core->refs, 1) != 1)
		return;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		mgw_session_store_free(core->stores[k].st);
	mgw_sf_bus_deinit(&core->bus);
	free(core);
}

struct mgw_sf_shared *mgw_sf_shared_new(const struct mgw_serve_conf *conf,
                                        const struct mgw_routes *routes,
                                        struct event_base *house, char *err,
                                        size_t errlen)
{
	struct mgw_sf_shared *sh = calloc(1, sizeof(*sh));

	if (!sh || !(sh->core = calloc(1, sizeof(*sh->core))) ||
	    mgw_sf_bus_init(&sh->core->bus) != 0) {
		if (sh)
			free(sh->core);
		free(sh);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	atomic_init(&sh->core->refs, 1);
	sh->conf = conf;
	if (open_stores(sh->core, conf, routes, house, err, errlen) != 0 ||
	    map_routes(sh, routes, err, errlen) != 0) {
		mgw_sf_shared_free(sh);
		return NULL;
	}
	return sh;
}

struct mgw_sf_shared *mgw_sf_shared_next(struct mgw_sf_shared *prev,
                                         const struct mgw_serve_conf *conf,
                                         const struct mgw_routes *routes,
                                         char *err, size_t errlen)
{
	struct mgw_sf_shared *sh = calloc(1, sizeof(*sh));

	if (!sh) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sh->conf = conf;
	sh->core = prev->core;
	atomic_fetch_add(&sh->core->refs, 1);
	if (map_routes(sh, routes, err, errlen) != 0) {
		mgw_sf_shared_free(sh);
		return NULL;
	}
	return sh;
}

void mgw_sf_shared_free(struct mgw_sf_shared *sh)
{
	if (!sh)
		return;
	core_unref(sh->core);
	free(sh->route_store);
	free(sh);
}

struct mgw_sf *mgw_sf_new(struct mgw_sf_shared *sh, struct mgw_pipeline *pl,
                          char *err, size_t errlen)
{
	struct mgw_sf *sf = calloc(1, sizeof(*sf));
	struct mgw_repin_env env;

	if (!sf) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sf->sh = sh;
	sf->pl = pl;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		if (!sh->core->stores[k].st)
			continue;
		sf->views[k] = mgw_session_view_new(sh->core->stores[k].st, pl->base, err,
		                                    errlen);
		if (!sf->views[k])
			goto fail;
	}
	memset(&env, 0, sizeof(env));
	env.pool = pl->pool;
	env.sconf = &sh->conf->sessions;
	env.max_depth = sh->conf->max_json_depth;
	env.cnt = &sh->core->cnt.repin;
	env.on_repinned = mgw_sf_on_repinned;
	env.hook_arg = sf;
	if (mgw_repin_map_init(&sf->map, &env) != 0 ||
	    !(sf->bus = mgw_sf_bus_subscribe(&sh->core->bus, pl->base,
	                                     mgw_sf_on_bus, sf))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return sf;
fail:
	mgw_sf_free(sf);
	return NULL;
}

int mgw_sf_idle(const struct mgw_sf *sf)
{
	return !sf || (sf->live == 0 && !sf->streams && !sf->bg);
}

void mgw_sf_free(struct mgw_sf *sf)
{
	if (!sf)
		return;
	if (sf->live)
		mgw_warn(NULL, "stateful handler freed with %zu requests in progress",
		         sf->live);
	mgw_sf_bg_drop_all(sf);
	mgw_sf_bus_unsubscribe(sf->bus);
	mgw_repin_map_deinit(&sf->map);
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		mgw_session_view_free(sf->views[k]);
	free(sf);
}

/* ---- statistics ------------------------------------------------------------- */

static json_t *store_json(struct mgw_session_store *st)
{
	struct mgw_session_stats s;

	mgw_session_store_stats(st, &s);
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	                 "s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	                 "s:I}",
	                 "store", s.store ? s.store : "?",
	                 "active", (json_int_t)s.active,
	                 "memory_bytes", (json_int_t)s.memory_bytes,
	                 "created", (json_int_t)s.created,
	                 "expired", (json_int_t)s.expired,
	                 "deleted", (json_int_t)s.deleted,
	                 "evicted", (json_int_t)s.evicted,
	                 "refused", (json_int_t)s.refused,
	                 "lookups", (json_int_t)s.lookups,
	                 "not_found", (json_int_t)s.not_found,
	                 "rejected_token", (json_int_t)s.rejected_token,
	                 "rejected_principal", (json_int_t)s.rejected_principal,
	                 "conflicts", (json_int_t)s.conflicts,
	                 "cache_hits", (json_int_t)s.cache_hits,
	                 "cache_misses", (json_int_t)s.cache_misses,
	                 "errors", (json_int_t)s.errors,
	                 "unreachable", (json_int_t)s.unreachable,
	                 "outages", (json_int_t)s.outages,
	                 "writebacks", (json_int_t)s.writebacks,
	                 "restored_writeback", (json_int_t)s.restored_writeback,
	                 "restored_lookup", (json_int_t)s.restored_lookup);
}

/* Sets name: v in o; returns 0 or MGW_ENOMEM. */
static int put(json_t *o, const char *name, uint64_t v)
{
	return json_object_set_new(o, name, json_integer((json_int_t)v)) == 0
	       ? 0 : MGW_ENOMEM;
}

int mgw_sf_stats_json(struct mgw_sf_shared *sh, json_t *out)
{
	const struct mgw_sf_counters *c = &sh->core->cnt;
	const struct mgw_repin_counters *rc = &c->repin;
	json_t *o = json_object(), *stores = json_array(), *by = json_object();
	json_t *def = NULL;
	uint64_t active = 0, expired = 0, errors = 0, total = 0;
	const struct {
		const char *name;
		const atomic_uint_fast64_t *v;
	} counters[] = {
		{"created", &c->created},
		{"deleted", &c->deleted},
		{"unrecoverable", &c->unrecoverable},
		{"not_found", &c->not_found},
		{"requests", &c->requests},
		{"initializes", &c->initializes},
		{"create_failed", &c->create_failed},
		{"store_errors", &c->store_errors},
		{"missing_session", &c->missing_session},
		{"inflight_replayed", &c->inflight_replayed},
		{"replays_refused", &c->inflight_refused},
		{"streams", &c->streams},
		{"streams_closed", &c->streams_closed},
		{"streams_closed_elsewhere", &c->streams_closed_elsewhere},
		{"last_event_passed", &c->last_event_passed},
		{"last_event_dropped", &c->last_event_dropped},
		{"resumes_answered", &c->resumes_answered},
		{"tools_recorded", &c->tools_recorded},
		{"record_updates_failed", &c->record_updates_failed},
		{"repinned", &rc->repinned},
		{"adopted", &rc->adopted},
		{"repin_failed", &rc->failed},
		{"repin_gone", &rc->gone},
		{"replays", &rc->replays},
		{"replay_failures", &rc->replay_failures},
		{"waited", &rc->waited},
		{"store_unsaved", &rc->store_unsaved},
		{"upstream_deletes", &rc->upstream_deletes},
	};
	int rc_ = MGW_ENOMEM;

	if (!o || !stores || !by)
		goto out;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		struct mgw_session_stats st;
		json_t *j;

		if (!sh->core->stores[k].st)
			continue;
		mgw_session_store_stats(sh->core->stores[k].st, &st);
		active += st.active;
		expired += st.expired;
		errors += st.errors;
		j = store_json(sh->core->stores[k].st);
		if (!j)
			goto out;
		if (k == (int)sh->conf->sessions.store)
			def = json_incref(j);
		if (json_array_append_new(stores, j) != 0)
			goto out;
	}
	/* by reason only: readers sum the members */
	for (int r = 0; r < MGW_REPIN_REASON_N; r++) {
		uint64_t v = atomic_load(&rc->started[r]);

		total += v;
		if (put(by, mgw_repin_reason_name(r), v) != 0)
			goto out;
	}
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (put(o, counters[i].name, atomic_load(counters[i].v)) != 0)
			goto out;
	if (put(o, "active", active) != 0 || put(o, "expired", expired) != 0 ||
	    put(o, "errors", errors) != 0 || put(o, "repins_total", total) != 0)
		goto out;
	/* set_new takes the value in every case */
	if (json_object_set_new(o, "repins", json_incref(by)) != 0 ||
	    json_object_set_new(o, "stores", json_incref(stores)) != 0 ||
	    (def && json_object_set_new(o, "store", json_incref(def)) != 0) ||
	    json_object_set_new(out, "sessions", json_incref(o)) != 0)
		goto out;
	rc_ = 0;
out:
	json_decref(def);
	json_decref(by);
	json_decref(stores);
	json_decref(o);
	return rc_;
}
