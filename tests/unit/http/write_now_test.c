/* write_now_test.c - sending a whole answer where it is queued
 * (src/http/write_now.c: mgw_send_now), on a real TCP connection over
 * loopback: with nothing queued the socket takes the bytes and the
 * output stays empty; behind queued bytes they are queued after them;
 * what a full socket does not take is queued and written later, every
 * byte in order; with writing held back nothing is sent early. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "http/write_now.h"
#include "tcp_pair.h"

struct t {
	struct event_base *base;
	struct bufferevent *bev;
	int peer; /* the reading end */
};

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));
	int fd;

	assert_non_null(t);
	t->base = event_base_new();
	tcp_pair(&fd, &t->peer);
	evutil_make_socket_nonblocking(fd);
	t->bev = bufferevent_socket_new(t->base, fd, BEV_OPT_CLOSE_ON_FREE);
	assert_non_null(t->bev);
	bufferevent_enable(t->bev, EV_WRITE);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	bufferevent_free(t->bev);
	close(t->peer);
	event_base_free(t->base);
	free(t);
	return 0;
}

/* Reads exactly n bytes from the peer, running the loop meanwhile (so
 * that queued output is written), within a bounded number of turns. */
static void peer_read(struct t *t, unsigned char *buf, size_t n)
{
	size_t got = 0;

	evutil_make_socket_nonblocking(t->peer);
	for (int turn = 0; got < n && turn < 200000; turn++) {
		ssize_t r = recv(t->peer, buf + got, n - got, 0);

		if (r > 0)
			got += (size_t)r;
		else
			event_base_loop(t->base, EVLOOP_NONBLOCK);
	}
	assert_int_equal(got, n);
}

static void test_sent_when_nothing_queued(void **state)
{
	struct t *t = *state;
	unsigned char buf[16];

	size_t sent = 0;

	assert_int_equal(mgw_send_now(t->bev, "hello", 5, &sent), 0);
	assert_int_equal(sent, 5);
	assert_int_equal(evbuffer_get_length(bufferevent_get_output(t->bev)), 0);
	peer_read(t, buf, 5);
	assert_memory_equal(buf, "hello", 5);
}

static void test_queued_behind_queued(void **state)
{
	struct t *t = *state;
	unsigned char buf[16];

	assert_int_equal(evbuffer_add(bufferevent_get_output(t->bev), "one ", 4), 0);
	size_t sent = 1;

	assert_int_equal(mgw_send_now(t->bev, "two", 3, &sent), 0);
	assert_int_equal(sent, 0);
	assert_int_equal(evbuffer_get_length(bufferevent_get_output(t->bev)), 7);
	peer_read(t, buf, 7);
	assert_memory_equal(buf, "one two", 7);
}

static void test_held_back(void **state)
{
	struct t *t = *state;
	unsigned char buf[8];

	bufferevent_disable(t->bev, EV_WRITE);
	assert_int_equal(mgw_send_now(t->bev, "later", 5, NULL), 0);
	assert_int_equal(evbuffer_get_length(bufferevent_get_output(t->bev)), 5);
	assert_true(recv(t->peer, buf, sizeof(buf), MSG_DONTWAIT) < 0);
	bufferevent_enable(t->bev, EV_WRITE);
	peer_read(t, buf, 5);
	assert_memory_equal(buf, "later", 5);
}

/* More than the socket's buffers hold (8 MiB through a 64 KiB send
 * buffer): the rest is queued and written as the peer reads, in order. */
static void test_partial_send(void **state)
{
	struct t *t = *state;
	size_t n = 8 << 20, i;
	unsigned char *big = malloc(n), *got = malloc(n);
	int sndbuf = 64 * 1024; /* well under n, whatever the machine's default */

	assert_non_null(big);
	assert_non_null(got);
	assert_int_equal(setsockopt(bufferevent_getfd(t->bev), SOL_SOCKET,
	                            SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	for (i = 0; i < n; i++)
		big[i] = (unsigned char)(i * 7 + (i >> 12));
	size_t sent = 0;

	assert_int_equal(mgw_send_now(t->bev, big, n, &sent), 0);
	assert_true(sent > 0 && sent < n);
	assert_true(evbuffer_get_length(bufferevent_get_output(t->bev)) > 0);
	assert_int_equal(mgw_send_now(t->bev, "end", 3, NULL), 0); /* behind the rest */
	peer_read(t, got, n);
	assert_memory_equal(got, big, n);
	peer_read(t, got, 3);
	assert_memory_equal(got, "end", 3);
	free(big);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sent_when_nothing_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queued_behind_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_send, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
