/* record_codec_fuzz.c - libFuzzer target for the session-record codec
 * (src/session/record_codec.c) that both the sealed store (core layout,
 * inside the AEAD) and the Redis store (full layout, from a shared Redis)
 * decode.
 *
 * The first byte's low bit picks the layout (0 core, 1 full); the rest is
 * a record to decode.  A record that decodes must
 *   - encode to mgw_record_size() bytes, never past mgw_record_size_max();
 *   - in the core layout, encode back to exactly the input (one spelling
 *     per record); in the full layout, encode to a fixed point (the
 *     re-encoding decodes and encodes to itself: only the tool set is
 *     normalized, by its setter);
 *   - encode in the other layout to a record that decodes there too and
 *     has the same core fields (its core encoding is the same). */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/record_codec.h"
#include "session/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *encode(const struct mgw_session *s,
                             enum mgw_record_layout l, size_t *n)
{
	unsigned char *p = mgw_record_encode(s, l, n);

	if (!p || *n != mgw_record_size(s, l) ||
	    *n > mgw_record_size_max(l, s->init_len))
		abort();
	return p;
}

/* s in layout l: encoded, it decodes again; returns that decoding. */
static struct mgw_session *again(const struct mgw_session *s,
                                 enum mgw_record_layout l)
{
	size_t n = 0;
	unsigned char *p = encode(s, l, &n);
	struct mgw_session *t = mgw_record_decode(p, n, l);

	if (!t)
		abort();
	free(p);
	return t;
}

static void same_encoding(const struct mgw_session *a,
                          const struct mgw_session *b,
                          enum mgw_record_layout l)
{
	size_t na = 0, nb = 0;
	unsigned char *pa = encode(a, l, &na), *pb = encode(b, l, &nb);

	if (na != nb || memcmp(pa, pb, na) != 0)
		abort();
	free(pa);
	free(pb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum mgw_record_layout l, other;
	struct mgw_session *s, *t;
	unsigned char *p;
	size_t n = 0;

	if (size == 0)
		return 0;
	l = data[0] & 1 ? MGW_RECORD_FULL : MGW_RECORD_CORE;
	other = l == MGW_RECORD_FULL ? MGW_RECORD_CORE : MGW_RECORD_FULL;
	s = mgw_record_decode(data + 1, size - 1, l);
	if (!s)
		return 0;
	if (l == MGW_RECORD_CORE) {
		p = encode(s, l, &n);
		if (n != size - 1 || memcmp(p, data + 1, n) != 0)
			abort();
		free(p);
	}
	t = again(s, l);
	same_encoding(s, t, l);
	mgw_session_unref(t);
	t = again(s, other);
	same_encoding(s, t, MGW_RECORD_CORE);
	mgw_session_unref(t);
	mgw_session_unref(s);
	return 0;
}
