/* soak_report_test.c - unit tests for bench/src/soak_report.c: the start
 * figures are the first sample due after the warm-up, the end the last,
 * the max over every sample; growth is end against start; one sample
 * after the warm-up, or none, is no growth (null) and fails its target;
 * losses sum every failure kind but shed; a kill counts as verified only
 * when it landed and its replacement was healthy; the gateway's replays
 * are summed over its groups; and a target set below what was measured
 * (an impossible -1 %) fails the soak. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bench/src/soak_report.h"

/* A run record: samples at due 0, 10, 20, 30 with the given RSS and fds,
 * two kills (the second one's replacement unhealthy when bad_kill), and
 * a load total with the given failures. */
static json_t *record(const int *rss, const int *fds, size_t n, int bad_kill,
                      const char *failures)
{
	json_t *samples = json_array(), *rec;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(samples, json_pack(
			"{s:f, s:f, s:i, s:i, s:{s:i, s:i}, s:i}",
			"due_s", 10.0 * (double)i, "t_s", 10.0 * (double)i + 0.01,
			"rss_kib", rss[i], "fds", fds[i],
			"load", "requests", (int)(1000 * i), "failed", 0,
			"kills", (int)i));
	rec = json_pack("{s:b, s:o, s:[{s:b, s:f, s:{s:b}}, {s:b, s:f, s:{s:b}}],"
	                " s:{s:{s:I, s:I, s:f, s:{s:f, s:f}, s:o}, s:[]},"
	                " s:[{s:s, s:{s:[{s:{s:i, s:i}}, {s:{s:i, s:i}}]}}]}",
		"valid", 1, "samples", samples,
		"kills", "valid", 1, "at_s", 10.0, "replacement", "healthy", 1,
		         "valid", 1, "at_s", 20.0, "replacement", "healthy", !bad_kill,
		"load", "total", "requests", (json_int_t)3000, "ok", (json_int_t)2990,
		        "achieved_rps", 99.5, "latency_ms", "p50", 52.0, "p99", 60.0,
		        "failures", json_loads(failures, 0, NULL),
		"first_failures",
		"gateway_stats", "role", "gateway 1", "stats", "upstreams",
		"replays", "replayed", 3, "refused", 1,
		"replays", "replayed", 4, "refused", 0);
	assert_non_null(rec);
	return rec;
}

static const struct mgw_bench_soak_targets targets = {
	.max_growth_pct = 5.0, .max_losses = 0, .warmup_s = 10.0,
	.kills_planned = 2, .offered_rps = 100,
};

static double get(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);

	return json_is_number(v) ? json_number_value(v) : -12345;
}

static const json_t *target(const json_t *res, const char *prefix)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(res, "targets"), i, t)
		if (strncmp(json_string_value(json_object_get(t, "name")), prefix,
		            strlen(prefix)) == 0)
			return t;
	fail_msg("no target %s", prefix);
	return NULL;
}

static void test_figures(void **state)
{
	/* the warm-up sample (due 0) is the max of fds and not the start */
	const int rss[] = { 5000, 10000, 10200, 10400 }, fds[] = { 90, 40, 41, 40 };
	json_t *rec = record(rss, fds, 4, 0, "{\"shed\": 7, \"timeout\": 0}");
	json_t *res = mgw_bench_soak_results(rec, &targets);

	(void)state;
	assert_non_null(res);
	assert_true(get(res, "rss_kib", "start") == 10000);
	assert_true(get(res, "rss_kib", "start_t_s") == 10.01);
	assert_true(get(res, "rss_kib", "end") == 10400);
	assert_true(get(res, "rss_kib", "max") == 10400);
	assert_true(get(res, "rss_kib", "growth_pct") == 4.0);
	assert_true(get(res, "fds", "max") == 90);
	assert_true(get(res, "fds", "growth_pct") == 0.0);
	/* shed is not a loss */
	assert_true(get(res, "losses", "total") == 0);
	assert_int_equal(json_object_size(json_object_get(
		json_object_get(res, "losses"), "by_reason")), 0);
	assert_true(get(res, "load", "shed") == 7);
	assert_true(get(res, "kills", "verified") == 2);
	assert_true(get(res, "gateway", "replayed") == 7);
	assert_true(get(res, "gateway", "refused") == 1);
	assert_true(json_is_null(json_object_get(json_object_get(res, "gateway"),
	                                         "repinned")));
	assert_int_equal(json_array_size(json_object_get(res, "samples")), 4);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(
		json_object_get(res, "samples"), 2), "done")), 2000);
	assert_true(json_is_true(json_object_get(res, "passed")));
	json_decref(res);
	json_decref(rec);
}

static void test_losses_and_kills(void **state)
{
	const int rss[] = { 100, 100, 100, 100 }, fds[] = { 10, 10, 10, 10 };
	json_t *rec = record(rss, fds, 4, 1,
	                     "{\"http_5xx\": 2, \"timeout\": 1, \"shed\": 3}");
	json_t *res = mgw_bench_soak_results(rec, &targets);
	const json_t *by = json_object_get(json_object_get(res, "losses"),
	                                   "by_reason");

	(void)state;
	assert_true(get(res, "losses", "total") == 3);
	assert_int_equal(json_integer_value(json_object_get(by, "http_5xx")), 2);
	assert_int_equal(json_integer_value(json_object_get(by, "timeout")), 1);
	assert_null(json_object_get(by, "shed"));
	assert_false(json_is_true(json_object_get(target(res, "losses"), "passed")));
	/* a kill whose replacement never became healthy is not verified */
	assert_true(get(res, "kills", "done") == 2);
	assert_true(get(res, "kills", "verified") == 1);
	assert_false(json_is_true(json_object_get(target(res, "kills"), "passed")));
	assert_true(json_is_true(json_object_get(target(res, "RSS"), "passed")));
	assert_false(json_is_true(json_object_get(res, "passed")));
	json_decref(res);
	json_decref(rec);
}

static void test_impossible_and_unmeasured(void **state)
{
	const int rss[] = { 100, 100, 100, 100 }, fds[] = { 10, 10, 10, 10 };
	struct mgw_bench_soak_targets t = targets;
	json_t *rec = record(rss, fds, 4, 0, "{\"shed\": 0}"), *res;

	(void)state;
	/* no change at all, and a target of -1 %: missed */
	t.max_growth_pct = -1;
	res = mgw_bench_soak_results(rec, &t);
	assert_true(get(res, "rss_kib", "growth_pct") == 0.0);
	assert_false(json_is_true(json_object_get(target(res, "RSS"), "passed")));
	assert_false(json_is_true(json_object_get(res, "passed")));
	json_decref(res);
	/* a warm-up that leaves one sample: no growth, and no pass */
	t = targets;
	t.warmup_s = 25;
	res = mgw_bench_soak_results(rec, &t);
	assert_true(json_is_null(json_object_get(json_object_get(res, "rss_kib"),
	                                         "growth_pct")));
	assert_false(json_is_true(json_object_get(target(res, "RSS"), "passed")));
	assert_false(json_is_true(json_object_get(target(res, "open fds"),
	                                          "passed")));
	assert_false(json_is_true(json_object_get(res, "passed")));
	json_decref(res);
	json_decref(rec);
}

/* The summary says PASS/MISS per target and the verdict. */
static void test_summary(void **state)
{
	const int rss[] = { 100, 100, 100, 200 }, fds[] = { 10, 10, 10, 10 };
	json_t *rec = record(rss, fds, 4, 0, "{\"shed\": 0, \"timeout\": 2}");
	json_t *res = mgw_bench_soak_results(rec, &targets);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	mgw_bench_soak_summary(f, res);
	fclose(f);
	assert_non_null(strstr(buf, "MISS  RSS growth % (at most): 100"));
	assert_non_null(strstr(buf, "PASS  open fds growth"));
	assert_non_null(strstr(buf, "losses    2 (timeout 2)"));
	assert_non_null(strstr(buf, "soak FAILED"));
	free(buf);
	json_decref(res);
	json_decref(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_losses_and_kills),
		cmocka_unit_test(test_impossible_and_unmeasured),
		cmocka_unit_test(test_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
