/* h1.c - HTTP/1.x connections on http-parser.
 *
 * Strictness.  Debian's http-parser tolerates things a front server must
 * not: it folds obs-fold lines into the value, drops control bytes from
 * values, accepts spaces in field names and bare LF line ends.  So every
 * header block is first run through the raw-byte scanner of h1_scan.c
 * that rejects obs-fold, bare CR or LF and control bytes, and only the
 * bytes of the header block are fed to the parser while it runs; field
 * names and values are re-validated once assembled, and the framing fields
 * (Content-Length, Transfer-Encoding, Host) are checked as a whole in
 * on_headers_complete.  Any failure answers a short error with
 * "Connection: close" and closes.
 *
 * Chunked bodies.  The same http-parser build takes any two bytes where
 * the CRLF after chunk data belongs, so "2\r\nokXX0\r\n\r\n" would be the
 * body "ok" here while a front proxy may frame it otherwise (request
 * smuggling).  So for a chunked request http-parser is stopped after the
 * head (on_headers_complete skips the body) and the body goes through the
 * strict decoder of http/chunked.c, which also checks trailer lines; the
 * request is complete at the final CRLF, and the bytes after it are the
 * next request.
 *
 * Pipelining.  One request at a time: the parser is paused at the end of
 * each message, the handler gets it, and parsing resumes only when the
 * response is complete, so answers leave in request order.  Input keeps
 * being read meanwhile (so a client close is noticed), bounded by the read
 * high watermark of the bufferevent. */
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
#include "http/h1_scan.h"
#include "http/headers.h"

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

static struct mgw_http_conn *pconn(http_parser *p) { return p->data; }

static int fail(struct mgw_http_conn *c, int status)
{
	c->hp_err = status;
	return -1;
}

static int on_message_begin(http_parser *p)
{
	struct mgw_http_conn *c = pconn(p);

	if (c->rx)
		return fail(c, 500);
	c->rx = mgw_x_new(c, 11);
	if (!c->rx)
		return fail(c, 503);
	c->hdr_bytes = 0;
	mgw_h1_field_clear(&c->fld);
	mgw_conn_timer(c, MGW_T_HEADER, c->srv->lim.header_timeout);
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct mgw_http_conn *c = pconn(p);

	if (c->fld.value_len + len > c->srv->lim.max_uri)
		return fail(c, 414);
	if (mgw_h1_field_value(&c->fld, at, len))
		return fail(c, 503);
	return 0;
}

/* The request line is complete once the first header (or the end of the
 * headers) arrives; the target was collected as the field value. */
static int take_target(struct mgw_http_conn *c)
{
	struct mgw_http_exchange *x = c->rx;
	int rc;

	if (x->target)
		return 0;
	rc = mgw_x_set_target(x, c->fld.value ? c->fld.value : "",
	                      c->fld.value_len, 1);
	if (rc == MGW_EINVAL && c->hp.method == HTTP_CONNECT)
		rc = mgw_x_set_target(x, "*", 1, 0); /* 405 once the head is read */
	if (rc)
		return fail(c, rc == MGW_EINVAL ? 400 : 503);
	c->fld.value_len = 0;
	return 0;
}

static int commit_header(struct mgw_http_conn *c)
{
	struct mgw_http_exchange *x = c->rx;
	const char *v;
	size_t vl;

	if (mgw_h1_field_take(&c->fld, &v, &vl))
		return fail(c, 400);
	/* only head fields come here: trailers go to the chunked decoder */
	if (x->req.n + 1 > c->srv->lim.max_headers)
		return fail(c, 431);
	if (mgw_headers_add(&x->req, c->fld.name, c->fld.name_len, v, vl))
		return fail(c, 503);
	mgw_h1_field_clear(&c->fld);
	return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct mgw_http_conn *c = pconn(p);

	if (take_target(c))
		return -1;
	if (c->fld.last_value && commit_header(c))
		return -1;
	c->hdr_bytes += len;
	if (c->hdr_bytes > c->srv->lim.max_header_bytes)
		return fail(c, 431);
	if (mgw_h1_field_name(&c->fld, at, len))
		return fail(c, 503);
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct mgw_http_conn *c = pconn(p);

	c->fld.last_value = 1;
	c->hdr_bytes += len;
	if (c->hdr_bytes > c->srv->lim.max_header_bytes)
		return fail(c, 431);
	if (mgw_h1_field_value(&c->fld, at, len))
		return fail(c, 503);
	return 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* The framing checks that keep two HTTP/1 parsers from disagreeing on
 * where this request ends (request smuggling), plus limits known now.
 * Returns 1 (http-parser: no body) for a chunked request, whose body the
 * strict decoder reads instead. */
static int on_headers_complete(http_parser *p)
{
	struct mgw_http_conn *c = pconn(p);
	struct mgw_http_exchange *x = c->rx;
	const struct mgw_http_limits *lim = &c->srv->lim;
	size_t ncl, nte, nhost;
	const char *te, *cl, *expect, *host;
	int has_body;

	if (take_target(c))
		return -1;
	if ((c->fld.last_value || c->fld.name_len) && commit_header(c))
		return -1;
	x->headers_done = 1;
	if (p->http_major != 1)
		return fail(c, 505);
	x->http10 = p->http_minor == 0;
	if (p->method == HTTP_CONNECT)
		return fail(c, 405);
	x->method = strdup(http_method_str((enum http_method)p->method));
	if (!x->method)
		return fail(c, 503);
	x->head = p->method == HTTP_HEAD;

	ncl = mgw_headers_count(&x->req, "content-length");
	nte = mgw_headers_count(&x->req, "transfer-encoding");
	nhost = mgw_headers_count(&x->req, "host");
	te = mgw_headers_get(&x->req, "transfer-encoding");
	cl = mgw_headers_get(&x->req, "content-length");
	if (ncl > 1 || nte > 1 || (ncl && nte))
		return fail(c, 400);
	if (nte && (x->http10 || strcasecmp(te, "chunked") != 0 ||
	            !(p->flags & F_CHUNKED)))
		return fail(c, 400);
	if (ncl && !all_digits(cl))
		return fail(c, 400);
	if (nhost > 1 || (nhost == 0 && !x->http10)) {
		c->hp_why = nhost ? "Host header sent more than once"
		                  : "Host header missing";
		return fail(c, 400);
	}
	host = nhost ? mgw_headers_get(&x->req, "host") : NULL;
	if (host && !mgw_http_authority_valid(host, strlen(host))) {
		c->hp_why = "invalid Host header";
		return fail(c, 400); /* RFC 9112 3.2 */
	}
	if (host && !x->authority) { /* absolute-form set it: Host ignored */
		x->authority = strdup(host);
		if (!x->authority)
			return fail(c, 503);
	}
	has_body = (p->flags & F_CHUNKED) ||
	           (p->content_length > 0 && p->content_length != ULLONG_MAX);
	if (has_body && !(p->flags & F_CHUNKED) &&
	    p->content_length > (uint64_t)lim->max_body)
		return fail(c, 413);
	expect = mgw_headers_get(&x->req, "expect");
	if (expect) {
		if (strcasecmp(expect, "100-continue") != 0)
			return fail(c, 417);
		if (has_body && !x->http10)
			bufferevent_write(c->bev, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	}
	x->keep_alive = http_should_keep_alive(p) && !c->srv->shutting_down;
	if (has_body)
		mgw_conn_timer(c, MGW_T_BODY, lim->body_timeout);
	if (p->flags & F_CHUNKED) {
		/* trailers share the head's byte limit */
		c->ck_mode = 1;
		mgw_chunked_init(&c->ck, lim->max_header_bytes);
		return 1;
	}
	return 0;
}

/* Content-Length bodies only: chunked ones never reach http-parser. */
static int on_body(http_parser *p, const char *at, size_t len)
{
	struct mgw_http_conn *c = pconn(p);
	int rc = mgw_x_body_append(c->rx, at, len);

	if (rc == MGW_ELIMIT)
		return fail(c, 413);
	if (rc)
		return fail(c, 503);
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct mgw_http_conn *c = pconn(p);

	if (c->ck_mode) {
		/* only the head of a chunked request: hold the parser until
		 * the decoder found the body's end and the request was answered */
		http_parser_pause(p, 1);
		return 0;
	}
	c->hp_ready = 1;
	mgw_conn_timer(c, MGW_T_NONE, 0);
	scan_reset(c);
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

void mgw_h1_start(struct mgw_http_conn *c)
{
	/* http-parser's own header cap is process-wide (80 KiB by default);
	 * keep it above ours so our limits, with their statuses, apply */
	static size_t parser_cap = 80 * 1024;
	size_t cap = raw_head_cap(&c->srv->lim);

	if (cap > parser_cap && cap < UINT32_MAX) {
		http_parser_set_max_header_size((uint32_t)cap);
		parser_cap = cap;
	}
	http_parser_init(&c->hp, HTTP_REQUEST);
	c->hp.data = c;
	scan_reset(c);
}

void mgw_h1_deinit(struct mgw_http_conn *c)
{
	mgw_x_free(c->rx);
	c->rx = NULL;
	mgw_h1_field_deinit(&c->fld);
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
	int rc = mgw_chunked_feed(&c->ck, p, len, used, on_chunk_data, c);

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
		/* what on_message_complete does for other bodies; the parser
		 * is still paused since the head */
		c->ck_mode = 0;
		c->hp_ready = 1;
		mgw_conn_timer(c, MGW_T_NONE, 0);
		scan_reset(c);
	}
	return 0;
}

int mgw_h1_parse(struct mgw_http_conn *c, const unsigned char *p, size_t len,
                 size_t *used)
{
	struct mgw_log_ctx ctx;
	size_t feed = len, n;
	enum http_errno e;
	int st;

	*used = 0;
	if (c->ck_mode)
		return parse_chunked(c, p, len, used);
	if (c->sc.in_head) {
		st = mgw_h1_scan_feed(&c->sc, p, len, &feed);
		if (st)
			return st == MGW_ELIMIT ? 431 : 400;
	}
	if (HTTP_PARSER_ERRNO(&c->hp) == HPE_PAUSED)
		http_parser_pause(&c->hp, 0);
	n = http_parser_execute(&c->hp, &settings, (const char *)p, feed);
	*used = n;
	e = HTTP_PARSER_ERRNO(&c->hp);
	if (e != HPE_OK && e != HPE_PAUSED) {
		if (c->hp_err)
			return c->hp_err;
		mgw_conn_logctx(c, -1, &ctx);
		mgw_info(&ctx, "%s: HTTP/1 parse error %s", c->peer,
		         http_errno_name(e));
		return e == HPE_HEADER_OVERFLOW ? 431 : 400;
	}
	if (!c->hp_ready && !c->ck_mode && n < feed)
		return 400; /* the parser stopped without saying why */
	return 0;
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
		evbuffer_drain(in, n);
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

static void hb_put(struct head_buf *b, const void *s, size_t n)
{
	if (b->oom)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap;
		char *p;

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
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void hb_puts(struct head_buf *b, const char *s)
{
	hb_put(b, s, strlen(s));
}

static void hb_putu(struct head_buf *b, size_t v)
{
	char d[24];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	hb_put(b, d + i, sizeof(d) - i);
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
		if (!mgw_resp_field_ok(&h->v[i], tokens, have_ctype))
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
	struct evbuffer *out = bufferevent_get_output(x->c->bev);
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
	rc = hb_flush(&b, out);
	if (!rc && send_body && !inl)
		rc = evbuffer_add(out, body, len) ? MGW_ENOMEM : 0;
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
