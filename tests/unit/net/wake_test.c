/* wake_test.c - waking a loop from another thread (src/net/wake.c): on a
 * base without locks that has a hub, and on a locked base without one,
 * a ring from another thread runs the callback on the loop's thread;
 * rings before a run are one run; a wake freed by another's callback in
 * the same run, or freed while rung, never runs. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "net/wake.h"

struct seen {
	struct event_base *base;
	pthread_t loop_thread;
	atomic_int runs;
	int on_loop_thread;       /* every run was on the loop's thread */
	struct mgw_wake *victim;  /* freed by this callback, when set */
	int stop;                 /* break the loop after a run */
};

static void on_wake(void *arg)
{
	struct seen *s = arg;

	atomic_fetch_add(&s->runs, 1);
	if (!pthread_equal(pthread_self(), s->loop_thread))
		s->on_loop_thread = 0;
	if (s->victim) {
		mgw_wake_free(s->victim);
		s->victim = NULL;
	}
	if (s->stop)
		event_base_loopbreak(s->base);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static struct event_base *nolock_base(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *b;

	event_config_set_flag(ec, EVENT_BASE_FLAG_NOLOCK);
	b = event_base_new_with_config(ec);
	event_config_free(ec);
	assert_non_null(b);
	assert_int_equal(mgw_wake_hub_attach(b), 0);
	return b;
}

struct ringer {
	struct mgw_wake *w;
	int times;
};

static void *ring_from_thread(void *arg)
{
	struct ringer *r = arg;

	for (int i = 0; i < r->times; i++)
		mgw_wake_ring(r->w);
	return NULL;
}

/* The loop runs until a callback breaks it or 10 s pass (a failure). */
static void run_bounded(struct event_base *b)
{
	struct timeval tv = {10, 0};
	struct event *t = evtimer_new(b, on_timeout, b);

	evtimer_add(t, &tv);
	event_base_dispatch(b);
	event_free(t);
}

static void rung_from_another_thread(struct event_base *b)
{
	struct seen s = {.base = b, .loop_thread = pthread_self(),
	                 .on_loop_thread = 1, .stop = 1};
	struct mgw_wake *w;
	struct ringer r;
	pthread_t th;

	atomic_init(&s.runs, 0);
	w = mgw_wake_new(b, on_wake, &s);
	assert_non_null(w);
	r.w = w;
	r.times = 1000;
	assert_int_equal(pthread_create(&th, NULL, ring_from_thread, &r), 0);
	run_bounded(b);
	pthread_join(th, NULL);
	assert_true(atomic_load(&s.runs) >= 1);
	assert_true(atomic_load(&s.runs) <= 1000);
	assert_true(s.on_loop_thread);
	mgw_wake_free(w);
}

static void test_hub_ring_from_thread(void **state)
{
	struct event_base *b = nolock_base();

	(void)state;
	rung_from_another_thread(b);
	mgw_wake_hub_detach(b);
	event_base_free(b);
}

static void test_plain_ring_from_thread(void **state)
{
	struct event_base *b = event_base_new(); /* locked, no hub */

	(void)state;
	assert_non_null(b);
	rung_from_another_thread(b);
	event_base_free(b);
}

/* Rung many times before the loop runs: one run each; of two wakes
 * rung together that free each other in their callbacks, exactly one
 * runs (whichever the run takes first); a wake rung then freed before
 * the loop ran does not run. */
static void test_coalesce_and_free(void **state)
{
	struct event_base *b = nolock_base();
	struct seen a = {.base = b, .loop_thread = pthread_self(),
	                 .on_loop_thread = 1};
	struct seen c = a, d = a;
	struct mgw_wake *wa, *wc, *wd;
	struct timeval tick = {0, 200000};
	struct event *t = evtimer_new(b, on_timeout, b);

	(void)state;
	atomic_init(&a.runs, 0);
	atomic_init(&c.runs, 0);
	atomic_init(&d.runs, 0);
	wa = mgw_wake_new(b, on_wake, &a);
	wc = mgw_wake_new(b, on_wake, &c);
	wd = mgw_wake_new(b, on_wake, &d);
	assert_non_null(wa);
	assert_non_null(wc);
	assert_non_null(wd);
	c.victim = wd;
	d.victim = wc;
	for (int i = 0; i < 3; i++)
		mgw_wake_ring(wa);
	mgw_wake_ring(wc);
	mgw_wake_ring(wd);
	evtimer_add(t, &tick);
	event_base_dispatch(b); /* until the tick */
	assert_int_equal(atomic_load(&a.runs), 1);
	assert_int_equal(atomic_load(&c.runs) + atomic_load(&d.runs), 1);
	assert_true(a.on_loop_thread && c.on_loop_thread && d.on_loop_thread);
	/* rung, then freed before the loop ran: dropped */
	mgw_wake_ring(wa);
	mgw_wake_free(wa);
	evtimer_add(t, &tick);
	event_base_dispatch(b);
	assert_int_equal(atomic_load(&a.runs), 1);
	/* the survivor of c and d still works */
	if (atomic_load(&c.runs)) {
		mgw_wake_ring(wc);
		evtimer_add(t, &tick);
		event_base_dispatch(b);
		assert_int_equal(atomic_load(&c.runs), 2);
		mgw_wake_free(wc);
	} else {
		mgw_wake_ring(wd);
		evtimer_add(t, &tick);
		event_base_dispatch(b);
		assert_int_equal(atomic_load(&d.runs), 2);
		mgw_wake_free(wd);
	}
	event_free(t);
	mgw_wake_hub_detach(b);
	event_base_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hub_ring_from_thread),
		cmocka_unit_test(test_plain_ring_from_thread),
		cmocka_unit_test(test_coalesce_and_free),
	};

	evthread_use_pthreads();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
