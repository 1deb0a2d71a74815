/* h1_request_fuzz.c - libFuzzer target for the server's HTTP/1.x request
 * parsing (src/http/h1.c: raw head scan, http-parser, the strict chunked
 * decoder), driven through mgw_h1_parse over a buffer: no sockets, no
 * event loop run, no handler.
 *
 * The input (after one byte that seeds the split PRNG) is a client's
 * byte stream.  It is parsed twice: in one piece, as if it had arrived in
 * one read, and in pieces of PRNG-chosen sizes, as if it had trickled in.
 * Besides the sanitizers, the properties are:
 *  - every call makes progress (a call that takes no byte and completes
 *    nothing would spin the server's read loop);
 *  - each complete request is well formed: method, target, headers done,
 *    valid field names and values, at most max_headers fields, a body
 *    within max_body;
 *  - both runs agree exactly on the requests (method, target, authority,
 *    fields, body), on whether the stream is refused after them, and if
 *    not, on the bytes taken: where a request ends cannot depend on how
 *    its bytes were split, which is the whole point of strict framing.
 *    (The refusal status itself may differ: with the whole head at hand
 *    the raw scan can find a bad byte before http-parser reaches an
 *    earlier over-long target, say.  Either way the connection closes.) */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/log.h"
#include "http/conn.h"
#include "http/headers.h"

#include "tests/fuzz/prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a run saw, folded into a hash (FNV-1a) plus plain counters. */
struct run {
	uint64_t h;
	int nreq;
	int status;     /* refusal status, 0 if none */
	size_t taken;   /* bytes consumed */
};

static void mix(struct run *o, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		o->h ^= b[i];
		o->h *= 0x100000001b3ULL;
	}
	o->h ^= n; /* length-delimit each field */
	o->h *= 0x100000001b3ULL;
}

static void mix_str(struct run *o, const char *s)
{
	if (s)
		mix(o, s, strlen(s));
	else
		mix(o, "\xff", 1);
}

static void check_request(const struct mgw_http_conn *c,
                          const struct mgw_http_exchange *x, struct run *o)
{
	const struct mgw_http_limits *lim = &c->srv->lim;
	unsigned char flags;

	if (!x || !x->method || !x->target || !x->headers_done)
		abort();
	if (x->body_len > lim->max_body || x->req.n > lim->max_headers)
		abort();
	if (x->body_len && !x->body)
		abort();
	mix_str(o, x->method);
	mix_str(o, x->target);
	mix_str(o, x->path);
	mix_str(o, x->authority);
	for (size_t i = 0; i < x->req.n; i++) {
		const struct mgw_header *f = &x->req.v[i];
		if (!mgw_header_name_valid(f->name, f->name_len) ||
		    !mgw_header_value_valid(f->value, f->value_len))
			abort();
		mix(o, f->name, f->name_len);
		mix(o, f->value, f->value_len);
	}
	mix(o, x->body, x->body_len);
	flags = (unsigned char)(x->keep_alive | x->http10 << 1 | x->head << 2);
	mix(o, &flags, 1);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* Loop objects live for the whole process: libevent frees bufferevents
 * from its loop, which never runs here. */
struct env {
	struct event_base *base;
	struct bufferevent *bev; /* socket-less: 100 Continue lands in it */
	struct event *timer;     /* armed and disarmed, never fired */
};

/* Parses in[0..len) like mgw_h1_process does, in pieces of 1..max_piece
 * bytes (0: everything available at once). */
static void run_once(const struct env *env, const uint8_t *in, size_t len,
                     struct prng *r, size_t max_piece, struct run *o)
{
	struct mgw_http_server srv;
	struct mgw_http_conn c;

	memset(o, 0, sizeof(*o));
	o->h = 0xcbf29ce484222325ULL;
	memset(&srv, 0, sizeof(srv));
	memset(&c, 0, sizeof(c));
	srv.base = env->base;
	mgw_http_limits_default(&srv.lim);
	/* small limits, so the fuzzer reaches them */
	srv.lim.max_header_bytes = 512;
	srv.lim.max_headers = 8;
	srv.lim.max_uri = 128;
	srv.lim.max_body = 1024;
	c.srv = &srv;
	c.proto = MGW_PROTO_H1;
	snprintf(c.peer, sizeof(c.peer), "fuzz");
	c.bev = env->bev;
	c.timer = env->timer;
	mgw_h1_start(&c);

	while (o->taken < len) {
		size_t n = len - o->taken, used = 0;
		int st;

		if (max_piece) {
			size_t piece = 1 + rnd(r) % max_piece;
			if (n > piece)
				n = piece;
		}
		st = mgw_h1_parse(&c, in + o->taken, n, &used);
		if (used > n)
			abort();
		o->taken += used;
		if (st) {
			if (st < 400 || st > 599)
				abort();
			o->status = st;
			break;
		}
		if (c.hp_ready) {
			struct mgw_http_exchange *x = c.rx;
			int keep;

			check_request(&c, x, o);
			keep = x->keep_alive;
			c.rx = NULL;
			c.hp_ready = 0;
			mgw_x_free(x);
			o->nreq++;
			if (!keep)
				break; /* the server closes after answering */
			continue;
		}
		if (used == 0)
			abort(); /* no progress: the read loop would spin */
	}
	mgw_h1_deinit(&c);
	evtimer_del(env->timer);
	evbuffer_drain(bufferevent_get_output(env->bev),
	               evbuffer_get_length(bufferevent_get_output(env->bev)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct env env;
	struct prng r;
	struct run a, b;

	if (!env.base) {
		mgw_log_set_level(MGW_LOG_ERROR);
		env.base = event_base_new();
		if (!env.base)
			abort();
		env.bev = bufferevent_socket_new(env.base, -1, 0);
		env.timer = evtimer_new(env.base, on_timer, NULL);
		if (!env.bev || !env.timer)
			abort();
		bufferevent_disable(env.bev, EV_READ | EV_WRITE);
	}
	if (size == 0)
		return 0;
	r.s = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)data[0] << 17) ^ size;
	run_once(&env, data + 1, size - 1, &r, 0, &a);
	run_once(&env, data + 1, size - 1, &r, 1 + data[0] % 32, &b);
	if (a.h != b.h || a.nreq != b.nreq || !a.status != !b.status ||
	    (!a.status && a.taken != b.taken)) {
		fprintf(stderr, "split changed the outcome: %d req/%d/%zu vs "
		        "%d req/%d/%zu\n", a.nreq, a.status, a.taken, b.nreq,
		        b.status, b.taken);
		abort();
	}
	return 0;
}
