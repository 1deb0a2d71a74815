/* sse_stamp_fuzz.c - libFuzzer target for the stateful path's SSE
 * handling of an upstream's stream (src/proxy/sse.c): the incremental
 * event-id stamper, the Last-Event-ID check, and the search for the
 * JSON-RPC response in a whole SSE body.
 *
 * The input: 4 bytes of pin tag, 1 byte that seeds the split PRNG, then
 * the upstream's stream.  Besides the sanitizers, the properties are:
 *  - the stamper's output is the same whether the stream arrives in one
 *    piece or in PRNG-sized pieces, and equals a line-by-line reference:
 *    every line that starts "id:" (one optional space after the colon)
 *    with a non-empty value gets the stamp in front of its value, every
 *    other byte passes unchanged (CR and LF each end a line);
 *  - every stamped id read back through mgw_sse_unstamp under the same
 *    tag gives the upstream's own id, and under another tag is refused;
 *  - the input read as a Last-Event-ID (mgw_sse_stamp_parse, the request
 *    id decoded) stays inside it;
 *  - a response found in the body is an object with "result" or "error". */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "proxy/sse.h"

#include "tests/fuzz/prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_eol(uint8_t c)
{
	return c == '\r' || c == '\n';
}

/* The stamper's contract, computed on the whole stream at once. */
static void reference(const uint8_t *p, size_t n, const char *stamp,
                      struct evbuffer *out)
{
	size_t i = 0;

	while (i < n) {
		size_t e = i, pre;

		while (e < n && !is_eol(p[e]))
			e++;
		/* line [i, e) */
		if (e - i >= 3 && memcmp(p + i, "id:", 3) == 0) {
			pre = 3 + (e - i > 3 && p[i + 3] == ' ');
			if (e - i > pre) {
				evbuffer_add(out, p + i, pre);
				evbuffer_add(out, stamp, MGW_SSE_STAMP_LEN);
				evbuffer_add(out, p + i + pre, e - i - pre);
			} else {
				evbuffer_add(out, p + i, e - i);
			}
		} else {
			evbuffer_add(out, p + i, e - i);
		}
		if (e < n)
			evbuffer_add(out, p + e, 1);
		i = e + 1;
	}
}

static void stamp_run(uint32_t tag, const uint8_t *p, size_t n, struct prng *seed,
                      int split, struct evbuffer *out)
{
	struct mgw_sse_stamper st;
	size_t off = 0;

	mgw_sse_stamper_init(&st, tag);
	while (off < n) {
		size_t k = split ? 1 + rnd(seed) % (n - off) : n - off;

		if (mgw_sse_stamp(&st, p + off, k, out) != 0)
			abort();
		off += k;
	}
	if (mgw_sse_stamp_flush(&st, out) != 0)
		abort();
}

/* Every stamped id line of out, read back. */
static void check_unstamp(uint32_t tag, const uint8_t *o, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t e = i, pre;

		while (e < n && !is_eol(o[e]))
			e++;
		if (e - i >= 3 && memcmp(o + i, "id:", 3) == 0) {
			const char *v, *rest;
			size_t vlen, rlen;

			pre = 3 + (e - i > 3 && o[i + 3] == ' ');
			v = (const char *)o + i + pre;
			vlen = e - i - pre;
			if (vlen > MGW_SSE_STAMP_LEN) {
				if (mgw_sse_unstamp(v, vlen, tag, &rest, &rlen) != 1 ||
				    rest != v + MGW_SSE_STAMP_LEN ||
				    rlen != vlen - MGW_SSE_STAMP_LEN)
					abort();
				if (mgw_sse_unstamp(v, vlen, tag ^ 1u, &rest, &rlen) != 0)
					abort();
			}
		}
		i = e + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer *whole, *pieces, *ref;
	struct mgw_sse_stamper probe;
	uint32_t tag;
	struct prng seed;
	json_t *resp;
	size_t n;

	if (size < 5 || size > 65536)
		return 0;
	tag = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
	      (uint32_t)data[2] << 8 | data[3];
	seed.s = 0x9E3779B97F4A7C15ULL ^ data[4];
	data += 5;
	size -= 5;
	whole = evbuffer_new();
	pieces = evbuffer_new();
	ref = evbuffer_new();
	if (!whole || !pieces || !ref)
		abort();
	mgw_sse_stamper_init(&probe, tag);
	stamp_run(tag, data, size, &seed, 0, whole);
	stamp_run(tag, data, size, &seed, 1, pieces);
	reference(data, size, probe.stamp, ref);
	n = evbuffer_get_length(whole);
	if (evbuffer_get_length(pieces) != n || evbuffer_get_length(ref) != n)
		abort();
	if (n > 0 && (memcmp(evbuffer_pullup(whole, -1), evbuffer_pullup(pieces, -1), n) != 0 ||
	    memcmp(evbuffer_pullup(whole, -1), evbuffer_pullup(ref, -1), n) != 0))
		abort();
	if (n > 0)
		check_unstamp(tag, evbuffer_pullup(whole, -1), n);

	/* the input read as a Last-Event-ID: whatever it says, the upstream
	 * id it names ends where the value does */
	{
		struct mgw_sse_stamp_view sv;

		if (mgw_sse_stamp_parse((const char *)data, size, &sv)) {
			json_decref(mgw_sse_stamp_request_id(&sv));
			if (sv.rest + sv.rest_len != (const char *)data + size)
				abort();
		}
	}
	resp = mgw_sse_find_response(data, size, 8);
	if (resp && (!json_is_object(resp) ||
	             (!json_object_get(resp, "result") &&
	              !json_object_get(resp, "error"))))
		abort();
	json_decref(resp);
	resp = mgw_sse_body_response(data, size, 0, 8);
	if (resp && !json_is_object(resp))
		abort();
	json_decref(resp);
	evbuffer_free(whole);
	evbuffer_free(pieces);
	evbuffer_free(ref);
	return 0;
}
