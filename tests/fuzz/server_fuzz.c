/* server_fuzz.c - libFuzzer target for the client-facing HTTP server end
 * to end (src/http/server.c, h1.c, h2.c with nghttp2, headers.c,
 * chunked.c): what a hostile client can send the gateway, over a real
 * loopback connection, with a handler that uses the whole exchange API.
 *
 * The input (after one byte that seeds the split PRNG) is what a client
 * sends: HTTP/1.1, or the HTTP/2 preface and frames (the server detects
 * which).  It is written in PRNG-sized pieces with event-loop passes in
 * between, the server's output is read and dropped, then the client
 * closes.  The handler answers by the first letter of the path: r echoes
 * the body at once, s streams three chunks, b streams 128 KiB (more than
 * a default HTTP/2 window), a starts a stream and aborts it, h holds the
 * exchange and answers from a timer, l streams from a timer for a few
 * ticks; anything else is 404.  Besides the sanitizers, the properties
 * are:
 *  - once the client has closed, the server ends its connection within
 *    the harness's bound (nothing hangs on a gone client);
 *  - every exchange the handler kept is settled: answered, or aborted
 *    through its on_abort exactly once (the handler's count of live
 *    exchanges returns to zero, and the server's in-flight count too);
 *  - no on_abort runs while the handler is inside an API call on that
 *    exchange (the re-entrancy that freed a handler's state under it). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "http/server.h"
#include "util/time.h"

#include "tests/fuzz/prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One exchange the handler keeps (h, l). */
struct held {
	struct mgw_http_exchange *x;
	struct event *ev;
	int ticks;
	int streaming;
};

static struct event_base *base;
static struct mgw_http_server *srv;
static char addr[80];
static int live;       /* held exchanges not settled yet */
static int in_api;     /* the handler is inside an API call */

static void held_free(struct held *h)
{
	event_free(h->ev);
	free(h);
	live--;
}

static void on_abort(struct mgw_http_exchange *x, void *arg)
{
	struct held *h = arg;

	(void)x;
	if (in_api)
		abort(); /* on_abort inside the handler's own call */
	held_free(h);
}

/* API calls bracketed, so that an abort inside one is caught; rc_ gets
 * the call's result. */
static int rc_;
#define API(call)                                                            \
	do {                                                                 \
		in_api++;                                                    \
		rc_ = (call);                                                \
		in_api--;                                                    \
	} while (0)

static void tick(evutil_socket_t fd, short what, void *arg)
{
	struct held *h = arg;
	struct mgw_http_exchange *x = h->x;
	struct timeval tv = {0, 1000};

	(void)fd;
	(void)what;
	if (!h->streaming) {
		held_free(h); /* settled by the answer: no abort can follow */
		API(mgw_http_respond(x, 200, NULL, "text/plain", "later", 5));
		return;
	}
	if (h->ticks++ < 3) {
		API(mgw_http_stream_write(x, "data: tick\n\n", 12));
		evtimer_add(h->ev, &tv);
		return;
	}
	held_free(h);
	API(mgw_http_stream_end(x));
}

static void hold(struct mgw_http_exchange *x, int streaming)
{
	struct held *h = calloc(1, sizeof(*h));
	struct timeval tv = {0, 1000};

	if (!h || !(h->ev = evtimer_new(base, tick, h)))
		abort();
	h->x = x;
	h->streaming = streaming;
	live++;
	mgw_http_set_callbacks(x, on_abort, NULL, h);
	if (streaming) {
		API(mgw_http_stream_start(x, 200, NULL, "text/event-stream"));
		if (rc_ != 0) {
			held_free(h);
			return;
		}
	}
	evtimer_add(h->ev, &tv);
}

static void handler(struct mgw_http_exchange *x, void *arg)
{
	static char big[128 * 1024];
	const char *p = mgw_http_path(x);
	const unsigned char *body;
	size_t len;

	(void)arg;
	switch (p[0] == '/' ? p[1] : 0) {
	case 'r':
		body = mgw_http_req_body(x, &len);
		API(mgw_http_respond(x, 200, NULL, "application/json", body, len));
		return;
	case 's':
	case 'b':
	case 'a':
		API(mgw_http_stream_start(x, 200, NULL, "text/plain"));
		if (rc_ != 0)
			return;
		if (p[1] == 'a') {
			API(mgw_http_stream_abort(x));
			return;
		}
		if (p[1] == 'b') {
			memset(big, 'b', sizeof(big));
			API(mgw_http_stream_write(x, big, sizeof(big)));
		} else {
			for (int i = 0; i < 3; i++)
				API(mgw_http_stream_write(x, "chunk\n", 6));
		}
		API(mgw_http_stream_end(x));
		return;
	case 'h':
		hold(x, 0);
		return;
	case 'l':
		hold(x, 1);
		return;
	default:
		API(mgw_http_respond(x, 404, NULL, "text/plain", "no\n", 3));
	}
}

static void pump(int ms)
{
	struct timeval tv = {0, ms * 1000};

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* What is ready now, without waiting. */
static void spin(void)
{
	for (int i = 0; i < 3; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static void drain(int fd)
{
	char buf[65536];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static int dial(void)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		abort();
	return fd;
}

static void setup(void)
{
	struct mgw_http_limits lim;

	signal(SIGPIPE, SIG_IGN);
	mgw_log_set_level(MGW_LOG_ERROR);
	mgw_http_limits_default(&lim);
	lim.max_header_bytes = 2048;
	lim.max_headers = 20;
	lim.max_uri = 256;
	lim.max_body = 4096;
	lim.max_streams = 8;
	lim.write_high_watermark = 16 * 1024;
	lim.header_timeout = lim.body_timeout = 0.5;
	lim.idle_timeout = lim.write_timeout = 0.5;
	base = event_base_new();
	srv = base ? mgw_http_server_new(base, &lim, handler, NULL) : NULL;
	if (!srv || mgw_http_server_listen(srv, "127.0.0.1:0", NULL, addr,
	                                   sizeof(addr)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prng r;
	size_t off = 1;
	uint64_t end;
	int fd;

	if (size < 1 || size > 16384)
		return 0;
	if (!base)
		setup();
	r.s = 0x9E3779B97F4A7C15ULL ^ data[0];
	fd = dial();
	while (off < size) {
		size_t k = 1 + rnd(&r) % (size - off);
		ssize_t w = send(fd, data + off, k, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w <= 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			break; /* the server closed: the rest is not read */
		if (w > 0)
			off += (size_t)w;
		spin();
		drain(fd);
	}
	/* the held answers tick every millisecond, three times */
	for (int i = 0; i < 3; i++) {
		pump(2);
		drain(fd);
	}
	close(fd);
	end = mgw_now_ms() + 3000;
	while ((mgw_http_server_connections(srv) > 0 || live > 0) &&
	       mgw_now_ms() < end)
		pump(1);
	if (mgw_http_server_connections(srv) > 0 || live != 0 ||
	    mgw_http_server_inflight(srv) != 0) {
		fprintf(stderr, "server_fuzz: %zu connections, %d held, %zu in "
		        "flight after the client closed\n",
		        mgw_http_server_connections(srv), live,
		        mgw_http_server_inflight(srv));
		abort();
	}
	return 0;
}
