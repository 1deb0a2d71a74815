/* checks_test.c - unit tests for src/backend/checks.c: Accept,
 * Content-Type and Origin parsing of the reference server. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backend/checks.h"

#define JSON "application/json"
#define SSE "text/event-stream"

static void test_accept(void **state)
{
	(void)state;
	/* What MCP clients send. */
	assert_true(mgw_be_accept_admits("application/json, text/event-stream", JSON));
	assert_true(mgw_be_accept_admits("application/json, text/event-stream", SSE));
	assert_true(mgw_be_accept_admits("text/event-stream,application/json", JSON));
	/* Case, whitespace and parameters. */
	assert_true(mgw_be_accept_admits(" Application/JSON ;q=0.9 ", JSON));
	assert_true(mgw_be_accept_admits("text/html;level=1, text/event-stream; charset=utf-8", SSE));
	/* Wildcards are accepted (lenient on purpose). */
	assert_true(mgw_be_accept_admits("*/*", JSON));
	assert_true(mgw_be_accept_admits("*/*", SSE));
	assert_true(mgw_be_accept_admits("text/*", SSE));
	assert_true(mgw_be_accept_admits("application/*", JSON));
	/* Missing types. */
	assert_false(mgw_be_accept_admits("application/json", SSE));
	assert_false(mgw_be_accept_admits("text/event-stream", JSON));
	assert_false(mgw_be_accept_admits("text/*", JSON));
	assert_false(mgw_be_accept_admits("", JSON));
	assert_false(mgw_be_accept_admits("application/jsonx", JSON));
	assert_false(mgw_be_accept_admits("application/json-seq", JSON));
	assert_false(mgw_be_accept_admits("application", JSON));
	/* q=0 means "not acceptable". */
	assert_false(mgw_be_accept_admits("application/json;q=0, text/event-stream", JSON));
	assert_false(mgw_be_accept_admits("*/*; q=0.000", JSON));
	assert_true(mgw_be_accept_admits("application/json;q=0.001", JSON));
	/* A malformed q is not a zero. */
	assert_true(mgw_be_accept_admits("application/json;q=", JSON));
	assert_true(mgw_be_accept_admits("application/json;q=x", JSON));
}

static void test_content_type(void **state)
{
	(void)state;
	assert_true(mgw_be_media_type_is("application/json", JSON));
	assert_true(mgw_be_media_type_is("application/json; charset=utf-8", JSON));
	assert_true(mgw_be_media_type_is("  APPLICATION/Json  ;charset=UTF-8", JSON));
	assert_false(mgw_be_media_type_is("text/plain", JSON));
	assert_false(mgw_be_media_type_is("application/json5", JSON));
	assert_false(mgw_be_media_type_is("application/", JSON));
	assert_false(mgw_be_media_type_is("", JSON));
}

static void test_origin(void **state)
{
	(void)state;
	assert_true(mgw_be_origin_allowed("http://localhost"));
	assert_true(mgw_be_origin_allowed("http://localhost:3000"));
	assert_true(mgw_be_origin_allowed("https://127.0.0.1:8443"));
	assert_true(mgw_be_origin_allowed("http://[::1]:80"));
	assert_true(mgw_be_origin_allowed("HTTP://LOCALHOST"));
	assert_true(mgw_be_origin_allowed("http://localhost/"));
	/* Foreign hosts, including look-alikes (DNS rebinding). */
	assert_false(mgw_be_origin_allowed("http://evil.example"));
	assert_false(mgw_be_origin_allowed("http://localhost.evil.example"));
	assert_false(mgw_be_origin_allowed("http://127.0.0.1.nip.io"));
	assert_false(mgw_be_origin_allowed("http://localhost@evil.example"));
	assert_false(mgw_be_origin_allowed("http://localhost:80@evil.example"));
	assert_false(mgw_be_origin_allowed("http://127.0.0.2"));
	/* Malformed or opaque origins. */
	assert_false(mgw_be_origin_allowed("null"));
	assert_false(mgw_be_origin_allowed(""));
	assert_false(mgw_be_origin_allowed("localhost"));
	assert_false(mgw_be_origin_allowed("file://localhost"));
	assert_false(mgw_be_origin_allowed("http://localhost:"));
	assert_false(mgw_be_origin_allowed("http://localhost:123456"));
	assert_false(mgw_be_origin_allowed("http://localhost/path"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept),
		cmocka_unit_test(test_content_type),
		cmocka_unit_test(test_origin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
