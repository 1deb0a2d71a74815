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

struct mgw_config {
	char *source;                   /* file it came from, or "<defaults>" */
	enum mgw_log_level log_level;   /* log.level (info) */
	struct mgw_listener_conf *listeners; /* listeners (may be 0 entries) */
	size_t n_listeners;
	struct mgw_http_limits limits;  /* limits: + timeouts: sections */
	double shutdown_timeout;        /* timeouts.shutdown (10s) */
	int has_backend;                /* a backend: section was present */
	struct mgw_backend_conf backend;
};

#endif
