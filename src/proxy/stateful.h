/* stateful.h - the stateful handler of `mcpgw serve` (handler.h):
 * legacy (2025-11-25) sessions terminated by the gateway.
 *
 * The client sees session ids the gateway minted (the store's); each maps
 * to the upstream session of the replica the session is pinned to.
 *   - initialize: a replica picked by the balancer gets the client's
 *     initialize; when it answers with an InitializeResult the session is
 *     stored (the initialize body verbatim, the replica's Mcp-Session-Id,
 *     the pin) and the answer goes back with the minted id in
 *     Mcp-Session-Id;
 *   - every later request (POST, GET stream, DELETE) is looked up by the
 *     client's id and forwarded to the pinned replica with the upstream
 *     session id in its place; an Mcp-Session-Id in the answer is
 *     rewritten back to the client's id;
 *   - the replica dead, ejected, draining, refusing, or answering that it
 *     does not know the session (sessions.lost_session): the session is
 *     re-pinned (repin.h) and the request sent there; the client sees one
 *     normal answer.  The lost-session answer itself never reaches the
 *     client: its head and a small part of its body are held until
 *     decided;
 *   - a request lost in flight is sent again only when that is safe
 *     (mgw_repin_replay_safe), else answered -32010;
 *   - SSE event ids are stamped with the pin tag (sse.h); a Last-Event-ID
 *     of another pin is not passed on;
 *   - notifications/initialized and tools/list answers are recorded in
 *     the session (for replays and for replay safety).
 * doc/serve.md ("Stateful mode") tells it as users see it. */
#ifndef MGW_PROXY_STATEFUL_H
#define MGW_PROXY_STATEFUL_H

#include <stddef.h>

#include <event2/event.h>
#include <jansson.h>

#include "auth/principal-t.h"
#include "proxy/conf_serve-t.h"
#include "http/headers-t.h"
#include "http/server.h"
#include "mcp/era.h"
#include "mcp/jsonrpc.h"
#include "proxy/route-t.h"
#include "proxy/stateful-t.h"
#include "session/session-t.h"

/* The principal digest a bound session (sessions.bind_principal) is tied
 * to: with a verified principal p (the auth check's, t->principal),
 * SHA-256 of "jwt" NUL iss NUL sub for a JWT (iss "" when absent) or of
 * "static" NUL name for a static token, so a refreshed token of the same
 * subject keeps its sessions; without one (no auth on the route),
 * SHA-256 of the Authorization value auth (NULL: absent), as before. */
void mgw_sf_principal_digest(const struct mgw_principal *p, const char *auth,
                             unsigned char out[MGW_SESSION_DIGEST_LEN]);

/* Builds the shared part: one store per kind the routes use (the
 * sessions: store for routes that say default), with their periodic
 * expiry on house (the main loop; may be NULL).  Registered store kinds
 * (redis) must be registered before.  conf and routes must outlive it.
 * Returns NULL with a message in err. */
struct mgw_sf_shared *mgw_sf_shared_new(const struct mgw_serve_conf *conf,
                                        const struct mgw_routes *routes,
                                        struct event_base *house, char *err,
                                        size_t errlen);

/* The next generation's shared state after a configuration reload: the
 * same stores and counters as prev (the sessions survive), the new
 * routes' store choices.  A route needing a store kind prev did not open
 * is refused (MGW_EINVAL-like: NULL with the reason in err).  The stores'
 * own settings stay those of the first generation (a reload refuses a
 * changed sessions: section).  conf and routes must outlive it. */
struct mgw_sf_shared *mgw_sf_shared_next(struct mgw_sf_shared *prev,
                                         const struct mgw_serve_conf *conf,
                                         const struct mgw_routes *routes,
                                         char *err, size_t errlen);

/* Frees one generation's shared state; the stores go with the last one:
 * every worker's mgw_sf of that generation must be freed.  Call on the
 * thread of house, or after its loop ended.  NULL allowed. */
void mgw_sf_shared_free(struct mgw_sf_shared *sh);

/* 1 when nothing of this worker's stateful state is in progress: no
 * request, no GET stream, no background record update. */
int mgw_sf_idle(const struct mgw_sf *sf);

/* The stateful handler's state on one worker: a view of each store on
 * pl's loop and the map of re-pins.  pl must outlive it.  Returns NULL
 * with a message in err. */
struct mgw_sf *mgw_sf_new(struct mgw_sf_shared *sh, struct mgw_pipeline *pl,
                          char *err, size_t errlen);

/* Frees it after every request of it ended (the worker's HTTP server was
 * freed first); drops record updates and upstream DELETEs still in
 * flight.  Must run before f's HTTP clients are freed.  NULL allowed. */
void mgw_sf_free(struct mgw_sf *sf);

/* 1 if a request belongs to the stateful path under mode: in stateful
 * mode, a POST initialize, anything carrying Mcp-Session-Id, and GET or
 * DELETE on the MCP endpoint (mgw_proxy_is_mcp_endpoint; without a session
 * they are answered 400); in auto mode the same, except that modern
 * requests (era) and sessionless GET/DELETE stay on the stateless path.
 * m may be NULL. */
int mgw_sf_claims(enum mgw_mode_conf mode, const char *method,
                  const char *path, const struct mgw_headers *h,
                  const struct mgw_jrpc_msg *m, enum mgw_era era);

/* Adds "sessions" (totals over the stores, and each store's own
 * counters) and "stateful" (the path's counters, re-pins by reason) to
 * object out.  Thread-safe.  Returns 0 or MGW_ENOMEM. */
int mgw_sf_stats_json(struct mgw_sf_shared *sh, json_t *out);

#endif
