/* h1.c - HTTP/1.x server connections.
 *
 * Heads.  Every request head goes through the raw-byte scanner of
 * h1_scan.c, which finds where it ends and refuses what would let two
 * parsers disagree on where a head or a field ends (obs-fold, bare CR or
 * LF, control bytes).  The whole head is then read in one pass by
 * h1_head.c (request line, field lines), in place when it arrived in one
 * piece, else from the connection's head buffer; the framing fields
 * (Content-Length, Transfer-Encoding, Host) are checked as a whole.  Any
 * failure answers a short error with "Connection: close" and closes.
 *
 * Bodies.  A Content-Length body is counted off the bytes that follow the
 * head.  A chunked body goes through the strict decoder of http/chunked.c
 * (which also checks trailer lines); the request is complete at its final
 * CRLF, and the bytes after it are the next request.
 *
 * Pipelining.  One request at a time: once a request is complete nothing
 * more is parsed until the handler took it, and mgw_h1_process hands the
 * next one over only when the response is complete, so answers leave in
 * request order.  Input keeps being read meanwhile (so a client close is
 * noticed), bounded by the read high watermark of the bufferevent. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/chunked.h"
#include "http/conn.h"
#include "http/h1_head.h"
#include "http/h1_scan.h"
#include "http/headers.h"
#include "http/write_now.h"
#include "http/read_now.h"
#include "util/decimal.h"
#include "util/memstr.h"

/* Request line and line-end overhead allowed on top of the configured
 * header limits before the raw scanner gives up on a header block. */
#define HEAD_SLACK 256

static size_t raw_head_cap(const struct mgw_http_limits *lim)
{
	return lim->max_uri + lim->max_header_bytes + 4 * lim->max_headers +
	       HEAD_SLACK;
}

static void scan_reset(struct mgw_http_conn *c)
{
	mgw_h1_scan_reset(&c->sc, raw_head_cap(&c->srv->lim), 1);
}

/* The request in c->rx is complete: the handler may take it. */
static void request_done(struct mgw_http_conn *c)
{
	c->hp_ready = 1;
	mgw_conn_timer(c, MGW_T_NONE, 0);
	scan_reset(c);
}

/* The request line's method and target into x.  Returns 0 or a status. */
static int take_request_line(struct mgw_http_conn *c,
                             const struct mgw_h1_reqline *rl)
{
	struct mgw_http_exchange *x = c->rx;
	int rc;

	if (rl->target_len > c->srv->lim.max_uri)
		return 414;
	x->method = mgw_memstr(rl->method, rl->method_len);
	if (!x->method)
		return 503;
	if (strcmp(x->method, "CONNECT") == 0)
		rc = mgw_x_set_target(x, "*", 1, 0); /* 405 once the head is read */
	else
		rc = mgw_x_set_target(x, rl->target, rl->target_len, 1);
	if (rc)
		return rc == MGW_EINVAL ? 400 : 503;
	return 0;
}

/* The field lines into x->req, within the count and byte limits.
 * Returns 0 or a status. */
static int take_fields(struct mgw_http_conn *c, struct mgw_h1_lines *it)
{
	struct mgw_h1_fields lim = {.max_bytes = c->srv->lim.max_header_bytes,
	                            .max_fields = c->srv->lim.max_headers};

	switch (mgw_h1_take_fields(it, &c->rx->req, &lim)) {
	case 0: return 0;
	case MGW_EPROTO: return 400;
	case MGW_ELIMIT: return 431;
	default: return 503;
	}
}

/* RFC 9112 §9.3: HTTP/1.1 persists unless "close" is listed; HTTP/1.0
 * only with "keep-alive". */
static int wants_keep_alive(const struct mgw_http_exchange *x)
{
	if (mgw_headers_connection_lists(&x->req, "close"))
		return 0;
	return !x->http10 || mgw_headers_connection_lists(&x->req, "keep-alive");
}

/* Host: exactly one in HTTP/1.1, valid; the authority unless the target
 * was in absolute form.  Returns 0 or a status (c->hp_why says why). */
static int check_host(struct mgw_http_conn *c)
{
	struct mgw_http_exchange *x = c->rx;
	size_t nhost = mgw_headers_count(&x->req, "host");
	const char *host;

	if (nhost > 1 || (nhost == 0 && !x->http10)) {
		c->hp_why = nhost ? "Host header sent more than once"
		                  : "Host header missing";
		return 400;
	}
	host = nhost ? mgw_headers_get(&x->req, "host") : NULL;
	if (host && !mgw_http_authority_valid(host, strlen(host))) {
		c->hp_why = "invalid Host header";
		return 400; /* RFC 9112 3.2 */
	}
	if (host && !x->authority) { /* absolute-form set it: Host ignored */
		x->authority = strdup(host);
		if (!x->authority)
			return 503;
	}
	return 0;
}

/* The framing checks that keep two HTTP/1 parsers from disagreeing on
 * where this request ends (request smuggling), plus limits known now; on
 * success the body's framing is set up (c->body_left, c->ck_mode) or the
 * request is complete. */
static int check_framing(struct mgw_http_conn *c)
{
	struct mgw_http_exchange *x = c->rx;
	const struct mgw_http_limits *lim = &c->srv->lim;
	size_t ncl = mgw_headers_count(&x->req, "content-length");
	size_t nte = mgw_headers_count(&x->req, "transfer-encoding");
	const char *te = mgw_headers_get(&x->req, "transfer-encoding");
	const char *cl = mgw_headers_get(&x->req, "content-length");
	const char *expect;
	uint64_t len = 0;
	int chunked = nte != 0, st;

	if (ncl > 1 || nte > 1 || (ncl && nte))
		return 400;
	if (nte && (x->http10 || strcasecmp(te, "chunked") != 0))
		return 400;
	if (ncl && mgw_h1_content_length(cl, &len) != 0)
		return 400;
	st = check_host(c);
	if (st)
		return st;
	if (!chunked && len > (uint64_t)lim->max_body)
		return 413;
	expect = mgw_headers_get(&x->req, "expect");
	if (expect) {
		if (strcasecmp(expect, "100-continue") != 0)
			return 417;
		if ((chunked || len) && !x->http10)
			bufferevent_write(c->bev, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	}
	x->keep_alive = wants_keep_alive(x) && !c->srv->shutting_down;
	if (chunked || len)
		mgw_conn_timer(c, MGW_T_BODY, lim->body_timeout);
	if (chunked) {
		/* trailers share the head's byte limit */
		c->ck_mode = 1;
		mgw_chunked_init(&c->ck, lim->max_header_bytes);
	} else if (len) {
		c->body_left = len;
	} else {
		request_done(c);
	}
	return 0;
}

/* A whole scanned head p[0..n) into c->rx.  Returns 0 or a status. */
static int take_head(struct mgw_http_conn *c, const char *p, size_t n)
{
	struct mgw_http_exchange *x = c->rx;
	struct mgw_h1_lines it;
	struct mgw_h1_reqline rl;
	int st;

	mgw_h1_lines_init(&it, p, n);
	if (mgw_h1_request_line(&it, &rl))
		return 400;
	st = take_request_line(c, &rl);
	if (!st)
		st = take_fields(c, &it);
	if (st)
		return st;
	x->headers_done = 1;
	if (rl.major != 1)
		return 505;
	x->http10 = rl.minor == 0;
	if (strcmp(x->method, "CONNECT") == 0)
		return 405;
	x->head = strcmp(x->method, "HEAD") == 0;
	return check_framing(c);
}

/* A request's first byte: its exchange, and the header timer. */
static int begin_request(struct mgw_http_conn *c)
{
	c->rx = mgw_x_new(c, 11);
	if (!c->rx)
		return 503;
	mgw_conn_timer(c, MGW_T_HEADER, c->srv->lim.header_timeout);
	return 0;
}

/* Head bytes: scanned, kept while the head goes on, read once it ended
 * (in place when it came in this one piece). */
static int parse_head(struct mgw_http_conn *c, const unsigned char *p,
                      size_t len, size_t *used)
{
	size_t feed;
	int st = mgw_h1_scan_feed(&c->sc, p, len, &feed);

	if (st)
		return st == MGW_ELIMIT ? 431 : 400;
	*used = feed;
	if (!c->rx && c->sc.any && (st = begin_request(c)) != 0)
		return st;
	if (c->sc.in_head || c->hbuf_len) {
		if (mgw_h1_buf_append(&c->hbuf, &c->hbuf_len, &c->hbuf_cap, p,
		                      feed))
			return 503;
		if (c->sc.in_head)
			return 0;
		st = take_head(c, c->hbuf, c->hbuf_len);
		c->hbuf_len = 0;
		return st;
	}
	return take_head(c, (const char *)p, feed);
}

/* Content-Length body bytes. */
static int parse_body(struct mgw_http_conn *c, const unsigned char *p,
                      size_t len, size_t *used)
{
	size_t n = (uint64_t)len < c->body_left ? len : (size_t)c->body_left;
	int rc = mgw_x_body_append(c->rx, p, n);

	if (rc)
		return rc == MGW_ELIMIT ? 413 : 503;
	*used = n;
	c->body_left -= n;
	if (!c->body_left)
		request_done(c);
	return 0;
}

void mgw_h1_start(struct mgw_http_conn *c)
{
	scan_reset(c);
}

void mgw_h1_deinit(struct mgw_http_conn *c)
{
	mgw_x_free(c->rx);
	c->rx = NULL;
	free(c->hbuf);
	c->hbuf = NULL;
	c->hbuf_len = c->hbuf_cap = 0;
}

/* Answers a protocol error or limit with a short plain response and marks
 * the connection for closing (with lingering, since the client may still
 * be sending the request we refused). */
static void h1_error(struct mgw_http_conn *c, int status)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	const char *reason = mgw_http_reason(status);
	const char *ctype;
	char *body;
	size_t blen;
	struct mgw_log_ctx ctx;

	mgw_conn_logctx(c, -1, &ctx);
	mgw_info(&ctx, "%s: HTTP/1 request refused with %d %s", c->peer, status,
	         reason);
	mgw_refusal_body(c->srv, status, c->hp_why,
	                 c->rx ? &c->rx->req : NULL, &ctype, &body, &blen);
	c->hp_why = NULL;
	mgw_x_free(c->rx);
	c->rx = NULL;
	c->ck_mode = 0;
	c->body_left = 0;
	evbuffer_add_printf(out,
	                    "HTTP/1.1 %d %s\r\nDate: %s\r\n"
	                    "Content-Type: %s\r\n"
	                    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	                    status, reason, mgw_http_date(c->srv), ctype, blen);
	if (body)
		evbuffer_add(out, body, blen);
	free(body);
	c->closing = 1;
	c->linger = 1;
	mgw_conn_timer(c, MGW_T_NONE, 0);
}

void mgw_h1_timeout(struct mgw_http_conn *c)
{
	h1_error(c, 408);
	mgw_h1_process(c);
}

/* Decoded chunk data: into the request body, within max_body. */
static int on_chunk_data(void *arg, const unsigned char *p, size_t n)
{
	struct mgw_http_conn *c = arg;
	int rc = mgw_x_body_append(c->rx, p, n);

	if (rc)
		c->hp_err = rc == MGW_ELIMIT ? 413 : 503;
	return rc;
}

static int parse_chunked(struct mgw_http_conn *c, const unsigned char *p,
                         size_t len, size_t *used)
{
	int rc;

	c->hp_err = 0;
	rc = mgw_chunked_feed(&c->ck, p, len, used, on_chunk_data, c);
	if (rc) {
		struct mgw_log_ctx ctx;

		if (c->hp_err)
			return c->hp_err;
		mgw_conn_logctx(c, -1, &ctx);
		mgw_info(&ctx, "%s: HTTP/1 chunked body: %s", c->peer,
		         mgw_chunked_error(&c->ck));
		return rc == MGW_ELIMIT ? 431 : 400;
	}
	/* a chunk that cannot fit: 413 now, not once its data came (or the
	 * body timeout, for a client that never sends it) */
	if (mgw_chunked_declared(&c->ck) >
	    (uint64_t)(c->srv->lim.max_body - c->rx->body_len))
		return 413;
	if (mgw_chunked_done(&c->ck)) {
		c->ck_mode = 0;
		request_done(c);
	}
	return 0;
}

int mgw_h1_parse(struct mgw_http_conn *c, const unsigned char *p, size_t len,
                 size_t *used)
{
	*used = 0;
	if (c->hp_ready)
		return 0; /* the handler has not taken the last one yet */
	if (c->ck_mode)
		return parse_chunked(c, p, len, used);
	if (c->body_left)
		return parse_body(c, p, len, used);
	return parse_head(c, p, len, used);
}

void mgw_h1_process(struct mgw_http_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	if (c->active)
		mgw_x_maybe_drain(c->active, mgw_conn_outlen(c));
	/* Output at the high watermark stops the dispatch of requests
	 * already read, not only reading: pipelined requests for large
	 * answers would otherwise build them all in memory.  on_write
	 * comes back here once the output has drained to half. */
	while (!c->active && !c->closing && !c->read_blocked) {
		struct evbuffer_iovec v;
		size_t n;
		int st;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1 || v.iov_len == 0)
			break;
		st = mgw_h1_parse(c, v.iov_base, v.iov_len, &n);
		mgw_read_drain(c->bev, n);
		if (st) {
			h1_error(c, st);
			break;
		}
		if (c->hp_ready) {
			struct mgw_http_exchange *x = c->rx;
			c->rx = NULL;
			c->hp_ready = 0;
			c->active = x;
			mgw_x_dispatch(x); /* x may be gone once this returns */
		}
	}
	if (c->closing && !c->active) {
		mgw_conn_close_flushed(c);
		return;
	}
	if (!c->active && !c->rx && c->timer_kind == MGW_T_NONE)
		mgw_conn_timer(c, MGW_T_IDLE, c->srv->lim.idle_timeout);
}

/* ---- responses ---- */

enum { BODY_LENGTH, BODY_CHUNKED, BODY_TO_CLOSE, BODY_NONE };

static int no_body_status(int status)
{
	return status < 200 || status == 204 || status == 304;
}

/* A response head (and a small body) built in one piece: added to the
 * connection's output with one evbuffer_add, where a printf per field ran
 * the formatter and the output's callbacks for every line.  The bytes
 * live on the stack until they outgrow it, then in one heap block. */
struct head_buf {
	char *p;
	size_t len, cap;
	int oom;
	char stack[2048];
};

static void hb_init(struct head_buf *b)
{
	b->p = b->stack;
	b->len = 0;
	b->cap = sizeof(b->stack);
	b->oom = 0;
}

/* Room for n more bytes, out of line: the stack buffer holds most
 * heads.  Sets oom (and leaves b as it was) on no memory. */
static __attribute__((noinline)) void hb_grow(struct head_buf *b, size_t n)
{
	size_t cap = b->cap;
	char *p;

	if (b->oom)
		return;
	while (n > cap - b->len)
		cap *= 2;
	p = b->p == b->stack ? malloc(cap) : realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return;
	}
	if (b->p == b->stack)
		memcpy(p, b->stack, b->len);
	b->p = p;
	b->cap = cap;
}

static inline void hb_put(struct head_buf *b, const void *s, size_t n)
{
	if (n > b->cap - b->len) {
		hb_grow(b, n);
		if (b->oom)
			return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void hb_puts(struct head_buf *b, const char *s)
{
	hb_put(b, s, strlen(s));
}

static void hb_putu(struct head_buf *b, size_t v)
{
	char d[MGW_DEC_BUF];

	hb_put(b, d, mgw_dec(d, v));
}

/* Adds b to out and frees it.  Returns 0 or MGW_ENOMEM (nothing added). */
static int hb_flush(struct head_buf *b, struct evbuffer *out)
{
	int rc = b->oom || evbuffer_add(out, b->p, b->len) != 0;

	if (b->p != b->stack)
		free(b->p);
	hb_init(b);
	return rc ? MGW_ENOMEM : 0;
}

/* Bytes of a whole answer for c's client: sent at once on plain TCP when
 * nothing is queued before them (write_now.h), else queued. */
static int send_or_queue(struct mgw_http_conn *c, const void *p, size_t n)
{
	if (c->tls || c->lingering || c->freeing)
		return evbuffer_add(bufferevent_get_output(c->bev), p, n) != 0
		           ? MGW_ENOMEM : 0;
	return mgw_send_now(c->bev, p, n, NULL);
}

/* hb_flush through send_or_queue. */
static int hb_send(struct head_buf *b, struct mgw_http_conn *c)
{
	int rc = b->oom ? MGW_ENOMEM : send_or_queue(c, b->p, b->len);

	if (b->p != b->stack)
		free(b->p);
	hb_init(b);
	return rc;
}

static void h1_head(struct mgw_http_exchange *x, int status,
                    const struct mgw_headers *h, const char *ctype, int mode,
                    size_t len, int close, struct head_buf *b)
{
	const char *tokens = h ? mgw_headers_get(h, "connection") : NULL;
	int have_ctype = ctype && mgw_header_value_valid(ctype, strlen(ctype));

	hb_put(b, "HTTP/1.1 ", 9);
	hb_putu(b, (size_t)(status < 0 ? 0 : status));
	hb_put(b, " ", 1);
	hb_puts(b, mgw_http_reason(status));
	hb_put(b, "\r\n", 2);
	if (!h || !mgw_headers_get(h, "date")) {
		hb_put(b, "Date: ", 6);
		hb_puts(b, mgw_http_date(x->c->srv));
		hb_put(b, "\r\n", 2);
	}
	for (size_t i = 0; h && i < h->n; i++) {
		if (!mgw_resp_field_ok(&h->v[i], h->checked, tokens, have_ctype))
			continue;
		hb_put(b, h->v[i].name, h->v[i].name_len);
		hb_put(b, ": ", 2);
		hb_put(b, h->v[i].value, h->v[i].value_len);
		hb_put(b, "\r\n", 2);
	}
	if (have_ctype) {
		hb_put(b, "Content-Type: ", 14);
		hb_puts(b, ctype);
		hb_put(b, "\r\n", 2);
	}
	if (mode == BODY_LENGTH) {
		hb_put(b, "Content-Length: ", 16);
		hb_putu(b, len);
		hb_put(b, "\r\n", 2);
	} else if (mode == BODY_CHUNKED) {
		hb_put(b, "Transfer-Encoding: chunked\r\n", 28);
	}
	if (close)
		hb_put(b, "Connection: close\r\n", 19);
	else if (x->http10)
		hb_put(b, "Connection: keep-alive\r\n", 24);
	hb_put(b, "\r\n", 2);
}

static int must_close(const struct mgw_http_exchange *x)
{
	return !x->keep_alive || x->c->closing || x->c->srv->shutting_down;
}

/* The response is complete: x is freed and the connection continues with
 * the next pipelined request (or closes) from its work callback. */
static void h1_done(struct mgw_http_exchange *x, int close)
{
	struct mgw_http_conn *c = x->c;

	mgw_x_finish(x);
	c->active = NULL;
	mgw_x_free(x);
	if (close)
		c->closing = 1;
	mgw_conn_write_now(c); /* a whole answer: the socket takes it */
	mgw_conn_check_backpressure(c);
	mgw_conn_schedule(c);
}

int mgw_h1_respond(struct mgw_http_exchange *x, int status,
                   const struct mgw_headers *h, const char *ctype,
                   const void *body, size_t len)
{
	int nob = no_body_status(status);
	int close = must_close(x);
	int send_body = !nob && !x->head && len;
	struct head_buf b;
	int inl, rc;

	hb_init(&b);
	h1_head(x, status, h, ctype, nob ? BODY_NONE : BODY_LENGTH, len, close,
	        &b);
	/* a body that fits the head's buffer goes out with it */
	inl = send_body && len <= sizeof(b.stack) - b.len;
	if (inl)
		hb_put(&b, body, len);
	rc = hb_send(&b, x->c);
	if (!rc && send_body && !inl)
		rc = send_or_queue(x->c, body, len);
	h1_done(x, close || rc);
	return rc;
}

int mgw_h1_stream_start(struct mgw_http_exchange *x, int status,
                        const struct mgw_headers *h, const char *ctype)
{
	struct head_buf b;
	int nob = no_body_status(status);
	int mode;
	int rc;

	if (nob) {
		mode = BODY_NONE;
	} else if (x->http10) {
		mode = BODY_TO_CLOSE; /* no chunked coding in HTTP/1.0 */
		x->keep_alive = 0;
	} else {
		mode = BODY_CHUNKED;
	}
	x->no_body = nob || x->head;
	x->chunked_out = mode == BODY_CHUNKED;
	hb_init(&b);
	h1_head(x, status, h, ctype, mode, 0, must_close(x), &b);
	rc = hb_flush(&b, bufferevent_get_output(x->c->bev));
	if (rc) {
		h1_done(x, 1);
		return rc;
	}
	x->state = MGW_X_STREAMING;
	mgw_conn_check_backpressure(x->c);
	return 0;
}

int mgw_h1_stream_write(struct mgw_http_exchange *x, const void *p, size_t n)
{
	struct mgw_http_conn *c = x->c;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t hwm = c->srv->lim.write_high_watermark;
	int rc = 0;

	if (n == 0 || x->no_body)
		return 0; /* an empty chunk would end the body */
	if (evbuffer_get_length(out) + n > 4 * hwm) {
		x->want_drain = 1;
		return MGW_ELIMIT;
	}
	if (x->chunked_out)
		rc |= evbuffer_add_printf(out, "%zx\r\n", n) < 0;
	rc |= evbuffer_add(out, p, n);
	if (x->chunked_out)
		rc |= evbuffer_add(out, "\r\n", 2);
	if (rc)
		return MGW_ENOMEM;
	if (evbuffer_get_length(out) >= hwm)
		x->want_drain = 1;
	mgw_conn_check_backpressure(c);
	return 0;
}

int mgw_h1_stream_end(struct mgw_http_exchange *x)
{
	struct evbuffer *out = bufferevent_get_output(x->c->bev);
	int close = must_close(x) || !x->chunked_out;
	int rc = 0;

	if (x->chunked_out && !x->no_body)
		rc = evbuffer_add(out, "0\r\n\r\n", 5) ? MGW_ENOMEM : 0;
	if (x->no_body && !x->chunked_out && x->keep_alive)
		close = must_close(x); /* nothing was framed to close on */
	h1_done(x, close || rc);
	return rc;
}

/* Leaves the body unterminated and closes the connection once the queued
 * bytes are out: a chunked body without its last chunk (or a body cut
 * before its length) is how HTTP/1.1 says "incomplete". */
int mgw_h1_stream_abort(struct mgw_http_exchange *x)
{
	h1_done(x, 1);
	return 0;
}
