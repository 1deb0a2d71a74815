/* headers.c - ordered header list and RFC 9110 field checks. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "http/headers.h"

void mgw_headers_init(struct mgw_headers *h) { memset(h, 0, sizeof(*h)); }

/* Block layout: a pointer to the previous block, then string bytes. */
#define BLOCK_LINK sizeof(char *)
#define BLOCK_MIN 1024

void mgw_headers_deinit(struct mgw_headers *h)
{
	char *b = h->block, *prev;

	while (b) {
		memcpy(&prev, b, sizeof(prev));
		free(b);
		b = prev;
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}

char *mgw_headers_space(struct mgw_headers *h, size_t n)
{
	char *p;

	if (!h->block || h->block_cap - h->block_used < n) {
		size_t cap = h->block_cap ? h->block_cap * 2 : BLOCK_MIN;
		char *b;

		if (n > SIZE_MAX / 2 - BLOCK_LINK)
			return NULL;
		while (cap < n + BLOCK_LINK)
			cap *= 2;
		if (!(b = malloc(cap)))
			return NULL;
		memcpy(b, &h->block, sizeof(h->block));
		h->block = b;
		h->block_used = BLOCK_LINK;
		h->block_cap = cap;
	}
	p = h->block + h->block_used;
	h->block_used += n;
	return p;
}

/* Room for one more field in h->v.  Returns 0 or MGW_ENOMEM. */
static int field_room(struct mgw_headers *h)
{
	size_t cap;
	struct mgw_header *v;

	if (h->n < h->cap)
		return 0;
	cap = h->cap ? h->cap * 2 : 16;
	v = realloc(h->v, cap * sizeof(*v));
	if (!v)
		return MGW_ENOMEM;
	h->v = v;
	h->cap = cap;
	return 0;
}

int mgw_headers_add_ref(struct mgw_headers *h, char *name, size_t nlen,
                        char *value, size_t vlen)
{
	struct mgw_header *f;

	if (field_room(h) != 0)
		return MGW_ENOMEM;
	f = &h->v[h->n++];
	f->name = name;
	f->value = value;
	f->name_len = nlen;
	f->value_len = vlen;
	h->bytes += nlen + vlen;
	return 0;
}

int mgw_headers_add(struct mgw_headers *h, const char *name, size_t nlen,
                    const char *value, size_t vlen)
{
	char *b;

	if (nlen > SIZE_MAX / 4 || vlen > SIZE_MAX / 4 || field_room(h) != 0 ||
	    !(b = mgw_headers_space(h, nlen + 1 + vlen + 1)))
		return MGW_ENOMEM;
	memcpy(b, name, nlen);
	b[nlen] = '\0';
	memcpy(b + nlen + 1, value, vlen);
	b[nlen + 1 + vlen] = '\0';
	h->checked = 0;
	return mgw_headers_add_ref(h, b, nlen, b + nlen + 1, vlen);
}

int mgw_headers_adds(struct mgw_headers *h, const char *name, const char *value)
{
	return mgw_headers_add(h, name, strlen(name), value, strlen(value));
}

int mgw_headers_add_all(struct mgw_headers *dst, const struct mgw_headers *src)
{
	for (size_t i = 0; src && i < src->n; i++)
		if (mgw_headers_add(dst, src->v[i].name, src->v[i].name_len,
		                    src->v[i].value, src->v[i].value_len) != 0)
			return MGW_ENOMEM;
	return 0;
}

int mgw_headers_clone(struct mgw_headers *dst, const struct mgw_headers *src)
{
	size_t bytes = 0;
	char *b, *w;

	if (dst->n || dst->v || dst->block)
		return MGW_EINVAL;
	if (!src || src->n == 0)
		return 0;
	for (size_t i = 0; i < src->n; i++)
		bytes += src->v[i].name_len + src->v[i].value_len + 2;
	dst->v = malloc(src->n * sizeof(*dst->v));
	b = malloc(BLOCK_LINK + bytes);
	if (!dst->v || !b) {
		free(b);
		free(dst->v);
		dst->v = NULL;
		return MGW_ENOMEM;
	}
	{
		char *none = NULL; /* no previous block */

		memcpy(b, &none, sizeof(none));
	}
	w = b + BLOCK_LINK;
	for (size_t i = 0; i < src->n; i++) {
		const struct mgw_header *f = &src->v[i];
		struct mgw_header *g = &dst->v[i];

		g->name = w;
		memcpy(w, f->name, f->name_len + 1);
		w += f->name_len + 1;
		g->value = w;
		memcpy(w, f->value, f->value_len + 1);
		w += f->value_len + 1;
		g->name_len = f->name_len;
		g->value_len = f->value_len;
	}
	dst->n = dst->cap = src->n;
	dst->bytes = src->bytes;
	dst->checked = src->checked;
	dst->block = b;
	dst->block_used = dst->block_cap = BLOCK_LINK + bytes;
	return 0;
}

int mgw_headers_append_value(struct mgw_headers *h, size_t i, const char *sep,
                              const char *add, size_t alen)
{
	struct mgw_header *f = &h->v[i];
	size_t slen = strlen(sep), vlen;
	char *b;

	if (alen > SIZE_MAX / 4 || f->value_len > SIZE_MAX / 4)
		return MGW_ENOMEM;
	vlen = f->value_len + slen + alen;
	if (!(b = mgw_headers_space(h, f->name_len + 1 + vlen + 1)))
		return MGW_ENOMEM;
	memcpy(b, f->name, f->name_len + 1);
	memcpy(b + f->name_len + 1, f->value, f->value_len);
	memcpy(b + f->name_len + 1 + f->value_len, sep, slen);
	memcpy(b + f->name_len + 1 + f->value_len + slen, add, alen);
	b[f->name_len + 1 + vlen] = '\0';
	f->name = b;
	f->value = b + f->name_len + 1;
	h->checked = 0;
	h->bytes += vlen - f->value_len;
	f->value_len = vlen;
	return 0;
}

size_t mgw_headers_remove(struct mgw_headers *h, const char *name)
{
	size_t w = 0, removed = 0, len = strlen(name);

	for (size_t i = 0; i < h->n; i++) {
		if (mgw_header_is(&h->v[i], name, len)) {
			h->bytes -= h->v[i].name_len + h->v[i].value_len;
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

/* RFC 9110 tchar: ALPHA / DIGIT / "!#$%&'*+-.^_`|~" */
const unsigned char mgw_tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

int mgw_header_name_valid(const char *name, size_t len)
{
	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!mgw_tchar[(unsigned char)name[i]])
			return 0;
	return 1;
}

int mgw_header_value_valid(const char *value, size_t len)
{
	/* 8 bytes at a time while no byte needs a look (HTAB does) */
	size_t i = mgw_ctl_free_words((const unsigned char *)value, len);

	for (; i < len; i++) {
		unsigned char c = (unsigned char)value[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 0;
	}
	return 1;
}

int mgw_header_is_hop_by_hop(const char *name, size_t len)
{
	/* Called for every field in both directions of every proxied request:
	 * dispatch on the length, so that most names cost no compare. */
	/* the first byte, case folded, before the call (as mgw_header_is) */
#define IS(lit) (((name[0] ^ lit[0]) & ~0x20) == 0 && \
                 strncasecmp(name, "" lit, len) == 0)
	switch (len) {
	case 2: return IS("te");
	case 7: return IS("trailer") || IS("upgrade");
	case 10: return IS("connection") || IS("keep-alive");
	case 14: return IS("http2-settings");
	case 16: return IS("proxy-connection");
	case 17: return IS("transfer-encoding");
	case 18: return IS("proxy-authenticate");
	default: return 0;
	}
#undef IS
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

int mgw_headers_connection_lists(const struct mgw_headers *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (MGW_HEADER_IS(&h->v[i], "connection") &&
		    mgw_header_list_has(h->v[i].value, name))
			return 1;
	return 0;
}

/* RFC 3986 unreserved / sub-delims, the bytes of a reg-name but "%"
 * (a table: every Host of every request is read through it). */
static const unsigned char reg_name[256] = {
	['-'] = 1, ['.'] = 1, ['_'] = 1, ['~'] = 1, ['!'] = 1, ['$'] = 1,
	['&'] = 1, ['\''] = 1, ['('] = 1, [')'] = 1, ['*'] = 1, ['+'] = 1,
	[','] = 1, [';'] = 1, ['='] = 1,
#define R6(x) [x] = 1, [x + 1] = 1, [x + 2] = 1, [x + 3] = 1, [x + 4] = 1, \
	[x + 5] = 1
#define R10(x) R6(x), [x + 6] = 1, [x + 7] = 1, [x + 8] = 1, [x + 9] = 1
	R10('0'), R10('A'), R10('K'), R6('U'), R10('a'), R10('k'), R6('u'),
#undef R10
#undef R6
};

static int reg_name_byte(unsigned char b)
{
	return reg_name[b];
}

/* "[" IPv6address / IPvFuture "]" (RFC 3986 3.2.2); s spans the
 * brackets. */
static int ip_literal_valid(const char *s, size_t n)
{
	char buf[64];
	struct in6_addr a;
	size_t i;

	if (n < 3 || s[0] != '[' || s[n - 1] != ']')
		return 0;
	s++;
	n -= 2;
	if (s[0] == 'v' || s[0] == 'V') { /* "v" 1*HEXDIG "." 1*(...) */
		for (i = 1; i < n && isxdigit((unsigned char)s[i]); i++)
			;
		if (i == 1 || i >= n - 1 || s[i] != '.')
			return 0;
		for (i++; i < n; i++)
			if (!reg_name_byte((unsigned char)s[i]) && s[i] != ':')
				return 0;
		return 1;
	}
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(AF_INET6, buf, &a) == 1;
}

int mgw_http_authority_valid(const char *s, size_t n)
{
	size_t hlen = n, i;
	const char *colon;

	if (n == 0)
		return 1;
	if (s[0] == '[') {
		const char *e = memchr(s, ']', n);

		if (!e)
			return 0;
		hlen = (size_t)(e - s) + 1;
		if (!ip_literal_valid(s, hlen))
			return 0;
		if (hlen < n && s[hlen] != ':')
			return 0;
	} else {
		colon = memchr(s, ':', n);
		if (colon)
			hlen = (size_t)(colon - s);
		if (hlen == 0)
			return 0; /* ":80": no host */
		for (i = 0; i < hlen; i++) {
			unsigned char b = (unsigned char)s[i];

			if (b == '%') {
				if (i + 2 >= hlen)
					return 0;
				if (!isxdigit((unsigned char)s[i + 1]) ||
				    !isxdigit((unsigned char)s[i + 2]))
					return 0;
				i += 2;
			} else if (!reg_name_byte(b)) {
				return 0;
			}
		}
	}
	if (hlen < n) { /* ":" port: digits, at most 65535 */
		unsigned long port = 0;

		if (n - hlen - 1 > 5)
			return 0;
		for (i = hlen + 1; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return 0;
			port = port * 10 + (unsigned long)(s[i] - '0');
		}
		if (port > 65535)
			return 0;
	}
	return 1;
}
