/* histogram_test.c - unit tests for src/load/histogram.c: the bucket
 * layout covers every uint64_t without gaps, and percentiles, extremes and
 * means agree with a sorted reference within the promised relative error
 * over random and adversarial distributions. */
#include "autoconf.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/histogram.h"

#define N 200000

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static double rnd01(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The reference definition: the value of rank ceil(p% of n), 1-based. */
static uint64_t ref_percentile(const uint64_t *sorted, size_t n, double p)
{
	double want = p / 100.0 * (double)n;
	size_t rank = (size_t)want;

	if (p <= 0)
		return sorted[0];
	if ((double)rank < want - 1e-9)
		rank++;
	if (rank == 0)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static const double pcts[] = {0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9,
                              99.99, 100};

/* Records v[0..n), then checks every percentile, the extremes and the mean
 * against the sorted copy.  The bound is 1/256 of the true value (half a
 * bucket at the coarsest); values below 256 must be exact. */
static void check_against_reference(uint64_t *v, size_t n)
{
	struct mgw_hist *h = mgw_hist_new();
	long double sum = 0;

	assert_non_null(h);
	for (size_t i = 0; i < n; i++) {
		mgw_hist_record(h, v[i]);
		sum += (long double)v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	assert_int_equal(h->count, n);
	assert_true(mgw_hist_min(h) == v[0]);
	assert_true(mgw_hist_max(h) == v[n - 1]);
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		uint64_t want = ref_percentile(v, n, pcts[i]);
		uint64_t got = mgw_hist_percentile(h, pcts[i]);
		double err = fabs((double)got - (double)want);

		if (want < MGW_HIST_EXACT)
			assert_true(got == want);
		else if (err > (double)want / 256.0) {
			print_error("p%g: got %llu want %llu\n", pcts[i],
			            (unsigned long long)got,
			            (unsigned long long)want);
			fail();
		}
	}
	assert_true(fabsl((long double)mgw_hist_mean(h) - sum / n) <=
	            1e-9L * (sum / n) + 1e-9L);
	mgw_hist_free(h);
}

static void test_layout(void **state)
{
	uint64_t lo, hi, prev_hi = 0;

	(void)state;
	for (unsigned i = 0; i < MGW_HIST_BUCKETS; i++) {
		mgw_hist_bucket_range(i, &lo, &hi);
		if (i > 0)
			assert_true(lo == prev_hi + 1); /* no gap, no overlap */
		assert_true(hi >= lo);
		assert_int_equal(mgw_hist_index(lo), i);
		assert_int_equal(mgw_hist_index(hi), i);
		/* a bucket is at most 1/128 of its lower bound wide */
		if (lo >= MGW_HIST_EXACT)
			assert_true((hi - lo + 1) * MGW_HIST_SUB <= lo);
		prev_hi = hi;
	}
	assert_true(prev_hi == UINT64_MAX);
	assert_int_equal(mgw_hist_index(UINT64_MAX), MGW_HIST_BUCKETS - 1);
	assert_int_equal(mgw_hist_index(0), 0);
}

static void test_empty(void **state)
{
	struct mgw_hist *h = mgw_hist_new();

	(void)state;
	assert_non_null(h);
	assert_true(mgw_hist_percentile(h, 50) == 0);
	assert_true(mgw_hist_min(h) == 0);
	assert_true(mgw_hist_max(h) == 0);
	assert_true(mgw_hist_mean(h) == 0);
	mgw_hist_record(h, 12345);
	assert_true(mgw_hist_percentile(h, 0) == 12345);
	assert_true(mgw_hist_percentile(h, 50) == 12345);
	assert_true(mgw_hist_percentile(h, 100) == 12345);
	mgw_hist_reset(h);
	assert_true(h->count == 0);
	assert_true(mgw_hist_percentile(h, 99) == 0);
	assert_true(mgw_hist_min(h) == 0);
	mgw_hist_free(h);
	mgw_hist_free(NULL);
}

static void test_uniform_small_exact(void **state)
{
	static uint64_t v[N];

	(void)state;
	for (size_t i = 0; i < N; i++)
		v[i] = rnd() % 256;
	check_against_reference(v, N);
}

static void test_uniform_wide(void **state)
{
	static uint64_t v[N];

	(void)state;
	for (size_t i = 0; i < N; i++)
		v[i] = 1000 + rnd() % 10000000000ull; /* 1 us .. 10 s in ns */
	check_against_reference(v, N);
}

static void test_lognormal(void **state)
{
	static uint64_t v[N];

	(void)state;
	for (size_t i = 0; i < N; i++) {
		/* Box-Muller: latencies around 1 ms with a long tail */
		double u1 = rnd01() + 1e-12, u2 = rnd01();
		double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		v[i] = (uint64_t)exp(log(1e6) + 1.5 * z);
	}
	check_against_reference(v, N);
}

static void test_bimodal_outliers(void **state)
{
	static uint64_t v[N];

	(void)state;
	/* Mostly 1 ms, 1 % at 10 s, one value of an hour: the shape that
	 * hides coordinated omission; p99 and p99.9 must land on the right
	 * mode. */
	for (size_t i = 0; i < N; i++)
		v[i] = i % 100 == 7 ? 10000000000ull + rnd() % 1000
		                    : 1000000 + rnd() % 1000;
	v[N / 2] = 3600000000000ull;
	check_against_reference(v, N);
}

static void test_bucket_edges(void **state)
{
	static uint64_t v[N];

	(void)state;
	/* Values on every power-of-two edge and their neighbours, including
	 * the top of the range where a careless index overflows. */
	for (size_t i = 0; i < N; i++) {
		unsigned k = (unsigned)(rnd() % 64);
		uint64_t p = 1ull << k;
		switch (rnd() % 3) {
		case 0: v[i] = p; break;
		case 1: v[i] = p - 1; break;
		default: v[i] = p + 1; break;
		}
	}
	v[0] = UINT64_MAX;
	v[1] = UINT64_MAX - 1;
	v[2] = 0;
	check_against_reference(v, N);
}

static void test_constant_and_tiny_sets(void **state)
{
	uint64_t v[3];

	(void)state;
	for (size_t i = 0; i < 3; i++)
		v[i] = 987654321;
	check_against_reference(v, 3);
	v[0] = 5;
	check_against_reference(v, 1);
	v[0] = 1000; v[1] = 2000000;
	check_against_reference(v, 2);
}

static void test_record_n_and_merge(void **state)
{
	struct mgw_hist *a = mgw_hist_new(), *b = mgw_hist_new(),
	                *all = mgw_hist_new();
	static uint64_t v[N];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(all);
	for (size_t i = 0; i < N; i++) {
		v[i] = rnd() % 50000000;
		mgw_hist_record(i % 2 ? a : b, v[i]);
		mgw_hist_record(all, v[i]);
	}
	mgw_hist_record_n(a, 777777, 1000);
	mgw_hist_record_n(all, 777777, 1000);
	mgw_hist_record_n(a, 1, 0); /* n = 0 counts nothing */
	mgw_hist_merge(a, b);
	assert_true(a->count == all->count);
	assert_true(a->min == all->min && a->max == all->max);
	assert_memory_equal(a->counts, all->counts,
	                    MGW_HIST_BUCKETS * sizeof(uint64_t));
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		assert_true(mgw_hist_percentile(a, pcts[i]) ==
		            mgw_hist_percentile(all, pcts[i]));
	/* merging an empty histogram keeps min intact */
	mgw_hist_reset(b);
	mgw_hist_merge(a, b);
	assert_true(a->min == all->min);
	mgw_hist_free(a);
	mgw_hist_free(b);
	mgw_hist_free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_uniform_small_exact),
		cmocka_unit_test(test_uniform_wide),
		cmocka_unit_test(test_lognormal),
		cmocka_unit_test(test_bimodal_outliers),
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_constant_and_tiny_sets),
		cmocka_unit_test(test_record_n_and_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
