/* check_origin.c - the Origin check (MCP transports: a server MUST
 * validate Origin against DNS rebinding).  With security.allowed_origins
 * set, a request whose Origin is not listed is answered 403 (-32015)
 * before any upstream is contacted; "null" is refused; a request without
 * Origin passes.  Origins are compared as RFC 6454 serializes them:
 * scheme and host case-insensitively, the port with the scheme's default
 * (80, 443) made explicit.  The entry "self" allows an Origin whose
 * host[:port] is the request's own Host / :authority.  Nothing is looked
 * at when the list is empty (the default). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http/server.h"
#include "proxy/checks.h"
#include "proxy/conf_serve-t.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline-t.h"
#include "proxy/txn.h"

struct origin {
	const char *scheme, *host;
	size_t scheme_len, host_len;
	unsigned port;             /* explicit, else the scheme's default; 0:
	                            * neither */
};

static unsigned default_port(const char *scheme, size_t n)
{
	if (n == 4 && strncasecmp(scheme, "http", 4) == 0)
		return 80;
	if (n == 5 && strncasecmp(scheme, "https", 5) == 0)
		return 443;
	return 0;
}

/* host[:port] of s (n bytes) into o (the host as written, brackets
 * kept); dport when no port is written. */
static int parse_hostport(const char *s, size_t n, unsigned dport,
                          struct origin *o)
{
	size_t h = n;
	unsigned long port = 0;

	if (n && s[0] == '[') {
		const char *e = memchr(s, ']', n);

		if (!e)
			return -1;
		h = (size_t)(e - s) + 1;
		if (h < n && s[h] != ':')
			return -1;
	} else {
		const char *c = memchr(s, ':', n);

		if (c)
			h = (size_t)(c - s);
	}
	if (h == 0)
		return -1;
	for (size_t i = 0; i < h; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == '/' || s[i] == '@' ||
		    s[i] == '?' || s[i] == '#' || (unsigned char)s[i] >= 0x7f)
			return -1;
	o->host = s;
	o->host_len = h;
	o->port = dport;
	if (h == n)
		return 0;
	if (n - h - 1 == 0 || n - h - 1 > 5)
		return -1;
	for (size_t i = h + 1; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		port = port * 10 + (unsigned long)(s[i] - '0');
	}
	if (port == 0 || port > 65535)
		return -1;
	o->port = (unsigned)port;
	return 0;
}

/* "scheme://host[:port]" and nothing else (no path, no userinfo). */
static int parse_origin(const char *s, struct origin *o)
{
	const char *sep = strstr(s, "://");
	size_t sl;

	if (!sep || sep == s)
		return -1;
	sl = (size_t)(sep - s);
	for (size_t i = 0; i < sl; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (i && ((s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		             s[i] == '-' || s[i] == '.'))))
			return -1;
	o->scheme = s;
	o->scheme_len = sl;
	return parse_hostport(sep + 3, strlen(sep + 3), default_port(s, sl), o);
}

static int same_host(const struct origin *a, const struct origin *b)
{
	return a->host_len == b->host_len &&
	       strncasecmp(a->host, b->host, a->host_len) == 0 &&
	       a->port == b->port;
}

int mgw_origin_entry_check(const char *s, char *why, size_t whylen)
{
	struct origin o;

	if (strcmp(s, "self") == 0 || parse_origin(s, &o) == 0)
		return 0;
	snprintf(why, whylen, "must be an origin (scheme://host[:port], no "
	         "path) or \"self\"");
	return -1;
}

int mgw_origin_allowed(const char *origin, const char *authority,
                       char *const *allowed, size_t n)
{
	struct origin o, a;

	if (parse_origin(origin, &o) != 0)
		return 0; /* "null" and anything malformed */
	for (size_t i = 0; i < n; i++) {
		if (strcmp(allowed[i], "self") == 0) {
			if (authority &&
			    parse_hostport(authority, strlen(authority),
			                   default_port(o.scheme, o.scheme_len),
			                   &a) == 0 &&
			    same_host(&o, &a))
				return 1;
			continue;
		}
		if (parse_origin(allowed[i], &a) == 0 &&
		    a.scheme_len == o.scheme_len &&
		    strncasecmp(a.scheme, o.scheme, a.scheme_len) == 0 &&
		    same_host(&o, &a))
			return 1;
	}
	return 0;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const struct mgw_serve_conf *conf = t->pl->conf;
	const char *origin;

	if (conf->n_allowed_origins == 0)
		return MGW_CHECK_PASS;
	origin = mgw_http_req_header(t->x, "origin");
	if (!origin ||
	    mgw_origin_allowed(origin, mgw_http_authority(t->x),
	                       conf->allowed_origins, conf->n_allowed_origins))
		return MGW_CHECK_PASS;
	t->note = "origin not allowed";
	mgw_txn_fail(t, MGW_PERR_ORIGIN, NULL);
	return MGW_CHECK_ANSWERED;
}

const struct mgw_check mgw_check_origin = {
	"origin", MGW_PHASE_REQUEST, MGW_H_ALL, run,
};
