/* ratelimit.h - the routes' rate limits: token buckets by key, in one
 * table per gateway process shared by every worker thread (see
 * doc/security.md, "Rate limits").
 *
 * A bucket is found by (limit id, key): the limit id names one route's
 * rate_limit (mgw_rl_limit_id: its match, upstream, rate, burst and key
 * kind), so a route whose limit a reload leaves unchanged keeps its
 * buckets, and a changed one starts afresh (its old buckets age out).
 * The table is bounded (max_keys): past it, the stripe's least recently
 * used bucket is forgotten (the key starts again with a full bucket).
 * It is split into stripes, each with its own mutex, chosen by a keyed
 * hash of the key, so that workers rarely wait on each other.  Nothing
 * here reads a clock: the caller passes now. */
#ifndef MGW_PROXY_RATELIMIT_H
#define MGW_PROXY_RATELIMIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy/conf_serve-t.h"

struct mgw_rl_table;

/* The key kinds' names as written in rate_limit.key (metrics, answers). */
const char *mgw_rl_key_name(enum mgw_rl_key_conf k);

/* Routes whose rate-limited answers are counted under their own index;
 * the others under the last slot. */
#define MGW_RL_COUNTED_ROUTES 64

/* A table of at most max_keys buckets (at least one per stripe); seed
 * keys the stripe hash.  NULL on no memory. */
struct mgw_rl_table *mgw_rl_table_new(size_t max_keys, uint64_t seed);
void mgw_rl_table_free(struct mgw_rl_table *t);

/* Takes a token from the bucket (id, key[0..len)) at rate/burst, made
 * full when the table has none for it.  Returns 1 (admitted) or 0 (over
 * the limit: *wait_s, may be NULL, gets the seconds until a token is
 * there).  With no memory for a new bucket the request is admitted. */
int mgw_rl_take(struct mgw_rl_table *t, uint64_t id, const char *key,
                size_t len, double rate, double burst, uint64_t now_ns,
                double *wait_s);

/* The id of a route's limit (rc->rate_limit set). */
uint64_t mgw_rl_limit_id(const struct mgw_route_conf *rc);

/* Buckets held, and forgotten to make room. */
size_t mgw_rl_table_size(struct mgw_rl_table *t);
uint64_t mgw_rl_table_evictions(const struct mgw_rl_table *t);

/* Counters (any thread): an answer 429 for route index r (capped) and
 * key kind k; a shared limit decided locally because Redis did not
 * answer. */
void mgw_rl_count_limited(struct mgw_rl_table *t, size_t r,
                          enum mgw_rl_key_conf k);
void mgw_rl_count_fallback(struct mgw_rl_table *t);
uint64_t mgw_rl_limited(const struct mgw_rl_table *t, size_t r,
                        enum mgw_rl_key_conf k);
uint64_t mgw_rl_fallbacks(const struct mgw_rl_table *t);

#endif
