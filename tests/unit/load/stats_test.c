/* stats_test.c - unit tests for src/load/stats.c with synthetic times: the
 * per-second timeline (empty seconds included, cut by completion time),
 * tool rows shared by name, totals over the measured phases only, and the
 * offered / achieved rates. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "load/histogram.h"
#include "load/stats.h"

#define S 1000000000ull
#define MS 1000000ull
#define T0 (1000 * S) /* an arbitrary monotonic start */

static struct mgw_load_phase phases[2];
static struct mgw_load_call calls[3];
static struct mgw_load_conf conf;

static struct mgw_load_conf *setup_conf(void)
{
	memset(phases, 0, sizeof(phases));
	memset(calls, 0, sizeof(calls));
	memset(&conf, 0, sizeof(conf));
	phases[0] = (struct mgw_load_phase){.name = "warm", .warmup = 1,
	                                    .concurrency = 2};
	phases[1] = (struct mgw_load_phase){.name = "load", .mode = MGW_LOAD_OPEN,
	                                    .concurrency = 8, .rate = 100};
	calls[0].name = "echo";
	calls[1].name = "add";
	calls[2].name = "echo"; /* same row as calls[0] */
	conf.phases = phases;
	conf.n_phases = 2;
	conf.calls = calls;
	conf.n_calls = 3;
	return &conf;
}

static int near(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;

	return d * 256 <= want;
}

static void call(struct mgw_load_stats *st, size_t p, size_t k,
                 enum mgw_load_outcome o, uint64_t lat, uint64_t at)
{
	struct mgw_load_result r = {.outcome = o, .bytes = 10,
	                            .reinitialized = o == MGW_LOAD_SESSION_LOST};

	mgw_load_stats_call(st, p, k, &r, lat, lat / 2, at);
}

static void test_rows_timeline_totals(void **state)
{
	struct mgw_load_stats *st = mgw_load_stats_new(setup_conf());
	const struct mgw_load_phase_stats *w, *l, *t;

	(void)state;
	assert_non_null(st);
	assert_int_equal(st->n_tools, 2);
	assert_int_equal(st->call_tool[2], 0);
	mgw_load_stats_start(st, T0);
	/* warmup: second 0 */
	mgw_load_stats_phase_start(st, 0, T0);
	call(st, 0, 0, MGW_LOAD_OK, 5 * MS, T0 + 100 * MS);
	call(st, 0, 1, MGW_LOAD_OK, 7 * MS, T0 + 200 * MS);
	mgw_load_stats_phase_issue_end(st, 0, T0 + 500 * MS);
	mgw_load_stats_phase_end(st, 0, T0 + 600 * MS);
	/* load: seconds 1..4, nothing in second 2 */
	mgw_load_stats_phase_start(st, 1, T0 + 600 * MS);
	call(st, 1, 0, MGW_LOAD_OK, 10 * MS, T0 + 1100 * MS);
	call(st, 1, 2, MGW_LOAD_OK, 30 * MS, T0 + 1200 * MS);
	call(st, 1, 1, MGW_LOAD_SESSION_LOST, 1 * MS, T0 + 1300 * MS);
	mgw_load_stats_shed(st, 1, 1, T0 + 1400 * MS);
	call(st, 1, 0, MGW_LOAD_TIMEOUT, 1 * S, T0 + 3500 * MS);
	call(st, 1, 2, MGW_LOAD_OK, 20 * MS, T0 + 3600 * MS);
	mgw_load_stats_phase_issue_end(st, 1, T0 + 2600 * MS);
	mgw_load_stats_phase_end(st, 1, T0 + 4600 * MS);
	assert_int_equal(mgw_load_stats_finish(st, T0 + 4600 * MS), 0);

	w = &st->phases[0];
	l = &st->phases[1];
	t = &st->total;
	assert_int_equal(w->all.c.requests, 2);
	assert_int_equal(l->all.c.requests, 5);
	assert_int_equal(l->all.c.ok, 3);
	assert_int_equal(l->all.c.fail[MGW_LOAD_SESSION_LOST], 1);
	assert_int_equal(l->all.c.fail[MGW_LOAD_TIMEOUT], 1);
	assert_int_equal(l->all.c.shed, 1);
	assert_int_equal(l->all.c.reinit, 1);
	assert_int_equal(l->all.c.bytes, 50);
	/* echo (calls 0 and 2): 4 requests, 3 ok; add: 1 lost + 1 shed */
	assert_int_equal(l->tools[0].c.requests, 4);
	assert_int_equal(l->tools[0].c.ok, 3);
	assert_int_equal(l->tools[1].c.requests, 1);
	assert_int_equal(l->tools[1].c.shed, 1);
	/* only successes in the histograms; service time kept beside */
	assert_int_equal(l->all.lat->count, 3);
	assert_true(mgw_hist_max(l->all.lat) == 30 * MS);
	assert_true(mgw_hist_max(l->all.svc) == 15 * MS);
	/* the total is the measured phase alone */
	assert_int_equal(t->all.c.requests, 5);
	assert_int_equal(t->tools[0].c.requests, 4);
	assert_true(t->duration_s == 4.0);
	assert_true(t->window_s == 2.0);
	/* offered = (requests + shed) / window; achieved = ok / duration */
	assert_true(mgw_load_offered_rps(l, &l->all) == 3.0);
	assert_true(mgw_load_achieved_rps(l, &l->all) == 0.75);
	assert_true(mgw_load_error_rate(&l->all.c) == 0.5);

	/* timeline: seconds 0..4, by completion time, second 2 empty */
	assert_int_equal(st->n_timeline, 5);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(st->timeline[i].t, i);
	assert_int_equal(st->timeline[0].c.ok, 2);
	assert_int_equal(st->timeline[0].phase, 0);
	assert_int_equal(st->timeline[1].c.ok, 2);
	assert_int_equal(st->timeline[1].c.fail[MGW_LOAD_SESSION_LOST], 1);
	assert_int_equal(st->timeline[1].c.shed, 1);
	assert_int_equal(st->timeline[1].phase, 1);
	/* within the histogram's precision (1/256) */
	assert_true(near(st->timeline[1].p50_ns, 10 * MS));
	assert_true(near(st->timeline[1].p99_ns, 30 * MS));
	assert_int_equal(st->timeline[2].c.requests, 0);
	assert_int_equal(st->timeline[3].c.ok, 1);
	assert_int_equal(st->timeline[3].c.fail[MGW_LOAD_TIMEOUT], 1);
	assert_int_equal(st->timeline[4].c.requests, 0);
	/* finishing twice changes nothing */
	assert_int_equal(mgw_load_stats_finish(st, T0 + 9 * S), 0);
	assert_int_equal(st->n_timeline, 5);
	assert_int_equal(t->all.c.requests, 5);
	mgw_load_stats_free(st);
}

static void test_advance_closes_quiet_seconds(void **state)
{
	struct mgw_load_stats *st = mgw_load_stats_new(setup_conf());

	(void)state;
	mgw_load_stats_start(st, T0);
	mgw_load_stats_phase_start(st, 1, T0);
	mgw_load_stats_advance(st, T0 + 2500 * MS);
	assert_int_equal(st->n_timeline, 2); /* seconds 0 and 1 are over */
	mgw_load_stats_advance(st, T0 + 2600 * MS);
	assert_int_equal(st->n_timeline, 2);
	call(st, 1, 0, MGW_LOAD_OK, 1 * MS, T0 + 2700 * MS);
	mgw_load_stats_phase_end(st, 1, T0 + 2800 * MS);
	mgw_load_stats_finish(st, T0 + 2800 * MS);
	assert_int_equal(st->n_timeline, 3);
	assert_int_equal(st->timeline[2].c.ok, 1);
	/* the warmup never ran: the total is the load phase */
	assert_false(st->phases[0].ran);
	assert_int_equal(st->total.all.c.ok, 1);
	mgw_load_stats_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_timeline_totals),
		cmocka_unit_test(test_advance_closes_quiet_seconds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
