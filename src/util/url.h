/* url.h - parser for the upstream server URLs of the configuration
 * ("http://HOST[:PORT][/prefix]", "https://..."). Shared by the config
 * checks (so check-config names a bad URL) and the proxy runtime (so both
 * agree on what a URL means). */
#ifndef MGW_UTIL_URL_H
#define MGW_UTIL_URL_H

#include <stddef.h>
#include <stdint.h>

#define MGW_URL_HOST_MAX 256
#define MGW_URL_PATH_MAX 1024

struct mgw_url {
	int tls;                      /* 1 for https */
	int ipv6;                     /* host is an IPv6 literal (was bracketed) */
	char host[MGW_URL_HOST_MAX];  /* name or address, without brackets */
	uint16_t port;                /* given, or 80 (http) / 443 (https) */
	char path[MGW_URL_PATH_MAX];  /* the path prefix without a trailing
	                               * '/'; "" when the URL has no path or
	                               * just "/" */
};

/* Parses s.  Accepted: scheme http or https (case-insensitive), a host
 * (DNS name, IPv4 literal or bracketed IPv6 literal), an optional port
 * 1..65535, an optional path of visible ASCII.  Refused: userinfo,
 * query, fragment, empty host, spaces and control bytes.  Returns 0 and
 * fills *u, or MGW_EINVAL with a short reason in why (may be NULL). */
int mgw_url_parse(const char *s, struct mgw_url *u, char *why, size_t whylen);

/* Writes "host:port" or "[v6]:port" into buf (an HTTP authority, also
 * used in log names).  Returns buf. */
const char *mgw_url_authority(const struct mgw_url *u, char *buf,
                              size_t buflen);

#endif
