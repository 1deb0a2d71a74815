/* errors-t.h - the errors the gateway itself answers (types only; see
 * errors.h).  The first JSON-RPC codes come from the implementation-
 * defined server-error range -32000..-32099 that JSON-RPC 2.0 leaves to
 * implementations, kept to -32000..-32019 because MCP takes -32020 and
 * up for its own (2026-07-28 basic/index: implementations MUST NOT emit
 * an undefined code there).  That sub-range is full and "legacy" in
 * 2026-07-28 (no new codes in it), so later codes are application-
 * defined ones outside JSON-RPC's reserved -32768..-32000: -31000..
 * -31099.  doc/errors.md lists every code with its HTTP status; keep the
 * two in step. */
#ifndef MGW_PROXY_ERRORS_T_H
#define MGW_PROXY_ERRORS_T_H

#include <stddef.h>

/* The gateway's own failures.  The comment gives the JSON-RPC code and
 * the HTTP status it is answered with. */
enum mgw_proxy_error {
	MGW_PERR_NO_UPSTREAM = 0, /* -32001, 503: no available server */
	MGW_PERR_CONNECT,         /* -32002, 502: could not reach a server */
	MGW_PERR_TIMEOUT,         /* -32003, 504: connect/first byte/idle/total */
	MGW_PERR_TOO_LARGE,       /* -32004, 413: request body over limits.max_body */
	MGW_PERR_UPSTREAM,        /* -32005, 502: the server closed, reset or
	                           * sent an invalid response */
	MGW_PERR_NO_ROUTE,        /* -32006, 404: no route matched */
	MGW_PERR_METHOD,          /* -32007, 405: GET/DELETE on the MCP endpoint
	                           * on the stateless path */
	MGW_PERR_OVERLOADED,      /* -32008, 503: too many requests waiting for
	                           * upstream connections */
	MGW_PERR_INTERNAL,        /* -32009, 500: out of memory and the like */
	/* stateful mode (legacy sessions terminated by the gateway) */
	MGW_PERR_NOT_REPLAYED,    /* -32010, 502: the replica was lost while
	                           * the request was in flight, and sending it
	                           * again is not known to be safe */
	MGW_PERR_SESSION_NOT_FOUND, /* -32011, 404: unknown, expired or deleted
	                           * session id (or another principal's) */
	MGW_PERR_SESSION_LOST,    /* -32012, 404: the session's replica is gone
	                           * and no other replica could take it */
	MGW_PERR_SESSION_STORE,   /* -32013, 503: the session store is full or
	                           * unreachable */
	MGW_PERR_SESSION_REQUIRED, /* -32014, 400: GET/DELETE on the MCP
	                           * endpoint without Mcp-Session-Id */
	/* request checks (doc/security.md) */
	MGW_PERR_ORIGIN,          /* -32015, 403: Origin not in
	                           * security.allowed_origins */
	MGW_PERR_BAD_HEADER,      /* -32016, 400: an invalid Host, or a header
	                           * the gateway reads sent more than once */
	MGW_PERR_UNAUTHORIZED,    /* -32017, 401: no bearer token, or one that
	                           * is not valid (auth:) */
	MGW_PERR_FORBIDDEN,       /* -32018, 403: insufficient scope, or a
	                           * route's tool policy denies the request */
	MGW_PERR_RATE_LIMITED,    /* -32019, 429: over a route's rate_limit */
	/* the requestState guard (mrtr:, check_mrtr.c) */
	MGW_PERR_STATE_REUSED,    /* -31023, 409: a requestState presented
	                           * before, within the route's mrtr.ttl */
	MGW_PERR_STATE_STORE,     /* -31024, 503: the guard could not record
	                           * it (mrtr_guard.max_states reached, or
	                           * Redis down / slow / refusing) */
	MGW_PERR_N,
};

/* Static description of one error. */
struct mgw_proxy_error_info {
	int code;                 /* JSON-RPC error code */
	int status;               /* HTTP status */
	const char *name;         /* short name for logs ("no_upstream") */
	const char *message;      /* default human-readable message */
};

/* A ready-to-send error response. */
struct mgw_proxy_reply {
	int status;
	const char *content_type; /* static string */
	char *body;               /* owned, malloc'd */
	size_t len;
};

#endif
