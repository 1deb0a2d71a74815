/* keyring.h - the keys the auth check verifies tokens with: a JWKS file
 * and/or a JWKS fetched over HTTPS (auth.jwks_url) on the main thread's
 * loop, refreshed every auth.jwks_refresh, early when a worker meets an
 * unknown kid, never twice within auth.jwks_min_interval; the last good
 * set is kept while the issuer is unreachable.  Workers read the current
 * set through a version counter (one atomic load per request) and are
 * told when a fetch ends (a watch: an event on their own loop). */
#ifndef MGW_AUTH_KEYRING_H
#define MGW_AUTH_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "auth/conf_auth-t.h"
#include "auth/jwt.h"

struct mgw_keyring;
struct mgw_keyring_watch;

/* Counters for GET /metrics (only grow, keys aside). */
struct mgw_keyring_stats {
	uint64_t fetch_ok, fetch_failed;  /* JWKS fetches by outcome */
	uint64_t keys;                    /* keys in the current set */
	int64_t last_ok;                  /* Unix time of the last good
	                                   * fetch, 0: none */
};

/* Main thread.  Loads conf->jwks_file (an error is MGW_EINVAL with err)
 * and, with conf->jwks_url, starts fetching on base at once (base NULL:
 * no fetching, for configuration checks).  conf is borrowed (the
 * snapshot outlives the keyring). */
struct mgw_keyring *mgw_keyring_new(struct event_base *base,
                                    const struct mgw_auth_conf *conf,
                                    char *err, size_t errlen);
/* Main thread, reload: k starts from old's fetched set when both fetch
 * the same URL (tokens keep verifying while k fetches its own), and its
 * counters from old's. */
void mgw_keyring_adopt(struct mgw_keyring *k, const struct mgw_keyring *old);
/* Main thread, once no watch is left.  NULL allowed. */
void mgw_keyring_free(struct mgw_keyring *k);

/* Any thread: the version of the current set (changes with it, and at
 * the end of every fetch). */
uint64_t mgw_keyring_version(const struct mgw_keyring *k);
/* Any thread: a reference to the current set (NULL: no key yet) and
 * its version. */
struct mgw_jwks *mgw_keyring_get(struct mgw_keyring *k, uint64_t *version);
/* Any thread: a worker met a kid the set lacks (or has no set yet).
 * Returns 1 when a fetch is under way or now asked for (the watches are
 * told when it ends), 0 when none can come (no jwks_url, or the last one
 * started less than jwks_min_interval ago). */
int mgw_keyring_ask(struct mgw_keyring *k);

/* Worker thread: cb(arg) runs on base after every fetch ends.  Returns
 * NULL when out of memory. */
struct mgw_keyring_watch *mgw_keyring_watch(struct mgw_keyring *k,
                                            struct event_base *base,
                                            void (*cb)(void *arg),
                                            void *arg);
/* The watch's thread.  NULL allowed. */
void mgw_keyring_unwatch(struct mgw_keyring_watch *w);

void mgw_keyring_stats(const struct mgw_keyring *k,
                       struct mgw_keyring_stats *st);

/* Reads and parses a JWKS file (at most 4 MiB).  NULL with err on
 * failure. */
struct mgw_jwks *mgw_jwks_load_file(const char *path, char *err,
                                    size_t errlen);

#endif
