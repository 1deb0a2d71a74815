/* conn.h - internal prototypes shared by server.c, h1.c and h2.c.
 *
 * Re-entrancy rule.  Functions a handler can reach (mgw_http_respond,
 * mgw_http_stream_*) only queue output and call mgw_conn_schedule(); they
 * never free a connection.  Connections are torn down only from libevent
 * callbacks (read, write, event, timer, work), and every such callback
 * returns right after calling a function that may free the connection. */
#ifndef MGW_HTTP_CONN_H
#define MGW_HTTP_CONN_H

#include <stddef.h>

#include "core/log.h"
#include "http/conn-t.h"

/* ---- server.c ---- */

/* Runs the connection's work callback from the loop, in this same loop
 * turn (event_active), to continue parsing, send HTTP/2 frames, deliver
 * drain callbacks and close finished connections. */
void mgw_conn_schedule(struct mgw_http_conn *c);
/* Aborts every unfinished exchange (abort callbacks run once) and frees
 * the connection.  Only from libevent callbacks; c is gone afterwards. */
void mgw_conn_close(struct mgw_http_conn *c);
/* Closes once queued output is written: plain HTTP/1.x connections shut
 * their write side and drain input for a moment first, so a client still
 * sending does not get a RST that would destroy the response.  c may be
 * freed. */
void mgw_conn_close_flushed(struct mgw_http_conn *c);
/* Arms the connection timer for kind (seconds <= 0 disables it). */
void mgw_conn_timer(struct mgw_http_conn *c, enum mgw_conn_timer kind,
                    double seconds);
/* Stops reading when queued output reached the high watermark. */
void mgw_conn_check_backpressure(struct mgw_http_conn *c);
/* Writes a plain-TCP connection's output now (http/write_now.h) and, the
 * output gone, does what on_write would have: reading blocked by the
 * output resumes.  TLS and lingering connections: nothing. */
void mgw_conn_write_now(struct mgw_http_conn *c);
size_t mgw_conn_outlen(const struct mgw_http_conn *c);
void mgw_conn_logctx(const struct mgw_http_conn *c, int32_t stream,
                     struct mgw_log_ctx *ctx);

/* New exchange on c in state RECV. NULL on no memory. */
struct mgw_http_exchange *mgw_x_new(struct mgw_http_conn *c, int version);
void mgw_x_free(struct mgw_http_exchange *x);
/* Request body memory all live exchanges of one connection may hold
 * together, in units of limits.max_body. */
#define MGW_CONN_BODY_FACTOR 4
/* Appends body bytes; MGW_ELIMIT past limits.max_body, MGW_EAGAIN past
 * the connection's budget (MGW_CONN_BODY_FACTOR x max_body over its live
 * exchanges: HTTP/2 streams), MGW_ENOMEM. */
int mgw_x_body_append(struct mgw_http_exchange *x, const void *p, size_t n);
/* Stores the request target and derives the path.  t is origin-form
 * ("/path?query") or "*"; with absolute (HTTP/1.1 only) also
 * absolute-form ("http://host[:port]/path?query", RFC 9112 3.2.2), which
 * is stored as its origin-form, its host[:port] becoming x->authority (a
 * Host field is then ignored).  Returns 0, MGW_EINVAL (any other form, an
 * unparsable URL, a scheme other than http/https: answer 400) or
 * MGW_ENOMEM. */
int mgw_x_set_target(struct mgw_http_exchange *x, const char *t, size_t n,
                     int absolute);
/* Hands x to the handler (state HANDLER, counted in flight). */
void mgw_x_dispatch(struct mgw_http_exchange *x);
/* The response is complete: state DONE, no longer in flight. */
void mgw_x_finish(struct mgw_http_exchange *x);
/* The client went away: runs on_abort once if the response had not
 * finished.  The caller frees x afterwards. */
void mgw_x_abort(struct mgw_http_exchange *x);
/* Delivers on_drain to x when it asked and its queue is low enough. */
void mgw_x_maybe_drain(struct mgw_http_exchange *x, size_t queued);

/* Body of a refusal with status for a request whose fields so far are
 * req (may be NULL): the handler's refusal callback, else "STATUS
 * Reason\n" (or "STATUS Reason: why\n" when why is not NULL) as
 * text/plain.  *body is malloc'd (free it); NULL only on no memory. */
void mgw_refusal_body(struct mgw_http_server *s, int status, const char *why,
                      const struct mgw_headers *req, const char **ctype,
                      char **body, size_t *len);

/* Cached IMF-fixdate for the Date field. */
const char *mgw_http_date(struct mgw_http_server *s);
/* 1 when a handler-supplied response field may be sent: valid bytes, not
 * hop-by-hop, not named in conn_tokens (the handler's own Connection
 * value), not Content-Length (the layer sets it), not Content-Type when
 * the layer sets one.  checked: the list's h->checked (its bytes were
 * checked as they were read, and are not checked again). */
int mgw_resp_field_ok(const struct mgw_header *f, int checked,
                      const char *conn_tokens, int have_ctype);

/* ---- h1.c ---- */
void mgw_h1_start(struct mgw_http_conn *c);
void mgw_h1_deinit(struct mgw_http_conn *c);
/* Parses request bytes p[0..len) on c without touching its input buffer:
 * the raw head scan, the head read whole (h1_head.h), a Content-Length
 * body counted off, the strict chunked decoder for a chunked body.  Sets *used to the bytes
 * taken; when a request is complete, c->hp_ready is set, c->rx holds it
 * and nothing after it was taken.  Returns 0, or the HTTP status to refuse
 * with (the connection must then close).  mgw_h1_process is its caller on
 * live connections; the fuzz target drives it directly. */
int mgw_h1_parse(struct mgw_http_conn *c, const unsigned char *p, size_t len,
                 size_t *used);
/* Parses buffered input, dispatches complete requests one at a time,
 * delivers drain callbacks, closes when done.  c may be freed. */
void mgw_h1_process(struct mgw_http_conn *c);
/* Header/body timer fired: 408 and close.  c may be freed. */
void mgw_h1_timeout(struct mgw_http_conn *c);
int mgw_h1_respond(struct mgw_http_exchange *x, int status,
                   const struct mgw_headers *h, const char *ctype,
                   const void *body, size_t len);
int mgw_h1_stream_start(struct mgw_http_exchange *x, int status,
                        const struct mgw_headers *h, const char *ctype);
int mgw_h1_stream_write(struct mgw_http_exchange *x, const void *p, size_t n);
int mgw_h1_stream_end(struct mgw_http_exchange *x);
int mgw_h1_stream_abort(struct mgw_http_exchange *x);

/* ---- h2.c ---- */
/* Creates the nghttp2 session and queues our SETTINGS. 0 or MGW_ENOMEM. */
int mgw_h2_start(struct mgw_http_conn *c);
void mgw_h2_deinit(struct mgw_http_conn *c);
/* Feeds buffered input to nghttp2, then sends.  c may be freed. */
void mgw_h2_process(struct mgw_http_conn *c);
/* Sends what nghttp2 has queued (within the output limit), delivers drain
 * callbacks and closes the connection when nghttp2 is finished with it.
 * c may be freed. */
void mgw_h2_send(struct mgw_http_conn *c);
/* Graceful GOAWAY (shutdown) / terminate (idle). */
void mgw_h2_goaway(struct mgw_http_conn *c, int terminate);
int mgw_h2_respond(struct mgw_http_exchange *x, int status,
                   const struct mgw_headers *h, const char *ctype,
                   const void *body, size_t len);
int mgw_h2_stream_start(struct mgw_http_exchange *x, int status,
                        const struct mgw_headers *h, const char *ctype);
int mgw_h2_stream_write(struct mgw_http_exchange *x, const void *p, size_t n);
int mgw_h2_stream_end(struct mgw_http_exchange *x);
int mgw_h2_stream_abort(struct mgw_http_exchange *x);
/* Queued output of one stream: its unframed body plus connection output. */
size_t mgw_h2_queued(const struct mgw_http_exchange *x);

#endif
