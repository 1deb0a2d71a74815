/* config-t.h - the typed, validated, immutable configuration snapshot.
 * Filled only by mgw_config_load()/mgw_config_defaults(); never mutated
 * afterwards (a reload builds a new snapshot). */
#ifndef MGW_CORE_CONFIG_T_H
#define MGW_CORE_CONFIG_T_H

#include <stddef.h>
#include <stdint.h>

#include "core/log.h"
#include "http/server.h"

/* One listener: "listeners: [{address, tls: {cert, key}}]". */
struct mgw_listener_conf {
	char *address;   /* "HOST:PORT" (IPv6 as "[::1]:8080") */
	char *tls_cert;  /* PEM file, NULL for a plain listener */
	char *tls_key;   /* PEM file, NULL for a plain listener */
};

enum mgw_era_conf { MGW_ERA_LEGACY, MGW_ERA_MODERN, MGW_ERA_DUAL };
enum mgw_state_conf { MGW_STATE_MEMORY, MGW_STATE_HMAC, MGW_STATE_REDIS };
enum mgw_sse_conf { MGW_SSE_NEVER, MGW_SSE_ALWAYS };

/* "backend:" section: the reference MCP server. */
struct mgw_backend_conf {
	enum mgw_era_conf era;          /* era: legacy|modern|dual (dual) */
	enum mgw_state_conf state;      /* state: memory|hmac|redis (memory) */
	char *redis_url;                /* redis: "redis://127.0.0.1:6379" */
	char *key_file;                 /* key_file: HMAC key file (hmac) */
	enum mgw_sse_conf sse;          /* sse: always|never (never) */
	uint32_t delay_ms;              /* delay_ms: added to every answer (0) */
	char *id;                       /* id: replica name (hostname:port) */
	int lost_session_status;        /* lost_session_status: 404|400 (404) */
	double session_idle_timeout;    /* session_idle_timeout (30m) */
	size_t max_sessions;            /* max_sessions (100000) */
	double keepalive_interval;      /* sse_keepalive (15s) */
	double handle_ttl;              /* handle_ttl: hmac/redis expiry (1h) */
	char *path;                     /* path: MCP endpoint ("/mcp") */
};

/* ---- "mcpgw serve" (issue 3): upstream groups, routes, proxy policy ---- */

enum mgw_mode_conf { MGW_MODE_STATELESS, MGW_MODE_STATEFUL, MGW_MODE_AUTO };
/* Who may read GET /mcpgw/stats (admin.stats). */
enum mgw_stats_access {
	MGW_STATS_LOOPBACK, /* clients on a loopback address (default) */
	MGW_STATS_ANY,      /* every client of every listener */
	MGW_STATS_OFF,      /* nobody: the path is proxied like any other */
};
enum mgw_balancer_conf {
	MGW_BAL_ROUND_ROBIN,   /* round_robin (weighted, smooth) */
	MGW_BAL_LEAST_REQUEST, /* least_request (power of two choices) */
	MGW_BAL_RANDOM,        /* random (weighted) */
	MGW_BAL_HASH,          /* hash: consistent hash on hash_header */
};
enum mgw_upstream_proto_conf { MGW_UP_HTTP1, MGW_UP_H2C, MGW_UP_ALPN };
enum mgw_probe_conf { MGW_PROBE_HTTP, MGW_PROBE_TCP };

/* One replica: "servers: [{url, weight}]". */
struct mgw_server_conf {
	char *url;                 /* http://HOST[:PORT][/prefix] or https://...
	                            * (see util/url.h); the prefix is put in
	                            * front of the client's request target */
	uint32_t weight;           /* 1..1000 (1) */
};

/* One extra request header: "headers: [{name, value}]". */
struct mgw_header_conf {
	char *name;                /* a header field name (token) */
	char *value;               /* visible ASCII, spaces, tabs */
};

/* Active health check: "health:". */
struct mgw_health_conf {
	int enabled;               /* enabled (true) */
	enum mgw_probe_conf type;  /* type: http|tcp (http) */
	double interval;           /* interval (2s) */
	double timeout;            /* timeout (1s) */
	uint32_t rise;             /* rise: successes to mark up (2) */
	uint32_t fall;             /* fall: failures to mark down (3) */
	char *method;              /* method (POST) */
	char *path;                /* path (NULL: the server URL's path prefix
	                            * followed by "/mcp", i.e. where a client's
	                            * /mcp request lands) */
	char *body;                /* body (a modern server/discover request;
	                            * "" when method is set to anything but
	                            * POST and body is not given) */
	struct mgw_header_conf *headers; /* headers: extra probe headers (none);
	                            * the SEP-2243 headers mirrored from a
	                            * JSON-RPC body are added by the prober */
	size_t n_headers;
	int expect_status;         /* expect_status (200) */
};

/* Passive outlier ejection: "outlier:". */
struct mgw_outlier_conf {
	uint32_t consecutive_connect_failures; /* (3); 0 disables */
	uint32_t consecutive_5xx;              /* (5); 0 disables */
	double base_ejection;                  /* base_ejection (5s), doubled per
	                                        * repeated ejection */
	double max_ejection;                   /* max_ejection (60s) */
};

/* One upstream group: "upstreams: [{...}]". */
struct mgw_upstream_conf {
	char *name;                /* name (required, unique) */
	enum mgw_balancer_conf balancer; /* balancer (round_robin) */
	char *hash_header;         /* hash_header (required for hash) */
	enum mgw_upstream_proto_conf protocol; /* protocol: http1|h2c|alpn (http1) */
	char *tls_ca_file;         /* tls.ca_file (system store when NULL) */
	int tls_verify;            /* tls.verify (true) */
	char *tls_sni;             /* tls.sni (the URL host when NULL) */
	uint32_t max_connections;  /* per server (256) */
	uint32_t max_idle;         /* idle keep-alive connections per server (256) */
	struct mgw_server_conf *servers; /* servers (at least one) */
	size_t n_servers;
	struct mgw_health_conf health;
	struct mgw_outlier_conf outlier;
};

/* One route: "routes: [{match: {...}, upstream, ...}]", first match wins. */
struct mgw_route_conf {
	char *match_path;          /* match.path: exact, or prefix when it ends
	                            * with '*' (NULL = any) */
	char *match_mcp_method;    /* match.mcp_method (NULL = any) */
	char *match_mcp_name;      /* match.mcp_name, compared decoded (NULL = any) */
	char *upstream;            /* upstream: group name (required) */
	int validate_headers;      /* validate_headers (true): SEP-2243 checks
	                            * on modern requests before any upstream */
	uint32_t retries;          /* retries: extra attempts (2) */
	double connect_timeout;    /* timeouts.connect (2s) */
	double first_byte_timeout; /* timeouts.first_byte (30s) */
	double idle_timeout;       /* timeouts.idle (60s; between response bytes) */
	double total_timeout;      /* timeouts.total (0 = none) */
	/* stateful mode (issue 4) */
	int replay;                /* replay: safe|always (safe): whether a
	                            * tools/call lost in flight is replayed
	                            * after a re-pin (MGW_REPLAY_*) */
	int session_store;         /* session_store: default|memory|sealed|
	                            * redis (default = sessions.store);
	                            * MGW_SESSION_STORE_* or -1 */
};

/* ---- stateful mode (issue 4): "sessions:" ---- */

enum mgw_session_store_conf {
	MGW_SESSION_STORE_DEFAULT = -1, /* routes only: the sessions: store */
	MGW_SESSION_STORE_MEMORY = 0,
	MGW_SESSION_STORE_SEALED = 1,
	MGW_SESSION_STORE_REDIS = 2,
};
enum mgw_replay_conf { MGW_REPLAY_SAFE, MGW_REPLAY_ALWAYS };

#define MGW_LOST_STATUS_MAX 8

/* "sessions.redis:" (used by modules/redis_store). */
struct mgw_session_redis_conf {
	char *url;                 /* url (redis://127.0.0.1:6379) */
	size_t cache_size;         /* cache_size: local cache entries (10000) */
	double cache_ttl;          /* cache_ttl: a cached record is used
	                            * without asking Redis this long (30s) */
	double timeout;            /* timeout: per command (1s) */
	char *key_prefix;          /* key_prefix ("mcpgw:session:") */
};

/* "sessions.lost_session:": which upstream answers mean "I do not know
 * this session" (and trigger a re-pin rather than reaching the client). */
struct mgw_lost_session_conf {
	char *statuses;            /* statuses ("404,400"): comma-separated */
	int status[MGW_LOST_STATUS_MAX]; /* parsed statuses */
	size_t n_status;
	char *body_contains;       /* body_contains ("session"): for statuses
	                            * other than 404, the body must contain
	                            * this, ASCII case-insensitively ("" = any
	                            * body); 404 is the spec's own answer */
};

struct mgw_sessions_conf {
	enum mgw_session_store_conf store; /* store: memory|sealed|redis
	                            * (memory) */
	double idle_timeout;       /* idle_timeout (30m) */
	double max_lifetime;       /* max_lifetime (24h): sealed tokens expire
	                            * then; other stores drop sessions then */
	size_t max_sessions;       /* max_sessions (100000) */
	size_t max_memory;         /* max_memory (256MiB): bytes held */
	size_t max_initialize_bytes; /* max_initialize_bytes (64KiB; 8KiB
	                            * when store is sealed) */
	char *key_file;            /* key_file: sealed keys, "KID HEX64" lines
	                            * (first seals, all open); NULL = a random
	                            * key (sessions do not survive across
	                            * gateways) */
	int bind_principal;        /* bind_principal (false) */
	uint32_t max_repin_attempts; /* max_repin_attempts (2) */
	struct mgw_session_redis_conf redis;
	struct mgw_lost_session_conf lost_session;
};

struct mgw_serve_conf {
	enum mgw_mode_conf mode;   /* mode (stateless) */
	uint32_t workers;          /* workers (0 = one per core) */
	struct mgw_upstream_conf *upstreams;
	size_t n_upstreams;
	struct mgw_route_conf *routes; /* default: one route "*" to the first group */
	size_t n_routes;
	double retry_budget_ratio; /* retry_budget.ratio (0.2) of requests */
	uint32_t retry_budget_min; /* retry_budget.min_per_second (10) */
	int trust_forwarded;       /* forwarded.trust_client (false) */
	int add_forwarded;         /* forwarded.add (true): Forwarded + X-Forwarded-For */
	size_t max_json_depth;     /* mcp.max_json_depth (64) */
	enum mgw_stats_access stats; /* admin.stats (loopback) */
	struct mgw_sessions_conf sessions; /* sessions: (stateful mode) */
};

struct mgw_config {
	char *source;                   /* file it came from, or "<defaults>" */
	enum mgw_log_level log_level;   /* log.level (info) */
	int log_access;                 /* log.access: one line per proxied
	                                 * request at info (false) */
	struct mgw_listener_conf *listeners; /* listeners (may be 0 entries) */
	size_t n_listeners;
	struct mgw_http_limits limits;  /* limits: + timeouts: sections */
	double shutdown_timeout;        /* timeouts.shutdown (10s) */
	int has_backend;                /* a backend: section was present */
	struct mgw_backend_conf backend;
	int has_serve;                  /* upstreams:/routes: present */
	struct mgw_serve_conf serve;
};

#endif
