/* resolve.c - asynchronous name resolution over evdns_getaddrinfo.
 *
 * Every answer is delivered through an event made active on the loop, even
 * when it is known at once (numeric hosts, /etc/hosts hits that evdns
 * answers before returning): callers then never see their callback run
 * inside their own call, which keeps connection code free of re-entrancy.
 * The evdns base is created lazily so that processes that only talk to
 * numeric addresses never read resolv.conf. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>

#include "core/errors.h"
#include "net/resolve.h"

struct mgw_resolve_req {
	struct mgw_resolver *res;
	struct mgw_resolve_req *prev, *next;
	struct evdns_getaddrinfo_request *gai; /* outstanding evdns lookup */
	struct event *ev;                      /* delivers the answer */
	mgw_resolve_cb cb;
	void *arg;
	int err;
	const char *msg;
	struct mgw_addrs addrs;
	unsigned gai_done : 1;   /* evdns called back (or never started) */
	unsigned cancelled : 1;  /* freed by on_gai when evdns calls back */
};

struct mgw_resolver {
	struct event_base *base;
	struct evdns_base *dns;
	struct mgw_resolve_req *reqs;
};

struct mgw_resolver *mgw_resolver_new(struct event_base *base)
{
	struct mgw_resolver *res = calloc(1, sizeof(*res));

	if (res)
		res->base = base;
	return res;
}

static void unlink_req(struct mgw_resolve_req *q)
{
	if (q->prev)
		q->prev->next = q->next;
	else if (q->res)
		q->res->reqs = q->next;
	if (q->next)
		q->next->prev = q->prev;
	q->prev = q->next = NULL;
	q->res = NULL;
}

static void req_free(struct mgw_resolve_req *q)
{
	unlink_req(q);
	if (q->ev)
		event_free(q->ev);
	free(q);
}

void mgw_resolve_cancel(struct mgw_resolve_req *q)
{
	if (!q || q->cancelled)
		return;
	unlink_req(q);
	if (!q->gai_done && q->gai) {
		/* evdns calls on_gai with EVUTIL_EAI_CANCEL, which frees q */
		q->cancelled = 1;
		evdns_getaddrinfo_cancel(q->gai);
		return;
	}
	req_free(q);
}

void mgw_resolver_free(struct mgw_resolver *res)
{
	if (!res)
		return;
	while (res->reqs)
		mgw_resolve_cancel(res->reqs);
	if (res->dns)
		evdns_base_free(res->dns, 0);
	free(res);
}

int mgw_resolve_numeric(const char *host, uint16_t port, struct mgw_addrs *out)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&out->a[0];
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->a[0];

	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		out->len[0] = sizeof(*s4);
		out->n = 1;
		return 1;
	}
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		out->len[0] = sizeof(*s6);
		out->n = 1;
		return 1;
	}
	return 0;
}

static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_resolve_req *q = arg;
	mgw_resolve_cb cb = q->cb;
	void *cbarg = q->arg;
	int err = q->err;
	const char *msg = q->msg;
	struct mgw_addrs addrs = q->addrs;

	(void)fd;
	(void)what;
	req_free(q); /* the handle is gone before the callback, as promised */
	cb(err, err ? NULL : &addrs, msg, cbarg);
}

static void on_gai(int result, struct evutil_addrinfo *ai, void *arg)
{
	struct mgw_resolve_req *q = arg;

	q->gai_done = 1;
	q->gai = NULL;
	if (q->cancelled) {
		if (ai)
			evutil_freeaddrinfo(ai);
		req_free(q);
		return;
	}
	if (result == 0) {
		for (struct evutil_addrinfo *p = ai; p && q->addrs.n < MGW_RESOLVE_MAX;
		     p = p->ai_next) {
			if ((p->ai_family != AF_INET && p->ai_family != AF_INET6) ||
			    p->ai_addrlen > sizeof(q->addrs.a[0]))
				continue;
			memcpy(&q->addrs.a[q->addrs.n], p->ai_addr, p->ai_addrlen);
			q->addrs.len[q->addrs.n++] = (socklen_t)p->ai_addrlen;
		}
		if (q->addrs.n == 0) {
			q->err = MGW_ENOTFOUND;
			q->msg = "name has no IPv4/IPv6 address";
		}
	} else if (result == EVUTIL_EAI_NONAME || result == EVUTIL_EAI_NODATA ||
	           result == EVUTIL_EAI_FAMILY) {
		q->err = MGW_ENOTFOUND;
		q->msg = "name does not resolve";
	} else {
		q->err = MGW_EIO;
		q->msg = "resolver failure";
	}
	if (ai)
		evutil_freeaddrinfo(ai);
	event_active(q->ev, 0, 0);
}

int mgw_resolve(struct mgw_resolver *res, const char *host, uint16_t port,
                mgw_resolve_cb cb, void *arg, struct mgw_resolve_req **out)
{
	struct mgw_resolve_req *q = NULL;
	struct evutil_addrinfo hints;
	char serv[8];

	if (out)
		*out = NULL;
	if (!res || !host || !*host || !cb)
		return MGW_EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return MGW_ENOMEM;
	q->cb = cb;
	q->arg = arg;
	q->ev = event_new(res->base, -1, 0, on_deliver, q);
	if (!q->ev) {
		free(q);
		return MGW_ENOMEM;
	}
	q->res = res;
	q->next = res->reqs;
	if (res->reqs)
		res->reqs->prev = q;
	res->reqs = q;

	if (mgw_resolve_numeric(host, port, &q->addrs)) {
		q->gai_done = 1;
		event_active(q->ev, 0, 0);
		goto done;
	}
	if (!res->dns) {
		res->dns = evdns_base_new(res->base,
		                          EVDNS_BASE_INITIALIZE_NAMESERVERS |
		                              EVDNS_BASE_DISABLE_WHEN_INACTIVE);
		if (!res->dns) {
			req_free(q);
			return MGW_EIO;
		}
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	snprintf(serv, sizeof(serv), "%u", (unsigned)port);
	/* May call on_gai before returning (then it returns NULL). */
	struct evdns_getaddrinfo_request *g =
	    evdns_getaddrinfo(res->dns, host, serv, &hints, on_gai, q);
	if (!q->gai_done)
		q->gai = g;
done:
	if (out)
		*out = q;
	return 0;
}
