/* cfgcheck_test.c - unit tests for src/core/cfgcheck.c: the string checks
 * shared by several modules' sections, with their exact reasons. */
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

#include "core/cfgcheck.h"

typedef int (*check_fn)(const char *s, char *why, size_t whylen);

static void ok(check_fn f, const char *s)
{
	char why[256] = "";

	assert_int_equal(f(s, why, sizeof(why)), 0);
	assert_string_equal(why, "");
}

static void bad(check_fn f, const char *s, const char *want)
{
	char why[256] = "";

	assert_int_equal(f(s, why, sizeof(why)), -1);
	assert_string_equal(why, want);
}

static void test_nonempty_and_word(void **state)
{
	char long_word[130];

	(void)state;
	ok(mgw_cfg_check_nonempty, " ");
	bad(mgw_cfg_check_nonempty, "", "must not be empty");
	ok(mgw_cfg_check_word, "replica-1:8080");
	bad(mgw_cfg_check_word, "a b", "must be visible ASCII without spaces");
	bad(mgw_cfg_check_word, "", "must be 1 to 128 characters long");
	memset(long_word, 'w', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	bad(mgw_cfg_check_word, long_word, "must be 1 to 128 characters long");
}

static void test_path(void **state)
{
	(void)state;
	ok(mgw_cfg_check_path, "/");
	ok(mgw_cfg_check_path, "/mcp/v1");
	bad(mgw_cfg_check_path, "mcp", "must start with '/' (at most 1024 bytes)");
	bad(mgw_cfg_check_path, "/a?b",
	    "must be visible ASCII without '?', '#' or spaces");
	bad(mgw_cfg_check_path, "/a b",
	    "must be visible ASCII without '?', '#' or spaces");
}

static void test_addresses(void **state)
{
	(void)state;
	ok(mgw_cfg_check_hostport, "127.0.0.1:80");
	ok(mgw_cfg_check_hostport, "[::1]:8080");
	ok(mgw_cfg_check_hostport, ":0");
	bad(mgw_cfg_check_hostport, "host",
	    "'host' is not HOST:PORT, [IPV6]:PORT or :PORT");
	ok(mgw_cfg_check_url, "http://127.0.0.1:9000/prefix");
	ok(mgw_cfg_check_url, "https://example.com");
	assert_int_equal(mgw_cfg_check_url("ftp://x", (char[64]){0}, 64), -1);
	ok(mgw_cfg_check_redis_url, "redis://127.0.0.1:6379");
	assert_int_equal(mgw_cfg_check_redis_url("http://x", (char[64]){0}, 64),
	                 -1);
	ok(mgw_cfg_check_sentinel, "127.0.0.1:26379");
	ok(mgw_cfg_check_sentinel, "[::1]:26379");
	bad(mgw_cfg_check_sentinel, "sentinel.local:26379",
	    "'sentinel.local:26379' must be IP:PORT (a numeric address)");
	bad(mgw_cfg_check_sentinel, "127.0.0.1:0",
	    "'127.0.0.1:0' must be IP:PORT (a numeric address)");
}

static void test_file(void **state)
{
	char path[] = "/tmp/mgw_cfgcheck_XXXXXX", why[256];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	ok(mgw_cfg_check_file, path);
	unlink(path);
	bad(mgw_cfg_check_file, "/tmp", "'/tmp' is not a regular file");
	assert_int_equal(mgw_cfg_check_file("/nonexistent/k", why, sizeof(why)),
	                 -1);
	assert_string_equal(why, "cannot read '/nonexistent/k': No such file "
	                    "or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nonempty_and_word),
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
