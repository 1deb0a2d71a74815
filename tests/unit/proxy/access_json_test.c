/* access_json_test.c - the trace id of the JSON access line
 * (src/proxy/access_json.c): taken from a valid W3C traceparent only
 * (version 00 exactly 55 bytes, later versions may append fields;
 * lowercase hex; neither id all zeros; version ff invalid). */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "proxy/access_json.h"

#define TID "4bf92f3577b34da6a3ce929d0e0e4736"
#define PID "00f067aa0ba902b7"

static void test_valid(void **state)
{
	char out[33];

	(void)state;
	assert_int_equal(mgw_access_trace_id("00-" TID "-" PID "-01", out), 0);
	assert_string_equal(out, TID);
	assert_int_equal(mgw_access_trace_id("00-" TID "-" PID "-00", out), 0);
	/* a later version may carry more after a dash */
	assert_int_equal(mgw_access_trace_id("01-" TID "-" PID "-01-what", out), 0);
	assert_string_equal(out, TID);
}

static void test_invalid(void **state)
{
	static const char *const bad[] = {
		NULL, "", "00-xyz-01",
		"00-" TID "-" PID "-01-extra",                 /* 00 is 55 bytes */
		"01-" TID "-" PID "-01x",                      /* no dash after */
		"ff-" TID "-" PID "-01",                       /* version ff */
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-" PID "-01", /* uppercase */
		"00-00000000000000000000000000000000-" PID "-01", /* zero trace */
		"00-" TID "-0000000000000000-01",              /* zero parent */
		"00-" TID "-" PID "-0g",
		"00_" TID "-" PID "-01",
		"0-" TID "-" PID "-01",
	};
	char out[33];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mgw_access_trace_id(bad[i], out), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
