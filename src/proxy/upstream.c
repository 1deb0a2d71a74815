/* upstream.c - upstream groups at run time: construction from the
 * snapshot, availability, passive outlier ejection with exponential
 * backoff, in-flight counts.  The balancers live in balancer.c. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/tls_client.h"
#include "proxy/balancer.h"
#include "proxy/conf_serve.h"
#include "proxy/affinity.h"
#include "proxy/replay.h"
#include "proxy/retry.h"
#include "proxy/upstream.h"
#include "util/time.h"
#include "util/url.h"

/* Doubling stops here: 2^30 times any base is beyond every max_ejection
 * the schema allows, and the shift stays defined. */
#define MAX_STREAK 30u

static uint64_t to_ms(double seconds)
{
	uint64_t ms = (uint64_t)(seconds * 1000.0 + 0.5);

	return ms ? ms : 1;
}

/* a + sep + b in a new string (sep may be ""). */
static char *concat(const char *a, const char *sep, const char *b)
{
	size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
	char *s = malloc(la + ls + lb + 1);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, sep, ls);
	memcpy(s + la + ls, b, lb + 1);
	return s;
}

static void server_deinit(struct mgw_upstream_server *s)
{
	free(s->host);
	free(s->authority);
	free(s->path_prefix);
	free(s->probe_path);
	free(s->name);
}

static int server_init(struct mgw_upstream_group *g, size_t i, char *err,
                       size_t errlen)
{
	struct mgw_upstream_server *s = &g->servers[i];
	const struct mgw_server_conf *sc = &g->conf->servers[i];
	struct mgw_url u;
	char why[96], auth[MGW_URL_HOST_MAX + 16];

	s->group = g;
	s->index = i;
	s->conf = sc;
	s->weight = sc->weight ? sc->weight : 1;
	atomic_init(&s->health_up, 1);
	atomic_init(&s->ejected_until, 0);
	atomic_init(&s->last_eject_end, 0);
	atomic_init(&s->consec_connect_failures, 0);
	atomic_init(&s->consec_failures, 0);
	atomic_init(&s->eject_streak, 0);
	atomic_init(&s->in_flight, 0);
	atomic_init(&s->draining, 0);
	atomic_init(&s->n_picked, 0);
	atomic_init(&s->n_ejections, 0);
	atomic_init(&s->n_queue_full, 0);
	if (mgw_url_parse(sc->url, &u, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "upstream %s: server '%.100s': %s", g->name,
		         sc->url, why);
		return MGW_EINVAL;
	}
	s->tls = u.tls;
	s->port = u.port;
	mgw_url_authority(&u, auth, sizeof(auth));
	s->host = strdup(u.host);
	s->authority = strdup(auth);
	s->path_prefix = strdup(u.path);
	s->name = concat(g->name, "/", auth);
	if (g->conf->health.path)
		s->probe_path = strdup(g->conf->health.path);
	else
		s->probe_path = concat(u.path, "", "/mcp");
	if (!s->host || !s->authority || !s->path_prefix || !s->name ||
	    !s->probe_path) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	return 0;
}

static enum mgw_client_proto client_proto(enum mgw_upstream_proto_conf p)
{
	switch (p) {
	case MGW_UP_H2C: return MGW_CLIENT_H2;
	case MGW_UP_ALPN: return MGW_CLIENT_AUTO;
	case MGW_UP_HTTP1: break;
	}
	return MGW_CLIENT_H1;
}

static void group_deinit(struct mgw_upstream_group *g)
{
	for (size_t i = 0; g->servers && i < g->n_servers; i++)
		server_deinit(&g->servers[i]);
	free(g->servers);
	free(g->ring);
	mgw_upstream_credential_free(g->credential);
	if (g->replay) {
		mgw_replay_group_deinit(g->replay);
		free(g->replay);
	}
	if (g->tasks) {
		mgw_task_map_deinit(g->tasks);
		free(g->tasks);
	}
	if (g->tls)
		SSL_CTX_free(g->tls);
}

static int group_init(struct mgw_upstreams *ups, size_t gi, char *err,
                      size_t errlen)
{
	struct mgw_upstream_group *g = &ups->groups[gi];
	const struct mgw_upstream_conf *uc = &ups->conf->upstreams[gi];
	int need_tls = 0, rc;
	char why[512];

	g->conf = uc;
	g->name = uc->name;
	g->index = gi;
	g->ups = ups;
	g->balancer = uc->balancer;
	g->proto = client_proto(uc->protocol);
	if (!(g->replay = malloc(sizeof(*g->replay))) ||
	    mgw_replay_group_init(g->replay) != 0) {
		free(g->replay);
		g->replay = NULL;
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	g->replay->tools.ttl_ms = to_ms(uc->tools_ttl);
	if (uc->affinity.mode == MGW_AFFINITY_TASK &&
	    (!(g->tasks = malloc(sizeof(*g->tasks))) ||
	     mgw_task_map_init(g->tasks, uc->affinity.max_tasks,
	                       (uint64_t)(uc->affinity.max_ttl * 1000)) != 0)) {
		free(g->tasks);
		g->tasks = NULL;
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	if (uc->n_servers == 0) {
		snprintf(err, errlen, "upstream %s: no servers", g->name);
		return MGW_EINVAL;
	}
	g->servers = calloc(uc->n_servers, sizeof(*g->servers));
	if (!g->servers) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	for (size_t i = 0; i < uc->n_servers; i++) {
		g->n_servers = i + 1; /* so a failure frees what exists */
		rc = server_init(g, i, err, errlen);
		if (rc != 0)
			return rc;
		g->total_weight += g->servers[i].weight;
		need_tls |= g->servers[i].tls;
	}
	if (need_tls) {
		g->tls = mgw_tls_client_ctx(uc->tls_ca_file, uc->tls_verify, why,
		                            sizeof(why));
		if (!g->tls) {
			snprintf(err, errlen, "upstream %s: %s", g->name, why);
			return MGW_EINVAL;
		}
	}
	if (mgw_upstream_credential_load(uc, &g->credential, why,
	                                 sizeof(why)) != 0) {
		snprintf(err, errlen, "upstream %s: upstream_credential: %s",
		         g->name, why);
		return MGW_EINVAL;
	}
	if (g->balancer == MGW_BAL_HASH && mgw_hash_ring_build(g) != 0) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	return 0;
}

struct mgw_upstreams *mgw_upstreams_new(const struct mgw_serve_conf *conf,
                                        char *err, size_t errlen)
{
	struct mgw_upstreams *ups = calloc(1, sizeof(*ups));

	if (!ups)
		goto nomem;
	ups->conf = conf;
	if (conf->n_upstreams) {
		ups->groups = calloc(conf->n_upstreams, sizeof(*ups->groups));
		if (!ups->groups)
			goto nomem;
	}
	for (size_t i = 0; i < conf->n_upstreams; i++) {
		ups->n_groups = i + 1;
		if (group_init(ups, i, err, errlen) != 0)
			goto fail;
	}
	ups->budget = mgw_retry_budget_new(conf->retry_budget_ratio,
	                                   conf->retry_budget_min);
	if (!ups->budget)
		goto nomem;
	return ups;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	mgw_upstreams_free(ups);
	return NULL;
}

void mgw_upstreams_free(struct mgw_upstreams *ups)
{
	if (!ups)
		return;
	for (size_t i = 0; ups->groups && i < ups->n_groups; i++)
		group_deinit(&ups->groups[i]);
	free(ups->groups);
	mgw_retry_budget_free(ups->budget);
	free(ups);
}

struct mgw_upstream_group *mgw_upstreams_find(const struct mgw_upstreams *ups,
                                              const char *name)
{
	for (size_t i = 0; i < ups->n_groups; i++)
		if (strcmp(ups->groups[i].name, name) == 0)
			return &ups->groups[i];
	return NULL;
}

/* ---- availability ---- */

int mgw_upstream_available(struct mgw_upstream_server *s, uint64_t now)
{
	uint_fast64_t until;

	if (atomic_load_explicit(&s->draining, memory_order_relaxed) ||
	    !atomic_load_explicit(&s->health_up, memory_order_acquire))
		return 0;
	until = atomic_load(&s->ejected_until); /* seq_cst: see eject() */
	if (until == 0)
		return 1;
	if (now < until)
		return 0;
	/* The ejection is over.  Whoever clears it first records when it
	 * ended (for the backoff reset) and says so once. */
	if (atomic_compare_exchange_strong(&s->ejected_until, &until, 0)) {
		atomic_store(&s->last_eject_end, until);
		mgw_event(NULL, "upstream_readmitted", "server=%s", s->name);
	}
	return 1;
}

enum mgw_upstream_state mgw_upstream_state(struct mgw_upstream_server *s,
                                           uint64_t now)
{
	uint_fast64_t until;

	if (atomic_load(&s->draining))
		return MGW_UPSTREAM_S_DRAINING;
	if (!atomic_load(&s->health_up))
		return MGW_UPSTREAM_S_DOWN;
	until = atomic_load(&s->ejected_until);
	if (until != 0 && now < until)
		return MGW_UPSTREAM_S_EJECTED;
	return MGW_UPSTREAM_S_UP;
}

const char *mgw_upstream_state_name(enum mgw_upstream_state st)
{
	switch (st) {
	case MGW_UPSTREAM_S_UP: return "up";
	case MGW_UPSTREAM_S_DOWN: return "down";
	case MGW_UPSTREAM_S_EJECTED: return "ejected";
	case MGW_UPSTREAM_S_DRAINING: return "draining";
	}
	return "?";
}

void mgw_upstream_acquire(struct mgw_upstream_server *s)
{
	atomic_fetch_add_explicit(&s->in_flight, 1, memory_order_relaxed);
}

void mgw_upstream_release(struct mgw_upstream_server *s)
{
	atomic_fetch_sub_explicit(&s->in_flight, 1, memory_order_relaxed);
}

void mgw_upstream_set_draining(struct mgw_upstream_server *s, int on)
{
	atomic_store(&s->draining, on ? 1 : 0);
}

void mgw_upstream_set_health(struct mgw_upstream_server *s, int up)
{
	int was = atomic_exchange_explicit(&s->health_up, up ? 1 : 0,
	                                   memory_order_acq_rel);

	if (was != (up ? 1 : 0))
		atomic_fetch_add_explicit(up ? &s->n_went_up : &s->n_went_down, 1,
		                          memory_order_relaxed);
}

void mgw_upstream_origin_cfg(const struct mgw_upstream_server *s,
                             struct mgw_client_origin_cfg *cfg)
{
	const struct mgw_upstream_group *g = s->group;

	memset(cfg, 0, sizeof(*cfg));
	cfg->host = s->host;
	cfg->port = s->port;
	cfg->proto = g->proto;
	cfg->tls = s->tls ? g->tls : NULL;
	cfg->sni = s->tls ? g->conf->tls_sni : NULL;
	cfg->name = s->name;
}

/* ---- passive outlier ejection ---- */

static void reset_counter(atomic_uint *c)
{
	/* Load first: most reports find it at 0 already, and a plain load
	 * does not bounce the cache line between workers. */
	if (atomic_load_explicit(c, memory_order_relaxed) != 0)
		atomic_store_explicit(c, 0, memory_order_relaxed);
}

/* Another server of the group could take traffic if s left. */
static int others_available(struct mgw_upstream_server *s, uint64_t now)
{
	struct mgw_upstream_group *g = s->group;

	for (size_t i = 0; i < g->n_servers; i++)
		if (&g->servers[i] != s && mgw_upstream_available(&g->servers[i], now))
			return 1;
	return 0;
}

static uint64_t ejection_ms(const struct mgw_outlier_conf *o, unsigned streak)
{
	uint64_t base = to_ms(o->base_ejection), max = to_ms(o->max_ejection);
	uint64_t d = base;

	for (unsigned i = 0; i < streak && d < max; i++)
		d *= 2;
	return d < max ? d : max;
}

static int eject(struct mgw_upstream_server *s, uint64_t now, unsigned count,
                 const char *what)
{
	const struct mgw_outlier_conf *o = &s->group->conf->outlier;
	uint_fast64_t until = atomic_load(&s->ejected_until), ended;
	unsigned streak;
	uint64_t d;

	if (until != 0 && now < until)
		return 0; /* already out: failures of attempts started before */
	if (!others_available(s, now))
		return 0;
	ended = until ? until : atomic_load(&s->last_eject_end);
	streak = atomic_load(&s->eject_streak);
	if (ended == 0 || now > ended + to_ms(o->max_ejection))
		streak = 0; /* first ejection, or good for a long while since */
	d = ejection_ms(o, streak);
	if (!atomic_compare_exchange_strong(&s->ejected_until, &until, now + d))
		return 0; /* another worker decided first */
	if (!others_available(s, now)) {
		/* Another worker ejected the others between the check and
		 * the swap: back out, so that the group never empties (of two
		 * racing, at least one sees the other's swap: both are
		 * sequentially consistent). */
		uint_fast64_t mine = now + d;

		atomic_compare_exchange_strong(&s->ejected_until, &mine, until);
		return 0;
	}
	if (ended)
		atomic_store(&s->last_eject_end, ended);
	atomic_store(&s->eject_streak, streak < MAX_STREAK ? streak + 1 : streak);
	atomic_store(&s->consec_connect_failures, 0);
	atomic_store(&s->consec_failures, 0);
	atomic_fetch_add(&s->n_ejections, 1);
	mgw_event(NULL, "upstream_ejected", "server=%s for_s=%.3g failures=%u "
	          "kind=%s", s->name, (double)d / 1000.0, count, what);
	return 1;
}

void mgw_upstream_report_error(struct mgw_upstream_server *s,
                               const struct mgw_client_error *e, uint64_t now)
{
	if (!s || e->cls == MGW_CLIENT_E_REFUSED || (e->flags & MGW_CLIENT_F_QUEUED))
		return;
	mgw_upstream_report(s, (e->flags & MGW_CLIENT_F_CONNECT)
	                           ? MGW_UPSTREAM_CONNECT_FAILURE
	                           : MGW_UPSTREAM_FAILURE,
	                    0, now);
}

int mgw_upstream_report(struct mgw_upstream_server *s,
                        enum mgw_upstream_outcome outcome, int status,
                        uint64_t now)
{
	const struct mgw_outlier_conf *o = &s->group->conf->outlier;
	uint_fast64_t until;
	unsigned n;

	if (outcome == MGW_UPSTREAM_HTTP_5XX && status < 500)
		outcome = MGW_UPSTREAM_OK;
	/* Failures of attempts that started before an ejection neither
	 * extend it nor count towards the next one. */
	until = atomic_load_explicit(&s->ejected_until, memory_order_relaxed);
	if (outcome != MGW_UPSTREAM_OK && until != 0 && now < until)
		return 0;
	switch (outcome) {
	case MGW_UPSTREAM_OK:
		reset_counter(&s->consec_connect_failures);
		reset_counter(&s->consec_failures);
		return 0;
	case MGW_UPSTREAM_CONNECT_FAILURE:
		n = atomic_fetch_add(&s->consec_connect_failures, 1) + 1;
		if (o->consecutive_connect_failures == 0 ||
		    n < o->consecutive_connect_failures)
			return 0;
		return eject(s, now, n, "connect");
	case MGW_UPSTREAM_HTTP_5XX:
	case MGW_UPSTREAM_FAILURE:
		reset_counter(&s->consec_connect_failures);
		n = atomic_fetch_add(&s->consec_failures, 1) + 1;
		if (o->consecutive_5xx == 0 || n < o->consecutive_5xx)
			return 0;
		return eject(s, now, n, "5xx_or_error");
	}
	return 0;
}

void mgw_upstream_tried_free(struct mgw_upstream_tried *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

struct mgw_upstream_server *mgw_upstreams_same_server(
	const struct mgw_upstreams *ups, const char *group_name,
	const char *url)
{
	const struct mgw_upstream_group *g = mgw_upstreams_find(ups, group_name);

	for (size_t i = 0; g && i < g->n_servers; i++)
		if (strcmp(g->servers[i].conf->url, url) == 0)
			return &g->servers[i];
	return NULL;
}

#define CARRY(field) atomic_store(&to->field, atomic_load(&from->field))
static void carry_server(struct mgw_upstream_server *to,
                         struct mgw_upstream_server *from)
{
	CARRY(health_up);
	CARRY(ejected_until);
	CARRY(last_eject_end);
	CARRY(consec_connect_failures);
	CARRY(consec_failures);
	CARRY(eject_streak);
	CARRY(draining);
	CARRY(n_picked);
	CARRY(n_ejections);
	CARRY(n_queue_full);
	CARRY(n_went_down);
	CARRY(n_went_up);
}
#undef CARRY

size_t mgw_upstreams_adopt(struct mgw_upstreams *next,
                           const struct mgw_upstreams *old)
{
	size_t n = 0;

	for (size_t gi = 0; gi < next->n_groups; gi++) {
		struct mgw_upstream_group *g = &next->groups[gi];
		const struct mgw_upstream_group *og = mgw_upstreams_find(old, g->name);

		if (og && og->replay && g->replay)
			mgw_replay_group_carry(g->replay, og->replay);
		if (og && og->tasks && g->tasks)
			mgw_task_map_carry(g->tasks, og->tasks, mgw_now_ms());
		for (size_t i = 0; i < g->n_servers; i++) {
			struct mgw_upstream_server *from =
				mgw_upstreams_same_server(old, g->name,
				                          g->servers[i].conf->url);

			if (from) {
				carry_server(&g->servers[i], from);
				n++;
			}
		}
	}
	return n;
}
