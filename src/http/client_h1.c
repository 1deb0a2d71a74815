/* client_h1.c - HTTP/1.1 to upstreams: request serialization and strict
 * response parsing.
 *
 * A gateway that parses upstream responses leniently can be made to split
 * one response into two, poisoning the next request on a pooled
 * connection.  So responses are held to the same rules as requests on the
 * server side: the raw head is scanned first by h1_scan.c (obs-fold, bare
 * CR or LF and control bytes are refused) and read whole by h1_head.c
 * (status line, token field names); Content-Length with
 * Transfer-Encoding, duplicate or malformed Content-Length and any
 * transfer coding but "chunked" are refused, and head size and field
 * count are limited.  A connection is only pooled again when its response
 * was read completely, allowed persistence, the request was fully written
 * and nothing followed the response.
 *
 * Bodies: a Content-Length body is counted off, one without a length
 * ends with the close (RFC 9112 §6.3), a chunked one goes through the
 * strict decoder of http/chunked.c (exact CRLFs, bounded hex sizes, clean
 * trailer lines).
 *
 * Streaming.  Body bytes go to on_data as they come off the socket.
 * Pausing stops parsing (the rest stays in the bufferevent's input) and
 * stops reading. */
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
#include "http/client_conn.h"
#include "http/h1_head.h"
#include "http/h1_scan.h"
#include "http/headers.h"
#include "http/write_now.h"
#include "http/read_now.h"
#include "util/decimal.h"

/* Status line and line-end overhead allowed on top of the header limits
 * before the raw scanner gives up on a response head. */
#define HEAD_SLACK 8192

static void scan_reset(struct mgw_client_conn *c)
{
	const struct mgw_client_limits *lim = &c->o->cl->lim;

	mgw_h1_scan_reset(&c->sc, lim->max_header_bytes + 4 * lim->max_headers +
	                              HEAD_SLACK, 0);
}

static int perr(struct mgw_client_conn *c, int err, const char *msg)
{
	if (!c->hp_err) {
		c->hp_err = err;
		c->hp_msg = msg;
	}
	return -1;
}

/* The field lines into r->resp, within the count and byte limits. */
static int take_fields(struct mgw_client_conn *c, struct mgw_h1_lines *it)
{
	const struct mgw_client_limits *lim = &c->o->cl->lim;
	struct mgw_client_req *r = c->req;
	struct mgw_h1_fields fl = {.max_bytes = lim->max_header_bytes,
	                           .max_fields = lim->max_headers,
	                           .bytes = r->resp_bytes};
	int rc = mgw_h1_take_fields(it, &r->resp, &fl);

	r->resp_bytes = fl.bytes;
	switch (rc) {
	case 0:
		return 0;
	case MGW_EPROTO:
		return perr(c, MGW_EPROTO, "invalid response header field");
	case MGW_ELIMIT:
		return perr(c, MGW_ELIMIT, fl.too_many
		                               ? "too many response header fields"
		                               : "response header too large");
	default:
		return perr(c, MGW_ENOMEM, "no memory for response headers");
	}
}

/* Framing fields as a whole: one Content-Length at most, never with
 * Transfer-Encoding, and "chunked" as the only transfer coding; sets the
 * body's framing (skip: a HEAD answer, 204, 304). */
static int check_framing(struct mgw_client_conn *c, int skip)
{
	const struct mgw_headers *h = &c->req->resp;
	size_t ncl = mgw_headers_count(h, "content-length");
	size_t nte = mgw_headers_count(h, "transfer-encoding");
	uint64_t len = 0;

	if (ncl > 1)
		return perr(c, MGW_EPROTO, "duplicate Content-Length in response");
	if (nte && ncl)
		return perr(c, MGW_EPROTO,
		            "response has both Content-Length and Transfer-Encoding");
	if (nte > 1 ||
	    (nte && strcasecmp(mgw_headers_get(h, "transfer-encoding"), "chunked")))
		return perr(c, MGW_EPROTO, "unsupported response Transfer-Encoding");
	if (ncl && mgw_h1_content_length(mgw_headers_get(h, "content-length"), &len))
		return perr(c, MGW_EPROTO, "invalid Content-Length in response");
	c->body_left = 0;
	c->body_to_close = 0;
	if (skip)
		return 0;
	if (nte) {
		c->chunk_mode = 1;
		mgw_chunked_init(&c->ck, c->o->cl->lim.max_header_bytes);
	} else if (ncl) {
		c->body_left = len;
	} else {
		c->body_to_close = 1; /* RFC 9112 §6.3: read until the close */
	}
	return 0;
}

/* RFC 9112 §9.3, and a body that ends with the close ends the connection. */
static int keeps_alive(const struct mgw_client_conn *c, int minor)
{
	const struct mgw_headers *h = &c->req->resp;

	if (c->body_to_close || mgw_headers_connection_lists(h, "close"))
		return 0;
	return minor >= 1 || mgw_headers_connection_lists(h, "keep-alive");
}

/* 1 when field i of h is hop-by-hop: by name, or named by a Connection
 * field (conn: h has one). */
static int hop_field(const struct mgw_headers *h, size_t i, int conn)
{
	return mgw_header_is_hop_by_hop(h->v[i].name, h->v[i].name_len) ||
	       (conn && mgw_headers_connection_lists(h, h->v[i].name));
}

/* Replaces the collected head by its end-to-end fields (most responses
 * have no hop-by-hop field, and keep their list as it is). */
static int strip_hop_by_hop(struct mgw_client_req *r)
{
	struct mgw_headers keep;
	int conn = mgw_headers_get(&r->resp, "connection") != NULL;
	size_t i = 0;

	while (i < r->resp.n && !hop_field(&r->resp, i, conn))
		i++;
	if (i == r->resp.n)
		return 0;
	mgw_headers_init(&keep);
	for (i = 0; i < r->resp.n; i++) {
		const struct mgw_header *f = &r->resp.v[i];
		if (hop_field(&r->resp, i, conn))
			continue;
		if (mgw_headers_add(&keep, f->name, f->name_len, f->value,
		                    f->value_len) != 0) {
			mgw_headers_deinit(&keep);
			return MGW_ENOMEM;
		}
	}
	keep.checked = r->resp.checked; /* fields of a checked list */
	mgw_headers_deinit(&r->resp);
	r->resp = keep;
	return 0;
}

/* The final response's head: checked, framed, handed on. */
static int final_head(struct mgw_client_conn *c, int status, int minor)
{
	struct mgw_client_req *r = c->req;

	if (check_framing(c, r->is_head || status == 204 || status == 304))
		return -1;
	c->keep_alive = keeps_alive(c, minor) ? 1 : 0;
	if (strip_hop_by_hop(r) != 0)
		return perr(c, MGW_ENOMEM, "no memory for response headers");
	c->in_body = 1;
	r->status = status;
	mgw_creq_head(r);
	if (!c->chunk_mode && !c->body_to_close && c->body_left == 0)
		c->msg_done = 1;
	return 0;
}

/* A whole scanned head p[0..n): a 1xx is dropped (the final one follows),
 * the final one handed on.  Returns 0 or -1 (c->hp_err says why). */
static int take_head(struct mgw_client_conn *c, const char *p, size_t n)
{
	struct mgw_client_req *r = c->req;
	struct mgw_h1_lines it;
	int major, minor, status;

	mgw_headers_deinit(&r->resp);
	r->resp_bytes = 0;
	mgw_h1_lines_init(&it, p, n);
	if (mgw_h1_status_line(&it, &major, &minor, &status))
		return perr(c, MGW_EPROTO, "malformed response status line");
	if (take_fields(c, &it))
		return -1;
	if (major != 1)
		return perr(c, MGW_EPROTO, "response is not HTTP/1.x");
	/* RFC 9110 §15 codes run from 100 to 599: a proxy must not pass
	 * "004" on */
	if (status < 100 || status > 599)
		return perr(c, MGW_EPROTO, "response status outside 100..599");
	if (status == 101)
		return perr(c, MGW_EPROTO, "unexpected 101 Switching Protocols");
	if (status < 200) {
		mgw_headers_deinit(&r->resp);
		r->resp_bytes = 0;
		scan_reset(c);
		return 0;
	}
	return final_head(c, status, minor);
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

/* An evbuffer reference's cleanup: extra is the block it lies in. */
static void free_ref(const void *data, size_t len, void *extra)
{
	(void)data;
	(void)len;
	free(extra);
}

/* Hands head[0..n) (one allocation) to c's output: sent at once on plain
 * TCP when nothing is queued before it (write_now.h; what the socket
 * took counts as queued and written, as on_out_changed counts the
 * rest), the rest referenced by the evbuffer and freed once written.
 * Returns 0, or MGW_ENOMEM (head freed). */
static int queue_block(struct mgw_client_conn *c, char *head, size_t n)
{
	size_t w = c->tls ? 0 : mgw_send_first(c->bev, head, n);

	c->queued_total += w;
	c->written_total += w;
	if (w == n) {
		free(head);
		return 0;
	}
	if (evbuffer_add_reference(bufferevent_get_output(c->bev), head + w,
	                           n - w, free_ref, head) != 0) {
		free(head);
		return MGW_ENOMEM;
	}
	return 0;
}

/* Writes the request head and body into the output as one piece, assembled
 * in one allocation, so the connection sees it as one write. */
void mgw_ch1_send(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	char clbuf[MGW_DEC_BUF];
	size_t cllen = 0, n, off = 0;
	size_t mlen = r->method_len, tlen = r->target_len;
	size_t alen = r->authority_len;
	char *head;

	if (mgw_creq_needs_length(r))
		cllen = mgw_dec(clbuf, r->body_len);
	n = mlen + 1 + tlen + 11 + 6 + alen + 2 +
	    (cllen ? 16 + cllen + 2 : 0) + 2;
	for (size_t i = 0; i < r->hdr.n; i++)
		n += r->hdr.v[i].name_len + 2 + r->hdr.v[i].value_len + 2;
	head = malloc(n + r->body_len + 1);
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
	PUT(r->method, mlen);
	PUT(" ", 1);
	PUT(r->target, tlen);
	PUT(" HTTP/1.1\r\nHost: ", 17);
	PUT(r->authority, alen);
	PUT("\r\n", 2);
	for (size_t i = 0; i < r->hdr.n; i++) {
		const struct mgw_header *f = &r->hdr.v[i];
		PUT(f->name, f->name_len);
		PUT(": ", 2);
		PUT(f->value, f->value_len);
		PUT("\r\n", 2);
	}
	if (cllen) {
		PUT("Content-Length: ", 16);
		PUT(clbuf, cllen);
		PUT("\r\n", 2);
	}
	PUT("\r\n", 2);
	if (r->body_len)
		PUT(r->body, r->body_len);
#undef PUT
	/* head and body in one piece: sent, or one chain of the evbuffer */
	if (queue_block(c, head, off) != 0) {
		mgw_cconn_set_error(c, MGW_ENOMEM, MGW_CLIENT_E_CLOSED,
		                    "no memory for the request", 0);
		c->closing = 1;
		mgw_cconn_schedule(c);
		return;
	}
	mgw_cconn_mark_end(c, r);

	scan_reset(c);
	c->hbuf_len = 0;
	c->msg_done = 0;
	c->keep_alive = 0;
	c->in_body = 0;
	c->chunk_mode = 0;
	c->body_to_close = 0;
	c->body_left = 0;
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

	mgw_read_drain(c->bev, n);
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

/* One span of head bytes: scanned, kept while the head goes on, read once
 * it ended (in place when it came in this one span).  Returns 1 to stop
 * (c may be freed), 0 to go on. */
static int feed_head(struct mgw_client_conn *c, struct mgw_client_req *r,
                     struct evbuffer *in, const struct evbuffer_iovec *v)
{
	size_t feed;
	int rv;

	if (scan_head(c, v, &feed))
		return 1;
	if (c->sc.in_head || c->hbuf_len) {
		if (mgw_h1_buf_append(&c->hbuf, &c->hbuf_len, &c->hbuf_cap,
		                      v->iov_base, feed)) {
			proto_fail(c, MGW_ENOMEM, "no memory for response headers");
			return 1;
		}
		mgw_read_drain(c->bev, feed);
		if (c->sc.in_head)
			return 0;
		rv = take_head(c, c->hbuf, c->hbuf_len);
		c->hbuf_len = 0;
	} else {
		rv = take_head(c, v->iov_base, feed);
		mgw_read_drain(c->bev, feed);
	}
	if (rv) {
		proto_fail(c, c->hp_err, c->hp_msg);
		return 1;
	}
	return settle(c, r);
}

/* One span of a Content-Length body, or of one that ends with the
 * close.  Returns 1 to stop (c may be freed), 0 to go on. */
static int feed_body(struct mgw_client_conn *c, struct mgw_client_req *r,
                     struct evbuffer *in, const struct evbuffer_iovec *v)
{
	size_t n = v->iov_len;

	if (!c->body_to_close && (uint64_t)n > c->body_left)
		n = (size_t)c->body_left;
	mgw_creq_data(r, v->iov_base, n);
	mgw_read_drain(c->bev, n);
	if (!c->body_to_close) {
		c->body_left -= n;
		if (c->body_left == 0)
			c->msg_done = 1;
	}
	return settle(c, r);
}

/* The server closed and everything before the close has been parsed:
 * the close ends a close-delimited body, or fails the request.  c is
 * freed. */
static void at_eof(struct mgw_client_conn *c)
{
	if (!c->eof_err && c->in_body && c->body_to_close) {
		c->msg_done = 1;
		finish(c); /* body delimited by the close */
		return;
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
		if (!c->in_body ? feed_head(c, r, in, &v)
		    : c->chunk_mode ? feed_chunked(c, r, in, &v)
		                    : feed_body(c, r, in, &v))
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
	free(c->hbuf);
	c->hbuf = NULL;
	c->hbuf_len = c->hbuf_cap = 0;
}
