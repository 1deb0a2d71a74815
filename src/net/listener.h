/* listener.h - TCP listeners on IPv4/IPv6 over evconnlistener, and socket
 * address formatting shared by the HTTP layer. */
#ifndef MGW_NET_LISTENER_H
#define MGW_NET_LISTENER_H

#include <stddef.h>

#include <event2/event.h>
#include <event2/util.h>

struct sockaddr;
struct mgw_listener;

/* A new connection; fd is non-blocking and owned by the callee. */
typedef void (*mgw_accept_cb)(evutil_socket_t fd, const struct sockaddr *sa,
                              int salen, void *arg);

/* Binds and listens on "HOST:PORT" ("[::1]:0" for IPv6, port 0 picks a free
 * port) with SO_REUSEADDR, non-blocking and close-on-exec sockets.  IPv6
 * listeners are IPv6-only so "0.0.0.0:P" and "[::]:P" can coexist.  The
 * bound address is written to bound (may be NULL).  On success *out owns
 * the listener.  Returns 0, MGW_EINVAL (bad address), MGW_ENOMEM or MGW_EIO
 * (bind/listen failed; errno kept). */
int mgw_listener_new(struct mgw_listener **out, struct event_base *base,
                     const char *hostport, mgw_accept_cb cb, void *arg,
                     char *bound, size_t boundlen);

/* Flags of mgw_listener_new_opts. */
enum {
	/* SO_REUSEPORT: several sockets (one per worker thread) bind the same
	 * address and the kernel spreads new connections over them.  Every
	 * socket sharing the port must set it. */
	MGW_LISTEN_REUSEPORT = 1u << 0,
};

/* mgw_listener_new with flags (MGW_LISTEN_*); mgw_listener_new is this
 * with flags 0.  Same returns. */
int mgw_listener_new_opts(struct mgw_listener **out, struct event_base *base,
                          const char *hostport, unsigned flags,
                          mgw_accept_cb cb, void *arg, char *bound,
                          size_t boundlen);

/* Stops accepting and closes the socket.  NULL is allowed. */
void mgw_listener_free(struct mgw_listener *l);

/* Formats sa as "IP:PORT", IPv6 as "[IP]:PORT".  Writes "?" for families
 * other than IPv4/IPv6.  Returns buf. */
const char *mgw_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len);
/* 1 for 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8. */
int mgw_sockaddr_is_loopback(const struct sockaddr *sa);

#endif
