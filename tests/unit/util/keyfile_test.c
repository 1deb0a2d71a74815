/* keyfile_test.c - unit tests for src/util/keyfile.c: the "KID HEX64"
 * format (comments, blanks, CRLF), its errors with file:line, the key
 * count limit, key id rules and random keys. */
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

#include "core/errors.h"
#include "util/keyfile.h"

#define HEX_A "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF"
#define HEX_B "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff01"

static char path[64];
static char err[512];

static void write_file(const char *text)
{
	FILE *f;
	int fd;

	strcpy(path, "/tmp/mgw-keyfile-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
}

static int load(const char *text, struct mgw_key256 *keys, size_t max)
{
	int n;

	write_file(text);
	err[0] = '\0';
	n = mgw_keyfile_load(path, keys, max, err, sizeof(err));
	unlink(path);
	return n;
}

static void test_valid(void **state)
{
	struct mgw_key256 k[4];

	(void)state;
	assert_int_equal(load("# keys\n\n  current " HEX_A "  \r\n"
	                      "\told\t" HEX_B "\n", k, 4), 2);
	assert_string_equal(k[0].kid, "current");
	assert_int_equal(k[0].key[0], 0x00);
	assert_int_equal(k[0].key[1], 0x11);
	assert_int_equal(k[0].key[31], 0xff);
	assert_string_equal(k[1].kid, "old");
	assert_int_equal(k[1].key[31], 0x01);
	/* No final newline. */
	assert_int_equal(load("k " HEX_A, k, 4), 1);
}

static void expect_error(const char *text, size_t max, int rc,
                         const char *msg)
{
	struct mgw_key256 k[4];
	char want[256];

	assert_int_equal(load(text, k, max), rc);
	snprintf(want, sizeof(want), "%s%s", path, msg);
	if (strcmp(err, want) != 0)
		fail_msg("expected '%s', got '%s'", want, err);
}

static void test_errors(void **state)
{
	char longline[700];

	(void)state;
	expect_error("", 4, MGW_EINVAL, ": no keys");
	expect_error("# only comments\n", 4, MGW_EINVAL, ": no keys");
	expect_error("a " HEX_A "\na " HEX_B "\n", 4, MGW_EINVAL,
	             ":2: duplicate key id 'a'");
	expect_error("a 0011\n", 4, MGW_EINVAL,
	             ":1: key must be exactly 64 hex digits (256 bits)");
	expect_error("a " HEX_A "00\n", 4, MGW_EINVAL,
	             ":1: key must be exactly 64 hex digits (256 bits)");
	expect_error("\na g0112233445566778899aabbccddeeff"
	             "00112233445566778899aabbccddeeff\n", 4, MGW_EINVAL,
	             ":2: key has a non-hex digit");
	expect_error("bad.kid " HEX_A "\n", 4, MGW_EINVAL,
	             ":1: key id must be 1-16 characters of [A-Za-z0-9_-]");
	expect_error("abcdefghijklmnopq " HEX_A "\n", 4, MGW_EINVAL,
	             ":1: key id must be 1-16 characters of [A-Za-z0-9_-]");
	expect_error("a " HEX_A " extra\n", 4, MGW_EINVAL,
	             ":1: expected \"KID HEX64\", found extra text");
	expect_error("a " HEX_A "\nb " HEX_B "\n", 1, MGW_ELIMIT,
	             ":2: more than 1 keys");
	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	expect_error(longline, 4, MGW_EINVAL, ":1: line too long");
}

static void test_missing_file(void **state)
{
	struct mgw_key256 k;

	(void)state;
	assert_int_equal(mgw_keyfile_load("/nonexistent/mgw-keys", &k, 1, err,
	                                  sizeof(err)), MGW_EIO);
	assert_non_null(strstr(err, "/nonexistent/mgw-keys: "));
}

static void test_kid_and_random(void **state)
{
	struct mgw_key256 a, b;

	(void)state;
	assert_true(mgw_kid_valid("a", 1));
	assert_true(mgw_kid_valid("A-z_09", 6));
	assert_true(mgw_kid_valid("abcdefghijklmnop", 16));
	assert_false(mgw_kid_valid("abcdefghijklmnopq", 17));
	assert_false(mgw_kid_valid("", 0));
	assert_false(mgw_kid_valid("a.b", 3));
	assert_false(mgw_kid_valid("a b", 3));
	assert_int_equal(mgw_keyfile_random(&a, "r0"), 0);
	assert_int_equal(mgw_keyfile_random(&b, "r0"), 0);
	assert_string_equal(a.kid, "r0");
	assert_memory_not_equal(a.key, b.key, sizeof(a.key));
	assert_int_equal(mgw_keyfile_random(&a, "no way"), MGW_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_kid_and_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
