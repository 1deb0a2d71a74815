/* headers_up.c - the header list sent upstream (headers_up.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "http/headers.h"
#include "proxy/headers_up.h"


/* Client-supplied forwarding fields, dropped unless trusted: they would
 * let a client pose as someone else to the upstream. */
static int is_forwarding_field(const struct mgw_header *f)
{
	return MGW_HEADER_IS(f, "forwarded") ||
	       MGW_HEADER_IS(f, "x-forwarded-for") ||
	       MGW_HEADER_IS(f, "x-forwarded-host") ||
	       MGW_HEADER_IS(f, "x-forwarded-proto") ||
	       MGW_HEADER_IS(f, "x-real-ip");
}

/* The address part of "IP:PORT" / "[V6]:PORT" into buf (brackets kept
 * for IPv6, as Forwarded wants them). */
static const char *peer_ip(const char *peer, char *buf, size_t len, int *v6)
{
	const char *colon;
	size_t n;

	*v6 = peer[0] == '[';
	if (*v6) {
		const char *e = strchr(peer, ']');
		n = e ? (size_t)(e - peer) + 1 : strlen(peer);
	} else {
		colon = strrchr(peer, ':');
		n = colon ? (size_t)(colon - peer) : strlen(peer);
	}
	if (n >= len)
		n = len - 1;
	memcpy(buf, peer, n);
	buf[n] = '\0';
	return buf;
}

/* A Forwarded value being written: what does not fit is cut (never
 * more than the buffer). */
struct fwd {
	char b[512];
	size_t n;
};

static void put(struct fwd *w, const char *s, size_t len)
{
	if (len > sizeof(w->b) - 1 - w->n)
		len = sizeof(w->b) - 1 - w->n;
	memcpy(w->b + w->n, s, len);
	w->n += len;
}
#define PUT_LIT(w, lit) put((w), "" lit, sizeof(lit) - 1)

/* value as an RFC 9110 quoted-string. */
static void put_quoted(struct fwd *w, const char *value)
{
	size_t cap = sizeof(w->b) - 1;

	if (w->n < cap)
		w->b[w->n++] = '"';
	for (; *value && w->n + 3 <= cap; value++) {
		if (*value == '"' || *value == '\\')
			w->b[w->n++] = '\\';
		w->b[w->n++] = *value;
	}
	if (w->n < cap)
		w->b[w->n++] = '"';
}

/* RFC 9113 8.2.3: an HTTP/2 client may split Cookie into crumbs; they go
 * upstream as one field, joined with "; ", in one copy (joining crumb by
 * crumb would copy the value once per crumb).  first is the index in in
 * of the first crumb. */
static int join_cookies(struct mgw_headers *out, const struct mgw_headers *in,
                        size_t first)
{
	const struct mgw_header *f = &in->v[first];
	size_t len = 0, n = 0;
	char *v;
	int rc;

	for (size_t i = first; i < in->n; i++)
		if (MGW_HEADER_IS(&in->v[i], "cookie")) {
			len += in->v[i].value_len + (n ? 2 : 0);
			n++;
		}
	if (n == 1)
		return mgw_headers_add(out, f->name, f->name_len, f->value,
		                       f->value_len);
	if (!(v = malloc(len + 1)))
		return MGW_ENOMEM;
	len = 0;
	for (size_t i = first; i < in->n; i++)
		if (MGW_HEADER_IS(&in->v[i], "cookie")) {
			if (len) {
				memcpy(v + len, "; ", 2);
				len += 2;
			}
			memcpy(v + len, in->v[i].value, in->v[i].value_len);
			len += in->v[i].value_len;
		}
	rc = mgw_headers_add(out, f->name, f->name_len, v, len);
	free(v);
	return rc;
}

int mgw_proxy_build_headers(struct mgw_headers *out,
                            const struct mgw_headers *in,
                            const struct mgw_serve_conf *conf,
                            const char *peer, int tls, const char *authority,
                            int h2)
{
	size_t last_xff = (size_t)-1;    /* index in out of the last XFF kept */
	int cookies_joined = 0;
	char ip[80];
	int v6 = 0;
	/* fields a Connection header names are hop-by-hop too; most
	 * requests have none, so the per-field look is skipped */
	int conn = in && mgw_headers_get(in, "connection") != NULL;

	for (size_t i = 0; in && i < in->n; i++) {
		const struct mgw_header *f = &in->v[i];

		if (mgw_header_is_hop_by_hop(f->name, f->name_len) ||
		    (conn && mgw_headers_connection_lists(in, f->name)) ||
		    MGW_HEADER_IS(f, "host") || MGW_HEADER_IS(f, "content-length") ||
		    MGW_HEADER_IS(f, "expect"))
			continue;
		if (is_forwarding_field(f) && !conf->trust_forwarded)
			continue;
		if (h2 && MGW_HEADER_IS(f, "cookie")) {
			if (!cookies_joined && join_cookies(out, in, i) != 0)
				return MGW_ENOMEM;
			cookies_joined = 1;
			continue;
		}
		if (MGW_HEADER_IS(f, "x-forwarded-for"))
			last_xff = out->n;
		if (mgw_headers_add(out, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	if (!conf->add_forwarded)
		return 0;
	peer_ip(peer ? peer : "", ip, sizeof(ip), &v6);
	{
		struct fwd w;

		w.n = 0;
		PUT_LIT(&w, "for=");
		if (v6)
			put_quoted(&w, ip);
		else
			put(&w, ip, strlen(ip));
		if (tls)
			PUT_LIT(&w, ";proto=https");
		else
			PUT_LIT(&w, ";proto=http");
		if (authority && *authority) {
			PUT_LIT(&w, ";host=");
			put_quoted(&w, authority);
		}
		if (mgw_headers_add(out, "Forwarded", 9, w.b, w.n) != 0)
			return MGW_ENOMEM;
	}
	{
		/* X-Forwarded-For carries IPv6 without brackets */
		const char *bare = ip;
		char tmp[80];

		if (v6) {
			size_t n = strlen(ip);
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(n > 2 ? n - 2 : 0), ip + 1);
			bare = tmp;
		}
		if (last_xff != (size_t)-1) {
			/* trusted chain: extend the last field, keep its place */
			if (mgw_headers_append_value(out, last_xff, ", ", bare,
			                             strlen(bare)) != 0)
				return MGW_ENOMEM;
		} else if (mgw_headers_adds(out, "X-Forwarded-For", bare) != 0) {
			return MGW_ENOMEM;
		}
	}
	return 0;
}

/* The client's credentials for the gateway: Authorization, and
 * Proxy-Authorization (RFC 9110 11.7.2: meant for the proxy it reached,
 * here the gateway, not for the servers behind it). */
static int is_credential(const struct mgw_header *f)
{
	return MGW_HEADER_IS(f, "authorization") ||
	       MGW_HEADER_IS(f, "proxy-authorization");
}

int mgw_proxy_upstream_auth(struct mgw_headers *out,
                            const struct mgw_headers *in,
                            enum mgw_upstream_auth_conf mode,
                            const char *credential)
{
	size_t n = in ? mgw_headers_count(in, "authorization") : 0;
	size_t np = in ? mgw_headers_count(in, "proxy-authorization") : 0;

	if (mode == MGW_UPAUTH_PASSTHROUGH ||
	    (mode == MGW_UPAUTH_STRIP && !n && !np))
		return 0;
	if (mode == MGW_UPAUTH_STATIC && n == 1 && !np &&
	    strcmp(mgw_headers_get(in, "authorization"), credential) == 0)
		return 0; /* already the group's (a replay's kept credentials) */
	for (size_t i = 0; in && i < in->n; i++) {
		const struct mgw_header *f = &in->v[i];

		if (is_credential(f))
			continue;
		if (mgw_headers_add(out, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	if (mode == MGW_UPAUTH_STATIC &&
	    mgw_headers_adds(out, "Authorization", credential) != 0)
		return MGW_ENOMEM;
	return 1;
}
