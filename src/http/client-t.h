/* client-t.h - types of the HTTP client layer for upstreams (see
 * client.h for the model and the rules callbacks live by). */
#ifndef MGW_HTTP_CLIENT_T_H
#define MGW_HTTP_CLIENT_T_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "http/headers-t.h"

struct mgw_client;
struct mgw_client_origin;
struct mgw_client_req;

/* Timeouts in seconds; <= 0 disables one.  connect: from the moment a
 * request is submitted until it is handed to a connected connection
 * (name resolution, TCP and TLS included).  first_byte: from the request
 * being fully written to the first response byte.  idle: longest silence
 * between response bytes (not counted while delivery is paused).  total:
 * submit to the end of the response; 0 suits endless SSE streams. */
struct mgw_client_timeouts {
	double connect;
	double first_byte;
	double idle;
	double total;
};

/* Client-wide limits. */
struct mgw_client_limits {
	struct mgw_client_timeouts tmo; /* default for requests without their own */
	size_t max_conns_per_origin;    /* open + connecting, h1 and h2 alike */
	size_t max_idle_per_origin;     /* HTTP/1.1 keep-alive connections kept */
	size_t max_pending_per_origin;  /* requests waiting for a connection */
	double keepalive_timeout;       /* idle pooled connection (h1, or an h2
	                                 * connection with no stream) is closed
	                                 * after this; keep it below the
	                                 * upstream's own idle timeout */
	double idle_peek_after;         /* an HTTP/1.1 connection pooled at
	                                 * least this long (s) is also checked
	                                 * with recv(MSG_PEEK) before reuse
	                                 * (client_conn.c mgw_cconn_alive);
	                                 * 0: at every reuse */
	size_t max_header_bytes;        /* response header names+values */
	size_t max_headers;             /* response header field count */
	uint32_t h2_max_streams;        /* our cap on concurrent streams per
	                                 * connection (the server's SETTINGS
	                                 * may lower it) */
	uint32_t h2_stream_window;      /* receive window per stream: how much
	                                 * a paused stream can hold */
	double dns_cache_ttl;           /* reuse an origin's resolved addresses
	                                 * this long (0: resolve every connect) */
};

/* Protocol spoken to an origin.  H2 is prior-knowledge h2c on plain TCP
 * and ALPN "h2" (only) over TLS.  AUTO offers "h2" and "http/1.1" over
 * TLS and speaks what the server picks; on plain TCP it means H1. */
enum mgw_client_proto {
	MGW_CLIENT_H1 = 1,
	MGW_CLIENT_H2,
	MGW_CLIENT_AUTO,
};

/* An upstream origin.  Strings are copied. */
struct mgw_client_origin_cfg {
	const char *host;          /* name or numeric address (no brackets) */
	uint16_t port;
	enum mgw_client_proto proto;
	SSL_CTX *tls;              /* NULL: plain TCP (http); otherwise https
	                            * with this context (see
	                            * mgw_tls_client_ctx); the origin takes a
	                            * reference */
	const char *sni;           /* name for SNI and certificate checks;
	                            * NULL = host */
	const char *name;          /* for logs; NULL = "host:port" */
	/* 1: every connection to this origin carries exactly one request
	 * and is closed after it (HTTP/1.1: never pooled; HTTP/2: no second
	 * stream, closed once its stream is done).  For clients that must
	 * open a new connection per request, e.g. a load generator behind a
	 * per-connection balancer.  0: normal pooling and multiplexing. */
	int one_request;
};

/* Flags of an error. */
enum {
	/* The request provably did not reach the upstream: it was never
	 * sent (connect or TLS failed, queued until a timeout), the
	 * connection closed before the request was fully written, or an
	 * HTTP/2 server refused the stream (REFUSED_STREAM, or GOAWAY whose
	 * last-stream-id is below it).  Safe to retry elsewhere. */
	MGW_CLIENT_F_NOT_SENT = 1u << 0,
	/* Some response bytes (at least the start of the status line or a
	 * HEADERS frame) were received for this request. */
	MGW_CLIENT_F_RESP_BYTES = 1u << 1,
	/* The failure happened while establishing the connection (name
	 * resolution, TCP connect, TLS handshake): counts against the
	 * upstream's health. */
	MGW_CLIENT_F_CONNECT = 1u << 2,
	/* on_head was already called for this request. */
	MGW_CLIENT_F_HEAD_SENT = 1u << 3,
	/* A timeout while the request waited for a free connection of the
	 * origin (every connection busy at the connection limit, none being
	 * set up): the gateway's own limit, not the upstream's fault.  Comes
	 * with NOT_SENT and without CONNECT. */
	MGW_CLIENT_F_QUEUED = 1u << 4,
};

/* Error classes, for counters and logs. */
enum mgw_client_err_class {
	MGW_CLIENT_E_DNS = 0,     /* name did not resolve */
	MGW_CLIENT_E_CONNECT,     /* TCP connect refused / failed */
	MGW_CLIENT_E_TLS,         /* handshake or certificate verification */
	MGW_CLIENT_E_TIMEOUT,     /* one of the timeouts */
	MGW_CLIENT_E_PROTO,       /* malformed or oversized response */
	MGW_CLIENT_E_CLOSED,      /* connection closed or reset mid-exchange */
	MGW_CLIENT_E_REFUSED,     /* h2 REFUSED_STREAM or GOAWAY */
	MGW_CLIENT_E_RESET,       /* h2 stream reset by the server otherwise */
	MGW_CLIENT_E_N,
};

/* What on_error receives.  msg is a short static or request-owned text,
 * valid during the callback only. */
struct mgw_client_error {
	int code;                        /* negative MGW_E* */
	unsigned flags;                  /* MGW_CLIENT_F_* */
	enum mgw_client_err_class cls;
	const char *msg;
};

/* Response head.  headers are in arrival order without pseudo-headers
 * and without hop-by-hop fields (HTTP/2 names are lowercase); the list
 * and its strings are valid during the callback only. */
typedef void (*mgw_client_head_cb)(struct mgw_client_req *r, int status,
                                   const struct mgw_headers *headers,
                                   void *arg);
/* Response body bytes as they arrive (de-chunked for HTTP/1.1).  Never
 * called while the request is paused. */
typedef void (*mgw_client_data_cb)(struct mgw_client_req *r,
                                   const unsigned char *data, size_t len,
                                   void *arg);
/* Response complete; r is freed when this returns. */
typedef void (*mgw_client_end_cb)(struct mgw_client_req *r, void *arg);
/* The request failed; r is freed when this returns. */
typedef void (*mgw_client_error_cb)(struct mgw_client_req *r,
                                    const struct mgw_client_error *e,
                                    void *arg);

/* One request.  Every pointer is copied by mgw_client_request(): the
 * caller may free or reuse its buffers as soon as that returns. */
struct mgw_client_reqspec {
	const char *method;                /* "POST" */
	const char *target;                /* "/mcp?x=1" (origin-form) */
	const char *authority;             /* Host / :authority; NULL means
	                                    * the origin's host[:port] */
	const struct mgw_headers *headers; /* end-to-end fields, sent in order
	                                    * and unchanged; may be NULL */
	int headers_checked;               /* 1: every name is a token and no
	                                    * value holds a control byte (they
	                                    * came from a parsed request and
	                                    * the caller's own checked fields),
	                                    * so the copy skips that check */
	int headers_end_to_end;            /* 1 (with headers_checked): no
	                                    * field is hop-by-hop, Host,
	                                    * Content-Length or named by
	                                    * Connection (a list made by
	                                    * mgw_proxy_build_headers), so the
	                                    * copy takes them all at once */
	const void *body;                  /* sent byte for byte */
	size_t body_len;
	const struct mgw_client_timeouts *tmo; /* NULL: the client's */
	mgw_client_head_cb on_head;
	mgw_client_data_cb on_data;
	mgw_client_end_cb on_end;
	mgw_client_error_cb on_error;
	void *arg;
};

/* Counters.  Gauges (conns_open, conns_idle, pending, inflight) are
 * current values; the rest only grow. */
struct mgw_client_stats {
	uint64_t conns_opened;   /* connections established */
	uint64_t conns_failed;   /* connection attempts that failed */
	uint64_t conns_reused;   /* requests served on an already-used
	                          * connection (h1 reuse, h2 extra stream) */
	uint64_t requests;       /* requests submitted */
	uint64_t responses;      /* responses completed (on_end) */
	uint64_t cancels;        /* requests cancelled by the caller */
	uint64_t errors[MGW_CLIENT_E_N];
	uint64_t conns_open;
	uint64_t conns_idle;
	uint64_t pending;        /* waiting for a connection */
	uint64_t inflight;       /* on a connection */
};

#endif
