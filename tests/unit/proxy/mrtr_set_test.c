/* mrtr_set_test.c - unit tests for the requestState digests of the
 * single-use guard (src/proxy/mrtr_set.c): first and second claims,
 * expiry, the bound (refuse, never forget a live digest), release,
 * counters, and claims from several threads at once.  The answers (409
 * -31023, 503 -31024) are covered by
 * tests/integration/serve_mrtr_guard.sh. */
#include "autoconf.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/mrtr_set.h"

/* A digest that differs from every other i (first bytes: the bucket;
 * last bytes: told apart in one bucket). */
static void digest(uint8_t d[MGW_MRTR_DIGEST_LEN], uint32_t i, uint32_t bucket)
{
	memset(d, 0, MGW_MRTR_DIGEST_LEN);
	memcpy(d, &bucket, sizeof(bucket));
	memcpy(d + MGW_MRTR_DIGEST_LEN - sizeof(i), &i, sizeof(i));
}

static void test_once(void **state)
{
	struct mgw_mrtr_set *s = mgw_mrtr_set_new(100);
	struct mgw_mrtr_counts c;
	uint8_t a[MGW_MRTR_DIGEST_LEN], b[MGW_MRTR_DIGEST_LEN];

	(void)state;
	assert_non_null(s);
	digest(a, 1, 7);
	digest(b, 2, 7); /* same bucket, other digest */
	assert_int_equal(mgw_mrtr_set_claim(s, a, 1000, 500), MGW_MRTR_FIRST);
	assert_int_equal(mgw_mrtr_set_claim(s, a, 1001, 500), MGW_MRTR_SEEN);
	assert_int_equal(mgw_mrtr_set_claim(s, b, 1002, 500), MGW_MRTR_FIRST);
	assert_int_equal(mgw_mrtr_set_claim(s, a, 1499, 500), MGW_MRTR_SEEN);
	/* expired at 1000 + 500: a claim then is a first one again */
	assert_int_equal(mgw_mrtr_set_claim(s, a, 1500, 500), MGW_MRTR_FIRST);
	mgw_mrtr_set_counts(s, &c);
	assert_int_equal(c.held, 2);
	/* release: presentable again; releasing twice is harmless */
	mgw_mrtr_set_release(s, b);
	mgw_mrtr_set_release(s, b);
	assert_int_equal(mgw_mrtr_set_claim(s, b, 1600, 500), MGW_MRTR_FIRST);
	mgw_mrtr_set_count(s, MGW_MRTR_C_CHECKED);
	mgw_mrtr_set_count(s, MGW_MRTR_C_REFUSED);
	mgw_mrtr_set_count(s, MGW_MRTR_C_REFUSED);
	mgw_mrtr_set_count(s, MGW_MRTR_C_N); /* out of range: ignored */
	mgw_mrtr_set_counts(s, &c);
	assert_int_equal(c.checked, 1);
	assert_int_equal(c.refused, 2);
	assert_int_equal(c.full, 0);
	assert_int_equal(c.store_errors, 0);
	mgw_mrtr_set_free(s);
	mgw_mrtr_set_free(NULL);
}

/* Full: a new digest is refused while every held one is live (none is
 * forgotten to make room); once some expire there is room again. */
static void test_bound(void **state)
{
	struct mgw_mrtr_set *s = mgw_mrtr_set_new(64);
	uint8_t d[MGW_MRTR_DIGEST_LEN];
	struct mgw_mrtr_counts c;

	(void)state;
	assert_non_null(s);
	for (uint32_t i = 0; i < 64; i++) {
		digest(d, i, i * 2654435761u);
		/* the first half lives 100 ms, the second 10 s */
		assert_int_equal(mgw_mrtr_set_claim(s, d, 0, i < 32 ? 100 : 10000),
		                 MGW_MRTR_FIRST);
	}
	digest(d, 1000, 3);
	assert_int_equal(mgw_mrtr_set_claim(s, d, 50, 100), MGW_MRTR_FULL);
	for (uint32_t i = 0; i < 64; i++) {
		digest(d, i, i * 2654435761u);
		assert_int_equal(mgw_mrtr_set_claim(s, d, 50, 100), MGW_MRTR_SEEN);
	}
	/* at 100 ms the first half expired: room for 32 */
	for (uint32_t i = 0; i < 32; i++) {
		digest(d, 2000 + i, i);
		assert_int_equal(mgw_mrtr_set_claim(s, d, 100, 100), MGW_MRTR_FIRST);
	}
	digest(d, 3000, 5);
	assert_int_equal(mgw_mrtr_set_claim(s, d, 100, 100), MGW_MRTR_FULL);
	mgw_mrtr_set_counts(s, &c);
	assert_int_equal(c.held, 64);
	/* the long-lived ones are all still held */
	for (uint32_t i = 32; i < 64; i++) {
		digest(d, i, i * 2654435761u);
		assert_int_equal(mgw_mrtr_set_claim(s, d, 9999, 100), MGW_MRTR_SEEN);
	}
	mgw_mrtr_set_free(s);
}

/* The step sweep drops expired entries while the set is far from full. */
static void test_sweep(void **state)
{
	struct mgw_mrtr_set *s = mgw_mrtr_set_new(64); /* 32 buckets */
	uint8_t d[MGW_MRTR_DIGEST_LEN];
	struct mgw_mrtr_counts c;

	(void)state;
	assert_non_null(s);
	for (uint32_t i = 0; i < 20; i++) {
		digest(d, i, i);
		assert_int_equal(mgw_mrtr_set_claim(s, d, 0, 10), MGW_MRTR_FIRST);
	}
	/* 20 claims later every bucket was stepped over at least once */
	for (uint32_t i = 0; i < 20; i++) {
		digest(d, 100 + i, 1);
		assert_int_equal(mgw_mrtr_set_claim(s, d, 10, 1000), MGW_MRTR_FIRST);
	}
	mgw_mrtr_set_counts(s, &c);
	assert_int_equal(c.held, 20);
	mgw_mrtr_set_free(s);
}

/* Four threads claim the same 500 digests: each is FIRST exactly once. */
struct race {
	struct mgw_mrtr_set *s;
	unsigned first;
};

static void *claimer(void *arg)
{
	struct race *r = arg;
	uint8_t d[MGW_MRTR_DIGEST_LEN];

	for (uint32_t i = 0; i < 500; i++) {
		digest(d, i, i * 40503u);
		if (mgw_mrtr_set_claim(r->s, d, 0, 60000) == MGW_MRTR_FIRST)
			r->first++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct mgw_mrtr_set *s = mgw_mrtr_set_new(1000);
	struct race r[4];
	pthread_t th[4];
	unsigned sum = 0;

	(void)state;
	assert_non_null(s);
	for (int i = 0; i < 4; i++) {
		r[i].s = s;
		r[i].first = 0;
		assert_int_equal(pthread_create(&th[i], NULL, claimer, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		sum += r[i].first;
	}
	assert_int_equal(sum, 500);
	mgw_mrtr_set_free(s);
}

static void test_new(void **state)
{
	(void)state;
	assert_null(mgw_mrtr_set_new(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_new),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
