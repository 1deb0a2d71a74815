/* prom.c - the Prometheus text exposition writer (prom.h). */
#include "autoconf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "util/prom.h"

#define MAX_LABELS 8

const double mgw_prom_buckets[MGW_PROM_N_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

/* The same bounds in nanoseconds, for integer comparisons. */
static const uint64_t bounds_ns[MGW_PROM_N_BUCKETS] = {
	1000000ULL, 2500000ULL, 5000000ULL, 10000000ULL, 25000000ULL,
	50000000ULL, 100000000ULL, 250000000ULL, 500000000ULL, 1000000000ULL,
	2500000000ULL, 5000000000ULL, 10000000000ULL,
};

unsigned mgw_prom_bucket_ns(uint64_t ns)
{
	unsigned i = 0;

	while (i < MGW_PROM_N_BUCKETS && ns > bounds_ns[i])
		i++;
	return i;
}

void mgw_prom_init(struct mgw_prom *p)
{
	memset(p, 0, sizeof(*p));
}

void mgw_prom_deinit(struct mgw_prom *p)
{
	free(p->buf);
	mgw_prom_init(p);
}

/* Room for n more bytes and a NUL. */
static int reserve(struct mgw_prom *p, size_t n)
{
	size_t cap = p->cap ? p->cap : 4096;
	char *b;

	if (p->oom)
		return -1;
	if (p->len + n + 1 <= p->cap)
		return 0;
	while (cap < p->len + n + 1)
		cap *= 2;
	b = realloc(p->buf, cap);
	if (!b) {
		p->oom = 1;
		return -1;
	}
	p->buf = b;
	p->cap = cap;
	return 0;
}

static void put(struct mgw_prom *p, const char *s, size_t n)
{
	if (reserve(p, n) != 0)
		return;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void puts_(struct mgw_prom *p, const char *s)
{
	put(p, s, strlen(s));
}

/* s with backslash and newline escaped, and the double quote too when
 * quote is set (label values; HELP text keeps its quotes). */
static void put_escaped(struct mgw_prom *p, const char *s, int quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *esc = NULL;

		if (*s == '\\')
			esc = "\\\\";
		else if (*s == '\n')
			esc = "\\n";
		else if (quote && *s == '"')
			esc = "\\\"";
		if (!esc)
			continue;
		put(p, run, (size_t)(s - run));
		puts_(p, esc);
		run = s + 1;
	}
	put(p, run, (size_t)(s - run));
}

void mgw_prom_family(struct mgw_prom *p, const char *name, const char *type,
                     const char *help)
{
	puts_(p, "# HELP ");
	puts_(p, name);
	puts_(p, " ");
	put_escaped(p, help, 0);
	puts_(p, "\n# TYPE ");
	puts_(p, name);
	puts_(p, " ");
	puts_(p, type);
	puts_(p, "\n");
}

static void put_labels(struct mgw_prom *p, const struct mgw_prom_label *l,
                       size_t n)
{
	if (n == 0)
		return;
	puts_(p, "{");
	for (size_t i = 0; i < n; i++) {
		if (i)
			puts_(p, ",");
		puts_(p, l[i].name);
		puts_(p, "=\"");
		put_escaped(p, l[i].value ? l[i].value : "", 1);
		puts_(p, "\"");
	}
	puts_(p, "}");
}

/* A sample value as the format spells it. */
static void fmt_value(double v, char *out, size_t outlen)
{
	if (isnan(v))
		snprintf(out, outlen, "NaN");
	else if (isinf(v))
		snprintf(out, outlen, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) <= 9007199254740992.0)
		snprintf(out, outlen, "%.0f", v);
	else
		snprintf(out, outlen, "%.17g", v);
}

static void line(struct mgw_prom *p, const char *name, const char *suffix,
                 const struct mgw_prom_label *l, size_t n, const char *value)
{
	puts_(p, name);
	puts_(p, suffix);
	put_labels(p, l, n);
	puts_(p, " ");
	puts_(p, value);
	puts_(p, "\n");
}

void mgw_prom_sample(struct mgw_prom *p, const char *name,
                     const struct mgw_prom_label *l, size_t n, double v)
{
	char num[40];

	fmt_value(v, num, sizeof(num));
	line(p, name, "", l, n, num);
}

void mgw_prom_sample_u64(struct mgw_prom *p, const char *name,
                         const struct mgw_prom_label *l, size_t n,
                         uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	line(p, name, "", l, n, num);
}

void mgw_prom_histogram(struct mgw_prom *p, const char *name,
                        const struct mgw_prom_label *l, size_t n,
                        const double *bounds, size_t n_bounds,
                        const uint64_t *counts, double sum)
{
	struct mgw_prom_label ll[MAX_LABELS + 1];
	char le[40], num[40];
	uint64_t cum = 0;

	if (n > MAX_LABELS)
		n = MAX_LABELS;
	if (n)
		memcpy(ll, l, n * sizeof(*l));
	ll[n].name = "le";
	ll[n].value = le;
	for (size_t i = 0; i <= n_bounds; i++) {
		cum += counts[i];
		if (i < n_bounds)
			snprintf(le, sizeof(le), "%g", bounds[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		snprintf(num, sizeof(num), "%llu", (unsigned long long)cum);
		line(p, name, "_bucket", ll, n + 1, num);
	}
	fmt_value(sum, num, sizeof(num));
	line(p, name, "_sum", l, n, num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)cum);
	line(p, name, "_count", l, n, num);
}

int mgw_prom_finish(struct mgw_prom *p, char **body, size_t *len)
{
	*body = NULL;
	*len = 0;
	if (!p->oom && reserve(p, 0) != 0)
		p->oom = 1;
	if (p->oom) {
		mgw_prom_deinit(p);
		return MGW_ENOMEM;
	}
	p->buf[p->len] = '\0';
	*body = p->buf;
	*len = p->len;
	mgw_prom_init(p);
	return 0;
}
