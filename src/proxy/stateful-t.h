/* stateful-t.h - the stateful path of `mcpgw serve` (types only; see
 * stateful.h). */
#ifndef MGW_PROXY_STATEFUL_T_H
#define MGW_PROXY_STATEFUL_T_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy/conf_serve-t.h"
#include "proxy/repin-t.h"
#include "proxy/sf_bus-t.h"
#include "session/store-t.h"

/* Store kinds a configuration can name (memory, sealed, redis): the
 * index is enum mgw_session_store_conf. */
#define MGW_SF_STORE_KINDS 3

/* Counters of the stateful path, shared by every worker (atomics; they
 * only grow).  /mcpgw/stats shows them with the stores' own counters. */
struct mgw_sf_counters {
	struct mgw_repin_counters repin;
	atomic_uint_fast64_t requests;      /* requests on the stateful path */
	atomic_uint_fast64_t initializes;   /* initialize requests forwarded */
	atomic_uint_fast64_t created;       /* sessions minted (client got an
	                                     * id of ours) */
	atomic_uint_fast64_t create_failed; /* initialize answered but no
	                                     * session stored (503) */
	atomic_uint_fast64_t not_found;     /* 404: unknown, expired, deleted
	                                     * or another principal's id */
	atomic_uint_fast64_t unrecoverable; /* 404: could not be re-pinned */
	atomic_uint_fast64_t inflight_replayed; /* lost in flight, sent again */
	atomic_uint_fast64_t inflight_refused;  /* lost in flight, not safe to
	                                     * send again: -32010 */
	atomic_uint_fast64_t deleted;       /* DELETE ended a session */
	atomic_uint_fast64_t store_errors;  /* 503: store unreachable */
	atomic_uint_fast64_t missing_session; /* 400: GET/DELETE without a
	                                     * session in stateful mode */
	atomic_uint_fast64_t streams;       /* GET streams opened upstream */
	atomic_uint_fast64_t streams_closed; /* GET streams closed because the
	                                     * session moved or its replica
	                                     * failed */
	atomic_uint_fast64_t streams_closed_elsewhere; /* of those: by a
	                                     * re-pin in another worker */
	atomic_uint_fast64_t last_event_passed;  /* Last-Event-ID passed on */
	atomic_uint_fast64_t last_event_dropped; /* not passed: other pin */
	atomic_uint_fast64_t resumes_answered; /* a POST's stream resumed
	                                     * after a re-pin, answered by
	                                     * the gateway (its -32010, or
	                                     * 204 once answered) */
	atomic_uint_fast64_t tools_recorded; /* tools/list results recorded */
	atomic_uint_fast64_t record_updates_failed; /* notifications/
	                                     * initialized or tools not
	                                     * recorded (store error) */
};

/* One session store the configuration uses. */
struct mgw_sf_store {
	struct mgw_sessions_conf conf;  /* sessions: with .store set to this
	                                 * kind (strings borrowed from the
	                                 * snapshot) */
	struct mgw_session_store *st;   /* NULL: no route uses this kind */
};

/* What outlives a configuration reload: the stores (their sessions) and
 * the counters.  Shared by every generation's mgw_sf_shared; freed with
 * the last of them. */
struct mgw_sf_core {
	struct mgw_sf_store stores[MGW_SF_STORE_KINDS];
	struct mgw_sf_counters cnt;
	struct mgw_sf_bus bus;          /* re-pins told to every worker */
	atomic_int refs;                /* mgw_sf_shared objects using it */
};

/* What the workers of one configuration generation share: the core
 * (stores, counters), which store each route uses, the configuration.
 * Built on the main thread before the workers use it; the stores are
 * thread-safe, the rest is read-only afterwards. */
struct mgw_sf_shared {
	const struct mgw_serve_conf *conf;  /* borrowed */
	struct mgw_sf_core *core;       /* shared with the other generations */
	int *route_store;               /* per route index: a store kind */
	size_t n_routes;
};

struct mgw_pipeline;
struct mgw_sf_req;
struct mgw_sf_bg;

/* The stateful path of one worker (used from its thread only). */
struct mgw_sf {
	struct mgw_sf_shared *sh;
	struct mgw_pipeline *pl;        /* the worker's pipeline (its
	                                 * upstream pool, counters) */
	struct mgw_session_view *views[MGW_SF_STORE_KINDS];
	struct mgw_repin_map map;
	struct mgw_sf_req *streams;     /* GET streams being relayed */
	struct mgw_sf_bg *bg;           /* record updates in flight */
	struct mgw_sf_bus_sub *bus;     /* this worker's ear on core->bus */
	size_t live;                    /* requests in progress */
};

#endif
