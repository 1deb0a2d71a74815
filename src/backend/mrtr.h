/* mrtr.h - multi round-trip requests (SEP-2322, basic/patterns/mrtr) in
 * the reference server: where the dialogue's requestState lives, selected
 * by --request-state:
 *   memory  "rm1." + 128-bit random id naming an entry in this replica;
 *           another replica does not know it (-32040)
 *   sealed  "rs1." PAYLOAD "." MAC: PAYLOAD = base64url(exp(8, big
 *           endian) || state JSON), MAC = base64url(HMAC-SHA256(key,
 *           "rs1." PAYLOAD)) with the --key-file keys (first signs, all
 *           verify); capped in size before the MAC is checked, and the MAC
 *           checked before anything is parsed.
 *   redis   "rr1." + 128-bit random id naming a key in a shared Redis
 *           (mrtr_redis.c): every replica sharing it continues.
 * The JSON-RPC error codes of each refusal are in doc/backend.md. */
#ifndef MGW_BACKEND_MRTR_H
#define MGW_BACKEND_MRTR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <event2/event.h>

#include "backend/handle_hmac.h"

struct mgw_redis_tls_conf;

/* The largest requestState accepted (sealed and memory). */
#define MGW_MRTR_MAX_STATE 8192

/* Refusal codes (JSON-RPC errors, server-defined range). */
#define MGW_MRTR_E_UNKNOWN   -32040 /* memory: not held by this replica */
#define MGW_MRTR_E_INVALID   -32041 /* malformed, truncated or bad MAC */
#define MGW_MRTR_E_TOOLARGE  -32042 /* longer than MGW_MRTR_MAX_STATE */
#define MGW_MRTR_E_EXPIRED   -32043 /* past its expiry */
#define MGW_MRTR_E_REQUEST   -32044 /* made for another tool/arguments */
#define MGW_MRTR_E_PRINCIPAL -32045 /* made for another Authorization */
#define MGW_MRTR_E_REPLAYED  -32046 /* --single-use: already presented */
#define MGW_MRTR_E_STORE     -32047 /* redis: the state store unavailable */

struct mgw_backend;
struct mgw_be_call;

/* Seals state (borrowed) with expiry exp: a malloc'd "rs1.…" string or
 * NULL on no memory. */
char *mgw_mrtr_seal(const struct mgw_hmac_key *k, const json_t *state,
                    int64_t exp);

/* Opens a sealed state: 0 and *state (new reference), or one of the
 * MGW_MRTR_E_* codes (INVALID, TOOLARGE, EXPIRED). */
int mgw_mrtr_open(const struct mgw_hmac_key *keys, size_t nkeys,
                  const char *s, int64_t now, json_t **state);

/* ---- mrtr_redis.c: the redis design's store ---- */

struct mgw_mrtr_redis;

/* The answer to a store operation: err 0 (take: json, the state, and exp,
 * its expiry, borrowed for the callback), MGW_ENOTFOUND (no such state),
 * MGW_ECONFLICT (--single-use: already taken), MGW_EINVAL (a value this
 * design did not write), MGW_EIO (Redis unavailable, failed or did not
 * answer within 2 s) or MGW_ENOMEM.  May run before the starting call
 * returns (Redis known down) or later from the loop. */
typedef void (*mgw_mrtr_redis_cb)(int err, const char *json, int64_t exp,
                                  void *arg);

/* A connection to url with tls for rediss:// (see net/redis.h; an
 * unreachable server is not an error).  NULL with a message in err for a
 * malformed URL. */
struct mgw_mrtr_redis *mgw_mrtr_redis_new(struct event_base *base,
                                          const char *url,
                                          const struct mgw_redis_tls_conf *tls,
                                          char *err, size_t errlen);
/* Pending operations are answered MGW_EIO first.  NULL allowed. */
void mgw_mrtr_redis_free(struct mgw_mrtr_redis *r);
/* mrtr_store_ops, mrtr_store_failures, mrtr_redis, mrtr_redis_connected. */
void mgw_mrtr_redis_describe(const struct mgw_mrtr_redis *r, json_t *obj);

/* Stores state json under id (32 hex) for the arguments digest, expiring
 * at exp (the key itself ttl_s plus a grace later). */
void mgw_mrtr_redis_put(struct mgw_mrtr_redis *r, const char *id, int64_t exp,
                        int64_t ttl_s, const char *args_digest,
                        const char *json, mgw_mrtr_redis_cb cb, void *arg);

/* Reads the state of id; with consume, in the same atomic step marks it
 * used - unless it was made for other arguments than args_digest. */
void mgw_mrtr_redis_take(struct mgw_mrtr_redis *r, const char *id,
                         const char *args_digest, int consume,
                         mgw_mrtr_redis_cb cb, void *arg);

/* Sets up be->mrtr from the configuration.  Returns 0 or a negative
 * MGW_E* with a message in err. */
int mgw_mrtr_init(struct mgw_backend *be, char *err, size_t errlen);
void mgw_mrtr_deinit(struct mgw_backend *be);
void mgw_mrtr_describe(const struct mgw_backend *be, json_t *obj);

/* The "book" tool. */
void mgw_mrtr_run_book(struct mgw_be_call *c, json_t *args);

#endif
