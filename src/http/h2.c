/* h2.c - HTTP/2 connections on nghttp2 (server side).
 *
 * Each request stream becomes an exchange, created at its first HEADERS
 * and handed to the handler once END_STREAM arrives.  Response bodies go
 * through an nghttp2 data provider that reads the exchange's own buffer
 * (x->out): when that is empty the provider defers, and a later
 * mgw_http_stream_write resumes it, so streamed responses respect both the
 * stream and the connection flow-control windows.  nghttp2 only writes
 * into the bufferevent while the output is below the connection limit;
 * the write callback resumes it, which keeps memory per connection bounded.
 *
 * nghttp2 forbids calling nghttp2_session_send from inside its own
 * callbacks, and sending can close (and free) streams; so API calls send
 * directly only when no nghttp2 call or stream walk is running
 * (c->ng_in_cb == 0), and otherwise leave it to the work callback. */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/conn.h"
#include "http/h2_scan.h"
#include "http/headers.h"
#include "http/read_now.h"
#include "util/decimal.h"
#include "util/time.h"

/* nghttp2 frames responses into the bufferevent only while its output is
 * below this (or the write high watermark, if larger). */
#define H2_OUT_LIMIT (64 * 1024)

static size_t out_limit(const struct mgw_http_conn *c)
{
	size_t hwm = c->srv->lim.write_high_watermark;
	return hwm > H2_OUT_LIMIT ? hwm : H2_OUT_LIMIT;
}

static void logctx(const struct mgw_http_exchange *x, struct mgw_log_ctx *ctx)
{
	mgw_conn_logctx(x->c, x->stream_id, ctx);
}

size_t mgw_h2_queued(const struct mgw_http_exchange *x)
{
	return (x->out ? evbuffer_get_length(x->out) : 0) + mgw_conn_outlen(x->c);
}

/* Sends queued frames unless we are inside nghttp2 or a stream walk.
 * Never frees the connection; a failure is left to the work callback.
 * Called from the loop only (mgw_h2_send), never from the API functions
 * below: sending can close a stream (nghttp2's own RST_STREAM after a
 * stream error, the last DATA of a half-closed one), and closing runs
 * that stream's on_abort, which must not happen inside a call its
 * handler is making (the handler would go on using what it freed).  The
 * API queues and schedules the work callback, which runs in the same
 * loop turn. */
static void h2_flush(struct mgw_http_conn *c)
{
	if (c->ng_in_cb || c->freeing)
		return;
	c->ng_in_cb++;
	int rv = nghttp2_session_send(c->ng);
	c->ng_in_cb--;
	if (rv != 0)
		c->ng_failed = 1;
}

/* ---- nghttp2 callbacks ---- */

static ssize_t on_send(nghttp2_session *ng, const uint8_t *data, size_t len,
                       int flags, void *arg)
{
	struct mgw_http_conn *c = arg;

	if (mgw_conn_outlen(c) >= out_limit(c))
		return NGHTTP2_ERR_WOULDBLOCK;
	if (bufferevent_write(c->bev, data, len) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return (ssize_t)len;
}

static void stream_timer_cb(evutil_socket_t fd, short what, void *arg);

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame,
                            void *arg)
{
	struct mgw_http_conn *c = arg;
	struct mgw_http_exchange *x;

	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	x = mgw_x_new(c, 20);
	if (!x)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* RST this stream */
	x->stream_id = frame->hd.stream_id;
	x->next = c->streams;
	if (c->streams)
		c->streams->prev = x;
	c->streams = x;
	c->nstreams++;
	nghttp2_session_set_stream_user_data(ng, x->stream_id, x);
	if (c->timer_kind == MGW_T_IDLE)
		mgw_conn_timer(c, MGW_T_NONE, 0);
	/* a header block trickled in CONTINUATION frames stalls the whole
	 * connection; header_timeout bounds it */
	if (c->srv->lim.header_timeout > 0) {
		struct timeval tv = mgw_tv(c->srv->lim.header_timeout);
		x->timer = evtimer_new(c->srv->base, stream_timer_cb, x);
		if (x->timer)
			evtimer_add(x->timer, &tv);
	}
	return 0;
}

static int set_str(char **dst, const uint8_t *v, size_t n)
{
	free(*dst);
	*dst = strndup((const char *)v, n);
	return *dst ? 0 : -1;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *arg)
{
	struct mgw_http_conn *c = arg;
	const struct mgw_http_limits *lim = &c->srv->lim;
	struct mgw_http_exchange *x;

	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0; /* trailers are accepted and dropped */
	x = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	if (!x || x->err_status)
		return 0;
	x->hdr_bytes += namelen + valuelen;
	if (x->hdr_bytes > lim->max_header_bytes) {
		x->err_status = 431;
		return 0;
	}
	if (namelen && name[0] == ':') {
		int rc = 0;
		if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
			rc = set_str(&x->method, value, valuelen);
		} else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
			if (valuelen > lim->max_uri) {
				x->err_status = 414;
				return 0;
			}
			/* origin-form or "*" only (RFC 9113 8.3.1) */
			rc = mgw_x_set_target(x, (const char *)value, valuelen, 0);
			if (rc == MGW_EINVAL) {
				x->err_status = 400;
				return 0;
			}
		} else if (namelen == 10 && memcmp(name, ":authority", 10) == 0) {
			rc = set_str(&x->authority, value, valuelen);
		}
		if (rc)
			x->err_status = 503;
		return 0;
	}
	if (x->req.n + 1 > lim->max_headers) {
		x->err_status = 431;
		return 0;
	}
	if (mgw_headers_add(&x->req, (const char *)name, namelen,
	                    (const char *)value, valuelen))
		x->err_status = 503;
	return 0;
}

static ssize_t on_data_read(nghttp2_session *ng, int32_t stream_id,
                            uint8_t *buf, size_t length, uint32_t *data_flags,
                            nghttp2_data_source *source, void *arg)
{
	struct mgw_http_exchange *x = source->ptr;
	int n = 0;

	if (x->out && evbuffer_get_length(x->out))
		n = evbuffer_remove(x->out, buf, length);
	if (n < 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	x->out_framed += (uint64_t)n;
	if (!x->out || evbuffer_get_length(x->out) == 0) {
		if (x->out_eof) {
			*data_flags |= NGHTTP2_DATA_FLAG_EOF;
		} else if (n == 0) {
			x->deferred = 1;
			return NGHTTP2_ERR_DEFERRED;
		}
	}
	if (x->want_drain)
		mgw_conn_schedule(x->c); /* on_drain is delivered from the loop */
	return n;
}


/* Answers a stream before its request ended (limits, bad request).  The
 * exchange was never handed out; it stays until nghttp2 closes the
 * stream, and once our END_STREAM is out we reset the client's side. */
static void h2_refuse(struct mgw_http_exchange *x, int status)
{
	struct mgw_http_conn *c = x->c;
	const char *ctype;
	char *body;
	size_t blen;
	struct mgw_log_ctx ctx;

	logctx(x, &ctx);
	mgw_info(&ctx, "%s: HTTP/2 request refused with %d %s", c->peer, status,
	         mgw_http_reason(status));
	mgw_refusal_body(c->srv, status, x->err_why, &x->req, &ctype, &body,
	                 &blen);
	x->refused = 1;
	x->state = MGW_X_HANDLER; /* mgw_h2_respond expects a live exchange */
	c->srv->inflight++;
	mgw_h2_respond(x, status, NULL, ctype, body, blen);
	free(body);
}

static void headers_done(struct mgw_http_conn *c, struct mgw_http_exchange *x,
                         int end_stream)
{
	const char *cl, *host;

	x->headers_done = 1;
	if (x->err_status) {
		h2_refuse(x, x->err_status);
		return;
	}
	if (!x->method || !x->target) {
		h2_refuse(x, 400);
		return;
	}
	if (strcmp(x->method, "CONNECT") == 0) {
		h2_refuse(x, 405);
		return;
	}
	x->head = strcmp(x->method, "HEAD") == 0;
	/* RFC 9112 3.2 / RFC 9113 8.3.1: a valid authority, one Host */
	host = mgw_headers_get(&x->req, "host");
	if (mgw_headers_count(&x->req, "host") > 1)
		x->err_why = "Host header sent more than once";
	else if (x->authority &&
	         !mgw_http_authority_valid(x->authority, strlen(x->authority)))
		x->err_why = "invalid :authority";
	else if (host && !mgw_http_authority_valid(host, strlen(host)))
		x->err_why = "invalid Host header";
	if (x->err_why) {
		h2_refuse(x, 400);
		return;
	}
	if (!x->authority) {
		if (host && !(x->authority = strdup(host))) {
			h2_refuse(x, 503);
			return;
		}
	}
	cl = mgw_headers_get(&x->req, "content-length");
	if (cl && strtoull(cl, NULL, 10) > (unsigned long long)c->srv->lim.max_body) {
		h2_refuse(x, 413);
		return;
	}
	if (x->timer)
		evtimer_del(x->timer);
	if (!end_stream && c->srv->lim.body_timeout > 0) {
		struct timeval tv = mgw_tv(c->srv->lim.body_timeout);
		if (!x->timer)
			x->timer = evtimer_new(c->srv->base, stream_timer_cb, x);
		if (x->timer)
			evtimer_add(x->timer, &tv);
	}
}

static void request_done(struct mgw_http_exchange *x)
{
	if (x->state != MGW_X_RECV)
		return; /* already refused */
	if (x->timer)
		evtimer_del(x->timer);
	mgw_x_dispatch(x);
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame,
                         void *arg)
{
	struct mgw_http_conn *c = arg;
	struct mgw_http_exchange *x;
	int end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

	switch (frame->hd.type) {
	case NGHTTP2_HEADERS:
		x = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
		if (!x)
			return 0;
		if (frame->headers.cat == NGHTTP2_HCAT_REQUEST)
			headers_done(c, x, end);
		if (end)
			request_done(x);
		return 0;
	case NGHTTP2_DATA:
		if (!end)
			return 0;
		x = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
		if (x)
			request_done(x);
		return 0;
	default:
		return 0;
	}
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *arg)
{
	struct mgw_http_exchange *x =
		nghttp2_session_get_stream_user_data(ng, stream_id);
	int rc;

	if (!x || x->state != MGW_X_RECV)
		return 0; /* refused streams: discard what is still coming */
	rc = mgw_x_body_append(x, data, len);
	if (rc == MGW_ELIMIT)
		h2_refuse(x, 413);
	else if (rc) /* no memory, or the connection's body budget */
		h2_refuse(x, 503);
	return 0;
}

static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame,
                         void *arg)
{
	struct mgw_http_exchange *x;

	if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
	    !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	x = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	/* RFC 9113 §8.1: a complete response may be followed by RST_STREAM
	 * (NO_ERROR) so the client stops sending a body we refused. */
	if (x && x->refused &&
	    nghttp2_session_get_stream_remote_close(ng, frame->hd.stream_id) == 0)
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
		                          NGHTTP2_NO_ERROR);
	return 0;
}

static void unlink_stream(struct mgw_http_conn *c, struct mgw_http_exchange *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		c->streams = x->next;
	if (x->next)
		x->next->prev = x->prev;
	x->prev = x->next = NULL;
	c->nstreams--;
}

static int on_stream_close(nghttp2_session *ng, int32_t stream_id,
                           uint32_t error_code, void *arg)
{
	struct mgw_http_conn *c = arg;
	struct mgw_http_exchange *x =
		nghttp2_session_get_stream_user_data(ng, stream_id);

	if (!x)
		return 0;
	nghttp2_session_set_stream_user_data(ng, stream_id, NULL);
	unlink_stream(c, x);
	if (x->state == MGW_X_HANDLER || x->state == MGW_X_STREAMING) {
		struct mgw_log_ctx ctx;
		logctx(x, &ctx);
		mgw_debug(&ctx, "%s: stream closed by client (%s)", c->peer,
		          nghttp2_http2_strerror(error_code));
	}
	mgw_x_abort(x);
	mgw_x_free(x);
	return 0;
}

/* (Re)arms x's timer for secs. */
static void stream_timer_arm(struct mgw_http_exchange *x, double secs)
{
	struct timeval tv = mgw_tv(secs);

	if (!x->timer)
		x->timer = evtimer_new(x->c->srv->base, stream_timer_cb, x);
	if (x->timer)
		evtimer_add(x->timer, &tv);
}

/* After a flush: response bytes of x still queued (no flow-control window,
 * or the socket full) start the stall timer unless it runs already; none
 * queued stop it.  Only once the request was read (before, the timer is
 * the header or body timeout's). */
static void stall_check(struct mgw_http_exchange *x)
{
	const struct mgw_http_conn *c = x->c;
	double secs = c->srv->lim.write_timeout;

	if (secs <= 0 || x->state == MGW_X_RECV)
		return;
	if (x->out && evbuffer_get_length(x->out) > 0) {
		if (!x->timer || !evtimer_pending(x->timer, NULL)) {
			x->stall_mark = x->out_framed;
			stream_timer_arm(x, secs);
		}
	} else if (x->timer) {
		evtimer_del(x->timer);
	}
}

/* Header timeout (header block unfinished: the connection is stuck, close
 * it), body timeout (reset the stream), or, once the request was read, the
 * stall timeout: response bytes queued and none framed for write_timeout
 * (a client that keeps its window shut would hold the stream, and the
 * upstream request behind it, for ever): reset the stream. */
static void stream_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_http_exchange *x = arg;
	struct mgw_http_conn *c = x->c;
	struct mgw_log_ctx ctx;

	logctx(x, &ctx);
	if (!x->headers_done) {
		mgw_info(&ctx, "%s: HTTP/2 header timeout", c->peer);
		mgw_conn_close(c);
		return;
	}
	if (x->state != MGW_X_RECV) {
		if (!x->out || evbuffer_get_length(x->out) == 0)
			return;
		if (x->out_framed != x->stall_mark) {
			/* slow, not stalled */
			x->stall_mark = x->out_framed;
			stream_timer_arm(x, c->srv->lim.write_timeout);
			return;
		}
		mgw_info(&ctx, "%s: HTTP/2 response stalled (no window) for %gs",
		         c->peer, c->srv->lim.write_timeout);
	} else if (nghttp2_session_get_stream_remote_close(c->ng, x->stream_id) != 0) {
		return;
	} else {
		mgw_info(&ctx, "%s: HTTP/2 body timeout", c->peer);
	}
	nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, x->stream_id,
	                          NGHTTP2_CANCEL);
	mgw_h2_send(c);
}

/* ---- connection ---- */

int mgw_h2_start(struct mgw_http_conn *c)
{
	const struct mgw_http_limits *lim = &c->srv->lim;
	nghttp2_session_callbacks *cbs = NULL;
	nghttp2_settings_entry iv[2];
	int rc = MGW_ENOMEM;

	if (nghttp2_session_callbacks_new(&cbs) != 0)
		return MGW_ENOMEM;
	nghttp2_session_callbacks_set_send_callback(cbs, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
	if (nghttp2_session_server_new(&c->ng, cbs, c) != 0)
		goto fail;
	mgw_h2_scan_init(&c->h2s, NGHTTP2_CLIENT_MAGIC_LEN, mgw_now_ms());
	iv[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
	iv[0].value = lim->max_streams;
	/* RFC 9113 §6.5.2 counts 32 bytes of overhead per field */
	iv[1].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
	iv[1].value = (uint32_t)(lim->max_header_bytes + 32 * lim->max_headers);
	if (nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, 2) != 0)
		goto fail;
	if (c->timer_kind != MGW_T_IDLE) /* else the accept's deadline runs */
		mgw_conn_timer(c, MGW_T_IDLE, lim->idle_timeout);
	rc = 0;
fail:
	nghttp2_session_callbacks_del(cbs);
	return rc;
}

void mgw_h2_deinit(struct mgw_http_conn *c)
{
	struct mgw_http_exchange *x;

	/* abort before deleting the session: nghttp2_session_del runs no
	 * callbacks, and handlers must hear about every unfinished stream */
	while ((x = c->streams)) {
		unlink_stream(c, x);
		if (c->ng)
			nghttp2_session_set_stream_user_data(c->ng, x->stream_id, NULL);
		mgw_x_abort(x);
		mgw_x_free(x);
	}
	if (c->ng)
		nghttp2_session_del(c->ng);
	c->ng = NULL;
}

/* Feeds n bytes to nghttp2; 0, or -1 after closing the connection. */
static int h2_feed(struct mgw_http_conn *c, const uint8_t *p, size_t n)
{
	c->ng_in_cb++;
	ssize_t rv = nghttp2_session_mem_recv(c->ng, p, n);
	c->ng_in_cb--;
	if (rv < 0 || (size_t)rv != n) {
		/* nghttp2 takes all input unless it fails (we never pause) */
		struct mgw_log_ctx ctx;
		mgw_conn_logctx(c, -1, &ctx);
		mgw_info(&ctx, "%s: HTTP/2 error: %s", c->peer,
		         rv < 0 ? nghttp2_strerror((int)rv) : "input not consumed");
		mgw_conn_close(c);
		return -1;
	}
	return 0;
}

/* A client flooding frames that cost work (h2_scan.h): GOAWAY
 * (ENHANCE_YOUR_CALM); nghttp2 reads no more, and the connection closes
 * once the GOAWAY is out. */
static void h2_calm(struct mgw_http_conn *c, const uint8_t *hd)
{
	struct mgw_log_ctx ctx;

	mgw_conn_logctx(c, -1, &ctx);
	mgw_info(&ctx, "%s: HTTP/2 frame flood (type %u): GOAWAY "
	         "ENHANCE_YOUR_CALM", c->peer, (unsigned)hd[3]);
	nghttp2_session_terminate_session(c->ng, NGHTTP2_ENHANCE_YOUR_CALM);
	c->goaway = 1;
}

/* Hands the input to nghttp2 through the frame scan: the preface and
 * payloads as they come, each frame header once all its 9 bytes are in. */
void mgw_h2_process(struct mgw_http_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct mgw_h2_scan *s = &c->h2s;
	struct evbuffer_iovec v;
	uint8_t hd[MGW_H2_FRAME_HD];
	size_t n;

	while (evbuffer_get_length(in) > 0) {
		if (mgw_h2_scan_flooded(s) || !nghttp2_session_want_read(c->ng)) {
			/* session over (GOAWAY sent or due): input is moot */
			mgw_read_drain(c->bev, evbuffer_get_length(in));
			break;
		}
		n = mgw_h2_scan_pending(s);
		if (n > 0) {
			if (evbuffer_peek(in, -1, NULL, &v, 1) < 1 || !v.iov_len)
				break;
			if (n > v.iov_len)
				n = v.iov_len;
			if (h2_feed(c, v.iov_base, n) != 0)
				return;
			mgw_h2_scan_passed(s, n);
			mgw_read_drain(c->bev, n);
			continue;
		}
		if (evbuffer_copyout(in, hd, sizeof(hd)) != (ssize_t)sizeof(hd))
			break; /* wait for the rest of the frame header */
		mgw_read_drain(c->bev, sizeof(hd));
		switch (mgw_h2_scan_frame(s, hd, mgw_now_ms())) {
		case MGW_H2S_DROP:
			continue;
		case MGW_H2S_FLOOD:
			h2_calm(c, hd);
			continue;
		case MGW_H2S_PASS:
			break;
		}
		if (h2_feed(c, hd, sizeof(hd)) != 0)
			return;
	}
	mgw_h2_send(c);
}

void mgw_h2_send(struct mgw_http_conn *c)
{
	struct mgw_http_exchange *x;

	if (c->freeing)
		return;
	h2_flush(c);
	/* drain callbacks may queue more; they cannot free streams while
	 * ng_in_cb is held (nothing is sent meanwhile) */
	c->ng_in_cb++;
	for (x = c->streams; x; x = x->next)
		mgw_x_maybe_drain(x, mgw_h2_queued(x));
	c->ng_in_cb--;
	h2_flush(c);
	for (x = c->streams; x; x = x->next)
		stall_check(x);
	if (c->ng_failed) {
		mgw_conn_close(c);
		return;
	}
	if (!nghttp2_session_want_read(c->ng) && !nghttp2_session_want_write(c->ng)) {
		/* done with this session; closes once the GOAWAY is out */
		mgw_conn_close_flushed(c);
		return;
	}
	if (c->nstreams == 0 && c->timer_kind == MGW_T_NONE)
		mgw_conn_timer(c, MGW_T_IDLE, c->srv->lim.idle_timeout);
	/* Everything nghttp2 had to send is in the output and no stream
	 * waits for it to drain (on_drain, which on_write would run): write
	 * it now, without turning write interest on and off. */
	if (nghttp2_session_want_write(c->ng))
		return;
	for (x = c->streams; x; x = x->next)
		if (x->want_drain)
			return;
	mgw_conn_write_now(c);
}

void mgw_h2_goaway(struct mgw_http_conn *c, int terminate)
{
	if (!c->ng)
		return;
	if (terminate) {
		nghttp2_session_terminate_session(c->ng, NGHTTP2_NO_ERROR);
	} else if (!c->goaway) {
		nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE,
		                      nghttp2_session_get_last_proc_stream_id(c->ng),
		                      NGHTTP2_NO_ERROR, NULL, 0);
	}
	c->goaway = 1;
}

/* ---- responses ---- */

static int no_body_status(int status)
{
	return status < 200 || status == 204 || status == 304;
}

static void nv_set(nghttp2_nv *nv, const char *name, const char *value)
{
	nv->name = (uint8_t *)name;
	nv->namelen = strlen(name);
	nv->value = (uint8_t *)value;
	nv->valuelen = strlen(value);
	nv->flags = NGHTTP2_NV_FLAG_NONE;
}

/* Submits the response HEADERS; with a data provider unless there is no
 * body to send.  Field names are lowercased (HTTP/2 requires it). */
static int h2_submit(struct mgw_http_exchange *x, int status,
                     const struct mgw_headers *h, const char *ctype,
                     int with_length, size_t len, int with_body)
{
	struct mgw_http_conn *c = x->c;
	size_t n = 0, cap = 4 + (h ? h->n : 0);
	nghttp2_nv *nva = calloc(cap, sizeof(*nva));
	char **names = calloc(cap, sizeof(*names));
	const char *tokens = h ? mgw_headers_get(h, "connection") : NULL;
	int have_ctype = ctype && mgw_header_value_valid(ctype, strlen(ctype));
	char sbuf[MGW_DEC_BUF], lbuf[MGW_DEC_BUF];
	nghttp2_data_provider prd;
	int rc = MGW_ENOMEM;

	if (!nva || !names)
		goto fail;
	mgw_dec(sbuf, (uint64_t)(status < 0 ? 0 : status));
	nv_set(&nva[n++], ":status", sbuf);
	if (!h || !mgw_headers_get(h, "date"))
		nv_set(&nva[n++], "date", mgw_http_date(c->srv));
	for (size_t i = 0; h && i < h->n; i++) {
		const struct mgw_header *f = &h->v[i];
		if (!mgw_resp_field_ok(f, h->checked, tokens, have_ctype))
			continue;
		names[i] = strdup(f->name);
		if (!names[i])
			goto fail;
		for (char *p = names[i]; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		nv_set(&nva[n], names[i], f->value);
		nva[n++].valuelen = f->value_len;
	}
	if (have_ctype)
		nv_set(&nva[n++], "content-type", ctype);
	if (with_length) {
		mgw_dec(lbuf, len);
		nv_set(&nva[n++], "content-length", lbuf);
	}
	prd.source.ptr = x;
	prd.read_callback = on_data_read;
	if (nghttp2_submit_response(c->ng, x->stream_id, nva, n,
	                            with_body ? &prd : NULL) != 0) {
		rc = MGW_ECLOSED;
		goto fail;
	}
	rc = 0;
fail:
	for (size_t i = 0; names && h && i < h->n; i++)
		free(names[i]);
	free(names);
	free(nva);
	return rc;
}

int mgw_h2_respond(struct mgw_http_exchange *x, int status,
                   const struct mgw_headers *h, const char *ctype,
                   const void *body, size_t len)
{
	struct mgw_http_conn *c = x->c;
	int nob = no_body_status(status);
	int send_body = !nob && !x->head && len > 0;
	int rc = 0;

	if (send_body) {
		x->out = evbuffer_new();
		if (!x->out || evbuffer_add(x->out, body, len) != 0)
			rc = MGW_ENOMEM;
		x->out_eof = 1;
	}
	if (!rc)
		rc = h2_submit(x, status, h, ctype, !nob, len, send_body);
	if (rc)
		nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, x->stream_id,
		                          NGHTTP2_INTERNAL_ERROR);
	mgw_x_finish(x);
	mgw_conn_schedule(c);
	return rc;
}

int mgw_h2_stream_start(struct mgw_http_exchange *x, int status,
                        const struct mgw_headers *h, const char *ctype)
{
	struct mgw_http_conn *c = x->c;
	int rc = 0;

	/* Even without a body (HEAD, 204, 304) the stream stays open until
	 * mgw_http_stream_end (an empty DATA frame carries END_STREAM):
	 * closing it early would abort an exchange the handler still uses. */
	x->no_body = no_body_status(status) || x->head;
	if (!(x->out = evbuffer_new()))
		rc = MGW_ENOMEM;
	if (!rc)
		rc = h2_submit(x, status, h, ctype, 0, 0, 1);
	if (rc) {
		nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, x->stream_id,
		                          NGHTTP2_INTERNAL_ERROR);
		mgw_x_finish(x);
		mgw_conn_schedule(c);
		return rc;
	}
	x->state = MGW_X_STREAMING;
	mgw_conn_schedule(c);
	return 0;
}

int mgw_h2_stream_write(struct mgw_http_exchange *x, const void *p, size_t n)
{
	struct mgw_http_conn *c = x->c;
	size_t hwm = c->srv->lim.write_high_watermark;

	if (n == 0 || x->no_body)
		return 0;
	if (evbuffer_get_length(x->out) + n > 4 * hwm) {
		x->want_drain = 1;
		return MGW_ELIMIT;
	}
	if (evbuffer_add(x->out, p, n) != 0)
		return MGW_ENOMEM;
	if (x->deferred) {
		x->deferred = 0;
		nghttp2_session_resume_data(c->ng, x->stream_id);
	}
	if (mgw_h2_queued(x) >= hwm)
		x->want_drain = 1;
	mgw_conn_schedule(c);
	return 0;
}

int mgw_h2_stream_end(struct mgw_http_exchange *x)
{
	struct mgw_http_conn *c = x->c;

	x->out_eof = 1;
	if (x->deferred) {
		x->deferred = 0;
		nghttp2_session_resume_data(c->ng, x->stream_id);
	}
	mgw_x_finish(x);
	mgw_conn_schedule(c);
	return 0;
}

/* RST_STREAM(INTERNAL_ERROR) tells the client the response is incomplete;
 * nghttp2 drops the stream's unsent DATA.  on_stream_close then frees x
 * without an abort callback, since x is finished. */
int mgw_h2_stream_abort(struct mgw_http_exchange *x)
{
	struct mgw_http_conn *c = x->c;

	nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, x->stream_id,
	                          NGHTTP2_INTERNAL_ERROR);
	mgw_x_finish(x);
	mgw_conn_schedule(c);
	return 0;
}
