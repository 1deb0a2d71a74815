/* handle_hmac_test.c - unit tests for src/backend/handle_hmac.c: sealing
 * and opening counter handles (round trip, tampering, wrong key, expiry,
 * key rotation) and the key file loader. */
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

#include "backend/handle_hmac.h"
#include "core/errors.h"

#define NOW 1700000000LL

static struct mgw_hmac_key key_a(void)
{
	struct mgw_hmac_key k;

	memset(&k, 0, sizeof(k));
	strcpy(k.kid, "A");
	memset(k.key, 0xA5, sizeof(k.key));
	return k;
}

static struct mgw_hmac_key key_b(void)
{
	struct mgw_hmac_key k;

	memset(&k, 0, sizeof(k));
	strcpy(k.kid, "B");
	memset(k.key, 0x5B, sizeof(k.key));
	return k;
}

static void test_round_trip(void **state)
{
	static const int64_t vals[] = { 0, 1, -1, 42, INT64_MAX, INT64_MIN };
	struct mgw_hmac_key k = key_a();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		char *h = mgw_hmac_handle_seal(&k, vals[i], NOW + 60);
		int64_t v = 12345;
		size_t j;

		assert_non_null(h);
		assert_memory_equal(h, "v1.A.", 5);
		for (j = 0; h[j]; j++)
			assert_true(h[j] > 0x20 && h[j] < 0x7F);
		assert_int_equal(mgw_hmac_handle_open(&k, 1, h, NOW, &v), 0);
		assert_true(v == vals[i]);
		free(h);
	}
}

static void test_distinct_values_distinct_handles(void **state)
{
	struct mgw_hmac_key k = key_a();
	char *h1 = mgw_hmac_handle_seal(&k, 1, NOW + 60);
	char *h2 = mgw_hmac_handle_seal(&k, 2, NOW + 60);

	(void)state;
	assert_non_null(h1);
	assert_non_null(h2);
	assert_string_not_equal(h1, h2);
	free(h1);
	free(h2);
}

static void test_tamper_every_byte(void **state)
{
	struct mgw_hmac_key k = key_a();
	char *h = mgw_hmac_handle_seal(&k, 7, NOW + 60);
	size_t i, len;

	(void)state;
	assert_non_null(h);
	len = strlen(h);
	for (i = 0; i < len; i++) {
		static const char subst[] = { 'A', 'B', '0', '-', '_', '.', 'z' };
		char orig = h[i];
		size_t s;

		for (s = 0; s < sizeof(subst); s++) {
			int64_t v = 0;
			int rc;

			if (subst[s] == orig)
				continue;
			h[i] = subst[s];
			rc = mgw_hmac_handle_open(&k, 1, h, NOW, &v);
			if (rc != MGW_EAUTH)
				fail_msg("byte %zu '%c'->'%c': rc %d (handle %s)", i,
				         orig, subst[s], rc, h);
		}
		h[i] = orig;
	}
	/* truncation and extension */
	{
		int64_t v;
		char *longer = malloc(len + 2);

		assert_non_null(longer);
		memcpy(longer, h, len);
		longer[len] = 'A';
		longer[len + 1] = '\0';
		assert_int_equal(mgw_hmac_handle_open(&k, 1, longer, NOW, &v), MGW_EAUTH);
		free(longer);
		h[len - 1] = '\0';
		assert_int_equal(mgw_hmac_handle_open(&k, 1, h, NOW, &v), MGW_EAUTH);
	}
	free(h);
}

static void test_malformed(void **state)
{
	static const char *bad[] = {
		"", "v1", "v1.", "v1.A", "v1.A.", "v1.A..", "v2.A.AAAA.AAAA",
		"v1.A.AAAA.AAAA.AAAA", "v1.bad kid.AAAA.AAAA",
		"v1.ABCDEFGHIJKLMNOPQ.AAAA.AAAA", "garbage",
	};
	struct mgw_hmac_key k = key_a();
	char huge[1024];
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mgw_hmac_handle_open(&k, 1, bad[i], NOW, &v), MGW_EAUTH);
	assert_int_equal(mgw_hmac_handle_open(&k, 1, NULL, NOW, &v), MGW_EAUTH);
	memset(huge, 'A', sizeof(huge) - 1);
	memcpy(huge, "v1.A.", 5);
	huge[sizeof(huge) - 1] = '\0';
	assert_int_equal(mgw_hmac_handle_open(&k, 1, huge, NOW, &v), MGW_EAUTH);
}

static void test_wrong_key_and_unknown_kid(void **state)
{
	struct mgw_hmac_key a = key_a(), b = key_b(), a_other = key_b();
	char *h = mgw_hmac_handle_seal(&a, 5, NOW + 60);
	int64_t v;

	(void)state;
	assert_non_null(h);
	/* same kid, different secret */
	strcpy(a_other.kid, "A");
	assert_int_equal(mgw_hmac_handle_open(&a_other, 1, h, NOW, &v), MGW_EAUTH);
	/* no key with that kid */
	assert_int_equal(mgw_hmac_handle_open(&b, 1, h, NOW, &v), MGW_EAUTH);
	assert_int_equal(mgw_hmac_handle_open(&b, 0, h, NOW, &v), MGW_EAUTH);
	free(h);
}

static void test_expiry(void **state)
{
	struct mgw_hmac_key k = key_a();
	char *h = mgw_hmac_handle_seal(&k, 9, NOW);
	int64_t v = 0;

	(void)state;
	assert_non_null(h);
	assert_int_equal(mgw_hmac_handle_open(&k, 1, h, NOW, &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(mgw_hmac_handle_open(&k, 1, h, NOW + 1, &v), MGW_EEXPIRED);
	free(h);
	/* an expired handle with a bad MAC is EAUTH: the MAC is checked first */
	h = mgw_hmac_handle_seal(&k, 9, NOW - 10);
	assert_non_null(h);
	h[strlen(h) - 2] = h[strlen(h) - 2] == 'A' ? 'B' : 'A';
	assert_int_equal(mgw_hmac_handle_open(&k, 1, h, NOW, &v), MGW_EAUTH);
	free(h);
}

static void test_rotation(void **state)
{
	struct mgw_hmac_key a = key_a(), b = key_b();
	struct mgw_hmac_key ring[2];
	char *old = mgw_hmac_handle_seal(&a, 11, NOW + 60), *fresh;
	int64_t v = 0;

	(void)state;
	ring[0] = b; /* new signing key first */
	ring[1] = a; /* old key still verifies */
	assert_non_null(old);
	assert_int_equal(mgw_hmac_handle_open(ring, 2, old, NOW, &v), 0);
	assert_int_equal(v, 11);
	fresh = mgw_hmac_handle_seal(&ring[0], v + 1, NOW + 60);
	assert_non_null(fresh);
	assert_memory_equal(fresh, "v1.B.", 5);
	assert_int_equal(mgw_hmac_handle_open(ring, 2, fresh, NOW, &v), 0);
	assert_int_equal(v, 12);
	/* once A is retired, its handles no longer open */
	assert_int_equal(mgw_hmac_handle_open(ring, 1, old, NOW, &v), MGW_EAUTH);
	free(old);
	free(fresh);
}

static void test_random_key(void **state)
{
	struct mgw_hmac_key k1, k2;
	char *h;
	int64_t v;

	(void)state;
	assert_int_equal(mgw_hmac_key_random(&k1), 0);
	assert_int_equal(mgw_hmac_key_random(&k2), 0);
	assert_string_equal(k1.kid, "k0");
	assert_memory_not_equal(k1.key, k2.key, sizeof(k1.key));
	h = mgw_hmac_handle_seal(&k1, 3, NOW + 5);
	assert_non_null(h);
	assert_int_equal(mgw_hmac_handle_open(&k1, 1, h, NOW, &v), 0);
	/* same kid, other random secret: a different replica */
	assert_int_equal(mgw_hmac_handle_open(&k2, 1, h, NOW, &v), MGW_EAUTH);
	free(h);
}

/* Writes text to a fresh temporary file; returns its path (static). */
static const char *write_tmp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/mgw-hmac-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

#define HEX_A "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5"
#define HEX_B "5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B"

static void test_load_good(void **state)
{
	struct mgw_hmac_key keys[4], a = key_a();
	const char *p = write_tmp("# rotation: first key signs\n\n"
	                          "B " HEX_B "\n"
	                          "  A\t" HEX_A "  \r\n");
	char err[256] = "";
	char *h;
	int64_t v;
	int n;

	(void)state;
	n = mgw_hmac_keys_load(p, keys, 4, err, sizeof(err));
	unlink(p);
	if (n != 2)
		fail_msg("load returned %d: %s", n, err);
	assert_string_equal(keys[0].kid, "B");
	assert_string_equal(keys[1].kid, "A");
	assert_memory_equal(keys[1].key, a.key, sizeof(a.key));
	/* a handle sealed with the in-memory A opens with the loaded ring */
	h = mgw_hmac_handle_seal(&a, 77, NOW + 1);
	assert_non_null(h);
	assert_int_equal(mgw_hmac_handle_open(keys, 2, h, NOW, &v), 0);
	assert_int_equal(v, 77);
	free(h);
}

static void expect_load_error(const char *text, size_t max, int rc,
                              const char *needle)
{
	struct mgw_hmac_key keys[4];
	const char *p = write_tmp(text);
	char err[256] = "";
	int n = mgw_hmac_keys_load(p, keys, max, err, sizeof(err));

	unlink(p);
	assert_int_equal(n, rc);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
}

static void test_load_errors(void **state)
{
	struct mgw_hmac_key keys[1];
	char err[256];

	(void)state;
	expect_load_error("", 4, MGW_EINVAL, "no keys");
	expect_load_error("# only a comment\n", 4, MGW_EINVAL, "no keys");
	expect_load_error("A " HEX_A "\nA " HEX_B "\n", 4, MGW_EINVAL,
	                  ":2: duplicate key id 'A'");
	expect_load_error("A abcd\n", 4, MGW_EINVAL, ":1: key must be exactly 64");
	expect_load_error("A " HEX_A "0\n", 4, MGW_EINVAL, "exactly 64");
	expect_load_error("A zz5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a\n", 4, MGW_EINVAL, "non-hex");
	expect_load_error("\n\nbad/kid " HEX_A "\n", 4, MGW_EINVAL, ":3: key id");
	expect_load_error("ABCDEFGHIJKLMNOPQ " HEX_A "\n", 4, MGW_EINVAL, "key id");
	expect_load_error("A " HEX_A " extra\n", 4, MGW_EINVAL, "extra text");
	expect_load_error("A " HEX_A "\nB " HEX_B "\n", 1, MGW_ELIMIT, "more than 1");
	assert_int_equal(mgw_hmac_keys_load("/nonexistent/mgw-keys", keys, 1, err,
	                                    sizeof(err)), MGW_EIO);
	assert_non_null(strstr(err, "/nonexistent/mgw-keys"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_distinct_values_distinct_handles),
		cmocka_unit_test(test_tamper_every_byte),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_wrong_key_and_unknown_kid),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_random_key),
		cmocka_unit_test(test_load_good),
		cmocka_unit_test(test_load_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
