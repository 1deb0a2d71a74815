/* conf_sessions-t.h - the "sessions:" section of a configuration file:
 * where the gateway's stateful mode keeps legacy sessions and when an
 * upstream answer means a lost one.  Part of the immutable snapshot
 * (conf/config-t.h, under serve). */
#ifndef MGW_SESSION_CONF_SESSIONS_T_H
#define MGW_SESSION_CONF_SESSIONS_T_H

#include <stddef.h>
#include <stdint.h>

#include "util/redis_url.h"

enum mgw_session_store_conf {
	MGW_SESSION_STORE_DEFAULT = -1, /* routes only: the sessions: store */
	MGW_SESSION_STORE_MEMORY = 0,
	MGW_SESSION_STORE_SEALED = 1,
	MGW_SESSION_STORE_REDIS = 2,
};

#define MGW_LOST_STATUS_MAX 8

/* "sessions.redis:" (used by modules/redis_store). */
struct mgw_session_redis_conf {
	char *url;                 /* url (redis://127.0.0.1:6379) */
	size_t cache_size;         /* cache_size: local cache entries (10000) */
	double cache_ttl;          /* cache_ttl: a cached record is used
	                            * without asking Redis this long (30s) */
	double timeout;            /* timeout: per command (1s) */
	char *key_prefix;          /* key_prefix ("mcpgw:session:") */
	char **sentinels;          /* sentinels: ["IP:PORT", ...] (none):
	                            * the master is the one they name */
	size_t n_sentinels;
	char *master_name;         /* master_name: with sentinels */
	struct mgw_redis_tls_conf tls; /* tls: for rediss:// URLs */
	uint32_t writeback_rate;   /* writeback_rate: sessions per second
	                            * written back after Redis lost its data
	                            * (2000) */
};

/* "sessions.sealed:" (session/store_sealed.c): where a DELETE's
 * tombstone lives, so that other gateways honour it. */
enum mgw_sealed_tombstones {
	MGW_TOMBSTONES_LOCAL = 0,  /* this gateway's cache only */
	MGW_TOMBSTONES_REDIS = 1,  /* also in sessions.redis (url, key_prefix,
	                            * timeout, cache_ttl) */
};
enum mgw_tombstone_on_error {
	MGW_TOMBSTONE_SERVE = 0,   /* Redis unreachable: serve the session
	                            * unchecked (its token still authenticates
	                            * it), counted as a store error */
	MGW_TOMBSTONE_REFUSE = 1,  /* answer 503 (store unavailable) */
};
struct mgw_session_sealed_conf {
	int tombstones;            /* tombstones: local|redis (local) */
	int on_redis_error;        /* on_redis_error: serve|refuse (serve) */
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
	struct mgw_session_sealed_conf sealed;
	struct mgw_lost_session_conf lost_session;
};

#endif
