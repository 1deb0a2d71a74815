/* h1_test.c - HTTP/1.x behaviour of the server layer (src/http/h1.c):
 * keep-alive, chunked bodies, smuggling attempts, limits, pipelining,
 * streamed responses and client aborts, over real loopback sockets. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/headers.h"
#include "http/server.h"
#include "util/time.h"
#include "testsrv.h"

static int setup(void **state)
{
	struct ts *t = calloc(1, sizeof(*t));
	struct mgw_http_limits lim;

	mgw_http_limits_default(&lim);
	lim.max_headers = 20;
	lim.max_header_bytes = 2048;
	lim.max_uri = 256;
	lim.max_body = 1000;
	ts_start(t, &lim, NULL);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct ts *t = *state;
	ts_stop(t);
	free(t);
	return 0;
}

#define REFUSE(t, req, status) tc_expect_refused(t, req, sizeof(req) - 1, status)

static void test_keepalive(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	assert_int_equal(tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n"), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "GET /echo\n");
	assert_string_equal(resp_header(&r, "content-length"), "10");
	assert_null(resp_header(&r, "connection"));
	assert_non_null(resp_header(&r, "date"));
	resp_free(&r);

	assert_int_equal(tc_sends(&c, "POST /echo?q=1 HTTP/1.1\r\nHost: a\r\n"
	                              "Content-Length: 5\r\n\r\nhello"), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "POST /echo\nhello");
	assert_string_equal(t->last_authority, "a");
	assert_int_equal(t->last_version, 11);
	resp_free(&r);
	assert_int_equal(t->handled, 2);
	assert_int_equal(mgw_http_server_connections(t->srv), 1);
	assert_int_equal(mgw_http_server_inflight(t->srv), 0);
	tc_close(&c);
}

/* absolute-form (RFC 9112 3.2.2): handed on as its origin-form, with the
 * URL's authority in place of Host; anything but http(s) URLs and
 * origin-form is 400. */
static void test_absolute_form(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;
	static const char *const bad[] = {
		"GET http://x:99999/echo HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET ftp://x/echo HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http://u:p@x/echo HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET echo HTTP/1.1\r\nHost: a\r\n\r\n",
	};

	tc_open(t, &c);
	assert_int_equal(tc_sends(&c, "GET http://example.com:8080/echo?x=1#f HTTP/1.1\r\n"
	                              "Host: other\r\n\r\n"), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "GET /echo\n");
	assert_string_equal(t->last_target, "/echo?x=1");
	assert_string_equal(t->last_authority, "example.com:8080");
	resp_free(&r);
	assert_int_equal(tc_sends(&c, "GET HTTP://[::1]:9/echo HTTP/1.1\r\nHost: a\r\n\r\n"), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(t->last_target, "/echo");
	assert_string_equal(t->last_authority, "[::1]:9");
	resp_free(&r);
	assert_int_equal(tc_sends(&c, "GET http://h HTTP/1.1\r\nHost: a\r\n\r\n"), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 404);
	assert_string_equal(t->last_target, "/");
	assert_string_equal(t->last_authority, "h");
	resp_free(&r);
	tc_close(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tc_expect_refused(t, bad[i], strlen(bad[i]), 400);
}

/* The layer drops hop-by-hop and Connection-named fields given by the
 * handler and sets Content-Length itself. */
static void test_response_fields(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(resp_header(&r, "x-kept"), "yes");
	assert_null(resp_header(&r, "x-secret"));
	assert_null(resp_header(&r, "keep-alive"));
	assert_null(resp_header(&r, "transfer-encoding"));
	assert_int_equal(r.chunked, 0);
	assert_string_equal(resp_header(&r, "content-length"), "10");
	assert_string_equal(resp_header(&r, "content-type"), "text/plain");
	resp_free(&r);
	tc_close(&c);
}

static void test_head(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	c.head = 1;
	tc_sends(&c, "HEAD /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	/* the length the body would have had: "HEAD /echo\n" */
	assert_string_equal(resp_header(&r, "content-length"), "11");
	resp_free(&r);
	/* nothing but the next response may follow on the connection */
	c.head = 0;
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "GET /echo\n");
	resp_free(&r);
	tc_close(&c);
}

static void test_chunked_body(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	tc_sends(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	             "5\r\nhello\r\n");
	tc_sends(&c, "7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "POST /echo\nhello, world");
	resp_free(&r);
	tc_close(&c);
}

static void test_smuggling(void **state)
{
	struct ts *t = *state;

	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
	          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	          "Content-Length: 3\r\n\r\n0\r\n\r\n", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
	          "Content-Length: 3\r\n\r\nabc", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", 400);
	/* beyond 64 bits: not a length at all (a smaller one is a 413) */
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: "
	          "18446744073709551616\r\n\r\nabc", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: "
	          "18446744073709551615\r\n\r\nabc", 413);
	/* obs-fold: a continuation line */
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nX-A: one\r\n two\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nX-A: one\r\n\ttwo\r\n\r\n", 400);
	/* bytes no field may hold */
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nX-A: a\x01" "b\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nX-A: a\x7f\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nX A: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nX-A : a\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nX-A: a\rb\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\nHost: a\n\n", 400);
	/* transfer codings other than exactly "chunked" */
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n"
	          "\r\n0\r\n\r\n", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
	REFUSE(t, "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
	/* chunk framing */
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	          "zz\r\nabc\r\n0\r\n\r\n", 400);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	          "3\r\nabcX\r\n0\r\n\r\n", 400);
	/* Host: required once on HTTP/1.1 */
	REFUSE(t, "GET /echo HTTP/1.1\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/2.0\r\nHost: a\r\n\r\n", 505);
	REFUSE(t, "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", 405);
	REFUSE(t, "GARBAGE\r\n\r\n", 400);
	assert_int_equal(t->handled, 0);
	assert_int_equal(mgw_http_server_connections(t->srv), 0);
}

/* The request line as RFC 9112 §3 writes it (one SP between the parts,
 * HTTP/D.D), read by h1_head.c: Debian's non-strict http-parser also took
 * "HTTPo1.1" or "HT\xaa\xaf/1.1" for a version and runs of blanks for a
 * separator.  Any method token reaches the handler, which decides. */
static void test_request_line(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	REFUSE(t, "GET  /echo HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo  HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET\t/echo HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /e\tcho HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTPo1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo HT\xaa\xaf/1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo http/1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1 \r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.10\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "G@T /echo HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo\r\nHost: a\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\nNo-Colon\r\n\r\n", 400);
	REFUSE(t, "GET /echo HTTP/1.1\r\n: empty name\r\n\r\n", 400);
	assert_int_equal(t->handled, 0);

	tc_open(t, &c);
	assert_int_equal(tc_sends(&c, "PURGE-ALL /echo HTTP/1.1\r\nHost: a\r\n\r\n"), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "PURGE-ALL /echo\n");
	resp_free(&r);
	assert_int_equal(tc_sends(&c, "get /echo HTTP/1.1\r\nHost: a\r\n\r\n"), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "get /echo\n");
	resp_free(&r);
	tc_close(&c);
}

/* A head that trickles in, a CRLF before it cut in two: the pieces are
 * kept until the head ends and read as one (a fuzzer found the CR of a
 * leading empty line dropped while its LF was kept). */
static void test_head_in_pieces(void **state)
{
	static const char *const piece[] = {
		"\r\n\r", "\nPOST /ec", "ho HTTP/1.1\r", "\nHost: a\r\nCont",
		"ent-Length: 2\r\n\r", "\nok",
	};
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	for (size_t i = 0; i < sizeof(piece) / sizeof(piece[0]); i++) {
		assert_int_equal(t->handled, 0); /* not before its last byte */
		assert_int_equal(tc_sends(&c, piece[i]), 0);
		ts_pump(t, 3);
	}
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "POST /echo\nok");
	assert_string_equal(t->last_authority, "a");
	resp_free(&r);
	tc_close(&c);
}

#define CHUNKED_HEAD "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"

/* Chunked framing that Debian's non-strict http-parser accepts: any two
 * bytes stand in for the CRLF after chunk data, so "2\r\nokXX0\r\n\r\n"
 * used to be taken as the body "ok".  A front proxy that frames those
 * bytes differently would let a second request ride inside the body. */
static void test_chunked_smuggling(void **state)
{
	struct ts *t = *state;

	/* not CRLF after chunk data */
	REFUSE(t, CHUNKED_HEAD "2\r\nokXX0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nok\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nok\r\r0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nok\n\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nokXX0\r\n\r\n"
	          "GET /echo HTTP/1.1\r\nHost: smuggled\r\n\r\n", 400);
	/* chunk sizes only a lenient parser reads */
	REFUSE(t, CHUNKED_HEAD " 2\r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "0x2\r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "-2\r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "+2\r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2 \r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "0000000000000002\r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "10000000000000002\r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2;a\x01" "b\r\nok\r\n0\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2;a\nb\r\nok\r\n0\r\n\r\n", 400);
	/* trailer section */
	REFUSE(t, CHUNKED_HEAD "2\r\nok\r\n0\r\nX-T: 1\r\n folded\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nok\r\n0\r\nX-T: a\x01\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nok\r\n0\r\nX-T: 1\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nok\r\n0\r\nNo colon\r\n\r\n", 400);
	REFUSE(t, CHUNKED_HEAD "2\r\nok\r\n0\r\n\n", 400);
	assert_int_equal(t->handled, 0);
	assert_int_equal(mgw_http_server_connections(t->srv), 0);
}

/* Trailers are bounded by max_header_bytes (431, like the head). */
static void test_chunked_trailer_limit(void **state)
{
	struct ts *t = *state;
	char req[4096];
	int n;

	n = snprintf(req, sizeof(req), CHUNKED_HEAD "2\r\nok\r\n0\r\nX-Big: ");
	memset(req + n, 't', 2100);
	n += 2100;
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n\r\n");
	tc_expect_refused(t, req, (size_t)n, 431);
	assert_int_equal(t->handled, 0);
}

/* A chunk whose size cannot fit the rest of max_body (1000 here) is 413 at
 * once, with no chunk data sent: not after the body timeout (30 s by
 * default, beyond the tests' wait bound). */
static void test_chunked_declared_too_big(void **state)
{
	struct ts *t = *state;
	char req[4096];
	struct tc c;
	struct resp r;
	int n;

	/* the size line alone, the size digits alone, a size of 2^60 - 1 */
	REFUSE(t, CHUNKED_HEAD "FFFFFFFF\r\n", 413);
	REFUSE(t, CHUNKED_HEAD "3E9;ext=1\r\n", 413);
	REFUSE(t, CHUNKED_HEAD "100000", 413);
	REFUSE(t, CHUNKED_HEAD "FFFFFFFFFFFFFFF\r\nab", 413);
	/* a later chunk that passes the budget left by the earlier ones */
	n = snprintf(req, sizeof(req), CHUNKED_HEAD "258\r\n");
	memset(req + n, 'a', 600);
	n += 600;
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n191\r\n");
	tc_expect_refused(t, req, (size_t)n, 413);
	assert_int_equal(t->handled, 0);

	/* exactly max_body in two chunks still passes */
	n = snprintf(req, sizeof(req), CHUNKED_HEAD "258\r\n");
	memset(req + n, 'a', 600);
	n += 600;
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n190\r\n");
	memset(req + n, 'b', 400);
	n += 400;
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n0\r\n\r\n");
	tc_open(t, &c);
	assert_int_equal(tc_send(&c, req, (size_t)n), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.blen, strlen("POST /echo\n") + 1000);
	resp_free(&r);
	tc_close(&c);
}

/* A chunked body ends exactly at its final CRLF: what follows is the next
 * request, whether it arrives with it or later, chunked or not. */
static void test_chunked_pipelined(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	tc_sends(&c, CHUNKED_HEAD "2\r\nok\r\n0\r\n\r\n"
	             "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n"
	             CHUNKED_HEAD "3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"
	             "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
	             CHUNKED_HEAD "1\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "POST /echo\nok");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "GET /echo\n");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "POST /echo\nabc");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "POST /echo\nhi");
	resp_free(&r);
	ts_pump(t, 5);
	assert_int_equal(t->handled, 4);
	/* the last body arrives in pieces */
	tc_sends(&c, "z");
	ts_pump(t, 5);
	tc_sends(&c, "\r");
	ts_pump(t, 5);
	tc_sends(&c, "\n0\r");
	ts_pump(t, 5);
	assert_int_equal(t->handled, 4);
	tc_sends(&c, "\n\r\nGET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "POST /echo\nz");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "GET /echo\n");
	resp_free(&r);
	assert_int_equal(t->handled, 6);
	assert_int_equal(t->aborts, 0);
	tc_close(&c);
}

/* A chunked body held back by the handler's pending answer: the next
 * request waits, then is parsed from where the body ended. */
static void test_chunked_while_held(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;
	struct mgw_http_exchange *x;

	tc_open(t, &c);
	tc_sends(&c, "GET /hold HTTP/1.1\r\nHost: a\r\n\r\n"
	             CHUNKED_HEAD "5\r\nhello\r\n0\r\n\r\n"
	             "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	x = ts_wait_held(t, 0);
	ts_pump(t, 5);
	assert_int_equal(t->handled, 1);
	assert_int_equal(mgw_http_respond(x, 200, NULL, "text/plain", "first", 5), 0);
	t->held[0] = NULL;
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "first");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "POST /echo\nhello");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "GET /echo\n");
	resp_free(&r);
	tc_close(&c);
}

static void test_limits(void **state)
{
	struct ts *t = *state;
	char req[8192];
	int n;

	/* too many fields */
	n = snprintf(req, sizeof(req), "GET /echo HTTP/1.1\r\nHost: a\r\n");
	for (int i = 0; i < 25; i++)
		n += snprintf(req + n, sizeof(req) - (size_t)n, "X-%d: v\r\n", i);
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n");
	tc_expect_refused(t, req, (size_t)n, 431);
	/* too many header bytes in one field */
	n = snprintf(req, sizeof(req), "GET /echo HTTP/1.1\r\nHost: a\r\nX-Big: ");
	memset(req + n, 'v', 3000);
	n += 3000;
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n\r\n");
	tc_expect_refused(t, req, (size_t)n, 431);
	/* request-target */
	n = snprintf(req, sizeof(req), "GET /");
	memset(req + n, 'u', 400);
	n += 400;
	n += snprintf(req + n, sizeof(req) - (size_t)n, " HTTP/1.1\r\nHost: a\r\n\r\n");
	tc_expect_refused(t, req, (size_t)n, 414);
	/* body: declared length, checked before reading it */
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n", 413);
	/* body: chunked, checked while it streams in */
	n = snprintf(req, sizeof(req), "POST /echo HTTP/1.1\r\nHost: a\r\n"
	                               "Transfer-Encoding: chunked\r\n\r\n");
	for (int i = 0; i < 3; i++) {
		n += snprintf(req + n, sizeof(req) - (size_t)n, "190\r\n");
		memset(req + n, 'b', 400);
		n += 400;
		n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n");
	}
	n += snprintf(req + n, sizeof(req) - (size_t)n, "0\r\n\r\n");
	tc_expect_refused(t, req, (size_t)n, 413);
	/* exactly at the limit is fine */
	{
		struct tc c;
		struct resp r;
		n = snprintf(req, sizeof(req), "POST /echo HTTP/1.1\r\nHost: a\r\n"
		                               "Content-Length: 1000\r\n\r\n");
		memset(req + n, 'b', 1000);
		n += 1000;
		tc_open(t, &c);
		tc_send(&c, req, (size_t)n);
		assert_int_equal(tc_response(&c, &r), 0);
		assert_int_equal(r.status, 200);
		assert_int_equal(r.blen, strlen("POST /echo\n") + 1000);
		resp_free(&r);
		tc_close(&c);
	}
	assert_int_equal(t->handled, 1);
}

static void test_pipelined(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	/* the first one is held by the handler: the others must wait */
	tc_sends(&c, "GET /hold HTTP/1.1\r\nHost: a\r\n\r\n"
	             "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
	             "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	struct mgw_http_exchange *x = ts_wait_held(t, 0);
	ts_pump(t, 5);
	assert_int_equal(t->handled, 1);
	assert_int_equal(mgw_http_respond(x, 200, NULL, "text/plain", "first", 5), 0);
	t->held[0] = NULL;
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "first");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "POST /echo\nabc");
	resp_free(&r);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "GET /echo\n");
	resp_free(&r);
	assert_int_equal(t->handled, 3);
	assert_int_equal(t->aborts, 0);
	tc_close(&c);
}

static void test_expect_continue(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	tc_sends(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n"
	             "Expect: 100-continue\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 100);
	resp_free(&r);
	tc_sends(&c, "body");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "POST /echo\nbody");
	resp_free(&r);
	tc_close(&c);
	REFUSE(t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n"
	          "Expect: something\r\n\r\n", 417);
}

static void test_http10(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	tc_sends(&c, "GET /echo HTTP/1.0\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(resp_header(&r, "connection"), "close");
	assert_true(tc_closed(&c));
	resp_free(&r);
	tc_close(&c);

	tc_open(t, &c);
	tc_sends(&c, "GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(resp_header(&r, "connection"), "keep-alive");
	resp_free(&r);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(resp_header(&r, "connection"), "close");
	assert_true(tc_closed(&c));
	resp_free(&r);
	tc_close(&c);
}

static void test_sse_stream(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	tc_sends(&c, "GET /sse HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	assert_true(r.chunked);
	assert_string_equal(resp_header(&r, "content-type"), "text/event-stream");
	assert_null(resp_header(&r, "content-length"));
	assert_string_equal(r.body, "id: 1\ndata: event 1\n\nid: 2\ndata: event 2\n\n"
	                            "id: 3\ndata: event 3\n\n");
	assert_int_equal(t->sse_done, 1);
	resp_free(&r);
	/* the connection stays usable */
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "GET /echo\n");
	resp_free(&r);
	tc_close(&c);
}

/* Each write reaches the client while the response is still open. */
static void test_stream_write_unbuffered(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;
	struct mgw_http_exchange *x;

	tc_open(t, &c);
	tc_sends(&c, "GET /stream-hold HTTP/1.1\r\nHost: a\r\n\r\n");
	x = ts_wait_held(t, 0);
	assert_true(tc_wait_raw(&c, "text/event-stream"));
	assert_true(mgw_http_stream_writable(x));
	assert_int_equal(mgw_http_stream_write(x, "data: one\n\n", 11), 0);
	assert_true(tc_wait_raw(&c, "data: one\n\n"));
	assert_int_equal(mgw_http_stream_write(x, "", 0), 0); /* no empty chunk */
	assert_int_equal(mgw_http_stream_write(x, "data: two\n\n", 11), 0);
	assert_true(tc_wait_raw(&c, "data: two\n\n"));
	assert_int_equal(mgw_http_stream_end(x), 0);
	t->held[0] = NULL;
	assert_int_equal(tc_response(&c, &r), 0);
	assert_string_equal(r.body, "data: one\n\ndata: two\n\n");
	resp_free(&r);
	assert_int_equal(t->aborts, 0);
	tc_close(&c);
}

/* mgw_http_stream_abort: the bytes written arrive, then the connection
 * closes without the last chunk (an incomplete response); no abort
 * callback runs. */
static void test_stream_abort(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct mgw_http_exchange *x;

	tc_open(t, &c);
	tc_sends(&c, "GET /stream-hold HTTP/1.1\r\nHost: a\r\n\r\n");
	x = ts_wait_held(t, 0);
	assert_int_equal(mgw_http_stream_write(x, "data: one\n\n", 11), 0);
	assert_true(tc_wait_raw(&c, "data: one\n\n"));
	assert_int_equal(mgw_http_stream_abort(x), 0);
	t->held[0] = NULL;
	assert_true(tc_closed(&c));
	assert_null(strstr(c.raw, "0\r\n\r\n"));
	assert_int_equal(t->aborts, 0);
	tc_close(&c);
}

static int refusal_json(int status, const char *why,
                        const struct mgw_headers *req,
                        const char **ctype, char **body, size_t *len,
                        void *arg)
{
	(void)why;
	int *calls = arg;

	(*calls)++;
	/* the fields parsed so far are offered */
	if (status != 413 || !req || !mgw_headers_get(req, "x-want-json"))
		return -1;
	*ctype = "application/json";
	*body = strdup("{\"too\":\"large\"}");
	*len = strlen(*body);
	return 0;
}

/* A refusal-body callback replaces the text of the layer's own answers;
 * declining keeps the text. */
static void test_refusal_body(void **state)
{
	struct ts *t = *state;
	struct tc c;
	struct resp r;
	int calls = 0;

	mgw_http_server_set_refusal_cb(t->srv, refusal_json, &calls);
	tc_open(t, &c);
	tc_sends(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nX-Want-Json: 1\r\n"
	             "Content-Length: 1001\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 413);
	assert_string_equal(resp_header(&r, "content-type"), "application/json");
	assert_string_equal(r.body, "{\"too\":\"large\"}");
	resp_free(&r);
	tc_close(&c);
	tc_open(t, &c);
	tc_sends(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 413);
	assert_string_equal(r.body, "413 Payload Too Large\n");
	resp_free(&r);
	tc_close(&c);
	assert_int_equal(calls, 2);
	mgw_http_server_set_refusal_cb(t->srv, NULL, NULL);
}

static const char *last_why; /* the reason the layer gave its callback */

static int refusal_why(int status, const char *why,
                       const struct mgw_headers *req, const char **ctype,
                       char **body, size_t *len, void *arg)
{
	(void)status;
	(void)req;
	(void)ctype;
	(void)body;
	(void)len;
	(void)arg;
	last_why = why;
	return -1; /* keep the layer's text */
}

/* RFC 9112 3.2: an invalid Host value, or two Host fields, is answered
 * 400 by the layer (the handler never runs), with the reason in the
 * text and given to the refusal callback; valid forms pass. */
static void test_invalid_host(void **state)
{
	static const char *const bad[] = {
		"Host: a b\r\n", "Host: u@a\r\n", "Host: :80\r\n",
		"Host: a:65536\r\n", "Host: a:8x\r\n", "Host: a%zz\r\n",
		"Host: [::1\r\n", "Host: a/b\r\n",
	};
	struct ts *t = *state;
	struct tc c;
	struct resp r;

	mgw_http_server_set_refusal_cb(t->srv, refusal_why, NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char req[128];

		last_why = NULL;
		snprintf(req, sizeof(req), "GET /echo HTTP/1.1\r\n%s\r\n", bad[i]);
		tc_open(t, &c);
		tc_sends(&c, req);
		assert_int_equal(tc_response(&c, &r), 0);
		if (r.status != 400)
			fail_msg("%s: got %d", bad[i], r.status);
		assert_string_equal(r.body, "400 Bad Request: invalid Host header\n");
		assert_non_null(last_why);
		assert_string_equal(last_why, "invalid Host header");
		resp_free(&r);
		tc_close(&c);
	}
	tc_open(t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.body,
	                    "400 Bad Request: Host header sent more than once\n");
	resp_free(&r);
	tc_close(&c);
	tc_open(t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	tc_close(&c);
	mgw_http_server_set_refusal_cb(t->srv, NULL, NULL);
}

static void test_abort_on_close(void **state)
{
	struct ts *t = *state;
	struct tc c;

	/* streamed response in progress */
	tc_open(t, &c);
	tc_sends(&c, "GET /stream-hold HTTP/1.1\r\nHost: a\r\n\r\n");
	ts_wait_held(t, 0);
	assert_true(tc_wait_raw(&c, "text/event-stream"));
	tc_close(&c);
	assert_true(ts_wait_ge(t, &t->aborts, 1));
	ts_pump(t, 10);
	assert_int_equal(t->aborts, 1);
	assert_null(t->held[0]);
	assert_int_equal(mgw_http_server_inflight(t->srv), 0);

	/* no response yet */
	tc_open(t, &c);
	tc_sends(&c, "GET /hold HTTP/1.1\r\nHost: a\r\n\r\n");
	ts_wait_held(t, 1);
	tc_close(&c);
	assert_true(ts_wait_ge(t, &t->aborts, 2));
	ts_pump(t, 10);
	assert_int_equal(t->aborts, 2);
	assert_int_equal(mgw_http_server_connections(t->srv), 0);

	/* an SSE stream driven by a timer */
	tc_open(t, &c);
	tc_sends(&c, "GET /sse HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_true(tc_wait_raw(&c, "event 1"));
	tc_close(&c);
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;
	while (t->aborts + t->sse_done < 3 && mgw_now_ms() < end)
		ts_pump(t, 1);
	ts_pump(t, 30);
	/* either the abort won the race with the last event, or the stream
	 * ended first; never both, never twice */
	assert_int_equal(t->aborts + t->sse_done, 3);
	assert_int_equal(mgw_http_server_inflight(t->srv), 0);
}

static void test_header_timeout(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	struct resp r;

	mgw_http_limits_default(&lim);
	lim.header_timeout = 0.05;
	lim.idle_timeout = 0.05;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost:");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 408);
	assert_true(tc_closed(&c));
	resp_free(&r);
	tc_close(&c);
	/* idle keep-alive connections are closed silently */
	tc_open(&t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	resp_free(&r);
	assert_true(tc_closed(&c));
	assert_int_equal(c.npend, 0);
	tc_close(&c);
	assert_int_equal(mgw_http_server_connections(t.srv), 0);
	ts_stop(&t);
}

/* The connection's timer is armed lazily (a pending event that fires
 * no later than the new deadline stays): a deadline earlier than the
 * pending one must still move it.  A short idle wait after a long header
 * wait, and a short header wait after a long idle one, both expire (the
 * harness waits seconds, the long timeouts are minutes). */
static void test_timer_moves_earlier(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	struct resp r;

	(void)state;
	mgw_http_limits_default(&lim);
	lim.header_timeout = 600;
	lim.idle_timeout = 0.05;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	resp_free(&r);
	assert_true(tc_closed(&c)); /* idle, although the header wait was long */
	tc_close(&c);
	ts_stop(&t);

	mgw_http_limits_default(&lim);
	lim.header_timeout = 0.05;
	lim.idle_timeout = 600;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	resp_free(&r);
	ts_pump(&t, 200); /* the first head's timer fires, finds the idle wait */
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost:");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 408); /* although the idle wait was long */
	resp_free(&r);
	assert_true(tc_closed(&c));
	tc_close(&c);
	ts_stop(&t);
}

/* Configured header limits above http-parser's built-in 80 KiB apply. */
static void test_large_header_limit(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	struct resp r;
	size_t big = 100 * 1024;
	char *req = malloc(big + 128);
	int n;

	mgw_http_limits_default(&lim);
	lim.max_header_bytes = 128 * 1024;
	ts_start(&t, &lim, NULL);
	n = snprintf(req, 128, "GET /echo HTTP/1.1\r\nHost: a\r\nX-Big: ");
	memset(req + n, 'v', big);
	n += (int)big;
	n += snprintf(req + n, 16, "\r\n\r\n");
	tc_open(&t, &c);
	assert_int_equal(tc_send(&c, req, (size_t)n), 0);
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	tc_close(&c);
	free(req);
	ts_stop(&t);
}

static void test_body_timeout(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	struct resp r;

	mgw_http_limits_default(&lim);
	lim.body_timeout = 0.05;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	tc_sends(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 408);
	assert_true(tc_closed(&c));
	assert_int_equal(t.handled, 0);
	resp_free(&r);
	tc_close(&c);
	/* a chunked body that stops in the middle of a chunk */
	tc_open(&t, &c);
	tc_sends(&c, CHUNKED_HEAD "5\r\nhel");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 408);
	assert_true(tc_closed(&c));
	assert_int_equal(t.handled, 0);
	resp_free(&r);
	tc_close(&c);
	ts_stop(&t);
}

/* A client that stops reading a streamed response: once nothing moves for
 * write_timeout the connection is closed and the handler told. */
static void test_write_timeout(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	struct mgw_http_exchange *x;
	char chunk[4096];
	uint64_t end;

	mgw_http_limits_default(&lim);
	lim.write_timeout = 0.1;
	lim.write_high_watermark = 16 * 1024;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	tc_sends(&c, "GET /stream-hold HTTP/1.1\r\nHost: a\r\n\r\n");
	x = ts_wait_held(&t, 0);
	memset(chunk, 'x', sizeof(chunk));
	end = mgw_now_ms() + TS_WAIT_MS;
	while (t.aborts == 0 && mgw_now_ms() < end) {
		if (t.held[0] && mgw_http_stream_writable(x))
			assert_int_equal(mgw_http_stream_write(x, chunk, sizeof(chunk)), 0);
		ts_pump(&t, 1);
	}
	assert_int_equal(t.aborts, 1);
	assert_null(t.held[0]);
	assert_int_equal(mgw_http_server_connections(t.srv), 0);
	tc_close(&c);
	ts_stop(&t);
}

static void test_backpressure(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	struct mgw_http_exchange *x;
	char chunk[4096];
	int rc = 0, writes = 0;

	mgw_http_limits_default(&lim);
	lim.write_high_watermark = 16 * 1024;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	tc_sends(&c, "GET /stream-hold HTTP/1.1\r\nHost: a\r\n\r\n");
	x = ts_wait_held(&t, 0);
	memset(chunk, 'x', sizeof(chunk));
	/* the client does not read: output piles up until the layer refuses */
	while (writes < 100000) {
		rc = mgw_http_stream_write(x, chunk, sizeof(chunk));
		if (rc)
			break;
		writes++;
		ts_pump(&t, 0);
	}
	assert_int_equal(rc, MGW_ELIMIT);
	assert_false(mgw_http_stream_writable(x));
	assert_int_equal(t.drains, 0);
	/* reading lets it drain, and the handler hears about it */
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;
	while (!t.drains && mgw_now_ms() < end) {
		char buf[65536];
		ts_pump(&t, 1);
		while (recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
	}
	assert_true(t.drains >= 1);
	assert_true(mgw_http_stream_writable(x));
	assert_int_equal(mgw_http_stream_end(x), 0);
	t.held[0] = NULL;
	tc_close(&c);
	ts_stop(&t);
}

/* Pipelined requests already read are not dispatched while the output
 * is above the high watermark: a client that sends many small requests
 * for large answers and never reads must not make the server build all
 * the answers in memory.  Once it reads, the answers come. */
static void test_pipelined_backpressure(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	struct resp r;
	static const char one[] = "GET /big HTTP/1.1\r\nHost:a\r\n\r\n";
	enum { N = 200 };
	char burst[N * (sizeof(one) - 1) + 1];

	(void)state;
	for (int i = 0; i < N; i++)
		memcpy(burst + i * (sizeof(one) - 1), one, sizeof(one) - 1);
	burst[N * (sizeof(one) - 1)] = '\0';
	mgw_http_limits_default(&lim);
	lim.write_high_watermark = 16 * 1024;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	tc_sends(&c, burst);
	ts_pump(&t, 300);
	/* The kernel's socket buffers take some answers while the client
	 * does not read (on loopback about 3 MiB: a dozen of 256 KiB);
	 * without the bound the server answered every request of its first
	 * read at once (141 of them per 4 KiB: 35 MiB of output). */
	assert_true(t.handled >= 1);
	assert_true(t.handled < 60);
	/* reading lets them through, whole and in order */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tc_response(&c, &r), 0);
		assert_int_equal(r.status, 200);
		assert_int_equal(r.blen, TS_BIG_BODY);
		resp_free(&r);
	}
	tc_close(&c);
	ts_stop(&t);
}

int main(void)
{
	mgw_log_set_level(MGW_LOG_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keepalive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_response_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusal_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smuggling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_head_in_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_smuggling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_trailer_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_declared_too_big, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_while_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absolute_form, setup, teardown),
		cmocka_unit_test(test_pipelined_backpressure),
		cmocka_unit_test_setup_teardown(test_expect_continue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http10, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sse_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_write_unbuffered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_on_close, setup, teardown),
		cmocka_unit_test(test_header_timeout),
		cmocka_unit_test(test_timer_moves_earlier),
		cmocka_unit_test(test_large_header_limit),
		cmocka_unit_test(test_body_timeout),
		cmocka_unit_test(test_write_timeout),
		cmocka_unit_test(test_backpressure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
