/* client_conn.h - internal prototypes shared by client.c, client_req.c,
 * client_conn.c, client_h1.c and client_h2.c.
 *
 * Re-entrancy rule (the same as the server layer's).  API functions a
 * caller can reach from a callback (request, cancel, pause, resume,
 * origin_free) only mark state and make an event active; connections are
 * torn down only from libevent callbacks of this layer (bufferevent, timer,
 * work, kick), and such a callback returns right after anything that may
 * free its connection.  Parsers re-check a request's state after every
 * user callback, because the callback may have cancelled or paused it. */
#ifndef MGW_HTTP_CLIENT_CONN_H
#define MGW_HTTP_CLIENT_CONN_H

#include "core/log.h"
#include "http/client_conn-t.h"

/* Counts one event in the origin's and the client's statistics. */
#define MGW_CSTAT_INC(o, f)                                             \
	do {                                                            \
		(o)->st.f++;                                            \
		(o)->cl->st.f++;                                        \
	} while (0)

/* ---- client_conn.c ---- */

/* Opens a connection for o.  owner (HTTP/1.1 and undecided ALPN) is the
 * request that reserves it (taken off the queue, made ACTIVE on it); NULL
 * for HTTP/2 connections, which take streams from the queue.  connect_s
 * bounds resolution, TCP and TLS: the connect timeout of the request it is
 * opened for (a route's timeouts.connect), 0 for none.  Failures are
 * reported from the loop (owner fails at once only on no memory). */
void mgw_cconn_open(struct mgw_client_origin *o, struct mgw_client_req *owner,
                    double connect_s);
/* Takes c off its origin's idle list (no-op when not on it) and stops its
 * keep-alive timer. */
void mgw_cconn_idle_unlink(struct mgw_client_conn *c);
/* 1 when the server has not closed (or written to) the idle connection c
 * since it was pooled: reusing a closed one would make a request fail
 * after it may have been written. */
int mgw_cconn_alive(struct mgw_client_conn *c);
/* Runs the connection's work callback from the loop (cancels, resumes,
 * deferred closes, HTTP/2 sends). */
void mgw_cconn_schedule(struct mgw_client_conn *c);
/* Fails every request still on c with its close reason (ECLOSED unless
 * set by mgw_cconn_set_error) and frees c.  Only from libevent callbacks;
 * c is gone afterwards. */
void mgw_cconn_close(struct mgw_client_conn *c);
/* Records why c is closing, for the requests that fail with it. */
void mgw_cconn_set_error(struct mgw_client_conn *c, int err,
                         enum mgw_client_err_class cls, const char *msg,
                         unsigned flags);
/* c finished an HTTP/1.1 exchange and may be reused: it goes to the idle
 * list (or is closed when the pool is full or the origin retired).  c may
 * be freed. */
void mgw_cconn_idle(struct mgw_client_conn *c);
/* Output bytes were queued for r: remembers where its last byte is so
 * that "fully written" can be told later. */
void mgw_cconn_mark_end(struct mgw_client_conn *c, struct mgw_client_req *r);
/* Writes a plain-TCP HTTP/1.1 connection's output now rather than on its
 * next writable event (http/write_now.h; TLS, HTTP/2: nothing done). */
void mgw_cconn_write_now(struct mgw_client_conn *c);
void mgw_cconn_logctx(const struct mgw_client_conn *c, int32_t stream,
                      struct mgw_log_ctx *ctx);

/* ---- client.c ---- */

/* Dispatches the origin's queue from the loop. */
void mgw_origin_kick(struct mgw_client_origin *o);

/* ---- client_req.c ---- */

/* Puts r (QUEUED from now, on no connection) on its origin's queue, at
 * the front (a request handed back) or the back (a new one). */
void mgw_creq_enqueue(struct mgw_client_req *r, int front);
/* Takes r off its origin's queue (the caller sets its new state). */
void mgw_creq_unqueue(struct mgw_client_req *r);
/* Leaves the QUEUED or ACTIVE state for DONE (timer stopped), without any
 * callback. */
void mgw_creq_set_done(struct mgw_client_req *r);
/* Response complete: on_end runs (unless cancelled); r becomes DONE and
 * stays allocated until mgw_creq_free. */
void mgw_creq_end(struct mgw_client_req *r);
/* Request failed: on_error runs (unless cancelled or already DONE) with
 * flags plus RESP_BYTES / HEAD_SENT as they apply. */
void mgw_creq_fail(struct mgw_client_req *r, int err,
                   enum mgw_client_err_class cls, const char *msg,
                   unsigned flags);
/* MGW_CLIENT_F_NOT_SENT when no response byte arrived and the request was
 * not fully written, else 0. */
unsigned mgw_creq_unsent(const struct mgw_client_req *r);
/* Frees a DONE request (its owner detached it first). */
void mgw_creq_free(struct mgw_client_req *r);
/* Enters a timeout phase (re-arms the timer). */
void mgw_creq_phase(struct mgw_client_req *r, enum mgw_creq_phase ph);
/* Response bytes arrived: RECV phase, idle timer restarted. */
void mgw_creq_activity(struct mgw_client_req *r);
/* 1 when r's head must announce its body's length (Content-Length on
 * HTTP/1.1, content-length on HTTP/2): it has a body, or its method is not
 * one that goes without (so an empty POST says 0). */
int mgw_creq_needs_length(const struct mgw_client_req *r);
/* Delivers on_head / on_data unless r is done (cancelled). */
void mgw_creq_head(struct mgw_client_req *r);
void mgw_creq_data(struct mgw_client_req *r, const unsigned char *p, size_t n);

/* ---- client_h1.c ---- */

/* Writes r's request on ready connection c (c->req == r). */
void mgw_ch1_send(struct mgw_client_conn *c, struct mgw_client_req *r);
/* Parses buffered input, delivering callbacks, until it is consumed or
 * the request pauses or ends.  c may be freed. */
void mgw_ch1_process(struct mgw_client_conn *c);
/* The server closed (eof) or the connection failed (err != 0: errno text
 * in msg).  Finishes a read-until-close response or fails the request.
 * c is freed. */
void mgw_ch1_closed(struct mgw_client_conn *c, int err, const char *msg);
void mgw_ch1_deinit(struct mgw_client_conn *c);

/* ---- client_h2.c ---- */

/* Creates the nghttp2 session and queues the preface and SETTINGS.
 * Returns 0 or MGW_ENOMEM. */
int mgw_ch2_start(struct mgw_client_conn *c);
/* 1 if c can take one more stream now. */
int mgw_ch2_has_room(const struct mgw_client_conn *c);
/* Submits r as a new stream.  Returns 0, or MGW_ELIMIT when c cannot open
 * streams any more (r untouched, c marked goaway), or MGW_ENOMEM. */
int mgw_ch2_submit(struct mgw_client_conn *c, struct mgw_client_req *r);
/* Feeds input to nghttp2 and sends what it queued.  c may be freed. */
void mgw_ch2_process(struct mgw_client_conn *c);
/* Sends queued frames (READY only).  c may be freed. */
void mgw_ch2_send(struct mgw_client_conn *c);
/* Deferred work: RST_STREAM for cancelled streams, held data of resumed
 * streams, window updates, then send.  c may be freed. */
void mgw_ch2_work(struct mgw_client_conn *c);
/* Fails (with c's close reason) and frees every stream; on teardown. */
void mgw_ch2_fail_all(struct mgw_client_conn *c);
/* The connection can carry nothing more (the peer closed it, or the
 * session ended), with c's close reason set.  Streams whose response is
 * complete but still held for a paused reader are kept, with the
 * connection, until they are delivered; every other stream fails now.
 * Returns 1 when such streams remain (c must not be closed: it closes
 * itself once they are delivered), 0 when c may be closed. */
int mgw_ch2_retire(struct mgw_client_conn *c);
void mgw_ch2_deinit(struct mgw_client_conn *c);

#endif
