/* admin.c - GET /mcpgw/stats (see admin.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proxy/conf_serve.h"
#include "core/errors.h"
#include "proxy/admin.h"
#include "proxy/affinity.h"
#include "proxy/replay.h"
#include "proxy/stateful.h"
#include "proxy/upstream.h"
#include "util/time.h"

static json_t *server_json(struct mgw_upstream_server *s, uint64_t now)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I}",
	                 "name", s->name,
	                 "url", s->conf->url,
	                 "state", mgw_upstream_state_name(mgw_upstream_state(s, now)),
	                 "in_flight", (json_int_t)atomic_load(&s->in_flight),
	                 "picked", (json_int_t)atomic_load(&s->n_picked),
	                 "ejections", (json_int_t)atomic_load(&s->n_ejections),
	                 "queue_full", (json_int_t)atomic_load(&s->n_queue_full));
}

/* Requests lost in flight on the group's servers and what became of
 * them, and how many tools its latest tools/list made replay-safe. */
static json_t *replays_json(const struct mgw_upstream_group *g, uint64_t now)
{
	struct mgw_replay_group *r = g->replay;

	if (!r)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I}",
	                 "replayed", (json_int_t)atomic_load(&r->replayed),
	                 "refused", (json_int_t)atomic_load(&r->refused),
	                 "tools_lists_learned", (json_int_t)atomic_load(&r->learned),
	                 "safe_tools", (json_int_t)mgw_replay_tools_count(&r->tools, now));
}

/* Task affinity (affinity: task): what the group learned and how its
 * tasks/... requests were routed. */
static json_t *tasks_json(const struct mgw_upstream_group *g)
{
	struct mgw_task_map *m = g->tasks;

	if (!m)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	                 "known", (json_int_t)mgw_task_map_size(m),
	                 "learned", (json_int_t)atomic_load(&m->learned),
	                 "routed", (json_int_t)atomic_load(&m->routed),
	                 "owner_gone", (json_int_t)atomic_load(&m->owner_gone),
	                 "misses", (json_int_t)atomic_load(&m->misses),
	                 "shared_hits", (json_int_t)atomic_load(&m->shared_hits),
	                 "evicted", (json_int_t)atomic_load(&m->evicted));
}

/* The requestState guard's counters (mrtr_set.h). */
static json_t *mrtr_json(struct mgw_mrtr_set *s)
{
	struct mgw_mrtr_counts c;

	mgw_mrtr_set_counts(s, &c);
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
	                 "checked", (json_int_t)c.checked,
	                 "refused", (json_int_t)c.refused,
	                 "full", (json_int_t)c.full,
	                 "store_errors", (json_int_t)c.store_errors,
	                 "held", (json_int_t)c.held);
}

static json_t *upstreams_json(const struct mgw_upstreams *ups)
{
	json_t *a = json_array();
	uint64_t now = mgw_now_ms();

	if (!a)
		return NULL;
	for (size_t gi = 0; gi < ups->n_groups; gi++) {
		const struct mgw_upstream_group *g = &ups->groups[gi];
		json_t *servers = json_array(), *o;
		size_t up = 0;

		if (!servers)
			goto fail;
		for (size_t i = 0; i < g->n_servers; i++) {
			json_t *sj = server_json(&g->servers[i], now);

			if (!sj || json_array_append_new(servers, sj) != 0) {
				json_decref(servers);
				goto fail;
			}
			if (!strcmp(json_string_value(json_object_get(sj, "state")), "up"))
				up++;
		}
		o = json_pack("{s:s, s:I, s:I, s:o, s:o*, s:o*}", "name", g->name,
		              "servers_total", (json_int_t)g->n_servers,
		              "servers_up", (json_int_t)up, "servers", servers,
		              "replays", replays_json(g, now),
		              "tasks", tasks_json(g));
		if (!o || json_array_append_new(a, o) != 0)
			goto fail;
	}
	return a;
fail:
	json_decref(a);
	return NULL;
}

int mgw_admin_stats_body(const struct mgw_upstreams *ups,
                         struct mgw_sf_shared *sh, struct mgw_mrtr_set *mrtr,
                         enum mgw_mode_conf mode, char **body, size_t *len)
{
	json_t *o = json_object(), *u = upstreams_json(ups);
	char *s = NULL;
	size_t n;

	*body = NULL;
	*len = 0;
	if (!o || !u) {
		json_decref(u);
		goto fail;
	}
	/* json_object_set_new takes the value even when it fails */
	if (json_object_set_new(o, "upstreams", u) != 0 ||
	    json_object_set_new(o, "mode", json_string(mgw_config_mode_name(mode))) != 0)
		goto fail;
	if (sh && mgw_sf_stats_json(sh, o) != 0)
		goto fail;
	if (mrtr && json_object_set_new(o, "mrtr_guard", mrtr_json(mrtr)) != 0)
		goto fail;
	s = json_dumps(o, JSON_COMPACT);
	if (!s)
		goto fail;
	n = strlen(s);
	/* a final newline, for curl and line-oriented readers */
	*body = realloc(s, n + 2);
	if (!*body) {
		free(s);
		goto fail;
	}
	(*body)[n] = '\n';
	(*body)[n + 1] = '\0';
	*len = n + 1;
	json_decref(o);
	return 0;
fail:
	json_decref(o);
	return MGW_ENOMEM;
}
