/* retry-t.h - the proxy-wide retry budget (see retry.h). */
#ifndef MGW_PROXY_RETRY_T_H
#define MGW_PROXY_RETRY_T_H

#include <stdatomic.h>
#include <stdint.h>

/* Window of the budget: requests and retries of the last this many
 * seconds count, in one-second buckets. */
#define MGW_RETRY_WINDOW_S 10u

/* One second of history.  sec is the bucket's second (monotonic ms / 1000)
 * plus one, so 0 means "never used". */
struct mgw_retry_bucket {
	atomic_uint_fast64_t sec;
	atomic_uint_fast64_t requests;
	atomic_uint_fast64_t retries;
};

/* Shared by every worker; updated with atomics only. */
struct mgw_retry_budget {
	double ratio;               /* retries allowed per request */
	uint32_t min_per_second;    /* floor: this many per second always */
	struct mgw_retry_bucket b[MGW_RETRY_WINDOW_S];
	atomic_uint_fast64_t denied; /* retries refused (only grows) */
};

#endif
