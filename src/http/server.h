/* server.h - the HTTP server layer: listeners, HTTP/1.1 (http-parser) and
 * HTTP/2 (nghttp2, h2c prior knowledge and TLS+ALPN) connections, and the
 * request/response "exchange" API handlers program against.
 *
 * Model.  The layer reads a whole request (headers, then a body bounded by
 * limits.max_body) and then calls the handler once with an exchange.  The
 * handler answers at once (mgw_http_respond) or later: it may keep the
 * exchange across event-loop turns, streaming a response with
 * mgw_http_stream_start / _write / _end.  Protocol differences (chunked vs
 * DATA frames, keep-alive, flow control) are hidden here.
 *
 * Ownership.  The layer owns every exchange.  After mgw_http_respond() or
 * mgw_http_stream_end() returns, the handler must not touch the exchange
 * again.  A handler that keeps an exchange beyond the handler callback must
 * install an abort callback (mgw_http_set_callbacks): when the client
 * resets the stream or closes the connection before the response ended,
 * on_abort runs once and the exchange is freed right after it returns.
 * Without an abort callback an unfinished exchange is freed silently.
 *
 * Threads.  One server per event_base; nothing here is thread-safe. */
#ifndef MGW_HTTP_SERVER_H
#define MGW_HTTP_SERVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "http/headers-t.h"

/* Limits and timeouts (seconds) applied to every connection. */
struct mgw_http_limits {
	size_t max_header_bytes;   /* sum of header names+values; 431 when over */
	size_t max_headers;        /* header field count; 431 */
	size_t max_uri;            /* request-target bytes; 414 */
	size_t max_body;           /* request body bytes; 413 */
	uint32_t max_streams;      /* HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS */
	size_t max_connections;    /* accepted connections; more are closed */
	size_t write_high_watermark; /* output bytes above which a streaming
	                              * exchange reports "not writable" */
	double header_timeout;     /* first byte to end of headers */
	double body_timeout;       /* end of headers to end of body */
	double idle_timeout;       /* keep-alive wait between requests */
	double write_timeout;      /* no output progress while data is queued */
	uint32_t max_connections_per_client; /* open connections per client
	                              * address, over all workers (0 = off;
	                              * see mgw_http_server_set_connlim) */
	uint32_t new_connections_per_client; /* new connections per second
	                              * per client address (0 = off) */
};

/* Fills lim with the built-in defaults (documented in mcpgw(1)). */
void mgw_http_limits_default(struct mgw_http_limits *lim);

struct mgw_http_server;
struct mgw_http_exchange;

/* Called once per complete request. */
typedef void (*mgw_http_handler_cb)(struct mgw_http_exchange *x, void *arg);
/* The client went away before the response ended; x is freed after return. */
typedef void (*mgw_http_abort_cb)(struct mgw_http_exchange *x, void *arg);
/* Queued output of a streaming exchange fell below half the watermark. */
typedef void (*mgw_http_drain_cb)(struct mgw_http_exchange *x, void *arg);
/* Graceful shutdown finished (all exchanges done or deadline passed). */
typedef void (*mgw_http_done_cb)(void *arg);

/* Builds the body of an error response the layer sends by itself when it
 * refuses a request before the handler sees it (413 body too large, 431,
 * 414, 400, 408, ...).  req is what was parsed of the request's header
 * fields (possibly incomplete, never the body; NULL when nothing was).
 * Return 0 with *ctype (a static string), *body (malloc'd; the layer
 * frees it) and *len to replace the layer's plain-text body, or non-zero
 * to keep it.  why is a short reason the layer gave ("invalid Host
 * header") or NULL.  Runs inside the layer: it must not call the server
 * API. */
typedef int (*mgw_http_refusal_cb)(int status, const char *why,
                                   const struct mgw_headers *req,
                                   const char **ctype, char **body,
                                   size_t *len, void *arg);

/* Creates a server on base. lim is copied. Returns NULL on no memory. */
struct mgw_http_server *mgw_http_server_new(struct event_base *base,
                                            const struct mgw_http_limits *lim,
                                            mgw_http_handler_cb handler,
                                            void *arg);
/* Closes listeners and all connections at once (aborting exchanges, with
 * their abort callbacks) and frees the server. NULL is allowed. */
void mgw_http_server_free(struct mgw_http_server *s);

/* Installs (cb NULL: removes) the builder of refusal bodies. */
void mgw_http_server_set_refusal_cb(struct mgw_http_server *s,
                                    mgw_http_refusal_cb cb, void *arg);

/* Adds a listener on "HOST:PORT" ("[::1]:0" for IPv6; port 0 picks a free
 * port).  tls NULL = plain listener that serves HTTP/1.1 and detects the
 * HTTP/2 client preface (h2c prior knowledge); otherwise TLS with ALPN
 * offering h2 and http/1.1 (the server takes its own reference on tls).
 * The bound address is written to bound ("127.0.0.1:40123", IPv6 in
 * brackets).  Returns 0, MGW_EINVAL (bad address) or MGW_EIO (bind/listen
 * failed; errno kept). */
int mgw_http_server_listen(struct mgw_http_server *s, const char *hostport,
                           SSL_CTX *tls, char *bound, size_t boundlen);

/* mgw_http_server_listen with flags from net/listener.h
 * (MGW_LISTEN_REUSEPORT, so that one server per worker thread can listen
 * on the same address).  Same returns. */
int mgw_http_server_listen_opts(struct mgw_http_server *s,
                                const char *hostport, SSL_CTX *tls,
                                unsigned flags, char *bound, size_t boundlen);

/* Stops accepting on the listener bound to bound (as written by
 * mgw_http_server_listen*); its connections carry on.  Returns 0 or
 * MGW_EINVAL (no such listener). */
int mgw_http_server_unlisten(struct mgw_http_server *s, const char *bound);

/* The handler (and its argument) of the requests read from now on; an
 * exchange already handed over keeps the one it got.  For a
 * configuration reload. */
void mgw_http_server_set_handler(struct mgw_http_server *s,
                                 mgw_http_handler_cb handler, void *arg);

/* Graceful shutdown: stop accepting, send HTTP/2 GOAWAY, close idle
 * keep-alive connections, let in-flight exchanges finish; after deadline
 * seconds abort the rest.  done runs once, from the loop, when nothing is
 * left.  The server must still be freed by the caller afterwards. */
void mgw_http_server_shutdown(struct mgw_http_server *s, double deadline,
                              mgw_http_done_cb done, void *arg);

/* Connection counters of one listener (metrics).  Written by the
 * server's own thread only (relaxed atomics), read by any thread. */
struct mgw_http_listener_counters {
	char address[80];               /* the bound address, set at listen */
	int tls;
	atomic_uint_fast64_t accepted;  /* connections taken in */
	atomic_uint_fast64_t refused;   /* closed at once: max_connections
	                                 * reached, or shutting down */
	atomic_uint_fast64_t closed;    /* accepted ones that ended (open =
	                                 * accepted - closed) */
	atomic_uint_fast64_t refused_client_open; /* closed at once: the
	                                 * client address had
	                                 * max_connections_per_client open */
	atomic_uint_fast64_t refused_client_rate; /* ... or was over
	                                 * new_connections_per_client */
	atomic_uint_fast64_t tls_failures; /* TLS handshakes that failed (an
	                                 * error or the peer leaving before
	                                 * the handshake completed) */
};

/* Room for the counters of this many listeners per server. */
#define MGW_HTTP_COUNTED_LISTENERS 16

/* The counters of one server: slot i is its i-th listener (in the order
 * of the listen calls); n is how many slots are in use. */
struct mgw_http_counters {
	atomic_uint n;
	struct mgw_http_listener_counters l[MGW_HTTP_COUNTED_LISTENERS];
};

/* Makes s count into c (zeroed by the caller, outliving s; NULL stops).
 * Before any listener is added.  Listeners past the room are not
 * counted. */
void mgw_http_server_set_counters(struct mgw_http_server *s,
                                  struct mgw_http_counters *c);

/* Makes s count its connections per client address in cl (shared by
 * every server of the process; http/connlim.h) and close at once those
 * over its limits; NULL: no such limit.  A server whose limits have
 * max_connections_per_client or new_connections_per_client starts with a
 * table of its own, which this replaces.  Before any listener is added;
 * cl outlives s. */
struct mgw_http_connlim;
void mgw_http_server_set_connlim(struct mgw_http_server *s,
                                 struct mgw_http_connlim *cl);

/* Counts, for stats endpoints. */
size_t mgw_http_server_connections(const struct mgw_http_server *s);
size_t mgw_http_server_inflight(const struct mgw_http_server *s);

/* ---- request accessors (valid until the exchange ends) ---- */
const char *mgw_http_method(const struct mgw_http_exchange *x);
/* Raw request-target as received ("/mcp?x=1"); for HTTP/2 :path. */
const char *mgw_http_target(const struct mgw_http_exchange *x);
/* Path part of the target without the query ("/mcp"). */
const char *mgw_http_path(const struct mgw_http_exchange *x);
/* Authority: Host header (HTTP/1.1) or :authority (HTTP/2); may be NULL. */
const char *mgw_http_authority(const struct mgw_http_exchange *x);
/* Regular header fields in arrival order (no pseudo-headers, no Host for
 * HTTP/1.1 is NOT removed: Host stays in the list). */
const struct mgw_headers *mgw_http_req_headers(const struct mgw_http_exchange *x);
/* First value of a request header (case-insensitive) or NULL. */
const char *mgw_http_req_header(const struct mgw_http_exchange *x,
                                const char *name);
/* Request body exactly as received (de-chunked); *len set; never NULL. */
const unsigned char *mgw_http_req_body(const struct mgw_http_exchange *x,
                                       size_t *len);
/* 11 for HTTP/1.x, 20 for HTTP/2. */
int mgw_http_version(const struct mgw_http_exchange *x);
int mgw_http_is_tls(const struct mgw_http_exchange *x);
/* Peer address "IP:PORT". */
const char *mgw_http_peer(const struct mgw_http_exchange *x);
/* The peer's address alone ("127.0.0.1", "::1") and its port. */
const char *mgw_http_peer_ip(const struct mgw_http_exchange *x);
int mgw_http_peer_port(const struct mgw_http_exchange *x);
/* The bound address of the listener that accepted the connection
 * ("127.0.0.1:8080", "[::1]:8443"). */
const char *mgw_http_local(const struct mgw_http_exchange *x);
/* 1 when the peer connected from a loopback address. */
int mgw_http_peer_is_loopback(const struct mgw_http_exchange *x);
/* The listener the connection came in on: 0 for the server's first
 * listen call, 1 for the second, ... */
unsigned mgw_http_listener_index(const struct mgw_http_exchange *x);
uint64_t mgw_http_conn_id(const struct mgw_http_exchange *x);
/* HTTP/2 stream id, or 0 for HTTP/1.1. */
int32_t mgw_http_stream_id(const struct mgw_http_exchange *x);
struct event_base *mgw_http_base(const struct mgw_http_exchange *x);

/* ---- responses ---- */
/* Sends a complete response. headers may be NULL; content_type NULL means
 * no Content-Type. Content-Length is set by the layer; hop-by-hop fields in
 * headers are dropped.  Returns 0, or a negative code (the exchange is
 * finished in every case). */
int mgw_http_respond(struct mgw_http_exchange *x, int status,
                     const struct mgw_headers *headers,
                     const char *content_type, const void *body, size_t len);

/* Starts a streamed response (HTTP/1.1: chunked; HTTP/2: DATA frames).
 * Returns 0, or an error (MGW_ECLOSED if the client is gone): then the
 * exchange is finished, may already be freed, and its on_abort does not
 * run, so the caller must drop every pointer to it. */
int mgw_http_stream_start(struct mgw_http_exchange *x, int status,
                          const struct mgw_headers *headers,
                          const char *content_type);
/* Queues bytes and flushes them now (no buffering for SSE). Returns 0,
 * MGW_ECLOSED if the client is gone, MGW_ELIMIT if queued output would
 * exceed 4x the write watermark (the caller must wait for on_drain). */
int mgw_http_stream_write(struct mgw_http_exchange *x, const void *data,
                          size_t len);
/* 1 while queued output is below the high watermark. */
int mgw_http_stream_writable(const struct mgw_http_exchange *x);
/* Ends the stream (last chunk / END_STREAM). The exchange is finished. */
int mgw_http_stream_end(struct mgw_http_exchange *x);

/* Abandons a streamed response so that the client can tell it is
 * incomplete (a proxy whose upstream failed mid-body): HTTP/1.1 closes
 * the connection after the bytes already queued, without the last chunk;
 * HTTP/2 resets the stream with INTERNAL_ERROR.  No abort callback runs.
 * The exchange is finished.  Returns 0, or MGW_EINVAL / MGW_ECLOSED when
 * x is not streaming. */
int mgw_http_stream_abort(struct mgw_http_exchange *x);

/* Installs abort / drain callbacks (either may be NULL). */
void mgw_http_set_callbacks(struct mgw_http_exchange *x,
                            mgw_http_abort_cb on_abort,
                            mgw_http_drain_cb on_drain, void *arg);

/* Standard reason phrase for a status ("Not Found"); "Unknown" otherwise. */
const char *mgw_http_reason(int status);

#endif
