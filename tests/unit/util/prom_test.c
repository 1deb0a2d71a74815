/* prom_test.c - unit tests for src/util/prom.c: the exposition text must
 * be what Prometheus parses, label values escaped, histogram buckets
 * cumulative and closed by +Inf, _sum and _count. */
#include "autoconf.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "util/prom.h"

/* The text written so far (the writer keeps it NUL-terminated). */
static char *done(struct mgw_prom *p)
{
	char *body = NULL;
	size_t len = 0;

	assert_int_equal(mgw_prom_finish(p, &body, &len), 0);
	assert_non_null(body);
	assert_int_equal(strlen(body), len);
	return body;
}

static void test_family_and_samples(void **state)
{
	struct mgw_prom p;
	const struct mgw_prom_label l[] = {{"route", "0"}, {"method", "GET"}};
	char *s;

	(void)state;
	mgw_prom_init(&p);
	mgw_prom_family(&p, "mcpgw_x_total", "counter", "Things.\nMore \\ \"so\"");
	mgw_prom_sample_u64(&p, "mcpgw_x_total", l, 2, 18446744073709551615ULL);
	mgw_prom_sample_u64(&p, "mcpgw_x_total", NULL, 0, 0);
	mgw_prom_sample(&p, "g", NULL, 0, 1.5);
	mgw_prom_sample(&p, "g", NULL, 0, 1700000000.0);
	mgw_prom_sample(&p, "g", NULL, 0, NAN);
	mgw_prom_sample(&p, "g", NULL, 0, INFINITY);
	mgw_prom_sample(&p, "g", NULL, 0, -INFINITY);
	s = done(&p);
	assert_string_equal(s,
		"# HELP mcpgw_x_total Things.\\nMore \\\\ \"so\"\n"
		"# TYPE mcpgw_x_total counter\n"
		"mcpgw_x_total{route=\"0\",method=\"GET\"} 18446744073709551615\n"
		"mcpgw_x_total 0\n"
		"g 1.5\n"
		"g 1700000000\n"
		"g NaN\n"
		"g +Inf\n"
		"g -Inf\n");
	free(s);
}

static void test_label_escaping(void **state)
{
	struct mgw_prom p;
	const struct mgw_prom_label l[] = {
		{"tool", "a\"b\\c\nd"}, {"empty", ""}, {"null", NULL},
		{"utf8", "caf\xc3\xa9"},
	};
	char *s;

	(void)state;
	mgw_prom_init(&p);
	mgw_prom_sample_u64(&p, "m", l, 4, 7);
	s = done(&p);
	assert_string_equal(s, "m{tool=\"a\\\"b\\\\c\\nd\",empty=\"\",null=\"\","
	                       "utf8=\"caf\xc3\xa9\"} 7\n");
	free(s);
}

static void test_histogram(void **state)
{
	struct mgw_prom p;
	const double b[] = {0.005, 0.1, 1, 10};
	const uint64_t c[] = {2, 0, 3, 1, 4}; /* last: above 10 */
	const struct mgw_prom_label l[] = {{"route", "r\"1"}};
	char *s;

	(void)state;
	mgw_prom_init(&p);
	mgw_prom_histogram(&p, "h_seconds", l, 1, b, 4, c, 61.25);
	mgw_prom_histogram(&p, "h_seconds", NULL, 0, b, 4,
	                   (const uint64_t[]){0, 0, 0, 0, 0}, 0);
	s = done(&p);
	assert_string_equal(s,
		"h_seconds_bucket{route=\"r\\\"1\",le=\"0.005\"} 2\n"
		"h_seconds_bucket{route=\"r\\\"1\",le=\"0.1\"} 2\n"
		"h_seconds_bucket{route=\"r\\\"1\",le=\"1\"} 5\n"
		"h_seconds_bucket{route=\"r\\\"1\",le=\"10\"} 6\n"
		"h_seconds_bucket{route=\"r\\\"1\",le=\"+Inf\"} 10\n"
		"h_seconds_sum{route=\"r\\\"1\"} 61.25\n"
		"h_seconds_count{route=\"r\\\"1\"} 10\n"
		"h_seconds_bucket{le=\"0.005\"} 0\n"
		"h_seconds_bucket{le=\"0.1\"} 0\n"
		"h_seconds_bucket{le=\"1\"} 0\n"
		"h_seconds_bucket{le=\"10\"} 0\n"
		"h_seconds_bucket{le=\"+Inf\"} 0\n"
		"h_seconds_sum 0\n"
		"h_seconds_count 0\n");
	free(s);
}

/* A long text grows the buffer many times and stays whole. */
static void test_growth(void **state)
{
	struct mgw_prom p;
	char *s;
	size_t lines = 0;

	(void)state;
	mgw_prom_init(&p);
	for (int i = 0; i < 5000; i++)
		mgw_prom_sample_u64(&p, "a_long_metric_name_total", NULL, 0,
		                    (uint64_t)i);
	s = done(&p);
	for (char *q = s; *q; q++)
		lines += *q == '\n';
	assert_int_equal(lines, 5000);
	assert_non_null(strstr(s, "a_long_metric_name_total 4999\n"));
	free(s);
	/* an empty writer hands over an empty text */
	mgw_prom_init(&p);
	s = done(&p);
	assert_string_equal(s, "");
	free(s);
}

/* Bucket choice: a bound is inclusive (le), the last bucket is open. */
static void test_bucket_ns(void **state)
{
	(void)state;
	assert_int_equal(mgw_prom_bucket_ns(0), 0);
	assert_int_equal(mgw_prom_bucket_ns(1000000), 0);      /* 1 ms */
	assert_int_equal(mgw_prom_bucket_ns(1000001), 1);
	assert_int_equal(mgw_prom_bucket_ns(1000000000), 9);   /* 1 s */
	assert_int_equal(mgw_prom_bucket_ns(10000000000ULL), 12);
	assert_int_equal(mgw_prom_bucket_ns(10000000001ULL), MGW_PROM_N_BUCKETS);
	for (unsigned i = 1; i < MGW_PROM_N_BUCKETS; i++)
		assert_true(mgw_prom_buckets[i] > mgw_prom_buckets[i - 1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_and_samples),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_bucket_ns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
