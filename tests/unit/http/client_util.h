/* client_util.h - test harness for the upstream client layer: a raw-socket
 * upstream server (plain or TLS) whose behaviour each test scripts, a
 * recorder for client callbacks, bounded loop pumping, and a throwaway
 * CA + server certificate made with OpenSSL.  Everything runs on one
 * event_base in one thread; every wait is bounded by CU_WAIT_MS. */
#ifndef MGW_TESTS_HTTP_CLIENT_UTIL_H
#define MGW_TESTS_HTTP_CLIENT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/ssl.h>

#include "http/client.h"
#include "http/headers.h"

#define CU_WAIT_MS 5000
#define UP_MAX_CONNS 32

struct up;
struct up_conn;
struct nghttp2_session;

#define H2UP_MAX_STREAMS 256

/* One stream seen by the HTTP/2 upstream. */
struct h2s {
	struct up_conn *uc;
	int32_t id;
	char method[16];
	char path[256];
	char authority[256];
	char scheme[8];
	struct mgw_headers h;   /* regular fields in arrival order */
	struct evbuffer *body;  /* request body */
	struct evbuffer *out;   /* response DATA not yet framed */
	int complete;           /* END_STREAM received */
	int responded;
	int out_eof;            /* END_STREAM after out drains */
	int closed;
	uint32_t close_code;    /* error code when closed (RST) */
	int rst_received;       /* the client sent RST_STREAM */
	uint32_t rst_code;
};

typedef void (*h2up_request_cb)(struct h2s *s);

/* One accepted connection of the scripted upstream. */
struct up_conn {
	struct up *u;
	int idx;
	struct bufferevent *bev;
	struct evbuffer *rx;  /* everything received, never drained */
	size_t consumed;      /* rx bytes of requests already handled */
	int eof;              /* client closed or reset */
	int closed;           /* we closed it */
	int nreq;             /* requests handled on it */
	int close_when_flushed;
	int blackhole;        /* h2: swallow input, never answer again */
	struct nghttp2_session *ng; /* HTTP/2 mode */
	int in_ng;
};

typedef void (*up_read_cb)(struct up_conn *uc);

struct up {
	struct event_base *base;
	struct evconnlistener *l;
	uint16_t port;
	SSL_CTX *tls;
	up_read_cb on_read;   /* called after every read; NULL = up_canned */
	const char *resp;     /* canned response for up_canned */
	size_t read_limit;    /* >0: close after reading this many bytes */
	int naccepted;
	struct up_conn *c[UP_MAX_CONNS];
	void *arg;
	/* HTTP/2 mode (h2up_start) */
	int h2;
	uint32_t h2_max_streams;   /* SETTINGS_MAX_CONCURRENT_STREAMS */
	uint32_t h2_window;        /* SETTINGS_INITIAL_WINDOW_SIZE */
	int h2_no_window_update;   /* never send WINDOW_UPDATE (stall uploads) */
	h2up_request_cb on_request;/* stream complete; NULL = 200 "ok" */
	struct h2s *s[H2UP_MAX_STREAMS];
	int ns;
};

/* Listens on 127.0.0.1:0 (TLS when tls != NULL; a reference is taken). */
void up_start(struct up *u, struct event_base *base, SSL_CTX *tls);
void up_stop(struct up *u);
/* 1 and *len when uc->rx holds a complete request after uc->consumed
 * (head plus Content-Length body). */
int up_next_request(struct up_conn *uc, size_t *len);
/* Answers every complete request with u->resp. */
void up_canned(struct up_conn *uc);
void up_write(struct up_conn *uc, const void *p, size_t n);
void up_writes(struct up_conn *uc, const char *s);
/* Closes the connection now (RST if unread input remains). */
void up_close(struct up_conn *uc);
/* Closes once everything written so far has left. */
void up_close_flushed(struct up_conn *uc);
/* Copies the bytes of the request at [off, off+len) into a NUL-terminated
 * malloc'd string. */
char *up_rx_str(struct up_conn *uc, size_t off, size_t len);

/* HTTP/2 upstream (h2c prior knowledge, or h2 over TLS).  Settings
 * default to 100 streams and a 64 KiB window. */
void h2up_start(struct up *u, struct event_base *base, SSL_CTX *tls,
                uint32_t max_streams, uint32_t window);
/* Responses.  hdrs are name, value pairs ending with NULL. */
void h2s_respond(struct h2s *s, int status, const char *const *hdrs,
                 const void *body, size_t len, int end);
void h2s_write(struct h2s *s, const void *p, size_t n);
void h2s_end(struct h2s *s);
void h2s_rst(struct h2s *s, uint32_t code);
void h2up_goaway(struct up_conn *uc, int32_t last_sid, uint32_t code);
/* Sends what is queued (outside nghttp2 callbacks). */
void h2up_flush(struct up_conn *uc);
/* Stream by id across all connections, or NULL. */
struct h2s *h2up_stream(struct up *u, int idx);

/* Records what the client reports for one request. */
struct rec {
	struct mgw_client_req *req;
	int status;
	struct mgw_headers h;
	struct evbuffer *body;
	int nhead, ndata, ended, failed, done;
	int h2;                  /* on_head saw the request on HTTP/2 */
	struct mgw_client_error err;
	char errmsg[256];
	/* behaviour switches */
	int pause_after_data;    /* pause inside the n-th on_data (1-based) */
	int cancel_on_head;
	int cancel_after_data;   /* cancel inside the n-th on_data */
	void (*on_data_hook)(struct rec *rc);
	void *user;
	char *bodystr;
};

void rec_init(struct rec *rc);
void rec_deinit(struct rec *rc);
/* Fills spec's callbacks for rc. */
void rec_spec(struct rec *rc, struct mgw_client_reqspec *spec);
/* Body received so far as a NUL-terminated string (owned by rc). */
const char *rec_body(struct rec *rc);

/* Runs base until *flag != 0 or CU_WAIT_MS passed; returns *flag. */
int cu_wait(struct event_base *base, const int *flag);
/* Runs base for n short loop passes (each at most 10 ms). */
void cu_pump(struct event_base *base, int n);

/* A port on 127.0.0.1 with nothing listening (bound, then closed). */
uint16_t cu_dead_port(void);

/* Throwaway PKI: a CA and a server certificate signed by it for
 * "localhost" and 127.0.0.1, written as PEM files into dir. */
void cu_make_pki(const char *dir, char *ca, char *cert, char *key,
                 size_t len);

#endif
