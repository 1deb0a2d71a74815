/* conf_backend-t.h - the "backend:" section of a configuration file:
 * how the reference MCP server (`mcpgw backend`) behaves.  Part of the
 * immutable snapshot (conf/config-t.h). */
#ifndef MGW_BACKEND_CONF_BACKEND_T_H
#define MGW_BACKEND_CONF_BACKEND_T_H

#include <stddef.h>
#include <stdint.h>

#include "util/redis_url.h"

enum mgw_era_conf { MGW_ERA_LEGACY, MGW_ERA_MODERN, MGW_ERA_DUAL };
enum mgw_state_conf { MGW_STATE_MEMORY, MGW_STATE_HMAC, MGW_STATE_REDIS };
enum mgw_sse_conf { MGW_SSE_NEVER, MGW_SSE_ALWAYS };
enum mgw_rs_conf { MGW_RS_MEMORY, MGW_RS_SEALED, MGW_RS_REDIS };
enum mgw_tasks_conf { MGW_TASKS_MEMORY, MGW_TASKS_REDIS };

/* "backend:" section: the reference MCP server. */
struct mgw_backend_conf {
	enum mgw_era_conf era;          /* era: legacy|modern|dual (dual) */
	enum mgw_state_conf state;      /* state: memory|hmac|redis (memory) */
	char *redis_url;                /* redis: "redis://127.0.0.1:6379" */
	struct mgw_redis_tls_conf redis_tls; /* redis_tls: for rediss:// */
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
	/* MRTR (the book tool): requestState design and its checks */
	enum mgw_rs_conf request_state; /* request_state: memory|sealed|redis */
	double request_state_ttl;       /* request_state_ttl (10m) */
	int request_state_bind_principal; /* ..._bind_principal (false) */
	int single_use;                 /* request_state_single_use (false) */
	/* tasks (the slow_job tool, tasks/...): where records live, bounds */
	enum mgw_tasks_conf tasks;      /* tasks: memory|redis (memory) */
	size_t max_tasks;               /* max_tasks (10000) */
	double task_ttl;                /* task_ttl: record lifetime (5m) */
	double task_poll_interval;      /* task_poll_interval (100ms) */
};

#endif
