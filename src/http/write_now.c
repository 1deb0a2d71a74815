/* write_now.c - a socket bufferevent's output written at once (see
 * write_now.h). */
#include "autoconf.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>

#include "core/errors.h"
#include "http/write_now.h"

int mgw_write_now(struct bufferevent *bev)
{
	struct evbuffer *out = bufferevent_get_output(bev);
	evutil_socket_t fd = bufferevent_getfd(bev);

	if (evbuffer_get_length(out) == 0)
		return 1;
	if (!(bufferevent_get_enabled(bev) & EV_WRITE))
		return 0; /* the owner holds writes back: leave them queued */
	/* A socket bufferevent keeps its output's start frozen but while its
	 * own write callback writes (evbuffer_write then fails at once,
	 * errno untouched): thaw it the same way for this write. */
	errno = 0;
	if (evbuffer_write(out, fd) < 0 && errno == 0) {
		evbuffer_unfreeze(out, 1);
		(void)evbuffer_write(out, fd);
		evbuffer_freeze(out, 1);
	}
	if (evbuffer_get_length(out) > 0)
		return 0;
	/* what bufferevent_sock's write callback does once all is out */
	event_del(&bev->ev_write);
	return 1;
}

size_t mgw_send_first(struct bufferevent *bev, const void *p, size_t n)
{
	ssize_t w;

	if (!n || evbuffer_get_length(bufferevent_get_output(bev)) != 0 ||
	    !(bufferevent_get_enabled(bev) & EV_WRITE))
		return 0;
	w = send(bufferevent_getfd(bev), p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	return w > 0 ? (size_t)w : 0; /* EAGAIN, or an error the bufferevent
	                               * will meet */
}

int mgw_send_now(struct bufferevent *bev, const void *p, size_t n,
                 size_t *sent)
{
	size_t w = mgw_send_first(bev, p, n);

	if (sent)
		*sent = w;
	if (w < n && evbuffer_add(bufferevent_get_output(bev),
	                          (const char *)p + w, n - w) != 0)
		return MGW_ENOMEM;
	return 0;
}
