/* headers.h - ordered header list operations and field classification. */
#ifndef MGW_HTTP_HEADERS_H
#define MGW_HTTP_HEADERS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "http/headers-t.h"

void mgw_headers_init(struct mgw_headers *h);
/* Frees every field; the list is empty and reusable afterwards. */
void mgw_headers_deinit(struct mgw_headers *h);

/* Appends a copy of name/value. Returns 0 or MGW_ENOMEM. */
int mgw_headers_add(struct mgw_headers *h, const char *name, size_t nlen,
                    const char *value, size_t vlen);
/* n bytes of string space that live as long as the list (a reader
 * copies a head there once, then adds its fields by reference); NULL on
 * no memory. */
char *mgw_headers_space(struct mgw_headers *h, size_t n);
/* Appends a field whose name and value already lie, NUL-terminated, in
 * the list's own space (mgw_headers_space) or in memory that outlives
 * it; nothing is copied and h->checked is left as it is.  Returns 0 or
 * MGW_ENOMEM. */
int mgw_headers_add_ref(struct mgw_headers *h, char *name, size_t nlen,
                        char *value, size_t vlen);
/* Convenience for NUL-terminated strings. */
int mgw_headers_adds(struct mgw_headers *h, const char *name, const char *value);
/* Appends a copy of every field of src (NULL: none), in order.  Returns 0
 * or MGW_ENOMEM (dst then holds a prefix of them). */
int mgw_headers_add_all(struct mgw_headers *dst, const struct mgw_headers *src);
/* dst (empty) becomes a copy of src in two allocations, the field array
 * and one block of strings, instead of one mgw_headers_add a field.
 * MGW_EINVAL when dst is not empty; MGW_ENOMEM. */
int mgw_headers_clone(struct mgw_headers *dst, const struct mgw_headers *src);


/* Removes every field called name; returns how many were removed. */
size_t mgw_headers_remove(struct mgw_headers *h, const char *name);
/* Replaces all fields called name by one with value (appended if absent). */
int mgw_headers_set(struct mgw_headers *h, const char *name, const char *value);

/* Appends sep and add[0..alen) to the value of field i (joining Cookie
 * crumbs, extending X-Forwarded-For).  Returns 0 or MGW_ENOMEM (the field
 * unchanged). */
int mgw_headers_append_value(struct mgw_headers *h, size_t i, const char *sep,
                              const char *add, size_t alen);

/* 1 if field f is called name[0..len) (case-insensitive), comparing the
 * lengths first (inline: most calls end there); MGW_HEADER_IS takes a
 * string literal. */
static inline int mgw_header_is(const struct mgw_header *f, const char *name,
                                size_t len)
{
	/* the first byte, ASCII case folded, before the call: names of one
	 * length mostly differ there (a false match only costs the call) */
	/* names are mostly sent as the literals spell them (lowercase: all
	 * of HTTP/2, most clients): an exact compare first, which a literal
	 * name's known length lets the compiler inline */
	return f->name_len == len &&
	       (len == 0 || ((f->name[0] ^ name[0]) & ~0x20) == 0) &&
	       (memcmp(f->name, name, len) == 0 ||
	        strncasecmp(f->name, name, len) == 0);
}
#define MGW_HEADER_IS(f, lit) mgw_header_is((f), "" lit, sizeof(lit) - 1)

/* First value of name (case-insensitive) or NULL.  Inline, so that the
 * length of a literal name is known at compile time. */
static inline const char *mgw_headers_get(const struct mgw_headers *h,
                                          const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < h->n; i++)
		if (mgw_header_is(&h->v[i], name, len))
			return h->v[i].value;
	return NULL;
}

/* Number of fields called name. */
static inline size_t mgw_headers_count(const struct mgw_headers *h,
                                       const char *name)
{
	size_t c = 0, len = strlen(name);

	for (size_t i = 0; i < h->n; i++)
		c += (size_t)mgw_header_is(&h->v[i], name, len);
	return c;
}

/* 1 if name is a valid RFC 9110 token, 0 otherwise. */
/* 1 for the bytes of RFC 9110's tchar (a field name is 1*tchar). */
extern const unsigned char mgw_tchar[256];

int mgw_header_name_valid(const char *name, size_t len);
/* 1 if value contains only field-vchar / SP / HTAB (no CR, LF, NUL, other
 * controls), 0 otherwise. */
int mgw_header_value_valid(const char *value, size_t len);
/* Nonzero when one of the 8 bytes of x is below 0x20 or is 0x7f (exact
 * for "any": the classic has-less / has-zero word tests). */
static inline uint64_t mgw_word_has_ctl(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t del = x ^ (0x7f * ones);

	return ((x - 0x20 * ones) & ~x & highs) | ((del - ones) & ~del & highs);
}
/* How many leading bytes of p[0..len) hold no byte below 0x20 and no
 * 0x7f: a prefix that a scan for controls, CR, LF or HTAB can skip (not
 * always the longest: the tail shorter than a block is left to the
 * caller).  With SSE2 (every x86-64) 16 bytes at a time, the first
 * control of a block found exactly; else in whole 8-byte words. */
static inline size_t mgw_ctl_free_words(const unsigned char *p, size_t len)
{
	size_t i = 0;

#ifdef __SSE2__
	const __m128i lim = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);

	for (; i + 16 <= len; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		/* unsigned x <= 0x1f: min(x, 0x1f) == x */
		__m128i ctl = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, lim), x),
		                           _mm_cmpeq_epi8(x, del));
		unsigned m = (unsigned)_mm_movemask_epi8(ctl);

		if (m)
			return i + (size_t)__builtin_ctz(m);
	}
#endif
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		if (mgw_word_has_ctl(w))
			break;
	}
	return i;
}
/* 1 if s (n bytes) is a valid Host field value or :authority for an
 * http(s) URI (RFC 9110 7.2, RFC 3986 3.2.2-3.2.3): uri-host [":" port],
 * where uri-host is an IP-literal ("[v6]" or "[vF.x]"), an IPv4 address
 * or a reg-name (unreserved, sub-delims, %XX), no userinfo, a port of at
 * most 65535, and not an empty host before a port.  The empty value is
 * valid (RFC 9112 3.2: a target without authority). */
int mgw_http_authority_valid(const char *s, size_t n);
/* 1 for hop-by-hop fields per RFC 9110 §7.6.1 (Connection, Keep-Alive,
 * Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade,
 * Proxy-Authenticate, Proxy-Authorization is NOT included: it is
 * end-to-end for a gateway that does not consume it); name is len
 * bytes, not necessarily NUL-terminated. */
int mgw_header_is_hop_by_hop(const char *name, size_t len);

/* Case-insensitive search of token in a comma-separated list value. */
int mgw_header_list_has(const char *value, const char *token);
/* 1 if any Connection field of h lists name (RFC 9110 §7.6.1: such a
 * field is hop-by-hop too). */
int mgw_headers_connection_lists(const struct mgw_headers *h, const char *name);

#endif
