/* jsonw_test.c - the bounded JSON writer (src/util/jsonw.c): whatever the
 * values hold (quotes, control bytes, invalid UTF-8, more than fits), the
 * result parses as one JSON object (read back with jansson, which refuses
 * invalid UTF-8), holds no raw control byte, strings decode to what was
 * given where it was valid, and bounds cut on character boundaries. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/jsonw.h"

/* Parses buf (len bytes) as one object; fails the test otherwise. */
static json_t *parse(const char *buf, size_t len)
{
	json_error_t err;
	json_t *o;

	assert_int_equal(strlen(buf), len);
	for (size_t i = 0; i < len; i++)
		assert_true((unsigned char)buf[i] >= 0x20 &&
		            (unsigned char)buf[i] != 0x7f);
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	if (!o)
		fail_msg("not JSON (%s): %s", err.text, buf);
	assert_true(json_is_object(o));
	return o;
}

static const char *member_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void test_escapes(void **state)
{
	static const char nasty[] = "a\"b\\c\nd\re\tf\bg\fh\x01i\x1b[2J\x7fj/";
	char buf[256];
	struct mgw_jsonw w;
	size_t n;
	json_t *o;

	(void)state;
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_cstr(&w, "s", nasty, 1000);
	n = mgw_jsonw_end(&w);
	assert_false(mgw_jsonw_cut(&w));
	assert_non_null(strstr(buf, "\\u001b"));
	assert_non_null(strstr(buf, "\\u007f"));
	assert_non_null(strstr(buf, "\\\""));
	o = parse(buf, n);
	assert_string_equal(member_str(o, "s"), nasty);
	json_decref(o);
}

static void test_utf8(void **state)
{
	/* valid: é (2 bytes), € (3), 😀 (4): copied as is */
	static const char good[] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
	/* each invalid byte becomes U+FFFD (EF BF BD when decoded) */
	static const struct {
		const char *in;
		const char *out;
	} bad[] = {
		{"\xff", "\xef\xbf\xbd"},
		{"a\xc0\xaf" "b", "a\xef\xbf\xbd\xef\xbf\xbd" "b"}, /* overlong '/' */
		{"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* surrogate */
		{"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd"},           /* cut sequence */
		{"\xc3(", "\xef\xbf\xbd("},                           /* bad continuation */
	};
	char buf[256];
	struct mgw_jsonw w;
	json_t *o;
	size_t n;

	(void)state;
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_cstr(&w, "s", good, 100);
	n = mgw_jsonw_end(&w);
	o = parse(buf, n);
	assert_string_equal(member_str(o, "s"), good);
	json_decref(o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mgw_jsonw_init(&w, buf, sizeof(buf));
		mgw_jsonw_cstr(&w, "s", bad[i].in, 100);
		n = mgw_jsonw_end(&w);
		o = parse(buf, n);
		assert_string_equal(member_str(o, "s"), bad[i].out);
		json_decref(o);
	}
	/* U+2028 is escaped (a line break to some readers) */
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_cstr(&w, "s", "a\xe2\x80\xa8" "b", 100);
	n = mgw_jsonw_end(&w);
	assert_non_null(strstr(buf, "\\u2028"));
	o = parse(buf, n);
	assert_string_equal(member_str(o, "s"), "a\xe2\x80\xa8" "b");
	json_decref(o);
	/* an embedded NUL is data, not the end */
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_str(&w, "s", "a\0b", 3, 100);
	n = mgw_jsonw_end(&w);
	assert_non_null(strstr(buf, "a\\u0000b"));
	o = parse(buf, n);
	json_decref(o);
}

static void test_bound(void **state)
{
	char in[301], buf[1024];
	struct mgw_jsonw w;
	json_t *o;
	size_t n;

	(void)state;
	memset(in, 'x', 300);
	in[300] = '\0';
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_cstr(&w, "s", in, 128);
	n = mgw_jsonw_end(&w);
	assert_true(mgw_jsonw_cut(&w));
	o = parse(buf, n);
	assert_int_equal(strlen(member_str(o, "s")), 128);
	json_decref(o);

	/* 2-byte characters and an odd bound: cut before the character the
	 * bound splits, never inside it */
	for (size_t i = 0; i < 150; i++)
		memcpy(in + 2 * i, "\xc3\xa9", 2);
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_cstr(&w, "s", in, 127);
	n = mgw_jsonw_end(&w);
	o = parse(buf, n);
	assert_int_equal(strlen(member_str(o, "s")), 126);
	json_decref(o);

	/* exactly at the bound: not cut */
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_str(&w, "s", in, 128, 128);
	mgw_jsonw_end(&w);
	assert_false(mgw_jsonw_cut(&w));
}

/* Every buffer size from the smallest up: always valid JSON, within the
 * buffer, members either whole or left out, strings cut. */
static void test_buffer_full(void **state)
{
	char in[200], buf[300];

	(void)state;
	for (size_t i = 0; i < sizeof(in) - 1; i++)
		in[i] = (i % 7 == 0) ? '\n' : (i % 5 == 0) ? '\xff' : 'a';
	in[sizeof(in) - 1] = '\0';
	for (size_t cap = 3; cap <= sizeof(buf); cap++) {
		struct mgw_jsonw w;
		json_t *o;
		size_t n;

		memset(buf, 0x55, sizeof(buf));
		mgw_jsonw_init(&w, buf, cap);
		mgw_jsonw_uint(&w, "status", 200);
		mgw_jsonw_cstr(&w, "path", in, 1000);
		mgw_jsonw_int(&w, "n", -42);
		mgw_jsonw_cstr(&w, "m", "tools/call", 64);
		n = mgw_jsonw_end(&w);
		assert_true(n < cap);
		assert_int_equal(buf[n], '\0');
		if (cap < sizeof(buf))
			assert_int_equal((unsigned char)buf[cap], 0x55);
		o = parse(buf, n);
		if (cap < 250)
			assert_true(mgw_jsonw_cut(&w));
		json_decref(o);
	}
}

static void test_scalars(void **state)
{
	char buf[256];
	struct mgw_jsonw w;
	json_t *o;
	size_t n;

	(void)state;
	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_int(&w, "i", -7);
	mgw_jsonw_uint(&w, "u", 4294967296123ull);
	mgw_jsonw_fixed(&w, "f", 1.23456, 3);
	mgw_jsonw_fixed(&w, "nan", NAN, 3);
	mgw_jsonw_bool(&w, "t", 1);
	mgw_jsonw_bool(&w, "no", 0);
	mgw_jsonw_cstr(&w, "null", NULL, 10);
	n = mgw_jsonw_end(&w);
	assert_string_equal(buf, "{\"i\":-7,\"u\":4294967296123,"
	                         "\"f\":1.235,\"nan\":null,\"t\":true,"
	                         "\"no\":false,\"null\":null}");
	o = parse(buf, n);
	json_decref(o);

	mgw_jsonw_init(&w, buf, sizeof(buf));
	mgw_jsonw_fixed(&w, "a", -2.5, 1);
	mgw_jsonw_fixed(&w, "b", 0.0004, 3);
	mgw_jsonw_fixed(&w, "c", -0.0004, 3);
	mgw_jsonw_fixed(&w, "d", 12.9996, 3);
	mgw_jsonw_fixed(&w, "e", 7.6, 0);
	mgw_jsonw_fixed(&w, "f", 1e12, 3);
	mgw_jsonw_int(&w, "g", INT64_MIN);
	mgw_jsonw_uint(&w, "h", 0);
	n = mgw_jsonw_end(&w);
	assert_string_equal(buf, "{\"a\":-2.5,\"b\":0.000,\"c\":0.000,"
	                         "\"d\":13.000,\"e\":8,\"f\":null,"
	                         "\"g\":-9223372036854775808,\"h\":0}");
	o = parse(buf, n);
	json_decref(o);

	mgw_jsonw_init(&w, buf, sizeof(buf));
	n = mgw_jsonw_end(&w);
	assert_string_equal(buf, "{}");
	assert_int_equal(n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_buffer_full),
		cmocka_unit_test(test_scalars),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
