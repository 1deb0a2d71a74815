/* mrtr_set.h - the requestState digests a gateway has let through, for
 * the at-most-once guard of SEP-2322 multi round-trip requests
 * (check_mrtr.c; doc/serve.md, "Single-use requestState").
 *
 * One set per gateway process, shared by every worker thread (one
 * mutex: a claim is a short bucket walk) and kept across reloads.  An
 * entry is a SHA-256 digest and the time it expires; an expired entry
 * is dropped where a claim meets it (its own bucket, and a few buckets
 * more on every claim), and by a whole sweep when the set is full.  The
 * set is bounded (max): past it a new digest is refused, never an old
 * one forgotten, because forgetting a live digest would let its state
 * through a second time.  Nothing here reads a clock: the caller passes
 * now. */
#ifndef MGW_PROXY_MRTR_SET_H
#define MGW_PROXY_MRTR_SET_H

#include <stddef.h>
#include <stdint.h>

#define MGW_MRTR_DIGEST_LEN 32

struct mgw_mrtr_set;

enum mgw_mrtr_claim {
	MGW_MRTR_FIRST = 0,    /* not held: now recorded until now + ttl */
	MGW_MRTR_SEEN,         /* held and not expired: a re-presentation */
	MGW_MRTR_FULL,         /* not held, and no room (max, or memory) */
};

/* What the guard counted (any thread). */
struct mgw_mrtr_counts {
	uint64_t checked;      /* requestStates looked at */
	uint64_t refused;      /* re-presentations refused (409) */
	uint64_t full;         /* refused for a full set (503) */
	uint64_t store_errors; /* refused for Redis (503): down, an error
	                        * reply, or no answer within its timeout */
	size_t held;           /* digests held now (expired ones included
	                        * until swept) */
};

/* A set of at most max digests (max >= 1).  NULL on no memory. */
struct mgw_mrtr_set *mgw_mrtr_set_new(size_t max);
void mgw_mrtr_set_free(struct mgw_mrtr_set *s);

/* Records digest d until now_ms + ttl_ms unless it is held and not
 * expired at now_ms.  Returns the verdict. */
enum mgw_mrtr_claim mgw_mrtr_set_claim(struct mgw_mrtr_set *s,
                                       const uint8_t d[MGW_MRTR_DIGEST_LEN],
                                       uint64_t now_ms, uint64_t ttl_ms);

/* Forgets d (a claim whose request was then refused before any replica
 * saw it: the Redis check failed).  No-op when d is not held. */
void mgw_mrtr_set_release(struct mgw_mrtr_set *s,
                          const uint8_t d[MGW_MRTR_DIGEST_LEN]);

/* The counters; the guard's check bumps them. */
enum mgw_mrtr_count { MGW_MRTR_C_CHECKED, MGW_MRTR_C_REFUSED, MGW_MRTR_C_FULL,
                      MGW_MRTR_C_STORE, MGW_MRTR_C_N };
void mgw_mrtr_set_count(struct mgw_mrtr_set *s, enum mgw_mrtr_count c);
void mgw_mrtr_set_counts(struct mgw_mrtr_set *s, struct mgw_mrtr_counts *out);

#endif
