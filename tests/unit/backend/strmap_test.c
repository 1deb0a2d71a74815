/* strmap_test.c - unit tests for src/backend/strmap.c: the string-keyed
 * map behind sessions, session counters and in-memory handles. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/strmap.h"

static void test_put_get_replace_del(void **state)
{
	struct mgw_strmap *m = mgw_strmap_new();
	int a = 1, b = 2;
	char key[8] = "alpha";

	(void)state;
	assert_non_null(m);
	assert_null(mgw_strmap_get(m, "alpha"));
	assert_int_equal(mgw_strmap_put(m, key, &a), 0);
	/* The key is copied: changing the caller's buffer changes nothing. */
	strcpy(key, "beta");
	assert_ptr_equal(mgw_strmap_get(m, "alpha"), &a);
	assert_null(mgw_strmap_get(m, "beta"));
	assert_int_equal(mgw_strmap_count(m), 1);
	assert_int_equal(mgw_strmap_put(m, "alpha", &b), 0);
	assert_ptr_equal(mgw_strmap_get(m, "alpha"), &b);
	assert_int_equal(mgw_strmap_count(m), 1);
	assert_ptr_equal(mgw_strmap_del(m, "alpha"), &b);
	assert_null(mgw_strmap_del(m, "alpha"));
	assert_null(mgw_strmap_get(m, "alpha"));
	assert_int_equal(mgw_strmap_count(m), 0);
	/* Empty key and prefixes are distinct keys. */
	assert_int_equal(mgw_strmap_put(m, "", &a), 0);
	assert_int_equal(mgw_strmap_put(m, "al", &b), 0);
	assert_ptr_equal(mgw_strmap_get(m, ""), &a);
	assert_ptr_equal(mgw_strmap_get(m, "al"), &b);
	assert_null(mgw_strmap_get(m, "a"));
	mgw_strmap_free(m);
	mgw_strmap_free(NULL);
}

/* Many entries force several grows; every one must stay reachable. */
static void test_many_entries(void **state)
{
	struct mgw_strmap *m = mgw_strmap_new();
	static int vals[5000];
	char key[32];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		vals[i] = i;
		assert_int_equal(mgw_strmap_put(m, key, &vals[i]), 0);
	}
	assert_int_equal(mgw_strmap_count(m), 5000);
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		int *v = mgw_strmap_get(m, key);
		assert_non_null(v);
		assert_int_equal(*v, i);
	}
	for (int i = 0; i < 5000; i += 2) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_ptr_equal(mgw_strmap_del(m, key), &vals[i]);
	}
	assert_int_equal(mgw_strmap_count(m), 2500);
	assert_null(mgw_strmap_get(m, "k0"));
	assert_non_null(mgw_strmap_get(m, "k1"));
	mgw_strmap_free(m);
}

struct visit {
	int seen;
	int sum;
};

/* Removes entries with an odd value, counts all. */
static int visit_odd(const char *key, void *value, void *arg)
{
	struct visit *v = arg;
	int x = *(int *)value;

	assert_non_null(key);
	v->seen++;
	v->sum += x;
	return x % 2;
}

static void test_foreach_removes(void **state)
{
	struct mgw_strmap *m = mgw_strmap_new();
	static int vals[100];
	struct visit v = {0, 0};
	char key[16];

	(void)state;
	for (int i = 0; i < 100; i++) {
		vals[i] = i;
		snprintf(key, sizeof(key), "%d", i);
		mgw_strmap_put(m, key, &vals[i]);
	}
	mgw_strmap_foreach(m, visit_odd, &v);
	assert_int_equal(v.seen, 100);
	assert_int_equal(v.sum, 4950);
	assert_int_equal(mgw_strmap_count(m), 50);
	assert_null(mgw_strmap_get(m, "1"));
	assert_non_null(mgw_strmap_get(m, "2"));
	v.seen = v.sum = 0;
	mgw_strmap_foreach(m, visit_odd, &v);
	assert_int_equal(v.seen, 50);
	assert_int_equal(mgw_strmap_count(m), 50);
	mgw_strmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_replace_del),
		cmocka_unit_test(test_many_entries),
		cmocka_unit_test(test_foreach_removes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
