/* json_test.c - the strict JSON reader (src/mcp/json.c): the values it
 * builds, and each kind of input it refuses, with the reason. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "mcp/json.h"

static json_t *parse_n(const char *s, size_t n, struct mgw_json_error *e)
{
	return mgw_json_parse(s, n, 0, e);
}

static json_t *parse(const char *s, struct mgw_json_error *e)
{
	return parse_n(s, strlen(s), e);
}

static void refused(const char *s, size_t n, enum mgw_json_err code)
{
	struct mgw_json_error e;
	json_t *v = parse_n(s, n, &e);

	if (v)
		fail_msg("accepted: %.*s", (int)n, s);
	assert_int_equal(e.code, code);
	assert_true(e.text[0] != '\0');
}

#define REFUSED(lit, code) refused(lit, sizeof(lit) - 1, code)

static void test_values(void **state)
{
	struct mgw_json_error e;
	json_t *v;
	const char *s;

	(void)state;
	v = parse(" {\"a\":[1,-0,0.5,-1.25e-2,1E3,true,false,null],"
	          "\"b\":\"x\\n\\t\\\"\\\\\\/\\b\\f\\r\",\"\":{}} ", &e);
	assert_non_null(v);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(v, "a"), 0)), 1);
	assert_true(json_is_integer(json_array_get(json_object_get(v, "a"), 1)));
	assert_true(json_real_value(json_array_get(json_object_get(v, "a"), 3)) == -1.25e-2);
	assert_true(json_real_value(json_array_get(json_object_get(v, "a"), 4)) == 1000.0);
	assert_true(json_is_true(json_array_get(json_object_get(v, "a"), 5)));
	assert_true(json_is_null(json_array_get(json_object_get(v, "a"), 7)));
	assert_string_equal(json_string_value(json_object_get(v, "b")), "x\n\t\"\\/\b\f\r");
	assert_true(json_is_object(json_object_get(v, "")));
	json_decref(v);
	/* escapes decode to UTF-8; a surrogate pair to one code point */
	v = parse("\"\\u00e9\\u65e5\\ud83d\\ude00\"", &e);
	assert_non_null(v);
	s = json_string_value(v);
	assert_string_equal(s, "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80");
	json_decref(v);
	/* raw UTF-8 passes as it is */
	v = parse("\"\xc3\xa9\xf0\x9f\x98\x80\"", &e);
	assert_non_null(v);
	assert_string_equal(json_string_value(v), "\xc3\xa9\xf0\x9f\x98\x80");
	json_decref(v);
	/* U+0000 inside a value: kept, the length says so */
	v = parse("\"a\\u0000b\"", &e);
	assert_non_null(v);
	assert_int_equal(json_string_length(v), 3);
	json_decref(v);
	/* integer bounds, and a number longer than any buffer */
	v = parse("[9223372036854775807,-9223372036854775808,"
	          "0.0000000000000000000000000000000000000000000000000000000000000000000000001]", &e);
	assert_non_null(v);
	assert_true(json_integer_value(json_array_get(v, 0)) == INT64_MAX);
	assert_true(json_integer_value(json_array_get(v, 1)) == INT64_MIN);
	assert_true(json_real_value(json_array_get(v, 2)) > 0);
	json_decref(v);
}

static void test_refused(void **state)
{
	(void)state;
	REFUSED("", MGW_JSON_SYNTAX);
	REFUSED("   ", MGW_JSON_SYNTAX);
	REFUSED("{", MGW_JSON_SYNTAX);
	REFUSED("{\"a\":1,}", MGW_JSON_SYNTAX);
	REFUSED("[1,]", MGW_JSON_SYNTAX);
	REFUSED("{\"a\" 1}", MGW_JSON_SYNTAX);
	REFUSED("{a:1}", MGW_JSON_SYNTAX);
	REFUSED("[1] x", MGW_JSON_SYNTAX);
	REFUSED("01", MGW_JSON_SYNTAX);
	REFUSED("1.", MGW_JSON_SYNTAX);
	REFUSED(".5", MGW_JSON_SYNTAX);
	REFUSED("1e", MGW_JSON_SYNTAX);
	REFUSED("-", MGW_JSON_SYNTAX);
	REFUSED("+1", MGW_JSON_SYNTAX);
	REFUSED("tru", MGW_JSON_SYNTAX);
	REFUSED("nulls", MGW_JSON_SYNTAX);
	/* without MGW_JSON_WIDE_NUMBERS, as jansson (test_wide_numbers) */
	REFUSED("9223372036854775808", MGW_JSON_RANGE);   /* past int64 */
	REFUSED("-9223372036854775809", MGW_JSON_RANGE);
	REFUSED("1e400", MGW_JSON_RANGE);                 /* real overflow */
	REFUSED("\"a", MGW_JSON_SYNTAX);
	REFUSED("\"a\x01\"", MGW_JSON_SYNTAX);            /* control byte */
	REFUSED("\"a\x00\"", MGW_JSON_SYNTAX);            /* raw NUL */
	REFUSED("\"\\x\"", MGW_JSON_SYNTAX);
	REFUSED("\"\\u12\"", MGW_JSON_SYNTAX);
	REFUSED("\"\\ud83d\"", MGW_JSON_SYNTAX);          /* lone high */
	REFUSED("\"\\ude00\"", MGW_JSON_SYNTAX);          /* lone low */
	REFUSED("\"\\ud83d\\u0041\"", MGW_JSON_SYNTAX);   /* high + non-low */
	REFUSED("\"\xc0\xaf\"", MGW_JSON_SYNTAX);         /* overlong '/' */
	REFUSED("\"\xe0\x80\xaf\"", MGW_JSON_SYNTAX);     /* overlong */
	REFUSED("\"\xed\xa0\x80\"", MGW_JSON_SYNTAX);     /* UTF-8 surrogate */
	REFUSED("\"\xf4\x90\x80\x80\"", MGW_JSON_SYNTAX); /* past U+10FFFF */
	REFUSED("\"\xc3\"", MGW_JSON_SYNTAX);             /* cut sequence */
	REFUSED("\xef\xbb\xbf{}", MGW_JSON_SYNTAX);       /* BOM */
	REFUSED("{\"a\\u0000\":1}", MGW_JSON_SYNTAX);     /* NUL in a name */
	/* jansson skips these NULs; a parser behind the gateway might not */
	REFUSED("5\0", MGW_JSON_SYNTAX);
	REFUSED("[1\0,2]", MGW_JSON_SYNTAX);
	REFUSED("null\0", MGW_JSON_SYNTAX);
	REFUSED("{\"a\":1,\"a\":2}", MGW_JSON_DUPLICATE);
	REFUSED("{\"a\":1,\"\\u0061\":2}", MGW_JSON_DUPLICATE); /* same name */
	REFUSED("{\"x\":{\"b\":1,\"b\":1}}", MGW_JSON_DUPLICATE);
}

/* MGW_JSON_WIDE_NUMBERS: every RFC 8259 number is read.  Those a
 * jansson number holds are the values jansson builds; the others keep
 * their exact text; a bad number is still refused. */
static void test_wide_numbers(void **state)
{
	static const struct {
		const char *text;
		int kind; /* 'i' integer, 'r' real, 'w' wide */
		double real;
	} rows[] = {
		{"9223372036854775807", 'i', 0},
		{"-9223372036854775808", 'i', 0},
		{"9223372036854775808", 'w', 0},
		{"-9223372036854775809", 'w', 0},
		{"12345678901234567890123", 'w', 0},
		{"-0", 'i', 0},
		{"-0.0", 'r', -0.0},
		{"1e400", 'w', 0},
		{"-1E+400", 'w', 0},
		{"1E-400", 'r', 0.0},
		{"2.5e-320", 'r', 2.5e-320},
		{"1e308", 'r', 1e308},
		{"0.1000000000000000000000000000000000000000000000000000000000000"
		 "00000000000000000000000000000000000000000000000000000000000000"
		 "00000000000000000000000000000000000000000000000000000000000000"
		 "00000000000000000000000000000000000000000000000000000000000000"
		 "0000000000000000000000000000000000000000000000000001", 'r', 0.1},
	};
	struct mgw_json_error e;
	char doc[512];
	const char *t;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *v, *x, *strict;

		snprintf(doc, sizeof(doc), "{\"a\":[%s]}", rows[i].text);
		v = mgw_json_parse_flags(doc, strlen(doc), 0, MGW_JSON_WIDE_NUMBERS,
		                         &e);
		if (!v)
			fail_msg("refused %s: %s", rows[i].text, e.text);
		x = json_array_get(json_object_get(v, "a"), 0);
		strict = mgw_json_parse(doc, strlen(doc), 0, &e);
		switch (rows[i].kind) {
		case 'i':
			assert_true(json_is_integer(x));
			assert_false(mgw_json_wide_number(x, NULL, NULL));
			assert_true(json_equal(v, strict));
			break;
		case 'r':
			assert_true(json_is_real(x));
			assert_true(json_real_value(x) == rows[i].real);
			assert_true(json_equal(v, strict));
			break;
		default:
			assert_true(mgw_json_wide_number(x, &t, &n));
			assert_int_equal(n, strlen(rows[i].text));
			assert_memory_equal(t, rows[i].text, n);
			/* a C-string view sees nothing of it */
			assert_int_equal(strlen(json_string_value(x)), 0);
			assert_null(strict);
			assert_int_equal(e.code, MGW_JSON_RANGE);
			break;
		}
		json_decref(strict);
		json_decref(v);
	}
	/* a string is never a wide number, even one holding U+0000 first */
	{
		json_t *v = mgw_json_parse_flags("\"\\u00001\"", 9, 0,
		                                 MGW_JSON_WIDE_NUMBERS, &e);

		assert_non_null(v);
		assert_false(mgw_json_wide_number(v, NULL, NULL));
		json_decref(v);
	}
	/* syntax is still checked, whatever the size */
	for (size_t i = 0; i < 5; i++) {
		static const char *bad[] = {"012345678901234567890123", "1e", "-",
		                            "1.e400", "99999999999999999999999x"};

		assert_null(mgw_json_parse_flags(bad[i], strlen(bad[i]), 0,
		                                 MGW_JSON_WIDE_NUMBERS, &e));
		assert_int_equal(e.code, MGW_JSON_SYNTAX);
	}
}

static void test_depth(void **state)
{
	struct mgw_json_error e;
	char buf[200];
	json_t *v;

	(void)state;
	memset(buf, '[', 64);
	memset(buf + 64, ']', 64);
	v = mgw_json_parse(buf, 128, 64, &e);
	assert_non_null(v);
	json_decref(v);
	memset(buf, '[', 65);
	memset(buf + 65, ']', 65);
	assert_null(mgw_json_parse(buf, 130, 64, &e));
	assert_int_equal(e.code, MGW_JSON_DEPTH);
	/* unbalanced and deep: refused at the limit, no recursion past it */
	memset(buf, '{', sizeof(buf));
	assert_null(mgw_json_parse(buf, sizeof(buf), 8, &e));
	assert_int_equal(e.code, MGW_JSON_SYNTAX); /* '{' needs a name */
	memset(buf, '[', sizeof(buf));
	assert_null(mgw_json_parse(buf, sizeof(buf), 8, &e));
	assert_int_equal(e.code, MGW_JSON_DEPTH);
}

/* Writes "[0,0,...,0]" with n zeros into a new buffer: n + 1 values. */
static char *zeros(size_t n, size_t *len)
{
	char *b = malloc(2 * n + 2);

	assert_non_null(b);
	b[0] = '[';
	for (size_t i = 0; i < n; i++) {
		b[1 + 2 * i] = '0';
		b[2 + 2 * i] = i + 1 < n ? ',' : ']';
	}
	*len = 2 * n + 1;
	return b;
}

/* At most MGW_JSON_MAX_VALUES values, counting containers and scalars at
 * every depth: the memory a document can build is bounded. */
static void test_value_limit(void **state)
{
	struct mgw_json_error e;
	size_t len;
	char *b = zeros(MGW_JSON_MAX_VALUES - 1, &len);
	json_t *v;

	(void)state;
	v = mgw_json_parse(b, len, 0, &e);
	assert_non_null(v);
	assert_int_equal(json_array_size(v), MGW_JSON_MAX_VALUES - 1);
	json_decref(v);
	free(b);
	b = zeros(MGW_JSON_MAX_VALUES, &len);
	assert_null(mgw_json_parse(b, len, 0, &e));
	assert_int_equal(e.code, MGW_JSON_LIMIT);
	free(b);
	/* empty arrays, the costliest value per byte, count the same:
	 * "[" + MAX times "[]," + "[]]" */
	len = 1 + 3 * (size_t)MGW_JSON_MAX_VALUES + 3;
	b = malloc(len);
	assert_non_null(b);
	b[0] = '[';
	for (size_t i = 0; i < MGW_JSON_MAX_VALUES; i++)
		memcpy(b + 1 + 3 * i, "[],", 3);
	memcpy(b + len - 3, "[]]", 3);
	assert_null(mgw_json_parse(b, len, 0, &e));
	assert_int_equal(e.code, MGW_JSON_LIMIT);
	free(b);
}

/* One byte of every kind at every offset of a long string, so that it
 * lands in each lane of a 16-byte block and in the tail after the
 * blocks: the parse and the skim agree with what the byte means (plain
 * text, the closing quote, an escape, a control byte, UTF-8 good and
 * bad) and the string's value is exact. */
static void test_string_lanes(void **state)
{
	static const struct {
		const char *ins;  /* put at the offset */
		const char *want; /* the value's bytes there, NULL: refused */
	} kinds[] = {
		{"a", "a"}, {"\\n", "\n"}, {"\\u00e9", "\xc3\xa9"},
		{"\xc3\xa9", "\xc3\xa9"}, {"\x7f", "\x7f"}, {"\x01", NULL},
		{"\x1f", NULL}, {"\xc3", NULL}, {"\xff", NULL}, {"\\x", NULL},
	};
	(void)state;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (size_t off = 0; off < 40; off++) {
			char doc[128], val[128];
			size_t n = 0, tail = 37 - (off % 7);
			struct mgw_json_error e;
			struct mgw_json_skim sk;
			json_t *v;

			doc[n++] = '"';
			memset(doc + n, 'x', off);
			n += off;
			memcpy(doc + n, kinds[k].ins, strlen(kinds[k].ins));
			n += strlen(kinds[k].ins);
			memset(doc + n, 'y', tail);
			n += tail;
			doc[n++] = '"';
			v = mgw_json_parse(doc, n, 0, &e);
			if (!kinds[k].want) {
				if (v)
					fail_msg("kind %zu at %zu accepted", k, off);
				assert_int_equal(mgw_json_skim(doc, n, 0, NULL, 0, &sk), -1);
				continue;
			}
			if (!v || !json_is_string(v))
				fail_msg("kind %zu at %zu refused: %s", k, off, e.text);
			memset(val, 'x', off);
			memcpy(val + off, kinds[k].want, strlen(kinds[k].want));
			memset(val + off + strlen(kinds[k].want), 'y', tail);
			assert_int_equal(json_string_length(v),
			                 off + strlen(kinds[k].want) + tail);
			assert_memory_equal(json_string_value(v), val,
			                    json_string_length(v));
			json_decref(v);
			assert_int_equal(mgw_json_skim(doc, n, 0, NULL, 0, &sk), 0);
			/* cut before the closing quote: unterminated */
			assert_null(mgw_json_parse(doc, n - 1, 0, &e));
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_wide_numbers),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_value_limit),
		cmocka_unit_test(test_string_lanes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
