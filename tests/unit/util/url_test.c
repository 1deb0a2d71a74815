/* url_test.c - unit tests for src/util/url.c: the upstream URL shapes
 * that are accepted (with default ports and normalised prefixes) and the
 * ones refused, each with its reason. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "util/url.h"

static void test_good(void **state)
{
	static const struct {
		const char *s;
		int tls, ipv6;
		const char *host;
		unsigned port;
		const char *path, *auth;
	} ok[] = {
		{"http://127.0.0.1:9001", 0, 0, "127.0.0.1", 9001, "", "127.0.0.1:9001"},
		{"http://127.0.0.1:9001/", 0, 0, "127.0.0.1", 9001, "", "127.0.0.1:9001"},
		{"https://mcp.example.com", 1, 0, "mcp.example.com", 443, "",
		 "mcp.example.com:443"},
		{"http://backend", 0, 0, "backend", 80, "", "backend:80"},
		{"HTTP://Host-1.internal:8080/a/b//", 0, 0, "Host-1.internal", 8080,
		 "/a/b", "Host-1.internal:8080"},
		{"http://[::1]:9002/tenant", 0, 1, "::1", 9002, "/tenant", "[::1]:9002"},
		{"https://[2001:db8::1]", 1, 1, "2001:db8::1", 443, "",
		 "[2001:db8::1]:443"},
		{"http://my_svc:65535/x", 0, 0, "my_svc", 65535, "/x", "my_svc:65535"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct mgw_url u;
		char why[96] = "", auth[300];

		if (mgw_url_parse(ok[i].s, &u, why, sizeof(why)) != 0)
			fail_msg("%s: %s", ok[i].s, why);
		assert_int_equal(u.tls, ok[i].tls);
		assert_int_equal(u.ipv6, ok[i].ipv6);
		assert_string_equal(u.host, ok[i].host);
		assert_int_equal(u.port, ok[i].port);
		assert_string_equal(u.path, ok[i].path);
		assert_string_equal(mgw_url_authority(&u, auth, sizeof(auth)),
		                    ok[i].auth);
	}
}

static void test_bad(void **state)
{
	static const struct { const char *s, *why; } bad[] = {
		{"127.0.0.1:9001", "must start with http:// or https://"},
		{"ftp://host", "must start with http:// or https://"},
		{"http://", "has no host"},
		{"http://:80", "has no host"},
		{"http:///mcp", "has no host"},
		{"http://host:0", "port must be 1 to 65535"},
		{"http://host:65536", "port must be 1 to 65535"},
		{"http://host:", "port must be 1 to 65535"},
		{"http://host:8o", "port must be 1 to 65535"},
		{"http://host:-1", "port must be 1 to 65535"},
		{"http://user:pw@host", "must not contain user information"},
		{"http://host/mcp?x=1", "must not have a query or fragment"},
		{"http://host/#f", "must not have a query or fragment"},
		{"http://ho st", "must be visible ASCII without spaces"},
		{"http://host\n", "must be visible ASCII without spaces"},
		{"http://h\xc3\xa9", "must be visible ASCII without spaces"},
		{"http://[::1", "unterminated '[' in the host"},
		{"http://[::1]x", "unexpected text after ']'"},
		{"http://[::g]:1", "invalid IPv6 address"},
		{"http://[]:1", "has no host"},
		{"http://a:b:c", "port must be 1 to 65535"},
		{"http://h*st", "host must be a name, IPv4 or [IPv6] address"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mgw_url u;
		char why[96] = "";

		if (mgw_url_parse(bad[i].s, &u, why, sizeof(why)) != MGW_EINVAL)
			fail_msg("accepted: %s", bad[i].s);
		assert_string_equal(why, bad[i].why);
	}
	/* why may be NULL */
	{
		struct mgw_url u;
		assert_int_equal(mgw_url_parse("x", &u, NULL, 0), MGW_EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
