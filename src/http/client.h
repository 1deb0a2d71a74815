/* client.h - the HTTP client layer the proxy uses to talk to upstreams:
 * HTTP/1.1 keep-alive pools and HTTP/2 (h2c prior knowledge, or h2 over
 * TLS by ALPN) multiplexed connections per origin, non-blocking name
 * resolution, upstream TLS with verification and SNI.
 *
 * Model.  A client belongs to one event_base.  The caller declares origins
 * (host, port, protocol, TLS) and submits requests to them; each request is
 * queued on its origin and handed, from the loop, to a pooled idle HTTP/1.1
 * connection, an HTTP/2 connection with a free stream slot, or a new
 * connection while the origin is below its connection limit.  The request
 * (method, target, authority, ordered headers, body) is copied at submit.
 * Headers go out in order and unchanged; the layer only adds Host (or
 * :authority) and Content-Length, drops hop-by-hop fields, fields named by
 * Connection, any Host/Content-Length in the list, and lowercases names for
 * HTTP/2.  Responses are streamed: on_head once, on_data as bytes arrive
 * (no buffering, so SSE passes event by event), then exactly one of on_end
 * or on_error, after which the request is freed.
 *
 * Callbacks.  They always run from the event loop, never from inside a
 * call into this API.  Inside any callback the caller may submit new
 * requests, and pause, resume or cancel any request that has not finished
 * (including the one being reported on, except from its own on_end and
 * on_error), and retire origins.  mgw_client_free must not be called from
 * a callback.
 *
 * Retry safety.  on_error's flags say whether the request provably did not
 * reach the upstream (MGW_CLIENT_F_NOT_SENT) and whether response bytes
 * were received; the proxy retries only on the first without the second.
 *
 * The process must ignore SIGPIPE (writes to a closed upstream would
 * otherwise kill it); mcpgw does.  Nothing here is thread-safe. */
#ifndef MGW_HTTP_CLIENT_H
#define MGW_HTTP_CLIENT_H

#include <stddef.h>

#include <event2/event.h>

#include "http/client-t.h"

/* Fills lim with the defaults: connect 5s, first byte 60s, idle 300s,
 * total off; 64 connections, 16 idle and 1024 pending per origin;
 * keep-alive 30s; 64 KiB / 100 response header fields; 128 h2 streams,
 * 256 KiB stream window; DNS cache 30s. */
void mgw_client_limits_default(struct mgw_client_limits *lim);

/* Creates a client on base; lim is copied (NULL = defaults).  The DNS
 * resolver is created on first use of a non-numeric host.  Returns NULL
 * on no memory. */
struct mgw_client *mgw_client_new(struct event_base *base,
                                  const struct mgw_client_limits *lim);

/* Closes every connection and frees every origin and request at once.
 * Requests still in flight are dropped without callbacks.  NULL allowed. */
void mgw_client_free(struct mgw_client *cl);

/* Declares an origin.  cfg strings are copied and cfg->tls gets a
 * reference.  Returns 0 and *out, or MGW_EINVAL (no host, port 0) or
 * MGW_ENOMEM. */
int mgw_client_origin_new(struct mgw_client *cl,
                          const struct mgw_client_origin_cfg *cfg,
                          struct mgw_client_origin **out);

/* Retires an origin: new requests to it are refused at once, idle
 * connections close from the loop, and it is freed once its last request
 * has finished (their callbacks still run).  The caller drops its pointer
 * (until the loop next runs, requests to o get MGW_ECLOSED).  Safe inside
 * callbacks.  NULL allowed. */
void mgw_client_origin_free(struct mgw_client_origin *o);

/* Name of the origin for logs ("host:port" unless configured). */
const char *mgw_client_origin_name(const struct mgw_client_origin *o);

/* Submits a request to origin o.  Everything in spec is copied.  The
 * request starts from the loop; its callbacks never run before this
 * returns.  Returns 0 and *out (may be NULL if the caller never needs to
 * pause or cancel), or, with no callback ever: MGW_EINVAL (bad method,
 * target, header name or value, CR/LF anywhere), MGW_ECLOSED (origin
 * retired), MGW_ELIMIT (max_pending_per_origin reached), MGW_ENOMEM. */
int mgw_client_request(struct mgw_client_origin *o,
                       const struct mgw_client_reqspec *spec,
                       struct mgw_client_req **out);

/* Cancels r: no callback runs for it afterwards, and r must not be used
 * again.  An HTTP/1.1 connection carrying it is closed (the response
 * cannot be skipped safely); an HTTP/2 stream gets RST_STREAM(CANCEL).
 * A queued request is simply dropped.  Must not be called from r's own
 * on_end or on_error. */
void mgw_client_cancel(struct mgw_client_req *r);

/* Stops delivering response data for r: HTTP/1.1 stops reading the
 * socket, HTTP/2 stops returning flow-control window (data the server
 * already sent inside the window is held, at most h2_stream_window
 * bytes).  The idle timeout does not run while paused.  Idempotent. */
void mgw_client_pause(struct mgw_client_req *r);
/* Resumes delivery; held data is delivered from the loop. Idempotent. */
void mgw_client_resume(struct mgw_client_req *r);

/* 1 if the request runs on HTTP/2, 0 on HTTP/1.1 or not yet assigned. */
int mgw_client_req_is_h2(const struct mgw_client_req *r);
/* From r's on_head callback only: moves the response's fields into out
 * (empty), leaving r's list empty; a consumer that keeps the head (the
 * relay holding a collected answer) then makes no copy of it. */
void mgw_client_take_head(struct mgw_client_req *r, struct mgw_headers *out);

/* Copies the counters of origin o, or of the whole client when o is NULL,
 * into *st. */
void mgw_client_stats(const struct mgw_client *cl,
                      const struct mgw_client_origin *o,
                      struct mgw_client_stats *st);

/* Static name of an error class ("connect", "tls", ...). */
const char *mgw_client_err_class_name(enum mgw_client_err_class c);

#endif
