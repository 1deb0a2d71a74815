/* json_dump_test.c - the compact writer (src/mcp/json_dump.c): byte for
 * byte what jansson's json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) writes,
 * on chosen values and on random trees; wide numbers as their text; and
 * the same refusals (invalid UTF-8, too deep). */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "mcp/json.h"

/* Asserts mgw_json_dump(v) == json_dumps(v) and returns nothing; v is
 * released. */
static void same_as_jansson(json_t *v)
{
	char *want, *got;
	size_t len = 0;

	assert_non_null(v);
	want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	got = mgw_json_dump(v, &len);
	assert_non_null(want);
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	free(want);
	free(got);
	json_decref(v);
}

static void test_values(void **state)
{
	(void)state;
	same_as_jansson(json_null());
	same_as_jansson(json_true());
	same_as_jansson(json_false());
	same_as_jansson(json_integer(0));
	same_as_jansson(json_integer(-1));
	same_as_jansson(json_integer(INT64_MAX));
	same_as_jansson(json_integer(INT64_MIN));
	same_as_jansson(json_real(0.5));
	same_as_jansson(json_real(-1e300));
	same_as_jansson(json_real(3.0));
	same_as_jansson(json_string(""));
	same_as_jansson(json_object());
	same_as_jansson(json_array());
	same_as_jansson(json_pack("{s:s, s:I, s:[b,n,{}], s:{s:[]}}", "jsonrpc",
	                          "2.0", "id", (json_int_t)7, "a", 1, "p", "q"));
}

static void test_escapes(void **state)
{
	char all[128];

	(void)state;
	/* every ASCII byte but NUL, each alone and all in one string */
	for (int c = 1; c < 128; c++) {
		char s[2] = { (char)c, 0 };

		all[c - 1] = (char)c;
		same_as_jansson(json_string(s));
	}
	all[127] = 0;
	same_as_jansson(json_string(all));
	same_as_jansson(json_stringn("a\0b", 3));
	/* two, three and four byte sequences, in values and in keys */
	same_as_jansson(json_string("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
	same_as_jansson(json_pack("{s:s}", "cl\xC3\xA9\n", "v\xE2\x80\xA8"));
	/* a member name with a NUL in it */
	{
		json_t *o = json_object();

		assert_int_equal(json_object_setn(o, "k\0ey", 4, json_true()), 0);
		same_as_jansson(o);
	}
	/* a long plain run crossing the 16-byte blocks, then an escape */
	same_as_jansson(json_string("0123456789abcdef0123456789abcdef012\"x"));
}

/* What jansson refuses to write is refused too: a string that is not
 * UTF-8 (only the nocheck constructors make one). */
static void test_invalid_utf8(void **state)
{
	static const char *const bad[] = {
		"\x80", "\xC0\x80", "\xC3", "\xE0\x80\x80", "\xED\xA0\x80",
		"\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "ok\xFF",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *v = json_pack("[o]", json_string_nocheck(bad[i]));
		char *j = json_dumps(v, JSON_COMPACT);

		assert_null(j);
		assert_null(mgw_json_dump(v, NULL));
		json_decref(v);
	}
}

/* A number read under MGW_JSON_WIDE_NUMBERS is written as its text. */
static void test_wide_numbers(void **state)
{
	static const char doc[] =
		"{\"id\":123456789012345678901234567890,\"x\":[1e400,-0.0,-0,"
		"0.12345678901234567890123456789]}";
	struct mgw_json_error e;
	json_t *v = mgw_json_parse_flags(doc, sizeof(doc) - 1, 0,
	                                 MGW_JSON_WIDE_NUMBERS, &e);
	char *s;
	size_t len;

	(void)state;
	assert_non_null(v);
	s = mgw_json_dump(v, &len);
	assert_non_null(s);
	/* the two numbers no jansson value holds as they were read; -0.0,
	 * -0 and the long fraction (a double, within range) as jansson
	 * writes them */
	assert_string_equal(s, "{\"id\":123456789012345678901234567890,\"x\":"
	                       "[1e400,-0.0,0,0.12345678901234568]}");
	assert_int_equal(len, strlen(s));
	free(s);
	json_decref(v);
}

static void test_depth(void **state)
{
	json_t *top = json_array(), *v = top;
	char *s;

	(void)state;
	for (int i = 0; i < 2048; i++) {
		json_t *n = json_array();

		json_array_append_new(v, n);
		v = n;
	}
	/* 2049 arrays: the innermost is at depth 2048 */
	s = mgw_json_dump(top, NULL);
	assert_non_null(s);
	assert_int_equal(strlen(s), 2 * 2049);
	free(s);
	json_array_append_new(v, json_array());
	assert_null(mgw_json_dump(top, NULL));
	json_decref(top);
	assert_null(mgw_json_dump(NULL, NULL));
}

/* ---- random trees ---- */

static uint64_t seed = 0x9E3779B97F4A7C15ULL;

static uint32_t rnd(void)
{
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return (uint32_t)((seed * 0x2545F4914F6CDD1DULL) >> 32);
}

/* A random valid UTF-8 string of up to 40 characters, biased towards the
 * bytes that need escapes. */
static json_t *random_string(void)
{
	static const char *const pieces[] = {
		"a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f", "\x7f",
		"\xC3\xA9", "\xE2\x80\xA8", "\xF0\x9F\x98\x80", "0123456789abcdef",
	};
	char buf[40 * 16 + 1];
	size_t n = 0, k = rnd() % 40;

	for (size_t i = 0; i < k; i++) {
		const char *p = pieces[rnd() % (sizeof(pieces) / sizeof(pieces[0]))];

		memcpy(buf + n, p, strlen(p));
		n += strlen(p);
	}
	return json_stringn(buf, n);
}

static json_t *random_value(int depth)
{
	switch (rnd() % (depth > 5 ? 6 : 8)) {
	case 0: return json_null();
	case 1: return json_boolean(rnd() & 1);
	case 2: return json_integer((json_int_t)(((uint64_t)rnd() << 32) | rnd()));
	case 3: return json_real((double)(int32_t)rnd() / (double)(rnd() | 1));
	case 4: return json_integer((json_int_t)(rnd() % 1000) - 500);
	case 5: return random_string();
	case 6: {
		json_t *a = json_array();

		for (unsigned i = rnd() % 6; i > 0; i--)
			json_array_append_new(a, random_value(depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();

		for (unsigned i = rnd() % 6; i > 0; i--) {
			json_t *k = random_string();

			json_object_setn_new(o, json_string_value(k),
			                     json_string_length(k),
			                     random_value(depth + 1));
			json_decref(k);
		}
		return o;
	}
	}
}

static void test_random_trees(void **state)
{
	(void)state;
	for (int i = 0; i < 5000; i++)
		same_as_jansson(random_value(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_wide_numbers),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_random_trees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
