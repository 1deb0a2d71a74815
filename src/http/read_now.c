/* read_now.c - a socket bufferevent's input read without FIONREAD (see
 * read_now.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "http/read_now.h"

/* libevent's own read callback: the same function for every socket
 * bufferevent, taken from the first one hooked. */
static _Atomic(event_callback_fn) lib_readcb;

/* Reads once into a buffer on the stack and appends what came: a small
 * read then takes a small chain (one the allocator's per-thread cache
 * serves), where reserving MGW_READ_FAST_MAX in the evbuffer would take
 * a 16 KiB chain for every request; the copy of what was read costs
 * less than that allocation.  Returns the bytes read, 0 at EOF, -1 with
 * errno on error (EAGAIN included), -2 when the bytes could not be
 * appended (no memory: they are lost, so the caller reports an error).
 * recv, not read: the socket call skips the file layer's checks (about
 * 1.5 % of a proxied request's CPU in a perf profile of the kernel). */
static ssize_t read_into(struct evbuffer *in, evutil_socket_t fd, size_t max)
{
	unsigned char buf[MGW_READ_FAST_MAX];
	ssize_t r = recv(fd, buf, max < sizeof(buf) ? max : sizeof(buf), 0);
	int rc;

	if (r <= 0)
		return r;
	evbuffer_unfreeze(in, 0);
	rc = evbuffer_add(in, buf, (size_t)r);
	evbuffer_freeze(in, 0);
	return rc == 0 ? r : -2;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct bufferevent *bev = arg;
	size_t max = MGW_READ_FAST_MAX;
	ssize_t r;
	int err;

	if (what == EV_TIMEOUT) {
		/* the timeout report: libevent's */
		atomic_load(&lib_readcb)(fd, what, arg);
		return;
	}
	if (bev->wm_read.high != 0) {
		size_t len = evbuffer_get_length(bev->input);

		if (len >= bev->wm_read.high) {
			/* the input is full: stop polling (the socket would
			 * stay readable) until mgw_read_drain makes room */
			event_del(&bev->ev_read);
			return;
		}
		max = bev->wm_read.high - len;
		if (max > MGW_READ_FAST_MAX)
			max = MGW_READ_FAST_MAX;
	}
	bufferevent_incref(bev);
	r = read_into(bev->input, fd, max);
	if (r > 0) {
		bufferevent_trigger(bev, EV_READ, 0);
	} else if (r == -2) {
		bufferevent_disable(bev, EV_READ);
		errno = ENOMEM;
		bufferevent_trigger_event(bev, BEV_EVENT_READING | BEV_EVENT_ERROR, 0);
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

int mgw_read_pending_news(const struct bufferevent *bev)
{
	return (bev->ev_read.ev_evcallback.evcb_flags &
	        (EVLIST_ACTIVE | EVLIST_ACTIVE_LATER)) != 0;
}

void mgw_read_limit(struct bufferevent *bev, size_t high)
{
	if (event_get_callback(&bev->ev_read) != on_readable) {
		bufferevent_setwatermark(bev, EV_READ, 0, high);
		return;
	}
	/* where libevent keeps it, without its input callback */
	bev->wm_read.high = high;
	mgw_read_drain(bev, 0);
}

void mgw_read_drain(struct bufferevent *bev, size_t n)
{
	struct event *ev = &bev->ev_read;

	if (n)
		evbuffer_drain(bev->input, n);
	/* on_readable took the read event out when the input was full; an
	 * enabled read whose event is not in the loop is that, or the
	 * moment before bufferevent_enable re-adds it */
	if ((bev->enabled & EV_READ) &&
	    !(ev->ev_evcallback.evcb_flags & EVLIST_INSERTED) &&
	    event_get_callback(ev) == on_readable &&
	    evbuffer_get_length(bev->input) < bev->wm_read.high)
		event_add(ev, evutil_timerisset(&bev->timeout_read) ? &bev->timeout_read
		                                                    : NULL);
}
