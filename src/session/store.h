/* store.h - the session store API used by the proxy, and the helpers store
 * implementations (memory, sealed, modules/redis_store) build on.  Types
 * and the threading model are in store-t.h.
 *
 * The callback contract, for every store:
 *   - An operation function returns 0 and then calls its callback exactly
 *     once, later, from the view's event loop -- NEVER inside the call that
 *     started it, even when the answer was known at once (a sync store's
 *     result is delivered through an activated event).  So a caller may
 *     start an operation while holding state its callback will change.
 *   - Or it returns a negative MGW_E* (MGW_ENOMEM, or MGW_EINVAL for
 *     misuse such as an id that is not visible ASCII) and the callback
 *     never runs.
 *   - mgw_session_op_cancel() before the callback ran guarantees it never
 *     runs; the result (and any reference in it) is dropped.  Use it when
 *     the request that asked goes away.
 * An op pointer is valid from the start call until the callback returns or
 * the op is cancelled, whichever comes first; clear it in the callback.
 *
 * Stores: memory (store_memory.c), sealed (store_sealed.c), and whatever
 * registers itself by name (mgw_session_store_register), such as redis. */
#ifndef MGW_SESSION_STORE_H
#define MGW_SESSION_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "session/conf_sessions-t.h"
#include "session/session-t.h"
#include "session/store-t.h"
#include "util/keyfile.h"

/* ---- making stores ---- */

/* Makes the store conf->store names: memory, sealed (keys read from
 * conf->key_file; without one a random key is made and a warning logged,
 * since sessions then do not survive across gateways or restarts), or a
 * registered type such as redis.  conf must outlive the store; env may be
 * NULL (default clocks, no periodic sweep).  Call on the thread that runs
 * env->house_base (or before that loop runs).  Returns NULL with a message
 * in err. */
struct mgw_session_store *mgw_session_store_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen);

/* The memory store: a hash table keyed by SipHash (random key) with idle
 * expiry, max_sessions and max_memory (a full store refuses creates).
 * Same contract as mgw_session_store_new. */
struct mgw_session_store *mgw_session_store_memory_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen);

/* The sealed store: ids are AES-256-GCM tokens (see store_sealed.c and
 * doc/sessions.md) sealed with keys[0] and opened with any of the nkeys
 * keys (copied).  nkeys >= 1.  Same contract as mgw_session_store_new. */
struct mgw_session_store *mgw_session_store_sealed_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	const struct mgw_key256 *keys, size_t nkeys, char *err, size_t errlen);

/* Registers a store kind (its name is what `sessions.store` says).  Call
 * on the main thread at start-up, before any store is made; t must stay
 * valid.  Returns 0, MGW_EINVAL (name taken) or MGW_ELIMIT (too many). */
int mgw_session_store_register(const struct mgw_session_store_type *t);

/* Frees a store: every view must have been freed.  Call on the thread of
 * env->house_base (or after that loop ended).  NULL allowed. */
void mgw_session_store_free(struct mgw_session_store *st);

/* ---- using a store ---- */

/* A worker's view of st on base (see store-t.h).  Returns NULL with a
 * message in err. */
struct mgw_session_view *mgw_session_view_new(struct mgw_session_store *st,
                                              struct event_base *base,
                                              char *err, size_t errlen);

/* Frees a view on its own thread; every op started through it must have
 * completed (callback run) or been cancelled.  NULL allowed. */
void mgw_session_view_free(struct mgw_session_view *v);

/* Stores a new session.  draft: built with session.h (handshake, first
 * pin, principal when bound); the store takes this reference whatever
 * happens, mints the id, sets created_s/expires_s (max_lifetime) and
 * version 0.  The callback gets the stored record.  *op (op may be NULL)
 * receives the handle for mgw_session_op_cancel.  Returns 0 or MGW_E*
 * (see the top of this file). */
int mgw_session_create(struct mgw_session_view *v, struct mgw_session *draft,
                       mgw_session_cb cb, void *arg,
                       struct mgw_session_op **op);

/* Finds the session id/len presented by a client.  principal: the
 * presenter's digest (mgw_session_principal_digest of its Authorization
 * value) or NULL for none; a store that binds principals answers
 * MGW_ENOTFOUND on a mismatch.  Ids that are not 1..max bytes of visible
 * ASCII are answered MGW_ENOTFOUND (through the callback, like any
 * unknown id).  Returns 0 or MGW_E*. */
int mgw_session_lookup(struct mgw_session_view *v, const char *id, size_t len,
                       const unsigned char *principal, mgw_session_cb cb,
                       void *arg, struct mgw_session_op **op);

/* Replaces the stored record of rec->id by rec if the stored version is
 * still expect_version (compare-and-set; on success rec->version becomes
 * expect_version + 1).  rec: a private copy from mgw_session_dup; the
 * store takes this reference whatever happens.  Returns 0 or MGW_E*. */
int mgw_session_update(struct mgw_session_view *v, struct mgw_session *rec,
                       uint64_t expect_version, mgw_session_cb cb, void *arg,
                       struct mgw_session_op **op);

/* Forgets session id/len (DELETE).  The caller looks the session up first
 * (principal check); remove itself checks nothing.  Returns 0 or MGW_E*. */
int mgw_session_remove(struct mgw_session_view *v, const char *id, size_t len,
                       mgw_session_cb cb, void *arg,
                       struct mgw_session_op **op);

/* Gives up an operation whose callback has not run yet (on the view's
 * thread).  The callback will never run.  NULL allowed. */
void mgw_session_op_cancel(struct mgw_session_op *op);

/* Drops expired records now, at most max.  Returns how many.  Thread-safe.
 * (The periodic sweep on env->house_base calls this.) */
size_t mgw_session_store_sweep(struct mgw_session_store *st, size_t max);

/* Fills *out.  Thread-safe. */
void mgw_session_store_stats(struct mgw_session_store *st,
                             struct mgw_session_stats *out);

/* Fills *out with the operation counters.  Thread-safe. */
void mgw_session_store_op_stats(struct mgw_session_store *st,
                                struct mgw_session_op_stats *out);

/* "create", "lookup", "update", "remove"; "ok", "not_found", "conflict",
 * "limit", "error", "other" (metric labels). */
const char *mgw_session_op_kind_name(enum mgw_session_op_kind k);
const char *mgw_session_op_result_name(enum mgw_session_op_result r);

/* The longest id this store can have minted (memory: 32; sealed: the
 * longest token max_initialize_bytes allows), so the proxy can refuse
 * longer Mcp-Session-Id values early. */
size_t mgw_session_store_max_id(const struct mgw_session_store *st);

/* The largest `initialize` body st accepts; the proxy refuses larger ones
 * (413) before forwarding anything, since it must keep the body. */
size_t mgw_session_store_max_initialize(const struct mgw_session_store *st);

/* Current clocks of st (its env, with defaults). */
uint64_t mgw_session_store_mono_ms(const struct mgw_session_store *st);
int64_t mgw_session_store_wall_s(const struct mgw_session_store *st);

/* ---- for store implementations ---- */

/* Fills the generic part of a store: ops, conf, env with default clocks,
 * zero counters, and (when env->house_base is set) the periodic sweep
 * timer, which calls ops->sweep every second with a bounded batch.
 * Returns 0 or MGW_ENOMEM. */
int mgw_session_store_init(struct mgw_session_store *st,
                           const struct mgw_session_store_ops *ops,
                           const struct mgw_sessions_conf *conf,
                           const struct mgw_session_env *env);

/* Releases what mgw_session_store_init set up (the sweep timer). */
void mgw_session_store_deinit(struct mgw_session_store *st);

/* Fills the generic part of an implementation's own view. */
void mgw_session_view_init(struct mgw_session_view *v,
                           struct mgw_session_store *st,
                           struct event_base *base);

/* Completes op with status and rec (a reference that moves into the op;
 * NULL allowed).  Call exactly once per op, on the view's thread, from
 * inside the start function or later.  The callback runs from the loop;
 * if the op was cancelled it is freed now instead and rec dropped. */
void mgw_session_op_complete(struct mgw_session_op *op, int status,
                             struct mgw_session *rec);

/* Mints a fresh random id of MGW_SESSION_ID_HEX_BYTES bytes as lowercase
 * hex into out (2 * MGW_SESSION_ID_HEX_BYTES + 1 bytes).  Returns 0 or
 * MGW_EIO. */
int mgw_session_mint_id(char *out);

#endif
