/* json_plain.h - the bytes of a JSON string that need no look: shared
 * by the reader (json.c) and the writer (json_dump.c), which both step
 * over such runs 16 bytes at a time. */
#ifndef MGW_MCP_JSON_PLAIN_H
#define MGW_MCP_JSON_PLAIN_H

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Bytes a string may hold as they are, with nothing to check: printable
 * ASCII but the quote and the backslash. */
static const unsigned char mgw_json_plain_byte[256] = {
#define R4(x) [x] = 1, [x + 1] = 1, [x + 2] = 1, [x + 3] = 1
#define R16(x) R4(x), R4(x + 4), R4(x + 8), R4(x + 12)
	[0x20] = 1, [0x21] = 1, R4(0x23), R4(0x27), R4(0x2b), [0x2f] = 1,
	R16(0x30), R16(0x40), R4(0x50), R4(0x54), R4(0x58), [0x5d] = 1,
	[0x5e] = 1, [0x5f] = 1, R16(0x60), R16(0x70),
#undef R16
#undef R4
};

/* How many bytes from p on are plain (mgw_json_plain_byte), up to end:
 * 16 at a time with SSE2 (every x86-64), then by table. */
static inline const unsigned char *
mgw_json_plain_run(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i lim = _mm_set1_epi8(0x1f), quote = _mm_set1_epi8('"'),
		      bslash = _mm_set1_epi8('\\');

	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* below 0x20 (min(x, 0x1f) == x), '"' or '\\'; and the
		 * bytes from 0x80 up by their high bit */
		__m128i sp = _mm_or_si128(
			_mm_cmpeq_epi8(_mm_min_epu8(x, lim), x),
			_mm_or_si128(_mm_cmpeq_epi8(x, quote),
			             _mm_cmpeq_epi8(x, bslash)));
		unsigned m = (unsigned)_mm_movemask_epi8(sp) |
		             (unsigned)_mm_movemask_epi8(x);

		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	while (p < end && mgw_json_plain_byte[*p])
		p++;
	return p;
}

#endif
