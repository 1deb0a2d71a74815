/* listener.c - evconnlistener wrapper: address parsing, SO_REUSEADDR,
 * IPv6-only binding, optional SO_REUSEPORT (one socket per worker thread),
 * bound address reporting, and a pause when accept()
 * runs out of descriptors (otherwise the loop would spin on EMFILE). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/listener.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/listener.h"
#include "util/parse.h"

/* Accept queue length.  libevent's default (128) overflows when a gateway
 * opens hundreds of upstream connections at once: the kernel then drops
 * SYNs and clients stall for a 1 s retransmit.  The kernel caps this at
 * net.core.somaxconn. */
#define MGW_LISTEN_BACKLOG 4096

/* How long accepting pauses after EMFILE/ENFILE. */
#define ACCEPT_PAUSE_MS 100

struct mgw_listener {
	struct evconnlistener *evl;
	struct event *resume;      /* re-enables accepting after EMFILE */
	mgw_accept_cb cb;
	void *arg;
	char addr[80];
};

const char *mgw_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, (unsigned)ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}

int mgw_sockaddr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
		    &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 0;
}

static void on_accept(struct evconnlistener *evl, evutil_socket_t fd,
                      struct sockaddr *sa, int salen, void *arg)
{
	struct mgw_listener *l = arg;
	l->cb(fd, sa, salen, l->arg);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_listener *l = arg;
	evconnlistener_enable(l->evl);
}

static void on_accept_error(struct evconnlistener *evl, void *arg)
{
	struct mgw_listener *l = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = {0, ACCEPT_PAUSE_MS * 1000};

	mgw_warn(NULL, "accept on %s: %s", l->addr, evutil_socket_error_to_string(err));
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		evconnlistener_disable(l->evl);
		evtimer_add(l->resume, &tv);
	}
}

/* Resolves host numerically first; a name ("localhost") goes through
 * getaddrinfo, which is acceptable here because listeners are set up
 * before the loop serves traffic. */
static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ss,
                   socklen_t *sslen)
{
	struct addrinfo hints, *res = NULL;
	char pbuf[8];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(pbuf, sizeof(pbuf), "%u", (unsigned)port);
	if (getaddrinfo(host, pbuf, &hints, &res) != 0 || !res)
		return MGW_EINVAL;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sslen = (socklen_t)res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Binds and listens on "HOST:PORT"; see listener.h for the contract. */
int mgw_listener_new(struct mgw_listener **out, struct event_base *base,
                     const char *hostport, mgw_accept_cb cb, void *arg,
                     char *bound, size_t boundlen)
{
	return mgw_listener_new_opts(out, base, hostport, 0, cb, arg, bound,
	                             boundlen);
}

int mgw_listener_new_opts(struct mgw_listener **out, struct event_base *base,
                          const char *hostport, unsigned flags,
                          mgw_accept_cb cb, void *arg, char *bound,
                          size_t boundlen)
{
	struct mgw_listener *l = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = 0;
	char host[256];
	uint16_t port;
	evutil_socket_t fd = -1;
	int one = 1, rc, saved;

	*out = NULL;
	if (mgw_parse_hostport(hostport, host, sizeof(host), &port) != 0)
		return MGW_EINVAL;
	rc = resolve(host, port, &ss, &sslen);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return MGW_ENOMEM;
	l->cb = cb;
	l->arg = arg;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail_io;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		goto fail_io;
	if ((flags & MGW_LISTEN_REUSEPORT) &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0)
		goto fail_io;
	if (ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0)
		goto fail_io;
	if (bind(fd, (struct sockaddr *)&ss, sslen) != 0)
		goto fail_io;
	l->evl = evconnlistener_new(base, on_accept, l,
	                            LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC |
	                                LEV_OPT_REUSEABLE,
	                            MGW_LISTEN_BACKLOG, fd);
	if (!l->evl)
		goto fail_io;
	fd = -1; /* owned by the evconnlistener now */
	evconnlistener_set_error_cb(l->evl, on_accept_error);
	l->resume = evtimer_new(base, on_resume, l);
	if (!l->resume) {
		mgw_listener_free(l);
		return MGW_ENOMEM;
	}
	sslen = sizeof(ss);
	if (getsockname(evconnlistener_get_fd(l->evl), (struct sockaddr *)&ss,
	                &sslen) != 0) {
		saved = errno;
		mgw_listener_free(l);
		errno = saved;
		return MGW_EIO;
	}
	mgw_sockaddr_str((struct sockaddr *)&ss, l->addr, sizeof(l->addr));
	if (bound && boundlen)
		snprintf(bound, boundlen, "%s", l->addr);
	*out = l;
	return 0;
fail_io:
	saved = errno;
	if (fd >= 0)
		close(fd);
	free(l);
	errno = saved;
	return MGW_EIO;
}

void mgw_listener_free(struct mgw_listener *l)
{
	if (!l)
		return;
	if (l->resume)
		event_free(l->resume);
	if (l->evl)
		evconnlistener_free(l->evl);
	free(l);
}
