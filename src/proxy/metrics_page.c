/* metrics_page.c - the text of GET /metrics: every worker's counters
 * summed, and what the upstream groups, the retry budget, the stateful
 * path and the session stores count themselves, read at this moment
 * (metrics.h, util/prom.h).  doc/serve.md ("Metrics") lists the names. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>

#include "auth/keyring.h"
#include "core/errors.h"
#include "proxy/affinity.h"
#include "proxy/metrics.h"
#include "proxy/mrtr_set.h"
#include "proxy/ratelimit.h"
#include "proxy/repin.h"
#include "proxy/retry-t.h"
#include "proxy/route-t.h"
#include "proxy/stateful-t.h"
#include "proxy/upstream.h"
#include "session/store.h"
#include "util/allocator.h"
#include "util/prom.h"
#include "util/time.h"

#define L(n, v) ((struct mgw_prom_label){(n), (v)})

static uint64_t ld(const atomic_uint_fast64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static const char *const class_names[MGW_METRICS_N_CLASSES] = {
	"none", "1xx", "2xx", "3xx", "4xx", "5xx",
};
static const char *const era_names[MGW_METRICS_N_ERAS] = {
	"unknown", "legacy", "modern",
};

/* ---- the gateway itself ---------------------------------------------------- */

static void process_info(struct mgw_prom *p, const struct mgw_metrics *m)
{
	const nghttp2_info *ng = nghttp2_version(0);
	struct mgw_prom_label l[] = {
		L("version", PACKAGE_VERSION),
		L("libevent", event_get_version()),
		L("openssl", OpenSSL_version(OPENSSL_VERSION_STRING)),
		L("nghttp2", ng ? ng->version_str : ""),
		L("allocator", mgw_allocator_name()),
	};
	uint64_t ok, failed;
	double last;

	mgw_prom_family(p, "mcpgw_build_info", "gauge",
	                "The mcpgw version and the libraries it runs on (always 1).");
	mgw_prom_sample(p, "mcpgw_build_info", l, 5, 1);
	mgw_prom_family(p, "mcpgw_start_time_seconds", "gauge",
	                "When the gateway started, in seconds since the epoch.");
	mgw_prom_sample(p, "mcpgw_start_time_seconds", NULL, 0, m->start_time);
	mgw_prom_family(p, "mcpgw_workers", "gauge",
	                "Worker threads (event loops) serving requests.");
	mgw_prom_sample_u64(p, "mcpgw_workers", NULL, 0, m->n_workers);
	mgw_metrics_reloads(&ok, &failed, &last);
	mgw_prom_family(p, "mcpgw_reloads_total", "counter",
	                "Configuration reloads (SIGHUP) by outcome.");
	mgw_prom_sample_u64(p, "mcpgw_reloads_total",
	                    (struct mgw_prom_label[]){L("result", "success")}, 1, ok);
	mgw_prom_sample_u64(p, "mcpgw_reloads_total",
	                    (struct mgw_prom_label[]){L("result", "failure")}, 1,
	                    failed);
	mgw_prom_family(p, "mcpgw_last_reload_timestamp_seconds", "gauge",
	                "When the last reload ended, in seconds since the epoch "
	                "(0: none yet).");
	mgw_prom_sample(p, "mcpgw_last_reload_timestamp_seconds", NULL, 0, last);
}

/* ---- requests ------------------------------------------------------------------ */

static void route_labels(const struct mgw_metrics *m, const struct mgw_routes *rt,
                         size_t r, char *num, size_t numlen, const char **group)
{
	if (r < m->n_routes && r < rt->n) {
		snprintf(num, numlen, "%zu", r);
		*group = rt->v[r].group ? rt->v[r].group->name : "none";
	} else if (r < m->n_routes) {
		/* a route a reload removed: its counts stay under its index */
		snprintf(num, numlen, "%zu", r);
		*group = "none";
	} else {
		snprintf(num, numlen, "none");
		*group = "none";
	}
}

static void requests(struct mgw_prom *p, const struct mgw_metrics *m,
                     const struct mgw_routes *rt)
{
	size_t nr = m->n_routes + 1, nm = m->n_methods;
	char num[24];
	const char *group;

	mgw_prom_family(p, "mcpgw_requests_total", "counter",
	                "Requests that ended, by route (its index, \"none\" when "
	                "answered before routing), upstream group, MCP method, "
	                "era and status class (\"none\": the client left first).");
	for (size_t r = 0; r < nr; r++) {
		route_labels(m, rt, r, num, sizeof(num), &group);
		for (size_t mi = 0; mi < nm; mi++)
			for (size_t e = 0; e < MGW_METRICS_N_ERAS; e++)
				for (size_t c = 0; c < MGW_METRICS_N_CLASSES; c++) {
					size_t at = ((r * nm + mi) * MGW_METRICS_N_ERAS + e) *
					            MGW_METRICS_N_CLASSES + c;
					uint64_t v = 0;
					struct mgw_prom_label l[] = {
						L("route", num), L("upstream", group),
						L("mcp_method", mgw_metrics_method_label(mi)),
						L("era", era_names[e]),
						L("status_class", class_names[c]),
					};

					for (unsigned w = 0; w < m->n_workers; w++)
						v += ld(&m->w[w].requests[at]);
					if (v)
						mgw_prom_sample_u64(p, "mcpgw_requests_total", l,
						                    5, v);
				}
	}
	mgw_prom_family(p, "mcpgw_request_duration_seconds", "histogram",
	                "Time from a request's arrival to its end (microsecond "
	                "resolution), by route, upstream group and MCP method.");
	for (size_t r = 0; r < nr; r++) {
		route_labels(m, rt, r, num, sizeof(num), &group);
		for (size_t mi = 0; mi < nm; mi++) {
			uint64_t b[MGW_PROM_N_BUCKETS + 1] = {0}, sum = 0, n = 0;
			struct mgw_prom_label l[] = {
				L("route", num), L("upstream", group),
				L("mcp_method", mgw_metrics_method_label(mi)),
			};

			for (unsigned w = 0; w < m->n_workers; w++) {
				const struct mgw_metrics_hist *h =
					&m->w[w].duration[r * nm + mi];

				for (size_t i = 0; i <= MGW_PROM_N_BUCKETS; i++) {
					b[i] += ld(&h->b[i]);
					n += ld(&h->b[i]);
				}
				sum += ld(&h->sum_us);
			}
			if (n)
				mgw_prom_histogram(p, "mcpgw_request_duration_seconds", l,
				                   3, mgw_prom_buckets, MGW_PROM_N_BUCKETS,
				                   b, (double)sum / 1e6);
		}
	}
}

/* Requests lost in flight, by route and what became of them (replay.h);
 * both handlers count here. */
static void replays(struct mgw_prom *p, const struct mgw_metrics *m,
                    const struct mgw_routes *rt)
{
	static const char *const result[2] = {"replayed", "refused"};
	char num[24];
	const char *group;

	mgw_prom_family(p, "mcpgw_replays_total", "counter",
	                "Requests lost in flight (sent, then the upstream went "
	                "away before a complete answer), by route, upstream "
	                "group and result: \"replayed\" (sent again to another "
	                "server) or \"refused\" (not safe to send again: "
	                "-32010).");
	for (size_t r = 0; r < m->n_routes; r++) {
		route_labels(m, rt, r, num, sizeof(num), &group);
		for (size_t k = 0; k < 2; k++) {
			uint64_t v = 0;

			for (unsigned w = 0; w < m->n_workers; w++)
				v += ld(&m->w[w].replays[r * 2 + k]);
			mgw_prom_sample_u64(p, "mcpgw_replays_total",
			                    (struct mgw_prom_label[]){
			                    	L("route", num), L("upstream", group),
			                    	L("result", result[k])},
			                    3, v);
		}
	}
}

static void tools(struct mgw_prom *p, const struct mgw_metrics *m)
{
	const struct mgw_metrics_tools *tl = &m->tools;

	if (!tl->cap)
		return;
	mgw_prom_family(p, "mcpgw_tool_calls_total", "counter",
	                "tools/call requests by tool name (the first "
	                "mcp.metrics_tool_names_max names seen; the rest as "
	                "\"other\") and status class.");
	for (size_t s = 0; s <= tl->size; s++) {
		const char *name = s < tl->size ? atomic_load(&tl->slot[s]) : "other";

		if (!name)
			continue;
		for (size_t c = 0; c < MGW_METRICS_N_CLASSES; c++) {
			uint64_t v = 0;
			struct mgw_prom_label l[] = {
				L("tool", name), L("status_class", class_names[c]),
			};

			for (unsigned w = 0; w < m->n_workers; w++)
				v += ld(&m->w[w].tool_calls[s * MGW_METRICS_N_CLASSES + c]);
			if (v)
				mgw_prom_sample_u64(p, "mcpgw_tool_calls_total", l, 2, v);
		}
	}
}

/* ---- memory ----------------------------------------------------------------- */

/* The workers' trim timers (proxy/worker.h). */
static void memory(struct mgw_prom *p, const struct mgw_metrics *m)
{
	static const char *const fam[3][2] = {
		{"mcpgw_memory_cache_trimmed_bytes_total",
		 "Bytes of cached jansson blocks the workers freed, unused for a "
		 "whole trim period."},
		{"mcpgw_memory_trims_total",
		 "malloc_trim calls (the arenas held enough free memory)."},
		{"mcpgw_memory_returned_bytes_total",
		 "Resident bytes the malloc_trim calls gave back to the kernel."},
	};
	uint64_t v[3] = {0, 0, 0};

	for (unsigned w = 0; w < m->n_workers; w++) {
		v[0] += ld(&m->w[w].jalloc_trimmed);
		v[1] += ld(&m->w[w].heap_trims);
		v[2] += ld(&m->w[w].heap_returned);
	}
	for (size_t f = 0; f < 3; f++) {
		mgw_prom_family(p, fam[f][0], "counter", fam[f][1]);
		mgw_prom_sample_u64(p, fam[f][0], NULL, 0, v[f]);
	}
}

/* ---- connections ------------------------------------------------------------ */

/* The listeners of worker 0 name them all: every worker binds the same
 * addresses in the same order. */
static void connections(struct mgw_prom *p, const struct mgw_metrics *m)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{"mcpgw_connections_open", "gauge",
		 "Client connections open, by listener."},
		{"mcpgw_connections_accepted_total", "counter",
		 "Client connections accepted, by listener."},
		{"mcpgw_connections_refused_total", "counter",
		 "Client connections closed at once (limits.max_connections "
		 "reached, or shutting down), by listener."},
		{"mcpgw_tls_handshake_failures_total", "counter",
		 "TLS handshakes with clients that failed, by listener."},
	};
	unsigned n = m->n_workers ? atomic_load(&m->w[0].http.n) : 0;

	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		mgw_prom_family(p, fam[f].name, fam[f].type, fam[f].help);
		for (unsigned i = 0; i < n && i < MGW_HTTP_COUNTED_LISTENERS; i++) {
			struct mgw_prom_label l[] = {
				L("listener", m->w[0].http.l[i].address),
			};
			uint64_t v = 0;

			for (unsigned w = 0; w < m->n_workers; w++) {
				const struct mgw_http_listener_counters *c =
					&m->w[w].http.l[i];
				uint64_t acc = ld(&c->accepted), cl = ld(&c->closed);

				switch (f) {
				case 0: v += acc > cl ? acc - cl : 0; break;
				case 1: v += acc; break;
				case 2: v += ld(&c->refused); break;
				default: v += ld(&c->tls_failures); break;
				}
			}
			mgw_prom_sample_u64(p, fam[f].name, l, 1, v);
		}
	}
	{
		uint64_t opened = 0, closed = 0;

		for (unsigned w = 0; w < m->n_workers; w++) {
			opened += ld(&m->w[w].sse_opened);
			closed += ld(&m->w[w].sse_closed);
		}
		mgw_prom_family(p, "mcpgw_sse_streams_open", "gauge",
		                "Streamed text/event-stream responses in progress.");
		mgw_prom_sample_u64(p, "mcpgw_sse_streams_open", NULL, 0,
		                    opened > closed ? opened - closed : 0);
		mgw_prom_family(p, "mcpgw_sse_streams_total", "counter",
		                "Streamed text/event-stream responses begun.");
		mgw_prom_sample_u64(p, "mcpgw_sse_streams_total", NULL, 0, opened);
	}
	memory(p, m);
}

/* ---- upstreams ------------------------------------------------------------------ */

enum {
	F_UP, F_STATE, F_INFLIGHT, F_PICKED, F_EJECT, F_QFULL, F_TRANS, F_N,
};

static void upstreams(struct mgw_prom *p, const struct mgw_metrics *m,
                      const struct mgw_upstreams *ups)
{
	static const struct {
		const char *name, *type, *help;
	} fam[F_N] = {
		{"mcpgw_upstream_server_up", "gauge",
		 "1 when the server takes requests (up, not ejected, not "
		 "draining), else 0."},
		{"mcpgw_upstream_server_state", "gauge",
		 "The server's state: 1 for the current one of up, down "
		 "(active health check), ejected (outlier ejection), draining."},
		{"mcpgw_upstream_in_flight", "gauge",
		 "Requests on the server now."},
		{"mcpgw_upstream_picked_total", "counter",
		 "Times the balancer chose the server."},
		{"mcpgw_upstream_ejections_total", "counter",
		 "Outlier ejections of the server."},
		{"mcpgw_upstream_queue_full_total", "counter",
		 "Requests the server could not take because its queue of "
		 "requests waiting for a connection was full (max_queue)."},
		{"mcpgw_upstream_health_transitions_total", "counter",
		 "Active health check verdict changes of the server, by the "
		 "state it went to."},
	};
	static const enum mgw_upstream_state states[] = {
		MGW_UPSTREAM_S_UP, MGW_UPSTREAM_S_DOWN, MGW_UPSTREAM_S_EJECTED,
		MGW_UPSTREAM_S_DRAINING,
	};
	uint64_t now = mgw_now_ms();

	for (int f = 0; f < F_N; f++) {
		mgw_prom_family(p, fam[f].name, fam[f].type, fam[f].help);
		for (size_t gi = 0; gi < ups->n_groups; gi++) {
			const struct mgw_upstream_group *g = &ups->groups[gi];

			for (size_t i = 0; i < g->n_servers; i++) {
				struct mgw_upstream_server *s = &g->servers[i];
				enum mgw_upstream_state st = mgw_upstream_state(s, now);
				struct mgw_prom_label l[] = {
					L("upstream", g->name), L("server", s->conf->url),
					L("state", ""),
				};
				int64_t inf;

				switch (f) {
				case F_UP:
					mgw_prom_sample_u64(p, fam[f].name, l, 2,
					                    st == MGW_UPSTREAM_S_UP);
					break;
				case F_STATE:
					for (size_t k = 0; k < 4; k++) {
						l[2].value = mgw_upstream_state_name(states[k]);
						mgw_prom_sample_u64(p, fam[f].name, l, 3,
						                    st == states[k]);
					}
					break;
				case F_INFLIGHT:
					inf = atomic_load(&s->in_flight);
					mgw_prom_sample_u64(p, fam[f].name, l, 2,
					                    inf > 0 ? (uint64_t)inf : 0);
					break;
				case F_PICKED:
					mgw_prom_sample_u64(p, fam[f].name, l, 2,
					                    ld(&s->n_picked));
					break;
				case F_EJECT:
					mgw_prom_sample_u64(p, fam[f].name, l, 2,
					                    ld(&s->n_ejections));
					break;
				case F_QFULL:
					mgw_prom_sample_u64(p, fam[f].name, l, 2,
					                    ld(&s->n_queue_full));
					break;
				default:
					l[2].name = "to";
					l[2].value = "down";
					mgw_prom_sample_u64(p, fam[f].name, l, 3,
					                    ld(&s->n_went_down));
					l[2].value = "up";
					mgw_prom_sample_u64(p, fam[f].name, l, 3,
					                    ld(&s->n_went_up));
					break;
				}
			}
		}
	}
	mgw_prom_family(p, "mcpgw_upstream_retries_total", "counter",
	                "Retries sent (attempts after the first, within the "
	                "retry budget), by upstream group.");
	for (size_t gi = 0; gi < ups->n_groups && gi < m->n_groups; gi++) {
		uint64_t v = 0;

		for (unsigned w = 0; w < m->n_workers; w++)
			v += ld(&m->w[w].retries[gi]);
		mgw_prom_sample_u64(p, "mcpgw_upstream_retries_total",
		                    (struct mgw_prom_label[]){
		                    	L("upstream", ups->groups[gi].name)},
		                    1, v);
	}
	if (ups->budget) {
		mgw_prom_family(p, "mcpgw_retry_budget_denied_total", "counter",
		                "Retries the retry budget refused.");
		mgw_prom_sample_u64(p, "mcpgw_retry_budget_denied_total", NULL, 0,
		                    ld(&ups->budget->denied));
		mgw_prom_family(p, "mcpgw_retry_budget_ratio", "gauge",
		                "Retries the budget allows per request "
		                "(retry_budget.ratio).");
		mgw_prom_sample(p, "mcpgw_retry_budget_ratio", NULL, 0,
		                ups->budget->ratio);
		mgw_prom_family(p, "mcpgw_retry_budget_min_per_second", "gauge",
		                "Retries a second the budget always allows "
		                "(retry_budget.min_per_second).");
		mgw_prom_sample_u64(p, "mcpgw_retry_budget_min_per_second", NULL, 0,
		                    ups->budget->min_per_second);
	}
}

/* Task affinity of the groups that have it (affinity.h). */
static void task_affinity(struct mgw_prom *p, const struct mgw_upstreams *ups)
{
	static const char *const result[] = {
		"learned", "routed", "owner_gone", "miss", "shared_hit", "evicted",
	};
	size_t with = 0;

	for (size_t gi = 0; gi < ups->n_groups; gi++)
		with += ups->groups[gi].tasks != NULL;
	if (!with)
		return;
	mgw_prom_family(p, "mcpgw_task_affinity_total", "counter",
	                "Task affinity (affinity: task), by upstream group and "
	                "result: \"learned\" (a task-creating answer seen), "
	                "\"routed\" (a tasks/ request sent to the task's "
	                "owner), \"owner_gone\" (answered task not found: the "
	                "owner is gone), \"miss\" (a task not known: "
	                "balanced), \"shared_hit\" (known from Redis), "
	                "\"evicted\" (forgotten for task_affinity.max_tasks).");
	for (size_t gi = 0; gi < ups->n_groups; gi++) {
		struct mgw_task_map *m = ups->groups[gi].tasks;
		const atomic_uint_fast64_t *c[6];

		if (!m)
			continue;
		c[0] = &m->learned;
		c[1] = &m->routed;
		c[2] = &m->owner_gone;
		c[3] = &m->misses;
		c[4] = &m->shared_hits;
		c[5] = &m->evicted;
		for (size_t k = 0; k < 6; k++)
			mgw_prom_sample_u64(p, "mcpgw_task_affinity_total",
			                    (struct mgw_prom_label[]){
			                    	L("upstream", ups->groups[gi].name),
			                    	L("result", result[k])},
			                    2, ld(c[k]));
	}
	mgw_prom_family(p, "mcpgw_task_affinity_tasks", "gauge",
	                "Tasks the gateway knows the owner of, by upstream "
	                "group.");
	for (size_t gi = 0; gi < ups->n_groups; gi++)
		if (ups->groups[gi].tasks)
			mgw_prom_sample_u64(p, "mcpgw_task_affinity_tasks",
			                    (struct mgw_prom_label[]){
			                    	L("upstream", ups->groups[gi].name)},
			                    1, mgw_task_map_size(ups->groups[gi].tasks));
}

/* ---- sessions ------------------------------------------------------------------- */

static void counter1(struct mgw_prom *p, const char *name, const char *help,
                     uint64_t v)
{
	mgw_prom_family(p, name, "counter", help);
	mgw_prom_sample_u64(p, name, NULL, 0, v);
}

static void store_ops(struct mgw_prom *p, struct mgw_sf_shared *sh)
{
	struct mgw_session_op_stats os[MGW_SF_STORE_KINDS];
	struct mgw_session_stats ss[MGW_SF_STORE_KINDS];

	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		if (sh->core->stores[k].st) {
			mgw_session_store_stats(sh->core->stores[k].st, &ss[k]);
			mgw_session_store_op_stats(sh->core->stores[k].st, &os[k]);
		}
	mgw_prom_family(p, "mcpgw_sessions_active", "gauge",
	                "Session records held by the store (memory: the "
	                "sessions; sealed and redis: the local cache).");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		if (sh->core->stores[k].st)
			mgw_prom_sample_u64(p, "mcpgw_sessions_active",
			                    (struct mgw_prom_label[]){
			                    	L("store", ss[k].store)}, 1,
			                    ss[k].active);
	mgw_prom_family(p, "mcpgw_sessions_expired_total", "counter",
	                "Sessions dropped idle or past their lifetime, by store.");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		if (sh->core->stores[k].st)
			mgw_prom_sample_u64(p, "mcpgw_sessions_expired_total",
			                    (struct mgw_prom_label[]){
			                    	L("store", ss[k].store)}, 1,
			                    ss[k].expired);
	mgw_prom_family(p, "mcpgw_session_store_operations_total", "counter",
	                "Session store operations completed, by store, "
	                "operation and result.");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		if (!sh->core->stores[k].st)
			continue;
		for (int o = 0; o < MGW_SESSION_OP_KINDS; o++)
			for (int r = 0; r < MGW_SESSION_RES_N; r++) {
				struct mgw_prom_label l[] = {
					L("store", ss[k].store),
					L("op", mgw_session_op_kind_name(o)),
					L("result", mgw_session_op_result_name(r)),
				};

				if (os[k].done[o][r] || r == MGW_SESSION_RES_OK)
					mgw_prom_sample_u64(p,
					                    "mcpgw_session_store_operations_total",
					                    l, 3, os[k].done[o][r]);
			}
	}
	mgw_prom_family(p, "mcpgw_session_store_errors_total", "counter",
	                "Session store operations that failed because the "
	                "backing store was unreachable or failed, by store.");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		if (sh->core->stores[k].st)
			mgw_prom_sample_u64(p, "mcpgw_session_store_errors_total",
			                    (struct mgw_prom_label[]){
			                    	L("store", ss[k].store)}, 1,
			                    ss[k].errors);
	mgw_prom_family(p, "mcpgw_session_store_unreachable", "gauge",
	                "1 while the store's server is (partly) unreachable "
	                "(redis), else 0.");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		if (sh->core->stores[k].st)
			mgw_prom_sample_u64(p, "mcpgw_session_store_unreachable",
			                    (struct mgw_prom_label[]){
			                    	L("store", ss[k].store)}, 1,
			                    ss[k].unreachable ? 1 : 0);
	mgw_prom_family(p, "mcpgw_session_store_writebacks_total", "counter",
	                "Times the store's server was found to have lost its "
	                "data (restarted empty, flushed) and the gateway "
	                "started writing back the sessions it holds (redis).");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		if (sh->core->stores[k].st)
			mgw_prom_sample_u64(p, "mcpgw_session_store_writebacks_total",
			                    (struct mgw_prom_label[]){
			                    	L("store", ss[k].store)}, 1,
			                    ss[k].writebacks);
	mgw_prom_family(p, "mcpgw_session_store_restored_total", "counter",
	                "Sessions the gateway put back into the store's server "
	                "after it lost them, by store and how (writeback: the "
	                "write-back after the loss was seen; lookup: a lookup "
	                "or update that met the missing key).");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		if (!sh->core->stores[k].st)
			continue;
		mgw_prom_sample_u64(p, "mcpgw_session_store_restored_total",
		                    (struct mgw_prom_label[]){
		                    	L("store", ss[k].store),
		                    	L("how", "writeback")}, 2,
		                    ss[k].restored_writeback);
		mgw_prom_sample_u64(p, "mcpgw_session_store_restored_total",
		                    (struct mgw_prom_label[]){
		                    	L("store", ss[k].store),
		                    	L("how", "lookup")}, 2,
		                    ss[k].restored_lookup);
	}
	mgw_prom_family(p, "mcpgw_session_store_operation_duration_seconds",
	                "histogram", "Time from a session store operation's "
	                "start to its completion, by store and operation.");
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		if (!sh->core->stores[k].st)
			continue;
		for (int o = 0; o < MGW_SESSION_OP_KINDS; o++) {
			struct mgw_prom_label l[] = {
				L("store", ss[k].store),
				L("op", mgw_session_op_kind_name(o)),
			};

			mgw_prom_histogram(p,
			                   "mcpgw_session_store_operation_duration_seconds",
			                   l, 2, mgw_prom_buckets, MGW_PROM_N_BUCKETS,
			                   os[k].lat[o], (double)os[k].lat_sum_ns[o] / 1e9);
		}
	}
}

static void sessions(struct mgw_prom *p, struct mgw_sf_shared *sh)
{
	const struct mgw_sf_counters *c = &sh->core->cnt;
	const struct mgw_repin_counters *rc = &c->repin;

	counter1(p, "mcpgw_sessions_created_total",
	         "Legacy sessions the gateway minted.", ld(&c->created));
	counter1(p, "mcpgw_sessions_deleted_total",
	         "Sessions ended by the client's DELETE.", ld(&c->deleted));
	counter1(p, "mcpgw_sessions_unrecoverable_total",
	         "Session requests answered 404 because the session could not "
	         "be re-pinned to any replica.", ld(&c->unrecoverable));
	counter1(p, "mcpgw_sessions_not_found_total",
	         "Session requests answered 404: unknown, expired, deleted or "
	         "another principal's session id.", ld(&c->not_found));
	counter1(p, "mcpgw_sessions_create_failed_total",
	         "initialize requests answered 503 because no session could "
	         "be stored.", ld(&c->create_failed));
	mgw_prom_family(p, "mcpgw_session_repins_total", "counter",
	                "Re-pins begun (a session moved off its replica), by "
	                "reason.");
	for (int r = 0; r < MGW_REPIN_REASON_N; r++)
		mgw_prom_sample_u64(p, "mcpgw_session_repins_total",
		                    (struct mgw_prom_label[]){
		                    	L("reason", mgw_repin_reason_name(r))},
		                    1, ld(&rc->started[r]));
	counter1(p, "mcpgw_session_repinned_total",
	         "Sessions moved to another replica by a replayed initialize.",
	         ld(&rc->repinned));
	counter1(p, "mcpgw_session_repin_failures_total",
	         "Re-pins that found no replica to take the session.",
	         ld(&rc->failed));
	counter1(p, "mcpgw_session_replays_total",
	         "initialize replays sent to replicas.", ld(&rc->replays));
	counter1(p, "mcpgw_session_replay_failures_total",
	         "initialize replays a replica did not accept.",
	         ld(&rc->replay_failures));
	counter1(p, "mcpgw_session_inflight_replayed_total",
	         "Requests lost in flight and sent again after a re-pin.",
	         ld(&c->inflight_replayed));
	counter1(p, "mcpgw_session_inflight_refused_total",
	         "Requests lost in flight and not safe to send again (-32010).",
	         ld(&c->inflight_refused));
	store_ops(p, sh);
}

/* ---- auth ------------------------------------------------------------------ */

static void auth(struct mgw_prom *p, const struct mgw_metrics *m,
                 const struct mgw_keyring *keys)
{
	static const char *const res[MGW_MX_AUTH_N] = {
		"ok", "missing", "invalid", "insufficient_scope",
	};
	struct mgw_keyring_stats ks;
	struct mgw_prom_label l;

	mgw_prom_family(p, "mcpgw_auth_requests_total", "counter",
	                "Requests the auth check judged, by result.");
	for (unsigned o = 0; o < MGW_MX_AUTH_N; o++) {
		uint64_t v = 0;

		for (unsigned w = 0; w < m->n_workers; w++)
			v += ld(&m->w[w].auth[o]);
		l.name = "result";
		l.value = res[o];
		mgw_prom_sample_u64(p, "mcpgw_auth_requests_total", &l, 1, v);
	}
	if (!keys)
		return;
	mgw_keyring_stats(keys, &ks);
	mgw_prom_family(p, "mcpgw_jwks_fetches_total", "counter",
	                "JWKS fetches from auth.jwks_url, by result.");
	l.name = "result";
	l.value = "ok";
	mgw_prom_sample_u64(p, "mcpgw_jwks_fetches_total", &l, 1, ks.fetch_ok);
	l.value = "failed";
	mgw_prom_sample_u64(p, "mcpgw_jwks_fetches_total", &l, 1,
	                    ks.fetch_failed);
	mgw_prom_family(p, "mcpgw_jwks_keys", "gauge",
	                "Keys the auth check verifies tokens with.");
	mgw_prom_sample_u64(p, "mcpgw_jwks_keys", NULL, 0, ks.keys);
	mgw_prom_family(p, "mcpgw_jwks_last_success_timestamp_seconds", "gauge",
	                "When the JWKS was last fetched (0: never).");
	mgw_prom_sample_u64(p, "mcpgw_jwks_last_success_timestamp_seconds",
	                    NULL, 0, (uint64_t)ks.last_ok);
}

/* ---- rate and connection limits ------------------------------------------ */

static void limits(struct mgw_prom *p, const struct mgw_metrics *m,
                   const struct mgw_routes *rt)
{
	static const char *const reasons[] = {
		"max_connections_per_client", "new_connections_per_client",
	};
	unsigned n = m->n_workers ? atomic_load(&m->w[0].http.n) : 0;

	mgw_prom_family(p, "mcpgw_connections_refused_per_client_total",
	                "counter", "Client connections closed at once for a "
	                "per-client limit (limits.max_connections_per_client, "
	                "limits.new_connections_per_client), by listener and "
	                "reason.");
	for (unsigned i = 0; i < n && i < MGW_HTTP_COUNTED_LISTENERS; i++) {
		for (size_t r = 0; r < 2; r++) {
			struct mgw_prom_label l[] = {
				L("listener", m->w[0].http.l[i].address),
				L("reason", reasons[r]),
			};
			uint64_t v = 0;

			for (unsigned w = 0; w < m->n_workers; w++) {
				const struct mgw_http_listener_counters *c =
					&m->w[w].http.l[i];

				v += ld(r ? &c->refused_client_rate
				          : &c->refused_client_open);
			}
			mgw_prom_sample_u64(p, "mcpgw_connections_refused_per_client_"
			                    "total", l, 2, v);
		}
	}
	if (!m->rlt)
		return;
	mgw_prom_family(p, "mcpgw_rate_limited_total", "counter",
	                "Requests answered 429 for a route's rate_limit, by "
	                "route and key kind.");
	for (size_t r = 0; r <= MGW_RL_COUNTED_ROUTES; r++) {
		for (int k = 0; k < MGW_RL_N_KEYS; k++) {
			uint64_t v = mgw_rl_limited(m->rlt, r, (enum mgw_rl_key_conf)k);
			char num[24];
			const char *group;

			if (!v)
				continue;
			if (r == MGW_RL_COUNTED_ROUTES) {
				snprintf(num, sizeof(num), "other");
				group = "none";
			} else {
				route_labels(m, rt, r, num, sizeof(num), &group);
			}
			{
				struct mgw_prom_label l[] = {
					L("route", num), L("upstream", group),
					L("key", mgw_rl_key_name((enum mgw_rl_key_conf)k)),
				};

				mgw_prom_sample_u64(p, "mcpgw_rate_limited_total", l, 3, v);
			}
		}
	}
	counter1(p, "mcpgw_rate_limit_redis_fallbacks_total",
	         "Shared (Redis) rate limits decided by the local bucket "
	         "because Redis was down, refused or did not answer in time.",
	         mgw_rl_fallbacks(m->rlt));
	counter1(p, "mcpgw_rate_limit_evictions_total",
	         "Rate-limit buckets forgotten to stay within "
	         "rate_limits.max_keys.", mgw_rl_table_evictions(m->rlt));
}

/* ---- the requestState guard (mrtr:) ---------------------------------------- */

static void mrtr(struct mgw_prom *p, const struct mgw_metrics *m)
{
	struct mgw_mrtr_counts c;

	if (!m->mrtr)
		return;
	mgw_mrtr_set_counts(m->mrtr, &c);
	counter1(p, "mcpgw_mrtr_states_checked_total",
	         "requestStates checked by a route's mrtr: single_use guard.",
	         c.checked);
	counter1(p, "mcpgw_mrtr_states_refused_total",
	         "requestStates refused as presented before (409, -31023).",
	         c.refused);
	mgw_prom_family(p, "mcpgw_mrtr_store_errors_total", "counter",
	                "requestStates refused because the guard could not "
	                "record them (503, -31024), by reason: the gateway's "
	                "set full (mrtr_guard.max_states) or Redis.");
	{
		struct mgw_prom_label l[] = {L("reason", "full")};

		mgw_prom_sample_u64(p, "mcpgw_mrtr_store_errors_total", l, 1,
		                    c.full);
		l[0].value = "redis";
		mgw_prom_sample_u64(p, "mcpgw_mrtr_store_errors_total", l, 1,
		                    c.store_errors);
	}
	mgw_prom_family(p, "mcpgw_mrtr_states_held", "gauge",
	                "requestState digests this gateway holds now.");
	mgw_prom_sample_u64(p, "mcpgw_mrtr_states_held", NULL, 0, c.held);
}

int mgw_metrics_page(const struct mgw_metrics *m, const struct mgw_routes *rt,
                     const struct mgw_upstreams *ups, struct mgw_sf_shared *sh,
                     const struct mgw_keyring *keys, char **body, size_t *len)
{
	struct mgw_prom p;

	mgw_prom_init(&p);
	process_info(&p, m);
	requests(&p, m, rt);
	replays(&p, m, rt);
	tools(&p, m);
	connections(&p, m);
	limits(&p, m, rt);
	mrtr(&p, m);
	upstreams(&p, m, ups);
	task_affinity(&p, ups);
	if (sh)
		sessions(&p, sh);
	auth(&p, m, keys);
	return mgw_prom_finish(&p, body, len);
}
