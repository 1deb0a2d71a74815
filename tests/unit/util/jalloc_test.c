/* jalloc_test.c - the per-thread cache of jansson's small blocks
 * (src/util/jalloc.c): a freed block is reused by the next value of its
 * size class, a json_dumps result is still plain malloc memory (free()
 * takes it), the cap per class holds, values made on one thread and
 * freed on another are fine, values built and parsed through the
 * cache are intact, and a trim frees the blocks no allocation took for a
 * whole period, keeping the ones that were used. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/jalloc.h"

static int setup(void **state)
{
	(void)state;
	return mgw_jalloc_install();
}

static void test_block_reused(void **state)
{
	json_t *a, *b;

	(void)state;
	if (!mgw_jalloc_active())
		skip(); /* AddressSanitizer build: the cache is off */
	a = json_integer(5); /* one block */
	assert_non_null(a);
	json_decref(a);
	b = json_integer(6);
	assert_ptr_equal(a, b); /* the same block, from the free list */
	assert_int_equal(json_integer_value(b), 6);
	json_decref(b);
}

static void test_dumps_is_free_able(void **state)
{
	json_t *o = json_pack("{s:i, s:s, s:[i,i]}", "a", 1, "b", "two", "c", 3, 4);
	char *text;

	(void)state;
	assert_non_null(o);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"a\":1,\"b\":\"two\",\"c\":[3,4]}");
	free(text); /* what the rest of the code does */
	json_decref(o);
}

static void test_many_values_intact(void **state)
{
	enum { N = 3000 };
	json_t **v = calloc(N, sizeof(*v));
	json_error_t err;

	(void)state;
	assert_non_null(v);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			char buf[96];
			/* a value of i % 40 + 1 characters: i, then padding */
			int n = snprintf(buf, sizeof(buf), "{\"k%d\":\"%d", i, i);
			int want = (int)strlen(buf) - (int)(strchr(buf, ':') - buf) - 2;
			for (; want < i % 40 + 1; want++)
				buf[n++] = 'x';
			buf[n++] = '"';
			buf[n++] = '}';
			buf[n] = 0;
			v[i] = json_loads(buf, 0, &err);
			assert_non_null(v[i]);
		}
		for (int i = 0; i < N; i++) {
			char key[16];
			const char *s;

			snprintf(key, sizeof(key), "k%d", i);
			s = json_string_value(json_object_get(v[i], key));
			assert_non_null(s);
			assert_true(strlen(s) >= (size_t)(i % 40 + 1));
			assert_true(strlen(s) <= (size_t)(i % 40 + 1) + 5);
			assert_int_equal(atoi(s), i);
		}
		for (int i = 0; i < N; i++)
			json_decref(v[i]);
	}
	free(v);
}

static void *make_values(void *arg)
{
	json_t **out = arg;

	for (int i = 0; i < 100; i++)
		out[i] = json_pack("{s:s}", "thread", "made here");
	for (int i = 0; i < 50; i++) /* some freed here, on exit cached */
		json_decref(json_pack("[i,s]", i, "x"));
	return NULL;
}

static void test_other_thread(void **state)
{
	json_t *vals[100];
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, make_values, vals), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	for (int i = 0; i < 100; i++) {
		assert_string_equal(json_string_value(json_object_get(vals[i], "thread")),
		                    "made here");
		json_decref(vals[i]); /* freed on this thread */
	}
}

/* A burst of N values (one block each) freed together: the list keeps
 * them; a period that takes only `used` of them back ends with a trim
 * that frees the rest, and the next trim (no allocation between) the
 * rest of the list. */
static void test_trim_frees_unused(void **state)
{
	enum { N = 200, USED = 30 };
	json_t *v[N];
	unsigned base;
	size_t freed;

	(void)state;
	if (!mgw_jalloc_active())
		skip(); /* AddressSanitizer build: the cache is off */
	mgw_jalloc_release();
	(void)mgw_jalloc_trim();          /* a period starts, nothing cached */
	assert_int_equal(mgw_jalloc_cached(), 0);
	for (int i = 0; i < N; i++)
		v[i] = json_integer(i);
	for (int i = 0; i < N; i++)
		json_decref(v[i]);
	base = mgw_jalloc_cached();
	assert_int_equal(base, N);
	assert_int_equal(mgw_jalloc_trim(), 0); /* the period had no cache */
	for (int i = 0; i < USED; i++)    /* the next period takes USED back */
		v[i] = json_integer(i);
	for (int i = 0; i < USED; i++)
		json_decref(v[i]);
	freed = mgw_jalloc_trim();
	assert_int_equal(mgw_jalloc_cached(), USED);
	assert_true(freed >= (N - USED) * sizeof(void *));
	assert_int_equal(freed % 16, 0);
	assert_true(mgw_jalloc_trim() > 0); /* a period with none taken */
	assert_int_equal(mgw_jalloc_cached(), 0);
	assert_int_equal(mgw_jalloc_trim(), 0);
}

static int teardown(void **state)
{
	(void)state;
	mgw_jalloc_release();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_reused),
		cmocka_unit_test(test_dumps_is_free_able),
		cmocka_unit_test(test_many_values_intact),
		cmocka_unit_test(test_other_thread),
		cmocka_unit_test(test_trim_frees_unused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
