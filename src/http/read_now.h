/* read_now.h - reading a plain-TCP bufferevent's input without FIONREAD.
 *
 * libevent's socket bufferevent reads with evbuffer_read, which first asks
 * the kernel how much is waiting (ioctl FIONREAD) and then reads at most
 * 4 KiB: two system calls for every small request or answer, and one
 * readv per 4 KiB of a larger body.  mgw_read_fast replaces the read
 * event's callback with one that reads at once (one read of up to
 * MGW_READ_FAST_MAX bytes, onto the stack, appended to the input), then
 * does what the bufferevent's own callback does after a read: the
 * owner's read callback runs when the input reaches the low watermark.
 * EOF and errors are reported the same way (the read is disabled and the
 * event callback gets BEV_EVENT_READING | EOF or ERROR, errno intact).
 * A read timeout is left to libevent's own callback, which reports it
 * exactly as before.
 *
 * The input's high watermark is kept here too (mgw_read_limit), not by
 * libevent: its watermark is an input-buffer callback that re-adds the
 * read event at every append and every drain, 4 to 6 event_add calls
 * for one proxied request, about 5 % of the gateway's instructions.
 * Here a read takes at most what fits under the mark; an input at the
 * mark takes the read event out of the loop, and the reader's drain
 * (mgw_read_drain) puts it back once there is room. */
#ifndef MGW_HTTP_READ_NOW_H
#define MGW_HTTP_READ_NOW_H

#include <event2/bufferevent.h>

/* bytes one read may take */
#define MGW_READ_FAST_MAX 16384

/* bev must be a socket bufferevent (not TLS) whose fd is set: call after
 * bufferevent_socket_new with an fd, or after bufferevent_socket_connect
 * (which sets the fd and so reassigns the read event).  Returns 0, or -1
 * when the read event could not be reassigned (bev then reads as it
 * did). */
int mgw_read_fast(struct bufferevent *bev);

/* Sets the input's high watermark: a bufferevent that mgw_read_fast
 * hooked keeps it as described above; any other (TLS) gets libevent's
 * own (bufferevent_setwatermark, low 0).  Call after mgw_read_fast. */
void mgw_read_limit(struct bufferevent *bev, size_t high);
/* Drains n bytes (0: none) from bev's input, and puts the read event
 * back in the loop when it was taken out for a full input and there is
 * room now.  Whoever consumes a bufferevent's input drains it with
 * this. */
void mgw_read_drain(struct bufferevent *bev, size_t n);

/* 1 when the loop holds news of bev's socket it has not handled yet: its
 * read event is active (bytes, EOF or an error the last poll reported,
 * still queued behind the callback running now).  Reads the event's own
 * flags (event_struct.h), as this file reads the bufferevent's. */
int mgw_read_pending_news(const struct bufferevent *bev);

#endif
