/* metrics.c - the per-worker counters behind GET /metrics and the hooks
 * that feed them (metrics.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "http/server.h"
#include "proxy/metrics.h"
#include "proxy/pipeline-t.h"
#include "proxy/route-t.h"
#include "proxy/txn-t.h"
#include "util/hash.h"
#include "util/time.h"

#define TOOL_NAME_MAX 128

/* Sorted (strcmp) for the binary search.  The union of the methods of
 * schema/2025-11-25 and schema/2026-07-28 of the MCP specification. */
const char *const mgw_metrics_methods[] = {
	"completion/complete",
	"elicitation/create",
	"initialize",
	"logging/setLevel",
	"notifications/cancelled",
	"notifications/elicitation/complete",
	"notifications/initialized",
	"notifications/message",
	"notifications/progress",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
	"notifications/resources/updated",
	"notifications/roots/list_changed",
	"notifications/subscriptions/acknowledged",
	"notifications/tasks/status",
	"notifications/tools/list_changed",
	"ping",
	"prompts/get",
	"prompts/list",
	"resources/list",
	"resources/read",
	"resources/subscribe",
	"resources/templates/list",
	"resources/unsubscribe",
	"roots/list",
	"sampling/createMessage",
	"server/discover",
	"subscriptions/listen",
	"tasks/cancel",
	"tasks/get",
	"tasks/list",
	"tasks/result",
	"tools/call",
	"tools/list",
};
const size_t mgw_metrics_n_methods =
	sizeof(mgw_metrics_methods) / sizeof(mgw_metrics_methods[0]);

const char *mgw_metrics_method_label(size_t i)
{
	if (i < mgw_metrics_n_methods)
		return mgw_metrics_methods[i];
	return i == MGW_METRICS_METHOD_OTHER ? "other" : "none";
}

size_t mgw_metrics_method_index(const char *m)
{
	size_t lo = 0, hi = mgw_metrics_n_methods;

	if (!m)
		return MGW_METRICS_METHOD_NONE;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m, mgw_metrics_methods[mid]);

		if (c == 0)
			return mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return MGW_METRICS_METHOD_OTHER;
}

/* ---- the registry ---------------------------------------------------------- */

static void worker_free(struct mgw_metrics_worker *w)
{
	free(w->requests);
	free(w->duration);
	free(w->retries);
	free(w->replays);
	free(w->tool_calls);
}

static int tools_init(struct mgw_metrics_tools *tl, size_t cap)
{
	size_t size = 8;

	tl->cap = cap;
	if (cap == 0)
		return 0;
	while (size < 2 * cap)
		size *= 2;
	tl->size = size;
	tl->slot = calloc(size, sizeof(*tl->slot));
	return tl->slot ? 0 : -1;
}

struct mgw_metrics *mgw_metrics_new(unsigned n_workers, size_t n_routes,
                                    size_t n_groups, size_t tool_cap)
{
	struct mgw_metrics *m = calloc(1, sizeof(*m));
	size_t nm = mgw_metrics_n_methods + 2, nr = n_routes + 1;

	if (!m)
		return NULL;
	m->n_workers = n_workers;
	m->n_routes = n_routes;
	m->n_groups = n_groups;
	m->n_methods = nm;
	m->start_time = (double)mgw_wall_s();
	m->listener = -1;
	m->w = calloc(n_workers ? n_workers : 1, sizeof(*m->w));
	if (!m->w || tools_init(&m->tools, tool_cap) != 0)
		goto fail;
	for (unsigned i = 0; i < n_workers; i++) {
		struct mgw_metrics_worker *w = &m->w[i];

		w->requests = calloc(nr * nm * MGW_METRICS_N_ERAS *
		                     MGW_METRICS_N_CLASSES, sizeof(*w->requests));
		w->duration = calloc(nr * nm, sizeof(*w->duration));
		w->retries = calloc(n_groups ? n_groups : 1, sizeof(*w->retries));
		w->replays = calloc(nr * 2, sizeof(*w->replays));
		if (tool_cap)
			w->tool_calls = calloc((m->tools.size + 1) *
			                       MGW_METRICS_N_CLASSES,
			                       sizeof(*w->tool_calls));
		if (!w->requests || !w->duration || !w->retries || !w->replays ||
		    (tool_cap && !w->tool_calls))
			goto fail;
	}
	return m;
fail:
	mgw_metrics_free(m);
	return NULL;
}

void mgw_metrics_free(struct mgw_metrics *m)
{
	if (!m)
		return;
	if (m->w)
		for (unsigned i = 0; i < m->n_workers; i++)
			worker_free(&m->w[i]);
	free(m->w);
	if (m->tools.slot)
		for (size_t i = 0; i < m->tools.size; i++)
			free(atomic_load(&m->tools.slot[i]));
	free(m->tools.slot);
	free(m);
}

/* ---- counting ------------------------------------------------------------------ */

/* One writer per block: a plain load and store, no locked instruction. */
static void add(atomic_uint_fast64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
	                      memory_order_relaxed);
}

static size_t status_class(int status)
{
	return status >= 100 && status < 600 ? (size_t)(status / 100) : 0;
}

size_t mgw_metrics_tool_slot(struct mgw_metrics_tools *tl, const char *name)
{
	size_t mask = tl->size - 1, i;

	if (!tl->cap || strlen(name) > TOOL_NAME_MAX)
		return tl->size;
	i = (size_t)mgw_fnv1a_str(name) & mask;
	for (size_t probes = 0; probes < tl->size; probes++, i = (i + 1) & mask) {
		char *cur = atomic_load_explicit(&tl->slot[i], memory_order_acquire);
		char *mine;

		if (cur) {
			if (strcmp(cur, name) == 0)
				return i;
			continue;
		}
		/* a free slot: the name is new; claim one of the cap places */
		if (atomic_fetch_add(&tl->used, 1) >= tl->cap) {
			atomic_fetch_sub(&tl->used, 1);
			return tl->size;
		}
		mine = strdup(name);
		if (!mine) {
			atomic_fetch_sub(&tl->used, 1);
			return tl->size;
		}
		cur = NULL;
		if (atomic_compare_exchange_strong(&tl->slot[i], &cur, mine))
			return i;
		/* another worker took this slot first: maybe for this name */
		free(mine);
		atomic_fetch_sub(&tl->used, 1);
		if (strcmp(cur, name) == 0)
			return i;
	}
	return tl->size;
}

void mgw_metrics_txn_done(const struct mgw_txn *t, int status)
{
	const struct mgw_pipeline *pl = t->pl;
	struct mgw_metrics *m = pl->metrics;
	struct mgw_metrics_worker *w = pl->mx;
	const char *method = t->have_msg ? t->msg.method : NULL;
	size_t route, mi, era, cls, at;
	uint64_t ns;
	struct mgw_metrics_hist *h;

	if (!m || !w)
		return;
	route = t->route && t->route->index < m->n_routes ? t->route->index
	                                                 : m->n_routes;
	mi = mgw_metrics_method_index(method);
	era = (size_t)t->era < MGW_METRICS_N_ERAS ? (size_t)t->era : 0;
	cls = status_class(status);
	at = ((route * m->n_methods + mi) * MGW_METRICS_N_ERAS + era) *
	     MGW_METRICS_N_CLASSES + cls;
	add(&w->requests[at], 1);
	ns = mgw_now_ns() - t->t0_ns;
	h = &w->duration[route * m->n_methods + mi];
	add(&h->b[mgw_prom_bucket_ns(ns)], 1);
	add(&h->sum_us, ns / 1000);
	if (t->retries && t->route && t->route->group &&
	    t->route->group->index < m->n_groups)
		add(&w->retries[t->route->group->index], t->retries);
	if (m->tools.cap && mi < mgw_metrics_n_methods && t->msg.name &&
	    strcmp(method, "tools/call") == 0)
		add(&w->tool_calls[mgw_metrics_tool_slot(&m->tools, t->msg.name) *
		                   MGW_METRICS_N_CLASSES + cls], 1);
}

void mgw_metrics_auth(struct mgw_metrics_worker *w, enum mgw_metrics_auth o)
{
	if (w && (unsigned)o < MGW_MX_AUTH_N)
		add(&w->auth[o], 1);
}

void mgw_metrics_sse_open(struct mgw_metrics_worker *w)
{
	if (w)
		add(&w->sse_opened, 1);
}

void mgw_metrics_sse_close(struct mgw_metrics_worker *w)
{
	if (w)
		add(&w->sse_closed, 1);
}

/* ---- reloads ------------------------------------------------------------------ */

static atomic_uint_fast64_t reloads_ok, reloads_failed;
static _Atomic int64_t last_reload_s;

void mgw_metrics_reload_done(int ok)
{
	atomic_fetch_add(ok ? &reloads_ok : &reloads_failed, 1);
	atomic_store(&last_reload_s, mgw_wall_s());
}

void mgw_metrics_reloads(uint64_t *ok, uint64_t *failed, double *last)
{
	*ok = atomic_load(&reloads_ok);
	*failed = atomic_load(&reloads_failed);
	*last = (double)atomic_load(&last_reload_s);
}
