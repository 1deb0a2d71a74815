/* testsrv.h - in-process HTTP server and raw-socket HTTP/1 client for the
 * http unit tests.  Everything runs on one thread: the client pumps the
 * server's event loop in short slices while it waits, and every wait is
 * bounded (TS_WAIT_MS) so a broken server fails a test instead of hanging.
 *
 * Routes of the test handler:
 *   /echo          200 text/plain "METHOD PATH\nBODY", plus response fields
 *                  that the layer must drop (hop-by-hop, Connection-named)
 *   /big           200 text/plain, TS_BIG_BODY bytes of 'b'
 *   /sse           text/event-stream: 3 events, a timer between them
 *   /tools?n=N     200 application/json, streamed (chunked): a tools/list
 *                  answer (id 7) of N tools t0..tN-1 of about 1 KiB each
 *   /hold          keeps the exchange (t->held) until the test answers
 *   /stream-hold   starts a streamed response and keeps the exchange
 *   anything else  404 */
#ifndef MGW_TESTS_HTTP_TESTSRV_H
#define MGW_TESTS_HTTP_TESTSRV_H

#include <stddef.h>

#include <event2/event.h>
#include <http_parser.h>
#include <openssl/ssl.h>

#include "http/headers-t.h"
#include "http/server.h"

#define TS_WAIT_MS 5000
#define TS_MAX_HELD 16
#define TS_BIG_BODY (256 * 1024)

struct ts {
	struct event_base *base;
	struct mgw_http_server *srv;
	struct mgw_http_limits lim;
	char addr[80];
	int handled;                 /* handler calls */
	int aborts;                  /* on_abort calls */
	int drains;                  /* on_drain calls */
	int sse_written;             /* SSE events written by /sse */
	int sse_done;                /* /sse streams ended */
	struct mgw_http_exchange *held[TS_MAX_HELD];
	int nheld;
	int done_calls;              /* shutdown done callbacks */
	char last_method[16];
	char last_path[256];
	char last_target[256];
	char last_authority[256];
	int last_version;
};

/* Starts a server on 127.0.0.1:0 (plain, or TLS with ctx).  lim NULL means
 * defaults.  Asserts on failure. */
void ts_start(struct ts *t, const struct mgw_http_limits *lim, SSL_CTX *tls);
void ts_stop(struct ts *t);
/* Runs the server loop for about ms milliseconds. */
void ts_pump(struct ts *t, int ms);
/* Pumps until *flag != 0 or TS_WAIT_MS passed; returns *flag. */
int ts_wait(struct ts *t, const int *flag);
/* Pumps until *v >= n or the bound passed; returns *v >= n. */
int ts_wait_ge(struct ts *t, const int *v, int n);
/* Index of a held exchange, waiting for the handler to get one. */
struct mgw_http_exchange *ts_wait_held(struct ts *t, int i);
void ts_done_cb(void *arg);

/* Non-blocking TCP connection to addr ("127.0.0.1:PORT"). -1 on error. */
int ts_connect_addr(const char *addr);

/* One HTTP/1 response as parsed by the client. */
struct resp {
	int status;
	struct mgw_headers h;
	char *body;
	size_t blen;
	int chunked;                 /* arrived with Transfer-Encoding chunked */
	int complete;
};
void resp_free(struct resp *r);
const char *resp_header(const struct resp *r, const char *name);

/* Raw HTTP/1 client connection. */
struct tc {
	struct ts *t;
	int fd;
	int eof;
	int head;                    /* next response answers a HEAD request */
	http_parser p;
	char *pend;                  /* received, not yet parsed */
	size_t npend, cap;
	char *raw;                   /* everything received (for substring waits) */
	size_t nraw, rawcap;
	struct resp *cur;
	char hname[256];
	int last_was_value;
};
void tc_open(struct ts *t, struct tc *c);
void tc_close(struct tc *c);
/* Sends all bytes, pumping the server meanwhile. 0, or -1 if the server
 * closed/reset the connection first. */
int tc_send(struct tc *c, const void *p, size_t n);
int tc_sends(struct tc *c, const char *s);
/* Reads one complete response into r (initialised here). 0, or -1 when
 * the connection ended or the wait bound passed first. */
int tc_response(struct tc *c, struct resp *r);
/* 1 if the server closed the connection (EOF or reset) within the bound,
 * after discarding whatever else arrives. */
int tc_closed(struct tc *c);
/* Pumps until the raw received bytes contain s; 1 if they do. */
int tc_wait_raw(struct tc *c, const char *s);
/* Pumps until the raw received bytes contain the n bytes at p; 1 if so. */
int tc_wait_bytes(struct tc *c, const void *p, size_t n);
/* Sends request, expects a response with status, then the connection
 * closed.  For the smuggling / limit tables. */
void tc_expect_refused(struct ts *t, const char *request, size_t len,
                       int status);

/* Self-signed RSA certificate + key for "localhost"/127.0.0.1 written as
 * PEM files in dir (created with mkdtemp by the caller). */
void ts_make_cert(const char *dir, char *cert, size_t certlen, char *key,
                  size_t keylen);

#endif
