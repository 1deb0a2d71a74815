/* relay.h - the response relay: how an upstream answer reaches the
 * client, written once for every handler.
 *
 * A small answer with a Content-Length (at most MGW_RELAY_COLLECT_MAX,
 * or a HEAD, 204 or 304; never an event stream) is collected and sent
 * whole with a Content-Length, so that a failure before its end can still
 * become a clean gateway error.  Everything else (SSE above all) streams
 * chunk by chunk as the upstream sends it, with backpressure both ways:
 * the upstream is paused while the client cannot take more, and data the
 * client layer refused is held and flushed on drain.  A stream may have
 * its SSE event ids stamped (sse.h) and its body captured for the
 * handler's on_complete.  A response cut after it started is cut for the
 * client too (mgw_http_stream_abort). */
#ifndef MGW_PROXY_RELAY_H
#define MGW_PROXY_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "http/headers-t.h"
#include "proxy/txn-t.h"

/* Largest answer (by its Content-Length) collected rather than streamed. */
#define MGW_RELAY_COLLECT_MAX (64 * 1024)
/* Largest streamed body captured for on_complete (larger: dropped). */
#define MGW_RELAY_CAPTURE_MAX (1024 * 1024)

#define MGW_RELAY_F_STAMP   1u  /* stamp SSE event ids with tag */
#define MGW_RELAY_F_STAMP_REQ 4u /* and with the request's id (sse.h) */
#define MGW_RELAY_F_CAPTURE 2u  /* keep a copy of a streamed body */

void mgw_relay_init(struct mgw_relay *rl);
void mgw_relay_deinit(struct mgw_relay *rl);

/* 1 when the answer to method with status and headers h is collected
 * (*len: the Content-Length to expect), 0 when it streams. */
int mgw_relay_collects(const char *method, int status,
                       const struct mgw_headers *h, size_t *len);

/* Starts relaying t's answer (status t->status) with head h (the header
 * list the client gets).  Returns 0, or -1 after t was answered and
 * freed. */
int mgw_relay_begin(struct mgw_txn *t, const struct mgw_headers *h,
                    unsigned flags, uint32_t tag);

/* Body bytes from the upstream.  Returns 0, or -1 after t was freed. */
int mgw_relay_data(struct mgw_txn *t, const unsigned char *d, size_t n);

/* The upstream ended the answer (its attempt is over): sent now, or when
 * the client has taken what is held. */
void mgw_relay_end(struct mgw_txn *t);

/* The client can take more (streaming only). */
void mgw_relay_drain(struct mgw_txn *t);

/* Cuts a streamed answer (why goes to the access line) and frees t. */
void mgw_relay_abort(struct mgw_txn *t, const char *why);

/* 1 when the Content-Length value v is a plain number no larger than max
 * (*out gets it), else 0. */
int mgw_relay_small_length(const char *v, size_t max, size_t *out);

/* 1 when a Content-Type value names text/event-stream. */
int mgw_relay_is_event_stream(const char *ctype);

#endif
