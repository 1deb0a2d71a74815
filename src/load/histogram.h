/* histogram.h - record latencies, merge histograms, read percentiles
 * (see histogram-t.h for the bucket layout and its error bound). */
#ifndef MGW_LOAD_HISTOGRAM_H
#define MGW_LOAD_HISTOGRAM_H

#include <stdint.h>

#include "load/histogram-t.h"

/* A new empty histogram, or NULL on no memory. */
struct mgw_hist *mgw_hist_new(void);

/* Frees h; NULL allowed. */
void mgw_hist_free(struct mgw_hist *h);

/* Forgets every value (h is empty again, its memory kept). */
void mgw_hist_reset(struct mgw_hist *h);

/* Counts value v (any unit; the caller keeps one unit per histogram) n
 * times.  Never fails: every uint64_t has a bucket. */
void mgw_hist_record_n(struct mgw_hist *h, uint64_t v, uint64_t n);

static inline void mgw_hist_record(struct mgw_hist *h, uint64_t v)
{
	mgw_hist_record_n(h, v, 1);
}

/* Adds every value of src to dst (src unchanged). */
void mgw_hist_merge(struct mgw_hist *dst, const struct mgw_hist *src);

/* The value at percentile p (0..100): the smallest recorded value v such
 * that at least p % of the values are <= v, up to the bucket precision
 * (within 1/256 relative, and exact for the extremes: p <= 0 gives the
 * minimum, p >= 100 the maximum).  0 for an empty histogram. */
uint64_t mgw_hist_percentile(const struct mgw_hist *h, double p);

/* Mean of the recorded values (exact up to double rounding); 0 if empty. */
double mgw_hist_mean(const struct mgw_hist *h);

/* Exact extremes; 0 for an empty histogram. */
uint64_t mgw_hist_min(const struct mgw_hist *h);
uint64_t mgw_hist_max(const struct mgw_hist *h);

/* Bucket index of v and the range [lo, hi] of values a bucket holds;
 * exposed for the tests that check the layout. */
unsigned mgw_hist_index(uint64_t v);
void mgw_hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi);

#endif
