/* sse_fuzz.c - libFuzzer target for the load client's incremental SSE
 * parser (src/load/sse_parse.c), which reads MCP response streams.
 *
 * The first byte picks the bounds (odd: tiny lines and events, so the
 * limits are hit; even: defaults).  The rest is parsed once in one piece
 * and once in pieces of PRNG-chosen sizes (seeded from the input, so a
 * crash replays).  Both runs must agree exactly: same verdict, same
 * events.  Every event must respect the bounds and the grammar: data
 * NUL-terminated at data_len and within max_event, no CR in data (CR ends
 * a line), no CR or LF in the type or the id. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "load/sse_parse.h"

#include "tests/fuzz/prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Events are folded into a running hash plus a count, so the two runs
 * compare without storing them. */
struct seen {
	uint64_t h;
	size_t n;
	size_t max_event;
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL; /* FNV-1a */
	return (h ^ 0xff) * 0x100000001b3ULL;  /* field separator */
}

static int on_event(void *arg, const struct mgw_sse_event *e)
{
	struct seen *s = arg;

	if (e->data[e->data_len] != '\0' || e->data_len > s->max_event)
		abort();
	if (memchr(e->data, '\r', e->data_len))
		abort();
	if (strpbrk(e->type, "\r\n") || strpbrk(e->id, "\r\n"))
		abort();
	s->h = mix(s->h, e->type, strlen(e->type));
	s->h = mix(s->h, e->id, strlen(e->id));
	s->h = mix(s->h, e->data, e->data_len);
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mgw_sse_parser p;
	struct seen a = {0xcbf29ce484222325ULL, 0, 0};
	struct seen b = {0xcbf29ce484222325ULL, 0, 0};
	size_t max_line, max_event, off = 0;
	struct prng seed = {0x9e3779b97f4a7c15ULL};
	int ra, rb = 0, pa, pb;

	if (size < 1)
		return 0;
	max_line = (data[0] & 1) ? 1 + (data[0] >> 4) : 0;
	max_event = (data[0] & 1) ? 1 + ((data[0] >> 1) & 7) * 3 : 0;
	data++;
	size--;
	for (size_t i = 0; i < size && i < 8; i++)
		seed.s = (seed.s ^ data[i]) * 0x100000001b3ULL;

	mgw_sse_init(&p, max_line, max_event);
	a.max_event = p.max_event;
	b.max_event = p.max_event;
	ra = mgw_sse_feed(&p, data, size, on_event, &a);
	pa = mgw_sse_finish(&p);
	mgw_sse_deinit(&p);

	mgw_sse_init(&p, max_line, max_event);
	while (off < size) {
		size_t n = 1 + rnd(&seed) % 17;

		if (n > size - off)
			n = size - off;
		rb = mgw_sse_feed(&p, data + off, n, on_event, &b);
		if (rb != 0)
			break;
		off += n;
	}
	/* a failed parser keeps failing the same way */
	if (rb != 0 && mgw_sse_feed(&p, "data: x\n\n", 9, on_event, &b) != rb)
		abort();
	pb = mgw_sse_finish(&p);
	mgw_sse_deinit(&p);

	if (ra != rb || a.n != b.n || a.h != b.h)
		abort();
	if (ra == 0 && pa != pb)
		abort();
	if (ra != 0 && ra != MGW_ELIMIT && ra != MGW_ENOMEM)
		abort();
	return 0;
}
