/* conf_serve-t.h - the keys of "mcpgw serve" in a configuration file:
 * upstream groups (servers, health checks, outlier ejection), routes and
 * the proxy-wide policy.  Part of the immutable snapshot
 * (conf/config-t.h); filled only by the tables of conf_upstreams.c,
 * conf_routes.c and conf_serve.c. */
#ifndef MGW_PROXY_CONF_SERVE_T_H
#define MGW_PROXY_CONF_SERVE_T_H

#include <stddef.h>
#include <stdint.h>

#include "auth/conf_auth-t.h"
#include "proxy/conf_policy-t.h"
#include "session/conf_sessions-t.h"

enum mgw_mode_conf { MGW_MODE_STATELESS, MGW_MODE_STATEFUL, MGW_MODE_AUTO };
/* Who may read GET /mcpgw/stats (admin.stats) and GET /metrics
 * (admin.metrics). */
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
/* What a group's upstreams get as Authorization (upstream_auth). */
enum mgw_upstream_auth_conf {
	MGW_UPAUTH_STRIP,       /* strip (default): never the client's */
	MGW_UPAUTH_STATIC,      /* static: the group's upstream_credential */
	MGW_UPAUTH_PASSTHROUGH, /* passthrough: the client's, unchanged (the
	                         * token passthrough MCP forbids: opt-in) */
};

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

/* A "redis:" section of a proxy feature that shares state between
 * gateways (rate_limits.redis, mrtr_guard.redis; conf_ratelimit.c). */
struct mgw_redis_conf {
	char *url;                 /* url (none) */
	double timeout;            /* timeout (50ms) per command */
	char **sentinels;          /* sentinels (none): as
	                            * sessions.redis.sentinels */
	size_t n_sentinels;
	char *master_name;         /* master_name */
	struct mgw_redis_tls_conf tls; /* tls: for rediss:// URLs */
};

/* affinity: none|task, and "task_affinity:" of a group (affinity.h):
 * tasks/... requests go to the server that created the task. */
enum mgw_affinity_conf { MGW_AFFINITY_NONE = 0, MGW_AFFINITY_TASK };
struct mgw_task_affinity_conf {
	int mode;                  /* affinity (none); MGW_AFFINITY_* */
	uint32_t max_tasks;        /* task_affinity.max_tasks (100000): tasks
	                            * remembered; the one learned longest ago
	                            * goes first */
	double max_ttl;            /* task_affinity.max_ttl (24h): the most a
	                            * task is remembered, whatever its ttlMs */
	struct mgw_redis_conf redis; /* task_affinity.redis (none): share
	                            * the map with other gateways; a slower
	                            * answer than redis.timeout is a miss */
};

/* upstreams[].tools_probe (tools_probe.h) */
enum {
	MGW_TOOLS_PROBE_OFF = 0,  /* false: never */
	MGW_TOOLS_PROBE_ON = 1,   /* true: from the start */
	MGW_TOOLS_PROBE_AUTO = 2, /* auto: once clients' traffic taught the
	                           * group, to keep that knowledge fresh */
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
	uint32_t max_queue;        /* requests waiting for a connection, per
	                            * server (1024); beyond: the next server,
	                            * or 503 -32008 */
	struct mgw_server_conf *servers; /* servers (at least one) */
	size_t n_servers;
	struct mgw_health_conf health;
	struct mgw_outlier_conf outlier;
	enum mgw_upstream_auth_conf upstream_auth; /* upstream_auth (strip) */
	char *credential_file;     /* upstream_credential.file: its first
	                            * line is the Authorization value */
	char *credential_env;      /* upstream_credential.env: a variable
	                            * holding it (read when the file loads) */
	int tools_probe;           /* tools_probe (auto): the gateway asks
	                            * for tools/list itself (tools_probe.h):
	                            * MGW_TOOLS_PROBE_* */
	double tools_ttl;          /* tools_ttl (10m): how long the tools a
	                            * tools/list marked replay-safe are
	                            * trusted without a newer list */
	struct mgw_task_affinity_conf affinity; /* affinity, task_affinity */
};

/* A route's rate_limit: which requests share a token bucket. */
enum mgw_rl_key_conf {
	MGW_RL_KEY_PRINCIPAL = 0,  /* the token's subject (the client address
	                            * on a route without auth) */
	MGW_RL_KEY_CLIENT,         /* the client address */
	MGW_RL_KEY_METHOD,         /* the MCP method */
	MGW_RL_KEY_TOOL,           /* tools/call's params.name */
};
#define MGW_RL_N_KEYS 4
enum mgw_rl_shared_conf { MGW_RL_SHARED_NONE, MGW_RL_SHARED_REDIS };

/* "rate_limit: {rate, burst, key, shared}" of a route. */
struct mgw_rate_limit_conf {
	double rate;               /* rate: tokens per second (> 0) */
	uint32_t burst;            /* burst: bucket size (>= 1; default: rate
	                            * rounded up) */
	int key;                   /* key: principal|client|method|tool
	                            * (principal); MGW_RL_KEY_* */
	int shared;                /* shared: none|redis (none): one bucket per
	                            * gateway, or one in Redis for all */
};

/* "rate_limits:": what every route's rate_limit shares. */
struct mgw_rate_limits_conf {
	uint32_t max_keys;         /* max_keys (100000): buckets the gateway
	                            * keeps; the least recently used go */
	struct mgw_redis_conf redis; /* redis: for shared: redis; a slower
	                            * answer than redis.timeout falls back
	                            * to the local bucket */
};

/* A route's "mrtr: {single_use, ttl, shared}" (conf_mrtr.c): the
 * at-most-once guard for SEP-2322 requestState (check_mrtr.c). */
enum mgw_mrtr_shared_conf { MGW_MRTR_SHARED_NONE, MGW_MRTR_SHARED_REDIS };
struct mgw_mrtr_conf {
	int single_use;            /* single_use (required): a requestState
	                            * is let through once within ttl */
	double ttl;                /* ttl (10m): how long its digest is kept */
	int shared;                /* shared: none|redis (none): this
	                            * gateway's workers, or every gateway
	                            * through Redis; MGW_MRTR_SHARED_* */
};

/* "mrtr_guard:": what every route's mrtr: shares. */
struct mgw_mrtr_guard_conf {
	uint32_t max_states;       /* max_states (100000): digests kept by
	                            * this gateway; when full, new states
	                            * are refused (503), never forgotten */
	struct mgw_redis_conf redis; /* redis: for shared: redis (none:
	                            * rate_limits.redis) */
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
	int replay;                /* replay: safe|always (safe): whether a
	                            * request lost in flight that is not known
	                            * safe is sent again anyway (both
	                            * handlers; replay.h; MGW_REPLAY_*) */
	/* stateful mode (issue 4) */
	int session_store;         /* session_store: default|memory|sealed|
	                            * redis (default = sessions.store);
	                            * MGW_SESSION_STORE_* or -1 */
	/* auth: (doc/security.md) */
	int auth;                  /* auth (true): the top-level auth: section
	                            * applies to this route; false: none */
	char **required_scopes;    /* required_scopes: instead of
	                            * auth.required_scopes (none: those) */
	size_t n_required_scopes;
	int has_rate_limit;        /* rate_limit: given */
	struct mgw_rate_limit_conf rate_limit;
	int has_mrtr;              /* mrtr: given */
	struct mgw_mrtr_conf mrtr;
	/* tool policy (issue 15; conf_policy-t.h, doc/security.md) */
	struct mgw_policy_lists policy;  /* allow_* / deny_* lists */
	struct mgw_policy_rule_conf *policy_rules; /* policy: first rule
	                            * whose when holds replaces the lists */
	size_t n_policy_rules;
	int filter_tools_list;     /* filter_tools_list (false): denied tools
	                            * removed from a JSON tools/list answer */
};

/* A route's replay key (both handlers). */
enum mgw_replay_conf { MGW_REPLAY_SAFE, MGW_REPLAY_ALWAYS };

struct mgw_serve_conf {
	enum mgw_mode_conf mode;   /* mode (auto) */
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
	enum mgw_stats_access metrics; /* admin.metrics (loopback): who may
	                            * read the Prometheus metrics */
	char *metrics_path;        /* admin.metrics_path (/metrics) */
	char *metrics_listener;    /* admin.metrics_listener: the address of
	                            * the one listener (as written under
	                            * listeners:) that answers the metrics;
	                            * NULL: every listener */
	int metrics_tool_names;    /* mcp.metrics_tool_names (false): count
	                            * tools/call by tool name */
	uint32_t metrics_tool_names_max; /* mcp.metrics_tool_names_max (100):
	                            * names with their own series; the rest
	                            * count as "other" */
	struct mgw_sessions_conf sessions; /* sessions: (stateful mode) */
	double drain_delay;        /* drain.delay (0s): on SIGTERM, readyz
	                            * answers 503 and the listeners keep
	                            * accepting this long before closing */
	char **allowed_origins;    /* security.allowed_origins (none: no
	                            * Origin check): origins, or "self" */
	size_t n_allowed_origins;
	struct mgw_auth_conf auth; /* auth: (auth.enabled: the section is
	                            * there) */
	struct mgw_rate_limits_conf rate_limits; /* rate_limits: */
	struct mgw_mrtr_guard_conf mrtr_guard; /* mrtr_guard: */
	int keys_given;            /* the file had one of these keys: it is
	                            * meant for `mcpgw serve` (check-config) */
};

#endif
