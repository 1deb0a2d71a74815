/* headers.c - ordered header list and RFC 9110 field checks. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "http/headers.h"

void mgw_headers_init(struct mgw_headers *h) { memset(h, 0, sizeof(*h)); }

void mgw_headers_deinit(struct mgw_headers *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].name);
		free(h->v[i].value);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}

int mgw_headers_add(struct mgw_headers *h, const char *name, size_t nlen,
                    const char *value, size_t vlen)
{
	struct mgw_header *f;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct mgw_header *v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return MGW_ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	f = &h->v[h->n];
	f->name = malloc(nlen + 1);
	f->value = malloc(vlen + 1);
	if (!f->name || !f->value) {
		free(f->name);
		free(f->value);
		return MGW_ENOMEM;
	}
	memcpy(f->name, name, nlen);
	f->name[nlen] = '\0';
	memcpy(f->value, value, vlen);
	f->value[vlen] = '\0';
	f->name_len = nlen;
	f->value_len = vlen;
	h->bytes += nlen + vlen;
	h->n++;
	return 0;
}

int mgw_headers_adds(struct mgw_headers *h, const char *name, const char *value)
{
	return mgw_headers_add(h, name, strlen(name), value, strlen(value));
}

const char *mgw_headers_get(const struct mgw_headers *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcasecmp(h->v[i].name, name) == 0)
			return h->v[i].value;
	return NULL;
}

size_t mgw_headers_count(const struct mgw_headers *h, const char *name)
{
	size_t c = 0;
	for (size_t i = 0; i < h->n; i++)
		c += strcasecmp(h->v[i].name, name) == 0;
	return c;
}

size_t mgw_headers_remove(struct mgw_headers *h, const char *name)
{
	size_t w = 0, removed = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (strcasecmp(h->v[i].name, name) == 0) {
			h->bytes -= h->v[i].name_len + h->v[i].value_len;
			free(h->v[i].name);
			free(h->v[i].value);
			removed++;
		} else {
			h->v[w++] = h->v[i];
		}
	}
	h->n = w;
	return removed;
}

int mgw_headers_set(struct mgw_headers *h, const char *name, const char *value)
{
	mgw_headers_remove(h, name);
	return mgw_headers_adds(h, name, value);
}

int mgw_header_name_valid(const char *name, size_t len)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";
	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || (c && strchr(extra, c))))
			return 0;
	}
	return 1;
}

int mgw_header_value_valid(const char *value, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 0;
	}
	return 1;
}

int mgw_header_is_hop_by_hop(const char *name)
{
	/* Called for every field in both directions of every proxied request:
	 * dispatch on length so most names cost one strlen and no compare. */
	switch (strlen(name)) {
	case 2: return strcasecmp(name, "te") == 0;
	case 7: return strcasecmp(name, "trailer") == 0 ||
	               strcasecmp(name, "upgrade") == 0;
	case 10: return strcasecmp(name, "connection") == 0 ||
	                strcasecmp(name, "keep-alive") == 0;
	case 14: return strcasecmp(name, "http2-settings") == 0;
	case 16: return strcasecmp(name, "proxy-connection") == 0;
	case 17: return strcasecmp(name, "transfer-encoding") == 0;
	case 18: return strcasecmp(name, "proxy-authenticate") == 0;
	default: return 0;
	}
}

int mgw_header_list_has(const char *value, const char *token)
{
	size_t tl = strlen(token);
	const char *p = value;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *e = p;
		while (*e && *e != ',')
			e++;
		const char *t = e;
		while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if ((size_t)(t - p) == tl && strncasecmp(p, token, tl) == 0)
			return 1;
		p = e;
	}
	return 0;
}
