/* json_dump.c - the compact writer of a jansson value (see json.h).
 *
 * jansson's json_dumps costs some 30,000 instructions for a 250-byte
 * request: every object it enters is recorded in a hashtable under a key
 * printed with snprintf("%p") (its loop check), every integer goes
 * through snprintf, and every string is walked one code point at a time
 * through a callback.  `mgw_json_dump` writes the same bytes into one
 * growing buffer: plain runs of a string are copied whole, integers are
 * written digit by digit, and the values it is given are trees (a value
 * holding itself would recurse to the depth bound and fail). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "mcp/json.h"
#include "mcp/json_plain.h"
#include "util/decimal.h"

/* Deeper nesting fails the dump (jansson's own parser bound). */
#define DUMP_MAX_DEPTH 2048

struct out {
	char *p;
	size_t len, cap;
	int bad;
};

static int grow(struct out *o, size_t more)
{
	size_t cap = o->cap ? o->cap : 256;
	char *np;

	if (o->bad)
		return -1;
	while (cap - o->len < more + 1) {
		if (cap > ((size_t)-1) / 2)
			goto fail;
		cap *= 2;
	}
	np = realloc(o->p, cap);
	if (!np)
		goto fail;
	o->p = np;
	o->cap = cap;
	return 0;
fail:
	o->bad = 1;
	return -1;
}

/* Room for n more bytes (and the final NUL). */
static inline int room(struct out *o, size_t n)
{
	return o->cap - o->len > n ? 0 : grow(o, n);
}

static void put(struct out *o, const void *s, size_t n)
{
	if (room(o, n) != 0)
		return;
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void put_c(struct out *o, char c)
{
	if (room(o, 1) != 0)
		return;
	o->p[o->len++] = c;
}

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF (jansson's
 * rules, so that what it would refuse fails here too). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k;
	unsigned cp;

	if (c >= 0xC2 && c <= 0xDF)
		k = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		k = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		k = 4, cp = c & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return k;
}

static void put_escape(struct out *o, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	switch (c) {
	case '"': put(o, "\\\"", 2); return;
	case '\\': put(o, "\\\\", 2); return;
	case '\b': put(o, "\\b", 2); return;
	case '\f': put(o, "\\f", 2); return;
	case '\n': put(o, "\\n", 2); return;
	case '\r': put(o, "\\r", 2); return;
	case '\t': put(o, "\\t", 2); return;
	default: put(o, e, 6); return;
	}
}

static void put_string(struct out *o, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + n;

	put_c(o, '"');
	while (s < end && !o->bad) {
		const unsigned char *run = s;
		size_t k;

		s = mgw_json_plain_run(s, end);
		put(o, run, (size_t)(s - run));
		if (s == end)
			break;
		if (*s < 0x80) {
			put_escape(o, *s++);
			continue;
		}
		k = utf8_len(s, (size_t)(end - s));
		if (k == 0) {
			o->bad = 1;
			return;
		}
		put(o, s, k);
		s += k;
	}
	put_c(o, '"');
}

static void put_integer(struct out *o, json_int_t v)
{
	char d[MGW_DEC_BUF + 1];
	uint64_t u = (uint64_t)v;
	size_t n = 0;

	if (v < 0) {
		d[n++] = '-';
		u = 0 - u;
	}
	n += mgw_dec(d + n, u);
	put(o, d, n);
}

/* Reals are rare in what the gateway writes: jansson prints them, so
 * the digits are its own. */
static void put_real(struct out *o, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!s) {
		o->bad = 1;
		return;
	}
	put(o, s, strlen(s));
	free(s);
}

static void put_value(struct out *o, const json_t *v, unsigned depth);

static void put_object(struct out *o, const json_t *v, unsigned depth)
{
	const char *k;
	size_t klen;
	json_t *m;
	int first = 1;

	put_c(o, '{');
	json_object_keylen_foreach((json_t *)v, k, klen, m) {
		if (!first)
			put_c(o, ',');
		first = 0;
		put_string(o, k, klen);
		put_c(o, ':');
		put_value(o, m, depth + 1);
		if (o->bad)
			return;
	}
	put_c(o, '}');
}

static void put_array(struct out *o, const json_t *v, unsigned depth)
{
	size_t n = json_array_size(v);

	put_c(o, '[');
	for (size_t i = 0; i < n && !o->bad; i++) {
		if (i)
			put_c(o, ',');
		put_value(o, json_array_get(v, i), depth + 1);
	}
	put_c(o, ']');
}

static void put_value(struct out *o, const json_t *v, unsigned depth)
{
	const char *text;
	size_t len;

	if (depth > DUMP_MAX_DEPTH || !v) {
		o->bad = 1;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: put_object(o, v, depth); return;
	case JSON_ARRAY: put_array(o, v, depth); return;
	case JSON_STRING:
		if (mgw_json_wide_number((json_t *)v, &text, &len))
			put(o, text, len);
		else
			put_string(o, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER: put_integer(o, json_integer_value(v)); return;
	case JSON_REAL: put_real(o, v); return;
	case JSON_TRUE: put(o, "true", 4); return;
	case JSON_FALSE: put(o, "false", 5); return;
	case JSON_NULL: put(o, "null", 4); return;
	}
	o->bad = 1;
}

char *mgw_json_dump(const json_t *v, size_t *len)
{
	struct out o = { NULL, 0, 0, 0 };

	put_value(&o, v, 0);
	if (o.bad || room(&o, 0) != 0) {
		free(o.p);
		return NULL;
	}
	o.p[o.len] = '\0';
	if (len)
		*len = o.len;
	return o.p;
}
