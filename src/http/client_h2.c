/* client_h2.c - HTTP/2 to upstreams on an nghttp2 client session.
 *
 * Each request is one stream.  Request bodies come from the request's own
 * copy through a data provider.  Response DATA goes to on_data straight
 * from nghttp2's chunk callback; flow-control window is returned to the
 * server (nghttp2_session_consume, automatic window updates are off) only
 * for bytes the caller has taken, so a paused request stops the upstream
 * once its stream window is used up.  What arrives inside the window while
 * paused is held on the request and delivered on resume.
 *
 * Retry safety.  A stream the server refused (RST_STREAM REFUSED_STREAM,
 * or above the last-stream-id of a GOAWAY) was not processed, as RFC 9113
 * §8.7 guarantees, and is reported NOT_SENT.
 *
 * nghttp2 forbids re-entering nghttp2_session_send/mem_recv from its own
 * callbacks; the user callbacks we call from inside them can only mark
 * state and make events active (see client_conn.h), and the work callback
 * does the rest. */
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
#include "http/client_conn.h"
#include "http/headers.h"
#include "http/read_now.h"
#include "util/decimal.h"
#include "util/time.h"

/* nghttp2 writes frames into the bufferevent only while less than this is
 * waiting there; the write callback resumes it. */
#define H2_OUT_LIMIT (64 * 1024)

static struct mgw_client_req *stream_req(struct mgw_client_conn *c,
                                         int32_t sid)
{
	return nghttp2_session_get_stream_user_data(c->ng, sid);
}

static void unlink_stream(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		c->streams = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
	c->nstreams--;
}

/* Idle keep-alive for a connection without streams; none while busy. */
static void idle_timer(struct mgw_client_conn *c)
{
	double ka = c->o->cl->lim.keepalive_timeout;

	if (c->state != MGW_CC_READY)
		return;
	if (c->streams) {
		evtimer_del(c->timer);
		return;
	}
	if (c->used && c->o->one_request) {
		/* its one stream is done; from the loop, since this runs
		 * inside nghttp2 callbacks too */
		c->closing = 1;
		mgw_cconn_schedule(c);
		return;
	}
	if (ka > 0 && !evtimer_pending(c->timer, NULL)) {
		struct timeval tv = mgw_tv(ka);
		evtimer_add(c->timer, &tv);
	}
}

/* ---- nghttp2 callbacks ---- */

static ssize_t on_send(nghttp2_session *ng, const uint8_t *data, size_t len,
                       int flags, void *arg)
{
	struct mgw_client_conn *c = arg;

	(void)ng;
	(void)flags;
	if (!c->bev || c->state != MGW_CC_READY)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) >= H2_OUT_LIMIT)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (bufferevent_write(c->bev, data, len) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return (ssize_t)len;
}

static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame,
                         void *arg)
{
	struct mgw_client_conn *c = arg;
	struct mgw_client_req *r;

	if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
	    !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	r = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	if (r)
		mgw_cconn_mark_end(c, r);
	return 0;
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame,
                            void *arg)
{
	struct mgw_client_conn *c = arg;
	struct mgw_client_req *r;

	(void)ng;
	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	r = stream_req(c, frame->hd.stream_id);
	if (!r || r->state != MGW_CRQ_ACTIVE)
		return 0;
	mgw_creq_activity(r);
	if (!r->head_sent) {
		mgw_headers_deinit(&r->resp);
		r->resp_bytes = 0;
		r->status = 0;
	}
	return 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *arg)
{
	struct mgw_client_conn *c = arg;
	const struct mgw_client_limits *lim = &c->o->cl->lim;
	struct mgw_client_req *r;

	(void)ng;
	(void)flags;
	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	r = stream_req(c, frame->hd.stream_id);
	if (!r || r->state != MGW_CRQ_ACTIVE || r->head_sent)
		return 0; /* trailers are dropped */
	if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
		int st = 0;
		if (valuelen != 3)
			goto bad;
		for (size_t i = 0; i < 3; i++) {
			if (!isdigit(value[i]))
				goto bad;
			st = st * 10 + (value[i] - '0');
		}
		if (st < 100 || st > 599) /* RFC 9110 §15: 100..599 */
			goto bad;
		r->status = st;
		return 0;
	}
	if (namelen && name[0] == ':')
		goto bad;
	r->resp_bytes += namelen + valuelen;
	if (r->resp_bytes > lim->max_header_bytes ||
	    r->resp.n + 1 > lim->max_headers) {
		mgw_creq_fail(r, MGW_ELIMIT, MGW_CLIENT_E_PROTO,
		              "response header too large", 0);
		r->want_rst = 1;
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	if (mgw_header_is_hop_by_hop((const char *)name, namelen))
		return 0;
	if (mgw_headers_add(&r->resp, (const char *)name, namelen,
	                    (const char *)value, valuelen) != 0) {
		mgw_creq_fail(r, MGW_ENOMEM, MGW_CLIENT_E_PROTO,
		              "no memory for response headers", 0);
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return 0;
bad:
	mgw_creq_fail(r, MGW_EPROTO, MGW_CLIENT_E_PROTO,
	              "malformed HTTP/2 response head", 0);
	return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
}

/* The response ended; held data (paused) goes first. */
static void stream_end(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	if (r->paused || (r->held && evbuffer_get_length(r->held) > 0)) {
		r->end_pending = 1;
		mgw_cconn_schedule(c);
		return;
	}
	mgw_creq_end(r);
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame,
                         void *arg)
{
	struct mgw_client_conn *c = arg;
	struct mgw_client_req *r;

	(void)ng;
	switch (frame->hd.type) {
	case NGHTTP2_HEADERS:
		r = stream_req(c, frame->hd.stream_id);
		if (!r || r->state != MGW_CRQ_ACTIVE)
			return 0;
		if (!r->head_sent) {
			if (r->status >= 100 && r->status < 200) {
				/* interim: the final head follows */
				mgw_headers_deinit(&r->resp);
				r->resp_bytes = 0;
				r->status = 0;
				return 0;
			}
			if (r->status < 200) {
				mgw_creq_fail(r, MGW_EPROTO, MGW_CLIENT_E_PROTO,
				              "HTTP/2 response without :status", 0);
				r->want_rst = 1;
				mgw_cconn_schedule(c);
				return 0;
			}
			mgw_creq_head(r);
		}
		if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
		    r->state == MGW_CRQ_ACTIVE)
			stream_end(c, r);
		return 0;
	case NGHTTP2_DATA:
		r = stream_req(c, frame->hd.stream_id);
		if (r && r->state == MGW_CRQ_ACTIVE &&
		    (frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
			stream_end(c, r);
		return 0;
	case NGHTTP2_GOAWAY:
		c->goaway = 1;
		c->goaway_last = frame->goaway.last_stream_id;
		mgw_origin_kick(c->o); /* queued requests need another connection */
		return 0;
	case NGHTTP2_SETTINGS:
		mgw_origin_kick(c->o); /* the stream limit may have changed */
		return 0;
	default:
		return 0;
	}
}

static void consume(struct mgw_client_conn *c, struct mgw_client_req *r,
                    int32_t sid, size_t n)
{
	if (r && r->stream_closed)
		nghttp2_session_consume_connection(c->ng, n);
	else
		nghttp2_session_consume(c->ng, sid, n);
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t sid,
                         const uint8_t *data, size_t len, void *arg)
{
	struct mgw_client_conn *c = arg;
	struct mgw_client_req *r = stream_req(c, sid);

	(void)ng;
	(void)flags;
	if (!r || r->state != MGW_CRQ_ACTIVE) {
		consume(c, r, sid, len);
		return 0;
	}
	mgw_creq_activity(r);
	if (r->paused || (r->held && evbuffer_get_length(r->held) > 0)) {
		if (!r->held)
			r->held = evbuffer_new();
		if (!r->held || evbuffer_add(r->held, data, len) != 0) {
			mgw_creq_fail(r, MGW_ENOMEM, MGW_CLIENT_E_PROTO,
			              "no memory for held response data", 0);
			r->want_rst = 1;
			mgw_cconn_schedule(c);
			consume(c, r, sid, len);
		}
		return 0; /* window returned when delivered */
	}
	mgw_creq_data(r, data, len);
	consume(c, r, sid, len);
	return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t sid, uint32_t code,
                           void *arg)
{
	struct mgw_client_conn *c = arg;
	struct mgw_client_req *r = stream_req(c, sid);

	(void)ng;
	if (!r || c->freeing)
		return 0;
	r->stream_closed = 1;
	if (r->state == MGW_CRQ_ACTIVE) {
		if (r->end_pending)
			return 0; /* complete; held data still to deliver */
		if (code == NGHTTP2_REFUSED_STREAM ||
		    (c->goaway && c->goaway_last >= 0 && sid > c->goaway_last)) {
			mgw_creq_fail(r, MGW_ECLOSED, MGW_CLIENT_E_REFUSED,
			              "upstream refused the stream",
			              MGW_CLIENT_F_NOT_SENT);
		} else {
			snprintf(c->msgbuf, sizeof(c->msgbuf),
			         "upstream reset the stream (%s)",
			         nghttp2_http2_strerror(code));
			mgw_creq_fail(r, MGW_ECLOSED, MGW_CLIENT_E_RESET, c->msgbuf, 0);
		}
	}
	nghttp2_session_set_stream_user_data(c->ng, sid, NULL);
	unlink_stream(c, r);
	mgw_creq_free(r);
	idle_timer(c);
	mgw_origin_kick(c->o);
	return 0;
}

/* Body source: the request's own copy. */
static ssize_t read_body(nghttp2_session *ng, int32_t sid, uint8_t *buf,
                         size_t len, uint32_t *data_flags,
                         nghttp2_data_source *src, void *arg)
{
	struct mgw_client_req *r = src->ptr;
	size_t n = r->body_len - r->body_off;

	(void)ng;
	(void)sid;
	(void)arg;
	if (n > len)
		n = len;
	memcpy(buf, r->body + r->body_off, n);
	r->body_off += n;
	if (r->body_off == r->body_len)
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* ---- connection ---- */

int mgw_ch2_start(struct mgw_client_conn *c)
{
	const struct mgw_client_limits *lim = &c->o->cl->lim;
	nghttp2_session_callbacks *cbs = NULL;
	nghttp2_option *opt = NULL;
	int rv = MGW_ENOMEM;
	uint64_t connwin;

	if (nghttp2_session_callbacks_new(&cbs) != 0 || nghttp2_option_new(&opt) != 0)
		goto fail;
	nghttp2_session_callbacks_set_send_callback(cbs, on_send);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs,
	                                                        on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
	                                                          on_data_chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
	                                                       on_stream_close);
	nghttp2_option_set_no_auto_window_update(opt, 1);
	if (nghttp2_session_client_new2(&c->ng, cbs, c, opt) != 0)
		goto fail;
	nghttp2_settings_entry iv[] = {
	    {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
	    {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, lim->h2_stream_window},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
	     (uint32_t)(lim->max_header_bytes + 32 * lim->max_headers)},
	};
	if (nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv,
	                            sizeof(iv) / sizeof(iv[0])) != 0)
		goto fail;
	/* The connection window must cover every stream's window, or one
	 * paused stream would stall the others. */
	connwin = (uint64_t)lim->h2_stream_window * lim->h2_max_streams;
	if (connwin > 0x7fffffff)
		connwin = 0x7fffffff;
	if (connwin > 65535 &&
	    nghttp2_session_set_local_window_size(c->ng, NGHTTP2_FLAG_NONE, 0,
	                                          (int32_t)connwin) != 0)
		goto fail;
	rv = 0;
fail:
	nghttp2_session_callbacks_del(cbs);
	nghttp2_option_del(opt);
	if (rv != 0 && c->ng) {
		nghttp2_session_del(c->ng);
		c->ng = NULL;
	}
	return rv;
}

int mgw_ch2_has_room(const struct mgw_client_conn *c)
{
	uint32_t cap = c->o->cl->lim.h2_max_streams;
	uint32_t remote;

	if (!c->ng || c->goaway || (c->used && c->o->one_request))
		return 0;
	remote = nghttp2_session_get_remote_settings(
	    c->ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
	if (remote < cap)
		cap = remote;
	return c->nstreams < cap;
}

static nghttp2_nv mknv(const char *n, size_t nl, const char *v, size_t vl,
                       uint8_t flags)
{
	nghttp2_nv nv = {(uint8_t *)n, (uint8_t *)v, nl, vl, flags};
	return nv;
}

int mgw_ch2_submit(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	nghttp2_nv *nva;
	size_t n = 0;
	char clbuf[MGW_DEC_BUF];
	nghttp2_data_provider prd;
	int32_t sid;

	if (!c->ng || c->goaway)
		return MGW_ELIMIT;
	nva = calloc(r->hdr.n + 5, sizeof(*nva));
	if (!nva)
		return MGW_ENOMEM;
	nva[n++] = mknv(":method", 7, r->method, r->method_len,
	                NGHTTP2_NV_FLAG_NONE);
	nva[n++] = mknv(":scheme", 7, c->tls ? "https" : "http", c->tls ? 5 : 4,
	                NGHTTP2_NV_FLAG_NONE);
	nva[n++] = mknv(":authority", 10, r->authority, r->authority_len,
	                NGHTTP2_NV_FLAG_NONE);
	nva[n++] = mknv(":path", 5, r->target, r->target_len,
	                NGHTTP2_NV_FLAG_NONE);
	for (size_t i = 0; i < r->hdr.n; i++) {
		struct mgw_header *f = &r->hdr.v[i];
		/* HTTP/2 field names are lowercase (RFC 9113 §8.2.1) */
		for (size_t k = 0; k < f->name_len; k++)
			f->name[k] = (char)tolower((unsigned char)f->name[k]);
		nva[n++] = mknv(f->name, f->name_len, f->value, f->value_len,
		                mgw_log_header_is_secret(f->name)
		                    ? NGHTTP2_NV_FLAG_NO_INDEX
		                    : NGHTTP2_NV_FLAG_NONE);
	}
	if (mgw_creq_needs_length(r)) {
		size_t l = mgw_dec(clbuf, r->body_len);
		nva[n++] = mknv("content-length", 14, clbuf, l,
		                NGHTTP2_NV_FLAG_NONE);
	}
	prd.source.ptr = r;
	prd.read_callback = read_body;
	r->body_off = r->progress_off = 0;
	r->read_mark = c->read_total;
	sid = nghttp2_submit_request(c->ng, NULL, nva, n,
	                             r->body_len ? &prd : NULL, r);
	free(nva);
	if (sid < 0) {
		if (sid == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE) {
			c->goaway = 1; /* stream ids used up: a new connection */
			return MGW_ELIMIT;
		}
		return MGW_ENOMEM;
	}
	r->stream_id = sid;
	r->h2 = 1;
	r->prev = NULL;
	r->next = c->streams;
	if (c->streams)
		c->streams->prev = r;
	c->streams = r;
	c->nstreams++;
	if (c->state == MGW_CC_READY)
		evtimer_del(c->timer); /* keep-alive: busy again */
	return 0;
}

static void h2_fail(struct mgw_client_conn *c, int rv)
{
	struct mgw_log_ctx ctx;

	mgw_cconn_logctx(c, -1, &ctx);
	mgw_info(&ctx, "upstream %s: HTTP/2 error: %s", c->o->name,
	         nghttp2_strerror(rv));
	snprintf(c->msgbuf, sizeof(c->msgbuf), "HTTP/2 error: %s",
	         nghttp2_strerror(rv));
	mgw_cconn_set_error(c, MGW_EPROTO, MGW_CLIENT_E_PROTO, c->msgbuf, 0);
	mgw_cconn_close(c);
}

void mgw_ch2_send(struct mgw_client_conn *c)
{
	int rv;

	if (c->freeing || c->state != MGW_CC_READY)
		return;
	if (c->retiring) {
		/* nothing goes out on a dead connection; it closes once its
		 * complete held streams are delivered */
		if (!c->streams)
			mgw_cconn_close(c);
		return;
	}
	if (c->ng_busy) {
		mgw_cconn_schedule(c);
		return;
	}
	c->ng_busy++;
	rv = nghttp2_session_send(c->ng);
	c->ng_busy--;
	if (rv != 0) {
		h2_fail(c, rv);
		return;
	}
	if (c->goaway && !c->streams) {
		mgw_cconn_close(c); /* drained after GOAWAY */
		return;
	}
	if (!nghttp2_session_want_read(c->ng) &&
	    !nghttp2_session_want_write(c->ng)) {
		mgw_cconn_set_error(c, MGW_ECLOSED, MGW_CLIENT_E_CLOSED,
		                    "HTTP/2 session ended", 0);
		if (!mgw_ch2_retire(c))
			mgw_cconn_close(c);
		return;
	}
	idle_timer(c);
}

void mgw_ch2_process(struct mgw_client_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	int guard = 1 << 20;

	if (c->retiring) {
		mgw_ch2_send(c); /* nothing more is read */
		return;
	}
	c->read_total += evbuffer_get_length(in);
	c->ng_busy++;
	while (evbuffer_get_length(in) > 0 && guard--) {
		struct evbuffer_iovec v;
		ssize_t rv;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		rv = nghttp2_session_mem_recv(c->ng, v.iov_base, v.iov_len);
		if (rv < 0) {
			c->ng_busy--;
			h2_fail(c, (int)rv);
			return;
		}
		mgw_read_drain(c->bev, (size_t)rv);
	}
	c->ng_busy--;
	mgw_ch2_send(c);
}

/* Delivers what r holds while it is not paused; a request that is done
 * (cancelled) drops its held bytes and gives their window back. */
static void deliver_held(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	int guard = 1 << 16;

	if (!r->held)
		return;
	if (r->state != MGW_CRQ_ACTIVE) {
		size_t n = evbuffer_get_length(r->held);
		if (n) {
			evbuffer_drain(r->held, n);
			consume(c, r, r->stream_id, n);
		}
		return;
	}
	while (evbuffer_get_length(r->held) > 0 && guard--) {
		struct evbuffer_iovec v;
		if (r->state != MGW_CRQ_ACTIVE || r->paused)
			return;
		if (evbuffer_peek(r->held, -1, NULL, &v, 1) < 1)
			return;
		mgw_creq_data(r, v.iov_base, v.iov_len);
		evbuffer_drain(r->held, v.iov_len);
		consume(c, r, r->stream_id, v.iov_len);
	}
}

void mgw_ch2_work(struct mgw_client_conn *c)
{
	struct mgw_client_req *r, *next;

	c->ng_busy++;
	for (r = c->streams; r; r = next) {
		next = r->next;
		if (r->want_rst && !r->rst_sent && !r->stream_closed) {
			nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, r->stream_id,
			                          NGHTTP2_CANCEL);
			r->rst_sent = 1;
		}
		if (!r->paused || r->state != MGW_CRQ_ACTIVE)
			deliver_held(c, r);
		if (r->end_pending && r->state == MGW_CRQ_ACTIVE && !r->paused &&
		    !(r->held && evbuffer_get_length(r->held) > 0)) {
			r->end_pending = 0;
			mgw_creq_end(r);
		}
		if (r->state == MGW_CRQ_DONE && r->stream_closed) {
			/* kept past its stream for held data */
			unlink_stream(c, r);
			mgw_creq_free(r);
		}
	}
	c->ng_busy--;
	idle_timer(c);
	mgw_ch2_send(c);
}

/* Fails r with c's close reason, unlinks and frees it. */
static void fail_stream(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	int err = c->close_err ? c->close_err : MGW_ECLOSED;
	enum mgw_client_err_class cls =
	    c->close_err ? c->close_cls : MGW_CLIENT_E_CLOSED;
	const char *msg = c->close_msg ? c->close_msg
	                               : "upstream closed the connection";
	unsigned flags = c->close_flags | mgw_creq_unsent(r);

	if (c->goaway && c->goaway_last >= 0 && r->stream_id > c->goaway_last)
		flags |= MGW_CLIENT_F_NOT_SENT;
	unlink_stream(c, r);
	if (c->ng && r->stream_id > 0 && !r->stream_closed)
		nghttp2_session_set_stream_user_data(c->ng, r->stream_id, NULL);
	mgw_creq_fail(r, err, cls, msg, flags);
	mgw_creq_free(r);
}

void mgw_ch2_fail_all(struct mgw_client_conn *c)
{
	while (c->streams)
		fail_stream(c, c->streams);
}

/* A response that ended (END_STREAM) while its reader was paused. */
static int complete_held(const struct mgw_client_req *r)
{
	return r->end_pending && r->state == MGW_CRQ_ACTIVE;
}

int mgw_ch2_retire(struct mgw_client_conn *c)
{
	struct mgw_client_req *r, *next;
	int keep = 0;

	for (r = c->streams; r; r = r->next)
		keep |= complete_held(r);
	if (!keep)
		return 0;
	c->retiring = 1;
	c->goaway = 1; /* no new streams */
	for (r = c->streams; r; r = next) {
		next = r->next;
		if (!complete_held(r)) {
			fail_stream(c, r);
			continue;
		}
		/* the session is over for it too: free it once delivered */
		if (c->ng && r->stream_id > 0 && !r->stream_closed)
			nghttp2_session_set_stream_user_data(c->ng, r->stream_id, NULL);
		r->stream_closed = 1;
	}
	if (c->bev)
		bufferevent_disable(c->bev, EV_READ);
	return 1;
}

void mgw_ch2_deinit(struct mgw_client_conn *c)
{
	if (c->ng) {
		nghttp2_session_del(c->ng);
		c->ng = NULL;
	}
}
