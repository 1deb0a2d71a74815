/* headers_test.c - the ordered header list (src/http/headers.c): one
 * block per field survives every operation, lookups are by whole name
 * without regard to case, values can be extended in place, and the field
 * checks agree with RFC 9110 byte by byte. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "http/headers.h"

static void test_add_get_count_remove(void **state)
{
	struct mgw_headers h;

	(void)state;
	mgw_headers_init(&h);
	for (int i = 0; i < 40; i++) /* past the first growth */
		assert_int_equal(mgw_headers_adds(&h, i % 2 ? "X-A" : "x-ab",
		                                  i % 2 ? "odd" : "even"), 0);
	assert_int_equal(mgw_headers_adds(&h, "Content-Type", "application/json"), 0);
	assert_int_equal(h.n, 41);
	assert_string_equal(mgw_headers_get(&h, "content-type"), "application/json");
	assert_string_equal(mgw_headers_get(&h, "X-AB"), "even");
	/* a prefix or an extension of a name is another name */
	assert_null(mgw_headers_get(&h, "content-typ"));
	assert_null(mgw_headers_get(&h, "content-types"));
	assert_null(mgw_headers_get(&h, "x"));
	assert_int_equal(mgw_headers_count(&h, "x-a"), 20);
	assert_int_equal(mgw_headers_count(&h, "X-AB"), 20);
	assert_int_equal(mgw_headers_remove(&h, "x-a"), 20);
	assert_int_equal(h.n, 21);
	assert_int_equal(h.bytes, 20 * (4 + 4) + 12 + 16);
	assert_int_equal(mgw_headers_set(&h, "content-type", "text/plain"), 0);
	assert_int_equal(mgw_headers_count(&h, "Content-Type"), 1);
	assert_string_equal(h.v[h.n - 1].value, "text/plain");
	/* embedded NUL in a value: the length is the truth */
	assert_int_equal(mgw_headers_add(&h, "Bin", 3, "a\0b", 3), 0);
	assert_int_equal(h.v[h.n - 1].value_len, 3);
	assert_memory_equal(h.v[h.n - 1].value, "a\0b", 4);
	mgw_headers_deinit(&h);
	assert_int_equal(h.n, 0);
	assert_null(mgw_headers_get(&h, "bin"));
}

static void test_add_all(void **state)
{
	struct mgw_headers a, b;

	(void)state;
	mgw_headers_init(&a);
	mgw_headers_init(&b);
	assert_int_equal(mgw_headers_adds(&a, "X-One", "1"), 0);
	assert_int_equal(mgw_headers_adds(&a, "x-two", ""), 0);
	assert_int_equal(mgw_headers_adds(&b, "First", "0"), 0);
	assert_int_equal(mgw_headers_add_all(&b, &a), 0);
	assert_int_equal(mgw_headers_add_all(&b, NULL), 0);
	assert_int_equal(b.n, 3);
	assert_string_equal(b.v[0].name, "First");
	assert_string_equal(b.v[1].name, "X-One");
	assert_string_equal(b.v[1].value, "1");
	assert_string_equal(b.v[2].name, "x-two");
	assert_int_equal(b.v[2].value_len, 0);
	/* copies, not references */
	mgw_headers_deinit(&a);
	assert_string_equal(mgw_headers_get(&b, "x-one"), "1");
	mgw_headers_deinit(&b);
}

/* A clone is the same list in one block: every field in order, the byte
 * count, and a list that still grows; only into an empty list. */
static void test_clone(void **state)
{
	struct mgw_headers a, b, c;

	(void)state;
	mgw_headers_init(&a);
	mgw_headers_init(&b);
	mgw_headers_init(&c);
	assert_int_equal(mgw_headers_clone(&b, &a), 0); /* empty */
	assert_int_equal(b.n, 0);
	assert_int_equal(mgw_headers_adds(&a, "Accept", "application/json"), 0);
	assert_int_equal(mgw_headers_adds(&a, "X-Empty", ""), 0);
	assert_int_equal(mgw_headers_adds(&a, "accept", "text/event-stream"), 0);
	assert_int_equal(mgw_headers_clone(&b, &a), 0);
	assert_int_equal(b.n, 3);
	assert_int_equal(b.bytes, a.bytes);
	for (size_t i = 0; i < a.n; i++) {
		assert_string_equal(b.v[i].name, a.v[i].name);
		assert_string_equal(b.v[i].value, a.v[i].value);
		assert_int_equal(b.v[i].name_len, a.v[i].name_len);
		assert_int_equal(b.v[i].value_len, a.v[i].value_len);
		assert_ptr_not_equal(b.v[i].name, a.v[i].name);
	}
	assert_int_equal(mgw_headers_count(&b, "accept"), 2);
	mgw_headers_deinit(&a); /* the clone owns its bytes */
	assert_string_equal(mgw_headers_get(&b, "x-empty"), "");
	assert_int_equal(mgw_headers_adds(&b, "Via", "1.1 mcpgw"), 0);
	assert_int_equal(b.n, 4);
	assert_string_equal(b.v[0].value, "application/json");
	assert_string_equal(mgw_headers_get(&b, "via"), "1.1 mcpgw");
	assert_int_equal(mgw_headers_clone(&b, &c), MGW_EINVAL); /* not empty */
	mgw_headers_deinit(&b);
}

static void test_append_value(void **state)
{
	struct mgw_headers h;
	size_t before;

	(void)state;
	mgw_headers_init(&h);
	assert_int_equal(mgw_headers_adds(&h, "Cookie", "a=1"), 0);
	assert_int_equal(mgw_headers_adds(&h, "X-Forwarded-For", "10.0.0.1"), 0);
	before = h.bytes;
	assert_int_equal(mgw_headers_append_value(&h, 0, "; ", "b=2", 3), 0);
	assert_string_equal(h.v[0].name, "Cookie");
	assert_string_equal(h.v[0].value, "a=1; b=2");
	assert_int_equal(h.v[0].value_len, 8);
	assert_int_equal(h.bytes, before + 5);
	assert_int_equal(mgw_headers_append_value(&h, 1, ", ", "127.0.0.1", 9), 0);
	assert_string_equal(h.v[1].value, "10.0.0.1, 127.0.0.1");
	assert_string_equal(mgw_headers_get(&h, "x-forwarded-for"),
	                    "10.0.0.1, 127.0.0.1");
	/* the extended field is still freed and removed like any other */
	assert_int_equal(mgw_headers_remove(&h, "cookie"), 1);
	assert_string_equal(h.v[0].name, "X-Forwarded-For");
	mgw_headers_deinit(&h);
}

/* The strings live in blocks the list chains as it grows: many fields,
 * and values larger than a block, keep their bytes and addresses through
 * later additions, removals and appends; a moved list stays usable. */
static void test_blocks(void **state)
{
	struct mgw_headers h, moved;
	char name[32], big[5000], want[64];
	const char *addr0;

	(void)state;
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	mgw_headers_init(&h);
	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "x-field-%d", i);
		snprintf(want, sizeof(want), "value %d", i * 7);
		assert_int_equal(mgw_headers_adds(&h, name, i % 97 == 5 ? big : want), 0);
		if (i == 0)
			addr0 = h.v[0].value;
	}
	assert_ptr_equal(h.v[0].value, addr0);
	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "x-field-%d", i);
		snprintf(want, sizeof(want), "value %d", i * 7);
		assert_string_equal(mgw_headers_get(&h, name), i % 97 == 5 ? big : want);
	}
	assert_int_equal(mgw_headers_remove(&h, "x-field-3"), 1);
	assert_null(mgw_headers_get(&h, "x-field-3"));
	assert_int_equal(mgw_headers_append_value(&h, 0, ", ", "more", 4), 0);
	assert_string_equal(h.v[0].value, "value 0, more");
	assert_string_equal(h.v[0].name, "x-field-0");
	moved = h;   /* moved, as a struct */
	assert_string_equal(mgw_headers_get(&moved, "x-field-599"), "value 4193");
	mgw_headers_deinit(&moved);
}

static void test_header_is(void **state)
{
	struct mgw_headers h;

	(void)state;
	mgw_headers_init(&h);
	assert_int_equal(mgw_headers_adds(&h, "Mcp-Method", "tools/call"), 0);
	assert_true(MGW_HEADER_IS(&h.v[0], "mcp-method"));
	assert_true(MGW_HEADER_IS(&h.v[0], "MCP-METHOD"));
	assert_false(MGW_HEADER_IS(&h.v[0], "mcp-metho"));
	assert_false(MGW_HEADER_IS(&h.v[0], "mcp-methods"));
	assert_false(MGW_HEADER_IS(&h.v[0], "mcp-name"));
	mgw_headers_deinit(&h);
}

static int ref_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static void test_name_valid_every_byte(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		char n[3] = { 'a', (char)c, 'b' };

		assert_int_equal(mgw_header_name_valid(n, 3), ref_tchar((unsigned char)c));
	}
	assert_false(mgw_header_name_valid("", 0));
	assert_true(mgw_header_name_valid("x", 1));
}

static void test_value_valid_every_byte(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		char v[3] = { 'a', (char)c, 'b' };
		int ok = !((c < 0x20 && c != '\t') || c == 0x7f);

		assert_int_equal(mgw_header_value_valid(v, 3), ok);
	}
	assert_true(mgw_header_value_valid("", 0));
	/* every byte at every place of a long value (the word-wide path) */
	for (size_t pos = 0; pos < 21; pos++)
		for (int c = 0; c < 256; c++) {
			char v[21];
			int ok = !((c < 0x20 && c != '\t') || c == 0x7f);

			memset(v, 'x', sizeof(v));
			v[pos] = (char)c;
			assert_int_equal(mgw_header_value_valid(v, sizeof(v)), ok);
			/* and after a tab, which sends the word test to bytes */
			v[(pos + 7) % 21] = '\t';
			if (c != '\t' || (pos + 7) % 21 != pos)
				assert_int_equal(mgw_header_value_valid(v, sizeof(v)), ok);
		}
}

static void test_connection_lists(void **state)
{
	struct mgw_headers h;

	(void)state;
	mgw_headers_init(&h);
	assert_int_equal(mgw_headers_adds(&h, "Connection", "keep-alive, X-Hop"), 0);
	assert_int_equal(mgw_headers_adds(&h, "connection", "close"), 0);
	assert_int_equal(mgw_headers_adds(&h, "Connections", "X-Not"), 0);
	assert_true(mgw_headers_connection_lists(&h, "x-hop"));
	assert_true(mgw_headers_connection_lists(&h, "Close"));
	assert_false(mgw_headers_connection_lists(&h, "x-not"));
	assert_false(mgw_headers_connection_lists(&h, "x-ho"));
	mgw_headers_deinit(&h);
}

/* The Host / :authority grammar, the whole class of bad values. */
static void test_authority_valid(void **state)
{
	static const char *const good[] = {
		"", "h", "H.Example", "h:80", "h:", "h:65535", "127.0.0.1:8080",
		"[::1]", "[::1]:443", "[2001:db8::7]", "[v1.x:y]", "a-b_c~d.e",
		"x%41y", "!$&'()*+,;=", "h:00080",
	};
	static const char *const bad[] = {
		"a b", "a\tb", "a\x01" "b", "a\x7f", "a\x80" "b", "u@h", "u:p@h",
		":80", ":", "h:99999", "h:65536", "h:123456", "h:8x", "h:-1",
		"h:80:80", "a%zz", "a%4", "a%", "[::1", "[::g]:80", "[::1]x",
		"[]", "[::1]:8x", "a/b", "a?b", "a#b", "a\"b", "a<b", "a[b",
		"[v.x]", "[v1.]", "h:8 0",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!mgw_http_authority_valid(good[i], strlen(good[i])))
			fail_msg("'%s' refused", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (mgw_http_authority_valid(bad[i], strlen(bad[i])))
			fail_msg("'%s' accepted", bad[i]);
	/* a NUL inside the span is refused, the span's length is obeyed */
	assert_false(mgw_http_authority_valid("a\0b", 3));
	assert_true(mgw_http_authority_valid("ab c", 2));
}

/* The Host grammar's reg-name bytes, every byte against the RFC 3986
 * classes (the reader uses a table). */
static void test_authority_every_byte(void **state)
{
	(void)state;
	for (int b = 0; b < 256; b++) {
		char s[3] = {'a', (char)b, 'z'};
		int want = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') ||
		           (b >= 'A' && b <= 'Z') ||
		           (b && strchr("-._~!$&'()*+,;=", b) != NULL);

		/* ':' makes "z" a port, and not digits */
		if (mgw_http_authority_valid(s, 3) != want)
			fail_msg("byte 0x%02x: %d", b, !want);
	}
}

/* Hop-by-hop names, in any case, by length (not NUL-terminated). */
static void test_hop_by_hop(void **state)
{
	static const char *const hop[] = {
		"te", "TE", "Trailer", "upgrade", "Connection", "keep-alive",
		"HTTP2-Settings", "Proxy-Connection", "Transfer-Encoding",
		"proxy-authenticate",
	};
	static const char *const not[] = {
		"t", "tex", "Trailers", "Content-Length", "Proxy-Authorization",
		"host", "x-te", "",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (!mgw_header_is_hop_by_hop(hop[i], strlen(hop[i])))
			fail_msg("'%s' not hop-by-hop", hop[i]);
	for (size_t i = 0; i < sizeof(not) / sizeof(not[0]); i++)
		if (mgw_header_is_hop_by_hop(not[i], strlen(not[i])))
			fail_msg("'%s' hop-by-hop", not[i]);
	assert_true(mgw_header_is_hop_by_hop("te: x", 2));
	assert_false(mgw_header_is_hop_by_hop("te: x", 3));
}

/* The checked mark: only a reader sets it; every unchecked addition
 * clears it, a clone and a removal keep it. */
static void test_checked_mark(void **state)
{
	struct mgw_headers h, c = {0};
	char *sp;
	(void)state;

	mgw_headers_init(&h);
	assert_false(h.checked);
	sp = mgw_headers_space(&h, 8);
	assert_non_null(sp);
	memcpy(sp, "A\0b\0C\0d", 8);
	assert_int_equal(mgw_headers_add_ref(&h, sp, 1, sp + 2, 1), 0);
	assert_int_equal(mgw_headers_add_ref(&h, sp + 4, 1, sp + 6, 1), 0);
	h.checked = 1;
	assert_int_equal(mgw_headers_remove(&h, "c"), 1);
	assert_true(h.checked);
	assert_int_equal(mgw_headers_clone(&c, &h), 0);
	assert_true(c.checked);
	assert_string_equal(mgw_headers_get(&c, "a"), "b");
	assert_int_equal(mgw_headers_append_value(&c, 0, ", ", "x\x01", 2), 0);
	assert_false(c.checked);
	assert_int_equal(mgw_headers_set(&h, "a", "z"), 0);
	assert_false(h.checked);
	mgw_headers_deinit(&c);
	mgw_headers_deinit(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_get_count_remove),
		cmocka_unit_test(test_add_all),
		cmocka_unit_test(test_clone),
		cmocka_unit_test(test_append_value),
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_header_is),
		cmocka_unit_test(test_name_valid_every_byte),
		cmocka_unit_test(test_value_valid_every_byte),
		cmocka_unit_test(test_connection_lists),
		cmocka_unit_test(test_authority_valid),
		cmocka_unit_test(test_authority_every_byte),
		cmocka_unit_test(test_hop_by_hop),
		cmocka_unit_test(test_checked_mark),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
