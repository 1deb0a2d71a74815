/* client_conn-t.h - internal types of the HTTP client layer, shared by
 * client.c (origins, queues, connections, timers), client_h1.c
 * (http-parser) and client_h2.c (nghttp2).  Nothing outside src/http/
 * includes this file. */
#ifndef MGW_HTTP_CLIENT_CONN_T_H
#define MGW_HTTP_CLIENT_CONN_T_H

#include <stddef.h>
#include <stdint.h>


#include "http/chunked-t.h"
#include "http/h1_scan-t.h"
#include "http/client-t.h"
#include "http/headers-t.h"
#include "net/resolve.h"

struct bufferevent;
struct evbuffer;
struct event;
struct nghttp2_session;

/* Where a request is. */
enum mgw_creq_state {
	MGW_CRQ_QUEUED = 0, /* on its origin's queue */
	MGW_CRQ_ACTIVE,     /* attached to a connection */
	MGW_CRQ_DONE,       /* reported (on_end/on_error) or cancelled; only
	                     * memory left, freed by its connection */
};

/* Which timeout the request timer measures besides the total one. */
enum mgw_creq_phase {
	MGW_PH_CONNECT = 0, /* waiting for a connected connection */
	MGW_PH_SEND,        /* writing the request: idle timeout */
	MGW_PH_FIRST,       /* written, waiting for the first byte */
	MGW_PH_RECV,        /* receiving: idle timeout between bytes */
};

struct mgw_client_conn;

struct mgw_client_req {
	struct mgw_client_origin *o;
	struct mgw_client_conn *c;
	struct mgw_client_req *prev, *next; /* origin queue or h2 stream list */
	enum mgw_creq_state state;
	enum mgw_creq_phase phase;
	int32_t stream_id;                  /* h2 */
	uint64_t id;                        /* for logs */

	/* the request, copied at submit, hop-by-hop fields already removed;
	 * method, target, authority and body in one allocation (method) */
	char *method;
	char *target;
	char *authority;
	size_t method_len, target_len, authority_len;
	struct mgw_headers hdr;
	unsigned char *body;                /* in method's block, or NULL */
	size_t body_len;
	size_t body_off;                    /* h2: bytes handed to nghttp2 */
	size_t progress_off;                /* h2: body_off at the last send
	                                     * deadline refresh */
	uint64_t read_mark;                 /* h2: c->read_total at submit */
	struct mgw_client_timeouts tmo;

	mgw_client_head_cb on_head;
	mgw_client_data_cb on_data;
	mgw_client_end_cb on_end;
	mgw_client_error_cb on_error;
	void *arg;

	struct event *timer;
	uint64_t deadline_total;            /* ms, 0 = none */
	uint64_t deadline_phase;            /* ms, 0 = none */
	uint64_t timer_fire;                /* ms the pending timer fires at
	                                     * (timer_armed): never later
	                                     * than the nearest deadline */
	unsigned timer_armed : 1;
	uint64_t end_pos;                   /* connection output position after
	                                     * the request's last byte; 0 until
	                                     * it is all queued */

	int status;
	struct mgw_headers resp;            /* response head being collected */
	size_t resp_bytes;                  /* names+values so far (limit) */
	struct evbuffer *held;              /* h2: data received while paused */

	unsigned cancelled : 1;   /* caller cancelled; no more callbacks */
	unsigned paused : 1;
	unsigned sent_all : 1;    /* every request byte reached the kernel */
	unsigned got_bytes : 1;   /* some response byte arrived */
	unsigned head_sent : 1;   /* on_head delivered */
	unsigned is_head : 1;     /* HEAD request: no response body */
	unsigned reused : 1;      /* runs on an already-used connection */
	unsigned h2 : 1;          /* runs on HTTP/2 */
	unsigned end_pending : 1; /* h2: END_STREAM seen, held data not yet
	                           * delivered */
	unsigned stream_closed : 1;/* h2: nghttp2 closed the stream */
	unsigned want_rst : 1;    /* h2: send RST_STREAM(CANCEL) from work */
	unsigned rst_sent : 1;    /* h2: RST_STREAM submitted */
	unsigned in_cb : 1;       /* its on_end/on_error is running */
};

enum mgw_cconn_state {
	MGW_CC_RESOLVING = 0,
	MGW_CC_CONNECTING,   /* TCP */
	MGW_CC_HANDSHAKE,    /* TLS */
	MGW_CC_READY,
};

struct mgw_client_conn {
	struct mgw_client_origin *o;
	struct mgw_client_conn *prev, *next;   /* origin's connections */
	struct mgw_client_conn *iprev, *inext; /* origin's idle list (h1) */
	enum mgw_cconn_state state;
	uint64_t id;
	struct bufferevent *bev;
	struct event *work;   /* deferred processing (cancel, resume, close) */
	struct event *timer;  /* connect timeout / keep-alive idle */
	struct mgw_resolve_req *rq;
	struct mgw_addrs addrs;
	size_t addr_i;
	uint64_t queued_total;   /* bytes ever added to the output */
	uint64_t written_total;  /* bytes ever removed from it (to the kernel) */
	uint64_t idle_since_ns;  /* when it last went to the idle list */
	unsigned tls : 1;
	unsigned h2 : 1;         /* speaks HTTP/2 (decided at READY for AUTO) */
	unsigned used : 1;       /* has carried a request */
	unsigned idle : 1;       /* on the idle list */
	unsigned closing : 1;    /* close from the work callback */
	unsigned freeing : 1;
	unsigned peer_eof : 1;
	unsigned read_off : 1;   /* reading disabled (h1 pause) */
	int close_err;           /* MGW_E* for requests when closing */
	enum mgw_client_err_class close_cls;
	const char *close_msg;
	unsigned close_flags;    /* extra MGW_CLIENT_F_* for every request */
	char msgbuf[256];        /* close_msg text built for this connection
	                          * (per connection: workers share no static
	                          * buffers) */

	/* HTTP/1.1: one request at a time */
	struct mgw_client_req *req;
	char *hbuf;                 /* a head that came in more than one */
	size_t hbuf_len, hbuf_cap;  /* span, until it ends */
	uint64_t body_left;         /* Content-Length bytes to come */
	unsigned msg_done : 1;      /* final response complete */
	unsigned keep_alive : 1;    /* the response allows reuse */
	unsigned in_body : 1;       /* final head delivered */
	unsigned body_to_close : 1; /* the body ends with the close */
	unsigned eof_err : 1;       /* the close was an error, not a FIN */
	unsigned chunk_mode : 1;    /* body is being de-chunked by us */
	struct mgw_chunked ck;      /* chunked decoder (http/chunked.h) */
	const char *eof_msg;
	struct mgw_h1_scan sc;      /* raw head scanner (h1_scan.h) */
	int hp_err;                 /* MGW_E* decided inside a callback */
	const char *hp_msg;

	/* HTTP/2 */
	struct nghttp2_session *ng;
	struct mgw_client_req *streams;
	size_t nstreams;            /* streams of ours not yet closed */
	uint64_t read_total;        /* bytes read from the peer */
	int ng_busy;                /* inside nghttp2 recv/send */
	unsigned goaway : 1;        /* no new streams (GOAWAY or exhausted) */
	unsigned retiring : 1;      /* dead, kept for complete held streams */
	int32_t goaway_last;        /* peer's last-stream-id, -1 if none */
};

struct mgw_client_origin {
	struct mgw_client *cl;
	struct mgw_client_origin *prev, *next;
	char *host;
	char *sni;
	char *name;
	char *authority;            /* default Host: host or host:port */
	uint16_t port;
	enum mgw_client_proto proto;
	SSL_CTX *tls;
	int learned;                /* AUTO over TLS: 0 unknown, 1 h1, 2 h2 */
	struct mgw_client_req *qhead, *qtail;
	size_t nqueued;
	struct mgw_client_conn *conns;
	size_t nconns;              /* all, connecting included */
	size_t nconnecting;
	struct mgw_client_conn *idle;
	size_t nidle;
	size_t nreqs;               /* request structs alive (queued, active,
	                             * or done but not yet freed) */
	size_t nactive;             /* requests attached to a connection */
	struct event *kick;         /* dispatch from the loop */
	struct mgw_addrs cache;
	uint64_t cache_until;       /* ms */
	unsigned retired : 1;
	unsigned one_request : 1;   /* one request per connection (cfg) */
	struct mgw_client_stats st;
};

struct mgw_client {
	struct event_base *base;
	struct mgw_client_limits lim;
	struct mgw_resolver *res;
	struct mgw_client_origin *origins;
	struct mgw_client_stats st;  /* counters only; gauges are summed */
	uint64_t next_id;
};

#endif
