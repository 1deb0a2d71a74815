/* write_now.h - writing a plain-TCP bufferevent's output at once.
 *
 * A bufferevent writes on the writable event after data is added: write
 * interest goes on (epoll_ctl), the loop turns, writev, interest goes
 * off (epoll_ctl).  A whole answer or request is almost always taken by
 * the socket at once, so mgw_write_now writes it where it was queued and
 * then leaves the bufferevent as its own write would have left it: write
 * still enabled, the write event not pending.  On a loop with epoll's
 * changelist (proxy/worker.c) the event's add, still pending, and its
 * delete cancel out: no epoll_ctl at all, and no loop turn of latency.
 * What the socket does not take, or an error, is left to the bufferevent
 * (its event stays pending: it writes the rest, or meets the error again
 * and reports it as usual).  The bufferevent's own write callback is not
 * called for what is written here: callers run what it would have. */
#ifndef MGW_HTTP_WRITE_NOW_H
#define MGW_HTTP_WRITE_NOW_H

#include <event2/bufferevent.h>

/* bev must be a socket bufferevent (not TLS).  Returns 1 when the output
 * is empty afterwards. */
int mgw_write_now(struct bufferevent *bev);

/* Queues p[0..n) on bev's output, sending it on the socket first when
 * nothing is queued before it and writing is on: what the socket takes
 * never enters the evbuffer (no copy, no chain, none of its callbacks,
 * no write event), and only the rest is added.  An error on the send
 * leaves all of it queued, for the bufferevent to meet the error again
 * and report it.  bev must be a socket bufferevent (not TLS); an owner
 * that counts its output's bytes through the evbuffer's callbacks counts
 * *sent itself.  Sets *sent (may be NULL) to the bytes the socket took.
 * Returns 0, or MGW_ENOMEM when the rest could not be queued. */
int mgw_send_now(struct bufferevent *bev, const void *p, size_t n,
                 size_t *sent);

/* How many of p[0..n) the socket takes at once, when nothing is queued
 * on bev's output and writing is on; 0 otherwise or on any error.  The
 * caller queues the rest itself. */
size_t mgw_send_first(struct bufferevent *bev, const void *p, size_t n);

#endif
