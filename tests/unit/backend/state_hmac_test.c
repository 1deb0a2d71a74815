/* state_hmac_test.c - unit tests for src/backend/state_hmac.c: counters
 * carried in signed handles, continued by any store with the same key,
 * refused by a store with another key, and key file errors. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/state.h"
#include "core/errors.h"
#include "core/log.h"

struct outcome {
	int calls;
	int err;
	int64_t value;
	char handle[256];
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

static void run_create(struct mgw_be_store *s, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	s->ops->create(s, on_done, o);
	assert_int_equal(o->calls, 1);
}

static void run_incr(struct mgw_be_store *s, const char *h, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	s->ops->increment(s, h, on_done, o);
	assert_int_equal(o->calls, 1);
}

/* Writes a key file with the given contents; returns its path (static). */
static const char *key_file(const char *name, const char *text)
{
	static char path[2][256];
	static int which;
	char *p = path[which++ % 2];
	FILE *f;

	snprintf(p, 256, "/tmp/mgw-state-hmac-%ld-%s", (long)getpid(), name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

#define KEY1 "k1 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
#define KEY2 "k2 ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n"

static void test_shared_key_continues(void **state)
{
	char err[256];
	const char *f = key_file("a", "# test\n" KEY1);
	struct mgw_be_store *a = mgw_be_store_hmac_new(f, 3600, err, sizeof(err));
	struct mgw_be_store *b = mgw_be_store_hmac_new(f, 3600, err, sizeof(err));
	struct outcome c, o, o2;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	run_create(a, &c);
	assert_int_equal(c.err, 0);
	assert_int_equal(c.value, 0);
	assert_memory_equal(c.handle, "v1.k1.", 6);
	/* Replica b continues a's counter and hands out a successor. */
	run_incr(b, c.handle, &o);
	assert_int_equal(o.err, 0);
	assert_int_equal(o.value, 1);
	assert_true(o.handle[0] != '\0');
	assert_string_not_equal(o.handle, c.handle);
	run_incr(a, o.handle, &o2);
	assert_int_equal(o2.err, 0);
	assert_int_equal(o2.value, 2);
	/* Handles are values: the old one still says 0 (no server state). */
	run_incr(a, c.handle, &o);
	assert_int_equal(o.value, 1);
	mgw_be_store_free(a);
	mgw_be_store_free(b);
	unlink(f);
}

static void test_rotation_and_foreign_key(void **state)
{
	char err[256];
	const char *f1 = key_file("one", KEY1);
	const char *f21 = key_file("rot", KEY2 KEY1);
	struct mgw_be_store *old = mgw_be_store_hmac_new(f1, 3600, err, sizeof(err));
	struct mgw_be_store *rot = mgw_be_store_hmac_new(f21, 3600, err, sizeof(err));
	struct outcome c, o;
	char h[256];

	(void)state;
	assert_non_null(old);
	assert_non_null(rot);
	run_create(old, &c);
	/* The rotated store still verifies k1 and signs with k2. */
	run_incr(rot, c.handle, &o);
	assert_int_equal(o.err, 0);
	assert_memory_equal(o.handle, "v1.k2.", 6);
	strcpy(h, o.handle);
	/* The old store does not know k2. */
	run_incr(old, h, &o);
	assert_int_equal(o.err, MGW_EAUTH);
	/* Tampering with the last character of the MAC. */
	h[strlen(h) - 1] = h[strlen(h) - 1] == 'A' ? 'B' : 'A';
	run_incr(rot, h, &o);
	assert_int_equal(o.err, MGW_EAUTH);
	run_incr(rot, "not a handle", &o);
	assert_int_equal(o.err, MGW_EAUTH);
	mgw_be_store_free(old);
	mgw_be_store_free(rot);
	unlink(f1);
	unlink(f21);
}

static void test_random_key(void **state)
{
	char err[256];
	struct mgw_be_store *a, *b;
	struct outcome c, o;
	json_t *d = json_object();

	(void)state;
	mgw_log_set_level(MGW_LOG_ERROR); /* the expected warning */
	a = mgw_be_store_hmac_new(NULL, 3600, err, sizeof(err));
	b = mgw_be_store_hmac_new(NULL, 3600, err, sizeof(err));
	mgw_log_set_level(MGW_LOG_INFO);
	assert_non_null(a);
	assert_non_null(b);
	run_create(a, &c);
	run_incr(a, c.handle, &o);
	assert_int_equal(o.value, 1);
	/* Two random keys share the kid "k0" but not the key. */
	run_incr(b, c.handle, &o);
	assert_int_equal(o.err, MGW_EAUTH);
	a->ops->describe(a, d);
	assert_true(json_is_true(json_object_get(d, "random_key")));
	json_decref(d);
	mgw_be_store_free(a);
	mgw_be_store_free(b);
}

static void test_bad_key_file(void **state)
{
	char err[256] = "";
	const char *f = key_file("bad", "k1 nothex\n");

	(void)state;
	assert_null(mgw_be_store_hmac_new("/nonexistent/mgw-keys", 3600, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/mgw-keys"));
	err[0] = '\0';
	assert_null(mgw_be_store_hmac_new(f, 3600, err, sizeof(err)));
	assert_true(err[0] != '\0');
	unlink(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_key_continues),
		cmocka_unit_test(test_rotation_and_foreign_key),
		cmocka_unit_test(test_random_key),
		cmocka_unit_test(test_bad_key_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
