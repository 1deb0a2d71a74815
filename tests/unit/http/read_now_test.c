/* read_now_test.c - the FIONREAD-free read of a socket bufferevent
 * (src/http/read_now.c), on a real TCP connection over loopback: every
 * byte arrives in order whatever the write pattern, the high watermark
 * holds reads back until the owner drains, EOF and a reset reach the
 * event callback as libevent reports them, and a read timeout still
 * fires. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>

#include "http/read_now.h"
#include "tcp_pair.h"

struct t {
	struct event_base *base;
	struct bufferevent *bev;
	int peer;               /* the writing end */
	unsigned char *got;
	size_t got_len, cap;
	size_t max_input;       /* largest input seen in the read callback */
	int drain;              /* read callback drains the input */
	short events;           /* what the event callback saw */
	int err;                /* errno at the event callback */
	int reads;
};

static void on_read(struct bufferevent *bev, void *arg)
{
	struct t *t = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);

	t->reads++;
	if (n > t->max_input)
		t->max_input = n;
	if (!t->drain)
		return;
	assert_true(t->got_len + n <= t->cap);
	evbuffer_remove(in, t->got + t->got_len, n);
	t->got_len += n;
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct t *t = arg;

	(void)bev;
	t->err = errno;
	t->events = what;
	event_base_loopbreak(t->base);
}

static void setup_t(struct t *t, size_t cap)
{
	int a, b;

	memset(t, 0, sizeof(*t));
	tcp_pair(&a, &b);
	t->peer = b;
	t->base = event_base_new();
	assert_non_null(t->base);
	evutil_make_socket_nonblocking(a);
	t->bev = bufferevent_socket_new(t->base, a, BEV_OPT_CLOSE_ON_FREE);
	assert_non_null(t->bev);
	assert_int_equal(mgw_read_fast(t->bev), 0);
	assert_int_equal(mgw_read_fast(t->bev), 0); /* twice: no change */
	bufferevent_setcb(t->bev, on_read, NULL, on_event, t);
	bufferevent_enable(t->bev, EV_READ);
	t->cap = cap;
	t->got = malloc(cap);
	assert_non_null(t->got);
	t->drain = 1;
}

static void teardown_t(struct t *t)
{
	bufferevent_free(t->bev);
	if (t->peer >= 0)
		close(t->peer);
	event_base_free(t->base);
	free(t->got);
}

/* runs base for ms milliseconds */
static void run_for(struct event_base *base, int ms)
{
	struct timeval tv = {0, ms * 1000};

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + i / 251);
}

/* 200 KiB in uneven writes, then EOF: all of it, in order, then EOF */
static void test_bytes_in_order_then_eof(void **state)
{
	enum { N = 200 * 1024 };
	unsigned char *src = malloc(N);
	struct t t;
	size_t off = 0, step = 1;

	(void)state;
	assert_non_null(src);
	fill(src, N);
	setup_t(&t, N);
	while (off < N) {
		size_t n = step < N - off ? step : N - off;
		assert_int_equal(write(t.peer, src + off, n), (ssize_t)n);
		off += n;
		step = step * 3 + 1;
		if (step > 50000)
			step = 7;
		event_base_loop(t.base, EVLOOP_NONBLOCK);
	}
	shutdown(t.peer, SHUT_WR);
	event_base_dispatch(t.base);
	assert_int_equal(t.got_len, N);
	assert_memory_equal(t.got, src, N);
	assert_int_equal(t.events, BEV_EVENT_READING | BEV_EVENT_EOF);
	/* one read takes at most MGW_READ_FAST_MAX: never the whole at once */
	assert_true(t.max_input <= MGW_READ_FAST_MAX);
	teardown_t(&t);
	free(src);
}

/* the high watermark: an owner that does not drain sees at most high
 * bytes, and the rest arrives once it drains.  own: the mark set with
 * mgw_read_limit and the room made with mgw_read_drain (the read event
 * leaves the loop while the input is full, rather than the socket being
 * polled again and again);
 * else libevent's own (bufferevent_setwatermark, evbuffer_remove). */
static void high_watermark(int own)
{
	enum { N = 64 * 1024, HIGH = 5000 };
	unsigned char *src = malloc(N);
	struct t t;

	assert_non_null(src);
	fill(src, N);
	setup_t(&t, N);
	t.drain = 0;
	if (own)
		mgw_read_limit(t.bev, HIGH);
	else
		bufferevent_setwatermark(t.bev, EV_READ, 0, HIGH);
	assert_int_equal(write(t.peer, src, N), N);
	run_for(t.base, 100);
	assert_true(t.max_input > 0);
	assert_true(t.max_input <= HIGH);
	assert_int_equal(evbuffer_get_length(bufferevent_get_input(t.bev)),
	                 t.max_input);
	if (own) {
		/* the read event is out of the loop (libevent itself calls
		 * the read callback again while the input stays at the mark
		 * with reading enabled: the owner's to drain or disable) */
		assert_false(event_pending(&t.bev->ev_read, EV_READ, NULL));
		assert_int_equal(evbuffer_copyout(bufferevent_get_input(t.bev),
		                                  t.got, t.max_input),
		                 (ev_ssize_t)t.max_input);
		mgw_read_drain(t.bev, t.max_input);
	} else {
		evbuffer_remove(bufferevent_get_input(t.bev), t.got, t.max_input);
	}
	t.drain = 1;
	t.got_len = t.max_input;
	shutdown(t.peer, SHUT_WR);
	event_base_dispatch(t.base);
	assert_int_equal(t.got_len, N);
	assert_memory_equal(t.got, src, N);
	teardown_t(&t);
	free(src);
}

static void test_high_watermark(void **state)
{
	(void)state;
	high_watermark(1);
}

static void test_high_watermark_libevent(void **state)
{
	(void)state;
	high_watermark(0);
}

/* a reset: the event callback gets READING|ERROR with ECONNRESET */
static void test_reset_is_an_error(void **state)
{
	struct linger lg = {1, 0};
	struct t t;

	(void)state;
	setup_t(&t, 64);
	assert_int_equal(write(t.peer, "abc", 3), 3);
	event_base_loop(t.base, EVLOOP_NONBLOCK);
	setsockopt(t.peer, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(t.peer);
	t.peer = -1;
	event_base_dispatch(t.base);
	assert_int_equal(t.got_len, 3);
	assert_int_equal(t.events, BEV_EVENT_READING | BEV_EVENT_ERROR);
	assert_int_equal(t.err, ECONNRESET);
	teardown_t(&t);
}

/* a read timeout still reaches the event callback */
static void test_read_timeout(void **state)
{
	struct timeval tv = {0, 20000};
	struct t t;

	(void)state;
	setup_t(&t, 64);
	bufferevent_set_timeouts(t.bev, &tv, NULL);
	event_base_dispatch(t.base);
	assert_int_equal(t.events, BEV_EVENT_READING | BEV_EVENT_TIMEOUT);
	teardown_t(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_in_order_then_eof),
		cmocka_unit_test(test_high_watermark),
		cmocka_unit_test(test_high_watermark_libevent),
		cmocka_unit_test(test_reset_is_an_error),
		cmocka_unit_test(test_read_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
