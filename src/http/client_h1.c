/* client_h1.c - HTTP/1.1 to upstreams: request serialization and strict
 * response parsing on http-parser.
 *
 * A gateway that parses upstream responses leniently can be made to split
 * one response into two, poisoning the next request on a pooled
 * connection.  So responses are held to the same rules as requests on the
 * server side: the raw head is scanned first by h1_scan.c (obs-fold, bare
 * CR or LF and control bytes are refused), field names and values are re-validated
 * once assembled, Content-Length with Transfer-Encoding, duplicate
 * Content-Length and any transfer coding but "chunked" are refused, and
 * head size and field count are limited.  A connection is only pooled
 * again when its response was read completely, allowed persistence, the
 * request was fully written and nothing followed the response.
 *
 * Chunked bodies are decoded by http/chunked.c rather than by http-parser,
 * whose non-strict build accepts any two bytes where a chunk's CRLF
 * belongs (so "2\r\nokXX0\r\n\r\n" would pass); that decoder insists on
 * exact CRLFs, bounded hex sizes and clean trailer lines.
 *
 * Streaming.  Body bytes go to on_data as they come off the socket, from
 * the parser callback or the chunk decoder.  Pausing stops parsing (the
 * rest stays in the bufferevent's input) and stops reading. */
#include "autoconf.h"

#include <stdatomic.h>
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
#include "http/client_conn.h"
#include "http/h1_scan.h"
#include "http/headers.h"

/* Status line and line-end overhead allowed on top of the header limits
 * before the raw scanner gives up on a response head. */
#define HEAD_SLACK 8192

/* http-parser's own header cap is process-wide (80 KiB by default): kept
 * above ours so that our limits, with their errors, apply. */
static void parser_cap(size_t cap)
{
	static _Atomic size_t set = 80 * 1024;
	size_t now = atomic_load(&set);

	while (cap > now && cap < UINT32_MAX &&
	       !atomic_compare_exchange_weak(&set, &now, cap))
		;
	if (cap > now && cap < UINT32_MAX)
		http_parser_set_max_header_size((uint32_t)cap);
}

static void scan_reset(struct mgw_client_conn *c)
{
	const struct mgw_client_limits *lim = &c->o->cl->lim;
	size_t cap = lim->max_header_bytes + 4 * lim->max_headers + HEAD_SLACK;

	parser_cap(cap);
	mgw_h1_scan_reset(&c->sc, cap, 0);
}

static struct mgw_client_conn *pconn(http_parser *p) { return p->data; }

static int perr(struct mgw_client_conn *c, int err, const char *msg)
{
	if (!c->hp_err) {
		c->hp_err = err;
		c->hp_msg = msg;
	}
	return -1;
}

/* Stops the parser after a callback when the request was cancelled or
 * paused meanwhile. */
static void check_stop(struct mgw_client_conn *c)
{
	struct mgw_client_req *r = c->req;

	if (!r || r->state == MGW_CRQ_DONE || r->paused)
		http_parser_pause(&c->hp, 1);
}

static int on_message_begin(http_parser *p)
{
	struct mgw_client_conn *c = pconn(p);
	struct mgw_client_req *r = c->req;

	mgw_headers_deinit(&r->resp);
	r->resp_bytes = 0;
	mgw_h1_field_clear(&c->fld);
	c->in_body = 0;
	return 0;
}

static int commit_header(struct mgw_client_conn *c)
{
	const struct mgw_client_limits *lim = &c->o->cl->lim;
	struct mgw_client_req *r = c->req;
	const char *v;
	size_t vl;

	if (mgw_h1_field_take(&c->fld, &v, &vl))
		return perr(c, MGW_EPROTO, "invalid response header field");
	if (!c->in_body) {
		if (r->resp.n + 1 > lim->max_headers)
			return perr(c, MGW_ELIMIT, "too many response header fields");
		if (mgw_headers_add(&r->resp, c->fld.name, c->fld.name_len, v,
		                    vl) != 0)
			return perr(c, MGW_ENOMEM, "no memory for response headers");
	}
	/* trailer fields are validated and dropped */
	mgw_h1_field_clear(&c->fld);
	return 0;
}

static int count_bytes(struct mgw_client_conn *c, size_t n)
{
	struct mgw_client_req *r = c->req;

	r->resp_bytes += n;
	if (r->resp_bytes > c->o->cl->lim.max_header_bytes)
		return perr(c, MGW_ELIMIT, "response header too large");
	return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct mgw_client_conn *c = pconn(p);

	if (c->fld.last_value && commit_header(c))
		return -1;
	if (count_bytes(c, len))
		return -1;
	if (mgw_h1_field_name(&c->fld, at, len))
		return perr(c, MGW_ENOMEM, "no memory for response headers");
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct mgw_client_conn *c = pconn(p);

	c->fld.last_value = 1;
	if (count_bytes(c, len))
		return -1;
	if (mgw_h1_field_value(&c->fld, at, len))
		return perr(c, MGW_ENOMEM, "no memory for response headers");
	return 0;
}

static int connection_listed(const struct mgw_headers *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcasecmp(h->v[i].name, "connection") == 0 &&
		    mgw_header_list_has(h->v[i].value, name))
			return 1;
	return 0;
}

/* Framing fields as a whole: one Content-Length at most, never with
 * Transfer-Encoding, and "chunked" as the only transfer coding. */
static int check_framing(struct mgw_client_conn *c)
{
	const struct mgw_headers *h = &c->req->resp;
	size_t ncl = mgw_headers_count(h, "content-length");
	size_t nte = mgw_headers_count(h, "transfer-encoding");

	if (ncl > 1)
		return perr(c, MGW_EPROTO, "duplicate Content-Length in response");
	if (nte && ncl)
		return perr(c, MGW_EPROTO,
		            "response has both Content-Length and Transfer-Encoding");
	if (nte > 1 ||
	    (nte && strcasecmp(mgw_headers_get(h, "transfer-encoding"), "chunked")))
		return perr(c, MGW_EPROTO, "unsupported response Transfer-Encoding");
	return 0;
}

/* Replaces the collected head by its end-to-end fields. */
static int strip_hop_by_hop(struct mgw_client_req *r)
{
	struct mgw_headers keep;

	mgw_headers_init(&keep);
	for (size_t i = 0; i < r->resp.n; i++) {
		const struct mgw_header *f = &r->resp.v[i];
		if (mgw_header_is_hop_by_hop(f->name) ||
		    connection_listed(&r->resp, f->name))
			continue;
		if (mgw_headers_add(&keep, f->name, f->name_len, f->value,
		                    f->value_len) != 0) {
			mgw_headers_deinit(&keep);
			return MGW_ENOMEM;
		}
	}
	mgw_headers_deinit(&r->resp);
	r->resp = keep;
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct mgw_client_conn *c = pconn(p);
	struct mgw_client_req *r = c->req;
	int status = (int)p->status_code;
	int skip;

	if (c->in_body)
		return 0; /* end of trailers */
	if (c->fld.last_value && commit_header(c))
		return -1;
	if (p->http_major != 1)
		return perr(c, MGW_EPROTO, "response is not HTTP/1.x");
	/* http-parser takes any three digits; RFC 9110 §15 codes run from
	 * 100 to 599, and a proxy must not pass "004" on */
	if (status < 100 || status > 599)
		return perr(c, MGW_EPROTO, "response status outside 100..599");
	if (status == 101)
		return perr(c, MGW_EPROTO, "unexpected 101 Switching Protocols");
	if (status >= 100 && status < 200) {
		/* interim response: dropped, the final one follows */
		c->interim = 1;
		mgw_headers_deinit(&r->resp);
		r->resp_bytes = 0;
		return 1;
	}
	if (check_framing(c))
		return -1;
	if (strip_hop_by_hop(r) != 0)
		return perr(c, MGW_ENOMEM, "no memory for response headers");
	skip = r->is_head || status == 204 || status == 304;
	c->in_body = 1;
	r->status = status;
	if (!skip && (p->flags & F_CHUNKED)) {
		/* http-parser ends the message here; our decoder takes over */
		c->chunk_mode = 1;
		mgw_chunked_init(&c->ck, c->o->cl->lim.max_header_bytes);
		skip = 1;
	}
	mgw_creq_head(r);
	check_stop(c);
	return skip;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct mgw_client_conn *c = pconn(p);

	mgw_creq_data(c->req, (const unsigned char *)at, len);
	check_stop(c);
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct mgw_client_conn *c = pconn(p);

	if (c->interim) {
		c->interim = 0;
		scan_reset(c);
		return 0;
	}
	if (c->chunk_mode) {
		/* the head is done; the chunked body follows, decoded by us */
		c->keep_alive = http_should_keep_alive(p) ? 1 : 0;
		http_parser_pause(p, 1);
		return 0;
	}
	c->msg_done = 1;
	c->keep_alive = http_should_keep_alive(p) ? 1 : 0;
	http_parser_pause(p, 1);
	return 0;
}

/* Chunk data for the response: hands it on and stops the decoder when
 * the consumer paused or cancelled the request meanwhile. */
static int on_chunk_data(void *arg, const unsigned char *p, size_t n)
{
	struct mgw_client_conn *c = arg;
	struct mgw_client_req *r = c->req;

	mgw_creq_data(r, p, n);
	return r->state == MGW_CRQ_DONE || r->paused;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static void free_ref(const void *data, size_t len, void *extra)
{
	(void)len;
	(void)extra;
	free((void *)data);
}

/* Writes the request head and body into the output in two pieces: the head
 * is assembled in one allocation so the connection sees it as one write. */
void mgw_ch1_send(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	char clbuf[48] = "";
	size_t n, off = 0;
	char *head;

	if (mgw_creq_needs_length(r))
		snprintf(clbuf, sizeof(clbuf), "Content-Length: %zu\r\n", r->body_len);
	n = strlen(r->method) + 1 + strlen(r->target) + 11 + 6 +
	    strlen(r->authority) + 2 + strlen(clbuf) + 2;
	for (size_t i = 0; i < r->hdr.n; i++)
		n += r->hdr.v[i].name_len + 2 + r->hdr.v[i].value_len + 2;
	head = malloc(n + 1);
	if (!head) {
		mgw_cconn_set_error(c, MGW_ENOMEM, MGW_CLIENT_E_CLOSED,
		                    "no memory for the request", 0);
		c->closing = 1;
		mgw_cconn_schedule(c);
		return;
	}
#define PUT(s, l)                                                       \
	do {                                                            \
		memcpy(head + off, (s), (l));                           \
		off += (l);                                             \
	} while (0)
	PUT(r->method, strlen(r->method));
	PUT(" ", 1);
	PUT(r->target, strlen(r->target));
	PUT(" HTTP/1.1\r\nHost: ", 17);
	PUT(r->authority, strlen(r->authority));
	PUT("\r\n", 2);
	for (size_t i = 0; i < r->hdr.n; i++) {
		const struct mgw_header *f = &r->hdr.v[i];
		PUT(f->name, f->name_len);
		PUT(": ", 2);
		PUT(f->value, f->value_len);
		PUT("\r\n", 2);
	}
	PUT(clbuf, strlen(clbuf));
	PUT("\r\n", 2);
#undef PUT
	/* the allocation is handed to the evbuffer, freed when written */
	if (evbuffer_add_reference(out, head, off, free_ref, NULL) != 0) {
		free(head);
		head = NULL;
	}
	/* once added, head belongs to the evbuffer (never freed here) */
	if (!head || (r->body_len &&
	              evbuffer_add(out, r->body, r->body_len) != 0)) {
		mgw_cconn_set_error(c, MGW_ENOMEM, MGW_CLIENT_E_CLOSED,
		                    "no memory for the request", 0);
		c->closing = 1;
		mgw_cconn_schedule(c);
		return;
	}
	mgw_cconn_mark_end(c, r);

	http_parser_init(&c->hp, HTTP_RESPONSE);
	c->hp.data = c;
	scan_reset(c);
	c->msg_done = 0;
	c->keep_alive = 0;
	c->interim = 0;
	c->in_body = 0;
	c->chunk_mode = 0;
	c->hp_err = 0;
	c->hp_msg = NULL;
	if (c->read_off && !r->paused && !c->peer_eof) {
		c->read_off = 0;
		bufferevent_enable(c->bev, EV_READ);
	}
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		mgw_cconn_schedule(c); /* early bytes: parse them from the loop */
	mgw_cconn_write_now(c);
}

/* Response complete: report it, then pool or close the connection. */
static void finish(struct mgw_client_conn *c)
{
	struct mgw_client_req *r = c->req;
	int reuse = c->keep_alive && r->sent_all && !c->peer_eof &&
	            evbuffer_get_length(bufferevent_get_input(c->bev)) == 0;

	c->req = NULL;
	c->msg_done = 0;
	mgw_creq_end(r);
	mgw_creq_free(r);
	if (reuse)
		mgw_cconn_idle(c);
	else
		mgw_cconn_close(c);
}

static void proto_fail(struct mgw_client_conn *c, int err, const char *msg)
{
	struct mgw_log_ctx ctx;

	mgw_cconn_logctx(c, -1, &ctx);
	mgw_info(&ctx, "upstream %s: bad HTTP/1 response: %s", c->o->name, msg);
	mgw_cconn_set_error(c, err == MGW_ENOMEM ? MGW_ENOMEM : MGW_EPROTO,
	                    MGW_CLIENT_E_PROTO, msg, 0);
	mgw_cconn_close(c);
}

/* After input was consumed: finishes a complete response, or stops for a
 * request cancelled or paused inside a callback.  Returns 1 when the
 * caller must stop (c may be freed), 0 to go on. */
static int settle(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	if (c->msg_done) {
		finish(c);
		return 1;
	}
	if (r->state == MGW_CRQ_DONE)
		return 1; /* cancelled inside a callback */
	if (r->paused) {
		c->read_off = 1;
		bufferevent_disable(c->bev, EV_READ);
		return 1;
	}
	return 0;
}

/* One span of a chunked body through the strict decoder.  Returns 1 to
 * stop (c may be freed), 0 to go on. */
static int feed_chunked(struct mgw_client_conn *c, struct mgw_client_req *r,
                        struct evbuffer *in, const struct evbuffer_iovec *v)
{
	size_t n;
	int rv = mgw_chunked_feed(&c->ck, v->iov_base, v->iov_len, &n,
	                          on_chunk_data, c);

	evbuffer_drain(in, n);
	if (rv) {
		proto_fail(c, rv, mgw_chunked_error(&c->ck));
		return 1;
	}
	if (mgw_chunked_done(&c->ck))
		c->msg_done = 1;
	return settle(c, r);
}

/* The raw scan of head bytes: *feed is what belongs to the head.  Returns
 * 0, or 1 after failing the connection (c is freed). */
static int scan_head(struct mgw_client_conn *c, const struct evbuffer_iovec *v,
                     size_t *feed)
{
	int rv = mgw_h1_scan_feed(&c->sc, v->iov_base, v->iov_len, feed);

	if (rv == MGW_ELIMIT)
		proto_fail(c, rv, "response header too large");
	else if (rv)
		proto_fail(c, rv, "malformed response head (bare CR/LF, "
		                  "obs-fold or control byte)");
	return rv ? 1 : 0;
}

/* One span of head, or of a body http-parser frames (Content-Length or
 * the close).  Returns 1 to stop (c may be freed), 0 to go on. */
static int feed_parser(struct mgw_client_conn *c, struct mgw_client_req *r,
                       struct evbuffer *in, const struct evbuffer_iovec *v)
{
	size_t feed = v->iov_len, n;
	enum http_errno he;

	if (c->sc.in_head && scan_head(c, v, &feed))
		return 1;
	n = http_parser_execute(&c->hp, &settings, v->iov_base, feed);
	evbuffer_drain(in, n);
	he = HTTP_PARSER_ERRNO(&c->hp);
	if (c->hp_err) {
		proto_fail(c, c->hp_err, c->hp_msg);
		return 1;
	}
	if (he != HPE_OK && he != HPE_PAUSED) {
		proto_fail(c, MGW_EPROTO, http_errno_description(he));
		return 1;
	}
	if (settle(c, r))
		return 1;
	if (he == HPE_PAUSED) {
		http_parser_pause(&c->hp, 0);
	} else if (n < feed) {
		proto_fail(c, MGW_EPROTO, "response parser stopped");
		return 1;
	}
	return 0;
}

/* The server closed and everything before the close has been parsed:
 * the close ends a close-delimited body, or fails the request.  c is
 * freed. */
static void at_eof(struct mgw_client_conn *c)
{
	if (!c->eof_err && !c->chunk_mode) {
		/* a pause from a callback on the body's last bytes outlives
		 * them (http-parser had consumed the input): a paused parser
		 * would ignore the close that ends a close-delimited body */
		if (HTTP_PARSER_ERRNO(&c->hp) == HPE_PAUSED)
			http_parser_pause(&c->hp, 0);
		http_parser_execute(&c->hp, &settings, NULL, 0);
		if (c->msg_done) {
			finish(c); /* body delimited by the close */
			return;
		}
	}
	mgw_cconn_set_error(c, MGW_ECLOSED, MGW_CLIENT_E_CLOSED,
	                    c->eof_msg ? c->eof_msg
	                               : "upstream closed the connection",
	                    0);
	mgw_cconn_close(c);
}

void mgw_ch1_process(struct mgw_client_conn *c)
{
	struct mgw_client_req *r = c->req;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	int guard = 1 << 20;

	if (!r || r->state == MGW_CRQ_DONE)
		return; /* cancelled: the work callback closes */
	if (r->paused) {
		if (!c->read_off) {
			c->read_off = 1;
			bufferevent_disable(c->bev, EV_READ);
		}
		return;
	}
	if (c->read_off && !c->peer_eof) {
		c->read_off = 0;
		bufferevent_enable(c->bev, EV_READ);
	}
	if (evbuffer_get_length(in) > 0)
		mgw_creq_activity(r);
	while (evbuffer_get_length(in) > 0 && guard--) {
		struct evbuffer_iovec v;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		if (c->chunk_mode ? feed_chunked(c, r, in, &v)
		                  : feed_parser(c, r, in, &v))
			return;
	}
	if (c->peer_eof)
		at_eof(c);
}

void mgw_ch1_closed(struct mgw_client_conn *c, int err, const char *msg)
{
	c->peer_eof = 1;
	c->eof_err = err ? 1 : 0;
	c->eof_msg = msg;
	if (!c->req || c->req->state == MGW_CRQ_DONE) {
		mgw_cconn_close(c);
		return;
	}
	mgw_ch1_process(c);
}

void mgw_ch1_deinit(struct mgw_client_conn *c)
{
	mgw_h1_field_deinit(&c->fld);
}
