/* bearer_test.c - unit tests for src/auth/bearer.c: the bearer token of
 * an Authorization value (RFC 6750 section 2.1) and the Protected
 * Resource Metadata URL of a resource (RFC 9728 section 3.1). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/bearer.h"

static void test_bearer(void **state)
{
	static const struct {
		const char *v;
		enum mgw_bearer want;
		const char *tok;
	} cases[] = {
		{"Bearer abc", MGW_BEARER_OK, "abc"},
		{"bearer abc", MGW_BEARER_OK, "abc"},
		{"BEARER  a.b-c_d~e+f/g==", MGW_BEARER_OK, "a.b-c_d~e+f/g=="},
		{" \tBearer\tabc \t", MGW_BEARER_OK, "abc"},
		{"Bearer eyJh.eyJz.sig", MGW_BEARER_OK, "eyJh.eyJz.sig"},
		{"Basic dXNlcjpwYXNz", MGW_BEARER_NONE, NULL},
		{"Bearerabc", MGW_BEARER_NONE, NULL},
		{"", MGW_BEARER_NONE, NULL},
		{"Digest x", MGW_BEARER_NONE, NULL},
		{"Bearer", MGW_BEARER_MALFORMED, NULL},
		{"Bearer   ", MGW_BEARER_MALFORMED, NULL},
		{"Bearer a b", MGW_BEARER_MALFORMED, NULL},
		{"Bearer a=b", MGW_BEARER_MALFORMED, NULL},
		{"Bearer =abc", MGW_BEARER_MALFORMED, NULL},
		{"Bearer ==", MGW_BEARER_MALFORMED, NULL},
		{"Bearer ab%cd", MGW_BEARER_MALFORMED, NULL},
		{"Bearer ab,cd", MGW_BEARER_MALFORMED, NULL},
		{"Bearer \"abc\"", MGW_BEARER_MALFORMED, NULL},
		{"Bearer ab\x7f", MGW_BEARER_MALFORMED, NULL},
		{"Bearer \xc3\xa9", MGW_BEARER_MALFORMED, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *tok = NULL;
		size_t n = 0;
		enum mgw_bearer got = mgw_bearer_parse(cases[i].v, &tok, &n);

		if (got != cases[i].want)
			fail_msg("'%s': got %d, want %d", cases[i].v, got,
			         cases[i].want);
		if (cases[i].tok) {
			assert_int_equal(n, strlen(cases[i].tok));
			assert_memory_equal(tok, cases[i].tok, n);
		}
	}
}

static void test_prm_url(void **state)
{
	static const struct {
		const char *resource, *url, *path;
	} cases[] = {
		{"https://mcp.example/mcp",
		 "https://mcp.example/.well-known/oauth-protected-resource/mcp",
		 "/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example",
		 "https://mcp.example/.well-known/oauth-protected-resource",
		 "/.well-known/oauth-protected-resource"},
		{"https://mcp.example/",
		 "https://mcp.example/.well-known/oauth-protected-resource",
		 "/.well-known/oauth-protected-resource"},
		{"http://127.0.0.1:8080/a/b/",
		 "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b",
		 "/.well-known/oauth-protected-resource/a/b"},
		{"https://[::1]:8443/mcp",
		 "https://[::1]:8443/.well-known/oauth-protected-resource/mcp",
		 "/.well-known/oauth-protected-resource/mcp"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = NULL;
		char *u = mgw_prm_url(cases[i].resource, &path);

		assert_non_null(u);
		assert_string_equal(u, cases[i].url);
		assert_string_equal(path, cases[i].path);
		free(u);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_prm_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
