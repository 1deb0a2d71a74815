/* read_now.c - a socket bufferevent's input read without FIONREAD (see
 * read_now.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/uio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>

#include "http/read_now.h"

/* libevent's own read callback: the same function for every socket
 * bufferevent, taken from the first one hooked. */
static _Atomic(event_callback_fn) lib_readcb;

/* Reads once into reserved space.  Returns the bytes read, 0 at EOF, -1
 * with errno on error (EAGAIN included), -2 when no space could be
 * reserved. */
static ssize_t read_into(struct evbuffer *in, evutil_socket_t fd, size_t max)
{
	struct evbuffer_iovec v[2];
	struct iovec iov[2];
	ssize_t r;
	int n, i;
	size_t left;

	evbuffer_unfreeze(in, 0);
	n = evbuffer_reserve_space(in, (ev_ssize_t)max, v, 2);
	if (n <= 0) {
		evbuffer_freeze(in, 0);
		return -2;
	}
	/* the extents may be larger than asked for: read no more than max */
	left = max;
	for (i = 0; i < n; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = left < v[i].iov_len ? left : v[i].iov_len;
		left -= iov[i].iov_len;
	}
	r = readv(fd, iov, n);
	left = r > 0 ? (size_t)r : 0;
	for (i = 0; i < n; i++) {
		v[i].iov_len = left < iov[i].iov_len ? left : iov[i].iov_len;
		left -= v[i].iov_len;
	}
	if (r > 0) {
		int saved = errno;
		(void)evbuffer_commit_space(in, v, v[1].iov_len && n > 1 ? 2 : 1);
		errno = saved;
	}
	evbuffer_freeze(in, 0);
	return r;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct bufferevent *bev = arg;
	size_t max = MGW_READ_FAST_MAX;
	ssize_t r;
	int err;

	if (bev->wm_read.high != 0) {
		size_t len = evbuffer_get_length(bev->input);
		max = len < bev->wm_read.high ? bev->wm_read.high - len : 0;
		if (max > MGW_READ_FAST_MAX)
			max = MGW_READ_FAST_MAX;
	}
	if (what == EV_TIMEOUT || max == 0) {
		/* the timeout report, or the watermark suspension: libevent's */
		atomic_load(&lib_readcb)(fd, what, arg);
		return;
	}
	bufferevent_incref(bev);
	r = read_into(bev->input, fd, max);
	if (r > 0) {
		bufferevent_trigger(bev, EV_READ, 0);
	} else if (r == -2) {
		atomic_load(&lib_readcb)(fd, what, arg);
	} else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		err = errno;
		bufferevent_disable(bev, EV_READ);
		errno = err;
		bufferevent_trigger_event(
			bev, BEV_EVENT_READING | (r == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR),
			0);
	}
	bufferevent_decref(bev);
}

int mgw_read_fast(struct bufferevent *bev)
{
	struct event *ev = &bev->ev_read;
	event_callback_fn cb = event_get_callback(ev);
	evutil_socket_t fd = event_get_fd(ev);
	int pending;

	if (cb == on_readable)
		return 0;
	if (fd < 0 || event_get_callback_arg(ev) != bev)
		return -1;
	event_callback_fn none = NULL;
	if (!atomic_compare_exchange_strong(&lib_readcb, &none, cb) && none != cb)
		return -1; /* not the socket bufferevent's callback */
	pending = event_pending(ev, EV_READ, NULL);
	event_del(ev);
	if (event_assign(ev, bufferevent_get_base(bev), fd,
	                 EV_READ | EV_PERSIST | EV_FINALIZE, on_readable, bev) != 0) {
		(void)event_assign(ev, bufferevent_get_base(bev), fd,
		                   EV_READ | EV_PERSIST | EV_FINALIZE, cb, bev);
		return -1;
	}
	if (pending)
		event_add(ev, evutil_timerisset(&bev->timeout_read) ? &bev->timeout_read
		                                                    : NULL);
	return 0;
}
