/* hints.h - configuration mistakes that are legal but leave a group
 * unusable, worded for the one log line `mcpgw serve` writes at start
 * (and the warning `mcpgw check-config` prints).
 *
 * The doubled path.  The gateway sends a request for PATH to a server
 * URL's path prefix followed by PATH (http://h:1/api + /mcp goes to
 * /api/mcp), so a server URL that already ends with the path the clients
 * use sends every request to that path twice: /mcp/mcp.  A group has a
 * doubled path when one of its servers' URL path P (not empty, not "/")
 * is a route's match.path or the start of it (up to a '/'), for a route
 * to the group; for a route that matches any path, when P ends with the
 * MCP endpoint "/mcp" (where the default health probe, P + "/mcp", and
 * a client's /mcp request then land). */
#ifndef MGW_PROXY_HINTS_H
#define MGW_PROXY_HINTS_H

#include <stddef.h>

#include "proxy/conf_serve-t.h"

/* 1 and the hint in msg ("upstream 'NAME': server URL path '/mcp'
 * doubles ...") when group gi of s has a doubled path (the first server
 * and route found), else 0 (msg untouched). */
int mgw_hint_doubled_path(const struct mgw_serve_conf *s, size_t gi,
                          char *msg, size_t len);

/* Every Redis connection of s (sessions.redis, rate_limits.redis,
 * mrtr_guard.redis, a group's task_affinity.redis) with a rediss:// URL
 * and tls.verify: false: its server certificate is not checked, which an
 * operator must see.  Calls emit(arg, msg) once each ("sessions.redis
 * (tls.verify: false): TLS certificate verification is off ...") and returns how many. */
size_t mgw_hint_redis_no_verify(const struct mgw_serve_conf *s,
                                void (*emit)(void *arg, const char *msg),
                                void *arg);

/* The message of mgw_hint_redis_no_verify for one place (where: its key
 * path and the setting, e.g. "backend.redis_tls (verify: false)") in msg: 1, or 0 (msg untouched) when url is not rediss:// or
 * t verifies. */
int mgw_hint_redis_tls(const char *where, const char *url,
                       const struct mgw_redis_tls_conf *t, char *msg,
                       size_t len);

#endif
