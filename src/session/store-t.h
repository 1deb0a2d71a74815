/* store-t.h - session stores: the interface every store implements (a
 * vtable, so that optional stores such as modules/redis_store plug in) and
 * the shared pieces (views, operations, counters).  Types only; the
 * functions, and the contract that callers and implementations follow, are
 * in store.h.
 *
 * Threading model.  `mcpgw serve` runs one event loop per worker thread and
 * a client that opens a new connection per request lands on any of them,
 * so one store serves every worker:
 *   - struct mgw_session_store is shared by all threads (implementations
 *     lock or use atomics inside);
 *   - struct mgw_session_view is one worker's handle on the store, bound to
 *     that worker's event_base: operations are started through a view, on
 *     the view's thread, and their callbacks run on that loop (a store
 *     talking to a server, like Redis, keeps one connection per view);
 *   - struct mgw_session_op is one operation in progress, owned by the
 *     view's thread. */
#ifndef MGW_SESSION_STORE_T_H
#define MGW_SESSION_STORE_T_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "session/conf_sessions-t.h"
#include "session/session-t.h"
#include "util/prom.h"

struct mgw_session_store;
struct mgw_session_view;
struct mgw_session_op;

/* Completion of an operation: status is 0 or a negative MGW_E*; rec, when
 * not NULL, is a reference that now belongs to the callback (drop it with
 * mgw_session_unref).  Per operation:
 *   create  0 + the stored record (its id minted); MGW_ELIMIT (store full:
 *           max_sessions or max_memory; or an `initialize` body larger
 *           than the store keeps, which the proxy checks beforehand with
 *           mgw_session_store_max_initialize); MGW_EIO (unreachable).
 *   lookup  0 + the record; MGW_ENOTFOUND (unknown, expired, deleted,
 *           tampered or undecryptable, or bound to another principal: the
 *           proxy answers all of these alike, 404); MGW_EIO (store
 *           unreachable and nothing cached).
 *   update  0 + the stored new version; MGW_ECONFLICT + the current record
 *           (someone else updated first: adopt theirs); MGW_ENOTFOUND
 *           (gone meanwhile); MGW_EIO.
 *   remove  0 (rec NULL); MGW_ENOTFOUND; MGW_EIO. */
typedef void (*mgw_session_cb)(void *arg, int status, struct mgw_session *rec);

/* Clocks and housekeeping for a store; every member optional. */
struct mgw_session_env {
	struct event_base *house_base; /* loop for the periodic expiry sweep
	                                * (the serve main loop); NULL: expiry
	                                * happens only during operations (and
	                                * mgw_session_store_sweep) */
	uint64_t (*mono_ms)(void *arg); /* idle clock (default mgw_now_ms) */
	int64_t (*wall_s)(void *arg);   /* lifetime / token expiry clock
	                                 * (default mgw_wall_s) */
	void *clock_arg;
};

/* Counters of a store, for /stats and logs.  Gauges are read at the time
 * of the call; totals count since the store was made. */
struct mgw_session_stats {
	const char *store;          /* "memory", "sealed", "redis" */
	uint64_t active;            /* gauge: records held here (memory: the
	                             * sessions; sealed and redis: the local
	                             * cache) */
	uint64_t memory_bytes;      /* gauge: bytes those records hold,
	                             * bodies and table overhead included */
	uint64_t created;           /* sessions created */
	uint64_t expired;           /* dropped idle or past their lifetime,
	                             * and sealed tokens presented expired */
	uint64_t deleted;           /* removed by DELETE */
	uint64_t evicted;           /* cache entries dropped to make room */
	uint64_t refused;           /* creates refused: store full */
	uint64_t lookups;
	uint64_t not_found;         /* lookups answered MGW_ENOTFOUND */
	uint64_t rejected_token;    /* sealed: malformed, tampered, unknown
	                             * key id, wrong key */
	uint64_t rejected_principal; /* bound to another principal */
	uint64_t conflicts;         /* updates that lost compare-and-set */
	uint64_t cache_hits;        /* sealed / redis: served locally */
	uint64_t cache_misses;      /* sealed: token opened; redis: fetched */
	uint64_t errors;            /* backing store unreachable / failed */
	/* Stores with a server behind them (redis); 0 elsewhere: */
	uint64_t unreachable;       /* gauge: 1 while the server is (partly)
	                             * unreachable */
	uint64_t outages;           /* transitions to unreachable */
	uint64_t outage_ms;         /* time spent unreachable (the current
	                             * outage included) */
	uint64_t stale_hits;        /* lookups answered from the cache past
	                             * its validity because the server could
	                             * not be asked (counted in cache_hits) */
	uint64_t local_updates;     /* updates kept in the local cache only,
	                             * the server being unreachable */
	uint64_t round_trips;       /* commands sent to the server */
	uint64_t writebacks;        /* times the server was found to have
	                             * lost its data (restarted empty,
	                             * flushed) and a write-back started */
	uint64_t restored_writeback; /* sessions a write-back put back */
	uint64_t restored_lookup;   /* sessions a lookup or update found
	                             * missing on the server and put back
	                             * from the local cache */
};

/* The totals above, kept by the generic layer and the implementations
 * (atomics: any worker thread bumps them). */
struct mgw_session_counters {
	atomic_uint_fast64_t created, expired, deleted, evicted, refused,
		lookups, not_found, rejected_token, rejected_principal,
		conflicts, cache_hits, cache_misses, errors;
};

/* What an implementation provides.  Every operation function receives an
 * op already set up by the generic layer and either returns a negative
 * MGW_E* without having completed it (the generic layer then frees it and
 * the caller gets that error, no callback), or returns 0 and completes it
 * exactly once with mgw_session_op_complete() -- right away inside the
 * function (sync stores) or later from its own loop callbacks (async
 * stores).  The generic layer defers every callback to the view's loop, so
 * implementations need not care about re-entrancy. */
struct mgw_session_store_ops {
	const char *name;

	/* A view for base, or NULL on no memory (message in err).  NULL
	 * view_new: the generic layer allocates a plain view. */
	struct mgw_session_view *(*view_new)(struct mgw_session_store *st,
	                                     struct event_base *base,
	                                     char *err, size_t errlen);
	void (*view_free)(struct mgw_session_view *v);

	/* draft: a record with its handshake and pin set, no id; the
	 * implementation owns this reference whatever it returns. */
	int (*create)(struct mgw_session_view *v, struct mgw_session *draft,
	              struct mgw_session_op *op);
	/* principal: the presenter's digest, or NULL for none (matters only
	 * when the store binds principals). */
	int (*lookup)(struct mgw_session_view *v, const char *id, size_t len,
	              const unsigned char *principal, struct mgw_session_op *op);
	/* rec: a private copy (same id) whose stored version must still be
	 * expect_version; the implementation owns this reference. */
	int (*update)(struct mgw_session_view *v, struct mgw_session *rec,
	              uint64_t expect_version, struct mgw_session_op *op);
	int (*remove)(struct mgw_session_view *v, const char *id, size_t len,
	              struct mgw_session_op *op);

	/* Drops expired records: at most max of them.  Returns how many.
	 * Thread-safe.  NULL: nothing to sweep. */
	size_t (*sweep)(struct mgw_session_store *st, size_t max);
	/* Fills the gauges (active, memory_bytes) and anything specific. */
	void (*stats)(struct mgw_session_store *st, struct mgw_session_stats *out);
	/* Frees the implementation (after every view was freed). */
	void (*destroy)(struct mgw_session_store *st);
};

/* The part of every store the generic layer uses; implementations embed
 * it as their first member. */
enum mgw_session_op_kind {
	MGW_SESSION_OP_CREATE,
	MGW_SESSION_OP_LOOKUP,
	MGW_SESSION_OP_UPDATE,
	MGW_SESSION_OP_REMOVE,
};
#define MGW_SESSION_OP_KINDS 4

/* How an operation ended, for the operation counters. */
enum mgw_session_op_result {
	MGW_SESSION_RES_OK = 0,
	MGW_SESSION_RES_NOT_FOUND,      /* MGW_ENOTFOUND */
	MGW_SESSION_RES_CONFLICT,       /* MGW_ECONFLICT */
	MGW_SESSION_RES_LIMIT,          /* MGW_ELIMIT: store full */
	MGW_SESSION_RES_ERROR,          /* MGW_EIO: store unreachable/failed */
	MGW_SESSION_RES_OTHER,          /* anything else */
	MGW_SESSION_RES_N,
};

/* Completed operations by kind and result, and how long they took from
 * the start to the implementation's completion (latency buckets of
 * util/prom.h, the sum in nanoseconds).  Atomics: any worker bumps them. */
struct mgw_session_op_counters {
	atomic_uint_fast64_t done[MGW_SESSION_OP_KINDS][MGW_SESSION_RES_N];
	atomic_uint_fast64_t lat[MGW_SESSION_OP_KINDS][MGW_PROM_N_BUCKETS + 1];
	atomic_uint_fast64_t lat_sum_ns[MGW_SESSION_OP_KINDS];
};

/* A copy of those, read at one moment (mgw_session_store_op_stats). */
struct mgw_session_op_stats {
	uint64_t done[MGW_SESSION_OP_KINDS][MGW_SESSION_RES_N];
	uint64_t lat[MGW_SESSION_OP_KINDS][MGW_PROM_N_BUCKETS + 1];
	uint64_t lat_sum_ns[MGW_SESSION_OP_KINDS];
};

struct mgw_session_store {
	const struct mgw_session_store_ops *ops;
	const struct mgw_sessions_conf *conf; /* borrowed: the snapshot must
	                                 * outlive the store */
	struct mgw_session_env env;     /* clocks filled with defaults */
	struct mgw_session_counters cnt;
	struct mgw_session_op_counters opc; /* the generic layer's */
	struct event *sweep_ev;         /* on env.house_base, or NULL */
	size_t max_id;                  /* longest id this store mints (set by
	                                 * the implementation); lookups of
	                                 * longer ids are answered not found
	                                 * without asking it */
	size_t max_init;                /* largest `initialize` body it keeps
	                                 * (set by the implementation: the
	                                 * configured max_initialize_bytes, for
	                                 * sealed at most 16 KiB) */
};

/* One worker's handle; implementations with per-loop state embed it as
 * their first member. */
struct mgw_session_view {
	struct mgw_session_store *store;
	struct event_base *base;
	size_t ops_alive;               /* operations not yet freed (a view
	                                 * must not be freed while any is);
	                                 * the view's thread only */
	size_t ops_cancelled;           /* of those, cancelled while still
	                                 * with the implementation (its
	                                 * view_free completes them) */
};


/* One operation in flight.  Fields are the generic layer's, except impl,
 * which an implementation that completes later may use for its own
 * per-op data (it must release that before completing). */
struct mgw_session_op {
	struct mgw_session_view *view;
	enum mgw_session_op_kind kind;  /* counted by kind at completion */
	uint64_t t0_ns;                 /* monotonic ns at the start */
	mgw_session_cb cb;
	void *arg;
	struct event *ev;               /* delivers the callback on view->base */
	int status;                     /* result, once completed */
	struct mgw_session *rec;        /* result reference, once completed */
	unsigned completed : 1;         /* mgw_session_op_complete was called */
	unsigned cancelled : 1;         /* the caller gave up: no callback */
	unsigned delivering : 1;        /* the callback is running */
	void *impl;                     /* implementation's per-op data */
};

/* A store kind that can be chosen by name in the configuration ("redis"),
 * registered by its module at start-up (see store.h). */
struct mgw_session_store_type {
	const char *name;
	struct mgw_session_store *(*create)(const struct mgw_sessions_conf *conf,
	                                    const struct mgw_session_env *env,
	                                    char *err, size_t errlen);
};

#endif
