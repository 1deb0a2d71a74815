/* session.h - building, copying and reading session records (the record
 * itself is described in session-t.h).
 *
 * Life of a record: the proxy builds a draft with mgw_session_new() and the
 * setters, hands it to a store's create (which mints the id and takes the
 * reference), and from then on only reads records it got from the store,
 * under a reference it drops with mgw_session_unref().  To change one it
 * takes a private copy with mgw_session_dup(), applies setters, and hands
 * the copy to the store's update.  Setters therefore must only be used on a
 * record nobody else can see (one reference, never given to a store). */
#ifndef MGW_SESSION_SESSION_H
#define MGW_SESSION_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "session/session-t.h"

/* A new empty draft (one reference, not pinned, no handshake).  Returns
 * NULL on no memory. */
struct mgw_session *mgw_session_new(void);

/* Takes one more reference; returns s.  Safe from any thread. */
struct mgw_session *mgw_session_ref(struct mgw_session *s);

/* Drops one reference, freeing the record with the last one.  NULL
 * allowed.  Safe from any thread. */
void mgw_session_unref(struct mgw_session *s);

/* A private, mutable deep copy of s (same id, version, pin, handshake),
 * holding one reference.  Returns NULL on no memory. */
struct mgw_session *mgw_session_dup(const struct mgw_session *s);

/* 1 if id/len is acceptable as a session id on the wire: 1 to max_len
 * bytes of visible ASCII (0x21..0x7e), as the transport requires. */
int mgw_session_id_valid(const char *id, size_t len, size_t max_len);

/* Sets the client-facing id (stores do this at create; the proxy never
 * does).  Returns 0, MGW_EINVAL (not visible ASCII) or MGW_ENOMEM. */
int mgw_session_set_id(struct mgw_session *s, const char *id, size_t len);

/* Keeps a copy of the client's `initialize` body.  The caller enforces its
 * configured max_initialize_bytes first (this accepts any length > 0).
 * Returns 0, MGW_EINVAL (empty) or MGW_ENOMEM. */
int mgw_session_set_init(struct mgw_session *s, const void *body, size_t len);

/* Appends a replay header (never a credential: see session-t.h).  name
 * must be a token of at most MGW_SESSION_HEADER_NAME_MAX bytes, value
 * visible ASCII, spaces and tabs, at most MGW_SESSION_HEADER_VALUE_MAX.
 * Returns 0, MGW_EINVAL (bad name/value, or a credential header:
 * Authorization, Proxy-Authorization, Cookie), MGW_ELIMIT (more than
 * MGW_SESSION_MAX_HEADERS) or MGW_ENOMEM. */
int mgw_session_add_init_header(struct mgw_session *s, const char *name,
                                const char *value);

/* Keeps a copy of the client's `notifications/initialized` body (at most
 * MGW_SESSION_INITIALIZED_MAX bytes).  Returns 0, MGW_EINVAL (empty),
 * MGW_ELIMIT or MGW_ENOMEM. */
int mgw_session_set_initialized(struct mgw_session *s, const void *body,
                                size_t len);

/* The body a replay sends for `notifications/initialized` when the record
 * holds none (a sealed session opened by a gateway that never saw the
 * client's): {"jsonrpc":"2.0","method":"notifications/initialized"}. */
extern const char mgw_session_canonical_initialized[];

/* Sets the negotiated protocol version (NULL clears it).  At most
 * MGW_SESSION_VERSION_MAX bytes of visible ASCII.  Returns 0, MGW_EINVAL
 * or MGW_ENOMEM. */
int mgw_session_set_protocol_version(struct mgw_session *s, const char *v);

/* Sets the pin without touching pin_gen (the first pin, at create).  url
 * is the server's configured URL (NULL = unpinned), upstream_sid the
 * upstream's Mcp-Session-Id (NULL = none minted); each bounded by
 * MGW_SESSION_URL_MAX / MGW_SESSION_UPSTREAM_ID_MAX and visible ASCII.
 * Returns 0, MGW_EINVAL or MGW_ENOMEM (s unchanged on error). */
int mgw_session_set_pin(struct mgw_session *s, const char *url,
                        const char *upstream_sid);

/* A re-pin: mgw_session_set_pin() and pin_gen + 1 (only on success). */
int mgw_session_repin(struct mgw_session *s, const char *url,
                      const char *upstream_sid);

/* Replaces the replay-safe tool set by names (copied, sorted, duplicates
 * dropped) and marks the tool list as known.  Names longer than
 * MGW_SESSION_TOOL_NAME_MAX are skipped (such a tool is then simply not
 * replay-safe); more than MGW_SESSION_MAX_SAFE_TOOLS names: MGW_ELIMIT.
 * Returns 0, MGW_ELIMIT or MGW_ENOMEM (s unchanged on error). */
int mgw_session_set_safe_tools(struct mgw_session *s,
                               const char *const *names, size_t n);

/* 1 if the tool name/len was annotated readOnlyHint or idempotentHint in
 * the last tools/list result the gateway saw for s, else 0. */
int mgw_session_tool_replay_safe(const struct mgw_session *s,
                                 const char *name, size_t len);

/* SHA-256 of an Authorization header value (auth NULL = absent, hashed as
 * the empty string, so "no credentials" is a principal of its own). */
void mgw_session_principal_digest(const char *auth, size_t len,
                                  unsigned char out[MGW_SESSION_DIGEST_LEN]);

/* Binds s to a principal digest (sets bound). */
void mgw_session_set_principal(struct mgw_session *s,
                               const unsigned char d[MGW_SESSION_DIGEST_LEN]);

/* 1 if s is not bound, or bound to digest d (compared in constant time);
 * 0 otherwise (also when s is bound and d is NULL). */
int mgw_session_principal_matches(const struct mgw_session *s,
                                  const unsigned char *d);

/* A 32-bit tag naming the current pin (pin URL, upstream session id and
 * generation), for the proxy to stamp into SSE event ids it relays: a
 * `Last-Event-ID` whose tag differs from the session's current tag was
 * issued under another pin and must not be passed on.  Unlike pin_gen
 * alone it also differs between two gateways that re-pinned the same
 * sealed session independently (same generation, other upstream). */
uint32_t mgw_session_pin_tag(const struct mgw_session *s);

#endif
