/* base64_test.c - unit tests for src/util/base64.c: RFC 4648 vectors,
 * round trips in both alphabets, and strict rejection of every
 * non-canonical form (they matter for SEP-2243 headers and sealed tokens). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/base64.h"

static const struct { const char *plain, *std, *url; } rfc[] = {
	{"", "", ""},
	{"f", "Zg==", "Zg"},
	{"fo", "Zm8=", "Zm8"},
	{"foo", "Zm9v", "Zm9v"},
	{"foob", "Zm9vYg==", "Zm9vYg"},
	{"fooba", "Zm9vYmE=", "Zm9vYmE"},
	{"foobar", "Zm9vYmFy", "Zm9vYmFy"},
};

static void expect_decode(const char *s, int url, const void *want,
                          size_t wantlen)
{
	size_t len = 12345;
	unsigned char *out = mgw_base64_decode(s, strlen(s), url, &len);

	assert_non_null(out);
	assert_int_equal(len, wantlen);
	assert_memory_equal(out, want, wantlen);
	assert_int_equal(out[len], '\0');
	free(out);
}

static void expect_reject(const char *s, size_t slen, int url)
{
	size_t len = 0;

	assert_null(mgw_base64_decode(s, slen, url, &len));
}

static void test_rfc4648_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		char *e = mgw_base64_encode(rfc[i].plain, strlen(rfc[i].plain), 0);
		char *u = mgw_base64_encode(rfc[i].plain, strlen(rfc[i].plain), 1);

		assert_string_equal(e, rfc[i].std);
		assert_string_equal(u, rfc[i].url);
		expect_decode(rfc[i].std, 0, rfc[i].plain, strlen(rfc[i].plain));
		expect_decode(rfc[i].url, 1, rfc[i].plain, strlen(rfc[i].plain));
		free(e);
		free(u);
	}
}

static void test_alphabets(void **state)
{
	static const unsigned char bytes[] = {0xfb, 0xff, 0xbf};
	char *e = mgw_base64_encode(bytes, 3, 0), *u = mgw_base64_encode(bytes, 3, 1);

	(void)state;
	assert_string_equal(e, "+/+/");
	assert_string_equal(u, "-_-_");
	expect_decode("+/+/", 0, bytes, 3);
	expect_decode("-_-_", 1, bytes, 3);
	/* each alphabet refuses the other's two extra characters */
	expect_reject("-_-_", 4, 0);
	expect_reject("+/+/", 4, 1);
	free(e);
	free(u);
}

/* Every length 0..66 (all three remainders many times), all byte values. */
static void test_round_trips(void **state)
{
	unsigned char buf[66];

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 97 + 13);
	for (size_t n = 0; n <= sizeof(buf); n++) {
		for (int url = 0; url <= 1; url++) {
			char *e = mgw_base64_encode(buf, n, url);
			size_t len;
			unsigned char *d;

			assert_non_null(e);
			assert_int_equal(strlen(e),
			                 url ? (n * 4 + 2) / 3 : 4 * ((n + 2) / 3));
			d = mgw_base64_decode(e, strlen(e), url, &len);
			assert_non_null(d);
			assert_int_equal(len, n);
			assert_memory_equal(d, buf, n);
			free(d);
			free(e);
		}
	}
}

static void test_reject_standard(void **state)
{
	static const char *const bad[] = {
		"Zg",       /* padding is required in the standard alphabet */
		"Zg=",      /* length not a multiple of 4 */
		"Z===",     /* three pads */
		"====",
		"=Zm9",     /* padding at the front */
		"Zm=v",     /* padding in the middle */
		"Zm9v\n",   /* whitespace */
		"Zm 9v",
		"Zm9v====",
		"Zh==",     /* non-zero trailing bits (4 bits) */
		"Zm9=",     /* non-zero trailing bits (2 bits) */
		"Zm9vY===", /* one sextet cannot make a byte */
		"Zm9\x80",  /* byte outside the alphabet */
		"Zm9.",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_reject(bad[i], strlen(bad[i]), 0);
	expect_reject("Zg\0=", 4, 0); /* embedded NUL */
}

static void test_reject_url(void **state)
{
	static const char *const bad[] = {
		"Zg==",   /* no padding in base64url */
		"Zm8=",
		"Z",      /* one sextet cannot make a byte */
		"Zm9vY",
		"Zh",     /* non-zero trailing bits */
		"Zm9",
		"Zm9v+A", /* standard-alphabet character */
		"Zm 9",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_reject(bad[i], strlen(bad[i]), 1);
	expect_reject("Zg\0A", 4, 1);
}

/* slen, not the NUL, bounds the input. */
static void test_length_bounds_input(void **state)
{
	(void)state;
	size_t len;
	unsigned char *d = mgw_base64_decode("Zm9vYmFyXXXX", 8, 0, &len);

	assert_non_null(d);
	assert_int_equal(len, 6);
	assert_memory_equal(d, "foobar", 6);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648_vectors),
		cmocka_unit_test(test_alphabets),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_reject_standard),
		cmocka_unit_test(test_reject_url),
		cmocka_unit_test(test_length_bounds_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
