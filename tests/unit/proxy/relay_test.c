/* relay_test.c - unit tests for the pure parts of src/proxy/relay.c:
 * which answers are collected (small, sized, not SSE; HEAD, 204, 304)
 * and which stream, Content-Length parsing and event-stream detection.
 * The relay's streaming, backpressure and cut paths are reached through
 * the pipeline in pipeline_test.c and the integration tests. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "http/headers.h"
#include "proxy/relay.h"

static void add(struct mgw_headers *h, const char *n, const char *v)
{
	assert_int_equal(mgw_headers_adds(h, n, v), 0);
}

static int collects(const char *method, int status, const char *cl,
                    const char *ct, size_t *len)
{
	struct mgw_headers h;
	int r;

	mgw_headers_init(&h);
	if (cl)
		add(&h, "Content-Length", cl);
	if (ct)
		add(&h, "Content-Type", ct);
	r = mgw_relay_collects(method, status, &h, len);
	mgw_headers_deinit(&h);
	return r;
}

static void test_collects(void **state)
{
	size_t len = 99;

	(void)state;
	assert_true(collects("POST", 200, "12", "application/json", &len));
	assert_int_equal(len, 12);
	assert_true(collects("POST", 200, "65536", NULL, &len));
	assert_int_equal(len, 65536);
	/* too large, unsized or SSE: streamed */
	assert_false(collects("POST", 200, "65537", NULL, &len));
	assert_false(collects("POST", 200, NULL, "application/json", &len));
	assert_false(collects("POST", 200, "10", "text/event-stream", &len));
	assert_false(collects("GET", 200, NULL, " text/event-stream; x=1", &len));
	/* no body to expect */
	assert_true(collects("HEAD", 200, "5000000", NULL, &len));
	assert_int_equal(len, 0);
	assert_true(collects("POST", 204, NULL, NULL, &len));
	assert_int_equal(len, 0);
	assert_true(collects("GET", 304, "40", NULL, &len));
	assert_int_equal(len, 0);
}

static void test_two_lengths_stream(void **state)
{
	struct mgw_headers h;
	size_t len;

	(void)state;
	mgw_headers_init(&h);
	add(&h, "Content-Length", "3");
	add(&h, "Content-Length", "3");
	assert_false(mgw_relay_collects("POST", 200, &h, &len));
	mgw_headers_deinit(&h);
}

static void test_small_length(void **state)
{
	size_t n = 7;

	(void)state;
	assert_true(mgw_relay_small_length("0", 10, &n));
	assert_int_equal(n, 0);
	assert_true(mgw_relay_small_length("10", 10, &n));
	assert_int_equal(n, 10);
	assert_false(mgw_relay_small_length("11", 10, &n));
	assert_false(mgw_relay_small_length("", 10, &n));
	assert_false(mgw_relay_small_length(NULL, 10, &n));
	assert_false(mgw_relay_small_length("1 ", 10, &n));
	assert_false(mgw_relay_small_length("-1", 10, &n));
	assert_false(mgw_relay_small_length("99999999999999999999999", 10, &n));
}

static void test_event_stream(void **state)
{
	(void)state;
	assert_true(mgw_relay_is_event_stream("text/event-stream"));
	assert_true(mgw_relay_is_event_stream("  TEXT/Event-Stream;charset=utf-8"));
	assert_false(mgw_relay_is_event_stream("application/json"));
	assert_false(mgw_relay_is_event_stream(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collects),
		cmocka_unit_test(test_two_lengths_stream),
		cmocka_unit_test(test_small_length),
		cmocka_unit_test(test_event_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
