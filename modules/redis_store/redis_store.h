/* redis_store.h - the "redis" session store (modules/redis_store): session
 * records live in Redis, shared by every gateway replica, with a local
 * cache in front.  Always built (hiredis is a required dependency).  How
 * it works, what it costs and how it behaves while Redis is unreachable:
 * redis_store.c and doc/sessions.md ("The Redis store"). */
#ifndef MGW_MODULES_REDIS_STORE_H
#define MGW_MODULES_REDIS_STORE_H

#include <stddef.h>

#include "session/conf_sessions-t.h"
#include "session/store-t.h"

/* Registers the kind "redis" with the session layer, so that
 * mgw_session_store_new() builds it when `sessions.store` (or a route's
 * `session_store`) says redis.  Call once on the main thread at start-up,
 * before any store is made; calling it again is harmless.  Returns 0 or
 * MGW_E* (as mgw_session_store_register). */
int mgw_redis_store_register(void);

/* Makes a redis store directly from conf (conf->redis: url, cache_size,
 * cache_ttl, timeout, key_prefix; plus idle_timeout, max_lifetime,
 * max_memory, max_initialize_bytes, bind_principal).  Nothing connects
 * here: each view (one per worker loop) opens its own connection.  Same
 * contract as mgw_session_store_new (conf must outlive the store; env may
 * be NULL).  Returns NULL with a message in err. */
struct mgw_session_store *mgw_redis_store_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen);

#endif
