/* sf_bus_test.c - unit tests for src/proxy/sf_bus.c: a re-pin published
 * by one worker reaches every other worker's callback on that worker's
 * own loop (not the publisher's), in order, with its session id and pin
 * generation; a subscriber that fell more than the ring behind gets the
 * latest entries and the rest are counted as missed; an unsubscribed
 * worker is never woken. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "proxy/sf_bus.h"

struct seen {
	size_t n;
	char sid[8][32];
	uint32_t gen[8];
	uint32_t last_gen;
};

static void on_repin(void *arg, const char *sid, uint32_t gen)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->sid[s->n], sizeof(s->sid[0]), "%s", sid);
		s->gen[s->n] = gen;
	}
	s->n++;
	s->last_gen = gen;
}

static void test_publish_reaches_the_others(void **state)
{
	struct mgw_sf_bus bus;
	struct event_base *b1 = event_base_new(), *b2 = event_base_new(),
	                  *b3 = event_base_new();
	struct seen s1 = {0}, s2 = {0}, s3 = {0};
	struct mgw_sf_bus_sub *w1, *w2, *w3;

	(void)state;
	assert_non_null(b1);
	assert_non_null(b2);
	assert_non_null(b3);
	assert_int_equal(mgw_sf_bus_init(&bus), 0);
	w1 = mgw_sf_bus_subscribe(&bus, b1, on_repin, &s1);
	w2 = mgw_sf_bus_subscribe(&bus, b2, on_repin, &s2);
	w3 = mgw_sf_bus_subscribe(&bus, b3, on_repin, &s3);
	assert_non_null(w1);
	assert_non_null(w2);
	assert_non_null(w3);
	assert_int_equal(mgw_sf_bus_publish(w1, "sess-a", 3), 0);
	assert_int_equal(mgw_sf_bus_publish(w1, "sess-b", 1), 0);
	/* nothing runs until each worker's loop does */
	assert_int_equal(s2.n, 0);
	event_base_loop(b2, EVLOOP_NONBLOCK);
	assert_int_equal(s2.n, 2);
	assert_string_equal(s2.sid[0], "sess-a");
	assert_int_equal(s2.gen[0], 3);
	assert_string_equal(s2.sid[1], "sess-b");
	assert_int_equal(s2.gen[1], 1);
	/* the publisher is not woken by its own */
	event_base_loop(b1, EVLOOP_NONBLOCK);
	assert_int_equal(s1.n, 0);
	/* read once: a second run of the loop brings nothing new */
	event_base_loop(b2, EVLOOP_NONBLOCK);
	assert_int_equal(s2.n, 2);
	/* gone: never woken again */
	mgw_sf_bus_unsubscribe(w3);
	assert_int_equal(mgw_sf_bus_publish(w2, "sess-c", 2), 0);
	event_base_loop(b3, EVLOOP_NONBLOCK);
	assert_int_equal(s3.n, 0);
	/* woken by another's entry, a worker reads its own earlier ones as
	 * well (harmless: generations only grow) */
	event_base_loop(b1, EVLOOP_NONBLOCK);
	assert_int_equal(s1.n, 3);
	assert_string_equal(s1.sid[2], "sess-c");
	assert_int_equal(mgw_sf_bus_missed(&bus), 0);
	mgw_sf_bus_unsubscribe(w1);
	mgw_sf_bus_unsubscribe(w2);
	mgw_sf_bus_deinit(&bus);
	event_base_free(b1);
	event_base_free(b2);
	event_base_free(b3);
}

static void test_ring_bound(void **state)
{
	struct mgw_sf_bus bus;
	struct event_base *b1 = event_base_new(), *b2 = event_base_new();
	struct seen s1 = {0}, s2 = {0};
	struct mgw_sf_bus_sub *w1, *w2;
	char sid[32];

	(void)state;
	assert_int_equal(mgw_sf_bus_init(&bus), 0);
	w1 = mgw_sf_bus_subscribe(&bus, b1, on_repin, &s1);
	w2 = mgw_sf_bus_subscribe(&bus, b2, on_repin, &s2);
	for (uint32_t g = 1; g <= MGW_SF_BUS_SLOTS + 44; g++) {
		snprintf(sid, sizeof(sid), "s%u", (unsigned)g);
		assert_int_equal(mgw_sf_bus_publish(w1, sid, g), 0);
	}
	event_base_loop(b2, EVLOOP_NONBLOCK);
	/* the latest SLOTS entries, in order, the rest missed */
	assert_int_equal(s2.n, MGW_SF_BUS_SLOTS);
	assert_string_equal(s2.sid[0], "s45");
	assert_int_equal(s2.last_gen, MGW_SF_BUS_SLOTS + 44);
	assert_int_equal(mgw_sf_bus_missed(&bus), 44);
	mgw_sf_bus_unsubscribe(w1);
	mgw_sf_bus_unsubscribe(w2);
	mgw_sf_bus_deinit(&bus);
	event_base_free(b1);
	event_base_free(b2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_reaches_the_others),
		cmocka_unit_test(test_ring_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
