/* client_conn.c - upstream connections: setup (resolve, TCP, TLS, ALPN),
 * the idle pool, "fully written" accounting, timers and teardown.  The
 * wire protocols live in client_h1.c and client_h2.c.
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
#include "http/read_now.h"
#include "http/write_now.h"
#include "net/tls_client.h"
#include "util/time.h"

/* Input read ahead of the parser per connection; reading stops above it. */
#define READ_HIGH_WATERMARK (256 * 1024)

static const unsigned char alpn_h2[] = "\x02h2";
static const unsigned char alpn_auto[] = "\x02h2\x08http/1.1";

static void conn_ready(struct mgw_client_conn *c);
static void conn_try_connect(struct mgw_client_conn *c);
static void on_event(struct bufferevent *bev, short what, void *arg);

void mgw_cconn_logctx(const struct mgw_client_conn *c, int32_t stream,
                      struct mgw_log_ctx *ctx)
{
	ctx->conn_id = c ? c->id : 0;
	ctx->stream_id = stream;
	ctx->session = NULL;
}

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

void mgw_cconn_idle_unlink(struct mgw_client_conn *c)
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
			MGW_CSTAT_INC(o, conns_failed);
	}
	mgw_cconn_idle_unlink(c);
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

/* An idle connection's reads stay on, so an EOF, a reset or stray bytes
 * (a TLS alert) that reached the socket before the loop last polled are
 * known without a system call: handled already (peer_eof, or the
 * connection closed and gone from the pool), or reported and still
 * queued behind the request that asks for a connection - its read event
 * is active.  What arrived after that poll needs a recv(MSG_PEEK); it
 * costs some 7 % of a proxied request's CPU, so it is made only for a
 * connection pooled idle_peek_after or longer: the one a server's idle
 * timeout closes.  A connection idle for less (under load, the pool's
 * most recent, microseconds) is lost to a FIN in that gap only if its
 * server dies within the same loop turn - as a request already sent to
 * it is (doc/http-client.md). */
int mgw_cconn_alive(struct mgw_client_conn *c)
{
	const struct mgw_client_limits *lim = &c->o->cl->lim;
	evutil_socket_t fd;
	char b;
	ssize_t n;

	if (c->peer_eof || evbuffer_get_length(bufferevent_get_input(c->bev)) > 0 ||
	    mgw_read_pending_news(c->bev))
		return 0;
	if ((double)(mgw_now_ns() - c->idle_since_ns) < lim->idle_peek_after * 1e9)
		return 1;
	fd = bufferevent_getfd(c->bev);
	if (fd < 0)
		return 0;
	n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n >= 0)
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
	c->idle_since_ns = mgw_now_ns();
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

/* A request is complete in the output when it is sent: write it now
 * (http/write_now.h).  on_out_changed runs as the output drains, as it
 * would from the bufferevent's write; on_write does nothing for h1. */
void mgw_cconn_write_now(struct mgw_client_conn *c)
{
	if (!c->tls && !c->h2)
		(void)mgw_write_now(c->bev);
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

/* Frees the TCP-phase bufferevent of an address that failed.  TLS
 * connections' ones do not own their fd (the TLS one takes it over), so
 * it is closed here. */
static void drop_tcp_bev(struct mgw_client_conn *c)
{
	evutil_socket_t fd = bufferevent_getfd(c->bev);

	bufferevent_free(c->bev);
	c->bev = NULL;
	if (c->tls && fd >= 0)
		evutil_closesocket(fd);
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
	SSL *ssl = bufferevent_openssl_get_ssl(c->bev);
	const char *v = mgw_tls_client_verify_error(ssl);

	mgw_tls_client_why(ssl, bufferevent_get_openssl_error(c->bev), 0,
	                   c->msgbuf, sizeof(c->msgbuf));
	conn_fail(c, v ? MGW_EAUTH : MGW_EIO, MGW_CLIENT_E_TLS, c->msgbuf,
	          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
}

/* TCP connect finished or failed: TLS next, or ready; after a failure the
 * next address, if any.  c may be freed. */
static void connect_event(struct mgw_client_conn *c, short what, int err)
{
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
	drop_tcp_bev(c);
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
}

/* The peer closed a ready connection, or it failed (err != 0, why in
 * msg).  c may be freed. */
static void peer_gone(struct mgw_client_conn *c, int err, const char *msg)
{
	c->peer_eof = 1;
	if (c->h2) {
		mgw_cconn_set_error(c, MGW_ECLOSED, MGW_CLIENT_E_CLOSED, msg, 0);
		if (!mgw_ch2_retire(c))
			mgw_cconn_close(c);
		return;
	}
	mgw_ch1_closed(c, err, msg);
}

/* The text of an error event on a ready connection, in c->msgbuf. */
static const char *error_text(struct mgw_client_conn *c, int err)
{
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
	return msg;
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
		connect_event(c, what, err);
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
		peer_gone(c, 0, "upstream closed the connection");
		return;
	}
	if (what & BEV_EVENT_ERROR)
		peer_gone(c, 1, error_text(c, err));
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
		        (int)c->addrs.len[c->addr_i]) == 0) {
			/* the fd is set now; a TLS connection reads through
			 * the bufferevent that takes it over */
			if (!c->tls)
				(void)mgw_read_fast(c->bev);
			return;
		}
		drop_tcp_bev(c);
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

/* After the handshake with an h2 or auto origin: an h2 origin must have
 * selected h2; for an auto one the selection decides (and is learned),
 * the reserved request becoming the first stream on h2.  Returns 1 when c
 * failed (it is freed), 0 to go on. */
static int alpn_decide(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;
	const unsigned char *alpn = NULL;
	unsigned int alen = 0;
	struct mgw_client_req *r;
	int h2;

	SSL_get0_alpn_selected(bufferevent_openssl_get_ssl(c->bev), &alpn, &alen);
	h2 = alen == 2 && memcmp(alpn, "h2", 2) == 0;
	if (o->proto == MGW_CLIENT_H2 && !h2) {
		conn_fail(c, MGW_EPROTO, MGW_CLIENT_E_TLS,
		          "upstream did not select h2 by ALPN",
		          MGW_CLIENT_F_CONNECT | MGW_CLIENT_F_NOT_SENT);
		return 1;
	}
	if (o->proto != MGW_CLIENT_AUTO)
		return 0;
	o->learned = h2 ? 2 : 1;
	if (!h2 || c->h2)
		return 0;
	r = c->req;
	c->req = NULL;
	c->h2 = 1;
	if (mgw_ch2_start(c) != 0) {
		c->h2 = 0;
		c->req = r;
		conn_fail(c, MGW_ENOMEM, MGW_CLIENT_E_PROTO,
		          "no memory for HTTP/2 session", MGW_CLIENT_F_NOT_SENT);
		return 1;
	}
	if (r && mgw_ch2_submit(c, r) != 0) {
		/* back to the queue, in front */
		r->o->nactive--;
		mgw_creq_enqueue(r, 1);
	}
	return 0;
}

/* Connected (and TLS handshake done). */
static void conn_ready(struct mgw_client_conn *c)
{
	struct mgw_client_origin *o = c->o;
	struct mgw_client_req *r;
	struct mgw_log_ctx ctx;

	c->state = MGW_CC_READY;
	o->nconnecting--;
	MGW_CSTAT_INC(o, conns_opened);
	evtimer_del(c->timer);
	mgw_read_limit(c->bev, READ_HIGH_WATERMARK);
	evbuffer_add_cb(bufferevent_get_output(c->bev), on_out_changed, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (c->req && c->req->state == MGW_CRQ_DONE) {
		/* its request was cancelled during the set-up, and the work
		 * callback that drops it has not run yet: never send it */
		r = c->req;
		c->req = NULL;
		mgw_creq_free(r);
	}

	if (c->tls && o->proto != MGW_CLIENT_H1 && alpn_decide(c))
		return;
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

/* Resolution goes through the origin's address cache, a numeric host,
 * or the client's (lazily created) evdns resolver. */
void mgw_cconn_open(struct mgw_client_origin *o, struct mgw_client_req *owner,
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
		mgw_creq_unqueue(owner);
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
