/* upstream-t.h - runtime state of upstream groups and their servers, built
 * from a configuration snapshot (see upstream.h for the API).
 *
 * Threading contract.  `mcpgw serve` runs N worker threads, each with its
 * own event loop, plus the main thread where the health checker runs.
 * - Everything marked "immutable" is written once by mgw_upstreams_new()
 *   on the main thread before any worker starts, and only read afterwards.
 * - The per-server fields marked "shared" are C11 atomics: health verdicts
 *   (written by the health checker), passive-outlier counters and ejection
 *   deadlines (written by any worker reporting an outcome), in-flight
 *   counts (every worker) and the draining flag.  Readers on any thread
 *   see a recent value; nothing here needs a lock.  Small races (two
 *   workers ejecting the same server at once) are resolved by
 *   compare-and-swap so that one ejection is counted.
 * - A picker (struct mgw_upstream_picker) holds the balancer state that
 *   must not be shared: smooth round-robin weights and a random generator.
 *   Each worker owns one and uses it from its own thread only.
 * - mgw_upstreams_free() runs after every worker has stopped and the health
 *   checker was freed.
 * Time is a monotonic clock in milliseconds passed in by the caller
 * (mgw_now_ms() in production, a fake clock in tests). */
#ifndef MGW_PROXY_UPSTREAM_T_H
#define MGW_PROXY_UPSTREAM_T_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "proxy/conf_serve-t.h"
#include "http/client-t.h"

struct mgw_upstream_group;
struct mgw_retry_budget;

/* One replica. */
struct mgw_upstream_server {
	/* immutable */
	struct mgw_upstream_group *group;
	size_t index;                   /* position in group->servers */
	const struct mgw_server_conf *conf; /* borrowed from the snapshot */
	char *host;                     /* name or address, no brackets */
	uint16_t port;
	int tls;                        /* https */
	char *authority;                /* "host:port" / "[v6]:port" */
	char *path_prefix;              /* "" or "/prefix" (no trailing '/'),
	                                 * put in front of forwarded targets */
	char *probe_path;               /* target of the HTTP health probe */
	char *name;                     /* "group/host:port" for logs */
	uint32_t weight;                /* 1..1000 */

	/* shared: active health (written by the health checker only) */
	atomic_int health_up;           /* 1 up, 0 down; always 1 when the
	                                 * group has no active checks */
	/* shared: passive outlier detection (written by workers) */
	atomic_uint_fast64_t ejected_until; /* ms; 0 = not ejected */
	atomic_uint_fast64_t last_eject_end; /* ms when the last ejection
	                                 * ended (for the backoff reset) */
	atomic_uint consec_connect_failures;
	atomic_uint consec_failures;    /* 5xx and post-connect failures */
	atomic_uint eject_streak;       /* ejections in a row: the backoff
	                                 * exponent */
	/* shared: load and lifecycle */
	atomic_int_fast64_t in_flight;  /* requests currently on this server */
	atomic_int draining;            /* 1: take no new requests */
	/* shared: counters (only grow) */
	atomic_uint_fast64_t n_picked;
	atomic_uint_fast64_t n_ejections;
	atomic_uint_fast64_t n_queue_full; /* refused: max_queue reached */
	atomic_uint_fast64_t n_went_down; /* active health: up -> down */
	atomic_uint_fast64_t n_went_up;   /* active health: down -> up */
};

/* One point of the consistent-hash ring. */
struct mgw_hash_point {
	uint64_t hash;
	uint32_t server;                /* index in group->servers */
};

/* One upstream group. */
struct mgw_replay_group;
struct mgw_task_map;

struct mgw_upstream_group {
	/* all immutable */
	const struct mgw_upstream_conf *conf; /* borrowed from the snapshot */
	const char *name;               /* conf->name */
	size_t index;                   /* position in ups->groups */
	enum mgw_balancer_conf balancer;
	enum mgw_client_proto proto;    /* what to ask the client layer for */
	SSL_CTX *tls;                   /* client context for https servers
	                                 * (NULL when the group has none);
	                                 * SSL_CTX is safe to share across
	                                 * threads once built */
	struct mgw_upstream_server *servers;
	size_t n_servers;
	uint64_t total_weight;
	struct mgw_hash_point *ring;    /* sorted by hash (balancer hash only) */
	size_t n_ring;
	struct mgw_upstreams *ups;
	char *credential;               /* upstream_auth static: the
	                                 * Authorization value (owned; read
	                                 * when the generation was built) */
	struct mgw_replay_group *replay; /* replay-safe tools learned, replay
	                                 * counters (replay.h; shared) */
	struct mgw_task_map *tasks;     /* affinity: task: which server holds
	                                 * which task (affinity.h; shared),
	                                 * else NULL */
};

/* Every group of one snapshot, and the proxy-wide retry budget. */
struct mgw_upstreams {
	const struct mgw_serve_conf *conf;  /* borrowed: outlives this */
	struct mgw_upstream_group *groups;
	size_t n_groups;
	struct mgw_retry_budget *budget;
};

/* Per-worker balancer state (never shared between threads). */
struct mgw_upstream_picker {
	const struct mgw_upstreams *ups;
	uint64_t rng;                   /* xorshift64* state, never 0 */
	int64_t **current;              /* smooth round robin: current weight
	                                 * per server, per group */
};

/* What happened to one attempt, fed to passive outlier detection. */
enum mgw_upstream_outcome {
	/* A response head arrived with a status below 500. */
	MGW_UPSTREAM_OK = 0,
	/* Name resolution, TCP connect or TLS handshake failed (the client
	 * layer's MGW_CLIENT_F_CONNECT). */
	MGW_UPSTREAM_CONNECT_FAILURE,
	/* A response with status >= 500 (pass the status). */
	MGW_UPSTREAM_HTTP_5XX,
	/* Connected but failed afterwards: reset, protocol error, first-byte
	 * or idle timeout.  Counted with 5xx ("gateway failures").  Not for
	 * attempts the gateway itself cancelled (client went away). */
	MGW_UPSTREAM_FAILURE,
};

/* Availability of a server, for logs and status pages. */
enum mgw_upstream_state {
	MGW_UPSTREAM_S_UP = 0,
	MGW_UPSTREAM_S_DOWN,            /* active checks say down */
	MGW_UPSTREAM_S_EJECTED,         /* passive ejection running */
	MGW_UPSTREAM_S_DRAINING,
};

/* The servers one request has been sent to (attempts in order), so that
 * the next attempt lands on another one. */
struct mgw_upstream_tried {
	struct mgw_upstream_server **v;
	size_t n, cap;
};

/* What mgw_upstream_next found. */
enum mgw_upstream_next {
	MGW_NEXT_OK = 0,
	MGW_NEXT_NONE_HEALTHY,  /* nothing tried yet and no server available */
	MGW_NEXT_ALL_TRIED,     /* every available server was tried */
	MGW_NEXT_NO_BUDGET,     /* a retry the proxy-wide budget refused */
	MGW_NEXT_NOMEM,
};

/* Upper bound on the hash ring: the number of points per weight unit is
 * lowered for huge weight sums so the ring stays this small. */
#define MGW_HASH_RING_MAX 160000u
/* Ring points per unit of weight (a weight-1 server gets this many). */
#define MGW_HASH_POINTS_PER_WEIGHT 100u

#endif
