/* bytes_test.c - the binary record codec (src/util/bytes.c): what is
 * written reads back the same, big-endian; a short or malformed record
 * sets `bad` and keeps it; strings with a NUL byte are refused. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

static void test_round_trip(void **state)
{
	unsigned char buf[64];
	struct mgw_wbuf w = {buf, 0, sizeof(buf)};
	struct mgw_rbuf r;
	const unsigned char *f;
	size_t n;
	char *s;

	(void)state;
	mgw_wbuf_put_uint(&w, 0x0102, 2);
	mgw_wbuf_put_uint(&w, (uint64_t)-5, 8);
	mgw_wbuf_put_str(&w, "hello", 1);
	mgw_wbuf_put_str(&w, NULL, 2);
	mgw_wbuf_put_field(&w, "a\0b", 3, 4);
	assert_int_equal(w.len, 2 + 8 + 6 + 2 + 7);
	assert_int_equal(buf[0], 0x01); /* most significant first */
	assert_int_equal(buf[1], 0x02);
	r = (struct mgw_rbuf){buf, w.len, 0, 0};
	assert_int_equal(mgw_rbuf_get_uint(&r, 2), 0x0102);
	assert_int_equal(mgw_u64_to_signed(mgw_rbuf_get_uint(&r, 8)), -5);
	s = mgw_rbuf_get_str(&r, 1);
	assert_string_equal(s, "hello");
	free(s);
	assert_null(mgw_rbuf_get_str(&r, 2)); /* length 0: absent */
	assert_false(r.bad);
	mgw_rbuf_get_field(&r, 4, &f, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(f, "a\0b", 3);
	assert_false(r.bad);
	assert_int_equal(r.off, w.len);
}

static void test_short_reads_are_sticky(void **state)
{
	static const unsigned char rec[] = {0x00, 0x05, 'a', 'b'};
	struct mgw_rbuf r = {rec, sizeof(rec), 0, 0};

	(void)state;
	assert_null(mgw_rbuf_get_str(&r, 2)); /* says 5 bytes, has 2 */
	assert_true(r.bad);
	assert_int_equal(mgw_rbuf_get_uint(&r, 1), 0);
	r = (struct mgw_rbuf){rec, 1, 0, 0};
	assert_int_equal(mgw_rbuf_get_uint(&r, 2), 0);
	assert_true(r.bad);
}

static void test_nul_in_string_refused(void **state)
{
	static const unsigned char rec[] = {0x03, 'a', 0, 'b'};
	struct mgw_rbuf r = {rec, sizeof(rec), 0, 0};

	(void)state;
	assert_null(mgw_rbuf_get_str(&r, 1));
	assert_true(r.bad);
}

static void test_signed_extremes(void **state)
{
	(void)state;
	assert_true(mgw_u64_to_signed((uint64_t)INT64_MAX) == INT64_MAX);
	assert_true(mgw_u64_to_signed((uint64_t)1 << 63) == INT64_MIN);
	assert_true(mgw_u64_to_signed(UINT64_MAX) == -1);
	assert_true(mgw_u64_to_signed(0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_short_reads_are_sticky),
		cmocka_unit_test(test_nul_in_string_refused),
		cmocka_unit_test(test_signed_extremes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
