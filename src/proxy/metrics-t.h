/* metrics-t.h - the counters behind GET /metrics (types only; see
 * metrics.h).
 *
 * Every worker counts into its own block (struct mgw_metrics_worker):
 * only that worker's thread writes it, with relaxed atomic loads and
 * stores (no read-modify-write, no lock), and the scrape, on whichever
 * worker it lands, sums the blocks.  What other parts already count
 * (upstream states and ejections, the retry budget, sessions, re-pins,
 * the session stores) is read from there at scrape time, not counted
 * twice. */
#ifndef MGW_PROXY_METRICS_T_H
#define MGW_PROXY_METRICS_T_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "http/server.h"
#include "util/prom.h"

struct mgw_rl_table;

/* Status classes: no answer (the client left first), 1xx .. 5xx. */
#define MGW_METRICS_N_CLASSES 6
/* Eras: enum mgw_era (unknown, legacy, modern). */
#define MGW_METRICS_N_ERAS 3

/* A latency histogram: per-bucket counts (util/prom.h buckets, the last
 * one above every bound) and the sum in microseconds. */
struct mgw_metrics_hist {
	atomic_uint_fast64_t b[MGW_PROM_N_BUCKETS + 1];
	atomic_uint_fast64_t sum_us;
};

/* The names tools/call requests are counted under (mcp.metrics_tool_names):
 * the first cap distinct names seen get a slot, shared by every worker;
 * the rest count as "other".  Slots are claimed with compare-and-swap and
 * never released, so a slot's name is stable once read. */
struct mgw_metrics_tools {
	size_t cap;                     /* names that get their own slot */
	size_t size;                    /* hash table slots (> cap) */
	_Atomic(char *) *slot;          /* size entries, NULL = free */
	atomic_size_t used;             /* slots claimed (<= cap) */
};

/* Outcomes of the auth check (check_auth.c). */
enum mgw_metrics_auth {
	MGW_MX_AUTH_OK = 0,
	MGW_MX_AUTH_MISSING,     /* no bearer credentials: 401 */
	MGW_MX_AUTH_INVALID,     /* malformed or not valid: 400, 401 */
	MGW_MX_AUTH_SCOPE,       /* insufficient scope: 403 */
	MGW_MX_AUTH_N,
};

/* One worker's counters (its thread writes, any thread reads). */
struct mgw_metrics_worker {
	/* requests ended: [route][method][era][class], route n_routes is
	 * "none" (answered before routing), method index per metrics.c */
	atomic_uint_fast64_t *requests;
	/* their duration: [route][method] */
	struct mgw_metrics_hist *duration;
	atomic_uint_fast64_t *retries;  /* [group]: budgeted retries sent */
	atomic_uint_fast64_t *replays;  /* [route][replayed, refused]: requests
	                                 * lost in flight (replay.h) */
	atomic_uint_fast64_t *tool_calls; /* [tool slot + other][class] */
	atomic_uint_fast64_t sse_opened; /* SSE responses started */
	atomic_uint_fast64_t sse_closed; /* ... and ended */
	atomic_uint_fast64_t auth[MGW_MX_AUTH_N]; /* auth check outcomes */
	/* the worker's trim timer (worker.c): bytes of jansson blocks its
	 * cache freed, malloc_trim calls, resident bytes they returned */
	atomic_uint_fast64_t jalloc_trimmed;
	atomic_uint_fast64_t heap_trims;
	atomic_uint_fast64_t heap_returned;
	struct mgw_http_counters http;  /* the worker's listeners */
};

/* Every worker's block and what they share.  Made on the main thread
 * before the workers start; freed after they stopped. */
struct mgw_metrics {
	unsigned n_workers;
	struct mgw_metrics_worker *w;   /* n_workers blocks */
	size_t n_routes, n_groups, n_methods;
	struct mgw_metrics_tools tools; /* cap 0: tool names not counted */
	double start_time;              /* wall clock seconds at start */
	struct mgw_mrtr_set *mrtr;      /* the requestState guard's counters
	                                 * (or NULL) */
	const struct mgw_rl_table *rlt; /* the rate-limit buckets' counters
	                                 * (or NULL) */
	int listener;                   /* the listener index that answers
	                                 * the metrics (admin.metrics_listener),
	                                 * -1: every one */
};

#endif
