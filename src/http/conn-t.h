/* conn-t.h - internal types of the HTTP server layer, shared by server.c
 * (lifecycle, timers, exchange API), h1.c (http-parser) and h2.c
 * (nghttp2).  Nothing outside src/http/ includes this file. */
#ifndef MGW_HTTP_CONN_T_H
#define MGW_HTTP_CONN_T_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>


#include "core/log.h"
#include "http/chunked-t.h"
#include "http/connlim.h"
#include "http/h1_scan-t.h"
#include "http/h2_scan-t.h"
#include "http/headers-t.h"
#include "http/server.h"

struct bufferevent;
struct evbuffer;
struct mgw_listener;
struct nghttp2_session;

enum mgw_conn_proto {
	MGW_PROTO_DETECT = 0, /* plain listener: waiting for the h2 preface */
	MGW_PROTO_H1,
	MGW_PROTO_H2,
};

/* What the connection timer is measuring right now. */
enum mgw_conn_timer {
	MGW_T_NONE = 0,
	MGW_T_IDLE,   /* keep-alive wait / no stream open */
	MGW_T_HEADER, /* first byte of a request until end of headers */
	MGW_T_BODY,   /* end of headers until end of body */
	MGW_T_LINGER, /* half-closed after an error response, draining input */
};

/* Life of an exchange.  RECV: request still arriving (never seen by the
 * handler).  HANDLER: handed over, no response yet.  STREAMING: streamed
 * response started.  DONE: response complete or aborted; the handler no
 * longer owns it. */
enum mgw_x_state {
	MGW_X_RECV = 0,
	MGW_X_HANDLER,
	MGW_X_STREAMING,
	MGW_X_DONE,
};

struct mgw_http_server;
struct mgw_http_conn;

struct mgw_http_exchange {
	struct mgw_http_conn *c;
	struct mgw_http_exchange *prev, *next; /* HTTP/2 streams of c */
	int32_t stream_id;                     /* 0 for HTTP/1.x */
	int version;                           /* 11 or 20 (10 reported as 11) */
	enum mgw_x_state state;
	char *method;
	char *target;
	char *path;
	char *authority;
	struct mgw_headers req;
	unsigned char *body;
	size_t body_len, body_cap;
	size_t hdr_bytes;              /* h2: names+values so far (limit) */
	int err_status;                /* limit/validation failure to answer */
	const char *err_why;           /* its reason (static) or NULL */
	unsigned head : 1;             /* HEAD: never send a body */
	unsigned http10 : 1;           /* HTTP/1.0 request */
	unsigned keep_alive : 1;       /* h1: connection may carry another */
	unsigned chunked_out : 1;      /* h1: response uses chunked coding */
	unsigned no_body : 1;          /* 1xx/204/304 or HEAD: no payload */
	unsigned want_drain : 1;       /* handler was told "not writable" */
	unsigned out_eof : 1;          /* h2: response body complete */
	unsigned deferred : 1;         /* h2: data provider returned DEFERRED */
	unsigned headers_done : 1;     /* request headers complete */
	unsigned refused : 1;          /* answered with an error before the
	                                * request ended */
	mgw_http_abort_cb on_abort;
	mgw_http_drain_cb on_drain;
	void *cb_arg;
	struct evbuffer *out;          /* h2: response body not yet framed */
	struct event *timer;           /* h2: per-stream header / body
	                                * timeout, then the stall timeout */
	uint64_t out_framed;           /* h2: response bytes framed so far */
	uint64_t stall_mark;           /* h2: out_framed when the stall timer
	                                * was armed */
};

struct mgw_http_conn {
	struct mgw_http_server *srv;
	struct mgw_http_conn *prev, *next;
	struct bufferevent *bev;
	struct event *work;     /* deferred processing; see mgw_conn_schedule */
	struct event *timer;
	enum mgw_conn_timer timer_kind;
	/* Lazy arming (mgw_conn_timer): timer_due is when timer_kind expires
	 * (monotonic ms); the event, when pending, fires at timer_fire, which
	 * may be earlier (then on_timer arms it again for the rest) but never
	 * later. */
	uint64_t timer_due, timer_fire;
	unsigned timer_armed : 1;
	uint64_t id;
	enum mgw_conn_proto proto;
	size_t body_live;         /* request body memory of live exchanges */
	int tls;
	char peer[64];
	int peer_loopback;          /* the peer is on a loopback address */
	struct mgw_connlim_ticket clt; /* counted in srv->connlim */
	char peer_ip[64];           /* peer without the port and brackets */
	int peer_port;
	char local[64];             /* the listener's bound address */
	unsigned lst_index;         /* the listener that accepted it */
	struct mgw_http_listener_counters *lc; /* its counters, or NULL */
	unsigned closing : 1;     /* no new requests; close when work is done */
	unsigned read_blocked : 1;/* reading stopped: output is piling up */
	unsigned lingering : 1;   /* write side shut, discarding input */
	unsigned freeing : 1;     /* teardown in progress */
	unsigned peer_eof : 1;    /* the client closed its side */
	unsigned linger : 1;      /* drain input before closing (error) */
	size_t linger_bytes;

	/* HTTP/1.x */
	struct mgw_http_exchange *rx;     /* request being parsed */
	struct mgw_http_exchange *active; /* handed to the handler */
	int hp_ready;                     /* a complete request is in rx */
	int hp_err;                       /* status decided by a callback */
	const char *hp_why;               /* its reason (static) or NULL */
	/* raw header-block scanner (obs-fold, bare CR/LF, control bytes) */
	struct mgw_h1_scan sc;
	/* a head that came in more than one piece, until it ends */
	char *hbuf;
	size_t hbuf_len, hbuf_cap;
	uint64_t body_left;               /* Content-Length bytes to come */
	/* chunked request body, decoded by http/chunked.c after the head */
	unsigned ck_mode : 1;
	struct mgw_chunked ck;

	/* HTTP/2 */
	struct nghttp2_session *ng;
	struct mgw_http_exchange *streams; /* exchanges of this connection */
	size_t nstreams;
	int ng_in_cb;                      /* inside nghttp2 recv/send */
	struct mgw_h2_scan h2s;            /* frame scan in front of nghttp2 */
	unsigned goaway : 1;
	unsigned ng_failed : 1;            /* nghttp2_session_send failed */
};

struct mgw_http_lst {
	struct mgw_http_lst *next;
	struct mgw_http_server *srv;
	struct mgw_listener *l;
	SSL_CTX *tls;
	char addr[64];            /* bound address, "127.0.0.1:8080" */
	unsigned index;                   /* order of listen calls */
};

struct mgw_http_server {
	struct event_base *base;
	struct mgw_http_limits lim;
	mgw_http_handler_cb handler;
	void *arg;
	struct mgw_http_lst *listeners;
	unsigned n_listeners;             /* listen calls that succeeded */
	struct mgw_http_counters *cnt;    /* borrowed, or NULL */
	struct mgw_http_conn *conns;
	size_t nconns;
	size_t inflight;
	int shutting_down;
	struct event *deadline; /* shutdown deadline */
	struct event *done_ev;  /* runs done from the loop */
	mgw_http_done_cb done;
	void *done_arg;
	mgw_http_refusal_cb refusal;  /* optional refusal body builder */
	void *refusal_arg;
	int done_fired;
	time_t date_t;
	char date[40];          /* cached IMF-fixdate for the Date field */
	/* client-fault log lines (refusals, TLS errors, timeouts): at most
	 * MGW_FAULT_LOGS_PER_S a second, the rest counted and summed up */
	struct mgw_log_limit faults;
	struct mgw_http_connlim *connlim; /* per-client limits, or NULL */
	int connlim_owned;                /* made from lim (no shared one set
	                                   * yet): freed with the server */
};

#endif
