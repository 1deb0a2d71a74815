/* h2_test.c - HTTP/2 behaviour of the server layer (src/http/h2.c): an
 * h2c prior-knowledge client built on nghttp2's client session talks to
 * the in-process server over loopback. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/conn.h"
#include "http/h2_scan-t.h"
#include "http/server.h"
#include "util/time.h"
#include "testsrv.h"

#define MAX_STREAMS 32

struct h2s {
	int32_t id;
	int status;
	char *body;
	size_t blen;
	int data_frames;
	int closed;
	uint32_t err;
	char ctype[64];
	char clen[32];
	int hop_by_hop;  /* a connection-specific field arrived */
};

struct h2c {
	struct ts *t;
	int fd;
	int eof;
	nghttp2_session *ng;
	struct h2s s[MAX_STREAMS];
	int n;
	int goaway;
	/* request body being uploaded */
	const char *up;
	size_t uplen, upoff;
};

static struct h2s *find(struct h2c *c, int32_t id)
{
	for (int i = 0; i < c->n; i++)
		if (c->s[i].id == id)
			return &c->s[i];
	return NULL;
}

static ssize_t cl_send(nghttp2_session *ng, const uint8_t *data, size_t len,
                       int flags, void *arg)
{
	struct h2c *c = arg;
	ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return NGHTTP2_ERR_WOULDBLOCK;
	if (n < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

static int cl_header(nghttp2_session *ng, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *arg)
{
	struct h2c *c = arg;
	struct h2s *s = find(c, frame->hd.stream_id);

	if (!s)
		return 0;
	if (namelen == 7 && memcmp(name, ":status", 7) == 0)
		s->status = atoi((const char *)value);
	else if (namelen == 12 && memcmp(name, "content-type", 12) == 0)
		snprintf(s->ctype, sizeof(s->ctype), "%.*s", (int)valuelen, value);
	else if (namelen == 14 && memcmp(name, "content-length", 14) == 0)
		snprintf(s->clen, sizeof(s->clen), "%.*s", (int)valuelen, value);
	else if ((namelen == 10 && memcmp(name, "keep-alive", 10) == 0) ||
	         (namelen == 8 && memcmp(name, "x-secret", 8) == 0))
		s->hop_by_hop = 1;
	return 0;
}

static int cl_data(nghttp2_session *ng, uint8_t flags, int32_t id,
                   const uint8_t *data, size_t len, void *arg)
{
	struct h2c *c = arg;
	struct h2s *s = find(c, id);

	if (!s)
		return 0;
	s->body = realloc(s->body, s->blen + len + 1);
	memcpy(s->body + s->blen, data, len);
	s->blen += len;
	s->body[s->blen] = '\0';
	return 0;
}

static int cl_frame(nghttp2_session *ng, const nghttp2_frame *frame, void *arg)
{
	struct h2c *c = arg;
	struct h2s *s;

	if (frame->hd.type == NGHTTP2_GOAWAY)
		c->goaway = 1;
	if (frame->hd.type == NGHTTP2_DATA && frame->hd.length > 0 &&
	    (s = find(c, frame->hd.stream_id)))
		s->data_frames++;
	return 0;
}

static int cl_close(nghttp2_session *ng, int32_t id, uint32_t err, void *arg)
{
	struct h2c *c = arg;
	struct h2s *s = find(c, id);

	if (s) {
		s->closed = 1;
		s->err = err;
	}
	return 0;
}

static ssize_t cl_upload(nghttp2_session *ng, int32_t id, uint8_t *buf,
                         size_t length, uint32_t *flags,
                         nghttp2_data_source *src, void *arg)
{
	struct h2c *c = arg;
	size_t n = c->uplen - c->upoff;

	if (n > length)
		n = length;
	memcpy(buf, c->up + c->upoff, n);
	c->upoff += n;
	if (c->upoff == c->uplen)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static void h2c_open_addr(struct ts *t, struct h2c *c, const char *addr)
{
	nghttp2_session_callbacks *cbs;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->fd = ts_connect_addr(addr);
	assert_true(c->fd >= 0);
	assert_int_equal(nghttp2_session_callbacks_new(&cbs), 0);
	nghttp2_session_callbacks_set_send_callback(cbs, cl_send);
	nghttp2_session_callbacks_set_on_header_callback(cbs, cl_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, cl_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, cl_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, cl_close);
	assert_int_equal(nghttp2_session_client_new(&c->ng, cbs, c), 0);
	nghttp2_session_callbacks_del(cbs);
	assert_int_equal(nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, NULL, 0), 0);
}

static void h2c_open(struct ts *t, struct h2c *c) { h2c_open_addr(t, c, t->addr); }

static void h2c_close(struct h2c *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->s[i].body);
	nghttp2_session_del(c->ng);
	if (c->fd >= 0)
		close(c->fd);
	ts_pump(c->t, 2);
}

/* One round: server loop slice, client send, client receive. */
static void h2c_pump(struct h2c *c)
{
	char buf[16384];
	ssize_t n;

	ts_pump(c->t, 1);
	assert_int_equal(nghttp2_session_send(c->ng), 0);
	while (!c->eof) {
		n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			assert_true(nghttp2_session_mem_recv(c->ng, (uint8_t *)buf,
			                                     (size_t)n) == n);
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			c->eof = 1;
		break;
	}
	assert_int_equal(nghttp2_session_send(c->ng), 0);
}

static int32_t h2c_req(struct h2c *c, const char *method, const char *path,
                       const char *body, const nghttp2_nv *extra, size_t nextra)
{
	nghttp2_nv nva[40];
	size_t n = 0;
	nghttp2_data_provider prd;
	int32_t id;

#define NV(N, V)                                                             \
	nva[n++] = (nghttp2_nv){(uint8_t *)(N), (uint8_t *)(V), strlen(N),     \
	                        strlen(V), NGHTTP2_NV_FLAG_NONE}
	NV(":method", method);
	NV(":path", path);
	NV(":scheme", "http");
	NV(":authority", "test.local");
#undef NV
	for (size_t i = 0; i < nextra && n < 40; i++)
		nva[n++] = extra[i];
	if (body) {
		c->up = body;
		c->uplen = strlen(body);
		c->upoff = 0;
		prd.source.ptr = NULL;
		prd.read_callback = cl_upload;
	}
	id = nghttp2_submit_request(c->ng, NULL, nva, n, body ? &prd : NULL, NULL);
	assert_true(id > 0);
	assert_true(c->n < MAX_STREAMS);
	c->s[c->n].id = id;
	c->n++;
	return id;
}

static struct h2s *h2c_wait_closed(struct h2c *c, int32_t id)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;
	struct h2s *s = find(c, id);

	while (!s->closed && !c->eof && mgw_now_ms() < end) {
		h2c_pump(c);
		s = find(c, id);
	}
	assert_true(s->closed);
	return s;
}

static struct mgw_http_exchange *h2c_wait_held(struct h2c *c, int i)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (c->t->nheld <= i && mgw_now_ms() < end)
		h2c_pump(c);
	assert_true(c->t->nheld > i);
	return c->t->held[i];
}

static int setup(void **state)
{
	struct ts *t = calloc(1, sizeof(*t));
	struct mgw_http_limits lim;

	mgw_http_limits_default(&lim);
	lim.max_streams = 2;
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

static void test_get_post(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	struct h2s *s;
	int32_t id;

	h2c_open(t, &c);
	id = h2c_req(&c, "GET", "/echo?x=1", NULL, NULL, 0);
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->err, NGHTTP2_NO_ERROR);
	assert_int_equal(s->status, 200);
	assert_string_equal(s->body, "GET /echo\n");
	assert_string_equal(s->ctype, "text/plain");
	assert_string_equal(s->clen, "10");
	assert_int_equal(s->hop_by_hop, 0);
	assert_int_equal(t->last_version, 20);
	assert_string_equal(t->last_authority, "test.local");

	id = h2c_req(&c, "POST", "/echo", "hello h2", NULL, 0);
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->status, 200);
	assert_string_equal(s->body, "POST /echo\nhello h2");
	assert_int_equal(t->handled, 2);
	/* both on one connection */
	assert_int_equal(mgw_http_server_connections(t->srv), 1);
	assert_int_equal(mgw_http_server_inflight(t->srv), 0);

	id = h2c_req(&c, "GET", "/nowhere", NULL, NULL, 0);
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->status, 404);
	h2c_close(&c);
}

/* :path must be origin-form or "*" whatever the :scheme (nghttp2 checks
 * it for http and https only): 400, never handed to the handler. */
static void test_path_forms(void **state)
{
	struct ts *t = *state;
	static const char *const paths[] = { "http://x/echo", "echo" };
	struct h2c c;
	struct h2s *s;

	h2c_open(t, &c);
	for (size_t i = 0; i < 2; i++) {
		nghttp2_nv nva[4];
		int32_t id;

#define NV(K, N, V)                                                          \
	nva[K] = (nghttp2_nv){(uint8_t *)(N), (uint8_t *)(V), strlen(N),       \
	                      strlen(V), NGHTTP2_NV_FLAG_NONE}
		NV(0, ":method", "GET");
		NV(1, ":path", paths[i]);
		NV(2, ":scheme", "foo");
		NV(3, ":authority", "test.local");
#undef NV
		id = nghttp2_submit_request(c.ng, NULL, nva, 4, NULL, NULL);
		assert_true(id > 0);
		c.s[c.n++].id = id;
		s = h2c_wait_closed(&c, id);
		assert_int_equal(s->status, 400);
	}
	assert_int_equal(t->handled, 0);
	h2c_close(&c);
}

/* A response held back by a client that never opens its flow-control
 * window is reset (CANCEL) after write_timeout without progress, and the
 * handler hears of it (on_abort); a stream with nothing queued (an idle
 * SSE stream) is left alone however long it waits. */
static void test_stall_timeout(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct h2c c;
	struct h2s *s;
	struct mgw_http_exchange *x;
	nghttp2_settings_entry iv = {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 0};
	int32_t stalled, idle;

	(void)state;
	mgw_http_limits_default(&lim);
	lim.write_timeout = 0.3;
	ts_start(&t, &lim, NULL);
	h2c_open(&t, &c);
	assert_int_equal(nghttp2_submit_settings(c.ng, NGHTTP2_FLAG_NONE, &iv, 1), 0);
	idle = h2c_req(&c, "GET", "/stream-hold", NULL, NULL, 0);
	h2c_wait_held(&c, 0);
	stalled = h2c_req(&c, "GET", "/stream-hold", NULL, NULL, 0);
	x = h2c_wait_held(&c, 1);
	assert_int_equal(mgw_http_stream_write(x, "data: one\n\n", 11), 0);
	s = h2c_wait_closed(&c, stalled);
	assert_int_equal(s->err, NGHTTP2_CANCEL);
	assert_int_equal(s->status, 200);
	assert_int_equal(s->blen, 0);
	assert_int_equal(t.aborts, 1);
	assert_null(t.held[1]);
	/* the idle one, nothing queued, outlives several write_timeouts */
	for (uint64_t end = mgw_now_ms() + 1000; mgw_now_ms() < end;)
		h2c_pump(&c);
	assert_int_equal(find(&c, idle)->closed, 0);
	assert_non_null(t.held[0]);
	assert_int_equal(mgw_http_stream_end(t.held[0]), 0);
	t.held[0] = NULL;
	h2c_close(&c);
	ts_stop(&t);
}

/* The request bodies of one connection's live streams share a budget of
 * MGW_CONN_BODY_FACTOR x max_body: past it a stream is refused 503 (not
 * 413: the body itself is within limits), and a finished exchange gives
 * its share back. */
static void test_conn_body_budget(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct h2c c;
	struct h2s *s;
	char body[901];
	int32_t id;

	(void)state;
	memset(body, 'b', 900);
	body[900] = '\0';
	mgw_http_limits_default(&lim);
	lim.max_body = 1000;
	lim.max_streams = 2 * MGW_CONN_BODY_FACTOR;
	ts_start(&t, &lim, NULL);
	h2c_open(&t, &c);
	for (int i = 0; i < MGW_CONN_BODY_FACTOR; i++) {
		h2c_req(&c, "POST", "/hold", body, NULL, 0);
		h2c_wait_held(&c, i);
	}
	id = h2c_req(&c, "POST", "/hold", body, NULL, 0);
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->status, 503);
	assert_int_equal(t.nheld, MGW_CONN_BODY_FACTOR);
	/* one answered: its body's share is free again */
	assert_int_equal(mgw_http_respond(t.held[0], 200, NULL, "text/plain", "ok", 2), 0);
	t.held[0] = NULL;
	id = h2c_req(&c, "POST", "/hold", body, NULL, 0);
	h2c_wait_held(&c, MGW_CONN_BODY_FACTOR);
	for (int i = 1; i <= MGW_CONN_BODY_FACTOR; i++) {
		assert_int_equal(mgw_http_respond(t.held[i], 200, NULL, "text/plain", "ok", 2), 0);
		t.held[i] = NULL;
	}
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->status, 200);
	h2c_close(&c);
	ts_stop(&t);
}

static void test_max_streams(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	int32_t a, b, d;
	uint64_t end;

	h2c_open(t, &c);
	/* three at once, before the client learned the server's limit of 2 */
	a = h2c_req(&c, "GET", "/hold", NULL, NULL, 0);
	b = h2c_req(&c, "GET", "/hold", NULL, NULL, 0);
	d = h2c_req(&c, "GET", "/hold", NULL, NULL, 0);
	assert_int_equal(nghttp2_session_send(c.ng), 0);
	struct h2s *sd = h2c_wait_closed(&c, d);
	assert_int_equal(sd->err, NGHTTP2_REFUSED_STREAM);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (t->nheld < 2 && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_int_equal(t->nheld, 2);
	assert_int_equal(t->handled, 2);
	assert_int_equal(nghttp2_session_get_remote_settings(
	                         c.ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mgw_http_respond(t->held[i], 200, NULL, NULL, "ok", 2), 0);
		t->held[i] = NULL;
	}
	assert_int_equal(h2c_wait_closed(&c, a)->status, 200);
	assert_int_equal(h2c_wait_closed(&c, b)->status, 200);
	assert_string_equal(find(&c, b)->body, "ok");
	assert_int_equal(t->aborts, 0);
	h2c_close(&c);
}

static void test_rst_stream_aborts(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	int32_t a, b;
	uint64_t end;

	h2c_open(t, &c);
	a = h2c_req(&c, "GET", "/stream-hold", NULL, NULL, 0);
	b = h2c_req(&c, "GET", "/hold", NULL, NULL, 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (t->nheld < 2 && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_int_equal(t->nheld, 2);
	assert_int_equal(nghttp2_submit_rst_stream(c.ng, NGHTTP2_FLAG_NONE, a,
	                                           NGHTTP2_CANCEL), 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (t->aborts < 1 && mgw_now_ms() < end)
		h2c_pump(&c);
	for (int i = 0; i < 10; i++)
		h2c_pump(&c);
	assert_int_equal(t->aborts, 1);
	/* the other stream is untouched and still works */
	int other = t->held[0] ? 0 : 1;
	assert_non_null(t->held[other]);
	assert_int_equal(mgw_http_respond(t->held[other], 200, NULL, NULL, "b", 1), 0);
	t->held[other] = NULL;
	assert_string_equal(h2c_wait_closed(&c, b)->body, "b");
	assert_int_equal(t->aborts, 1);

	/* closing the connection aborts every unfinished stream, once */
	h2c_req(&c, "GET", "/hold", NULL, NULL, 0);
	h2c_req(&c, "GET", "/stream-hold", NULL, NULL, 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (t->nheld < 4 && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_int_equal(t->nheld, 4);
	h2c_close(&c);
	assert_true(ts_wait_ge(t, &t->aborts, 3));
	ts_pump(t, 10);
	assert_int_equal(t->aborts, 3);
	assert_int_equal(mgw_http_server_inflight(t->srv), 0);
	assert_int_equal(mgw_http_server_connections(t->srv), 0);
}

static void test_stream_data_per_write(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	struct h2s *s;
	struct mgw_http_exchange *x;
	int32_t id;
	uint64_t end;

	h2c_open(t, &c);
	id = h2c_req(&c, "GET", "/stream-hold", NULL, NULL, 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (t->nheld < 1 && mgw_now_ms() < end)
		h2c_pump(&c);
	x = t->held[0];
	assert_non_null(x);
	assert_int_equal(mgw_http_stream_id(x), id);
	assert_int_equal(mgw_http_stream_write(x, "data: one\n\n", 11), 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (!((s = find(&c, id))->body) && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_string_equal(s->body, "data: one\n\n");
	assert_int_equal(s->data_frames, 1);
	assert_int_equal(s->status, 200);
	assert_string_equal(s->ctype, "text/event-stream");
	assert_false(s->closed);
	assert_int_equal(mgw_http_stream_write(x, "data: two\n\n", 11), 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (s->blen < 22 && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_int_equal(s->data_frames, 2);
	assert_false(s->closed);
	assert_int_equal(mgw_http_stream_end(x), 0);
	t->held[0] = NULL;
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->err, NGHTTP2_NO_ERROR);
	assert_string_equal(s->body, "data: one\n\ndata: two\n\n");

	/* HEAD: headers only, yet the exchange lives until the handler ends it */
	id = h2c_req(&c, "HEAD", "/stream-hold", NULL, NULL, 0);
	x = h2c_wait_held(&c, 1);
	for (int i = 0; i < 10; i++)
		h2c_pump(&c);
	assert_int_equal(t->aborts, 0);
	assert_false(find(&c, id)->closed);
	assert_int_equal(mgw_http_stream_write(x, "ignored", 7), 0);
	assert_int_equal(mgw_http_stream_end(x), 0);
	t->held[1] = NULL;
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->err, NGHTTP2_NO_ERROR);
	assert_int_equal(s->status, 200);
	assert_int_equal(s->blen, 0);

	/* the timer-driven SSE handler */
	id = h2c_req(&c, "GET", "/sse", NULL, NULL, 0);
	s = h2c_wait_closed(&c, id);
	assert_string_equal(s->body, "id: 1\ndata: event 1\n\nid: 2\ndata: event 2\n\n"
	                             "id: 3\ndata: event 3\n\n");
	assert_int_equal(s->data_frames, 3);
	assert_int_equal(t->aborts, 0);
	h2c_close(&c);
}

/* A response larger than the client's flow-control window arrives whole:
 * the server waits for WINDOW_UPDATEs instead of overrunning. */
static void test_flow_control(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	struct h2s *s;
	size_t big = 300 * 1024;
	char *body = malloc(big);
	int32_t id;

	for (size_t i = 0; i < big; i++)
		body[i] = (char)('a' + i % 26);
	h2c_open(t, &c);
	id = h2c_req(&c, "GET", "/hold", NULL, NULL, 0);
	h2c_wait_held(&c, 0);
	assert_int_equal(mgw_http_respond(t->held[0], 200, NULL, NULL, body, big), 0);
	t->held[0] = NULL;
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->err, NGHTTP2_NO_ERROR);
	assert_int_equal(s->blen, big);
	assert_memory_equal(s->body, body, big);

	/* streamed, with the writer respecting MGW_ELIMIT and on_drain */
	id = h2c_req(&c, "GET", "/stream-hold", NULL, NULL, 0);
	h2c_wait_held(&c, 1);
	size_t off = 0;
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;
	while (off < big && mgw_now_ms() < end) {
		size_t n = big - off < 8192 ? big - off : 8192;
		int rc = mgw_http_stream_write(t->held[1], body + off, n);
		if (rc == 0)
			off += n;
		else
			assert_int_equal(rc, MGW_ELIMIT);
		h2c_pump(&c);
	}
	assert_int_equal(off, big);
	assert_int_equal(mgw_http_stream_end(t->held[1]), 0);
	t->held[1] = NULL;
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->blen, big);
	assert_memory_equal(s->body, body, big);
	h2c_close(&c);
	free(body);
}

static void test_limits(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	char path[600];
	nghttp2_nv extra[30];
	char names[30][16];
	int32_t id;

	h2c_open(t, &c);
	/* 414 */
	path[0] = '/';
	memset(path + 1, 'p', 400);
	path[401] = '\0';
	id = h2c_req(&c, "GET", path, NULL, NULL, 0);
	assert_int_equal(h2c_wait_closed(&c, id)->status, 414);
	/* 431: too many fields */
	for (int i = 0; i < 30; i++) {
		snprintf(names[i], sizeof(names[i]), "x-h%d", i);
		extra[i] = (nghttp2_nv){(uint8_t *)names[i], (uint8_t *)"v",
		                        strlen(names[i]), 1, NGHTTP2_NV_FLAG_NONE};
	}
	id = h2c_req(&c, "GET", "/echo", NULL, extra, 30);
	assert_int_equal(h2c_wait_closed(&c, id)->status, 431);
	/* 413: declared length */
	{
		char body[1200];
		memset(body, 'b', sizeof(body) - 1);
		body[sizeof(body) - 1] = '\0';
		nghttp2_nv cl = {(uint8_t *)"content-length", (uint8_t *)"1199", 14, 4,
		                 NGHTTP2_NV_FLAG_NONE};
		id = h2c_req(&c, "POST", "/echo", body, &cl, 1);
		struct h2s *s = h2c_wait_closed(&c, id);
		assert_int_equal(s->status, 413);
		/* 413: no length, the body runs over while it streams in */
		id = h2c_req(&c, "POST", "/echo", body, NULL, 0);
		s = h2c_wait_closed(&c, id);
		assert_int_equal(s->status, 413);
	}
	assert_int_equal(t->handled, 0);
	/* the connection survives stream-level refusals */
	id = h2c_req(&c, "GET", "/echo", NULL, NULL, 0);
	assert_int_equal(h2c_wait_closed(&c, id)->status, 200);
	h2c_close(&c);
}

static void test_shutdown_goaway(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	int32_t id;
	uint64_t end;

	h2c_open(t, &c);
	id = h2c_req(&c, "GET", "/hold", NULL, NULL, 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (t->nheld < 1 && mgw_now_ms() < end)
		h2c_pump(&c);
	mgw_http_server_shutdown(t->srv, 10.0, ts_done_cb, t);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (!c.goaway && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_true(c.goaway);
	assert_int_equal(t->done_calls, 0);
	/* the stream in flight still completes */
	assert_int_equal(mgw_http_respond(t->held[0], 200, NULL, NULL, "late", 4), 0);
	t->held[0] = NULL;
	assert_string_equal(h2c_wait_closed(&c, id)->body, "late");
	end = mgw_now_ms() + TS_WAIT_MS;
	while (!c.eof && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_true(c.eof);
	assert_true(ts_wait(t, &t->done_calls));
	assert_int_equal(t->done_calls, 1);
	assert_int_equal(t->aborts, 0);
	h2c_close(&c);
}

/* Idle HTTP/2 connections get a GOAWAY and are closed. */
static void test_idle_timeout(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct h2c c;
	int32_t id;
	uint64_t end;

	mgw_http_limits_default(&lim);
	lim.idle_timeout = 0.05;
	ts_start(&t, &lim, NULL);
	h2c_open(&t, &c);
	id = h2c_req(&c, "GET", "/echo", NULL, NULL, 0);
	assert_int_equal(h2c_wait_closed(&c, id)->status, 200);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (!c.eof && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_true(c.goaway);
	assert_true(c.eof);
	h2c_close(&c);
	assert_int_equal(mgw_http_server_connections(t.srv), 0);
	ts_stop(&t);
}

static ssize_t cl_stall(nghttp2_session *ng, int32_t id, uint8_t *buf,
                        size_t length, uint32_t *flags,
                        nghttp2_data_source *src, void *arg)
{
	return NGHTTP2_ERR_DEFERRED;
}

/* A request body that never comes: the stream is reset, the connection
 * and its other streams carry on. */
static void test_body_timeout(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct h2c c;
	nghttp2_data_provider prd = {.read_callback = cl_stall};
	nghttp2_nv nva[] = {
		{(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
		{(uint8_t *)":path", (uint8_t *)"/echo", 5, 5, 0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":authority", (uint8_t *)"a", 10, 1, 0},
	};
	int32_t id, id2;

	mgw_http_limits_default(&lim);
	lim.body_timeout = 0.05;
	ts_start(&t, &lim, NULL);
	h2c_open(&t, &c);
	id = nghttp2_submit_request(c.ng, NULL, nva, 4, &prd, NULL);
	assert_true(id > 0);
	c.s[c.n++].id = id;
	struct h2s *s = h2c_wait_closed(&c, id);
	assert_int_equal(s->err, NGHTTP2_CANCEL);
	assert_int_equal(t.handled, 0);
	id2 = h2c_req(&c, "GET", "/echo", NULL, NULL, 0);
	assert_int_equal(h2c_wait_closed(&c, id2)->status, 200);
	h2c_close(&c);
	ts_stop(&t);
}

/* A Content-Length over max_body (1000 here) is 413 at once, while no byte
 * of the body was sent (the body timeout is the default 30 s, beyond the
 * wait bound); the stream is then reset so the client stops uploading. */
static void test_content_length_413_at_once(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	nghttp2_data_provider prd = {.read_callback = cl_stall};
	nghttp2_nv nva[] = {
		{(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
		{(uint8_t *)":path", (uint8_t *)"/echo", 5, 5, 0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":authority", (uint8_t *)"a", 10, 1, 0},
		{(uint8_t *)"content-length", (uint8_t *)"99999999999", 14, 11, 0},
	};
	int32_t id;

	h2c_open(t, &c);
	id = nghttp2_submit_request(c.ng, NULL, nva, 5, &prd, NULL);
	assert_true(id > 0);
	c.s[c.n++].id = id;
	struct h2s *s = h2c_wait_closed(&c, id);
	assert_int_equal(s->status, 413);
	assert_int_equal(s->err, NGHTTP2_NO_ERROR);
	assert_int_equal(t->handled, 0);
	h2c_close(&c);
}

/* A header block left unfinished (HEADERS without END_HEADERS, no
 * CONTINUATION) would stall the connection forever: header_timeout ends it. */
static void test_header_timeout(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc c;
	static const char raw[] =
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
		"\x00\x00\x00\x04\x00\x00\x00\x00\x00"         /* SETTINGS */
		"\x00\x00\x03\x01\x00\x00\x00\x00\x01\x82\x84\x86"; /* HEADERS */

	mgw_http_limits_default(&lim);
	lim.header_timeout = 0.05;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &c);
	assert_int_equal(tc_send(&c, raw, sizeof(raw) - 1), 0);
	assert_true(tc_closed(&c));
	assert_int_equal(t.handled, 0);
	tc_close(&c);
	assert_int_equal(mgw_http_server_connections(t.srv), 0);
	ts_stop(&t);
}

/* mgw_http_stream_abort: the client sees RST_STREAM(INTERNAL_ERROR) after
 * the data already written, never END_STREAM; no abort callback runs and
 * the connection carries on. */
static void test_stream_abort(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	struct h2s *s;
	struct mgw_http_exchange *x;
	int32_t id;
	uint64_t end;

	h2c_open(t, &c);
	id = h2c_req(&c, "GET", "/stream-hold", NULL, NULL, 0);
	x = h2c_wait_held(&c, 0);
	assert_int_equal(mgw_http_stream_write(x, "data: one\n\n", 11), 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (!((s = find(&c, id))->body) && mgw_now_ms() < end)
		h2c_pump(&c);
	assert_int_equal(mgw_http_stream_abort(x), 0);
	t->held[0] = NULL;
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->err, NGHTTP2_INTERNAL_ERROR);
	assert_string_equal(s->body, "data: one\n\n");
	assert_int_equal(t->aborts, 0);
	/* not streaming (any more): refused */
	assert_int_equal(mgw_http_stream_abort(NULL), MGW_EINVAL);
	id = h2c_req(&c, "GET", "/echo", NULL, NULL, 0);
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->status, 200);
	h2c_close(&c);
}

static int refusal_json(int status, const char *why,
                        const struct mgw_headers *req,
                        const char **ctype, char **body, size_t *len,
                        void *arg)
{
	(void)why;
	(void)req;
	(void)arg;
	if (status != 413)
		return -1;
	*ctype = "application/json";
	*body = strdup("{\"too\":\"large\"}");
	*len = strlen(*body);
	return 0;
}

/* A refusal-body callback replaces the layer's text for HTTP/2 refusals. */
static void test_refusal_body(void **state)
{
	struct ts *t = *state;
	struct h2c c;
	struct h2s *s;
	static char big[4000];
	int32_t id;

	mgw_http_server_set_refusal_cb(t->srv, refusal_json, NULL);
	memset(big, 'b', sizeof(big) - 1); /* over max_body (1000) */
	h2c_open(t, &c);
	id = h2c_req(&c, "POST", "/echo", big, NULL, 0);
	s = h2c_wait_closed(&c, id);
	assert_int_equal(s->status, 413);
	assert_string_equal(s->ctype, "application/json");
	assert_string_equal(s->body, "{\"too\":\"large\"}");
	h2c_close(&c);
}

/* ---- raw frames: what an nghttp2 client session would never send ---- */

#define RAW_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

/* Appends one frame to buf at *n. */
static void raw_frame(uint8_t *buf, size_t cap, size_t *n, uint8_t type,
                      uint8_t flags, uint32_t sid, const void *payload,
                      size_t len)
{
	assert_true(*n + 9 + len <= cap);
	buf[(*n)++] = (uint8_t)(len >> 16);
	buf[(*n)++] = (uint8_t)(len >> 8);
	buf[(*n)++] = (uint8_t)len;
	buf[(*n)++] = type;
	buf[(*n)++] = flags;
	buf[(*n)++] = (uint8_t)(sid >> 24);
	buf[(*n)++] = (uint8_t)(sid >> 16);
	buf[(*n)++] = (uint8_t)(sid >> 8);
	buf[(*n)++] = (uint8_t)sid;
	if (len)
		memcpy(buf + *n, payload, len);
	*n += len;
}

/* Preface, an empty SETTINGS and the ACK of the server's SETTINGS: from
 * here on the server's limits are in force. */
static void raw_start(uint8_t *buf, size_t cap, size_t *n)
{
	*n = 0;
	assert_true(cap > sizeof(RAW_PREFACE));
	memcpy(buf, RAW_PREFACE, sizeof(RAW_PREFACE) - 1);
	*n = sizeof(RAW_PREFACE) - 1;
	raw_frame(buf, cap, n, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
	raw_frame(buf, cap, n, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
}

/* A request HEADERS frame for path (5 bytes: "/hold", "/echo"), HPACK
 * without the dynamic table; end: END_STREAM. */
static void raw_request(uint8_t *buf, size_t cap, size_t *n, uint32_t sid,
                        const char *method_get, const char *path, int end)
{
	uint8_t hb[16];
	size_t k = 0;

	assert_int_equal(strlen(path), 5);
	hb[k++] = method_get ? 0x82 : 0x83; /* :method GET / POST */
	hb[k++] = 0x86;                       /* :scheme http */
	hb[k++] = 0x04;                       /* :path, literal */
	hb[k++] = 5;
	memcpy(hb + k, path, 5);
	k += 5;
	hb[k++] = 0x01;                       /* :authority, literal */
	hb[k++] = 1;
	hb[k++] = 't';
	raw_frame(buf, cap, n, NGHTTP2_HEADERS,
	          NGHTTP2_FLAG_END_HEADERS | (end ? NGHTTP2_FLAG_END_STREAM : 0),
	          sid, hb, k);
}

/* Error code of the first GOAWAY among the frames received, or -1. */
static long raw_goaway(const struct tc *c)
{
	const uint8_t *p = (const uint8_t *)c->raw;
	size_t off = 0;

	while (p && off + 9 <= c->nraw) {
		size_t len = (size_t)p[off] << 16 | (size_t)p[off + 1] << 8 | p[off + 2];
		if (off + 9 + len > c->nraw)
			break;
		if (p[off + 3] == NGHTTP2_GOAWAY && len >= 8) {
			const uint8_t *e = p + off + 9 + 4;
			return (long)((uint32_t)e[0] << 24 | (uint32_t)e[1] << 16 |
			              (uint32_t)e[2] << 8 | e[3]);
		}
		off += 9 + len;
	}
	return -1;
}

/* Streams over SETTINGS_MAX_CONCURRENT_STREAMS (2) opened after the client
 * acknowledged it: each is refused with RST_STREAM(REFUSED_STREAM), the
 * connection and its other streams carry on (RFC 9113 §5.1.2).  nghttp2
 * alone would end the connection with PROTOCOL_ERROR here. */
static void test_max_streams_after_ack(void **state)
{
	struct ts *t = *state;
	static const uint8_t rst5[] = { 0, 0, 4, NGHTTP2_RST_STREAM, 0, 0, 0, 0, 5,
	                                0, 0, 0, NGHTTP2_REFUSED_STREAM };
	static const uint8_t rst7[] = { 0, 0, 4, NGHTTP2_RST_STREAM, 0, 0, 0, 0, 7,
	                                0, 0, 0, NGHTTP2_REFUSED_STREAM };
	uint8_t buf[512];
	size_t n;
	struct tc c;

	raw_start(buf, sizeof(buf), &n);
	raw_request(buf, sizeof(buf), &n, 1, "GET", "/hold", 1);
	raw_request(buf, sizeof(buf), &n, 3, "GET", "/hold", 1);
	raw_request(buf, sizeof(buf), &n, 5, "GET", "/hold", 1);
	raw_request(buf, sizeof(buf), &n, 7, "GET", "/echo", 1);
	tc_open(t, &c);
	assert_int_equal(tc_send(&c, buf, n), 0);
	assert_true(tc_wait_bytes(&c, rst5, sizeof(rst5)));
	assert_true(tc_wait_bytes(&c, rst7, sizeof(rst7)));
	assert_int_equal(ts_wait_ge(t, &t->nheld, 2), 1);
	assert_int_equal(t->handled, 2);
	assert_int_equal(raw_goaway(&c), -1);
	assert_false(c.eof);

	/* once a stream is done, a new one is served on the same connection */
	assert_int_equal(mgw_http_respond(t->held[0], 200, NULL, NULL, "ok", 2), 0);
	t->held[0] = NULL;
	ts_pump(t, 5);
	n = 0;
	raw_request(buf, sizeof(buf), &n, 9, "GET", "/echo", 1);
	assert_int_equal(tc_send(&c, buf, n), 0);
	assert_int_equal(ts_wait_ge(t, &t->handled, 3), 1);
	assert_true(tc_wait_raw(&c, "GET /echo"));
	assert_int_equal(raw_goaway(&c), -1);
	assert_int_equal(mgw_http_respond(t->held[1], 200, NULL, NULL, "ok", 2), 0);
	t->held[1] = NULL;
	tc_close(&c);
}

enum flood { FLOOD_PING, FLOOD_SETTINGS, FLOOD_RST, FLOOD_EMPTY_DATA,
             FLOOD_PRIORITY };

/* Sends frames of one kind, count of them, after a request on stream 1
 * (ended, or open for FLOOD_EMPTY_DATA) and returns the raw client. */
static void flood_send(struct ts *t, struct tc *c, enum flood kind, int count)
{
	static const uint8_t ping[8] = "12345678";
	static const uint8_t cancel[4] = { 0, 0, 0, NGHTTP2_CANCEL };
	static const uint8_t prio[5] = { 0, 0, 0, 0, 15 };
	size_t cap = 64 + (size_t)count * 20, n;
	uint8_t *buf = malloc(cap);

	assert_non_null(buf);
	raw_start(buf, cap, &n);
	raw_request(buf, cap, &n, 1, kind == FLOOD_EMPTY_DATA ? NULL : "GET",
	            "/echo", kind != FLOOD_EMPTY_DATA);
	for (int i = 0; i < count; i++) {
		switch (kind) {
		case FLOOD_PING:
			raw_frame(buf, cap, &n, NGHTTP2_PING, 0, 0, ping, 8);
			break;
		case FLOOD_SETTINGS:
			raw_frame(buf, cap, &n, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
			break;
		case FLOOD_RST:
			raw_frame(buf, cap, &n, NGHTTP2_RST_STREAM, 0, 1, cancel, 4);
			break;
		case FLOOD_EMPTY_DATA:
			raw_frame(buf, cap, &n, NGHTTP2_DATA, 0, 1, NULL, 0);
			break;
		case FLOOD_PRIORITY:
			raw_frame(buf, cap, &n, NGHTTP2_PRIORITY, 0, 3, prio, 5);
			break;
		}
	}
	tc_open(t, c);
	tc_send(c, buf, n); /* the server may close before all is sent */
	free(buf);
}

/* A flood of frames that each cost an answer or work ends with GOAWAY
 * (ENHANCE_YOUR_CALM) and the connection closed, whatever the kind; well
 * below the bound the same frames are answered and the connection lives. */
static void test_frame_floods(void **state)
{
	struct ts *t = *state;
	static const char *const names[] = { "PING", "SETTINGS", "RST_STREAM",
	                                     "empty DATA", "PRIORITY" };
	struct tc c;

	for (int k = FLOOD_PING; k <= FLOOD_PRIORITY; k++) {
		flood_send(t, &c, (enum flood)k, 3 * MGW_H2_CALM_BURST);
		if (!tc_closed(&c) || raw_goaway(&c) != NGHTTP2_ENHANCE_YOUR_CALM)
			print_error("%s flood: closed %d, GOAWAY %ld\n", names[k],
			            c.eof, raw_goaway(&c));
		assert_true(c.eof);
		assert_int_equal(raw_goaway(&c), NGHTTP2_ENHANCE_YOUR_CALM);
		tc_close(&c);
	}
	assert_int_equal(mgw_http_server_connections(t->srv), 0);

	/* a few: answered (PING ACKs), no GOAWAY, the connection stays */
	flood_send(t, &c, FLOOD_PING, MGW_H2_CALM_BURST / 4);
	assert_true(tc_wait_raw(&c, "GET /echo"));
	assert_true(tc_wait_bytes(&c, "\x00\x00\x08\x06\x01\x00\x00\x00\x00"
	                              "12345678", 17));
	ts_pump(t, 20);
	assert_int_equal(raw_goaway(&c), -1);
	assert_false(c.eof);
	tc_close(&c);
}
int main(void)
{
	mgw_log_set_level(MGW_LOG_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_path_forms, setup, teardown),
		cmocka_unit_test(test_stall_timeout),
		cmocka_unit_test(test_conn_body_budget),
		cmocka_unit_test_setup_teardown(test_get_post, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_streams_after_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_floods, setup, teardown),
		cmocka_unit_test_setup_teardown(test_content_length_413_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rst_stream_aborts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_data_per_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flow_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_goaway, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusal_body, setup, teardown),
		cmocka_unit_test(test_idle_timeout),
		cmocka_unit_test(test_body_timeout),
		cmocka_unit_test(test_header_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
