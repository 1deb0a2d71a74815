/* state_redis_test.c - unit tests for src/backend/state_redis.c that need
 * no Redis server: URL validation, and that an unreachable store fails
 * operations at once with MGW_EIO (never blocks, never crashes) while it
 * keeps retrying.  Talking to a real redis-server is covered by
 * tests/integration/backend_handles.sh. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "backend/state.h"
#include "core/errors.h"
#include "core/log.h"

struct outcome {
	int calls;
	int err;
};

static void on_done(int err, int64_t value, const char *handle, void *arg)
{
	struct outcome *o = arg;

	(void)value;
	(void)handle;
	o->calls++;
	o->err = err;
}

static void test_bad_urls(void **state)
{
	static const char *const bad[] = {
		"http://127.0.0.1:6379", "redis://", "redis:///0",
		"redis://127.0.0.1:notaport", "redis://127.0.0.1:70000",
		"redis://127.0.0.1:6379/x", "127.0.0.1:6379",
	};
	struct event_base *base = event_base_new();
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_null(mgw_be_store_redis_new(base, bad[i], NULL, 60, err, sizeof(err)));
		assert_true(err[0] != '\0');
	}
	event_base_free(base);
}

/* Store pointed at a closed port / missing socket: every operation is
 * answered MGW_EIO synchronously, before and after connect attempts. */
static void check_unavailable(const char *url)
{
	struct event_base *base = event_base_new();
	char err[256] = "";
	struct mgw_be_store *s;
	struct outcome o = {0, 0};
	json_t *d = json_object();

	mgw_log_set_level(MGW_LOG_ERROR); /* connect failures are warnings */
	s = mgw_be_store_redis_new(base, url, NULL, 60, err, sizeof(err));
	assert_non_null(s);
	assert_string_equal(s->ops->name, "redis");
	s->ops->create(s, on_done, &o);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.err, MGW_EIO);
	/* Let the failed connection attempt be processed. */
	for (int i = 0; i < 5; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	s->ops->increment(s, "r_0123456789abcdef0123456789abcdef", on_done, &o);
	assert_int_equal(o.calls, 2);
	assert_int_equal(o.err, MGW_EIO);
	/* A handle this design never mints is unknown without a round trip. */
	s->ops->increment(s, "m_0123456789abcdef0123456789abcdef", on_done, &o);
	assert_int_equal(o.calls, 3);
	assert_int_equal(o.err, MGW_ENOTFOUND);
	s->ops->describe(s, d);
	assert_true(json_is_false(json_object_get(d, "connected")));
	/* The password never shows in stats. */
	assert_null(strstr(json_string_value(json_object_get(d, "redis")), "secret"));
	json_decref(d);
	mgw_be_store_free(s);
	event_base_free(base);
	mgw_log_set_level(MGW_LOG_INFO);
}

static void test_unavailable_tcp(void **state)
{
	(void)state;
	check_unavailable("redis://:secret@127.0.0.1:1/2");
}

static void test_unavailable_unix(void **state)
{
	(void)state;
	check_unavailable("unix:/nonexistent/mgw-redis.sock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_urls),
		cmocka_unit_test(test_unavailable_tcp),
		cmocka_unit_test(test_unavailable_unix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
