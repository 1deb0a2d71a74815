/* retry_test.c - unit tests for src/proxy/retry.c: the budget allows
 * ratio x requests, never less than the per-second floor, over a sliding
 * window driven by an injected clock; old seconds age out; counts from
 * several threads add up. */
#include "autoconf.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "proxy/retry.h"

static unsigned allowed(struct mgw_retry_budget *b, uint64_t now, unsigned n)
{
	unsigned ok = 0;

	for (unsigned i = 0; i < n; i++)
		ok += (unsigned)mgw_retry_budget_try(b, now);
	return ok;
}

static void requests(struct mgw_retry_budget *b, uint64_t now, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		mgw_retry_budget_request(b, now);
}

static void test_ratio(void **state)
{
	struct mgw_retry_budget *b = mgw_retry_budget_new(0.2, 0);
	uint64_t req, ret;

	(void)state;
	assert_non_null(b);
	assert_int_equal(allowed(b, 5000, 5), 0); /* no requests, no floor */
	requests(b, 5000, 100);
	assert_int_equal(allowed(b, 5000, 50), 20);
	assert_int_equal(atomic_load(&b->denied), 35);
	mgw_retry_budget_window(b, 5000, &req, &ret);
	assert_int_equal(req, 100);
	assert_int_equal(ret, 20);
	/* five more requests earn one more retry */
	requests(b, 5500, 5);
	assert_int_equal(allowed(b, 5500, 3), 1);
	mgw_retry_budget_free(b);
	mgw_retry_budget_free(NULL);
}

static void test_floor(void **state)
{
	struct mgw_retry_budget *b = mgw_retry_budget_new(0.2, 10);

	(void)state;
	/* a quiet gateway may still retry min_per_second x window */
	assert_int_equal(allowed(b, 0, 150), 10 * MGW_RETRY_WINDOW_S);
	mgw_retry_budget_free(b);
}

/* The floor is a floor, not an allowance on top of the ratio. */
static void test_floor_is_max_not_sum(void **state)
{
	struct mgw_retry_budget *b = mgw_retry_budget_new(0.5, 10);

	(void)state;
	requests(b, 0, 1000);
	assert_int_equal(allowed(b, 0, 1000), 500);
	mgw_retry_budget_free(b);
}

static void test_window_slides(void **state)
{
	struct mgw_retry_budget *b = mgw_retry_budget_new(0.1, 0);
	uint64_t req, ret;

	(void)state;
	requests(b, 0, 100);                   /* second 0 */
	assert_int_equal(allowed(b, 0, 20), 10);
	requests(b, 3000, 100);                /* second 3 */
	assert_int_equal(allowed(b, 3000, 20), 10);
	/* second 10: second 0 left the window, second 3 is still in it */
	mgw_retry_budget_window(b, 10000, &req, &ret);
	assert_int_equal(req, 100);
	assert_int_equal(ret, 10);
	assert_int_equal(allowed(b, 10000, 5), 0);
	/* second 13: everything aged out; the bucket of second 3 is reused
	 * for second 13 and starts from zero */
	mgw_retry_budget_window(b, 13999, &req, &ret);
	assert_int_equal(req, 0);
	assert_int_equal(ret, 0);
	requests(b, 13000, 10);
	mgw_retry_budget_window(b, 13000, &req, &ret);
	assert_int_equal(req, 10);
	assert_int_equal(allowed(b, 13000, 5), 1);
	mgw_retry_budget_free(b);
}

static void test_zero_ratio_zero_floor(void **state)
{
	struct mgw_retry_budget *b = mgw_retry_budget_new(0, 0);

	(void)state;
	requests(b, 0, 10000);
	assert_int_equal(allowed(b, 0, 10), 0);
	mgw_retry_budget_free(b);
}

#define NTHREADS 4
#define PER_THREAD 50000

static void *hammer(void *p)
{
	struct mgw_retry_budget *b = p;

	for (int i = 0; i < PER_THREAD; i++)
		mgw_retry_budget_request(b, 42000);
	return NULL;
}

static void test_threads(void **state)
{
	struct mgw_retry_budget *b = mgw_retry_budget_new(0.01, 0);
	pthread_t th[NTHREADS];
	uint64_t req, ret;

	(void)state;
	mgw_retry_budget_request(b, 42000); /* the bucket is current */
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, b), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	mgw_retry_budget_window(b, 42000, &req, &ret);
	assert_int_equal(req, NTHREADS * PER_THREAD + 1);
	assert_int_equal(allowed(b, 42000, 5000), (NTHREADS * PER_THREAD + 1) / 100);
	mgw_retry_budget_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_floor_is_max_not_sum),
		cmocka_unit_test(test_window_slides),
		cmocka_unit_test(test_zero_ratio_zero_floor),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
