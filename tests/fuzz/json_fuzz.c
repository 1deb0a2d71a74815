/* json_fuzz.c - libFuzzer target: the strict JSON reader (src/mcp/json.c)
 * against jansson's own json_loadb with the flags it replaces
 * (JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY), on any
 * bytes.  Besides the sanitizers: both accept or both refuse (but for
 * NUL bytes jansson skips after a number or literal, which the reader
 * refuses: with spaces there it must read what jansson read); a duplicate
 * member name is the reason for both or for neither; what both accept
 * they build into equal values (json_equal: same types, same integers,
 * same doubles, same strings byte for byte, same members).
 *
 * Then the reading of request bodies, MGW_JSON_WIDE_NUMBERS, against the
 * strict one on the same bytes: where the strict one accepts, the wide
 * one builds the equal value; where it refuses for any reason but a
 * number's range, the wide one refuses with the same reason at the same
 * byte (it reads everything before the first such number alike); where
 * it refuses a number's range, the wide one reads past that number.
 *
 * Last, the writer (src/mcp/json_dump.c): what the strict reader built
 * is written byte for byte as jansson's json_dumps writes it, and what
 * the wide one built (its numbers of any size) is written as text the
 * wide reader reads back into an equal value. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcp/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reader stopped at a NUL byte that jansson would have skipped: one
 * right after the last character of a number or literal, outside any
 * string. */
static int skipped_nul(const uint8_t *d, size_t n, const struct mgw_json_error *e)
{
	uint8_t prev;

	if (e->code != MGW_JSON_SYNTAX || e->position == 0 || e->position >= n ||
	    d[e->position] != 0 || strstr(e->text, "string"))
		return 0;
	prev = d[e->position - 1];
	return (prev >= '0' && prev <= '9') || prev == 'e' || prev == 'l';
}

/* mgw_json_dump of v against json_dumps, byte for byte. */
static void dump_vs_jansson(const json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	char *got = mgw_json_dump(v, NULL);

	if (!want != !got || (want && strcmp(want, got) != 0))
		abort();
	free(want);
	free(got);
}

/* mgw_json_dump of a wide reading, read back wide: the same value. */
static void dump_round_trip(json_t *v)
{
	struct mgw_json_error e;
	size_t len;
	char *s = mgw_json_dump(v, &len);
	json_t *back;

	if (!s)
		abort();
	back = mgw_json_parse_flags(s, len, 2048, MGW_JSON_WIDE_NUMBERS, &e);
	if (!back || !json_equal(v, back))
		abort();
	json_decref(back);
	free(s);
}

static void wide_vs_strict(const uint8_t *data, size_t size)
{
	struct mgw_json_error se, we;
	json_t *s, *w;

	s = mgw_json_parse(data, size, 64, &se);
	w = mgw_json_parse_flags(data, size, 64, MGW_JSON_WIDE_NUMBERS, &we);
	if (w)
		dump_round_trip(w);
	if (s) {
		if (!w || !json_equal(s, w))
			abort();
	} else if (se.code != MGW_JSON_RANGE) {
		if (w || we.code != se.code || we.position != se.position)
			abort();
	} else if (!w && we.position <= se.position) {
		abort();
	}
	json_decref(s);
	json_decref(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	struct mgw_json_error me;
	json_t *a, *b;

	a = json_loadb((const char *)data, size,
	               JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
	/* jansson's own nesting bound */
	b = mgw_json_parse(data, size, 2048, &me);
	/* jansson's one leniency: a NUL byte right after a number, true,
	 * false or null is skipped ("[5\0]" is [5]); the reader refuses it.
	 * Where the reader stopped at such a byte, it reads again with a
	 * space there (the NUL ends the token and is ignored), to compare
	 * the rest of the verdict with jansson's. */
	if (!b && skipped_nul(data, size, &me)) {
		uint8_t *c = malloc(size);
		size_t n = size;

		if (!c)
			abort();
		memcpy(c, data, size);
		while (!b && skipped_nul(c, n, &me)) {
			c[me.position] = ' '; /* ends the token, like whitespace */
			b = mgw_json_parse(c, n, 2048, &me);
		}
		free(c);
	}
	/* the reader's value cap (MGW_JSON_MAX_VALUES) is its own bound,
	 * which jansson does not have: nothing to compare */
	if (!b && me.code == MGW_JSON_LIMIT) {
		json_decref(a);
		return 0;
	}
	if (!a != !b)
		abort();
	if (!a && (json_error_code(&je) == json_error_duplicate_key) !=
	              (me.code == MGW_JSON_DUPLICATE))
		abort();
	if (a && !json_equal(a, b))
		abort();
	if (b)
		dump_vs_jansson(b);
	json_decref(a);
	json_decref(b);
	wide_vs_strict(data, size);
	return 0;
}
