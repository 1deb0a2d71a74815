/* pool.c - a worker's upstream clients, origins and picker (pool.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/headers.h"
#include "proxy/headers_up.h"
#include "proxy/pool.h"
#include "proxy/retry.h"
#include "proxy/upstream.h"

static uint32_t share(uint32_t total, unsigned n)
{
	uint32_t v = n ? (total + n - 1) / n : total;

	return v ? v : 1;
}

/* The client of group gi and its origins.  Returns 0 or MGW_E* with a
 * message in err. */
static int group_new(struct mgw_upool *p, struct event_base *base, size_t gi,
                     unsigned n_workers, char *err, size_t errlen)
{
	const struct mgw_upstream_group *g = &p->ups->groups[gi];
	struct mgw_client_limits lim;

	mgw_client_limits_default(&lim);
	lim.max_conns_per_origin = share(g->conf->max_connections, n_workers);
	/* max_idle: 0 means no idle pool, not one per worker */
	lim.max_idle_per_origin = g->conf->max_idle
	                          ? share(g->conf->max_idle, n_workers) : 0;
	if (lim.max_idle_per_origin > lim.max_conns_per_origin)
		lim.max_idle_per_origin = lim.max_conns_per_origin;
	lim.max_pending_per_origin = share(g->conf->max_queue, n_workers);
	p->clients[gi] = mgw_client_new(base, &lim);
	p->origins[gi] = calloc(g->n_servers ? g->n_servers : 1,
	                        sizeof(**p->origins));
	if (!p->clients[gi] || !p->origins[gi])
		return MGW_ENOMEM;
	for (size_t si = 0; si < g->n_servers; si++) {
		struct mgw_client_origin_cfg oc;
		int rc;

		mgw_upstream_origin_cfg(&g->servers[si], &oc);
		rc = mgw_client_origin_new(p->clients[gi], &oc, &p->origins[gi][si]);
		if (rc == MGW_ENOMEM)
			return rc;
		if (rc != 0) {
			snprintf(err, errlen, "upstream %s: %s", g->servers[si].name,
			         mgw_strerror(rc));
			return rc;
		}
	}
	return 0;
}

struct mgw_upool *mgw_upool_new(struct event_base *base,
                                struct mgw_upstreams *ups, unsigned n_workers,
                                uint64_t seed, char *err, size_t errlen)
{
	struct mgw_upool *p = calloc(1, sizeof(*p));
	size_t n;

	if (!p)
		goto nomem;
	p->ups = ups;
	p->n_groups = ups->n_groups;
	n = p->n_groups ? p->n_groups : 1;
	p->picker = mgw_upstream_picker_new(ups, seed);
	p->clients = calloc(n, sizeof(*p->clients));
	p->origins = calloc(n, sizeof(*p->origins));
	if (!p->picker || !p->clients || !p->origins)
		goto nomem;
	for (size_t gi = 0; gi < p->n_groups; gi++) {
		int rc = group_new(p, base, gi, n_workers, err, errlen);

		if (rc == MGW_ENOMEM)
			goto nomem;
		if (rc != 0)
			goto fail;
	}
	return p;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	mgw_upool_free(p);
	return NULL;
}

void mgw_upool_free(struct mgw_upool *p)
{
	if (!p)
		return;
	for (size_t gi = 0; gi < p->n_groups; gi++) {
		/* mgw_client_free frees the origins along with the client */
		mgw_client_free(p->clients ? p->clients[gi] : NULL);
		if (p->origins)
			free(p->origins[gi]);
	}
	free(p->clients);
	free(p->origins);
	mgw_upstream_picker_free(p->picker);
	free(p);
}

enum mgw_upstream_next mgw_upool_choose(struct mgw_upool *p,
	const struct mgw_upstream_group *g, const char *key, size_t keylen,
	struct mgw_upstream_server *const *exclude, size_t n_exclude,
	enum mgw_upool_budget budget, uint64_t now,
	struct mgw_upstream_server **out)
{
	struct mgw_upstream_server *s;

	s = mgw_upstream_group_pick(p->picker, g, key, keylen,
	                            (const struct mgw_upstream_server *const *)exclude,
	                            n_exclude, now);
	if (!s)
		return n_exclude == 0 ? MGW_NEXT_NONE_HEALTHY : MGW_NEXT_ALL_TRIED;
	if (budget == MGW_UPOOL_RETRY &&
	    !mgw_retry_budget_try(p->ups->budget, now))
		return MGW_NEXT_NO_BUDGET;
	*out = s;
	return MGW_NEXT_OK;
}

enum mgw_upstream_next mgw_upool_next(struct mgw_upool *p,
	const struct mgw_upstream_group *g, const char *key, size_t keylen,
	struct mgw_upstream_tried *t, enum mgw_upool_budget budget,
	uint64_t now, struct mgw_upstream_server **out)
{
	struct mgw_upstream_server *s;
	enum mgw_upstream_next v;

	v = mgw_upool_choose(p, g, key, keylen, t->v, t->n, budget, now, &s);
	if (v != MGW_NEXT_OK)
		return v;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4;
		void *q = realloc(t->v, cap * sizeof(*t->v));

		if (!q)
			return MGW_NEXT_NOMEM;
		t->v = q;
		t->cap = cap;
	}
	t->v[t->n++] = s;
	*out = s;
	return MGW_NEXT_OK;
}

char *mgw_upool_target(const struct mgw_upstream_server *s, const char *target)
{
	size_t pl = strlen(s->path_prefix), tl = strlen(target);
	char *t;

	if (target[0] != '/')
		pl = 0; /* "*" (OPTIONS) and the like are sent as they are */
	t = malloc(pl + tl + 1);
	if (!t)
		return NULL;
	memcpy(t, s->path_prefix, pl);
	memcpy(t + pl, target, tl + 1);
	return t;
}

int mgw_upool_send(struct mgw_upool *p, struct mgw_upstream_server *s,
                   const struct mgw_client_reqspec *spec,
                   struct mgw_client_req **out)
{
	struct mgw_client_reqspec sp = *spec;
	char *target = mgw_upool_target(s, spec->target);
	struct mgw_headers auth;
	int rc;

	if (!target)
		return MGW_ENOMEM;
	sp.target = target;
	mgw_headers_init(&auth);
	rc = mgw_proxy_upstream_auth(&auth, spec->headers,
	                             s->group->conf->upstream_auth,
	                             s->group->credential);
	if (rc == 1) {
		sp.headers = &auth;
		sp.headers_checked = 0; /* a credential read from a file */
		sp.headers_end_to_end = 0;
	}
	if (rc >= 0)
		rc = mgw_client_request(p->origins[s->group->index][s->index],
		                        &sp, out);
	mgw_headers_deinit(&auth);
	free(target);
	if (rc == 0)
		mgw_upstream_acquire(s);
	else if (rc == MGW_ELIMIT)
		atomic_fetch_add_explicit(&s->n_queue_full, 1,
		                          memory_order_relaxed);
	return rc;
}
