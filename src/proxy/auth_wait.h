/* auth_wait.h - one worker's side of the auth check (check_auth.c): its
 * view of the keyring's current key set, the requests waiting for a JWKS
 * fetch, and the Protected Resource Metadata URL derived from
 * auth.resource (RFC 9728 section 3.1). */
#ifndef MGW_PROXY_AUTH_WAIT_H
#define MGW_PROXY_AUTH_WAIT_H

#include <stddef.h>

#include <event2/event.h>

#include "auth/conf_auth-t.h"
#include "auth/keyring.h"

struct mgw_txn;
struct mgw_auth_wait;

/* The worker thread's (or the main thread before the worker runs).
 * keys is borrowed (it outlives the pipeline). */
struct mgw_auth_wait *mgw_auth_wait_new(struct event_base *base,
                                        const struct mgw_auth_conf *a,
                                        struct mgw_keyring *keys);
/* On the worker's thread, with no request waiting (the pipeline is
 * idle).  NULL allowed. */
void mgw_auth_wait_free(struct mgw_auth_wait *w);

struct mgw_keyring *mgw_auth_wait_keyring(const struct mgw_auth_wait *w);
/* The current key set (borrowed until the next call), or NULL. */
struct mgw_jwks *mgw_auth_wait_keys(struct mgw_auth_wait *w);

/* t waits for the end of the next fetch (t->pending_cancel set); then
 * mgw_check_auth_resume(t) runs.  0 or MGW_ENOMEM. */
int mgw_auth_wait_add(struct mgw_auth_wait *w, struct mgw_txn *t);
size_t mgw_auth_wait_size(const struct mgw_auth_wait *w);

/* "https://host[:port]/.well-known/oauth-protected-resource[/path]" of
 * auth.resource, and its path part (what the gateway answers). */
const char *mgw_auth_wait_metadata_url(const struct mgw_auth_wait *w);
const char *mgw_auth_wait_metadata_path(const struct mgw_auth_wait *w);

/* check_auth.c: judges t again after a fetch ended. */
void mgw_check_auth_resume(struct mgw_txn *t);

#endif
