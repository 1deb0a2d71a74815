/* h1_head.h - reading an HTTP/1 head that the raw scan (h1_scan.h) has
 * accepted whole: its lines, the request line, and each field line split
 * into name and value.
 *
 * The scan already refused what would let two parsers disagree (bare CR
 * or LF, obs-fold, control bytes other than HTAB), so a scanned head is a
 * run of CRLF-ended lines whose bytes are all field-vchar, obs-text, SP
 * or HTAB.  The server reads request heads with it (h1.c), the upstream
 * client response heads (client_h1.c).  What is left is the grammar of RFC 9112 §3 and §5: one pass
 * over the bytes, with pointers into them and no copy.  A field value
 * needs no further check (the scan's refusals are exactly the bytes
 * RFC 9110 §5.5 excludes); a field name must be a token. */
#ifndef MGW_HTTP_H1_HEAD_H
#define MGW_HTTP_H1_HEAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "http/headers-t.h"

/* Lines of a scanned head p[0..n), in order. */
struct mgw_h1_lines {
	const char *p, *end;
};

/* The request line: method SP request-target SP HTTP-version. */
struct mgw_h1_reqline {
	const char *method, *target;
	size_t method_len, target_len;
	int major, minor;
};

static inline void mgw_h1_lines_init(struct mgw_h1_lines *it, const char *p,
                                     size_t n)
{
	it->p = p;
	it->end = p + n;
}

/* The first CR of p[0..n), or NULL: 16 bytes at a time with SSE2 (head
 * lines are short, so a call to memchr cost more than its search). */
static inline const char *mgw_h1_find_cr(const char *p, size_t n)
{
	size_t i = 0;

#ifdef __SSE2__
	const __m128i cr = _mm_set1_epi8('\r');

	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cr));

		if (m)
			return p + i + (size_t)__builtin_ctz(m);
	}
#endif
	for (; i < n; i++)
		if (p[i] == '\r')
			return p + i;
	return NULL;
}

/* The next line without its CRLF.  Returns 1, or 0 when the head is used
 * up (or holds no further CRLF).  Inline: it runs for every line of
 * every head. */
static inline int mgw_h1_next_line(struct mgw_h1_lines *it, const char **line,
                                   size_t *len)
{
	const char *cr;

	if (it->p >= it->end)
		return 0;
	cr = mgw_h1_find_cr(it->p, (size_t)(it->end - it->p));
	if (!cr || cr + 1 >= it->end || cr[1] != '\n')
		return 0;
	*line = it->p;
	*len = (size_t)(cr - it->p);
	it->p = cr + 2;
	return 1;
}

/* The first non-empty line (empty lines before the request line are
 * skipped, RFC 9112 §2.2), parsed.  Returns 0, or MGW_EPROTO when it is
 * not method SP target SP HTTP/D.D with a token method and a target of
 * at least one byte holding no whitespace. */
int mgw_h1_request_line(struct mgw_h1_lines *it, struct mgw_h1_reqline *rl);

/* The status line of a response: HTTP/D.D SP 3DIGIT, then SP and a reason
 * phrase (any bytes the scan let through) or nothing (RFC 9112 §4: the
 * SP before an empty reason may be missing).  Returns 0 or MGW_EPROTO. */
int mgw_h1_status_line(struct mgw_h1_lines *it, int *major, int *minor,
                       int *status);

/* Splits a field line at its colon: the name (a token, no whitespace
 * before the colon: RFC 9112 §5.1) and the value without leading or
 * trailing blanks.  Returns 0 or MGW_EPROTO. */
int mgw_h1_split_field(const char *line, size_t len, const char **name,
                       size_t *nlen, const char **value, size_t *vlen);

/* What mgw_h1_take_fields may take, and what it took. */
struct mgw_h1_fields {
	size_t max_bytes;   /* of names and values, all fields together */
	size_t max_fields;
	size_t bytes;       /* names and values taken (counted on) */
	int too_many;       /* MGW_ELIMIT was for max_fields */
};

/* The field lines left in it (up to the empty line) into h: the rest of
 * the head is copied once into h's space, each name and value ended by a
 * NUL in place there and added by reference.  The fields of a scanned
 * head are checked by the scan and the split, so a list that was empty
 * comes out with h->checked set.  Returns 0, MGW_EPROTO (a line is not a
 * field), MGW_ELIMIT (lim->max_bytes, or lim->max_fields with
 * lim->too_many set) or MGW_ENOMEM. */
int mgw_h1_take_fields(struct mgw_h1_lines *it, struct mgw_headers *h,
                       struct mgw_h1_fields *lim);

/* A Content-Length value (NUL-terminated): one or more digits, nothing
 * else (no sign, blank or list), as a number that fits 64 bits.  Returns
 * 0 or -1.  Requests and responses are framed by the same rule. */
int mgw_h1_content_length(const char *s, uint64_t *out);

#endif
