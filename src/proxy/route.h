/* route.h - route matching for `mcpgw serve`: each request goes to the
 * upstream group of the first route whose every condition holds.
 *
 * Conditions (all optional; an absent one always holds):
 *   - match.path against the request path without its query: exact, or a
 *     prefix when it ends with '*' ("/mcp*" takes "/mcp" and "/mcpx/y");
 *     "*" alone takes every path;
 *   - match.mcp_method against the Mcp-Method request header, exactly
 *     (header values are case-sensitive);
 *   - match.mcp_name against the Mcp-Name request header after decoding
 *     its "=?base64?...?=" sentinel (SEP-2243), exactly.
 * The two header conditions read headers that SEP-2243 mirrors from the
 * body.  The spec asks intermediaries not to trust such headers unless
 * the request is of a header-validating protocol version, so the caller
 * says whether the request's headers may be used at all: when not, a
 * route with a header condition never matches and the request falls
 * through to a later route.  A header sent twice, or an Mcp-Name whose
 * sentinel does not decode, likewise fails the condition. */
#ifndef MGW_PROXY_ROUTE_H
#define MGW_PROXY_ROUTE_H

#include <stddef.h>

#include "proxy/conf_serve-t.h"
#include "http/headers-t.h"
#include "proxy/route-t.h"
#include "proxy/upstream-t.h"

/* Compiles conf->routes against ups (group names resolved).  conf and ups
 * must outlive the table.  Returns NULL with "routes[i]: reason" in err
 * when a route names an unknown upstream or has a match.path that does
 * not start with '/' (other than "*"), or NULL on no memory (err says
 * so).  An empty route list is accepted: nothing matches then. */
struct mgw_routes *mgw_routes_new(const struct mgw_serve_conf *conf,
                                  const struct mgw_upstreams *ups, char *err,
                                  size_t errlen);

/* Frees the table; NULL allowed. */
void mgw_routes_free(struct mgw_routes *rt);

/* The first route matching a request for path (without query) with
 * request headers h, or NULL.  use_headers = 0 makes routes with an
 * Mcp-Method or Mcp-Name condition fail (see above).  Never modifies h;
 * decodes Mcp-Name at most once, only when some route needs it (a value
 * that cannot be decoded, malformed or for lack of memory, fails every
 * Mcp-Name condition). */
const struct mgw_route *mgw_routes_match(const struct mgw_routes *rt,
                                         const char *path,
                                         const struct mgw_headers *h,
                                         int use_headers);

/* 1 if path satisfies route r's path condition (exposed for tests and
 * for the "is this the MCP endpoint" question of the forwarder). */
int mgw_route_path_matches(const struct mgw_route *r, const char *path);

#endif
