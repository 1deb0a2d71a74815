/* prom.h - a writer of the Prometheus text exposition format, version
 * 0.0.4: metric families (# HELP, # TYPE), samples with escaped label
 * values, and histograms with cumulative buckets, +Inf, _sum and _count.
 * It knows nothing of what is measured; proxy/metrics_page.c feeds it.
 *
 * The writer grows one buffer; an allocation failure is remembered and
 * reported once by mgw_prom_finish, so callers need not check each call. */
#ifndef MGW_UTIL_PROM_H
#define MGW_UTIL_PROM_H

#include <stddef.h>
#include <stdint.h>

/* The latency buckets every mcpgw histogram uses (seconds, increasing):
 * 1 ms to 10 s in 1-2.5-5 steps. */
#define MGW_PROM_N_BUCKETS 13
extern const double mgw_prom_buckets[MGW_PROM_N_BUCKETS];

/* The bucket of a duration of ns nanoseconds: 0 .. MGW_PROM_N_BUCKETS - 1
 * for the first bound at or above it, MGW_PROM_N_BUCKETS above all. */
unsigned mgw_prom_bucket_ns(uint64_t ns);

/* The Content-Type of the format. */
#define MGW_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct mgw_prom {
	char *buf;
	size_t len, cap;
	int oom;            /* an allocation failed: the text is incomplete */
};

/* One label: name (a valid label name, not checked) and value (any
 * bytes; escaped as the format wants: backslash, double quote, newline). */
struct mgw_prom_label {
	const char *name;
	const char *value;
};

void mgw_prom_init(struct mgw_prom *p);
void mgw_prom_deinit(struct mgw_prom *p);

/* "# HELP name help" and "# TYPE name type" (type: counter, gauge,
 * histogram, untyped).  help has backslashes and newlines escaped. */
void mgw_prom_family(struct mgw_prom *p, const char *name, const char *type,
                     const char *help);

/* One sample line: name{labels} value.  n may be 0 (no braces).  The
 * double form prints integers exactly up to 2^53, NaN, +Inf and -Inf as
 * the format spells them; the unsigned form prints the integer. */
void mgw_prom_sample(struct mgw_prom *p, const char *name,
                     const struct mgw_prom_label *l, size_t n, double v);
void mgw_prom_sample_u64(struct mgw_prom *p, const char *name,
                         const struct mgw_prom_label *l, size_t n,
                         uint64_t v);

/* A histogram series: name_bucket{labels,le="B"} for each of the n_bounds
 * increasing upper bounds, then le="+Inf", name_sum and name_count.
 * counts holds n_bounds + 1 per-bucket (not cumulative) observation
 * counts, the last one for observations above every bound; the writer
 * makes them cumulative.  At most 8 labels besides le. */
void mgw_prom_histogram(struct mgw_prom *p, const char *name,
                        const struct mgw_prom_label *l, size_t n,
                        const double *bounds, size_t n_bounds,
                        const uint64_t *counts, double sum);

/* Hands over the text: *body (malloc'd, NUL-terminated) and *len; the
 * writer is empty afterwards.  MGW_ENOMEM (and nothing handed over) when
 * an allocation failed on the way. */
int mgw_prom_finish(struct mgw_prom *p, char **body, size_t *len);

#endif
