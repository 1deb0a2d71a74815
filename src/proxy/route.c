/* route.c - compiling the routes: section of a snapshot and picking the
 * first route that matches a request (see route.h for the rules). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "http/headers.h"
#include "mcp/sep2243.h"
#include "proxy/route.h"
#include "proxy/upstream.h"

struct mgw_routes *mgw_routes_new(const struct mgw_serve_conf *conf,
                                  const struct mgw_upstreams *ups, char *err,
                                  size_t errlen)
{
	struct mgw_routes *rt = calloc(1, sizeof(*rt));

	if (!rt)
		goto nomem;
	if (conf->n_routes) {
		rt->v = calloc(conf->n_routes, sizeof(*rt->v));
		if (!rt->v)
			goto nomem;
	}
	for (size_t i = 0; i < conf->n_routes; i++) {
		const struct mgw_route_conf *rc = &conf->routes[i];
		struct mgw_route *r = &rt->v[i];
		const char *p = rc->match_path;

		r->conf = rc;
		r->index = i;
		r->group = mgw_upstreams_find(ups, rc->upstream);
		if (!r->group) {
			snprintf(err, errlen, "routes[%zu]: unknown upstream '%s'", i,
			         rc->upstream ? rc->upstream : "");
			goto fail;
		}
		if (p && strcmp(p, "*") != 0) {
			size_t n = strlen(p);

			if (p[0] != '/') {
				snprintf(err, errlen,
				         "routes[%zu]: match.path '%s' must start with '/' (or be '*')",
				         i, p);
				goto fail;
			}
			r->path = p;
			r->path_prefix = p[n - 1] == '*';
			r->path_len = r->path_prefix ? n - 1 : n;
		}
		r->mcp_method = rc->match_mcp_method;
		if (rc->match_mcp_name) {
			r->mcp_name = rc->match_mcp_name;
			r->mcp_name_len = strlen(rc->match_mcp_name);
			rt->need_name = 1;
		}
		r->tmo.connect = rc->connect_timeout;
		r->tmo.first_byte = rc->first_byte_timeout;
		r->tmo.idle = rc->idle_timeout;
		r->tmo.total = rc->total_timeout;
		rt->n++;
	}
	return rt;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	mgw_routes_free(rt);
	return NULL;
}

void mgw_routes_free(struct mgw_routes *rt)
{
	if (!rt)
		return;
	free(rt->v);
	free(rt);
}

int mgw_route_path_matches(const struct mgw_route *r, const char *path)
{
	if (!r->path)
		return 1;
	if (!path)
		return 0;
	if (r->path_prefix)
		return strncmp(path, r->path, r->path_len) == 0;
	return strcmp(path, r->path) == 0;
}

/* The only value of header name with surrounding SP/HTAB trimmed (as
 * SEP-2243 validation compares it), or NULL when absent or sent twice. */
static const char *single_value(const struct mgw_headers *h, const char *name,
                                size_t *len)
{
	const char *v, *e;

	if (!h || mgw_headers_count(h, name) != 1)
		return NULL;
	v = mgw_headers_get(h, name);
	while (*v == ' ' || *v == '\t')
		v++;
	e = v + strlen(v);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*len = (size_t)(e - v);
	return v;
}

const struct mgw_route *mgw_routes_match(const struct mgw_routes *rt,
                                         const char *path,
                                         const struct mgw_headers *h,
                                         int use_headers)
{
	const struct mgw_route *found = NULL;
	const char *method = NULL;
	size_t method_len = 0;
	char *name = NULL;        /* decoded Mcp-Name */
	size_t name_len = 0;
	int name_done = 0;        /* decoding attempted */

	if (use_headers)
		method = single_value(h, "mcp-method", &method_len);
	for (size_t i = 0; i < rt->n && !found; i++) {
		const struct mgw_route *r = &rt->v[i];

		if (!mgw_route_path_matches(r, path))
			continue;
		if (r->mcp_method) {
			if (!method || method_len != strlen(r->mcp_method) ||
			    memcmp(method, r->mcp_method, method_len) != 0)
				continue;
		}
		if (r->mcp_name) {
			if (!use_headers)
				continue;
			if (!name_done) {
				size_t vlen;
				const char *v = single_value(h, "mcp-name", &vlen);

				name_done = 1;
				if (v)
					name = mgw_sep2243_decode(v, vlen, &name_len);
			}
			if (!name || name_len != r->mcp_name_len ||
			    memcmp(name, r->mcp_name, name_len) != 0)
				continue;
		}
		found = r;
	}
	free(name);
	return found;
}
