/* histogram.c - the log-linear latency histogram (layout and error bound
 * in histogram-t.h).  Percentiles walk the counters once; that is 7424
 * additions, cheap next to a report and fine for a once-a-second
 * timeline. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "load/histogram.h"

struct mgw_hist *mgw_hist_new(void)
{
	struct mgw_hist *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->counts = calloc(MGW_HIST_BUCKETS, sizeof(*h->counts));
	if (!h->counts) {
		free(h);
		return NULL;
	}
	h->min = UINT64_MAX;
	return h;
}

void mgw_hist_free(struct mgw_hist *h)
{
	if (!h)
		return;
	free(h->counts);
	free(h);
}

void mgw_hist_reset(struct mgw_hist *h)
{
	memset(h->counts, 0, MGW_HIST_BUCKETS * sizeof(*h->counts));
	h->count = 0;
	h->min = UINT64_MAX;
	h->max = 0;
	h->sum = 0;
}

unsigned mgw_hist_index(uint64_t v)
{
	unsigned e;

	if (v < MGW_HIST_EXACT)
		return (unsigned)v;
	/* v >> e lands in [128, 256): the top 8 bits of v. */
	e = (unsigned)(63 - __builtin_clzll(v)) - 7;
	return MGW_HIST_EXACT + (e - 1) * MGW_HIST_SUB +
	       (unsigned)((v >> e) - MGW_HIST_SUB);
}

void mgw_hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned e;
	uint64_t sub;

	if (idx < MGW_HIST_EXACT) {
		*lo = *hi = idx;
		return;
	}
	e = (idx - MGW_HIST_EXACT) / MGW_HIST_SUB + 1;
	sub = (idx - MGW_HIST_EXACT) % MGW_HIST_SUB + MGW_HIST_SUB;
	*lo = sub << e;
	*hi = *lo + ((1ull << e) - 1);
}

void mgw_hist_record_n(struct mgw_hist *h, uint64_t v, uint64_t n)
{
	if (n == 0)
		return;
	h->counts[mgw_hist_index(v)] += n;
	h->count += n;
	h->sum += (double)v * (double)n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void mgw_hist_merge(struct mgw_hist *dst, const struct mgw_hist *src)
{
	if (src->count == 0)
		return;
	for (unsigned i = 0; i < MGW_HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t mgw_hist_percentile(const struct mgw_hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi, v;
	double want;

	if (h->count == 0)
		return 0;
	if (!(p > 0)) /* also NaN */
		return h->min;
	if (p >= 100)
		return h->max;
	/* The rank-th smallest value, 1-based: ceil(p% of count), computed
	 * so that float noise cannot push an exact product one rank up. */
	want = p / 100.0 * (double)h->count;
	rank = (uint64_t)want;
	if ((double)rank < want - 1e-9)
		rank++;
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < MGW_HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen < rank)
			continue;
		mgw_hist_bucket_range(i, &lo, &hi);
		/* The midpoint halves the worst error; the true extremes are
		 * known exactly, so never report beyond them. */
		v = lo + (hi - lo) / 2;
		if (v < h->min)
			v = h->min;
		if (v > h->max)
			v = h->max;
		return v;
	}
	return h->max;
}

double mgw_hist_mean(const struct mgw_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0;
}

uint64_t mgw_hist_min(const struct mgw_hist *h)
{
	return h->count ? h->min : 0;
}

uint64_t mgw_hist_max(const struct mgw_hist *h)
{
	return h->max;
}
