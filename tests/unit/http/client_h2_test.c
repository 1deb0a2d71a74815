/* client_h2_test.c - the upstream client over HTTP/2 (src/http/client_h2.c
 * with client.c) against an in-test nghttp2 server: request bytes and
 * header rules, multiplexing, the server's stream limit, REFUSED_STREAM and
 * GOAWAY as "not sent", resets, cancel as RST_STREAM(CANCEL), flow-control
 * backpressure on pause, streaming, timeouts. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

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

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->base = event_base_new();
	assert_non_null(f->base);
	mgw_client_limits_default(&f->lim);
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

/* Starts the upstream (max_streams, window) and the client. */
static struct fx *fx_start(void **state, uint32_t max_streams, uint32_t window,
                           h2up_request_cb on_request)
{
	struct fx *f = *state;
	struct mgw_client_origin_cfg oc = {0};

	h2up_start(&f->up, f->base, NULL, max_streams, window);
	f->up.on_request = on_request;
	f->cl = mgw_client_new(f->base, &f->lim);
	assert_non_null(f->cl);
	oc.host = "127.0.0.1";
	oc.port = f->up.port;
	oc.proto = MGW_CLIENT_H2;
	assert_int_equal(mgw_client_origin_new(f->cl, &oc, &f->o), 0);
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
	return r;
}

static void stats(struct fx *f, struct mgw_client_stats *st)
{
	mgw_client_stats(f->cl, NULL, st);
}

/* Pumps until the upstream has seen n complete streams. */
static void wait_streams(struct fx *f, int n)
{
	for (int i = 0; i < 500; i++) {
		int complete = 0;
		for (int k = 0; k < f->up.ns; k++)
			complete += f->up.s[k]->complete;
		if (complete >= n)
			return;
		cu_pump(f->base, 1);
	}
	fail_msg("upstream saw fewer than %d streams", n);
}

/* ---- request and response bytes ---- */

static void on_json(struct h2s *s)
{
	static const char *const h[] = {"content-type", "application/json",
	                                "x-a", "1", "x-b", "2", NULL};
	h2s_respond(s, 200, h, "{\"ok\":true}", 11, 1);
}

static void test_h2_request_and_response(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_json);
	struct mgw_headers h;
	struct rec rc;
	unsigned char body[5000];
	struct h2s *s;

	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (unsigned char)(i * 31 + 7);
	mgw_headers_init(&h);
	mgw_headers_adds(&h, "MCP-Protocol-Version", "2026-07-28");
	mgw_headers_adds(&h, "Connection", "keep-alive, X-Conn-Named");
	mgw_headers_adds(&h, "Mcp-Method", "tools/call");
	mgw_headers_adds(&h, "X-Conn-Named", "drop");
	mgw_headers_adds(&h, "Keep-Alive", "1");
	mgw_headers_adds(&h, "Upgrade", "h2c");
	mgw_headers_adds(&h, "TE", "trailers");
	mgw_headers_adds(&h, "Transfer-Encoding", "chunked");
	mgw_headers_adds(&h, "X-Dup", "a");
	mgw_headers_adds(&h, "Host", "ignored.example");
	mgw_headers_adds(&h, "X-Dup", "b");
	mgw_headers_adds(&h, "Authorization", "Bearer t");
	mgw_headers_adds(&h, "Mcp-Param-Q", "=?base64?w6k=?=");

	rec_init(&rc);
	submit(f, &rc, "POST", "/mcp?a=1", &h, body, sizeof(body), NULL);
	mgw_headers_deinit(&h);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_int_equal(rc.h2, 1);
	assert_int_equal(rc.status, 200);
	assert_string_equal(rec_body(&rc), "{\"ok\":true}");
	assert_int_equal(rc.h.n, 3);
	assert_string_equal(rc.h.v[0].name, "content-type");
	assert_string_equal(rc.h.v[1].name, "x-a");
	assert_string_equal(rc.h.v[2].name, "x-b");

	s = h2up_stream(&f->up, 0);
	assert_non_null(s);
	assert_string_equal(s->method, "POST");
	assert_string_equal(s->path, "/mcp?a=1");
	assert_string_equal(s->scheme, "http");
	char want_auth[32];
	snprintf(want_auth, sizeof(want_auth), "127.0.0.1:%u", (unsigned)f->up.port);
	assert_string_equal(s->authority, want_auth);
	const char *names[] = {"mcp-protocol-version", "mcp-method", "x-dup",
	                       "x-dup", "authorization", "mcp-param-q",
	                       "content-length"};
	const char *vals[] = {"2026-07-28", "tools/call", "a", "b", "Bearer t",
	                      "=?base64?w6k=?=", "5000"};
	assert_int_equal(s->h.n, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_string_equal(s->h.v[i].name, names[i]);
		assert_string_equal(s->h.v[i].value, vals[i]);
	}
	assert_int_equal(evbuffer_get_length(s->body), sizeof(body));
	assert_memory_equal(evbuffer_pullup(s->body, -1), body, sizeof(body));
	rec_deinit(&rc);
}

/* ---- multiplexing and limits ---- */

static void on_hold(struct h2s *s) { (void)s; }

static void echo_path(struct h2s *s)
{
	h2s_respond(s, 200, NULL, s->path, strlen(s->path), 1);
}

static void test_h2_multiplexing(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_hold);
	struct rec rc[10];
	char path[10][16];
	struct mgw_client_stats st;

	for (int i = 0; i < 10; i++) {
		rec_init(&rc[i]);
		snprintf(path[i], sizeof(path[i]), "/r%d", i);
		submit(f, &rc[i], "POST", path[i], NULL, path[i], strlen(path[i]), NULL);
	}
	/* all ten are open at the same time on one connection */
	wait_streams(f, 10);
	assert_int_equal(f->up.naccepted, 1);
	for (int i = 9; i >= 0; i--)
		echo_path(f->up.s[i]);
	for (int i = 0; i < 10; i++) {
		assert_true(cu_wait(f->base, &rc[i].done));
		assert_int_equal(rc[i].ended, 1);
		assert_string_equal(rec_body(&rc[i]), path[i]);
		rec_deinit(&rc[i]);
	}
	for (int i = 0; i < 10; i++) {
		struct h2s *s = f->up.s[i];
		assert_int_equal(evbuffer_get_length(s->body), strlen(s->path));
	}
	stats(f, &st);
	assert_int_equal(st.conns_opened, 1);
	assert_int_equal(st.conns_reused, 9);
	assert_int_equal(st.responses, 10);
	assert_int_equal(st.inflight, 0);
}

/* one_request: concurrent requests get a connection each instead of
 * streams on one, sequential ones do not reuse a finished connection,
 * and every connection is closed once its stream is done. */
static void test_h2_one_request_per_connection(void **state)
{
	struct fx *f = *state;
	struct mgw_client_origin_cfg oc = {0};
	struct mgw_client_stats st;
	struct rec rc[4];
	int guard;

	h2up_start(&f->up, f->base, NULL, 0, 0);
	f->up.on_request = on_hold;
	f->cl = mgw_client_new(f->base, &f->lim);
	assert_non_null(f->cl);
	oc.host = "127.0.0.1";
	oc.port = f->up.port;
	oc.proto = MGW_CLIENT_H2;
	oc.one_request = 1;
	assert_int_equal(mgw_client_origin_new(f->cl, &oc, &f->o), 0);
	for (int i = 0; i < 3; i++) {
		rec_init(&rc[i]);
		submit(f, &rc[i], "POST", "/c", NULL, "x", 1, NULL);
	}
	wait_streams(f, 3);
	assert_int_equal(f->up.naccepted, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(f->up.s[i]->id, 1); /* first stream of each */
		echo_path(f->up.s[i]);
	}
	for (int i = 0; i < 3; i++) {
		assert_true(cu_wait(f->base, &rc[i].done));
		assert_int_equal(rc[i].ended, 1);
		rec_deinit(&rc[i]);
	}
	rec_init(&rc[3]);
	submit(f, &rc[3], "POST", "/d", NULL, "y", 1, NULL);
	wait_streams(f, 4);
	assert_int_equal(f->up.naccepted, 4);
	echo_path(f->up.s[3]);
	assert_true(cu_wait(f->base, &rc[3].done));
	assert_int_equal(rc[3].ended, 1);
	rec_deinit(&rc[3]);
	for (guard = 0; guard < 500; guard++) {
		stats(f, &st);
		if (st.conns_open == 0)
			break;
		cu_pump(f->base, 1);
	}
	assert_int_equal(st.conns_open, 0);
	assert_int_equal(st.conns_opened, 4);
	assert_int_equal(st.conns_reused, 0);
	/* and the upstream sees every one of them closed */
	for (guard = 0; guard < 500; guard++) {
		int closed = 0;
		for (int i = 0; i < 4; i++)
			closed += f->up.c[i]->eof || f->up.c[i]->closed;
		if (closed == 4)
			break;
		cu_pump(f->base, 1);
	}
	for (int i = 0; i < 4; i++)
		assert_true(f->up.c[i]->eof || f->up.c[i]->closed);
}

static void test_h2_server_stream_limit_queues(void **state)
{
	struct fx *f = *state;
	struct rec rc[5];
	struct mgw_client_stats st;

	f->lim.max_conns_per_origin = 1;
	fx_start(state, 2, 0, on_hold);
	/* let SETTINGS arrive first */
	{
		struct rec r0;
		rec_init(&r0);
		f->up.on_request = NULL;
		submit(f, &r0, "GET", "/warm", NULL, NULL, 0, NULL);
		assert_true(cu_wait(f->base, &r0.done));
		rec_deinit(&r0);
		f->up.on_request = on_hold;
	}
	for (int i = 0; i < 5; i++) {
		rec_init(&rc[i]);
		submit(f, &rc[i], "GET", "/q", NULL, NULL, 0, NULL);
	}
	wait_streams(f, 3); /* warm-up + 2 */
	cu_pump(f->base, 10);
	/* the server allows 2: the rest wait on our side */
	assert_int_equal(f->up.ns, 3);
	stats(f, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.pending, 3);
	for (int round = 0; round < 5; round++) {
		int k = 1 + round;
		for (int i = 0; i < 500 && f->up.ns <= k; i++)
			cu_pump(f->base, 1);
		assert_true(f->up.ns > k);
		h2s_respond(f->up.s[k], 200, NULL, "x", 1, 1);
	}
	for (int i = 0; i < 5; i++) {
		assert_true(cu_wait(f->base, &rc[i].done));
		assert_int_equal(rc[i].ended, 1);
		rec_deinit(&rc[i]);
	}
	assert_int_equal(f->up.naccepted, 1);
}

static void test_h2_full_connection_opens_another(void **state)
{
	struct fx *f = *state;
	struct rec rc[4];

	f->lim.max_conns_per_origin = 2;
	fx_start(state, 2, 0, on_hold);
	{
		struct rec r0;
		rec_init(&r0);
		f->up.on_request = NULL;
		submit(f, &r0, "GET", "/warm", NULL, NULL, 0, NULL);
		assert_true(cu_wait(f->base, &r0.done));
		rec_deinit(&r0);
		f->up.on_request = on_hold;
	}
	for (int i = 0; i < 4; i++) {
		rec_init(&rc[i]);
		submit(f, &rc[i], "GET", "/q", NULL, NULL, 0, NULL);
	}
	wait_streams(f, 5);
	assert_int_equal(f->up.naccepted, 2);
	for (int k = 1; k < 5; k++)
		h2s_respond(f->up.s[k], 200, NULL, "y", 1, 1);
	for (int i = 0; i < 4; i++) {
		assert_true(cu_wait(f->base, &rc[i].done));
		assert_int_equal(rc[i].ended, 1);
		rec_deinit(&rc[i]);
	}
}

/* ---- failures ---- */

static void on_refuse(struct h2s *s) { h2s_rst(s, NGHTTP2_REFUSED_STREAM); }

static void test_h2_refused_stream_not_sent(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_refuse);
	struct rec rc;
	struct mgw_client_stats st;

	rec_init(&rc);
	submit(f, &rc, "POST", "/mcp", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_REFUSED);
	assert_true(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_false(rc.err.flags & MGW_CLIENT_F_RESP_BYTES);
	rec_deinit(&rc);
	stats(f, &st);
	assert_int_equal(st.errors[MGW_CLIENT_E_REFUSED], 1);
	/* the connection itself is fine */
	f->up.on_request = NULL;
	rec_init(&rc);
	submit(f, &rc, "GET", "/", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	rec_deinit(&rc);
	assert_int_equal(f->up.naccepted, 1);
}

static void on_head_part(struct h2s *s)
{
	h2s_respond(s, 200, NULL, "part", 4, 0);
}

static void test_h2_reset_after_response_started(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_head_part);
	struct rec rc;

	rec_init(&rc);
	submit(f, &rc, "POST", "/mcp", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	h2s_rst(f->up.s[0], NGHTTP2_INTERNAL_ERROR);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_RESET);
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_true(rc.err.flags & MGW_CLIENT_F_RESP_BYTES);
	assert_true(rc.err.flags & MGW_CLIENT_F_HEAD_SENT);
	rec_deinit(&rc);
}

static void on_rst_cancel(struct h2s *s) { h2s_rst(s, NGHTTP2_INTERNAL_ERROR); }

static void test_h2_reset_before_response_is_not_retry_safe(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_rst_cancel);
	struct rec rc;

	rec_init(&rc);
	submit(f, &rc, "POST", "/mcp", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_RESET);
	/* the server had the whole request: it may have acted */
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	rec_deinit(&rc);
}

static void test_h2_goaway(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_hold);
	struct rec rc[3], late;

	for (int i = 0; i < 3; i++) {
		rec_init(&rc[i]);
		submit(f, &rc[i], "POST", "/g", NULL, "{}", 2, NULL);
	}
	wait_streams(f, 3);
	/* the server will only process the first stream */
	h2up_goaway(f->up.c[0], f->up.s[0]->id, NGHTTP2_NO_ERROR);
	for (int i = 1; i < 3; i++) {
		assert_true(cu_wait(f->base, &rc[i].done));
		assert_int_equal(rc[i].failed, 1);
		assert_int_equal(rc[i].err.cls, MGW_CLIENT_E_REFUSED);
		assert_true(rc[i].err.flags & MGW_CLIENT_F_NOT_SENT);
	}
	assert_int_equal(rc[0].done, 0);
	/* new work goes to a new connection */
	f->up.on_request = NULL;
	rec_init(&late);
	submit(f, &late, "GET", "/after", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &late.done));
	assert_int_equal(late.ended, 1);
	assert_int_equal(f->up.naccepted, 2);
	/* the stream below last-stream-id still completes */
	h2s_respond(f->up.s[0], 200, NULL, "first", 5, 1);
	assert_true(cu_wait(f->base, &rc[0].done));
	assert_int_equal(rc[0].ended, 1);
	assert_string_equal(rec_body(&rc[0]), "first");
	for (int i = 0; i < 3; i++)
		rec_deinit(&rc[i]);
	rec_deinit(&late);
}

static void on_hangup(struct h2s *s) { up_close(s->uc); }

static void test_h2_connection_closed_after_request(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_hangup);
	struct rec rc;
	struct mgw_client_stats st;

	rec_init(&rc);
	submit(f, &rc, "POST", "/mcp", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_CLOSED);
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	rec_deinit(&rc);
	stats(f, &st);
	assert_int_equal(st.conns_open, 0);
}

static void test_h2_closed_before_fully_written(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_hold);
	size_t blen = 1u << 20; /* far beyond the server's 64 KiB window */
	unsigned char *body = calloc(1, blen);
	struct rec rc;

	assert_non_null(body);
	f->up.read_limit = 2000; /* preface, SETTINGS, HEADERS, some DATA */
	rec_init(&rc);
	submit(f, &rc, "POST", "/upload", NULL, body, blen, NULL);
	free(body);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_CLOSED);
	assert_true(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	rec_deinit(&rc);
}

static void test_h2_connect_refused(void **state)
{
	struct fx *f = *state;
	struct mgw_client_origin_cfg oc = {0};
	struct rec rc[3];

	up_start(&f->up, f->base, NULL);
	f->cl = mgw_client_new(f->base, &f->lim);
	oc.host = "127.0.0.1";
	oc.port = cu_dead_port();
	oc.proto = MGW_CLIENT_H2;
	assert_int_equal(mgw_client_origin_new(f->cl, &oc, &f->o), 0);
	/* several streams were waiting on the connection that failed */
	for (int i = 0; i < 3; i++) {
		rec_init(&rc[i]);
		submit(f, &rc[i], "POST", "/", NULL, "{}", 2, NULL);
	}
	for (int i = 0; i < 3; i++) {
		assert_true(cu_wait(f->base, &rc[i].done));
		assert_int_equal(rc[i].failed, 1);
		assert_int_equal(rc[i].err.cls, MGW_CLIENT_E_CONNECT);
		assert_true(rc[i].err.flags & MGW_CLIENT_F_NOT_SENT);
		assert_true(rc[i].err.flags & MGW_CLIENT_F_CONNECT);
		rec_deinit(&rc[i]);
	}
}

/* ---- streaming, cancel, pause ---- */

static struct h2s *sse_stream;
static void on_sse(struct h2s *s)
{
	static const char *const h[] = {"content-type", "text/event-stream", NULL};
	sse_stream = s;
	h2s_respond(s, 200, h, "data: one\n\n", 11, 0);
}

static void test_h2_sse_streams(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_sse);
	struct rec rc;

	sse_stream = NULL;
	rec_init(&rc);
	submit(f, &rc, "POST", "/sse", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	assert_string_equal(rec_body(&rc), "data: one\n\n");
	assert_int_equal(rc.done, 0);
	assert_non_null(sse_stream);
	h2s_write(sse_stream, ": ping\n\n", 8);
	for (int i = 0; i < 500 && rc.ndata < 2; i++)
		cu_pump(f->base, 1);
	assert_string_equal(rec_body(&rc), "data: one\n\n: ping\n\n");
	assert_int_equal(rc.done, 0);
	h2s_write(sse_stream, "data: two\n\n", 11);
	h2s_end(sse_stream);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_string_equal(rec_body(&rc), "data: one\n\n: ping\n\ndata: two\n\n");
	rec_deinit(&rc);
}

static void test_h2_cancel_sends_rst(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_sse);
	struct rec rc;
	struct mgw_client_stats st;
	struct mgw_client_req *r;

	sse_stream = NULL;
	rec_init(&rc);
	rc.cancel_after_data = 1; /* inside on_data */
	submit(f, &rc, "POST", "/listen", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	assert_non_null(sse_stream);
	assert_true(cu_wait(f->base, &sse_stream->rst_received));
	assert_int_equal(sse_stream->rst_code, NGHTTP2_CANCEL);
	/* more data for the cancelled stream is ignored */
	h2s_write(sse_stream, "data: late\n\n", 12);
	cu_pump(f->base, 5);
	assert_int_equal(rc.ndata, 1);
	assert_int_equal(rc.done, 0);
	rec_deinit(&rc);
	stats(f, &st);
	assert_int_equal(st.cancels, 1);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.conns_open, 1); /* the connection stays */

	/* cancel from outside a callback, and a cancel of a stream whose
	 * HEADERS may not even be out yet */
	sse_stream = NULL;
	rec_init(&rc);
	r = submit(f, &rc, "POST", "/listen", NULL, "{}", 2, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	mgw_client_cancel(r);
	assert_true(cu_wait(f->base, &sse_stream->rst_received));
	rec_deinit(&rc);

	rec_init(&rc);
	r = submit(f, &rc, "POST", "/never", NULL, "{}", 2, NULL);
	mgw_client_cancel(r);
	cu_pump(f->base, 10);
	assert_int_equal(rc.done, 0);
	rec_deinit(&rc);
	stats(f, &st);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.pending, 0);

	/* and the connection still serves */
	f->up.on_request = NULL;
	rec_init(&rc);
	submit(f, &rc, "GET", "/", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	rec_deinit(&rc);
	assert_int_equal(f->up.naccepted, 1);
}

#define BIG (4u << 20)
static void on_big(struct h2s *s)
{
	unsigned char *b = malloc(BIG);

	assert_non_null(b);
	for (size_t i = 0; i < BIG; i++)
		b[i] = (unsigned char)(i % 253);
	h2s_respond(s, 200, NULL, b, BIG, 1);
	free(b);
}

static void test_h2_pause_holds_window(void **state)
{
	struct fx *f = *state;
	struct rec rc, other;
	struct mgw_client_req *r;
	struct h2s *s;
	size_t left_before, left_after;
	uint64_t until;

	f->lim.h2_stream_window = 128 * 1024;
	f->lim.tmo.idle = 0.05;
	fx_start(state, 0, 0, on_big);
	rec_init(&rc);
	rc.pause_after_data = 1;
	r = submit(f, &rc, "GET", "/big", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	until = mgw_now_ms() + 300;
	while (mgw_now_ms() < until)
		cu_pump(f->base, 1);
	/* nothing delivered while paused, no idle timeout, and the server is
	 * stuck behind the stream window */
	assert_int_equal(rc.ndata, 1);
	assert_int_equal(rc.done, 0);
	s = f->up.s[0];
	left_before = evbuffer_get_length(s->out);
	assert_true(left_before > BIG - 2 * 128 * 1024);
	cu_pump(f->base, 20);
	left_after = evbuffer_get_length(s->out);
	assert_int_equal(left_after, left_before);

	/* other streams on the same connection still flow */
	f->up.on_request = NULL;
	rec_init(&other);
	submit(f, &other, "GET", "/other", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &other.done));
	assert_int_equal(other.ended, 1);
	rec_deinit(&other);

	mgw_client_resume(r);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_int_equal(evbuffer_get_length(rc.body), BIG);
	const unsigned char *p = evbuffer_pullup(rc.body, -1);
	for (size_t i = 0; i < BIG; i++)
		if (p[i] != (unsigned char)(i % 253))
			fail_msg("byte %zu differs", i);
	rec_deinit(&rc);
	assert_int_equal(f->up.naccepted, 1);
}

static void test_h2_cancel_while_paused_returns_window(void **state)
{
	struct fx *f = *state;
	struct rec rc, next;
	struct mgw_client_req *r;

	/* one stream per connection and one connection: the connection
	 * window is exactly one stream window, so bytes held by the paused
	 * stream must be given back when it is cancelled, or the next
	 * stream on the connection would starve */
	f->lim.h2_stream_window = 96 * 1024;
	f->lim.h2_max_streams = 1;
	f->lim.max_conns_per_origin = 1;
	fx_start(state, 0, 0, on_big);
	rec_init(&rc);
	rc.pause_after_data = 1;
	r = submit(f, &rc, "GET", "/big", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	cu_pump(f->base, 30);
	mgw_client_cancel(r);
	assert_true(cu_wait(f->base, &f->up.s[0]->rst_received));
	rec_init(&next);
	submit(f, &next, "GET", "/big2", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &next.done));
	assert_int_equal(next.ended, 1);
	assert_int_equal(evbuffer_get_length(next.body), BIG);
	assert_int_equal(f->up.naccepted, 1);
	assert_int_equal(rc.done, 0);
	rec_deinit(&rc);
	rec_deinit(&next);
}

/* A response that arrived whole (END_STREAM) while its reader was paused
 * is complete: the server's GOAWAY and close that follow must not fail
 * it.  Its held bytes are delivered on resume, then the connection goes.
 * Before, the close failed every listed stream, this one included. */
#define HELD (40u * 1024)
static void on_held(struct h2s *s)
{
	unsigned char *b = malloc(HELD);

	assert_non_null(b);
	for (size_t i = 0; i < HELD; i++)
		b[i] = (unsigned char)(i % 241);
	h2s_respond(s, 200, NULL, b, HELD, 1);
	free(b);
}

static void check_held_survives(void **state, int goaway)
{
	struct fx *f = *state;
	struct rec rc, late;
	struct mgw_client_req *r;

	fx_start(state, 0, 0, on_held);
	rec_init(&rc);
	rc.pause_after_data = 1;
	r = submit(f, &rc, "GET", "/held", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.ndata));
	cu_pump(f->base, 50); /* the rest and END_STREAM arrive, held */
	if (goaway) {
		h2up_goaway(f->up.c[0], f->up.s[0]->id, NGHTTP2_NO_ERROR);
		h2up_flush(f->up.c[0]);
	}
	up_close_flushed(f->up.c[0]);
	cu_pump(f->base, 100);
	assert_int_equal(rc.done, 0);   /* not failed: it is complete */
	assert_int_equal(rc.ndata, 1);  /* and still paused */
	/* new work does not go to the closing connection */
	f->up.on_request = NULL;
	rec_init(&late);
	submit(f, &late, "GET", "/late", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &late.done));
	assert_int_equal(late.ended, 1);
	assert_int_equal(f->up.naccepted, 2);
	mgw_client_resume(r);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_int_equal(rc.failed, 0);
	assert_int_equal(evbuffer_get_length(rc.body), HELD);
	const unsigned char *p = evbuffer_pullup(rc.body, -1);
	for (size_t i = 0; i < HELD; i++)
		if (p[i] != (unsigned char)(i % 241))
			fail_msg("byte %zu differs", i);
	rec_deinit(&rc);
	rec_deinit(&late);
}

static void test_h2_held_response_survives_goaway(void **state)
{
	check_held_survives(state, 1);
}

static void test_h2_held_response_survives_close(void **state)
{
	check_held_survives(state, 0);
}

/* A stream whose upload is stuck behind a window the server never opens
 * again fails by its own idle timeout while other streams of the same
 * connection keep the connection busy.  Before, any output of the
 * connection (other streams' frames) restarted every stream's send
 * deadline, so the stuck one waited for the total timeout (by default,
 * for ever). */
#define TICKS 256 /* 40 ms apart: longer than any wait of the test */
struct ticker {
	struct fx *f;
	struct rec rc[TICKS];
	int n, done;
};

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct ticker *t = arg;

	(void)fd;
	(void)what;
	for (int i = 0; i < t->n; i++)
		if (t->rc[i].done && t->rc[i].ended)
			t->done += !t->rc[i].user, t->rc[i].user = t;
	if (t->n < TICKS) {
		rec_init(&t->rc[t->n]);
		submit(t->f, &t->rc[t->n], "GET", "/tick", NULL, NULL, 0, NULL);
		t->n++;
	}
}

static void test_h2_stuck_upload_times_out_alone(void **state)
{
	struct fx *f = *state;
	struct mgw_client_timeouts tmo = {.connect = 5, .first_byte = 5,
	                                  .idle = 0.2, .total = 0};
	static unsigned char body[64 * 1024];
	static struct ticker t;
	struct timeval every = {0, 40 * 1000};
	struct event *ev;
	struct rec rc;

	memset(&t, 0, sizeof(t));
	t.f = f;
	fx_start(state, 0, 16384, NULL);
	f->up.h2_no_window_update = 1;
	rec_init(&rc);
	submit(f, &rc, "POST", "/upload", NULL, body, sizeof(body), &tmo);
	ev = event_new(f->base, -1, EV_PERSIST, on_tick, &t);
	assert_non_null(ev);
	event_add(ev, &every);
	assert_true(cu_wait(f->base, &rc.done));
	event_free(ev);
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_TIMEOUT);
	assert_non_null(strstr(rc.errmsg, "while sending"));
	/* the other streams did flow meanwhile, on the same connection, and
	 * were still flowing when the stuck one failed */
	assert_true(t.done >= 2);
	assert_true(t.n < TICKS);
	assert_int_equal(f->up.naccepted, 1);
	rec_deinit(&rc);
	for (int i = 0; i < t.n; i++)
		rec_deinit(&t.rc[i]);
}

/* A connection whose peer went silent (no FIN, nothing read since the
 * stream was sent) takes no new streams once one times out: the next
 * request opens a new connection and succeeds.  Before, every new stream
 * went to the dead connection and waited out its own timeout, until the
 * kernel gave up on the socket (minutes). */
static void test_h2_silent_connection_retired(void **state)
{
	struct fx *f = *state;
	struct mgw_client_timeouts tmo = {.connect = 5, .first_byte = 0.2,
	                                  .idle = 5, .total = 0};
	struct rec first, lost, next;

	fx_start(state, 0, 0, NULL);
	rec_init(&first);
	submit(f, &first, "GET", "/one", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &first.done));
	assert_int_equal(first.ended, 1);
	f->up.c[0]->blackhole = 1;
	rec_init(&lost);
	submit(f, &lost, "GET", "/lost", NULL, NULL, 0, &tmo);
	assert_true(cu_wait(f->base, &lost.done));
	assert_int_equal(lost.failed, 1);
	assert_int_equal(lost.err.cls, MGW_CLIENT_E_TIMEOUT);
	rec_init(&next);
	submit(f, &next, "GET", "/next", NULL, NULL, 0, &tmo);
	assert_true(cu_wait(f->base, &next.done));
	assert_int_equal(next.ended, 1);
	assert_int_equal(f->up.naccepted, 2);
	rec_deinit(&first);
	rec_deinit(&lost);
	rec_deinit(&next);
}

static void test_h2_first_byte_timeout_resets_stream(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_hold);
	struct mgw_client_timeouts tmo = {.connect = 5, .first_byte = 0.1,
	                                  .idle = 5, .total = 0};
	struct rec rc;

	rec_init(&rc);
	submit(f, &rc, "POST", "/slow", NULL, "{}", 2, &tmo);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.code, MGW_ETIMEDOUT);
	assert_false(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_true(cu_wait(f->base, &f->up.s[0]->rst_received));
	assert_int_equal(f->up.s[0]->rst_code, NGHTTP2_CANCEL);
	rec_deinit(&rc);
}

static void on_interim(struct h2s *s)
{
	nghttp2_nv nv = {(uint8_t *)":status", (uint8_t *)"103", 7, 3,
	                 NGHTTP2_NV_FLAG_NONE};
	nghttp2_submit_headers(s->uc->ng, NGHTTP2_FLAG_NONE, s->id, NULL, &nv, 1,
	                       NULL);
	static const char *const h[] = {"x-final", "1", NULL};
	h2s_respond(s, 204, h, NULL, 0, 1);
}

static void test_h2_interim_and_head(void **state)
{
	struct fx *f = fx_start(state, 0, 0, on_interim);
	struct rec rc;

	rec_init(&rc);
	submit(f, &rc, "GET", "/i", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.ended, 1);
	assert_int_equal(rc.nhead, 1);
	assert_int_equal(rc.status, 204);
	assert_string_equal(mgw_headers_get(&rc.h, "x-final"), "1");
	rec_deinit(&rc);
}

/* :status outside 100..599 ("004", "600"): three digits, so nghttp2
 * takes them; the client must refuse them (a proxy must not pass them). */
static const char *bad_status;

static void on_bad_status(struct h2s *s)
{
	nghttp2_nv nv = {(uint8_t *)":status", (uint8_t *)bad_status, 7, 3,
	                 NGHTTP2_NV_FLAG_NONE};

	nghttp2_submit_headers(s->uc->ng, NGHTTP2_FLAG_END_STREAM, s->id, NULL,
	                       &nv, 1, NULL);
}

static void check_bad_status(void **state, const char *status)
{
	struct fx *f;
	struct rec rc;

	bad_status = status;
	f = fx_start(state, 0, 0, on_bad_status);
	rec_init(&rc);
	submit(f, &rc, "GET", "/s", NULL, NULL, 0, NULL);
	assert_true(cu_wait(f->base, &rc.done));
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.nhead, 0);
	rec_deinit(&rc);
}

static void test_h2_status_004(void **state) { check_bad_status(state, "004"); }
static void test_h2_status_099(void **state) { check_bad_status(state, "099"); }
static void test_h2_status_600(void **state) { check_bad_status(state, "600"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_h2_request_and_response, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_multiplexing, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_one_request_per_connection, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_server_stream_limit_queues, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_full_connection_opens_another, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_refused_stream_not_sent, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_reset_after_response_started, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_reset_before_response_is_not_retry_safe, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_goaway, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_held_response_survives_goaway, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_held_response_survives_close, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_connection_closed_after_request, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_closed_before_fully_written, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_connect_refused, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_sse_streams, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_cancel_sends_rst, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_pause_holds_window, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_stuck_upload_times_out_alone, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_silent_connection_retired, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_cancel_while_paused_returns_window, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_first_byte_timeout_resets_stream, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_interim_and_head, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_status_004, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_status_099, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_status_600, fx_setup, fx_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
