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

/* Records what the client reports for one request. */
struct rec {
	struct mgw_client_req *req;
	int status;
	struct mgw_headers h;
	struct evbuffer *body;
	int nhead, ndata, ended, failed, done;
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
