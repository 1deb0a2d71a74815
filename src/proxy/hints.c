/* hints.c - legal configurations that leave a group unusable (hints.h). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "proxy/hints.h"
#include "util/redis_url.h"
#include "util/url.h"

/* The MCP endpoint clients use by convention. */
#define MCP_ENDPOINT "/mcp"

/* 1 when path (n bytes) starts with prefix up to a '/' or its end. */
static int starts_segment(const char *path, size_t n, const char *prefix)
{
	size_t pl = strlen(prefix);

	return pl <= n && memcmp(path, prefix, pl) == 0 &&
	       (pl == n || path[pl] == '/');
}

/* The path a route matches ("/mcp" for "/mcp" and "/mcp*"), its length
 * in *n, or NULL for a route that matches any path. */
static const char *route_path(const struct mgw_route_conf *r, size_t *n)
{
	const char *p = r->match_path;

	if (!p || strcmp(p, "*") == 0)
		return NULL;
	*n = strlen(p);
	if (*n && p[*n - 1] == '*')
		(*n)--;
	return p;
}

static int server_hint(const struct mgw_serve_conf *s,
                       const struct mgw_upstream_conf *g, const char *prefix,
                       const char *url, char *msg, size_t len)
{
	for (size_t ri = 0; ri < s->n_routes; ri++) {
		const struct mgw_route_conf *r = &s->routes[ri];
		size_t n = 0;
		const char *rp;

		if (!r->upstream || strcmp(r->upstream, g->name) != 0)
			continue;
		rp = route_path(r, &n);
		if (rp && starts_segment(rp, n, prefix)) {
			snprintf(msg, len, "upstream '%s': server URL path '%s' doubles "
			         "route path '%.*s' (requests go to %s%.*s): the "
			         "gateway appends the request path to the URL's path; "
			         "give the server without it (%s)", g->name, prefix,
			         (int)n, rp, prefix, (int)n, rp, url);
			return 1;
		}
		if (!rp) {
			size_t pl = strlen(prefix), el = strlen(MCP_ENDPOINT);

			if (pl < el || strcmp(prefix + pl - el, MCP_ENDPOINT) != 0)
				continue;
			snprintf(msg, len, "upstream '%s': server URL path '%s' doubles "
			         "the MCP endpoint '%s' (a request to %s goes to %s%s): "
			         "the gateway appends the request path to the URL's "
			         "path; give the server without it (%s)", g->name,
			         prefix, MCP_ENDPOINT, MCP_ENDPOINT, prefix,
			         MCP_ENDPOINT, url);
			return 1;
		}
	}
	return 0;
}

int mgw_hint_doubled_path(const struct mgw_serve_conf *s, size_t gi,
                          char *msg, size_t len)
{
	const struct mgw_upstream_conf *g = &s->upstreams[gi];

	for (size_t i = 0; i < g->n_servers; i++) {
		struct mgw_url u;
		char auth[MGW_URL_HOST_MAX + 16], base[MGW_URL_HOST_MAX + 32];

		if (mgw_url_parse(g->servers[i].url, &u, NULL, 0) != 0 || !u.path[0])
			continue;
		snprintf(base, sizeof(base), "%s://%s", u.tls ? "https" : "http",
		         mgw_url_authority(&u, auth, sizeof(auth)));
		if (server_hint(s, g, u.path, base, msg, len))
			return 1;
	}
	return 0;
}

int mgw_hint_redis_tls(const char *where, const char *url,
                       const struct mgw_redis_tls_conf *t, char *msg,
                       size_t len)
{
	char display[300], why[256];

	if (!url || strncmp(url, "rediss://", 9) != 0 || t->verify ||
	    mgw_redis_url_check(url, display, sizeof(display), why,
	                        sizeof(why)) != 0)
		return 0;
	snprintf(msg, len, "%s: TLS certificate verification is off: the "
	         "Redis server at %s is not authenticated (test setups only)",
	         where, display);
	return 1;
}

static size_t redis_conf_hint(const char *where, const struct mgw_redis_conf *r,
                              void (*emit)(void *, const char *), void *arg)
{
	char msg[512];

	if (!mgw_hint_redis_tls(where, r->url, &r->tls, msg, sizeof(msg)))
		return 0;
	emit(arg, msg);
	return 1;
}

size_t mgw_hint_redis_no_verify(const struct mgw_serve_conf *s,
                                void (*emit)(void *arg, const char *msg),
                                void *arg)
{
	const struct mgw_session_redis_conf *sr = &s->sessions.redis;
	char msg[512], where[300];
	size_t n = 0;

	if (mgw_hint_redis_tls("sessions.redis (tls.verify: false)", sr->url,
	                       &sr->tls, msg, sizeof(msg))) {
		emit(arg, msg);
		n++;
	}
	n += redis_conf_hint("rate_limits.redis (tls.verify: false)",
	                     &s->rate_limits.redis, emit, arg);
	n += redis_conf_hint("mrtr_guard.redis (tls.verify: false)",
	                     &s->mrtr_guard.redis, emit, arg);
	for (size_t gi = 0; gi < s->n_upstreams; gi++) {
		const struct mgw_upstream_conf *g = &s->upstreams[gi];

		snprintf(where, sizeof(where), "upstream '%.200s' "
		         "task_affinity.redis (tls.verify: false)",
		         g->name ? g->name : "?");
		n += redis_conf_hint(where, &g->affinity.redis, emit, arg);
	}
	return n;
}
