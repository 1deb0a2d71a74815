/* url.c - upstream server URL parsing (see url.h).  Deliberately small:
 * only the shapes a server list needs, and strict, because a URL that
 * parses "somehow" sends traffic somewhere nobody meant. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>

#include "core/errors.h"
#include "util/parse.h"
#include "util/url.h"

static int fail(char *why, size_t whylen, const char *msg)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", msg);
	return MGW_EINVAL;
}

/* DNS names and IPv4 literals: letters, digits, '-', '.', '_' (the last
 * for internal names such as Docker's). */
static int host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

static int parse_port(const char *s, size_t n, uint16_t *port)
{
	long long v;
	char buf[8];

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
	if (mgw_parse_int(buf, 1, 65535, &v) != 0)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int mgw_url_parse(const char *s, struct mgw_url *u, char *why, size_t whylen)
{
	const char *p, *auth_end, *host, *host_end, *port = NULL;
	size_t hlen, plen;

	memset(u, 0, sizeof(*u));
	if (strncasecmp(s, "http://", 7) == 0) {
		p = s + 7;
	} else if (strncasecmp(s, "https://", 8) == 0) {
		u->tls = 1;
		p = s + 8;
	} else {
		return fail(why, whylen, "must start with http:// or https://");
	}
	for (const char *q = s; *q; q++) {
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
			return fail(why, whylen,
			            "must be visible ASCII without spaces");
		if (*q == '?' || *q == '#')
			return fail(why, whylen,
			            "must not have a query or fragment");
	}
	auth_end = p + strcspn(p, "/");
	if (memchr(p, '@', (size_t)(auth_end - p)))
		return fail(why, whylen, "must not contain user information");
	if (*p == '[') {
		host = p + 1;
		host_end = memchr(host, ']', (size_t)(auth_end - host));
		if (!host_end)
			return fail(why, whylen, "unterminated '[' in the host");
		if (host_end + 1 < auth_end) {
			if (host_end[1] != ':')
				return fail(why, whylen, "unexpected text after ']'");
			port = host_end + 2;
		}
		u->ipv6 = 1;
	} else {
		host = p;
		host_end = memchr(p, ':', (size_t)(auth_end - p));
		if (host_end)
			port = host_end + 1;
		else
			host_end = auth_end;
		for (const char *q = host; q < host_end; q++)
			if (!host_char(*q))
				return fail(why, whylen,
				            "host must be a name, IPv4 or [IPv6] address");
	}
	hlen = (size_t)(host_end - host);
	if (hlen == 0)
		return fail(why, whylen, "has no host");
	if (hlen >= sizeof(u->host))
		return fail(why, whylen, "host is too long");
	memcpy(u->host, host, hlen);
	u->host[hlen] = '\0';
	if (u->ipv6) {
		struct in6_addr a6;
		if (inet_pton(AF_INET6, u->host, &a6) != 1)
			return fail(why, whylen, "invalid IPv6 address");
	}
	if (port) {
		if (parse_port(port, (size_t)(auth_end - port), &u->port) != 0)
			return fail(why, whylen, "port must be 1 to 65535");
	} else {
		u->port = u->tls ? 443 : 80;
	}
	plen = strlen(auth_end);
	while (plen > 0 && auth_end[plen - 1] == '/')
		plen--;
	if (plen >= sizeof(u->path))
		return fail(why, whylen, "path is too long");
	memcpy(u->path, auth_end, plen);
	u->path[plen] = '\0';
	return 0;
}

const char *mgw_url_authority(const struct mgw_url *u, char *buf,
                              size_t buflen)
{
	snprintf(buf, buflen, u->ipv6 ? "[%s]:%u" : "%s:%u", u->host,
	         (unsigned)u->port);
	return buf;
}
