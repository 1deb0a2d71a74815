/* state.h - where modern-era counter handles keep their state (SEP-2567
 * "explicit state handles").  Three designs behind one asynchronous
 * interface, selected by --state:
 *   memory  a map in this replica; another replica does not know the handle
 *   hmac    the value travels inside a signed handle (handle_hmac.h)
 *   redis   the handle names a key in a shared Redis (hiredis, async)
 * Completion callbacks may run before the starting call returns (memory,
 * hmac) or from the event loop later (redis). */
#ifndef MGW_BACKEND_STATE_H
#define MGW_BACKEND_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

struct mgw_redis_tls_conf;

struct mgw_be_store;

/* Outcome of a store operation.  err is 0, MGW_ENOTFOUND (unknown handle),
 * MGW_EEXPIRED (handle past its expiry), MGW_EAUTH (forged or foreign
 * handle), MGW_EIO (store unavailable), MGW_ELIMIT (store full) or
 * MGW_ENOMEM.  handle (borrowed for the duration of the callback) is the
 * handle to give the client: the new one for create, and for increment the
 * successor handle (hmac) or NULL when the handle does not change. */
typedef void (*mgw_be_store_cb)(int err, int64_t value, const char *handle,
                                void *arg);

struct mgw_be_store_ops {
	const char *name;
	void (*create)(struct mgw_be_store *s, mgw_be_store_cb cb, void *arg);
	void (*increment)(struct mgw_be_store *s, const char *handle,
	                  mgw_be_store_cb cb, void *arg);
	/* Drops expired local entries (memory design); may be NULL. */
	void (*sweep)(struct mgw_be_store *s, uint64_t now_ms);
	/* Adds design-specific fields to the stats object; may be NULL. */
	void (*describe)(const struct mgw_be_store *s, json_t *obj);
	void (*free)(struct mgw_be_store *s);
};

/* Every design embeds this as its first member. */
struct mgw_be_store {
	const struct mgw_be_store_ops *ops;
};

/* In-replica map.  Handles are 128-bit random; entries expire after ttl
 * seconds without use; at most max_handles live at once (MGW_ELIMIT). */
struct mgw_be_store *mgw_be_store_memory_new(double ttl, size_t max_handles);

/* Signed self-contained handles.  key_file NULL = a random key (replicas
 * then cannot continue each other's counters; a warning is logged).
 * Returns NULL with a message in err when the key file is unusable. */
struct mgw_be_store *mgw_be_store_hmac_new(const char *key_file, double ttl,
                                           char *err, size_t errlen);

/* Redis (net/redis.h).  url is "redis[s]://[[USER]:PASSWORD@]HOST[:PORT][/DB]"
 * or "unix:PATH"; tls: options for rediss:// (NULL: defaults).  Returns
 * NULL with a message in err only for a malformed URL or TLS files that
 * do not load: an unreachable server is not an error (the
 * store keeps reconnecting with backoff and fails operations with MGW_EIO
 * meanwhile). */
struct mgw_be_store *mgw_be_store_redis_new(struct event_base *base,
                                            const char *url,
                                            const struct mgw_redis_tls_conf *tls,
                                            double ttl,
                                            char *err, size_t errlen);

/* The Redis connection of a redis design, for the task store to share
 * (tasks.h); NULL for the other designs and for NULL. */
struct mgw_redis *mgw_be_store_redis_conn(struct mgw_be_store *s);

/* Frees any design; NULL is allowed.  Pending callbacks run first with
 * MGW_EIO. */
void mgw_be_store_free(struct mgw_be_store *s);

#endif
