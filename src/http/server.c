/* server.c - the HTTP server: listeners, connection lifecycle (accept,
 * protocol detection, timers, backpressure, teardown), graceful shutdown,
 * and the exchange API that hides HTTP/1.1 vs HTTP/2 from handlers.
 *
 * A connection starts in MGW_PROTO_DETECT.  Plain connections peek at the
 * first bytes: the 24-byte HTTP/2 client preface selects HTTP/2 (h2c with
 * prior knowledge), the first byte that differs selects HTTP/1.1.  TLS
 * connections decide by the ALPN result once the handshake completes.
 * Protocol work lives in h1.c and h2.c; see conn.h for the re-entrancy
 * rule every function here follows. */
#include "autoconf.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <http_parser.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/conn.h"
#include "http/connlim.h"
#include "http/headers.h"
#include "http/server.h"
#include "http/read_now.h"
#include "http/write_now.h"
#include "net/listener.h"
#include "util/memstr.h"
#include "util/time.h"

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
/* Input buffered per connection while a request is in flight. */
#define READ_HIGH_WATERMARK (64 * 1024)
/* Lingering close after an error response: how long and how much input is
 * drained before the socket is closed for good. */
#define LINGER_SECONDS 2.0
#define LINGER_MAX_BYTES (1024 * 1024)

/* Atomic so servers running on several threads never share an id. */
static atomic_uint_fast64_t next_conn_id = 1;

static const unsigned char empty_body[1];

/* One more on a counter only this thread writes: no read-modify-write
 * instruction is needed, and readers on other threads see whole values. */
static void bump(atomic_uint_fast64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
}

void mgw_http_limits_default(struct mgw_http_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->max_header_bytes = 32 * 1024;
	lim->max_headers = 100;
	lim->max_uri = 8 * 1024;
	lim->max_body = 4 * 1024 * 1024;
	lim->max_streams = 100;
	lim->max_connections = 10000;
	lim->write_high_watermark = 256 * 1024;
	lim->header_timeout = 10.0;
	lim->body_timeout = 30.0;
	lim->idle_timeout = 60.0;
	lim->write_timeout = 30.0;
}

const char *mgw_http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 101: return "Switching Protocols";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 307: return "Temporary Redirect";
	case 308: return "Permanent Redirect";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 421: return "Misdirected Request";
	case 422: return "Unprocessable Content";
	case 425: return "Too Early";
	case 426: return "Upgrade Required";
	case 428: return "Precondition Required";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

/* ---- helpers shared with h1.c / h2.c ---- */

const char *mgw_http_date(struct mgw_http_server *s)
{
	static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed",
	                                 "Thu", "Fri", "Sat"};
	static const char *const mo[] = {"Jan", "Feb", "Mar", "Apr",
	                                 "May", "Jun", "Jul", "Aug",
	                                 "Sep", "Oct", "Nov", "Dec"};
	time_t now = time(NULL);

	if (now != s->date_t || !s->date[0]) {
		struct tm tm;
		gmtime_r(&now, &tm);
		snprintf(s->date, sizeof(s->date),
		         "%s, %02d %s %04d %02d:%02d:%02d GMT", wd[tm.tm_wday % 7],
		         tm.tm_mday, mo[tm.tm_mon % 12], tm.tm_year + 1900,
		         tm.tm_hour, tm.tm_min, tm.tm_sec);
		s->date_t = now;
	}
	return s->date;
}

void mgw_refusal_body(struct mgw_http_server *s, int status, const char *why,
                      const struct mgw_headers *req, const char **ctype,
                      char **body, size_t *len)
{
	int n;

	*body = NULL;
	*len = 0;
	if (s->refusal &&
	    s->refusal(status, why, req, ctype, body, len, s->refusal_arg) == 0 &&
	    *body)
		return;
	*ctype = "text/plain; charset=utf-8";
	n = snprintf(NULL, 0, "%d %s%s%s\n", status, mgw_http_reason(status),
	             why ? ": " : "", why ? why : "");
	if (n < 0 || !(*body = malloc((size_t)n + 1)))
		return;
	snprintf(*body, (size_t)n + 1, "%d %s%s%s\n", status,
	         mgw_http_reason(status), why ? ": " : "", why ? why : "");
	*len = (size_t)n;
}

void mgw_http_server_set_refusal_cb(struct mgw_http_server *s,
                                    mgw_http_refusal_cb cb, void *arg)
{
	s->refusal = cb;
	s->refusal_arg = arg;
}

int mgw_resp_field_ok(const struct mgw_header *f, int checked,
                      const char *conn_tokens, int have_ctype)
{
	if (!checked && (!mgw_header_name_valid(f->name, f->name_len) ||
	                 !mgw_header_value_valid(f->value, f->value_len)))
		return 0;
	if (mgw_header_is_hop_by_hop(f->name, f->name_len))
		return 0;
	if (MGW_HEADER_IS(f, "content-length"))
		return 0;
	if (have_ctype && MGW_HEADER_IS(f, "content-type"))
		return 0;
	if (conn_tokens && mgw_header_list_has(conn_tokens, f->name))
		return 0;
	return 1;
}

void mgw_conn_logctx(const struct mgw_http_conn *c, int32_t stream,
                     struct mgw_log_ctx *ctx)
{
	ctx->conn_id = c->id;
	ctx->stream_id = stream;
	ctx->session = NULL;
}

size_t mgw_conn_outlen(const struct mgw_http_conn *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

void mgw_conn_schedule(struct mgw_http_conn *c)
{
	if (!c->freeing)
		event_active(c->work, EV_TIMEOUT, 0);
}

/* The connection's event, to fire at due (monotonic ms). */
static void arm_timer(struct mgw_http_conn *c, uint64_t now, uint64_t due)
{
	struct timeval tv = mgw_tv((double)(due > now ? due - now : 0) / 1000.0);

	c->timer_fire = due;
	c->timer_armed = 1;
	evtimer_add(c->timer, &tv);
}

/* Timers change several times a request (header, body, none, idle):
 * adding and deleting the event each time was a fair part of libevent's
 * cost per request.  So a pending event that fires no later than the new
 * deadline stays as it is (on_timer finds the deadline not yet reached
 * and arms it for the rest); only an earlier deadline moves it, and
 * clearing the timer leaves it pending, to fire with nothing due. */
void mgw_conn_timer(struct mgw_http_conn *c, enum mgw_conn_timer kind,
                    double seconds)
{
	uint64_t now;

	if (kind == MGW_T_NONE || seconds <= 0) {
		c->timer_kind = MGW_T_NONE;
		c->timer_due = 0;
		return;
	}
	now = mgw_now_ms();
	c->timer_kind = kind;
	c->timer_due = now + (uint64_t)(seconds * 1000.0 + 0.5);
	if (!c->timer_armed || c->timer_fire > c->timer_due)
		arm_timer(c, now, c->timer_due);
}

void mgw_conn_check_backpressure(struct mgw_http_conn *c)
{
	if (!c->read_blocked && !c->lingering &&
	    mgw_conn_outlen(c) >= c->srv->lim.write_high_watermark) {
		c->read_blocked = 1;
		bufferevent_disable(c->bev, EV_READ);
	}
}

void mgw_conn_write_now(struct mgw_http_conn *c)
{
	if (c->tls || c->lingering || c->freeing || !mgw_write_now(c->bev))
		return;
	if (c->read_blocked) {
		c->read_blocked = 0;
		if (!c->peer_eof)
			bufferevent_enable(c->bev, EV_READ);
	}
}

/* ---- exchanges ---- */

struct mgw_http_exchange *mgw_x_new(struct mgw_http_conn *c, int version)
{
	struct mgw_http_exchange *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->c = c;
	x->version = version;
	x->state = MGW_X_RECV;
	mgw_headers_init(&x->req);
	return x;
}

void mgw_x_free(struct mgw_http_exchange *x)
{
	if (!x)
		return;
	free(x->method);
	free(x->target);
	free(x->path);
	free(x->authority);
	mgw_headers_deinit(&x->req);
	free(x->body);
	x->c->body_live -= x->body_cap;
	if (x->out)
		evbuffer_free(x->out);
	if (x->timer)
		event_free(x->timer);
	free(x);
}

int mgw_x_body_append(struct mgw_http_exchange *x, const void *p, size_t n)
{
	struct mgw_http_conn *c = x->c;
	size_t max = c->srv->lim.max_body;

	if (n > max || x->body_len > max - n)
		return MGW_ELIMIT;
	if (x->body_len + n > x->body_cap) {
		size_t cap = x->body_cap ? x->body_cap : 1024;
		while (cap < x->body_len + n)
			cap *= 2;
		if (cap > max)
			cap = max;
		/* HTTP/2 streams share the connection's budget: without it
		 * one connection could hold max_streams x max_body */
		if (c->body_live - x->body_cap + cap > MGW_CONN_BODY_FACTOR * max)
			return MGW_EAGAIN;
		unsigned char *b = realloc(x->body, cap);
		if (!b)
			return MGW_ENOMEM;
		c->body_live += cap - x->body_cap;
		x->body = b;
		x->body_cap = cap;
	}
	memcpy(x->body + x->body_len, p, n);
	x->body_len += n;
	return 0;
}

/* absolute-form t: x->target becomes its origin-form (path, "/" when
 * empty, and "?query"; a fragment is dropped) and x->authority its
 * host[:port] as written. */
/* 1 when p[0..n) is lit, ASCII case folded (p need not be a string: the
 * target may lie in the received bytes). */
static int span_ieq(const char *p, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; i < n && lit[i]; i++)
		if ((p[i] | 0x20) != lit[i])
			return 0;
	return i == n && !lit[i];
}

static int set_absolute_target(struct mgw_http_exchange *x, const char *t,
                               size_t n)
{
	struct http_parser_url u;
	const char *path = "/", *q = NULL;
	size_t plen = 1, qlen = 0, slen, alen, hs, he;
	char *target;

	http_parser_url_init(&u);
	if (http_parser_parse_url(t, n, 0, &u) != 0 ||
	    !(u.field_set & (1 << UF_SCHEMA)) || !(u.field_set & (1 << UF_HOST)) ||
	    (u.field_set & (1 << UF_USERINFO)))
		return MGW_EINVAL;
	slen = u.field_data[UF_SCHEMA].len;
	if (!span_ieq(t, slen, "http") && !span_ieq(t, slen, "https"))
		return MGW_EINVAL;
	if ((u.field_set & (1 << UF_PATH)) && u.field_data[UF_PATH].len) {
		path = t + u.field_data[UF_PATH].off;
		plen = u.field_data[UF_PATH].len;
	}
	if (u.field_set & (1 << UF_QUERY)) {
		q = t + u.field_data[UF_QUERY].off;
		qlen = u.field_data[UF_QUERY].len;
	}
	/* host through port, as written: "[::1]:8080" keeps its brackets,
	 * which http_parser leaves out of the host */
	hs = u.field_data[UF_HOST].off;
	he = hs + u.field_data[UF_HOST].len;
	if (hs > 0 && t[hs - 1] == '[') {
		hs--;
		he++;
	}
	if (u.field_set & (1 << UF_PORT))
		he = (size_t)u.field_data[UF_PORT].off + u.field_data[UF_PORT].len;
	alen = he - hs;
	target = malloc(plen + (q ? qlen + 1 : 0) + 1);
	if (!target)
		return MGW_ENOMEM;
	memcpy(target, path, plen);
	if (q) {
		target[plen] = '?';
		memcpy(target + plen + 1, q, qlen);
	}
	target[plen + (q ? qlen + 1 : 0)] = '\0';
	free(x->authority);
	x->authority = mgw_memstr(t + hs, alen);
	x->target = target;
	x->path = mgw_memstr(path, plen);
	return x->authority && x->path ? 0 : MGW_ENOMEM;
}

int mgw_x_set_target(struct mgw_http_exchange *x, const char *t, size_t n,
                     int absolute)
{
	size_t plen = 0;

	free(x->target);
	free(x->path);
	x->target = x->path = NULL;
	if (n && t[0] == '/') {
		while (plen < n && t[plen] != '?' && t[plen] != '#')
			plen++;
	} else if (n == 1 && t[0] == '*') {
		plen = 1;
	} else {
		return absolute ? set_absolute_target(x, t, n) : MGW_EINVAL;
	}
	x->target = mgw_memstr(t, n);
	x->path = mgw_memstr(t, plen);
	return x->target && x->path ? 0 : MGW_ENOMEM;
}

void mgw_x_dispatch(struct mgw_http_exchange *x)
{
	struct mgw_http_server *s = x->c->srv;

	x->state = MGW_X_HANDLER;
	s->inflight++;
	s->handler(x, s->arg);
}

void mgw_x_finish(struct mgw_http_exchange *x)
{
	if (x->state == MGW_X_HANDLER || x->state == MGW_X_STREAMING)
		x->c->srv->inflight--;
	x->state = MGW_X_DONE;
}

void mgw_x_abort(struct mgw_http_exchange *x)
{
	if (x->state != MGW_X_HANDLER && x->state != MGW_X_STREAMING) {
		x->state = MGW_X_DONE;
		return;
	}
	mgw_x_finish(x);
	if (x->on_abort)
		x->on_abort(x, x->cb_arg);
}

void mgw_x_maybe_drain(struct mgw_http_exchange *x, size_t queued)
{
	if (!x->want_drain || x->state != MGW_X_STREAMING ||
	    queued > x->c->srv->lim.write_high_watermark / 2)
		return;
	x->want_drain = 0;
	if (x->on_drain)
		x->on_drain(x, x->cb_arg);
}

/* ---- connection lifecycle ---- */

static void done_check(struct mgw_http_server *s)
{
	if (s->shutting_down && s->nconns == 0 && !s->done_fired)
		event_active(s->done_ev, EV_TIMEOUT, 0);
}

void mgw_conn_close(struct mgw_http_conn *c)
{
	struct mgw_http_server *s = c->srv;

	if (c->freeing)
		return;
	c->freeing = 1;
	if (c->active) {
		struct mgw_http_exchange *x = c->active;
		c->active = NULL;
		mgw_x_abort(x);
		mgw_x_free(x);
	}
	mgw_h1_deinit(c);
	mgw_h2_deinit(c);
	event_free(c->work);
	event_free(c->timer);
	bufferevent_free(c->bev);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nconns--;
	mgw_http_connlim_leave(s->connlim, &c->clt);
	if (c->lc)
		bump(&c->lc->closed);
	free(c);
	done_check(s);
}

void mgw_conn_close_flushed(struct mgw_http_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	c->closing = 1;
	if (c->lingering || mgw_conn_outlen(c) > 0)
		return; /* on_write comes back when the output is gone */
	if (!c->tls && c->proto == MGW_PROTO_H1 && !c->peer_eof &&
	    (c->linger || evbuffer_get_length(in) > 0)) {
		/* Unread input would make close() send a RST, which can destroy
		 * the response before the client reads it: send FIN, drain. */
		c->lingering = 1;
		mgw_read_drain(c->bev, evbuffer_get_length(in));
		shutdown(bufferevent_getfd(c->bev), SHUT_WR);
		c->read_blocked = 0;
		bufferevent_enable(c->bev, EV_READ);
		mgw_conn_timer(c, MGW_T_LINGER, LINGER_SECONDS);
		return;
	}
	if (c->tls && !c->peer_eof && c->proto != MGW_PROTO_DETECT) {
		/* best effort close_notify, so the client can tell a complete
		 * response from a truncated one; the socket is non-blocking */
		SSL_shutdown(bufferevent_openssl_get_ssl(c->bev));
		ERR_clear_error();
	}
	mgw_conn_close(c);
}

/* Lines about client faults anyone can provoke (connections refused at
 * max_connections, failed TLS handshakes, header/body/write timeouts):
 * at most MGW_FAULT_LOGS_PER_S a second per server; the next line after
 * a busy second says how many were left out.  Returns 1 to log. */
#define MGW_FAULT_LOGS_PER_S 20
static int fault_log_ok(struct mgw_http_server *s)
{
	return mgw_log_limit_ok(&s->faults);
}

static void start_proto(struct mgw_http_conn *c, enum mgw_conn_proto proto)
{
	c->proto = proto;
	/* The idle deadline armed at accept keeps running: a client that
	 * finishes its TLS handshake, or sends a lone CR, just before it
	 * must not get a second idle_timeout for its first request. */
	if (proto == MGW_PROTO_H2) {
		if (mgw_h2_start(c) != 0) {
			mgw_conn_close(c);
			return;
		}
		mgw_h2_process(c);
		return;
	}
	mgw_h1_start(c);
	mgw_h1_process(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct mgw_http_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	if (c->lingering) {
		size_t n = evbuffer_get_length(in);
		mgw_read_drain(bev, n);
		c->linger_bytes += n;
		if (c->linger_bytes > LINGER_MAX_BYTES)
			mgw_conn_close(c);
		return;
	}
	switch (c->proto) {
	case MGW_PROTO_DETECT: {
		unsigned char buf[H2_PREFACE_LEN];
		size_t n = evbuffer_get_length(in);
		if (c->tls || n == 0)
			return; /* TLS decides on BEV_EVENT_CONNECTED */
		if (n > H2_PREFACE_LEN)
			n = H2_PREFACE_LEN;
		evbuffer_copyout(in, buf, n);
		if (memcmp(buf, H2_PREFACE, n) != 0)
			start_proto(c, MGW_PROTO_H1);
		else if (n == H2_PREFACE_LEN)
			start_proto(c, MGW_PROTO_H2);
		return;
	}
	case MGW_PROTO_H1:
		mgw_h1_process(c);
		return;
	case MGW_PROTO_H2:
		mgw_h2_process(c);
		return;
	}
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct mgw_http_conn *c = arg;

	if (c->lingering)
		return;
	if (c->read_blocked &&
	    mgw_conn_outlen(c) <= c->srv->lim.write_high_watermark / 2) {
		c->read_blocked = 0;
		if (!c->peer_eof)
			bufferevent_enable(bev, EV_READ);
	}
	switch (c->proto) {
	case MGW_PROTO_DETECT:
		if (c->closing && mgw_conn_outlen(c) == 0)
			mgw_conn_close(c);
		return;
	case MGW_PROTO_H1:
		mgw_h1_process(c);
		return;
	case MGW_PROTO_H2:
		mgw_h2_send(c);
		return;
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct mgw_http_conn *c = arg;
	struct mgw_log_ctx ctx;

	mgw_conn_logctx(c, -1, &ctx);
	if (what & BEV_EVENT_CONNECTED) {
		if (c->tls && c->proto == MGW_PROTO_DETECT) {
			const unsigned char *alpn = NULL;
			unsigned int alen = 0;
			SSL_get0_alpn_selected(bufferevent_openssl_get_ssl(bev), &alpn,
			                       &alen);
			start_proto(c, alen == 2 && memcmp(alpn, "h2", 2) == 0
			                   ? MGW_PROTO_H2
			                   : MGW_PROTO_H1);
		}
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		if (fault_log_ok(c->srv))
			mgw_info(&ctx, "%s: write timeout, closing", c->peer);
		mgw_conn_close(c);
		return;
	}
	if (c->tls && c->proto == MGW_PROTO_DETECT && c->lc &&
	    (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)))
		bump(&c->lc->tls_failures); /* the handshake never completed */
	if (what & BEV_EVENT_ERROR) {
		unsigned long e = c->tls ? bufferevent_get_openssl_error(bev) : 0;
		if (e) {
			char buf[256];
			ERR_error_string_n(e, buf, sizeof(buf));
			if (fault_log_ok(c->srv))
				mgw_info(&ctx, "%s: TLS error: %s", c->peer, buf);
		} else {
			mgw_debug(&ctx, "%s: connection error: %s", c->peer,
			          evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		}
		mgw_conn_close(c);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		c->peer_eof = 1;
		/* A finished HTTP/1 response still being written is delivered
		 * to a client that only shut its sending side; anything still
		 * owed to a handler is cancelled. */
		if (!c->lingering && c->proto == MGW_PROTO_H1 && !c->active &&
		    mgw_conn_outlen(c) > 0) {
			c->closing = 1;
			bufferevent_disable(bev, EV_READ);
			return;
		}
		mgw_debug(&ctx, "%s: client closed", c->peer);
		mgw_conn_close(c);
	}
}

static void on_work(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_http_conn *c = arg;

	if (c->lingering)
		return;
	switch (c->proto) {
	case MGW_PROTO_DETECT:
		if (c->closing)
			mgw_conn_close(c);
		return;
	case MGW_PROTO_H1:
		mgw_h1_process(c);
		return;
	case MGW_PROTO_H2:
		mgw_h2_send(c);
		return;
	}
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_http_conn *c = arg;
	enum mgw_conn_timer kind = c->timer_kind;
	struct mgw_log_ctx ctx;
	uint64_t now;

	c->timer_armed = 0;
	if (kind == MGW_T_NONE)
		return;
	now = mgw_now_ms();
	if (now < c->timer_due) {
		arm_timer(c, now, c->timer_due); /* a later deadline than armed */
		return;
	}
	c->timer_kind = MGW_T_NONE;
	c->timer_due = 0;
	mgw_conn_logctx(c, -1, &ctx);
	switch (kind) {
	case MGW_T_NONE:
		return;
	case MGW_T_IDLE:
		if (mgw_conn_outlen(c) > 0) {
			/* still writing: that is the write timeout's business */
			mgw_conn_timer(c, MGW_T_IDLE, c->srv->lim.idle_timeout);
			return;
		}
		mgw_debug(&ctx, "%s: idle timeout", c->peer);
		if (c->proto == MGW_PROTO_H2) {
			mgw_h2_goaway(c, 1);
			mgw_h2_send(c);
			return;
		}
		if (c->active || c->rx)
			return;
		mgw_conn_close(c);
		return;
	case MGW_T_HEADER:
	case MGW_T_BODY:
		if (fault_log_ok(c->srv))
			mgw_info(&ctx, "%s: %s timeout", c->peer,
			         kind == MGW_T_HEADER ? "header" : "body");
		if (c->proto == MGW_PROTO_H1)
			mgw_h1_timeout(c);
		else
			mgw_conn_close(c);
		return;
	case MGW_T_LINGER:
		mgw_conn_close(c);
		return;
	}
}

/* c->peer ("IP:PORT", "[IP]:PORT") as address and port apart. */
static void split_peer(struct mgw_http_conn *c)
{
	const char *colon = strrchr(c->peer, ':');
	size_t n;

	if (!colon)
		return;
	n = (size_t)(colon - c->peer);
	if (n >= 2 && c->peer[0] == '[' && c->peer[n - 1] == ']')
		snprintf(c->peer_ip, sizeof(c->peer_ip), "%.*s", (int)(n - 2),
		         c->peer + 1);
	else
		snprintf(c->peer_ip, sizeof(c->peer_ip), "%.*s", (int)n, c->peer);
	c->peer_port = atoi(colon + 1);
}

/* Per-client limits (connlim.h): 1 when the connection from sa was over
 * them and closed (counted, logged within the fault budget), else 0 with
 * *tk holding it. */
static int client_refused(struct mgw_http_server *s,
                          struct mgw_http_listener_counters *lc,
                          evutil_socket_t fd, const struct sockaddr *sa,
                          struct mgw_connlim_ticket *tk)
{
	enum mgw_connlim_verdict v =
		mgw_http_connlim_enter(s->connlim, sa, mgw_now_ns(), tk);
	char peer[64];

	if (v == MGW_CONNLIM_OK)
		return 0;
	if (lc) {
		bump(&lc->refused);
		bump(v == MGW_CONNLIM_CONCURRENT ? &lc->refused_client_open
		                                 : &lc->refused_client_rate);
	}
	if (fault_log_ok(s))
		mgw_info(NULL, "%s: connection refused (%s)",
		         mgw_sockaddr_str(sa, peer, sizeof(peer)),
		         v == MGW_CONNLIM_CONCURRENT
		         ? "max_connections_per_client"
		         : "new_connections_per_client");
	evutil_closesocket(fd);
	return 1;
}

static void on_accept(evutil_socket_t fd, const struct sockaddr *sa, int salen,
                      void *arg)
{
	struct mgw_http_lst *ls = arg;
	struct mgw_http_server *s = ls->srv;
	struct mgw_http_conn *c = NULL;
	SSL *ssl = NULL;
	struct timeval wtv;
	int one = 1;
	struct mgw_connlim_ticket tk = {{0}, 0};

	struct mgw_http_listener_counters *lc =
		s->cnt && ls->index < MGW_HTTP_COUNTED_LISTENERS ? &s->cnt->l[ls->index]
		                                                 : NULL;

	if (s->shutting_down || s->nconns >= s->lim.max_connections) {
		char peer[64];
		if (lc)
			bump(&lc->refused);
		if (fault_log_ok(s))
			mgw_info(NULL, "%s: connection refused (%s)",
			         mgw_sockaddr_str(sa, peer, sizeof(peer)),
			         s->shutting_down ? "shutting down"
			                          : "max_connections");
		evutil_closesocket(fd);
		return;
	}
	if (s->connlim && client_refused(s, lc, fd, sa, &tk))
		return;
	c = calloc(1, sizeof(*c));
	if (!c) {
		mgw_http_connlim_leave(s->connlim, &tk);
		goto fail;
	}
	c->clt = tk;
	c->srv = s;
	c->lst_index = ls->index;
	c->id = (uint64_t)atomic_fetch_add(&next_conn_id, 1);
	mgw_sockaddr_str(sa, c->peer, sizeof(c->peer));
	c->peer_loopback = mgw_sockaddr_is_loopback(sa);
	split_peer(c);
	snprintf(c->local, sizeof(c->local), "%s", ls->addr);
	/* SSE events are small writes that must leave at once */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (ls->tls) {
		ssl = SSL_new(ls->tls);
		if (!ssl)
			goto fail;
		c->bev = bufferevent_openssl_socket_new(s->base, fd, ssl,
		                                        BUFFEREVENT_SSL_ACCEPTING,
		                                        BEV_OPT_CLOSE_ON_FREE);
		/* libevent owns ssl from here: with CLOSE_ON_FREE it frees it
		 * itself when it fails (2.1.12), and leaves the fd to us */
		ssl = NULL;
		if (!c->bev)
			goto fail;
		bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
		c->tls = 1;
	} else {
		c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (!c->bev)
			goto fail;
		(void)mgw_read_fast(c->bev); /* else it reads as libevent does */
	}
	c->work = event_new(s->base, -1, 0, on_work, c);
	c->timer = evtimer_new(s->base, on_timer, c);
	if (!c->work || !c->timer) {
		if (c->work)
			event_free(c->work);
		if (c->timer)
			event_free(c->timer);
		bufferevent_free(c->bev);
		free(c);
		return;
	}
	bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
	mgw_read_limit(c->bev, READ_HIGH_WATERMARK);
	bufferevent_setwatermark(c->bev, EV_WRITE,
	                         s->lim.write_high_watermark / 2, 0);
	if (s->lim.write_timeout > 0) {
		wtv = mgw_tv(s->lim.write_timeout);
		bufferevent_set_timeouts(c->bev, NULL, &wtv);
	}
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	c->lc = lc;
	if (lc)
		bump(&lc->accepted);
	mgw_conn_timer(c, MGW_T_IDLE, s->lim.idle_timeout);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return;
fail:
	mgw_warn(NULL, "accept: out of memory, connection dropped");
	SSL_free(ssl);
	if (c && c->bev)
		bufferevent_free(c->bev);
	else
		evutil_closesocket(fd);
	free(c);
}

/* ---- server ---- */

static void on_done(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_http_server *s = arg;

	if (s->done_fired)
		return;
	s->done_fired = 1;
	evtimer_del(s->deadline);
	if (s->done)
		s->done(s->done_arg);
}

static void close_all(struct mgw_http_server *s)
{
	/* abort callbacks cannot free connections (conn.h), so next stays
	 * valid across mgw_conn_close */
	struct mgw_http_conn *c = s->conns, *next;
	for (; c; c = next) {
		next = c->next;
		mgw_conn_close(c);
	}
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_http_server *s = arg;

	if (s->nconns)
		mgw_info(NULL, "shutdown deadline: aborting %zu connection(s)",
		         s->nconns);
	close_all(s);
	done_check(s);
}

static void free_listeners(struct mgw_http_server *s)
{
	struct mgw_http_lst *ls = s->listeners, *next;

	for (; ls; ls = next) {
		next = ls->next;
		mgw_listener_free(ls->l);
		SSL_CTX_free(ls->tls);
		free(ls);
	}
	s->listeners = NULL;
}

/* Creates a server on base.  lim is copied.  The process ignores SIGPIPE
 * from here on if it did not already (a client closing while we write
 * must be an EPIPE, not the end of the process).  Returns NULL on no
 * memory. */
struct mgw_http_server *mgw_http_server_new(struct event_base *base,
                                            const struct mgw_http_limits *lim,
                                            mgw_http_handler_cb handler,
                                            void *arg)
{
	struct mgw_http_server *s = calloc(1, sizeof(*s));
	struct sigaction sa;

	if (!s)
		return NULL;
	s->base = base;
	s->lim = *lim;
	if (s->lim.write_high_watermark == 0)
		s->lim.write_high_watermark = 1;
	s->handler = handler;
	s->arg = arg;
	mgw_log_limit_init(&s->faults, "client-fault log", MGW_FAULT_LOGS_PER_S,
	                   MGW_LOG_INFO);
	if (lim->max_connections_per_client || lim->new_connections_per_client) {
		/* its own table until a shared one is set */
		s->connlim = mgw_http_connlim_new(lim->max_connections_per_client,
		                                  lim->new_connections_per_client,
		                                  mgw_now_ns() ^ (uintptr_t)s);
		s->connlim_owned = s->connlim != NULL;
		if (!s->connlim) {
			mgw_http_server_free(s);
			return NULL;
		}
	}
	s->done_ev = event_new(base, -1, 0, on_done, s);
	s->deadline = evtimer_new(base, on_deadline, s);
	if (!s->done_ev || !s->deadline) {
		mgw_http_server_free(s);
		return NULL;
	}
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
	return s;
}

void mgw_http_server_free(struct mgw_http_server *s)
{
	if (!s)
		return;
	free_listeners(s);
	close_all(s);
	if (s->done_ev)
		event_free(s->done_ev);
	if (s->deadline)
		event_free(s->deadline);
	if (s->connlim_owned)
		mgw_http_connlim_free(s->connlim);
	free(s);
}

int mgw_http_server_listen(struct mgw_http_server *s, const char *hostport,
                           SSL_CTX *tls, char *bound, size_t boundlen)
{
	return mgw_http_server_listen_opts(s, hostport, tls, 0, bound, boundlen);
}

int mgw_http_server_listen_opts(struct mgw_http_server *s,
                                const char *hostport, SSL_CTX *tls,
                                unsigned flags, char *bound, size_t boundlen)
{
	struct mgw_http_lst *ls = calloc(1, sizeof(*ls));
	int rc;

	if (!ls)
		return MGW_ENOMEM;
	ls->srv = s;
	rc = mgw_listener_new_opts(&ls->l, s->base, hostport, flags, on_accept,
	                           ls, ls->addr, sizeof(ls->addr));
	if (rc) {
		int saved = errno;
		free(ls);
		errno = saved;
		return rc;
	}
	if (bound && boundlen)
		snprintf(bound, boundlen, "%s", ls->addr);
	if (tls) {
		SSL_CTX_up_ref(tls);
		ls->tls = tls;
	}
	ls->index = s->n_listeners++;
	if (s->cnt && ls->index < MGW_HTTP_COUNTED_LISTENERS) {
		struct mgw_http_listener_counters *lc = &s->cnt->l[ls->index];

		snprintf(lc->address, sizeof(lc->address), "%s",
		         bound && boundlen ? bound : hostport);
		lc->tls = tls != NULL;
		atomic_store(&s->cnt->n, ls->index + 1);
	}
	ls->next = s->listeners;
	s->listeners = ls;
	return 0;
}

int mgw_http_server_unlisten(struct mgw_http_server *s, const char *bound)
{
	for (struct mgw_http_lst **pp = &s->listeners; *pp; pp = &(*pp)->next) {
		struct mgw_http_lst *ls = *pp;

		if (strcmp(ls->addr, bound) != 0)
			continue;
		*pp = ls->next;
		mgw_listener_free(ls->l);
		SSL_CTX_free(ls->tls);
		free(ls);
		return 0;
	}
	return MGW_EINVAL;
}

void mgw_http_server_set_handler(struct mgw_http_server *s,
                                 mgw_http_handler_cb handler, void *arg)
{
	s->handler = handler;
	s->arg = arg;
}

void mgw_http_server_set_connlim(struct mgw_http_server *s,
                                 struct mgw_http_connlim *cl)
{
	if (s->connlim_owned)
		mgw_http_connlim_free(s->connlim);
	s->connlim = cl;
	s->connlim_owned = 0;
}

void mgw_http_server_set_counters(struct mgw_http_server *s,
                                  struct mgw_http_counters *c)
{
	s->cnt = c;
}

void mgw_http_server_shutdown(struct mgw_http_server *s, double deadline,
                              mgw_http_done_cb done, void *arg)
{
	struct timeval tv = mgw_tv(deadline);

	if (s->shutting_down)
		return;
	s->shutting_down = 1;
	s->done = done;
	s->done_arg = arg;
	free_listeners(s);
	for (struct mgw_http_conn *c = s->conns; c; c = c->next) {
		if (c->freeing)
			continue;
		switch (c->proto) {
		case MGW_PROTO_DETECT:
			c->closing = 1;
			break;
		case MGW_PROTO_H1:
			/* a request being received is still answered (with
			 * Connection: close); idle and busy ones take no more */
			if (!c->rx || c->active)
				c->closing = 1;
			break;
		case MGW_PROTO_H2:
			mgw_h2_goaway(c, 0);
			break;
		}
		mgw_conn_schedule(c);
	}
	evtimer_add(s->deadline, &tv);
	done_check(s);
}

size_t mgw_http_server_connections(const struct mgw_http_server *s)
{
	return s->nconns;
}

size_t mgw_http_server_inflight(const struct mgw_http_server *s)
{
	return s->inflight;
}

/* ---- request accessors ---- */

const char *mgw_http_method(const struct mgw_http_exchange *x)
{
	return x->method ? x->method : "";
}

const char *mgw_http_target(const struct mgw_http_exchange *x)
{
	return x->target ? x->target : "";
}

const char *mgw_http_path(const struct mgw_http_exchange *x)
{
	return x->path ? x->path : "";
}

const char *mgw_http_authority(const struct mgw_http_exchange *x)
{
	return x->authority;
}

const struct mgw_headers *mgw_http_req_headers(const struct mgw_http_exchange *x)
{
	return &x->req;
}

const char *mgw_http_req_header(const struct mgw_http_exchange *x,
                                const char *name)
{
	return mgw_headers_get(&x->req, name);
}

const unsigned char *mgw_http_req_body(const struct mgw_http_exchange *x,
                                       size_t *len)
{
	*len = x->body_len;
	return x->body ? x->body : empty_body;
}

int mgw_http_version(const struct mgw_http_exchange *x) { return x->version; }

int mgw_http_is_tls(const struct mgw_http_exchange *x) { return x->c->tls; }
unsigned mgw_http_listener_index(const struct mgw_http_exchange *x)
{
	return x->c->lst_index;
}

const char *mgw_http_peer(const struct mgw_http_exchange *x)
{
	return x->c->peer;
}

const char *mgw_http_peer_ip(const struct mgw_http_exchange *x)
{
	return x->c->peer_ip;
}

int mgw_http_peer_port(const struct mgw_http_exchange *x)
{
	return x->c->peer_port;
}

const char *mgw_http_local(const struct mgw_http_exchange *x)
{
	return x->c->local;
}

int mgw_http_peer_is_loopback(const struct mgw_http_exchange *x)
{
	return x->c->peer_loopback;
}

uint64_t mgw_http_conn_id(const struct mgw_http_exchange *x)
{
	return x->c->id;
}

int32_t mgw_http_stream_id(const struct mgw_http_exchange *x)
{
	return x->stream_id;
}

struct event_base *mgw_http_base(const struct mgw_http_exchange *x)
{
	return x->c->srv->base;
}

/* ---- responses ---- */

int mgw_http_respond(struct mgw_http_exchange *x, int status,
                     const struct mgw_headers *headers,
                     const char *content_type, const void *body, size_t len)
{
	if (!x || x->state != MGW_X_HANDLER)
		return x && x->state == MGW_X_DONE ? MGW_ECLOSED : MGW_EINVAL;
	if (!body)
		len = 0;
	if (x->c->proto == MGW_PROTO_H2)
		return mgw_h2_respond(x, status, headers, content_type, body, len);
	return mgw_h1_respond(x, status, headers, content_type, body, len);
}

int mgw_http_stream_start(struct mgw_http_exchange *x, int status,
                          const struct mgw_headers *headers,
                          const char *content_type)
{
	if (!x || x->state != MGW_X_HANDLER)
		return x && x->state == MGW_X_DONE ? MGW_ECLOSED : MGW_EINVAL;
	if (x->c->proto == MGW_PROTO_H2)
		return mgw_h2_stream_start(x, status, headers, content_type);
	return mgw_h1_stream_start(x, status, headers, content_type);
}

int mgw_http_stream_write(struct mgw_http_exchange *x, const void *data,
                          size_t len)
{
	if (!x || x->state != MGW_X_STREAMING)
		return x && x->state == MGW_X_DONE ? MGW_ECLOSED : MGW_EINVAL;
	if (x->c->proto == MGW_PROTO_H2)
		return mgw_h2_stream_write(x, data, len);
	return mgw_h1_stream_write(x, data, len);
}

int mgw_http_stream_writable(const struct mgw_http_exchange *x)
{
	struct mgw_http_exchange *mx = (struct mgw_http_exchange *)x;
	size_t queued;

	if (!x || x->state != MGW_X_STREAMING)
		return 0;
	queued = x->c->proto == MGW_PROTO_H2 ? mgw_h2_queued(x)
	                                     : mgw_conn_outlen(x->c);
	if (queued < x->c->srv->lim.write_high_watermark)
		return 1;
	/* the caller will wait for on_drain now */
	mx->want_drain = 1;
	return 0;
}

int mgw_http_stream_end(struct mgw_http_exchange *x)
{
	if (!x || x->state != MGW_X_STREAMING)
		return x && x->state == MGW_X_DONE ? MGW_ECLOSED : MGW_EINVAL;
	if (x->c->proto == MGW_PROTO_H2)
		return mgw_h2_stream_end(x);
	return mgw_h1_stream_end(x);
}

int mgw_http_stream_abort(struct mgw_http_exchange *x)
{
	if (!x || x->state != MGW_X_STREAMING)
		return x && x->state == MGW_X_DONE ? MGW_ECLOSED : MGW_EINVAL;
	if (x->c->proto == MGW_PROTO_H2)
		return mgw_h2_stream_abort(x);
	return mgw_h1_stream_abort(x);
}

void mgw_http_set_callbacks(struct mgw_http_exchange *x,
                            mgw_http_abort_cb on_abort,
                            mgw_http_drain_cb on_drain, void *arg)
{
	x->on_abort = on_abort;
	x->on_drain = on_drain;
	x->cb_arg = arg;
}
