/* jsonw.c - bounded flat JSON object writer (jsonw.h). */
#include "autoconf.h"

#include <math.h>
#include <string.h>

#include "util/jsonw.h"

/* Bytes kept for the closing "}" and the NUL. */
#define TAIL 2

static size_t room(const struct mgw_jsonw *w)
{
	return w->cap > w->len + TAIL ? w->cap - w->len - TAIL : 0;
}

void mgw_jsonw_init(struct mgw_jsonw *w, char *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
	if (cap >= TAIL + 1) {
		buf[0] = '{';
		buf[1] = '\0';
		w->len = 1;
	} else {
		w->cap = 0;
		w->cut = 1;
	}
}

/* Writes ,"key": when it and need more bytes fit; 0 when not (nothing
 * written, the member is left out). */
static int member(struct mgw_jsonw *w, const char *key, size_t need)
{
	size_t klen = strlen(key), n = (w->members ? 1 : 0) + klen + 3;

	if (w->cap == 0 || n + need > room(w)) {
		w->cut = 1;
		return 0;
	}
	if (w->members)
		w->buf[w->len++] = ',';
	w->buf[w->len++] = '"';
	memcpy(w->buf + w->len, key, klen);
	w->len += klen;
	w->buf[w->len++] = '"';
	w->buf[w->len++] = ':';
	w->members++;
	return 1;
}

/* Writes a scalar already formatted in v. */
static void scalar(struct mgw_jsonw *w, const char *key, const char *v,
                   size_t n)
{
	if (!member(w, key, n))
		return;
	memcpy(w->buf + w->len, v, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 when
 * the bytes there are not one (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF).  *cp gets the code point. */
static size_t utf8_len(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c = p[0], min;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* The escaped form of the character at p (n bytes left) into out (at
 * least 7 bytes); returns its length and sets *used to the input bytes
 * it stands for. */
static size_t escape_one(const unsigned char *p, size_t n, char *out,
                         size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	unsigned cp;
	size_t len = utf8_len(p, n, &cp);

	if (len == 0) {
		*used = 1;
		memcpy(out, "\\ufffd", 6);
		return 6;
	}
	*used = len;
	if (len > 1) {
		if (cp == 0x2028 || cp == 0x2029) {
			/* valid JSON raw, but line separators to some readers */
			memcpy(out, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
			return 6;
		}
		memcpy(out, p, len);
		return len;
	}
	switch (cp) {
	case '"': memcpy(out, "\\\"", 2); return 2;
	case '\\': memcpy(out, "\\\\", 2); return 2;
	case '\n': memcpy(out, "\\n", 2); return 2;
	case '\r': memcpy(out, "\\r", 2); return 2;
	case '\t': memcpy(out, "\\t", 2); return 2;
	case '\b': memcpy(out, "\\b", 2); return 2;
	case '\f': memcpy(out, "\\f", 2); return 2;
	default: break;
	}
	if (cp < 0x20 || cp == 0x7f) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[cp >> 4];
		out[5] = hex[cp & 15];
		return 6;
	}
	out[0] = (char)cp;
	return 1;
}

void mgw_jsonw_str(struct mgw_jsonw *w, const char *key, const char *s,
                   size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left;

	if (!s) {
		scalar(w, key, "null", 4);
		return;
	}
	if (!member(w, key, 2))
		return;
	w->buf[w->len++] = '"';
	/* decoded over the whole input, so that a character the bound
	 * splits is left out rather than taken for invalid bytes */
	left = len > max ? max : len;
	if (len > max)
		w->cut = 1;
	while (left) {
		char e[8];
		size_t used, n, run = 0, fit = room(w);

		/* a run of plain ASCII is copied at once */
		while (run < left && p[run] >= 0x20 && p[run] < 0x7f &&
		       p[run] != '"' && p[run] != '\\')
			run++;
		if (run) {
			if (run + 1 > fit) {
				run = fit ? fit - 1 : 0;
				w->cut = 1;
				memcpy(w->buf + w->len, p, run);
				w->len += run;
				break;
			}
			memcpy(w->buf + w->len, p, run);
			w->len += run;
			p += run;
			len -= run;
			left -= run;
			continue;
		}
		n = escape_one(p, len, e, &used);

		if (used > left)
			break;
		/* the closing quote still has to fit */
		if (n + 1 > room(w)) {
			w->cut = 1;
			break;
		}
		memcpy(w->buf + w->len, e, n);
		w->len += n;
		p += used;
		len -= used;
		left -= used;
	}
	w->buf[w->len++] = '"';
	w->buf[w->len] = '\0';
}

void mgw_jsonw_cstr(struct mgw_jsonw *w, const char *key, const char *s,
                    size_t max)
{
	mgw_jsonw_str(w, key, s, s ? strlen(s) : 0, max);
}

/* Writes v in decimal at the end of b[24]; returns where it starts. */
static char *utoa_end(unsigned long long v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void mgw_jsonw_int(struct mgw_jsonw *w, const char *key, long long v)
{
	char b[24], *e = b + sizeof(b), *p;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v
	                             : (unsigned long long)v;

	p = utoa_end(u, e);
	if (v < 0)
		*--p = '-';
	scalar(w, key, p, (size_t)(e - p));
}

void mgw_jsonw_uint(struct mgw_jsonw *w, const char *key, unsigned long long v)
{
	char b[24], *e = b + sizeof(b), *p = utoa_end(v, e);

	scalar(w, key, p, (size_t)(e - p));
}

void mgw_jsonw_fixed(struct mgw_jsonw *w, const char *key, double v,
                     int decimals)
{
	static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6,
	                               1e7, 1e8, 1e9};
	char b[48], *e = b + sizeof(b), *p = e;
	unsigned long long u, scale = 1;
	int neg = v < 0;

	if (!isfinite(v) || v >= 1e9 || v <= -1e9) {
		scalar(w, key, "null", 4);
		return;
	}
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	u = (unsigned long long)((neg ? -v : v) * pow10[decimals] + 0.5);
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	if (decimals) {
		unsigned long long f = u % scale;

		for (int i = 0; i < decimals; i++) {
			*--p = (char)('0' + f % 10);
			f /= 10;
		}
		*--p = '.';
	}
	p = utoa_end(u / scale, p);
	if (neg && u)
		*--p = '-';
	scalar(w, key, p, (size_t)(e - p));
}

void mgw_jsonw_bool(struct mgw_jsonw *w, const char *key, int v)
{
	scalar(w, key, v ? "true" : "false", v ? 4 : 5);
}

int mgw_jsonw_cut(const struct mgw_jsonw *w) { return w->cut; }

size_t mgw_jsonw_end(struct mgw_jsonw *w)
{
	if (w->cap == 0)
		return 0;
	w->buf[w->len++] = '}';
	w->buf[w->len] = '\0';
	return w->len;
}
