/* redis_url.c - Redis URLs (see redis_url.h). */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "util/parse.h"
#include "util/redis_url.h"

/* Decodes %XX escapes of n bytes at s into a new string; NULL on a bad
 * escape (*bad set) or no memory. */
static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0'
	       : isxdigit((unsigned char)c) ? (tolower((unsigned char)c) - 'a' + 10)
	                                    : -1;
}

static char *percent_decode(const char *s, size_t n, int *bad)
{
	char *out = malloc(n + 1), *o = out;

	*bad = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		hi = i + 2 < n ? hexval(s[i + 1]) : -1;
		lo = i + 2 < n ? hexval(s[i + 2]) : -1;
		if (hi < 0 || lo < 0 || (hi | lo) == 0) { /* %00 too */
			*bad = 1;
			free(out);
			return NULL;
		}
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return out;
}

/* Splits "redis[s]://[[USER]:PASSWORD@]HOST[:PORT][/DB]" or takes
 * "unix:PATH".  The userinfo ends at the last '@' (a password may hold
 * '/' and '@'); %XX escapes in it are decoded.  Error messages show the
 * URL with the userinfo replaced by "***". */
static int parse(const char *url, struct mgw_redis_url *r, char *err,
                 size_t errlen)
{
	const char *p, *at, *slash, *scheme;
	char hostport[300], shown[320];
	size_t n;
	long long db = 0;

	memset(r, 0, sizeof(*r));
	if (strncmp(url, "unix:", 5) == 0 && url[5]) {
		r->unix_path = strdup(url + 5);
		snprintf(r->display, sizeof(r->display), "%.290s", url);
		if (!r->unix_path)
			snprintf(err, errlen, "out of memory");
		return r->unix_path ? 0 : MGW_ENOMEM;
	}
	r->tls = strncmp(url, "rediss://", 9) == 0;
	if (!r->tls && strncmp(url, "redis://", 8) != 0) {
		snprintf(err, errlen,
		         "redis URL must be redis://HOST[:PORT][/DB], "
		         "rediss://HOST[:PORT][/DB] or unix:PATH: %.200s",
		         strchr(url, '@') ? "(not shown: it holds a password)" : url);
		return MGW_EINVAL;
	}
	scheme = r->tls ? "rediss://" : "redis://";
	p = url + strlen(scheme);
	at = strrchr(p, '@');
	snprintf(shown, sizeof(shown), "%s%s%.280s", scheme, at ? "***@" : "",
	         at ? at + 1 : p);
	if (at) {
		const char *pw = memchr(p, ':', (size_t)(at - p));
		int bad;

		if (pw && pw > p) {
			r->user = percent_decode(p, (size_t)(pw - p), &bad);
			if (!r->user) {
				snprintf(err, errlen, bad ? "redis URL has a bad "
				         "%%XX escape in its user name: %s"
				         : "out of memory%.0s", shown);
				return bad ? MGW_EINVAL : MGW_ENOMEM;
			}
		}
		pw = pw ? pw + 1 : p;
		r->password = percent_decode(pw, (size_t)(at - pw), &bad);
		if (!r->password) {
			snprintf(err, errlen, bad ? "redis URL has a bad %%XX escape "
			                            "in its password: %s"
			                          : "out of memory%.0s", shown);
			return bad ? MGW_EINVAL : MGW_ENOMEM;
		}
		p = at + 1;
	}
	slash = strchr(p, '/');
	n = slash ? (size_t)(slash - p) : strlen(p);
	if (n == 0 || n >= sizeof(hostport) - 6) {
		snprintf(err, errlen, "redis URL has no host: %s", shown);
		return MGW_EINVAL;
	}
	memcpy(hostport, p, n);
	hostport[n] = '\0';
	if (slash && slash[1] &&
	    mgw_parse_int(slash + 1, 0, 1 << 20, &db) != 0) {
		snprintf(err, errlen, "redis URL has a bad database number: %s",
		         shown);
		return MGW_EINVAL;
	}
	r->db = (int)db;
	/* A port is optional; parse_hostport wants one, so add the default. */
	if (!strchr(hostport, ':') ||
	    (hostport[0] == '[' && !strstr(hostport, "]:")))
		strcat(hostport, ":6379");
	if (mgw_parse_hostport(hostport, r->host, sizeof(r->host), &r->port) !=
	    0 || r->port == 0 || !r->host[0]) {
		snprintf(err, errlen, "redis URL has a bad host or port: %s", shown);
		return MGW_EINVAL;
	}
	snprintf(r->display, sizeof(r->display), "%s%s%s%s", scheme, hostport,
	         r->db ? "/" : "", r->db ? slash + 1 : "");
	return 0;
}

void mgw_redis_url_free(struct mgw_redis_url *u)
{
	free(u->user);
	free(u->password);
	free(u->unix_path);
	u->user = u->password = u->unix_path = NULL;
}

int mgw_redis_url_parse(const char *url, struct mgw_redis_url *out,
                        char *err, size_t errlen)
{
	int rc = parse(url, out, err, errlen);

	if (rc != 0)
		mgw_redis_url_free(out); /* a password parsed before the error */
	return rc;
}

int mgw_redis_url_check(const char *url, char *display, size_t displen,
                        char *err, size_t errlen)
{
	struct mgw_redis_url u;
	int rc = mgw_redis_url_parse(url, &u, err, errlen);

	if (rc == 0 && display)
		snprintf(display, displen, "%s", u.display);
	mgw_redis_url_free(&u);
	return rc;
}
