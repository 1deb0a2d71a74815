/* histogram-t.h - a log-linear latency histogram in the manner of HDR
 * Histogram: values below 256 are counted exactly, and every power-of-two
 * range above is split into 128 equal sub-buckets, so a bucket is never
 * wider than 1/128 of its lower bound.  Reporting a bucket's midpoint keeps
 * the relative error of any percentile below 0.4 %, at any magnitude from
 * nanoseconds to years, in a fixed 57 KiB of counters. */
#ifndef MGW_LOAD_HISTOGRAM_T_H
#define MGW_LOAD_HISTOGRAM_T_H

#include <stdint.h>

/* Sub-buckets per power of two above the exact range (precision). */
#define MGW_HIST_SUB 128u
/* Values below this are their own bucket. */
#define MGW_HIST_EXACT (2u * MGW_HIST_SUB)
/* Buckets for the whole uint64_t range: the exact ones, then 128 per
 * power of two from 2^8 to 2^63. */
#define MGW_HIST_BUCKETS (MGW_HIST_EXACT + 56u * MGW_HIST_SUB)

struct mgw_hist {
	uint64_t count;          /* values recorded */
	uint64_t min;            /* exact smallest value (UINT64_MAX if empty) */
	uint64_t max;            /* exact largest value (0 if empty) */
	double sum;              /* for the mean; double is exact enough
	                          * (2^53 ns is 104 days) */
	uint64_t *counts;        /* MGW_HIST_BUCKETS counters */
};

#endif
