/* state_memory_test.c - unit tests for src/backend/state_memory.c: the
 * in-replica handle map (create, increment, unknown handles, the size
 * bound, expiry by sweep). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/state.h"
#include "core/errors.h"
#include "util/time.h"

struct outcome {
	int calls;
	int err;
	int64_t value;
	char handle[128];
};

static void on_done(int err, int64_t value, const char *handle, void *arg)
{
	struct outcome *o = arg;

	o->calls++;
	o->err = err;
	o->value = value;
	o->handle[0] = '\0';
	if (handle)
		strncpy(o->handle, handle, sizeof(o->handle) - 1);
}

static void create(struct mgw_be_store *s, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	s->ops->create(s, on_done, o);
	assert_int_equal(o->calls, 1); /* memory answers synchronously */
}

static void incr(struct mgw_be_store *s, const char *h, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	s->ops->increment(s, h, on_done, o);
	assert_int_equal(o->calls, 1);
}

static void test_counter(void **state)
{
	struct mgw_be_store *s = mgw_be_store_memory_new(3600, 100);
	struct outcome c, o, c2;
	char h[128];

	(void)state;
	assert_non_null(s);
	assert_string_equal(s->ops->name, "memory");
	create(s, &c);
	assert_int_equal(c.err, 0);
	/* 128 random bits, hex, behind a short prefix. */
	assert_int_equal(strlen(c.handle), 2 + 32);
	strcpy(h, c.handle);
	incr(s, h, &o);
	assert_int_equal(o.err, 0);
	assert_int_equal(o.value, 1);
	incr(s, h, &o);
	assert_int_equal(o.value, 2);
	/* A second counter is independent and has another handle. */
	create(s, &c2);
	assert_string_not_equal(c2.handle, h);
	incr(s, c2.handle, &o);
	assert_int_equal(o.value, 1);
	incr(s, h, &o);
	assert_int_equal(o.value, 3);
	mgw_be_store_free(s);
}

static void test_unknown_handle(void **state)
{
	struct mgw_be_store *a = mgw_be_store_memory_new(3600, 100);
	struct mgw_be_store *b = mgw_be_store_memory_new(3600, 100);
	struct outcome c, o;

	(void)state;
	create(a, &c);
	/* Another replica's map does not know the handle: a handle loss. */
	incr(b, c.handle, &o);
	assert_int_equal(o.err, MGW_ENOTFOUND);
	incr(a, "m_00000000000000000000000000000000", &o);
	assert_int_equal(o.err, MGW_ENOTFOUND);
	incr(a, "", &o);
	assert_int_equal(o.err, MGW_ENOTFOUND);
	mgw_be_store_free(a);
	mgw_be_store_free(b);
}

static void test_limit(void **state)
{
	struct mgw_be_store *s = mgw_be_store_memory_new(3600, 3);
	struct outcome o;

	(void)state;
	for (int i = 0; i < 3; i++) {
		create(s, &o);
		assert_int_equal(o.err, 0);
	}
	create(s, &o);
	assert_int_equal(o.err, MGW_ELIMIT);
	mgw_be_store_free(s);
}

static void test_sweep_expires(void **state)
{
	struct mgw_be_store *s = mgw_be_store_memory_new(60, 10);
	struct outcome c, o;
	json_t *d = json_object();

	(void)state;
	create(s, &c);
	/* A sweep "now" keeps it; a sweep two minutes later drops it. */
	s->ops->sweep(s, mgw_now_ms());
	incr(s, c.handle, &o);
	assert_int_equal(o.err, 0);
	s->ops->sweep(s, mgw_now_ms() + 120000);
	incr(s, c.handle, &o);
	assert_int_equal(o.err, MGW_ENOTFOUND);
	s->ops->describe(s, d);
	assert_int_equal(json_integer_value(json_object_get(d, "handles")), 0);
	assert_int_equal(json_integer_value(json_object_get(d, "handles_expired")), 1);
	/* The slot is free again. */
	create(s, &o);
	assert_int_equal(o.err, 0);
	json_decref(d);
	mgw_be_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_unknown_handle),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_sweep_expires),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
