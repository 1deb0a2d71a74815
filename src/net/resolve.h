/* resolve.h - non-blocking host name resolution on libevent's evdns
 * (getaddrinfo-style: /etc/hosts, then the nameservers of resolv.conf).
 * Numeric addresses never touch DNS. */
#ifndef MGW_NET_RESOLVE_H
#define MGW_NET_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include <event2/event.h>

#define MGW_RESOLVE_MAX 8 /* addresses kept per answer */

struct mgw_resolver;
struct mgw_resolve_req;

/* Addresses of one answer, in the resolver's preference order. */
struct mgw_addrs {
	struct sockaddr_storage a[MGW_RESOLVE_MAX];
	socklen_t len[MGW_RESOLVE_MAX];
	size_t n;
};

/* The answer: err is 0 and addrs holds at least one address, or err is
 * MGW_ENOTFOUND (no such name / no address) or MGW_EIO (resolver failure)
 * and addrs is NULL.  msg describes a failure (static text).  The request
 * handle is gone when this runs. */
typedef void (*mgw_resolve_cb)(int err, const struct mgw_addrs *addrs,
                               const char *msg, void *arg);

/* Creates a resolver on base.  The evdns base (which reads resolv.conf and
 * /etc/hosts) is only created on the first non-numeric lookup.  Returns
 * NULL on no memory. */
struct mgw_resolver *mgw_resolver_new(struct event_base *base);

/* Cancels pending lookups (their callbacks do not run) and frees.  NULL
 * is allowed. */
void mgw_resolver_free(struct mgw_resolver *res);

/* Resolves host (a name, an IPv4 literal or an IPv6 literal without
 * brackets) for TCP port.  cb always runs later from the loop, never
 * before this returns, so callers need no re-entrancy care.  Returns 0 and
 * a handle in *out (may be NULL when the caller never cancels), or
 * MGW_EINVAL / MGW_ENOMEM / MGW_EIO with no callback. */
int mgw_resolve(struct mgw_resolver *res, const char *host, uint16_t port,
                mgw_resolve_cb cb, void *arg, struct mgw_resolve_req **out);

/* Cancels a pending lookup; its callback will not run. */
void mgw_resolve_cancel(struct mgw_resolve_req *q);

/* Parses a numeric host; 1 and *out filled when host is an address
 * literal, 0 otherwise. */
int mgw_resolve_numeric(const char *host, uint16_t port,
                        struct mgw_addrs *out);

#endif
