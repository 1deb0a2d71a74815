/* bytes.c - big-endian length-prefixed binary records (see bytes.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

void mgw_wbuf_put(struct mgw_wbuf *w, const void *p, size_t n)
{
	if (n > w->cap - w->len)
		abort();
	if (n)
		memcpy(w->p + w->len, p, n);
	w->len += n;
}

void mgw_wbuf_put_uint(struct mgw_wbuf *w, uint64_t v, size_t n)
{
	unsigned char b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
	mgw_wbuf_put(w, b, n);
}

void mgw_wbuf_put_field(struct mgw_wbuf *w, const void *p, size_t n,
                        size_t prefix)
{
	mgw_wbuf_put_uint(w, p ? n : 0, prefix);
	if (p)
		mgw_wbuf_put(w, p, n);
}

void mgw_wbuf_put_str(struct mgw_wbuf *w, const char *s, size_t prefix)
{
	mgw_wbuf_put_field(w, s, s ? strlen(s) : 0, prefix);
}

uint64_t mgw_rbuf_get_uint(struct mgw_rbuf *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || r->len - r->off < n) {
		r->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v = v << 8 | r->p[r->off + i];
	r->off += n;
	return v;
}

void mgw_rbuf_get_field(struct mgw_rbuf *r, size_t prefix,
                        const unsigned char **out, size_t *n)
{
	*n = (size_t)mgw_rbuf_get_uint(r, prefix);
	*out = NULL;
	if (r->bad || *n == 0)
		return;
	if (r->len - r->off < *n) {
		r->bad = 1;
		return;
	}
	*out = r->p + r->off;
	r->off += *n;
}

char *mgw_rbuf_get_str(struct mgw_rbuf *r, size_t prefix)
{
	const unsigned char *f;
	size_t n;
	char *s;

	mgw_rbuf_get_field(r, prefix, &f, &n);
	if (!f)
		return NULL;
	if (memchr(f, '\0', n)) {
		r->bad = 1;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s) {
		r->bad = 1;
		return NULL;
	}
	memcpy(s, f, n);
	s[n] = '\0';
	return s;
}

int64_t mgw_u64_to_signed(uint64_t u)
{
	if (u <= (uint64_t)INT64_MAX)
		return (int64_t)u;
	return -(int64_t)(~u) - 1;
}
