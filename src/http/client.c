/* client.c - the upstream HTTP client: origins, request queues, connection
 * pools, connection setup (resolve, TCP, TLS, ALPN), timers and counters.
 * The wire protocols live in client_h1.c and client_h2.c.
 *
 * Dispatch.  Submitting only queues a request on its origin and makes the
 * origin's kick event active; the kick hands queued requests to an idle
 * HTTP/1.1 connection (most recently used first, after checking the server
 * has not closed it meanwhile), to an HTTP/2 connection with a free stream
 * slot, or to a new connection while the origin is under its limit.  A new
 * HTTP/1.1 connection is reserved for the request that caused it; if that
 * request goes away first, the connection joins the idle pool when ready.
 *
 * "Fully written".  The output evbuffer of every connection counts bytes
 * added and bytes removed (handed to the kernel, or to SSL_write, which
 * only succeeds once the record is in the kernel).  A request is fully
 * written when the removed count passes the position of its last byte;
 * until then a closed connection proves the upstream never got all of it,
 * which is the only case (with HTTP/2 refusals) reported as NOT_SENT. */
#include "autoconf.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/client_conn.h"
#include "http/headers.h"
#include "net/tls_client.h"
#include "util/time.h"

/* Input read ahead of the parser per connection; reading stops above it. */
#define READ_HIGH_WATERMARK (256 * 1024)

#define STAT_INC(o, f)                                                  \
	do {                                                            \
		(o)->st.f++;                                            \
		(o)->cl->st.f++;                                        \
	} while (0)

static const unsigned char alpn_h2[] = "\x02h2";
static const unsigned char alpn_auto[] = "\x02h2\x08http/1.1";

static void conn_open(struct mgw_client_origin *o, struct mgw_client_req *owner,
                      double connect_s);
static void conn_ready(struct mgw_client_conn *c);
static void conn_try_connect(struct mgw_client_conn *c);
static void on_event(struct bufferevent *bev, short what, void *arg);

void mgw_client_limits_default(struct mgw_client_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->tmo.connect = 5;
	lim->tmo.first_byte = 60;
	lim->tmo.idle = 300;
	lim->tmo.total = 0;
	lim->max_conns_per_origin = 64;
	lim->max_idle_per_origin = 16;
	lim->max_pending_per_origin = 1024;
	lim->keepalive_timeout = 30;
	lim->max_header_bytes = 64 * 1024;
	lim->max_headers = 100;
	lim->h2_max_streams = 128;
	lim->h2_stream_window = 256 * 1024;
	lim->dns_cache_ttl = 30;
}

const char *mgw_client_err_class_name(enum mgw_client_err_class c)
{
	switch (c) {
	case MGW_CLIENT_E_DNS: return "dns";
	case MGW_CLIENT_E_CONNECT: return "connect";
	case MGW_CLIENT_E_TLS: return "tls";
	case MGW_CLIENT_E_TIMEOUT: return "timeout";
	case MGW_CLIENT_E_PROTO: return "protocol";
	case MGW_CLIENT_E_CLOSED: return "closed";
	case MGW_CLIENT_E_REFUSED: return "refused";
	case MGW_CLIENT_E_RESET: return "reset";
	case MGW_CLIENT_E_N: break;
	}
	return "unknown";
}

void mgw_cconn_logctx(const struct mgw_client_conn *c, int32_t stream,
                      struct mgw_log_ctx *ctx)
{
	ctx->conn_id = c ? c->id : 0;
	ctx->stream_id = stream;
	ctx->session = NULL;
}

/* ---- requests ---- */

static void req_unqueue(struct mgw_client_req *r)
{
	struct mgw_client_origin *o = r->o;

	if (r->prev)
		r->prev->next = r->next;
	else
		o->qhead = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		o->qtail = r->prev;
	r->prev = r->next = NULL;
	o->nqueued--;
}

static void req_enqueue(struct mgw_client_req *r, int front)
{
	struct mgw_client_origin *o = r->o;

	r->state = MGW_CRQ_QUEUED;
	r->c = NULL;
	if (front) {
		r->prev = NULL;
		r->next = o->qhead;
		if (o->qhead)
			o->qhead->prev = r;
		else
			o->qtail = r;
		o->qhead = r;
	} else {
		r->next = NULL;
		r->prev = o->qtail;
		if (o->qtail)
			o->qtail->next = r;
		else
			o->qhead = r;
		o->qtail = r;
	}
	o->nqueued++;
}

/* Leaves the QUEUED or ACTIVE state for DONE (timer stopped). */
static void req_done(struct mgw_client_req *r)
{
	if (r->state == MGW_CRQ_ACTIVE)
		r->o->nactive--;
	else if (r->state == MGW_CRQ_QUEUED)
		req_unqueue(r);
	r->state = MGW_CRQ_DONE;
	evtimer_del(r->timer);
}

void mgw_creq_free(struct mgw_client_req *r)
{
	struct mgw_client_origin *o;

	if (!r)
		return;
	o = r->o;
	if (r->state != MGW_CRQ_DONE)
		req_done(r);
	event_free(r->timer);
	free(r->method);
	free(r->target);
	free(r->authority);
	free(r->body);
	mgw_headers_deinit(&r->hdr);
	mgw_headers_deinit(&r->resp);
	if (r->held)
		evbuffer_free(r->held);
	free(r);
	o->nreqs--;
	if (o->retired && o->nreqs == 0)
		mgw_origin_kick(o);
}

unsigned mgw_creq_unsent(const struct mgw_client_req *r)
{
	return (!r->sent_all && !r->got_bytes) ? MGW_CLIENT_F_NOT_SENT : 0;
}

void mgw_creq_end(struct mgw_client_req *r)
{
	if (r->state == MGW_CRQ_DONE)
		return;
	req_done(r);
	STAT_INC(r->o, responses);
	if (r->on_end) {
		r->in_cb = 1;
		r->on_end(r, r->arg);
		r->in_cb = 0;
	}
}

void mgw_creq_fail(struct mgw_client_req *r, int err,
                   enum mgw_client_err_class cls, const char *msg,
                   unsigned flags)
{
	struct mgw_client_error e;
	struct mgw_log_ctx ctx;

	if (r->state == MGW_CRQ_DONE)
		return;
	req_done(r);
	if (r->got_bytes) {
		flags |= MGW_CLIENT_F_RESP_BYTES;
		flags &= ~(unsigned)MGW_CLIENT_F_NOT_SENT;
	}
	if (r->head_sent)
		flags |= MGW_CLIENT_F_HEAD_SENT;
	r->o->st.errors[cls]++;
	r->o->cl->st.errors[cls]++;
	mgw_cconn_logctx(r->c, r->h2 ? r->stream_id : -1, &ctx);
	mgw_debug(&ctx, "upstream %s: %s %s failed (%s): %s%s%s", r->o->name,
	          r->method, r->target, mgw_client_err_class_name(cls),
	          msg ? msg : mgw_strerror(err),
	          (flags & MGW_CLIENT_F_NOT_SENT) ? " [not sent]" : "",
	          (flags & MGW_CLIENT_F_RESP_BYTES) ? " [response started]" : "");
	e.code = err;
	e.flags = flags;
	e.cls = cls;
	e.msg = msg ? msg : mgw_strerror(err);
	if (r->on_error) {
		r->in_cb = 1;
		r->on_error(r, &e, r->arg);
		r->in_cb = 0;
	}
}

void mgw_creq_head(struct mgw_client_req *r)
{
	if (r->state == MGW_CRQ_DONE || r->head_sent)
		return;
	r->head_sent = 1;
	if (r->on_head)
		r->on_head(r, r->status, &r->resp, r->arg);
}

void mgw_creq_data(struct mgw_client_req *r, const unsigned char *p, size_t n)
{
	if (r->state == MGW_CRQ_DONE || n == 0)
		return;
	if (r->on_data)
		r->on_data(r, p, n, r->arg);
}

/* Arms the request timer at the nearest of the total and phase deadlines
 * (the idle deadline does not count while delivery is paused). */
static void req_arm(struct mgw_client_req *r)
{
	uint64_t now, dl = r->deadline_total, ph = r->deadline_phase;

	if (r->state == MGW_CRQ_DONE)
		return;
	if (r->paused && r->phase == MGW_PH_RECV)
		ph = 0;
	if (ph && (!dl || ph < dl))
		dl = ph;
	if (!dl) {
		evtimer_del(r->timer);
		return;
	}
	now = mgw_now_ms();
	struct timeval tv = mgw_tv(dl > now ? (double)(dl - now) / 1000.0 : 0);
	evtimer_add(r->timer, &tv);
}

static uint64_t deadline(double seconds)
{
	return seconds > 0 ? mgw_now_ms() + (uint64_t)(seconds * 1000.0) + 1 : 0;
}

void mgw_creq_phase(struct mgw_client_req *r, enum mgw_creq_phase ph)
{
	double s = 0;

	r->phase = ph;
	switch (ph) {
	case MGW_PH_CONNECT: s = r->tmo.connect; break;
	case MGW_PH_SEND: s = r->tmo.idle; break;
	case MGW_PH_FIRST: s = r->tmo.first_byte; break;
	case MGW_PH_RECV: s = r->tmo.idle; break;
	}
	r->deadline_phase = deadline(s);
	req_arm(r);
}

void mgw_creq_activity(struct mgw_client_req *r)
{
	r->got_bytes = 1;
	if (r->phase != MGW_PH_RECV) {
		mgw_creq_phase(r, MGW_PH_RECV);
		return;
	}
	if (r->tmo.idle > 0) {
		r->deadline_phase = deadline(r->tmo.idle);
		req_arm(r);
	}
}

/* A request's own timer.  Top-level libevent callback: may close the
 * HTTP/1.1 connection carrying the request. */
static void on_req_timer(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_client_req *r = arg;
	struct mgw_client_conn *c = r->c;
	uint64_t now = mgw_now_ms();
	const char *msg;
	unsigned flags = 0;

	(void)fd;
	(void)what;
	if (r->deadline_total && now >= r->deadline_total) {
		msg = "total timeout";
	} else if (r->deadline_phase && now >= r->deadline_phase &&
	           !(r->paused && r->phase == MGW_PH_RECV)) {
		static const char *const names[] = {
		    [MGW_PH_CONNECT] = "connect timeout",
		    [MGW_PH_SEND] = "idle timeout while sending",
		    [MGW_PH_FIRST] = "first-byte timeout",
		    [MGW_PH_RECV] = "idle timeout"};
		msg = names[r->phase];
	} else {
		req_arm(r);
		return;
	}
	if (r->state == MGW_CRQ_QUEUED && r->o->nconnecting == 0 &&
	    r->o->nconns > 0) {
		/* no connect pending that could be slow: it waited for a
		 * busy pool */
		if (r->phase == MGW_PH_CONNECT)
			msg = "timed out waiting for a free connection";
		flags |= MGW_CLIENT_F_QUEUED;
	} else if (r->phase == MGW_PH_CONNECT) {
		flags |= MGW_CLIENT_F_CONNECT;
	}
	if (r->state == MGW_CRQ_QUEUED) {
		mgw_creq_fail(r, MGW_ETIMEDOUT, MGW_CLIENT_E_TIMEOUT, msg,
		              flags | MGW_CLIENT_F_NOT_SENT);
		mgw_creq_free(r);
		return;
	}
	if (r->state != MGW_CRQ_ACTIVE || !c)
		return;
	if (c->h2) {
		/* Not one byte from the peer since this stream went out: the
		 * connection itself may be dead (a peer that vanished without
		 * a FIN).  It takes no new streams; those go to a new one, and
		 * this one closes when its last stream is done. */
		if (c->read_total == r->read_mark && !c->goaway) {
			c->goaway = 1;
			mgw_info(NULL, "upstream %s: HTTP/2 connection silent "
			         "since a timed-out stream was sent: no new streams "
			         "on it", c->o->name);
		}
		mgw_creq_fail(r, MGW_ETIMEDOUT, MGW_CLIENT_E_TIMEOUT, msg,
		              flags | mgw_creq_unsent(r));
		r->want_rst = 1;
		mgw_cconn_schedule(c);
		return;
	}
	/* HTTP/1.1: the request owns the connection */
	c->req = NULL;
	mgw_creq_fail(r, MGW_ETIMEDOUT, MGW_CLIENT_E_TIMEOUT, msg,
	              flags | mgw_creq_unsent(r));
	mgw_creq_free(r);
	if (c->state == MGW_CC_READY)
		mgw_cconn_close(c); /* the response cannot be skipped safely */
	/* a connection still being set up goes on and joins the pool */
}

/* ---- connections ---- */

void mgw_cconn_schedule(struct mgw_client_conn *c)
{
	if (!c->freeing)
		event_active(c->work, 0, 0);
}

void mgw_cconn_set_error(struct mgw_client_conn *c, int err,
                         enum mgw_client_err_class cls, const char *msg,
                         unsigned flags)
{
	if (c->close_err)
		return; /* keep the first reason */
	c->close_err = err;
	c->close_cls = cls;
	c->close_msg = msg;
	c->close_flags = flags;
}

static void idle_unlink(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;

	if (!c->idle)
		return;
	if (c->iprev)
		c->iprev->inext = c->inext;
	else
		o->idle = c->inext;
	if (c->inext)
		c->inext->iprev = c->iprev;
	c->iprev = c->inext = NULL;
	c->idle = 0;
	o->nidle--;
	evtimer_del(c->timer);
}

void mgw_cconn_close(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;
	struct mgw_log_ctx ctx;

	if (c->freeing)
		return;
	c->freeing = 1;
	mgw_cconn_logctx(c, -1, &ctx);
	mgw_debug(&ctx, "upstream %s: closing connection%s%s", o->name,
	          c->close_msg ? ": " : "", c->close_msg ? c->close_msg : "");
	if (c->state != MGW_CC_READY) {
		o->nconnecting--;
		if (c->close_flags & MGW_CLIENT_F_CONNECT)
			STAT_INC(o, conns_failed);
	}
	idle_unlink(c);
	if (c->req) {
		struct mgw_client_req *r = c->req;
		c->req = NULL;
		mgw_creq_fail(r, c->close_err ? c->close_err : MGW_ECLOSED,
		              c->close_err ? c->close_cls : MGW_CLIENT_E_CLOSED,
		              c->close_msg ? c->close_msg
		                           : "upstream closed the connection",
		              c->close_flags | mgw_creq_unsent(r));
		mgw_creq_free(r);
	}
	mgw_ch2_fail_all(c);
	mgw_resolve_cancel(c->rq);
	c->rq = NULL;
	mgw_ch1_deinit(c);
	mgw_ch2_deinit(c);
	if (c->bev) {
		evutil_socket_t fd = bufferevent_getfd(c->bev);
		bufferevent_free(c->bev);
		/* TCP-phase bufferevents of TLS connections do not own their fd */
		if (c->tls && c->state == MGW_CC_CONNECTING && fd >= 0)
			evutil_closesocket(fd);
	}
	event_free(c->work);
	event_free(c->timer);
	if (c->prev)
		c->prev->next = c->next;
	else
		o->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	o->nconns--;
	free(c);
	mgw_origin_kick(o);
}

/* Non-blocking check that the server has not closed (or written to) an
 * idle connection since it was pooled: reusing a closed one would make a
 * request fail after it may have been written. */
static int conn_alive(struct mgw_client_conn *c)
{
	char b;
	evutil_socket_t fd;

	if (c->peer_eof || evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		return 0;
	fd = bufferevent_getfd(c->bev);
	if (fd < 0)
		return 0;
	ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0 || n > 0)
		return 0; /* FIN, or bytes nobody asked for (TLS alert, junk) */
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

void mgw_cconn_idle(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;
	const struct mgw_client_limits *lim = &o->cl->lim;

	if (o->retired || o->one_request || c->peer_eof ||
	    o->nidle >= lim->max_idle_per_origin || lim->keepalive_timeout <= 0) {
		mgw_cconn_close(c);
		return;
	}
	c->idle = 1;
	c->iprev = NULL;
	c->inext = o->idle;
	if (o->idle)
		o->idle->iprev = c;
	o->idle = c;
	o->nidle++;
	if (c->read_off) {
		c->read_off = 0;
		bufferevent_enable(c->bev, EV_READ);
	}
	struct timeval tv = mgw_tv(lim->keepalive_timeout);
	evtimer_add(c->timer, &tv);
	mgw_origin_kick(o);
}

/* Output left for the kernel: a request whose last byte went is fully
 * written; one still being written restarts its idle deadline, so a
 * large body to a slow upstream fails only when progress stops.  On
 * HTTP/2 the output is shared: only the stream's own body counts, or
 * other streams' frames would keep one stuck behind its flow-control
 * window alive for ever. */
static void write_progress(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	if (r->sent_all)
		return;
	if (r->end_pos && c->written_total >= r->end_pos) {
		r->sent_all = 1;
		if (r->state == MGW_CRQ_ACTIVE && r->phase == MGW_PH_SEND)
			mgw_creq_phase(r, MGW_PH_FIRST);
		return;
	}
	if (r->h2) {
		if (r->body_off == r->progress_off)
			return;
		r->progress_off = r->body_off;
	}
	if (r->state == MGW_CRQ_ACTIVE && r->phase == MGW_PH_SEND)
		mgw_creq_phase(r, MGW_PH_SEND); /* progress: a new deadline */
}

static void on_out_changed(struct evbuffer *buf,
                           const struct evbuffer_cb_info *info, void *arg)
{
	struct mgw_client_conn *c = arg;

	(void)buf;
	c->queued_total += info->n_added;
	c->written_total += info->n_deleted;
	if (!info->n_deleted)
		return;
	if (c->req)
		write_progress(c, c->req);
	for (struct mgw_client_req *r = c->streams; r; r = r->next)
		write_progress(c, r);
}

void mgw_cconn_mark_end(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	r->end_pos = c->queued_total;
	if (c->written_total >= r->end_pos) {
		r->sent_all = 1;
		if (r->state == MGW_CRQ_ACTIVE && r->phase == MGW_PH_SEND)
			mgw_creq_phase(r, MGW_PH_FIRST);
	}
}

/* Fails a connection from a top-level callback. c is freed. */
static void conn_fail(struct mgw_client_conn *c, int err,
                      enum mgw_client_err_class cls, const char *msg,
                      unsigned flags)
{
	mgw_cconn_set_error(c, err, cls, msg, flags);
	mgw_cconn_close(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct mgw_client_conn *c = arg;

	(void)bev;
	if (c->h2) {
		mgw_ch2_process(c);
		return;
	}
	if (!c->req) {
		/* bytes on an idle connection: nothing asked for them */
		conn_fail(c, MGW_EPROTO, MGW_CLIENT_E_PROTO,
		          "unsolicited bytes on an idle connection", 0);
		return;
	}
	mgw_ch1_process(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct mgw_client_conn *c = arg;

	(void)bev;
	if (c->h2)
		mgw_ch2_send(c);
}

/* Moves a TLS connection from its TCP-phase bufferevent to an OpenSSL
 * one on the same socket and starts the handshake. */
static void start_tls(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	const unsigned char *alpn = NULL;
	size_t alen = 0;
	SSL *ssl;

	if (o->proto == MGW_CLIENT_H2) {
		alpn = alpn_h2;
		alen = sizeof(alpn_h2) - 1;
	} else if (o->proto == MGW_CLIENT_AUTO) {
		alpn = alpn_auto;
		alen = sizeof(alpn_auto) - 1;
	}
	bufferevent_free(c->bev); /* not CLOSE_ON_FREE: fd stays open */
	c->bev = NULL;
	ssl = mgw_tls_client_ssl(o->tls, o->sni, alpn, alen);
	if (ssl)
		c->bev = bufferevent_openssl_socket_new(
		    o->cl->base, fd, ssl, BUFFEREVENT_SSL_CONNECTING,
		    BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		/* a failed bufferevent_openssl_socket_new with CLOSE_ON_FREE
		 * has freed ssl itself (libevent 2.1.12); the fd is ours */
		evutil_closesocket(fd);
		c->state = MGW_CC_HANDSHAKE;
		conn_fail(c, MGW_ENOMEM, MGW_CLIENT_E_TLS, "TLS setup failed",
		          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
		return;
	}
	c->state = MGW_CC_HANDSHAKE;
	/* Many servers close without close_notify; framing (Content-Length,
	 * chunked, END_STREAM) still tells complete from truncated.  A body
	 * delimited by the close itself is complete only with close_notify
	 * (RFC 9112 section 9.8): OpenSSL 3 reports its absence as an error
	 * event, so such a body fails (eof_err) instead of ending early. */
	bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void tls_fail(struct mgw_client_conn *c)
{
	char *msg = c->msgbuf;
	size_t msglen = sizeof(c->msgbuf);
	SSL *ssl = bufferevent_openssl_get_ssl(c->bev);
	const char *v = mgw_tls_client_verify_error(ssl);
	unsigned long e = bufferevent_get_openssl_error(c->bev);

	if (v) {
		snprintf(msg, msglen, "TLS certificate verification failed: %s", v);
	} else if (e) {
		char buf[200];
		ERR_error_string_n(e, buf, sizeof(buf));
		snprintf(msg, msglen, "TLS handshake failed: %s", buf);
	} else {
		snprintf(msg, msglen, "TLS handshake failed: connection closed");
	}
	ERR_clear_error();
	conn_fail(c, v ? MGW_EAUTH : MGW_EIO, MGW_CLIENT_E_TLS, msg,
	          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct mgw_client_conn *c = arg;
	int err = EVUTIL_SOCKET_ERROR();

	(void)bev;
	switch (c->state) {
	case MGW_CC_RESOLVING:
		return;
	case MGW_CC_CONNECTING:
		if (what & BEV_EVENT_CONNECTED) {
			int one = 1;
			setsockopt(bufferevent_getfd(c->bev), IPPROTO_TCP, TCP_NODELAY,
			           &one, sizeof(one));
			if (c->tls) {
				start_tls(c);
				return;
			}
			conn_ready(c);
			return;
		}
		/* this address failed: the next one, if any */
		{
			evutil_socket_t fd = bufferevent_getfd(c->bev);
			bufferevent_free(c->bev);
			c->bev = NULL;
			if (c->tls && fd >= 0)
				evutil_closesocket(fd);
		}
		c->addr_i++;
		if (c->addr_i < c->addrs.n) {
			conn_try_connect(c);
			return;
		}
		/* every address failed: the next connection resolves again (a
		 * replaced replica may have a new address) */
		c->o->cache_until = 0;
		snprintf(c->msgbuf, sizeof(c->msgbuf), "connect failed: %s",
		         evutil_socket_error_to_string(err ? err : ECONNREFUSED));
		conn_fail(c, MGW_EIO, MGW_CLIENT_E_CONNECT, c->msgbuf,
		          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
		return;
	case MGW_CC_HANDSHAKE:
		if (what & BEV_EVENT_CONNECTED) {
			conn_ready(c);
			return;
		}
		tls_fail(c);
		return;
	case MGW_CC_READY:
		break;
	}
	if (what & BEV_EVENT_EOF) {
		c->peer_eof = 1;
		if (c->h2) {
			mgw_cconn_set_error(c, MGW_ECLOSED, MGW_CLIENT_E_CLOSED,
			                    "upstream closed the connection", 0);
			if (!mgw_ch2_retire(c))
				mgw_cconn_close(c);
			return;
		}
		mgw_ch1_closed(c, 0, "upstream closed the connection");
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		char *msg = c->msgbuf;
		unsigned long e = c->tls ? bufferevent_get_openssl_error(c->bev) : 0;
		if (e) {
			char buf[128];
			ERR_error_string_n(e, buf, sizeof(buf));
			snprintf(msg, sizeof(c->msgbuf), "TLS error: %s", buf);
			ERR_clear_error();
		} else {
			snprintf(msg, sizeof(c->msgbuf), "connection error: %s",
			         evutil_socket_error_to_string(err));
		}
		c->peer_eof = 1;
		if (c->h2) {
			mgw_cconn_set_error(c, MGW_ECLOSED, MGW_CLIENT_E_CLOSED, msg, 0);
			if (!mgw_ch2_retire(c))
				mgw_cconn_close(c);
			return;
		}
		mgw_ch1_closed(c, 1, msg);
	}
}

static void conn_try_connect(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;

	while (c->addr_i < c->addrs.n) {
		/* TLS connections take the fd over after the TCP phase, so the
		 * first bufferevent must not close it when freed. */
		c->bev = bufferevent_socket_new(o->cl->base, -1,
		                                c->tls ? 0 : BEV_OPT_CLOSE_ON_FREE);
		if (!c->bev)
			break;
		bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
		c->state = MGW_CC_CONNECTING;
		if (bufferevent_socket_connect(
		        c->bev, (struct sockaddr *)&c->addrs.a[c->addr_i],
		        (int)c->addrs.len[c->addr_i]) == 0)
			return;
		evutil_socket_t fd = bufferevent_getfd(c->bev);
		bufferevent_free(c->bev);
		c->bev = NULL;
		if (c->tls && fd >= 0)
			evutil_closesocket(fd);
		c->addr_i++;
	}
	/* nothing could even start: fail from the loop, not from here (the
	 * caller may be the dispatch loop) */
	mgw_cconn_set_error(c, MGW_EIO, MGW_CLIENT_E_CONNECT,
	                    "connect failed: no usable address",
	                    MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
	c->closing = 1;
	mgw_cconn_schedule(c);
}

static void on_resolved(int err, const struct mgw_addrs *addrs, const char *msg,
                        void *arg)
{
	struct mgw_client_conn *c = arg;
	struct mgw_client_origin *o = c->o;

	c->rq = NULL;
	if (err) {
		snprintf(c->msgbuf, sizeof(c->msgbuf), "resolving %.200s: %s",
		         o->host, msg);
		conn_fail(c, err, MGW_CLIENT_E_DNS, c->msgbuf,
		          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
		return;
	}
	c->addrs = *addrs;
	c->addr_i = 0;
	if (o->cl->lim.dns_cache_ttl > 0) {
		o->cache = *addrs;
		o->cache_until = mgw_now_ms() +
		                 (uint64_t)(o->cl->lim.dns_cache_ttl * 1000.0);
	}
	conn_try_connect(c);
}

/* Connected (and TLS handshake done). */
static void conn_ready(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;
	struct mgw_client_req *r;
	struct mgw_log_ctx ctx;

	c->state = MGW_CC_READY;
	o->nconnecting--;
	STAT_INC(o, conns_opened);
	evtimer_del(c->timer);
	bufferevent_setwatermark(c->bev, EV_READ, 0, READ_HIGH_WATERMARK);
	evbuffer_add_cb(bufferevent_get_output(c->bev), on_out_changed, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (c->req && c->req->state == MGW_CRQ_DONE) {
		/* its request was cancelled during the set-up, and the work
		 * callback that drops it has not run yet: never send it */
		r = c->req;
		c->req = NULL;
		mgw_creq_free(r);
	}

	if (c->tls && o->proto != MGW_CLIENT_H1) {
		const unsigned char *alpn = NULL;
		unsigned int alen = 0;
		int h2;
		SSL_get0_alpn_selected(bufferevent_openssl_get_ssl(c->bev), &alpn,
		                       &alen);
		h2 = alen == 2 && memcmp(alpn, "h2", 2) == 0;
		if (o->proto == MGW_CLIENT_H2 && !h2) {
			conn_fail(c, MGW_EPROTO, MGW_CLIENT_E_TLS,
			          "upstream did not select h2 by ALPN",
			          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
			return;
		}
		if (o->proto == MGW_CLIENT_AUTO) {
			o->learned = h2 ? 2 : 1;
			if (h2 && !c->h2) {
				/* the reserved request becomes the first stream */
				r = c->req;
				c->req = NULL;
				c->h2 = 1;
				if (mgw_ch2_start(c) != 0) {
					c->h2 = 0;
					c->req = r;
					conn_fail(c, MGW_ENOMEM, MGW_CLIENT_E_PROTO,
					          "no memory for HTTP/2 session",
					          MGW_CLIENT_F_NOT_SENT);
					return;
				}
				if (r) {
					if (mgw_ch2_submit(c, r) != 0) {
						/* back to the queue, in front */
						r->o->nactive--;
						req_enqueue(r, 1);
					}
				}
			}
		}
	}
	mgw_cconn_logctx(c, -1, &ctx);
	mgw_debug(&ctx, "upstream %s: connected (%s%s)", o->name,
	          c->tls ? "TLS, " : "", c->h2 ? "HTTP/2" : "HTTP/1.1");
	if (c->h2) {
		for (r = c->streams; r; r = r->next)
			if (r->state == MGW_CRQ_ACTIVE && r->phase == MGW_PH_CONNECT)
				mgw_creq_phase(r, MGW_PH_SEND);
		mgw_origin_kick(o);
		mgw_ch2_send(c);
		return;
	}
	if (c->req) {
		mgw_creq_phase(c->req, MGW_PH_SEND);
		mgw_ch1_send(c, c->req);
		return;
	}
	mgw_cconn_idle(c);
}

static void on_conn_timer(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_client_conn *c = arg;

	(void)fd;
	(void)what;
	if (c->state != MGW_CC_READY) {
		conn_fail(c, MGW_ETIMEDOUT, MGW_CLIENT_E_TIMEOUT, "connect timeout",
		          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
		return;
	}
	/* keep-alive expired on an idle connection (or an empty h2 one) */
	if (c->idle || (c->h2 && !c->streams))
		mgw_cconn_close(c);
}

static void on_conn_work(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_client_conn *c = arg;

	(void)fd;
	(void)what;
	if (c->closing) {
		mgw_cconn_close(c);
		return;
	}
	if (c->h2) {
		mgw_ch2_work(c);
		return;
	}
	if (c->req && c->req->state == MGW_CRQ_DONE) {
		/* cancelled */
		struct mgw_client_req *r = c->req;
		if (c->state == MGW_CC_READY) {
			mgw_cconn_close(c);
			return;
		}
		c->req = NULL;
		mgw_creq_free(r); /* a connection being set up goes on */
		return;
	}
	if (c->state == MGW_CC_READY && c->req)
		mgw_ch1_process(c);
}

/* Opens a connection for o.  owner (HTTP/1.1 and undecided ALPN) is the
 * request that reserves it; NULL for HTTP/2 connections, which take
 * streams from the queue.  connect_s bounds resolution, TCP and TLS: the
 * connect timeout of the request it is opened for (a route's
 * timeouts.connect), 0 for none.  Failures are reported from the loop. */
static void conn_open(struct mgw_client_origin *o, struct mgw_client_req *owner,
                      double connect_s)
{
	struct mgw_client *cl = o->cl;
	struct mgw_client_conn *c = calloc(1, sizeof(*c));

	if (!c)
		goto fail;
	c->o = o;
	c->id = ++cl->next_id;
	c->tls = o->tls != NULL;
	c->goaway_last = -1;
	c->work = event_new(cl->base, -1, 0, on_conn_work, c);
	c->timer = evtimer_new(cl->base, on_conn_timer, c);
	if (!c->work || !c->timer)
		goto fail;
	if (o->proto == MGW_CLIENT_H2) {
		c->h2 = 1;
		if (mgw_ch2_start(c) != 0)
			goto fail;
	}
	c->state = MGW_CC_RESOLVING;
	c->next = o->conns;
	if (o->conns)
		o->conns->prev = c;
	o->conns = c;
	o->nconns++;
	o->nconnecting++;
	if (owner) {
		req_unqueue(owner);
		owner->state = MGW_CRQ_ACTIVE;
		owner->c = c;
		o->nactive++;
		c->req = owner;
		c->used = 1;
	}
	if (connect_s > 0) {
		struct timeval tv = mgw_tv(connect_s);
		evtimer_add(c->timer, &tv);
	}
	if (o->cache_until && mgw_now_ms() < o->cache_until) {
		c->addrs = o->cache;
		conn_try_connect(c);
		return;
	}
	if (mgw_resolve_numeric(o->host, o->port, &c->addrs)) {
		conn_try_connect(c);
		return;
	}
	if (!cl->res)
		cl->res = mgw_resolver_new(cl->base);
	if (!cl->res ||
	    mgw_resolve(cl->res, o->host, o->port, on_resolved, c, &c->rq) != 0) {
		mgw_cconn_set_error(c, MGW_EIO, MGW_CLIENT_E_DNS,
		                    "resolver unavailable",
		                    MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
		c->closing = 1;
		mgw_cconn_schedule(c);
	}
	return;
fail:
	if (c) {
		mgw_ch2_deinit(c);
		if (c->work)
			event_free(c->work);
		if (c->timer)
			event_free(c->timer);
		free(c);
	}
	if (owner) {
		mgw_creq_fail(owner, MGW_ENOMEM, MGW_CLIENT_E_CONNECT,
		              "no memory for a connection",
		              MGW_CLIENT_F_NOT_SENT | MGW_CLIENT_F_CONNECT);
		mgw_creq_free(owner);
	}
}

/* ---- origins and dispatch ---- */

void mgw_origin_kick(struct mgw_client_origin *o)
{
	event_active(o->kick, 0, 0);
}

static void origin_destroy(struct mgw_client_origin *o)
{
	struct mgw_client *cl = o->cl;

	/* drop every request silently, then the connections */
	for (struct mgw_client_conn *c = o->conns; c; c = c->next) {
		if (c->req) {
			c->req->cancelled = 1;
			req_done(c->req);
		}
		for (struct mgw_client_req *r = c->streams; r; r = r->next)
			if (r->state != MGW_CRQ_DONE)
				req_done(r);
	}
	while (o->conns)
		mgw_cconn_close(o->conns);
	while (o->qhead) {
		struct mgw_client_req *r = o->qhead;
		req_done(r);
		mgw_creq_free(r);
	}
	if (o->prev)
		o->prev->next = o->next;
	else
		cl->origins = o->next;
	if (o->next)
		o->next->prev = o->prev;
	event_free(o->kick);
	if (o->tls)
		SSL_CTX_free(o->tls);
	free(o->host);
	free(o->sni);
	free(o->name);
	free(o->authority);
	free(o);
}

/* A connection that can take r now, or NULL. */
static struct mgw_client_conn *pick_conn(struct mgw_client_origin *o)
{
	for (struct mgw_client_conn *c = o->conns; c; c = c->next)
		if (c->h2 && !c->freeing && !c->closing && mgw_ch2_has_room(c))
			return c;
	while (o->idle) {
		struct mgw_client_conn *c = o->idle;
		idle_unlink(c);
		if (conn_alive(c))
			return c;
		mgw_cconn_close(c);
	}
	return NULL;
}

static void attach(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	struct mgw_client_origin *o = r->o;

	req_unqueue(r);
	r->state = MGW_CRQ_ACTIVE;
	r->c = c;
	o->nactive++;
	if (c->used) {
		r->reused = 1;
		STAT_INC(o, conns_reused);
	}
	c->used = 1;
	if (c->h2) {
		int rv = mgw_ch2_submit(c, r);
		if (rv != 0) {
			o->nactive--;
			req_enqueue(r, 1);
			return;
		}
		if (c->state == MGW_CC_READY) {
			mgw_creq_phase(r, MGW_PH_SEND);
			mgw_cconn_schedule(c);
		}
		return;
	}
	c->req = r;
	mgw_creq_phase(r, MGW_PH_SEND);
	mgw_ch1_send(c, r);
}

static int origin_mux(const struct mgw_client_origin *o)
{
	return o->proto == MGW_CLIENT_H2 ||
	       (o->proto == MGW_CLIENT_AUTO && o->tls && o->learned == 2);
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_client_origin *o = arg;
	const struct mgw_client_limits *lim = &o->cl->lim;
	size_t guard = o->nqueued + 16;

	(void)fd;
	(void)what;
	if (o->retired) {
		struct mgw_client_conn *c, *next;
		while (o->idle)
			mgw_cconn_close(o->idle);
		for (c = o->conns; c; c = next) {
			next = c->next;
			if (c->h2 && !c->streams && c->state == MGW_CC_READY)
				mgw_cconn_close(c);
		}
		if (o->nreqs == 0) {
			origin_destroy(o);
			return;
		}
	}
	while (o->qhead && guard--) {
		struct mgw_client_req *r = o->qhead;
		struct mgw_client_conn *c = pick_conn(o);
		if (c) {
			attach(c, r);
			continue;
		}
		if (o->nconns >= lim->max_conns_per_origin)
			break;
		if (origin_mux(o)) {
			/* one HTTP/2 connection at a time is being set up */
			if (o->nconnecting > 0 && o->proto == MGW_CLIENT_AUTO)
				break;
			conn_open(o, NULL, r->tmo.connect);
			if (o->proto == MGW_CLIENT_AUTO)
				break; /* ALPN decides; the kick comes back */
			continue;
		}
		conn_open(o, r, r->tmo.connect);
	}
}

const char *mgw_client_origin_name(const struct mgw_client_origin *o)
{
	return o->name;
}

static int is_ipv6_literal(const char *h)
{
	return strchr(h, ':') != NULL;
}

int mgw_client_origin_new(struct mgw_client *cl,
                          const struct mgw_client_origin_cfg *cfg,
                          struct mgw_client_origin **out)
{
	struct mgw_client_origin *o = NULL;
	char buf[300];
	int v6;
	uint16_t defport;

	*out = NULL;
	if (!cfg || !cfg->host || !*cfg->host || cfg->port == 0 ||
	    strlen(cfg->host) > 255 || (cfg->proto != MGW_CLIENT_H1 &&
	                                cfg->proto != MGW_CLIENT_H2 &&
	                                cfg->proto != MGW_CLIENT_AUTO))
		return MGW_EINVAL;
	for (const char *p = cfg->host; *p; p++)
		if (*p <= ' ' || *p == '/' || *p == '[' || *p == ']' || *p == 0x7f)
			return MGW_EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return MGW_ENOMEM;
	o->cl = cl;
	o->port = cfg->port;
	o->proto = cfg->proto;
	o->one_request = cfg->one_request != 0;
	if (o->proto == MGW_CLIENT_AUTO && !cfg->tls)
		o->proto = MGW_CLIENT_H1;
	o->host = strdup(cfg->host);
	o->sni = strdup(cfg->sni ? cfg->sni : cfg->host);
	v6 = is_ipv6_literal(cfg->host);
	snprintf(buf, sizeof(buf), v6 ? "[%s]:%u" : "%s:%u", cfg->host,
	         (unsigned)cfg->port);
	o->name = strdup(cfg->name ? cfg->name : buf);
	defport = cfg->tls ? 443 : 80;
	if (cfg->port == defport)
		snprintf(buf, sizeof(buf), v6 ? "[%s]" : "%s", cfg->host);
	o->authority = strdup(buf);
	o->kick = event_new(cl->base, -1, 0, on_kick, o);
	if (!o->host || !o->sni || !o->name || !o->authority || !o->kick)
		goto fail;
	if (cfg->tls) {
		if (SSL_CTX_up_ref(cfg->tls) != 1)
			goto fail;
		o->tls = cfg->tls;
	}
	o->next = cl->origins;
	if (cl->origins)
		cl->origins->prev = o;
	cl->origins = o;
	*out = o;
	return 0;
fail:
	if (o->kick)
		event_free(o->kick);
	free(o->host);
	free(o->sni);
	free(o->name);
	free(o->authority);
	free(o);
	return MGW_ENOMEM;
}

void mgw_client_origin_free(struct mgw_client_origin *o)
{
	if (!o)
		return;
	o->retired = 1;
	mgw_origin_kick(o);
}

/* ---- client ---- */

struct mgw_client *mgw_client_new(struct event_base *base,
                                  const struct mgw_client_limits *lim)
{
	struct mgw_client *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->base = base;
	if (lim)
		cl->lim = *lim;
	else
		mgw_client_limits_default(&cl->lim);
	if (cl->lim.max_conns_per_origin == 0)
		cl->lim.max_conns_per_origin = 1;
	if (cl->lim.h2_max_streams == 0)
		cl->lim.h2_max_streams = 1;
	if (cl->lim.h2_stream_window < 65535)
		cl->lim.h2_stream_window = 65535;
	if (cl->lim.h2_stream_window > 0x7fffffff)
		cl->lim.h2_stream_window = 0x7fffffff;
	return cl;
}

void mgw_client_free(struct mgw_client *cl)
{
	if (!cl)
		return;
	while (cl->origins) {
		struct mgw_client_origin *o = cl->origins;
		for (struct mgw_client_req *r = o->qhead; r; r = r->next)
			r->cancelled = 1;
		origin_destroy(o);
	}
	mgw_resolver_free(cl->res);
	free(cl);
}

static void sum_stats(struct mgw_client_stats *st, const struct mgw_client_origin *o)
{
	st->conns_open += o->nconns - o->nconnecting;
	st->conns_idle += o->nidle;
	st->pending += o->nqueued;
	st->inflight += o->nactive;
}

void mgw_client_stats(const struct mgw_client *cl,
                      const struct mgw_client_origin *o,
                      struct mgw_client_stats *st)
{
	*st = o ? o->st : cl->st;
	st->conns_open = st->conns_idle = st->pending = st->inflight = 0;
	if (o) {
		sum_stats(st, o);
		return;
	}
	for (const struct mgw_client_origin *p = cl->origins; p; p = p->next)
		sum_stats(st, p);
}

/* ---- requests: submit, cancel, pause ---- */

static int token_valid(const char *s)
{
	return s && *s && mgw_header_name_valid(s, strlen(s));
}

/* Request-target and authority: visible ASCII only. */
static int visible(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

/* Copies the end-to-end fields of src into dst, in order.  Fields the
 * layer writes itself (Host, Content-Length) and hop-by-hop ones go. */
static int copy_headers(struct mgw_headers *dst, const struct mgw_headers *src)
{
	if (!src)
		return 0;
	for (size_t i = 0; i < src->n; i++) {
		const struct mgw_header *f = &src->v[i];
		if (!mgw_header_name_valid(f->name, f->name_len) ||
		    !mgw_header_value_valid(f->value, f->value_len))
			return MGW_EINVAL;
		if (mgw_header_is_hop_by_hop(f->name) ||
		    MGW_HEADER_IS(f, "host") || MGW_HEADER_IS(f, "content-length") ||
		    mgw_headers_connection_lists(src, f->name))
			continue;
		if (mgw_headers_add(dst, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	return 0;
}

int mgw_client_request(struct mgw_client_origin *o,
                       const struct mgw_client_reqspec *spec,
                       struct mgw_client_req **out)
{
	struct mgw_client *cl;
	struct mgw_client_req *r = NULL;
	int rv = MGW_ENOMEM;

	if (out)
		*out = NULL;
	if (!o || !spec)
		return MGW_EINVAL;
	cl = o->cl;
	if (o->retired)
		return MGW_ECLOSED;
	if (!token_valid(spec->method) || !visible(spec->target) ||
	    (spec->authority && !visible(spec->authority)) ||
	    (spec->body_len && !spec->body))
		return MGW_EINVAL;
	if (o->nqueued >= cl->lim.max_pending_per_origin)
		return MGW_ELIMIT;
	r = calloc(1, sizeof(*r));
	if (!r)
		return MGW_ENOMEM;
	r->o = o;
	o->nreqs++; /* from here mgw_creq_free undoes everything */
	r->state = MGW_CRQ_DONE;
	r->id = ++cl->next_id;
	r->stream_id = -1;
	mgw_headers_init(&r->hdr);
	mgw_headers_init(&r->resp);
	r->method = strdup(spec->method);
	r->target = strdup(spec->target);
	r->authority = strdup(spec->authority ? spec->authority : o->authority);
	r->timer = evtimer_new(cl->base, on_req_timer, r);
	if (!r->method || !r->target || !r->authority || !r->timer)
		goto fail;
	rv = copy_headers(&r->hdr, spec->headers);
	if (rv != 0)
		goto fail;
	rv = MGW_ENOMEM;
	if (spec->body_len) {
		r->body = malloc(spec->body_len);
		if (!r->body)
			goto fail;
		memcpy(r->body, spec->body, spec->body_len);
		r->body_len = spec->body_len;
	}
	r->is_head = strcmp(r->method, "HEAD") == 0;
	r->tmo = spec->tmo ? *spec->tmo : cl->lim.tmo;
	r->on_head = spec->on_head;
	r->on_data = spec->on_data;
	r->on_end = spec->on_end;
	r->on_error = spec->on_error;
	r->arg = spec->arg;
	req_enqueue(r, 0);
	r->deadline_total = deadline(r->tmo.total);
	mgw_creq_phase(r, MGW_PH_CONNECT);
	STAT_INC(o, requests);
	mgw_origin_kick(o);
	if (out)
		*out = r;
	return 0;
fail:
	mgw_creq_free(r);
	return rv;
}

void mgw_client_cancel(struct mgw_client_req *r)
{
	struct mgw_client_conn *c;

	if (!r || r->state == MGW_CRQ_DONE)
		return;
	r->cancelled = 1;
	STAT_INC(r->o, cancels);
	if (r->state == MGW_CRQ_QUEUED) {
		req_done(r);
		mgw_creq_free(r);
		return;
	}
	c = r->c;
	req_done(r);
	if (c->h2)
		r->want_rst = 1;
	/* HTTP/1.1: the work callback closes the connection (or, while it is
	 * being set up, just drops the request); a parser that is delivering
	 * to r right now sees DONE and stops. */
	mgw_cconn_schedule(c);
}

void mgw_client_pause(struct mgw_client_req *r)
{
	if (!r || r->state == MGW_CRQ_DONE || r->paused)
		return;
	r->paused = 1;
	if (r->state == MGW_CRQ_ACTIVE && !r->c->h2 &&
	    r->c->state == MGW_CC_READY && !r->c->read_off) {
		r->c->read_off = 1;
		bufferevent_disable(r->c->bev, EV_READ);
	}
	req_arm(r);
}

void mgw_client_resume(struct mgw_client_req *r)
{
	if (!r || r->state == MGW_CRQ_DONE || !r->paused)
		return;
	r->paused = 0;
	if (r->phase == MGW_PH_RECV && r->tmo.idle > 0)
		r->deadline_phase = deadline(r->tmo.idle);
	req_arm(r);
	if (r->state == MGW_CRQ_ACTIVE)
		mgw_cconn_schedule(r->c);
}

int mgw_client_req_is_h2(const struct mgw_client_req *r)
{
	return r && r->h2;
}
