/* tbucket.h - the token bucket (pure arithmetic on a given clock), under
 * the routes' rate limits (proxy/ratelimit.h) and the HTTP layer's new
 * connections per client (http/connlim.h).
 *
 * A bucket holds at most burst tokens and gains rate tokens per second;
 * a new bucket is full.  Each admitted event takes one token. */
#ifndef MGW_UTIL_TBUCKET_H
#define MGW_UTIL_TBUCKET_H

#include <stdint.h>

struct mgw_tbucket {
	double tokens;          /* tokens at t_ns */
	uint64_t t_ns;          /* clock of the last update */
};

/* A full bucket (burst tokens) at now_ns. */
void mgw_tbucket_init(struct mgw_tbucket *b, double burst, uint64_t now_ns);

/* Refills b up to now_ns (a clock going backwards adds nothing), then
 * takes one token.  Returns 1 when one was there; else 0 with *wait_s
 * (may be NULL) set to the seconds until one will be. */
int mgw_tbucket_take(struct mgw_tbucket *b, double rate, double burst,
                     uint64_t now_ns, double *wait_s);

/* 1 when b, refilled up to now_ns, would be full again (it can be
 * forgotten: a new bucket starts full). */
int mgw_tbucket_full(const struct mgw_tbucket *b, double rate, double burst,
                     uint64_t now_ns);

/* A Retry-After value: wait_s rounded up to whole seconds, at least 1. */
unsigned mgw_tbucket_retry_after(double wait_s);

#endif
