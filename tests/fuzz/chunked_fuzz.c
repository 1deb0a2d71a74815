/* chunked_fuzz.c - libFuzzer target for the strict chunked decoder
 * (src/http/chunked.c), which frames request bodies on the server and
 * response bodies in the upstream client.
 *
 * First byte even: the rest is arbitrary input, decoded once in one piece
 * and once in pieces of PRNG-chosen sizes with a consumer that pauses at
 * random.  Both runs must agree exactly (same verdict, same bytes taken,
 * same data), never take bytes past the end of the body and never deliver
 * more data than they took.
 * First byte odd: the rest is a payload.  It is encoded as a valid chunked
 * body (random chunk sizes, hex case, leading zeros, extensions, trailers,
 * then bytes of a next message) and decoded with random splits and
 * pauses: the data must come back exactly, ending precisely at the final
 * CRLF. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/chunked.h"

#include "tests/fuzz/prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TRAILER 256

struct sink {
	unsigned char *buf;
	size_t len, cap;
	struct prng *pause; /* NULL: never pause */
};

static int on_data(void *arg, const unsigned char *p, size_t n)
{
	struct sink *s = arg;

	if (n == 0 || s->len + n > s->cap)
		abort(); /* spans are non-empty and never exceed the input */
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return s->pause && rnd(s->pause) % 3 == 0;
}

struct outcome {
	int rc;
	int done;
	size_t used;
	const char *msg;
};

/* Decodes in[0..len) in pieces of 1..max_piece bytes (0: whole), resuming
 * after pauses.  The bound on iterations holds because every call either
 * takes a byte, finishes, fails, or follows a pause that took one. */
static struct outcome decode(const unsigned char *in, size_t len,
                             struct prng *r, size_t max_piece,
                             struct sink *s)
{
	struct mgw_chunked ck;
	struct outcome o = {0, 0, 0, NULL};

	mgw_chunked_init(&ck, MAX_TRAILER);
	while (o.used < len && !mgw_chunked_done(&ck)) {
		size_t n = len - o.used, used;
		int rc;

		if (max_piece && r) {
			size_t piece = 1 + rnd(r) % max_piece;
			if (n > piece)
				n = piece;
		}
		rc = mgw_chunked_feed(&ck, in + o.used, n, &used, on_data, s);
		if (used > n)
			abort();
		o.used += used;
		if (rc) {
			o.rc = rc;
			break;
		}
		if (used < n && !mgw_chunked_done(&ck) && !s->pause)
			abort(); /* stopped without reason */
		if (used == 0 && !mgw_chunked_done(&ck))
			abort(); /* no progress */
	}
	o.done = mgw_chunked_done(&ck);
	o.msg = mgw_chunked_error(&ck);
	if (o.rc && (o.rc != MGW_EPROTO && o.rc != MGW_ELIMIT))
		abort();
	if (o.rc && (!o.msg || o.done))
		abort();
	if (!o.rc && o.msg)
		abort();
	if (s->len > o.used)
		abort();
	return o;
}

static void arbitrary(const uint8_t *data, size_t size)
{
	struct prng r = {0x9e3779b97f4a7c15ULL ^ size};
	struct sink a = {malloc(size + 1), 0, size, NULL};
	struct sink b = {malloc(size + 1), 0, size, &r};
	struct outcome oa, ob;

	if (size == 0)
		goto out;
	r.s ^= (uint64_t)data[0] << 32 | data[size - 1];
	oa = decode(data, size, NULL, 0, &a);
	ob = decode(data, size, &r, 1 + data[0] % 16, &b);
	if (oa.rc != ob.rc || oa.done != ob.done || oa.used != ob.used ||
	    a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
		abort();
out:
	free(a.buf);
	free(b.buf);
}

static size_t put(unsigned char *out, size_t off, const char *s, size_t n)
{
	memcpy(out + off, s, n);
	return off + n;
}

#define PUT_LIT(out, off, lit) put(out, off, lit, sizeof(lit) - 1)

static size_t put_size(unsigned char *out, size_t off, size_t v,
                       struct prng *r)
{
	static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
	const char *digits = rnd(r) & 1 ? lo : up;
	char tmp[32];
	int n = 0;

	do {
		tmp[n++] = digits[v % 16];
		v /= 16;
	} while (v);
	/* leading zeros up to the 15-digit bound */
	for (unsigned z = rnd(r) % 4; z && n < MGW_CHUNKED_MAX_DIGITS; z--)
		tmp[n++] = '0';
	while (n)
		out[off++] = (unsigned char)tmp[--n];
	return off;
}

static size_t put_ext(unsigned char *out, size_t off, struct prng *r)
{
	switch (rnd(r) % 5) {
	case 0:
		return PUT_LIT(out, off, ";a=b");
	case 1:
		return PUT_LIT(out, off, " ;x");
	case 2:
		return PUT_LIT(out, off, "\t; n=\"q;\xc3\xa9\"");
	default:
		return off;
	}
}

static void roundtrip(const uint8_t *data, size_t size)
{
	struct prng r = {0x2545F4914F6CDD1DULL + size};
	/* worst case per data byte: a 1-byte chunk with the longest size
	 * line (15) and extension (11) and two CRLFs; then the last chunk,
	 * trailers and a next message */
	size_t cap = size * 32 + 128;
	unsigned char *enc = malloc(cap);
	struct sink s = {malloc(cap), 0, cap, &r};
	size_t off = 0, pos = 0, end;
	struct outcome o;

	for (size_t i = 0; i < size && i < 8; i++)
		r.s = r.s * 31 + data[i];
	while (pos < size) {
		size_t n = 1 + rnd(&r) % (rnd(&r) & 1 ? 7 : 300);
		if (n > size - pos)
			n = size - pos;
		off = put_size(enc, off, n, &r);
		off = put_ext(enc, off, &r);
		off = PUT_LIT(enc, off, "\r\n");
		off = put(enc, off, (const char *)data + pos, n);
		off = PUT_LIT(enc, off, "\r\n");
		pos += n;
	}
	off = put_size(enc, off, 0, &r);
	off = put_ext(enc, off, &r);
	off = PUT_LIT(enc, off, "\r\n");
	for (unsigned t = rnd(&r) % 4; t; t--)
		off = PUT_LIT(enc, off, "X-T: v\t1\r\n");
	off = PUT_LIT(enc, off, "\r\n");
	end = off;
	off = PUT_LIT(enc, off, "0\r\n\r\nGET"); /* the next message */

	o = decode(enc, off, &r, 1 + rnd(&r) % 64, &s);
	if (o.rc || !o.done || o.used != end || s.len != size ||
	    (size && memcmp(s.buf, data, size) != 0))
		abort();
	free(enc);
	free(s.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		roundtrip(data + 1, size - 1);
	else
		arbitrary(data + 1, size - 1);
	return 0;
}
