/* bytes.h - big-endian length-prefixed binary records: the primitives
 * under the one codec of the session records that leave the process
 * (session/record_codec.h: sealed tokens, Redis values).  Writers are
 * sized in advance by their caller; readers are bounds-checked and
 * sticky: the first short read sets `bad`, and every later read returns
 * nothing. */
#ifndef MGW_UTIL_BYTES_H
#define MGW_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>

struct mgw_wbuf {
	unsigned char *p;
	size_t len, cap;
};

/* Appends n bytes (p may be NULL when n is 0).  Overflowing cap is a bug
 * of the caller's sizing: it aborts. */
void mgw_wbuf_put(struct mgw_wbuf *w, const void *p, size_t n);
/* v as n bytes (1..8), most significant first. */
void mgw_wbuf_put_uint(struct mgw_wbuf *w, uint64_t v, size_t n);
/* A field: its length in `prefix` bytes, then its bytes; NULL writes
 * length 0. */
void mgw_wbuf_put_field(struct mgw_wbuf *w, const void *p, size_t n,
                        size_t prefix);
/* mgw_wbuf_put_field of a C string (NULL: length 0). */
void mgw_wbuf_put_str(struct mgw_wbuf *w, const char *s, size_t prefix);

struct mgw_rbuf {
	const unsigned char *p;
	size_t len, off;
	int bad;
};

/* n bytes (1..8) as an unsigned number; 0 and bad when short. */
uint64_t mgw_rbuf_get_uint(struct mgw_rbuf *r, size_t n);
/* A field written by mgw_wbuf_put_field: *out points into the buffer
 * (NULL for length 0), *n its length. */
void mgw_rbuf_get_field(struct mgw_rbuf *r, size_t prefix,
                        const unsigned char **out, size_t *n);
/* The same as a fresh NUL-terminated copy; NULL for length 0.  A field
 * holding a NUL byte sets bad (a C string would say less than the
 * record), as does no memory. */
char *mgw_rbuf_get_str(struct mgw_rbuf *r, size_t prefix);

/* Two's complement back from the 8 bytes written for an int64_t, without
 * implementation-defined conversions. */
int64_t mgw_u64_to_signed(uint64_t u);

#endif
