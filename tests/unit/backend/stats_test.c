/* stats_test.c - unit tests for src/backend/stats.c: per-method counting
 * stays bounded, and the /stats document carries the fields tests and the
 * bench read. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"

static void test_method_counts_bounded(void **state)
{
	static struct mgw_be_stats st;
	char name[64];

	(void)state;
	memset(&st, 0, sizeof(st));
	mgw_be_stats_method(&st, "tools/call");
	mgw_be_stats_method(&st, "tools/call");
	mgw_be_stats_method(&st, NULL);
	assert_int_equal(st.n_methods, 2);
	assert_string_equal(st.methods[0].name, "tools/call");
	assert_int_equal(st.methods[0].count, 2);
	assert_string_equal(st.methods[1].name, "(response)");
	/* A client inventing method names cannot grow the table. */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "x/%d", i);
		mgw_be_stats_method(&st, name);
	}
	assert_int_equal(st.n_methods, MGW_BE_METHOD_SLOTS);
	assert_int_equal(st.other_methods, 1000 - (MGW_BE_METHOD_SLOTS - 2));
	/* Over-long names go to "other" too, never truncated into a slot. */
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memset(&st, 0, sizeof(st));
	mgw_be_stats_method(&st, name);
	assert_int_equal(st.n_methods, 0);
	assert_int_equal(st.other_methods, 1);
}

static void test_document(void **state)
{
	static struct mgw_backend be;
	static const char *const keys[] = {
		"id", "era", "state", "sessions", "sessions_created",
		"sessions_expired", "sessions_deleted", "initialize_count",
		"requests", "requests_by_method", "lost_session_rejections",
		"handle_losses", "sse_streams_open", "uptime_s", "connections",
	};
	json_t *doc;
	char id[] = "replica-7";

	(void)state;
	memset(&be, 0, sizeof(be));
	be.conf.id = id;
	be.conf.era = MGW_ERA_MODERN;
	be.conf.state = MGW_STATE_HMAC;
	be.stats.requests = 12;
	be.stats.initialize_count = 3;
	be.stats.handle_losses = 2;
	mgw_be_stats_method(&be.stats, "tools/list");
	doc = mgw_be_stats_json(&be);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_non_null(json_object_get(doc, keys[i]));
	assert_string_equal(json_string_value(json_object_get(doc, "id")), "replica-7");
	assert_string_equal(json_string_value(json_object_get(doc, "era")), "modern");
	assert_string_equal(json_string_value(json_object_get(doc, "state")), "hmac");
	assert_int_equal(json_integer_value(json_object_get(doc, "requests")), 12);
	assert_int_equal(json_integer_value(json_object_get(doc, "initialize_count")), 3);
	assert_int_equal(json_integer_value(json_object_get(doc, "handle_losses")), 2);
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(doc, "requests_by_method"), "tools/list")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "sessions")), 0);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_counts_bounded),
		cmocka_unit_test(test_document),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
