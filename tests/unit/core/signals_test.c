/* signals_test.c - unit tests for src/core/signals.c: SIGTERM and SIGINT
 * reach the stop callback from the loop; a server's SIGHUP is ignored;
 * SIGUSR1 reaches the reopen callback and does not stop. */
#include "autoconf.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <event2/event.h>

#include "core/signals.h"

struct stops {
	int n;
	int signo;
};

static void on_stop(int signo, void *arg)
{
	struct stops *s = arg;

	s->n++;
	s->signo = signo;
}

/* Runs the loop until what is pending (a caught signal) was handled. */
static void pump(struct event_base *base)
{
	for (int i = 0; i < 10; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static int setup(void **state)
{
	struct event_base *base = event_base_new();

	assert_non_null(base);
	*state = base;
	return 0;
}

static int teardown(void **state)
{
	event_base_free(*state);
	return 0;
}

static void test_server_ignores_hup(void **state)
{
	struct event_base *base = *state;
	struct stops st = {0};
	struct mgw_signals *s = mgw_signals_server_new(base, on_stop, &st);

	assert_non_null(s);
	/* without the handler SIGHUP would end this test program */
	assert_int_equal(raise(SIGHUP), 0);
	pump(base);
	assert_int_equal(st.n, 0);
	assert_int_equal(raise(SIGTERM), 0);
	pump(base);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.signo, SIGTERM);
	mgw_signals_free(s);
}

/* With a reload callback, SIGHUP reaches it (every time), never the stop;
 * once stopping, SIGHUP is ignored. */
static void test_server_reload_on_hup(void **state)
{
	struct event_base *base = *state;
	struct stops st = {0}, rl = {0};
	struct mgw_signals *s = mgw_signals_server_new(base, on_stop, &st);

	assert_non_null(s);
	mgw_signals_on_reload(s, on_stop, &rl);
	assert_int_equal(raise(SIGHUP), 0);
	pump(base);
	assert_int_equal(raise(SIGHUP), 0);
	pump(base);
	assert_int_equal(rl.n, 2);
	assert_int_equal(rl.signo, SIGHUP);
	assert_int_equal(st.n, 0);
	assert_int_equal(raise(SIGTERM), 0);
	pump(base);
	assert_int_equal(st.n, 1);
	assert_int_equal(raise(SIGHUP), 0);
	pump(base);
	assert_int_equal(rl.n, 2);
	mgw_signals_free(s);
}

static void test_stop_on_int(void **state)
{
	struct event_base *base = *state;
	struct stops st = {0};
	struct mgw_signals *s = mgw_signals_new(base, on_stop, &st);

	assert_non_null(s);
	assert_int_equal(raise(SIGINT), 0);
	pump(base);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.signo, SIGINT);
	mgw_signals_free(s);
	mgw_signals_free(NULL);
}

static void on_reopen(void *arg)
{
	(*(int *)arg)++;
}

static void test_reopen_on_usr1(void **state)
{
	struct event_base *base = *state;
	struct stops st = {0};
	struct mgw_signals *s = mgw_signals_server_new(base, on_stop, &st);
	int reopened = 0;

	assert_non_null(s);
	assert_int_equal(mgw_signals_on_reopen(s, base, on_reopen, &reopened), 0);
	assert_int_equal(mgw_signals_on_reopen(s, base, on_reopen, &reopened), -1);
	/* without the handler SIGUSR1 would end this test program */
	assert_int_equal(raise(SIGUSR1), 0);
	pump(base);
	assert_int_equal(reopened, 1);
	assert_int_equal(raise(SIGUSR1), 0);
	pump(base);
	assert_int_equal(reopened, 2);
	assert_int_equal(st.n, 0);
	mgw_signals_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_server_ignores_hup, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_server_reload_on_hup, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_stop_on_int, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_on_usr1, setup,
		                                teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
