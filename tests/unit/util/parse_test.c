/* parse_test.c - unit tests for src/util/parse.c: the value syntaxes that
 * flags and configuration files share must be strict and exact. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "util/decimal.h"
#include "util/parse.h"

static void test_duration_good(void **state)
{
	static const struct { const char *s; double v; } ok[] = {
		{"250ms", 0.25}, {"10s", 10}, {"2m", 120}, {"1h", 3600},
		{"1.5", 1.5}, {"0", 0}, {".5", 0.5}, {"0ms", 0}, {"30m", 1800},
		{"007s", 7}, {"1.", 1},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		double v = -1;
		assert_int_equal(mgw_parse_duration(ok[i].s, &v), 0);
		assert_true(v == ok[i].v);
	}
}

static void test_duration_bad(void **state)
{
	static const char *const bad[] = {
		"", "-1", "1x", "1 s", " 1", "+1", "0x10", "1e3", "inf", "nan",
		"1.2.3", "ms", "10S", "1hh", "s", ".", "1ms ", "1\n",
	};
	char huge[420];
	double v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mgw_parse_duration(bad[i], &v), MGW_EINVAL);
	assert_int_equal(mgw_parse_duration(NULL, &v), MGW_EINVAL);
	/* beyond DBL_MAX: must be refused, not turned into infinity */
	memset(huge, '9', 400);
	strcpy(huge + 400, "h");
	assert_int_equal(mgw_parse_duration(huge, &v), MGW_EINVAL);
	assert_true(v == 42); /* untouched on failure */
}

static void test_size_good(void **state)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{"4096", 4096}, {"0", 0}, {"64k", 65536}, {"64K", 65536},
		{"64KiB", 65536}, {"4M", 4u << 20}, {"4MiB", 4u << 20},
		{"1G", 1u << 30}, {"1GiB", 1u << 30},
		{"18446744073709551615", UINT64_MAX},
		{"17179869183G", 17179869183ULL << 30},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 1;
		assert_int_equal(mgw_parse_size(ok[i].s, &v), 0);
		assert_true(v == ok[i].v);
	}
}

static void test_size_bad(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1.5M", "1KB", "64kib", "1 KiB", "K",
		"18446744073709551616", "17179869184G", "16777216T",
		"0x10", "1e3", "4MiB ",
	};
	uint64_t v = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mgw_parse_size(bad[i], &v), MGW_EINVAL);
	assert_int_equal(mgw_parse_size(NULL, &v), MGW_EINVAL);
	assert_true(v == 7);
}

static void test_int(void **state)
{
	static const char *const bad[] = {
		"", "-", " 1", "+1", "1 ", "1a", "0x10", "1.0", "1e2",
		"9223372036854775808", "-9223372036854775809",
	};
	long long v = 0;

	(void)state;
	assert_int_equal(mgw_parse_int("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(mgw_parse_int("-5", -10, 10, &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(mgw_parse_int("0", 0, 0, &v), 0);
	assert_int_equal(mgw_parse_int("9223372036854775807", 0, INT64_MAX, &v),
	                 0);
	assert_true(v == INT64_MAX);
	/* bounds are inclusive, one past either end is refused */
	assert_int_equal(mgw_parse_int("100", 0, 100, &v), 0);
	assert_int_equal(mgw_parse_int("101", 0, 100, &v), MGW_EINVAL);
	assert_int_equal(mgw_parse_int("-1", 0, 100, &v), MGW_EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mgw_parse_int(bad[i], INT64_MIN, INT64_MAX, &v),
		                 MGW_EINVAL);
	assert_int_equal(mgw_parse_int(NULL, 0, 1, &v), MGW_EINVAL);
}

static void expect_hostport(const char *s, const char *host, uint16_t port)
{
	char h[64] = "";
	uint16_t p = 1;

	assert_int_equal(mgw_parse_hostport(s, h, sizeof(h), &p), 0);
	assert_string_equal(h, host);
	assert_int_equal(p, port);
}

static void test_hostport_good(void **state)
{
	(void)state;
	expect_hostport("127.0.0.1:8080", "127.0.0.1", 8080);
	expect_hostport("[::1]:443", "::1", 443);
	expect_hostport("[::]:0", "::", 0);
	expect_hostport(":9000", "0.0.0.0", 9000);
	expect_hostport("localhost:65535", "localhost", 65535);
	expect_hostport("[fe80::1%eth0]:80", "fe80::1%eth0", 80);
	expect_hostport("[2001:db8::17]:8443", "2001:db8::17", 8443);
}

static void test_hostport_bad(void **state)
{
	static const char *const bad[] = {
		"", "::1:80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
		"127.0.0.1:-1", "127.0.0.1:+80", "[::1]80", "[::1]", "[]:80",
		"a b:80", "host:80x", "[::1:80", "::1]:80", "a]:80", "ho\tst:1",
		"host: 80", "host:8 0", ":", "[::1]:",
	};
	char h[64];
	uint16_t p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mgw_parse_hostport(bad[i], h, sizeof(h), &p),
		                 MGW_EINVAL);
	assert_int_equal(mgw_parse_hostport(NULL, h, sizeof(h), &p), MGW_EINVAL);
	/* the host must fit with its NUL: "abcd" needs 5 bytes */
	assert_int_equal(mgw_parse_hostport("abcd:1", h, 4, &p), MGW_EINVAL);
	assert_int_equal(mgw_parse_hostport("abcd:1", h, 5, &p), 0);
	assert_string_equal(h, "abcd");
}

/* mgw_dec writes what printf("%llu") writes, NUL included. */
static void test_decimal(void **state)
{
	static const uint64_t v[] = {0, 1, 9, 10, 99, 100, 215, 65535,
	                             4294967296ULL, 18446744073709551615ULL};
	char got[MGW_DEC_BUF], want[32];
	(void)state;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = mgw_dec(got, v[i]);

		snprintf(want, sizeof(want), "%llu", (unsigned long long)v[i]);
		assert_string_equal(got, want);
		assert_int_equal(n, strlen(want));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_good),
		cmocka_unit_test(test_duration_bad),
		cmocka_unit_test(test_size_good),
		cmocka_unit_test(test_size_bad),
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_hostport_good),
		cmocka_unit_test(test_hostport_bad),
		cmocka_unit_test(test_decimal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
