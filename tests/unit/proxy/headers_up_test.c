/* headers_up_test.c - unit tests for src/proxy/headers_up.c: the header
 * list sent upstream (order kept, hop-by-hop and Connection-named fields
 * removed, forwarding fields dropped or extended, Cookie joined for
 * HTTP/2) and upstream_auth (strip, static, passthrough). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/config-t.h"
#include "http/headers.h"
#include "proxy/headers_up.h"

/* Builds "name: value\n" lines of h for one comparison. */
static char *dump(const struct mgw_headers *h)
{
	size_t n = 1;
	char *s, *p;

	for (size_t i = 0; i < h->n; i++)
		n += h->v[i].name_len + h->v[i].value_len + 3;
	s = p = malloc(n);
	assert_non_null(s);
	for (size_t i = 0; i < h->n; i++)
		p += sprintf(p, "%s: %s\n", h->v[i].name, h->v[i].value);
	*p = '\0';
	return s;
}

static void expect(const struct mgw_headers *in, const struct mgw_serve_conf *c,
                   const char *peer, int tls, const char *auth, int h2,
                   const char *want)
{
	struct mgw_headers out;
	char *got;

	mgw_headers_init(&out);
	assert_int_equal(mgw_proxy_build_headers(&out, in, c, peer, tls, auth, h2), 0);
	got = dump(&out);
	assert_string_equal(got, want);
	free(got);
	mgw_headers_deinit(&out);
}

static void add(struct mgw_headers *h, const char *n, const char *v)
{
	assert_int_equal(mgw_headers_adds(h, n, v), 0);
}

static void test_end_to_end_kept_in_order(void **state)
{
	struct mgw_serve_conf c = {0};
	struct mgw_headers in;

	(void)state;
	mgw_headers_init(&in);
	add(&in, "Host", "gw.example:8080");
	add(&in, "MCP-Protocol-Version", "2026-07-28");
	add(&in, "Connection", "keep-alive, X-Secret-Hop");
	add(&in, "Mcp-Method", "tools/call");
	add(&in, "Mcp-Name", "=?base64?SGVsbG8=?=");
	add(&in, "X-Secret-Hop", "1");
	add(&in, "Keep-Alive", "timeout=5");
	add(&in, "Transfer-Encoding", "chunked");
	add(&in, "TE", "trailers");
	add(&in, "Upgrade", "h2c");
	add(&in, "Proxy-Connection", "keep-alive");
	add(&in, "Mcp-Param-Region", "eu-west-1");
	add(&in, "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
	add(&in, "Authorization", "Bearer t");
	add(&in, "Mcp-Session-Id", "stray");
	add(&in, "X-Unknown", "  spaced  ");
	add(&in, "Content-Length", "10");
	add(&in, "Expect", "100-continue");
	add(&in, "x-unknown", "second");
	/* forwarding off: exactly the end-to-end fields, same order, same
	 * bytes (names keep their case) */
	expect(&in, &c, "10.0.0.1:5555", 0, "gw.example:8080", 0,
	       "MCP-Protocol-Version: 2026-07-28\n"
	       "Mcp-Method: tools/call\n"
	       "Mcp-Name: =?base64?SGVsbG8=?=\n"
	       "Mcp-Param-Region: eu-west-1\n"
	       "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\n"
	       "Authorization: Bearer t\n"
	       "Mcp-Session-Id: stray\n"
	       "X-Unknown:   spaced  \n"
	       "x-unknown: second\n");
	mgw_headers_deinit(&in);
}

static void test_forwarded_untrusted(void **state)
{
	struct mgw_serve_conf c = {0};
	struct mgw_headers in;

	(void)state;
	c.add_forwarded = 1;
	mgw_headers_init(&in);
	add(&in, "X-Forwarded-For", "6.6.6.6");
	add(&in, "Accept", "application/json");
	add(&in, "Forwarded", "for=6.6.6.6");
	add(&in, "X-Forwarded-Proto", "https");
	add(&in, "X-Forwarded-Host", "evil");
	add(&in, "X-Real-IP", "6.6.6.6");
	/* the client's claims go; ours are appended */
	expect(&in, &c, "192.0.2.7:4711", 0, "mcp.example", 0,
	       "Accept: application/json\n"
	       "Forwarded: for=192.0.2.7;proto=http;host=\"mcp.example\"\n"
	       "X-Forwarded-For: 192.0.2.7\n");
	/* IPv6: quoted and bracketed in Forwarded, bare in X-Forwarded-For;
	 * TLS says https; no authority, no host= */
	expect(&in, &c, "[2001:db8::1]:443", 1, NULL, 0,
	       "Accept: application/json\n"
	       "Forwarded: for=\"[2001:db8::1]\";proto=https\n"
	       "X-Forwarded-For: 2001:db8::1\n");
	mgw_headers_deinit(&in);
}

static void test_forwarded_trusted(void **state)
{
	struct mgw_serve_conf c = {0};
	struct mgw_headers in;

	(void)state;
	c.add_forwarded = 1;
	c.trust_forwarded = 1;
	mgw_headers_init(&in);
	add(&in, "X-Forwarded-For", "203.0.113.1");
	add(&in, "Forwarded", "for=203.0.113.1");
	add(&in, "X-Forwarded-For", "198.51.100.2");
	add(&in, "Accept", "*/*");
	/* kept in place; the last X-Forwarded-For is extended, Forwarded
	 * gets a new element after the client's */
	expect(&in, &c, "192.0.2.7:1", 0, "a\"b", 0,
	       "X-Forwarded-For: 203.0.113.1\n"
	       "Forwarded: for=203.0.113.1\n"
	       "X-Forwarded-For: 198.51.100.2, 192.0.2.7\n"
	       "Accept: */*\n"
	       "Forwarded: for=192.0.2.7;proto=http;host=\"a\\\"b\"\n");
	/* trusted but add off: passed through untouched */
	c.add_forwarded = 0;
	expect(&in, &c, "192.0.2.7:1", 0, NULL, 0,
	       "X-Forwarded-For: 203.0.113.1\n"
	       "Forwarded: for=203.0.113.1\n"
	       "X-Forwarded-For: 198.51.100.2\n"
	       "Accept: */*\n");
	mgw_headers_deinit(&in);
}

static void test_h2_cookie_join(void **state)
{
	struct mgw_serve_conf c = {0};
	struct mgw_headers in;

	(void)state;
	mgw_headers_init(&in);
	add(&in, "cookie", "a=1");
	add(&in, "accept", "*/*");
	add(&in, "cookie", "b=2");
	add(&in, "cookie", "c=3");
	/* from HTTP/2: one field, at the first crumb's place */
	expect(&in, &c, "127.0.0.1:1", 0, NULL, 1,
	       "cookie: a=1; b=2; c=3\n"
	       "accept: */*\n");
	/* from HTTP/1.1 the fields are passed as they came */
	expect(&in, &c, "127.0.0.1:1", 0, NULL, 0,
	       "cookie: a=1\naccept: */*\ncookie: b=2\ncookie: c=3\n");
	mgw_headers_deinit(&in);
}

static void expect_auth(const struct mgw_headers *in,
                        enum mgw_upstream_auth_conf mode, const char *cred,
                        int want_rc, const char *want)
{
	struct mgw_headers out;
	char *got;

	mgw_headers_init(&out);
	assert_int_equal(mgw_proxy_upstream_auth(&out, in, mode, cred), want_rc);
	got = dump(want_rc == 1 ? &out : in);
	assert_string_equal(got, want);
	free(got);
	mgw_headers_deinit(&out);
}

static void test_upstream_auth(void **state)
{
	struct mgw_headers in, none;

	(void)state;
	mgw_headers_init(&in);
	mgw_headers_init(&none);
	assert_int_equal(mgw_headers_adds(&in, "Accept", "a"), 0);
	assert_int_equal(mgw_headers_adds(&in, "authorization", "Bearer client"), 0);
	assert_int_equal(mgw_headers_adds(&in, "Cookie", "c=1"), 0);
	assert_int_equal(mgw_headers_adds(&in, "Authorization", "Basic two"), 0);
	assert_int_equal(mgw_headers_adds(&in, "Proxy-Authorization", "Basic p"), 0);
	assert_int_equal(mgw_headers_adds(&none, "Accept", "a"), 0);
	/* strip: every Authorization goes, the rest stays in order (Cookie
	 * is the session's, not a token for this server: kept) */
	expect_auth(&in, MGW_UPAUTH_STRIP, NULL, 1, "Accept: a\nCookie: c=1\n");
	expect_auth(&none, MGW_UPAUTH_STRIP, NULL, 0, "Accept: a\n");
	/* static: the group's credential replaces the client's, or is added */
	expect_auth(&in, MGW_UPAUTH_STATIC, "Bearer gw", 1,
	            "Accept: a\nCookie: c=1\nAuthorization: Bearer gw\n");
	expect_auth(&none, MGW_UPAUTH_STATIC, "Bearer gw", 1,
	            "Accept: a\nAuthorization: Bearer gw\n");
	expect_auth(NULL, MGW_UPAUTH_STATIC, "Bearer gw", 1,
	            "Authorization: Bearer gw\n");
	/* passthrough: unchanged */
	expect_auth(&in, MGW_UPAUTH_PASSTHROUGH, NULL, 0,
	            "Accept: a\nauthorization: Bearer client\nCookie: c=1\n"
	            "Authorization: Basic two\nProxy-Authorization: Basic p\n");
	/* already the group's credential (a replay's kept headers): as is */
	mgw_headers_deinit(&none);
	mgw_headers_init(&none);
	assert_int_equal(mgw_headers_adds(&none, "Authorization", "Bearer gw"), 0);
	expect_auth(&none, MGW_UPAUTH_STATIC, "Bearer gw", 0,
	            "Authorization: Bearer gw\n");
	/* Proxy-Authorization alone is stripped too */
	mgw_headers_deinit(&none);
	mgw_headers_init(&none);
	assert_int_equal(mgw_headers_adds(&none, "proxy-authorization", "Basic p"), 0);
	assert_int_equal(mgw_headers_adds(&none, "Accept", "a"), 0);
	expect_auth(&none, MGW_UPAUTH_STRIP, NULL, 1, "Accept: a\n");
	mgw_headers_deinit(&in);
	mgw_headers_deinit(&none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_end_to_end_kept_in_order),
		cmocka_unit_test(test_forwarded_untrusted),
		cmocka_unit_test(test_forwarded_trusted),
		cmocka_unit_test(test_h2_cookie_join),
		cmocka_unit_test(test_upstream_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
