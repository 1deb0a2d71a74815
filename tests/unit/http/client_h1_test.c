/* client_h1_test.c - the upstream client over HTTP/1.1 (src/http/client.c
 * and src/http/client_h1.c) against a scripted raw-socket upstream:
 * keep-alive pools, byte-exact requests, header order and hop-by-hop
 * removal, streaming of chunked responses, strict response parsing, the
 * retry-safety flags of every failure, cancel, pause/resume, timeouts and
 * limits. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "core/errors.h"
#include "tests/unit/http/client_util.h"
#include "util/time.h"

struct fx {
	struct event_base *base;
	struct up up;
	struct mgw_client *cl;
	struct mgw_client_origin *o;
	struct mgw_client_limits lim;
};

static void fx_start_host(struct fx *f, const char *host, uint16_t port)
{
	struct mgw_client_origin_cfg oc = {0};

	f->cl = mgw_client_new(f->base, &f->lim);
	assert_non_null(f->cl);
	oc.host = host;
	oc.port = port ? port : f->up.port;
	oc.proto = MGW_CLIENT_H1;
	assert_int_equal(mgw_client_origin_new(f->cl, &oc, &f->o), 0);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->base = event_base_new();
	assert_non_null(f->base);
	mgw_client_limits_default(&f->lim);
	f->lim.max_header_bytes = 4096;
	up_start(&f->up, f->base, NULL);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	mgw_client_free(f->cl);
	up_stop(&f->up);
	event_base_free(f->base);
	free(f);
	return 0;
}

static struct fx *fx_client(void **state)
{
	struct fx *f = *state;

	fx_start_host(f, "127.0.0.1", 0);
	return f;
}

static struct mgw_client_req *submit(struct fx *f, struct rec *rc,
                                     const char *method, const char *target,
                                     const struct mgw_headers *h,
                                     const void *body, size_t blen,
                                     const struct mgw_client_timeouts *tmo)
{
	struct mgw_client_reqspec sp = {0};
	struct mgw_client_req *r = NULL;

	sp.method = method;
	sp.target = target;
	sp.headers = h;
	sp.body = body;
	sp.body_len = blen;
	sp.tmo = tmo;
	rec_spec(rc, &sp);
	assert_int_equal(mgw_client_request(f->o, &sp, &r), 0);
	assert_non_null(r);
	return r;
}

static void get_ok(struct fx *f, const char *target, const char *body)
{
	struct rec rc;

	rec_init(&rc);
	submit(f, &rc, "GET", target, NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 0);
	assert_int_equal(rc.ended, 1);
	assert_int_equal(rc.status, 200);
	assert_string_equal(rec_body(&rc), body);
	rec_deinit(&rc);
}

static void stats(struct fx *f, struct mgw_client_stats *st)
{
	mgw_client_stats(f->cl, NULL, st);
}

/* Answers request number i (over the whole server) with resps[i]. */
static int table_i;
static void on_table(struct up_conn *uc)
{
	const char *const *resps = uc->u->arg;
	size_t n;

	while (uc->bev && up_next_request(uc, &n)) {
		uc->consumed += n;
		uc->nreq++;
		up_writes(uc, resps[table_i++]);
	}
}

/* ---- keep-alive ---- */

static void test_keepalive_reuse(void **state)
{
	struct fx *f = fx_client(state);
	struct mgw_client_stats st;

	f->up.resp = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	get_ok(f, "/a", "hello");
	get_ok(f, "/b", "hello");
	get_ok(f, "/c", "hello");
	assert_int_equal(f->up.naccepted, 1);
	assert_int_equal(f->up.c[0]->nreq, 3);
	stats(f, &st);
	assert_int_equal(st.conns_opened, 1);
	assert_int_equal(st.conns_reused, 2);
	assert_int_equal(st.requests, 3);
	assert_int_equal(st.responses, 3);
	assert_int_equal(st.conns_idle, 1);
	assert_int_equal(st.inflight, 0);
}

/* RFC 9112 §4: the reason phrase may be empty, and the SP before it
 * missing; obs-text in the reason and blanks around a value are kept out
 * of the value only. */
static void test_status_line_forms(void **state)
{
	struct fx *f = fx_client(state);

	f->up.resp = "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok";
	get_ok(f, "/a", "ok");
	f->up.resp = "HTTP/1.1 200 \r\nContent-Length:2\r\n\r\nok";
	get_ok(f, "/b", "ok");
	f->up.resp = "HTTP/1.1 200 D\xe9j\xe0 vu\r\nContent-Length: \t2 \t\r\n\r\nok";
	get_ok(f, "/c", "ok");
	assert_int_equal(f->up.naccepted, 1);
}

static void test_connection_close_not_reused(void **state)
{
	struct fx *f = fx_client(state);

	f->up.resp = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
	get_ok(f, "/a", "ok");
	get_ok(f, "/b", "ok");
	assert_int_equal(f->up.naccepted, 2);

	/* HTTP/1.0 without keep-alive is not persistent either */
	f->up.resp = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
	get_ok(f, "/c", "ok");
	get_ok(f, "/d", "ok");
	assert_int_equal(f->up.naccepted, 4);
}

static void test_pooled_connection_closed_by_server(void **state)
{
	struct fx *f = *state;
	struct mgw_client_stats st;
	int guard;

	/* no recv(MSG_PEEK) here: only what the loop's polls tell */
	f->lim.idle_peek_after = 3600;
	fx_client(state);
	f->up.resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	get_ok(f, "/a", "ok");
	/* the server drops the idle connection; the pool notices */
	up_close(f->up.c[0]);
	for (guard = 0; guard < 500; guard++) {
		stats(f, &st);
		if (st.conns_idle == 0)
			break;
		cu_pump(f->base, 1);
	}
	assert_int_equal(st.conns_idle, 0);
	get_ok(f, "/b", "ok");
	assert_int_equal(f->up.naccepted, 2);

	/* the FIN is in before the request is queued: the next poll reports
	 * it behind the request's dispatch, and the connection's active
	 * read event keeps it from being reused */
	assert_int_equal(shutdown(bufferevent_getfd(f->up.c[1]->bev), SHUT_WR), 0);
	get_ok(f, "/c", "ok");
	assert_int_equal(f->up.naccepted, 3);
	stats(f, &st);
	assert_int_equal(st.errors[MGW_CLIENT_E_CLOSED], 0);
}

/* A connection pooled idle_peek_after or longer is also checked with
 * recv(MSG_PEEK): it sees a FIN no poll has reported yet. */
static void test_long_idle_connection_peeked(void **state)
{
	struct fx *f = *state;
	struct mgw_client_stats st;

	f->lim.idle_peek_after = 0.005;
	fx_client(state);
	f->up.resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	get_ok(f, "/a", "ok");
	usleep(10000); /* pooled past idle_peek_after */
	/* the upstream's socket is closed by a finalizer in the very loop
	 * turn that dispatches the request, after that turn's poll */
	up_close(f->up.c[0]);
	get_ok(f, "/b", "ok");
	assert_int_equal(f->up.naccepted, 2);
	stats(f, &st);
	assert_int_equal(st.errors[MGW_CLIENT_E_CLOSED], 0);
}

/* one_request: every request on its own connection, none pooled, and the
 * client closes each connection once its response is complete. */
static void test_one_request_per_connection(void **state)
{
	struct fx *f = *state;
	struct mgw_client_origin_cfg oc = {0};
	struct mgw_client_stats st;
	int guard;

	f->cl = mgw_client_new(f->base, &f->lim);
	assert_non_null(f->cl);
	oc.host = "127.0.0.1";
	oc.port = f->up.port;
	oc.proto = MGW_CLIENT_H1;
	oc.one_request = 1;
	assert_int_equal(mgw_client_origin_new(f->cl, &oc, &f->o), 0);
	f->up.resp = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	get_ok(f, "/a", "hello");
	get_ok(f, "/b", "hello");
	get_ok(f, "/c", "hello");
	assert_int_equal(f->up.naccepted, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(f->up.c[i]->nreq, 1);
	/* the upstream sees each connection closed by the client */
	for (guard = 0; guard < 500; guard++) {
		int closed = 0;
		for (int i = 0; i < 3; i++)
			closed += f->up.c[i]->eof;
		if (closed == 3)
			break;
		cu_pump(f->base, 1);
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(f->up.c[i]->eof, 1);
	stats(f, &st);
	assert_int_equal(st.conns_opened, 3);
	assert_int_equal(st.conns_reused, 0);
	assert_int_equal(st.conns_idle, 0);
	assert_int_equal(st.conns_open, 0);
}

static void test_localhost_resolves(void **state)
{
	struct fx *f = *state;

	fx_start_host(f, "localhost", f->up.port);
	get_ok(f, "/dns", "ok");
	assert_int_equal(f->up.naccepted, 1);
}

/* ---- bytes and headers ---- */

static void on_exact(struct up_conn *uc)
{
	size_t n;

	if (!up_next_request(uc, &n))
		return;
	uc->u->arg = up_rx_str(uc, uc->consumed, n);
	uc->consumed += n;
	uc->nreq++;
	up_writes(uc, "HTTP/1.1 200 OK\r\n"
	              "X-A: 1\r\n"
	              "Connection: keep-alive, X-Hop\r\n"
	              "X-Hop: y\r\n"
	              "Keep-Alive: timeout=5\r\n"
	              "Content-Type: application/json\r\n"
	              "Proxy-Authenticate: Basic\r\n"
	              "X-B: 2\r\n"
	              "X-B: 3\r\n"
	              "Content-Length: 2\r\n"
	              "\r\n"
	              "{}");
}

static void test_exact_request_bytes(void **state)
{
	struct fx *f = fx_client(state);
	struct mgw_headers h;
	struct rec rc;
	struct mgw_client_reqspec sp = {0};
	unsigned char body[300];
	const char *expect_head =
	    "POST /mcp?x=1 HTTP/1.1\r\n"
	    "Host: mcp.example:8443\r\n"
	    "MCP-Protocol-Version: 2026-07-28\r\n"
	    "Mcp-Method: tools/call\r\n"
	    "Mcp-Name: echo\r\n"
	    "Mcp-Param-Region: =?base64?ZXUtd2VzdA==?=\r\n"
	    "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n"
	    "Authorization: Bearer abc\r\n"
	    "X-Dup: 1\r\n"
	    "X-Dup: 2\r\n"
	    "Proxy-Authorization: Basic eA==\r\n"
	    "x-lower: Keep  Case\r\n"
	    "Content-Length: 300\r\n"
	    "\r\n";
	size_t hl = strlen(expect_head);
	char *got;

	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (unsigned char)(i * 7 + 3);
	memcpy(body, "{\"_meta\":{\"k\\u00e9\":1e400}}  ", 29);
	f->up.on_read = on_exact;
	mgw_headers_init(&h);
	mgw_headers_adds(&h, "MCP-Protocol-Version", "2026-07-28");
	mgw_headers_adds(&h, "Mcp-Method", "tools/call");
	mgw_headers_adds(&h, "Connection", "keep-alive, X-Conn-Named");
	mgw_headers_adds(&h, "X-Conn-Named", "drop me");
	mgw_headers_adds(&h, "Keep-Alive", "timeout=5");
	mgw_headers_adds(&h, "Mcp-Name", "echo");
	mgw_headers_adds(&h, "TE", "trailers");
	mgw_headers_adds(&h, "Host", "wrong.example");
	mgw_headers_adds(&h, "Content-Length", "1");
	mgw_headers_adds(&h, "Upgrade", "websocket");
	mgw_headers_adds(&h, "Mcp-Param-Region", "=?base64?ZXUtd2VzdA==?=");
	mgw_headers_adds(&h, "traceparent",
	                 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
	mgw_headers_adds(&h, "Authorization", "Bearer abc");
	mgw_headers_adds(&h, "X-Dup", "1");
	mgw_headers_adds(&h, "Proxy-Connection", "keep-alive");
	mgw_headers_adds(&h, "X-Dup", "2");
	mgw_headers_adds(&h, "Transfer-Encoding", "chunked");
	mgw_headers_adds(&h, "Proxy-Authorization", "Basic eA==");
	mgw_headers_adds(&h, "x-lower", "Keep  Case");

	rec_init(&rc);
	sp.method = "POST";
	sp.target = "/mcp?x=1";
	sp.authority = "mcp.example:8443";
	sp.headers = &h;
	sp.body = body;
	sp.body_len = sizeof(body);
	rec_spec(&rc, &sp);
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), 0);
	/* the caller's buffers may go right away */
	mgw_headers_deinit(&h);
	memset(body + 100, 0, 10);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);

	got = f->up.arg;
	assert_non_null(got);
	assert_int_equal(strlen(expect_head) <= strlen(got), 1);
	assert_memory_equal(got, expect_head, hl);
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (unsigned char)(i * 7 + 3);
	memcpy(body, "{\"_meta\":{\"k\\u00e9\":1e400}}  ", 29);
	assert_memory_equal(got + hl, body, sizeof(body));
	free(got);

	/* response: end-to-end fields in order, hop-by-hop and
	 * Connection-named ones gone */
	const char *names[] = {"X-A", "Content-Type", "X-B", "X-B",
	                       "Content-Length"};
	const char *vals[] = {"1", "application/json", "2", "3", "2"};
	assert_int_equal(rc.h.n, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(rc.h.v[i].name, names[i]);
		assert_string_equal(rc.h.v[i].value, vals[i]);
	}
	assert_string_equal(rec_body(&rc), "{}");
	rec_deinit(&rc);
}

static void test_default_authority_and_lengths(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;
	char *got, want[64];

	f->up.on_read = on_exact;
	rec_init(&rc);
	submit(f, &rc, "POST", "/p", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	got = f->up.arg;
	snprintf(want, sizeof(want),
	         "POST /p HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: 0\r\n\r\n",
	         (unsigned)f->up.port);
	assert_string_equal(got, want);
	free(got);
	rec_deinit(&rc);

	/* GET without a body carries no Content-Length */
	f->up.arg = NULL;
	rec_init(&rc);
	submit(f, &rc, "GET", "/g", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	got = f->up.arg;
	snprintf(want, sizeof(want), "GET /g HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
	         (unsigned)f->up.port);
	assert_string_equal(got, want);
	free(got);
	rec_deinit(&rc);
}

/* ---- streaming ---- */

static struct up_conn *sse_conn;
static void on_sse(struct up_conn *uc)
{
	size_t n;

	if (!up_next_request(uc, &n))
		return;
	uc->consumed += n;
	sse_conn = uc;
	up_writes(uc, "HTTP/1.1 200 OK\r\n"
	              "Content-Type: text/event-stream\r\n"
	              "Transfer-Encoding: chunked\r\n"
	              "\r\n"
	              "b\r\ndata: one\n\n\r\n");
}

static void test_chunked_streams_incrementally(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;

	sse_conn = NULL;
	f->up.on_read = on_sse;
	rec_init(&rc);
	submit(f, &rc, "POST", "/sse", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	/* the first event is at the client while the server has not even
	 * produced the second */
	assert_string_equal(rec_body(&rc), "data: one\n\n");
	assert_int_equal(rc.ended, 0);
	assert_int_equal(rc.nhead, 1);
	assert_int_equal(rc.status, 200);
	assert_null(mgw_headers_get(&rc.h, "Transfer-Encoding"));
	assert_string_equal(mgw_headers_get(&rc.h, "Content-Type"),
	                    "text/event-stream");
	assert_non_null(sse_conn);
	up_writes(sse_conn, "c\r\n: keepalive\n\r\n");
	for (int i = 0; i < 500 && rc.ndata < 2; i++)
		cu_pump(f->base, 1);
	assert_string_equal(rec_body(&rc), "data: one\n\n: keepalive\n");
	assert_int_equal(rc.ended, 0);
	up_writes(sse_conn, "b\r\ndata: two\n\n\r\n0\r\n\r\n");
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_true(rc.ndata >= 3);
	assert_string_equal(rec_body(&rc),
	                    "data: one\n\n: keepalive\ndata: two\n\n");
	rec_deinit(&rc);

	/* the connection went back to the pool */
	struct mgw_client_stats st;
	stats(f, &st);
	assert_int_equal(st.conns_idle, 1);
}

static void test_read_until_close(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;
	struct mgw_client_stats st;

	f->up.on_read = NULL;
	f->up.resp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end";
	rec_init(&rc);
	submit(f, &rc, "GET", "/", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	assert_int_equal(rc.done, 0); /* no length: only the close ends it */
	up_close_flushed(f->up.c[0]);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_string_equal(rec_body(&rc), "until the end");
	rec_deinit(&rc);
	stats(f, &st);
	assert_int_equal(st.conns_idle, 0);
	assert_int_equal(st.conns_open, 0);
}

static void test_interim_and_bodiless(void **state)
{
	struct fx *f = fx_client(state);
	static const char *const resps[] = {
	    "HTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
	    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 204 No Content\r\nX-Z: 1\r\n\r\n",
	    "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nend",
	};
	struct rec rc;

	table_i = 0;
	f->up.arg = (void *)resps;
	f->up.on_read = on_table;

	rec_init(&rc);
	submit(f, &rc, "GET", "/1", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_int_equal(rc.nhead, 1);
	assert_int_equal(rc.status, 200);
	assert_null(mgw_headers_get(&rc.h, "Link"));
	assert_string_equal(rec_body(&rc), "ok");
	rec_deinit(&rc);

	const char *methods[] = {"GET", "GET", "HEAD"};
	const int statuses[] = {204, 304, 200};
	for (int i = 0; i < 3; i++) {
		rec_init(&rc);
		submit(f, &rc, methods[i], "/n", NULL, NULL, 0, NULL);
		assert_true(cu_wait(f->base, &rc.done));
		assert_int_equal(rc.ended, 1);
		assert_int_equal(rc.status, statuses[i]);
		assert_int_equal(rc.ndata, 0);
		rec_deinit(&rc);
	}
	/* none of those had a body: the connection is still in sync */
	get_ok(f, "/last", "end");
	assert_int_equal(f->up.naccepted, 1);
}

/* ---- strict parsing ---- */

static void test_strict_response_parsing(void **state)
{
	struct fx *f = fx_client(state);
	static char big[6000];
	static const char *resps[] = {
	    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: upgrade\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nX-Bad\x01: 1\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nBad Name: 1\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nX-A: \x7f\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nok",
	    "HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 004 Bad\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 600 Big\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
	    "\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	    /* status lines only a lenient parser reads */
	    "HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200OK\r\nContent-Length: 2\r\n\r\nok",
	    "HTTPo1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1  200 OK\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\nok",
	    "HTTP/1.1 200 OK\r\n: no name\r\nContent-Length: 2\r\n\r\nok",
	    big,
	    /* from here the head is fine and the body is not */
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nok\r\n0\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n",
	    NULL,
	};
	const int first_body_case = 28;
	size_t nb;

	nb = (size_t)snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\nX-Big: ");
	memset(big + nb, 'x', 5000);
	memcpy(big + nb + 5000, "\r\nContent-Length: 2\r\n\r\nok", 26);
	table_i = 0;
	f->up.arg = (void *)resps;
	f->up.on_read = on_table;
	for (int i = 0; resps[i]; i++) {
		struct rec rc;
		rec_init(&rc);
		submit(f, &rc, "GET", "/bad", NULL, NULL, 0, NULL);
		if (!cu_wait(f->base, &rc.done))
			fail_msg("case %d: no outcome", i);
		if (rc.failed != 1 || rc.err.cls != MGW_CLIENT_E_PROTO)
			fail_msg("case %d accepted (failed=%d cls=%d status=%d body=%s)",
			         i, rc.failed, (int)rc.err.cls, rc.status,
			         rec_body(&rc));
		assert_true(rc.err.flags & MGW_CLIENT_F_RESP_BYTES);
		assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
		assert_int_equal(rc.nhead, i >= first_body_case ? 1 : 0);
		rec_deinit(&rc);
	}
	/* each one cost its connection */
	assert_int_equal(f->up.naccepted, table_i);
}

static void test_trailing_garbage_not_pooled(void **state)
{
	struct fx *f = fx_client(state);

	f->up.resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"
	             "Content-Length: 5\r\n\r\nextra";
	get_ok(f, "/a", "ok");
	f->up.resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	get_ok(f, "/b", "ok");
	/* the bytes after the first response were never taken as the answer
	 * to the second request */
	assert_int_equal(f->up.naccepted, 2);
}

/* ---- failures and their flags ---- */

static void test_connect_refused(void **state)
{
	struct fx *f = *state;
	struct rec rc;
	struct mgw_client_stats st;

	fx_start_host(f, "127.0.0.1", cu_dead_port());
	rec_init(&rc);
	submit(f, &rc, "POST", "/mcp", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.code, MGW_EIO);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_CONNECT);
	assert_true(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_true(rc.err.flags & MGW_CLIENT_F_CONNECT);
	assert_false(rc.err.flags & MGW_CLIENT_F_RESP_BYTES);
	rec_deinit(&rc);
	stats(f, &st);
	assert_int_equal(st.errors[MGW_CLIENT_E_CONNECT], 1);
	assert_int_equal(st.conns_failed, 1);
	assert_int_equal(st.conns_open, 0);
}

static void test_closed_before_fully_written(void **state)
{
	struct fx *f = fx_client(state);
	size_t blen = 32u << 20; /* far more than socket buffers hold */
	unsigned char *body = malloc(blen);
	struct rec rc;

	assert_non_null(body);
	memset(body, 'b', blen);
	f->up.read_limit = 64 * 1024; /* reads a little, then closes */
	rec_init(&rc);
	submit(f, &rc, "POST", "/big", NULL, body, blen, NULL);
	free(body);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_CLOSED);
	assert_true(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_false(rc.err.flags & MGW_CLIENT_F_RESP_BYTES);
	assert_false(rc.err.flags & MGW_CLIENT_F_CONNECT);
	rec_deinit(&rc);
}

/* First request answered, every later one read completely and then the
 * connection closed without a word. */
static void on_first_then_hangup(struct up_conn *uc)
{
	size_t n;

	while (uc->bev && up_next_request(uc, &n)) {
		uc->consumed += n;
		if (uc->nreq++ == 0 && uc->idx == 0) {
			up_writes(uc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
			continue;
		}
		up_close(uc);
	}
}

static void test_closed_after_fully_written(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;
	struct mgw_client_stats st;

	f->up.on_read = on_first_then_hangup;
	get_ok(f, "/first", "ok");
	/* on the reused connection */
	rec_init(&rc);
	submit(f, &rc, "POST", "/second", NULL, "{\"x\":1}", 7, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_CLOSED);
	/* the upstream got all of it: it may have acted on it */
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_false(rc.err.flags & MGW_CLIENT_F_RESP_BYTES);
	rec_deinit(&rc);
	stats(f, &st);
	assert_int_equal(st.conns_reused, 1);
	assert_int_equal(f->up.naccepted, 1);

	/* and on a fresh connection */
	rec_init(&rc);
	submit(f, &rc, "POST", "/third", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	rec_deinit(&rc);
}

static void on_partial_response(struct up_conn *uc)
{
	size_t n;

	if (!up_next_request(uc, &n))
		return;
	uc->consumed += n;
	up_writes(uc, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
	up_close_flushed(uc);
}

static void test_closed_mid_response(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;

	f->up.on_read = on_partial_response;
	rec_init(&rc);
	submit(f, &rc, "GET", "/", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_CLOSED);
	assert_true(rc.err.flags & MGW_CLIENT_F_RESP_BYTES);
	assert_true(rc.err.flags & MGW_CLIENT_F_HEAD_SENT);
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_int_equal(rc.status, 200);
	assert_string_equal(rec_body(&rc), "0123456789");
	rec_deinit(&rc);
}

static void on_silent(struct up_conn *uc)
{
	size_t n;

	while (up_next_request(uc, &n)) {
		uc->consumed += n;
		uc->nreq++;
	}
}

static void test_first_byte_timeout(void **state)
{
	struct fx *f = fx_client(state);
	struct mgw_client_timeouts tmo = {.connect = 5, .first_byte = 0.1,
	                                  .idle = 5, .total = 0};
	struct rec rc;
	struct mgw_client_stats st;

	f->up.on_read = on_silent;
	rec_init(&rc);
	submit(f, &rc, "POST", "/slow", NULL, "{}", 2, &tmo);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.code, MGW_ETIMEDOUT);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_TIMEOUT);
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_false(rc.err.flags & MGW_CLIENT_F_CONNECT);
	rec_deinit(&rc);
	/* the connection was closed: its late answer must not reach anyone */
	assert_true(cu_wait(f->base, &f->up.c[0]->eof));
	stats(f, &st);
	assert_int_equal(st.errors[MGW_CLIENT_E_TIMEOUT], 1);
	assert_int_equal(st.conns_open, 0);
}

/* A listener that never accepts, its queue full: connects to it hang
 * (the kernel drops the SYNs).  Returns the port; *fds keeps it busy. */
static uint16_t hanging_port(int fds[3])
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fds[0] >= 0);
	assert_int_equal(bind(fds[0], (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fds[0], 0), 0);
	assert_int_equal(getsockname(fds[0], (struct sockaddr *)&sin, &sl), 0);
	for (int i = 1; i < 3; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(fds[i] >= 0);
		(void)connect(fds[i], (struct sockaddr *)&sin, sizeof(sin));
	}
	return ntohs(sin.sin_port);
}

/* The connection opened for a request is bounded by the request's own
 * connect timeout (a route's timeouts.connect), not the client-wide
 * default: with the default at 50 ms and the request's at 0.4 s, the
 * request fails by its own, with the connect flags, and not before the
 * client default would have cut it.  Before, the connection timer always
 * used the client default (the gateway's 5 s, whatever the route said). */
static void test_request_connect_timeout_governs(void **state)
{
	struct fx *f = *state;
	struct mgw_client_timeouts tmo = {.connect = 0.4, .first_byte = 5,
	                                  .idle = 5, .total = 0};
	struct rec rc;
	int fds[3];
	uint16_t port = hanging_port(fds);
	uint64_t until;

	f->lim.tmo.connect = 0.05;
	fx_start_host(f, "127.0.0.1", port);
	rec_init(&rc);
	submit(f, &rc, "GET", "/", NULL, NULL, 0, &tmo);
	until = mgw_now_ms() + 250;
	while (mgw_now_ms() < until && !rc.done)
		cu_pump(f->base, 5);
	assert_int_equal(rc.done, 0); /* the 50 ms default did not apply */
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_TIMEOUT);
	assert_true(rc.err.flags & MGW_CLIENT_F_CONNECT);
	assert_true(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	rec_deinit(&rc);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

/* Reads the first bytes, then stops reading for good. */
static void on_stall(struct up_conn *uc)
{
	bufferevent_disable(uc->bev, EV_READ);
}

static void test_send_stall_times_out_not_sent(void **state)
{
	struct fx *f = fx_client(state);
	struct mgw_client_timeouts tmo = {.connect = 5, .first_byte = 5,
	                                  .idle = 0.2, .total = 0};
	size_t blen = 32u << 20;
	unsigned char *body = calloc(1, blen);
	struct rec rc;

	assert_non_null(body);
	f->up.on_read = on_stall;
	rec_init(&rc);
	submit(f, &rc, "POST", "/upload", NULL, body, blen, &tmo);
	free(body);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_TIMEOUT);
	assert_true(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_non_null(strstr(rc.errmsg, "sending"));
	rec_deinit(&rc);
}

static void test_queue_timeout_and_limits(void **state)
{
	struct fx *f = *state;
	struct mgw_client_timeouts quick = {.connect = 0.1, .first_byte = 5,
	                                    .idle = 5, .total = 0};
	struct rec r1, r2, r3;
	struct mgw_client_req *q1;
	struct mgw_client_reqspec sp = {0};
	struct mgw_client_stats st;

	f->lim.max_conns_per_origin = 1;
	f->lim.max_pending_per_origin = 2;
	fx_start_host(f, "127.0.0.1", 0);
	f->up.on_read = on_silent;
	rec_init(&r1);
	rec_init(&r2);
	rec_init(&r3);
	q1 = submit(f, &r1, "GET", "/hang", NULL, NULL, 0, NULL);
	submit(f, &r2, "GET", "/queued", NULL, NULL, 0, &quick);
	/* both are still queued at submit time: the limit bites */
	sp.method = "GET";
	sp.target = "/third";
	rec_spec(&r3, &sp);
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_ELIMIT);

	assert_true(cu_wait(f->base, &r2.done));
	assert_int_equal(r2.failed, 1);
	assert_int_equal(r2.err.cls, MGW_CLIENT_E_TIMEOUT);
	assert_true(r2.err.flags & MGW_CLIENT_F_NOT_SENT);
	/* it waited for the origin's one busy connection: the client's own
	 * limit, not a connect failure of the upstream */
	assert_true(r2.err.flags & MGW_CLIENT_F_QUEUED);
	assert_false(r2.err.flags & MGW_CLIENT_F_CONNECT);
	assert_non_null(strstr(r2.errmsg, "free connection"));
	assert_int_equal(r1.done, 0);
	stats(f, &st);
	assert_int_equal(st.inflight, 1);
	assert_int_equal(st.pending, 0);
	mgw_client_cancel(q1);
	cu_pump(f->base, 5);
	assert_int_equal(r1.done, 0);
	stats(f, &st);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.cancels, 1);
	rec_deinit(&r1);
	rec_deinit(&r2);
	rec_deinit(&r3);
}

static void test_invalid_requests(void **state)
{
	struct fx *f = fx_client(state);
	struct mgw_client_reqspec sp = {0};
	struct mgw_headers h;
	struct rec rc;

	rec_init(&rc);
	rec_spec(&rc, &sp);
	sp.method = "GE T";
	sp.target = "/";
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_EINVAL);
	sp.method = "GET";
	sp.target = "/a b";
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_EINVAL);
	sp.target = "/\r\nX: y";
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_EINVAL);
	sp.target = "/";
	sp.authority = "a\r\nb";
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_EINVAL);
	sp.authority = NULL;
	mgw_headers_init(&h);
	mgw_headers_add(&h, "X-A", 3, "v\r\nInjected: 1", 15);
	sp.headers = &h;
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_EINVAL);
	mgw_headers_deinit(&h);
	mgw_headers_init(&h);
	mgw_headers_adds(&h, "X A", "v");
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_EINVAL);
	mgw_headers_deinit(&h);
	sp.headers = NULL;
	sp.body = NULL;
	sp.body_len = 3;
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_EINVAL);
	cu_pump(f->base, 3);
	assert_int_equal(rc.done, 0);
	assert_int_equal(f->up.naccepted, 0);
	rec_deinit(&rc);
}

/* ---- cancel, pause ---- */

static void on_stream_forever(struct up_conn *uc)
{
	size_t n;

	if (!up_next_request(uc, &n))
		return;
	uc->consumed += n;
	up_writes(uc, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	              "6\r\nevent1\r\n");
}

static void test_cancel_closes_connection(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;
	struct mgw_client_stats st;

	f->up.on_read = on_stream_forever;
	rec_init(&rc);
	rc.cancel_after_data = 1; /* from inside on_data */
	submit(f, &rc, "GET", "/listen", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	assert_true(cu_wait(f->base, &f->up.c[0]->eof));
	cu_pump(f->base, 3);
	assert_int_equal(rc.ended, 0);
	assert_int_equal(rc.failed, 0);
	stats(f, &st);
	assert_int_equal(st.cancels, 1);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.conns_open, 0);
	rec_deinit(&rc);

	/* cancelling from outside any callback, after the head */
	rec_init(&rc);
	struct mgw_client_req *r = submit(f, &rc, "GET", "/listen", NULL, NULL,
	                                  0, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	mgw_client_cancel(r);
	assert_true(cu_wait(f->base, &f->up.c[1]->eof));
	assert_int_equal(rc.done, 0);
	rec_deinit(&rc);
}

#define BIG (32u << 20)

static void on_big(struct up_conn *uc)
{
	size_t n;
	char head[96];
	unsigned char *b;

	if (!up_next_request(uc, &n))
		return;
	uc->consumed += n;
	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %u\r\n\r\n",
	         BIG);
	up_writes(uc, head);
	b = malloc(BIG);
	assert_non_null(b);
	for (size_t i = 0; i < BIG; i++)
		b[i] = (unsigned char)(i % 251);
	up_write(uc, b, BIG);
	free(b);
}

static void test_pause_resume(void **state)
{
	struct fx *f = fx_client(state);
	struct mgw_client_timeouts tmo = {.connect = 5, .first_byte = 5,
	                                  .idle = 0.05, .total = 0};
	struct rec rc;
	struct mgw_client_req *r;
	size_t pending_before, pending_after;
	uint64_t until;

	f->up.on_read = on_big;
	rec_init(&rc);
	rc.pause_after_data = 1;
	r = submit(f, &rc, "GET", "/big", NULL, NULL, 0, &tmo);
	assert_true(cu_wait(f->base, &rc.ndata));
	/* paused: nothing more is delivered, and the server cannot get rid
	 * of its bytes (the idle timeout does not run meanwhile) */
	until = mgw_now_ms() + 300;
	while (mgw_now_ms() < until)
		cu_pump(f->base, 1);
	assert_int_equal(rc.ndata, 1);
	assert_int_equal(rc.done, 0);
	pending_before = evbuffer_get_length(bufferevent_get_output(f->up.c[0]->bev));
	assert_true(pending_before > 0);
	cu_pump(f->base, 20);
	pending_after = evbuffer_get_length(bufferevent_get_output(f->up.c[0]->bev));
	assert_int_equal(pending_after, pending_before);

	mgw_client_resume(r);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_true(rc.ndata > 1);
	assert_int_equal(evbuffer_get_length(rc.body), BIG);
	const unsigned char *p = evbuffer_pullup(rc.body, -1);
	for (size_t i = 0; i < BIG; i++)
		if (p[i] != (unsigned char)(i % 251))
			fail_msg("byte %zu differs", i);
	rec_deinit(&rc);
}

/* A close-delimited body (no Content-Length, not chunked) whose reader
 * paused on its last bytes: http-parser consumed them and stayed paused,
 * so the close that ended the body, arriving after the resume, used to
 * fail the complete response ("upstream closed the connection"). */
static struct up_conn *eof_conn;
static void on_close_delimited(struct up_conn *uc)
{
	size_t n;

	if (!up_next_request(uc, &n))
		return;
	uc->consumed += n;
	eof_conn = uc;
	up_writes(uc, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	              "Connection: close\r\n\r\ndata: all of it\n\n");
}

static void test_pause_on_close_delimited_end(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;
	struct mgw_client_req *r;

	eof_conn = NULL;
	f->up.on_read = on_close_delimited;
	rec_init(&rc);
	rc.pause_after_data = 1;
	r = submit(f, &rc, "GET", "/events", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	assert_non_null(eof_conn);
	cu_pump(f->base, 50);
	mgw_client_resume(r);
	cu_pump(f->base, 50);
	assert_int_equal(rc.done, 0);  /* no end yet: the server is still there */
	up_close(eof_conn);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_int_equal(rc.failed, 0);
	assert_string_equal(rec_body(&rc), "data: all of it\n\n");
	rec_deinit(&rc);
}

/* ---- origins ---- */

static struct up_conn *held_conn;
static void on_hold(struct up_conn *uc)
{
	size_t n;

	if (!up_next_request(uc, &n))
		return;
	uc->consumed += n;
	held_conn = uc;
}

static void test_retired_origin_finishes_inflight(void **state)
{
	struct fx *f = fx_client(state);
	struct rec rc;
	struct mgw_client_reqspec sp = {0};
	struct mgw_client_stats st;

	held_conn = NULL;
	f->up.on_read = on_hold;
	rec_init(&rc);
	submit(f, &rc, "GET", "/", NULL, NULL, 0, NULL);
	for (int i = 0; i < 500 && !held_conn; i++)
		cu_pump(f->base, 1);
	assert_non_null(held_conn);
	mgw_client_origin_free(f->o);
	sp.method = "GET";
	sp.target = "/";
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), MGW_ECLOSED);
	up_writes(held_conn, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone");
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_string_equal(rec_body(&rc), "done");
	rec_deinit(&rc);
	cu_pump(f->base, 5);
	/* the origin is gone, with its connection */
	mgw_client_stats(f->cl, NULL, &st);
	assert_int_equal(st.conns_open, 0);
	assert_true(cu_wait(f->base, &held_conn->eof));
	f->o = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_keepalive_reuse, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_status_line_forms, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_connection_close_not_reused, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_pooled_connection_closed_by_server, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_long_idle_connection_peeked, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_one_request_per_connection, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_localhost_resolves, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_exact_request_bytes, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_default_authority_and_lengths, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_chunked_streams_incrementally, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_read_until_close, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_interim_and_bodiless, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_strict_response_parsing, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_trailing_garbage_not_pooled, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_connect_refused, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_closed_before_fully_written, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_closed_after_fully_written, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_closed_mid_response, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_request_connect_timeout_governs, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_first_byte_timeout, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_send_stall_times_out_not_sent, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_timeout_and_limits, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_requests, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_closes_connection, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_pause_resume, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_pause_on_close_delimited_end, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_retired_origin_finishes_inflight, fx_setup, fx_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
