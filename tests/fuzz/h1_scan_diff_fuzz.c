/* h1_scan_diff_fuzz.c - libFuzzer target: the raw HTTP/1 head scan
 * (src/http/h1_scan.c), which skips the ordinary bytes of a line by
 * blocks and steps over plain line ends at once, against a reference
 * that looks at every byte through the scan's rules one at a time.
 *
 * Input: byte 0 seeds the piece sizes; its low bit selects whether empty
 * lines may lead (the server's setting) and bits 1-3 a small cap; the
 * rest is the byte stream.  Properties: fed in one piece and in random
 * pieces, the scan gives the reference's verdict (the head's end, a
 * protocol error or the cap) and, where the head ends, at the same byte. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/h1_scan.h"
#include "prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference: the rules of RFC 9112 §2-5 the scan enforces, byte by
 * byte.  Returns the verdict; *end the bytes of the head when 0. */
struct ref {
	int cr, lf, any;
};

static int ref_byte(struct ref *r, unsigned char c, int lead_crlf)
{
	if (r->cr) {
		if (c != '\n')
			return MGW_EPROTO;
		r->cr = 0;
		if (r->lf && r->any)
			return 1;
		if (!r->any && !lead_crlf)
			return MGW_EPROTO;
		r->lf = 1;
		return 0;
	}
	if (c == '\r') {
		r->cr = 1;
		return 0;
	}
	if (c == '\n')
		return MGW_EPROTO;
	if (r->lf) {
		if (c == ' ' || c == '\t')
			return MGW_EPROTO;
		r->lf = 0;
		r->any = 1;
	}
	return (c < 0x20 && c != '\t') || c == 0x7f ? MGW_EPROTO : 0;
}

/* 1 (head ended, *end set), 0 (needs more), or an error. */
static int ref_scan(const uint8_t *p, size_t n, size_t cap, int lead,
                    size_t *end)
{
	struct ref r = {0, 1, 0};

	for (size_t i = 0; i < n; i++) {
		int st;

		if (i + 1 > cap)
			return MGW_ELIMIT;
		st = ref_byte(&r, p[i], lead);
		if (st == 1) {
			*end = i + 1;
			return 1;
		}
		if (st)
			return st;
	}
	return 0;
}

/* The scan over p[0..n) in pieces (step 0: one piece). */
static int scan(const uint8_t *p, size_t n, size_t cap, int lead,
                struct prng *g, size_t *end)
{
	struct mgw_h1_scan s;
	size_t off = 0;

	mgw_h1_scan_reset(&s, cap, lead);
	while (off < n) {
		size_t k = n - off, feed = 0;
		int st;

		if (g)
			k = 1 + rnd(g) % (k < 40 ? k : 40);
		st = mgw_h1_scan_feed(&s, p + off, k, &feed);
		if (st)
			return st;
		if (feed > k)
			abort();
		if (!s.in_head) {
			*end = off + feed;
			return 1;
		}
		if (feed != k)
			abort(); /* a head that goes on takes every byte */
		off += k;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[8] = {1 << 20, 4, 16, 33, 64, 100, 257, 1000};
	struct prng g;
	size_t cap, want_end = 0, end1 = 0, end2 = 0;
	int lead, want, one, many;

	if (size < 1)
		return 0;
	lead = data[0] & 1;
	cap = caps[(data[0] >> 1) & 7];
	g.s = 0x9E3779B97F4A7C15ULL ^ data[0];
	data++;
	size--;
	want = ref_scan(data, size, cap, lead, &want_end);
	one = scan(data, size, cap, lead, NULL, &end1);
	many = scan(data, size, cap, lead, &g, &end2);
	if (one != want || many != want)
		abort();
	if (want == 1 && (end1 != want_end || end2 != want_end))
		abort();
	return 0;
}
