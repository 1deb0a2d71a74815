/* aggregate_test.c - unit tests for bench/src/aggregate.c: the median
 * (odd, even, one, none), and a cell's row from run records: only valid
 * repetitions count, losses are sums, other failures are every other
 * kind, latency medians skip runs without a latency, re-pins stay null
 * without a gateway, saturation at 95 % of the offered rate, and a cell
 * without a valid repetition reports nulls, never zeros; a stateful
 * cell (mrtr, fork, tasks) sums its flow counts, state and task losses,
 * the gateways' and replicas' counters into its own columns. */
#include "autoconf.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bench/src/aggregate.h"
#include "bench/src/scene.h"

static void test_median(void **state)
{
	double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 }, c[] = { 7 };

	(void)state;
	assert_float_equal(mgw_bench_median(a, 3), 3.0, 1e-12);
	assert_float_equal(a[0], 1.0, 1e-12); /* sorted in place */
	assert_float_equal(a[2], 5.0, 1e-12);
	assert_float_equal(mgw_bench_median(b, 4), 2.5, 1e-12);
	assert_float_equal(mgw_bench_median(c, 1), 7.0, 1e-12);
	assert_true(isnan(mgw_bench_median(c, 0)));
}

/* A run record as cell.c writes it, with the load report's total. */
static json_t *run(int valid, double achieved, json_t *p50, json_t *p99,
                   int sl, int hl, int h5, int conn, int shed, json_t *repins)
{
	json_t *total = json_pack(
		"{s:f, s:{s:o, s:o}, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i},"
		" s:i}",
		"achieved_rps", achieved, "latency_ms", "p50", p50, "p99", p99,
		"failures", "session_lost", sl, "handle_lost", hl, "http_4xx", 1,
		"http_5xx", h5, "rpc_error", 0, "tool_error", 0, "timeout", 0,
		"connect_error", conn, "shed", shed, "reinitializations", sl);

	return json_pack("{s:b, s:s?, s:o, s:{s:o}}", "valid", valid,
	                 "invalid_reason", valid ? NULL : "kill did not land",
	                 "repins", repins ? repins : json_null(), "load", "total",
	                 total);
}

static void cell(struct mgw_bench_cell *c, double offered)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "legacy direct 2 replicas");
	snprintf(c->slug, sizeof(c->slug), "legacy-direct-2-replicas");
	c->path = MGW_BENCH_DIRECT;
	c->era = MGW_BENCH_LEGACY;
	c->replicas = 2;
	c->conn = MGW_BENCH_CONN_REUSE;
	c->victim = MGW_BENCH_VICTIM_REPLICA;
	c->offered_rps = offered;
	c->duration_s = 60;
	c->kill_at_s = 20;
}

static double num(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	if (b)
		v = json_object_get(v, b);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static json_int_t integer(const json_t *o, const char *k)
{
	assert_true(json_is_integer(json_object_get(o, k)));
	return json_integer_value(json_object_get(o, k));
}

static void test_cell_row(void **state)
{
	struct mgw_bench_cell c;
	json_t *runs = json_array(), *paths = json_array(), *o;

	(void)state;
	cell(&c, 100);
	json_array_append_new(runs, run(1, 90.0, json_real(1.0), json_real(9.0),
	                                10, 0, 2, 3, 1, json_integer(4)));
	json_array_append_new(runs, run(1, 99.5, json_real(3.0), json_null(),
	                                20, 1, 0, 0, 0, json_integer(6)));
	/* invalid: left out of everything, however good it looks */
	json_array_append_new(runs, run(0, 100.0, json_real(0.1), json_real(0.2),
	                                0, 0, 0, 0, 0, json_integer(100)));
	json_array_append_new(runs, run(1, 95.25, json_real(2.0), json_real(5.0),
	                                30, 0, 0, 0, 0, NULL));
	for (int i = 1; i <= 4; i++)
		json_array_append_new(paths, json_sprintf("runs/x-r%02d.json", i));
	/* the second run's cooldown gave up above its threshold: counted,
	 * and listed; the invalid third's is not listed */
	json_object_set_new(json_array_get(runs, 1), "cooldown", json_pack(
		"{s:i, s:i, s:i, s:b}", "threshold", 256, "time_wait_before", 273,
		"time_wait_after", 304, "timed_out", 1));
	json_object_set_new(json_array_get(runs, 2), "cooldown", json_pack(
		"{s:i, s:i, s:i, s:b}", "threshold", 256, "time_wait_before", 900,
		"time_wait_after", 800, "timed_out", 1));
	json_object_set_new(json_array_get(runs, 3), "cooldown", json_pack(
		"{s:i, s:i, s:i, s:b}", "threshold", 256, "time_wait_before", 500,
		"time_wait_after", 20, "timed_out", 0));
	o = mgw_bench_aggregate(&c, runs, paths);
	assert_non_null(o);
	assert_int_equal(json_array_size(json_object_get(o, "cooldown_timeouts")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(o, "cooldown_timeouts"), 0), "run")), "runs/x-r02.json");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(
		json_object_get(o, "cooldown_timeouts"), 0), "time_wait_after")), 304);
	assert_string_equal(json_string_value(json_object_get(o, "cell")), c.name);
	assert_string_equal(json_string_value(json_object_get(o, "path")), "direct");
	assert_string_equal(json_string_value(json_object_get(o, "era")), "legacy");
	assert_string_equal(json_string_value(json_object_get(o, "connection")),
	                    "reuse");
	assert_true(json_is_null(json_object_get(o, "state")));
	assert_int_equal(integer(o, "replicas"), 2);
	assert_int_equal(integer(o, "n"), 4);
	assert_int_equal(integer(o, "valid"), 3);
	assert_float_equal(num(o, "achieved_rps", "median"), 95.25, 1e-9);
	assert_float_equal(num(o, "achieved_rps", "min"), 90.0, 1e-9);
	assert_float_equal(num(o, "achieved_rps", "max"), 99.5, 1e-9);
	assert_float_equal(num(o, "p50_ms", NULL), 2.0, 1e-9);
	/* p99: one valid run had none: the median of the other two */
	assert_float_equal(num(o, "p99_ms", NULL), 7.0, 1e-9);
	assert_int_equal(integer(o, "session_losses"), 60);
	assert_int_equal(integer(o, "handle_losses"), 1);
	/* http_4xx 1 in each of 3 runs, http_5xx 2, connect 3, shed 1 */
	assert_int_equal(integer(o, "other_failures"), 3 + 2 + 3 + 1);
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(o, "failures"), "connect_error")), 3);
	assert_int_equal(integer(o, "reinitializations"), 60);
	assert_int_equal(integer(o, "repins"), 10);
	assert_false(json_is_true(json_object_get(o, "saturated")));
	assert_int_equal(json_array_size(json_object_get(o, "runs")), 4);
	assert_int_equal(json_array_size(json_object_get(o, "invalid")), 1);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(o, "invalid"), 0), "run")),
		"runs/x-r03.json");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(o, "invalid"), 0), "reason")),
		"kill did not land");
	json_decref(o);
	json_decref(runs);
	json_decref(paths);
}

static void test_saturation_and_repins(void **state)
{
	struct mgw_bench_cell c;
	json_t *runs = json_array(), *paths = json_array(), *o;

	(void)state;
	cell(&c, 200);
	/* median 189.9 < 190 = 95 % of 200 */
	json_array_append_new(runs, run(1, 189.9, json_real(1), json_real(2), 0,
	                                0, 0, 0, 0, NULL));
	json_array_append_new(paths, json_string("runs/a.json"));
	o = mgw_bench_aggregate(&c, runs, paths);
	assert_true(json_is_true(json_object_get(o, "saturated")));
	assert_true(json_is_null(json_object_get(o, "repins")));
	json_decref(o);
	json_array_clear(runs);
	json_array_append_new(runs, run(1, 190.0, json_real(1), json_real(2), 0,
	                                0, 0, 0, 0, json_integer(0)));
	o = mgw_bench_aggregate(&c, runs, paths);
	assert_true(json_is_false(json_object_get(o, "saturated")));
	assert_int_equal(integer(o, "repins"), 0);
	json_decref(o);
	json_decref(runs);
	json_decref(paths);
}

static void test_no_valid_run(void **state)
{
	struct mgw_bench_cell c;
	json_t *runs = json_array(), *paths = json_array(), *o;

	(void)state;
	cell(&c, 100);
	json_array_append_new(runs, run(0, 100, json_real(1), json_real(2), 0, 0,
	                                0, 0, 0, NULL));
	json_array_append_new(paths, json_string("runs/a.json"));
	o = mgw_bench_aggregate(&c, runs, paths);
	assert_int_equal(integer(o, "n"), 1);
	assert_int_equal(integer(o, "valid"), 0);
	assert_true(json_is_null(json_object_get(json_object_get(o, "achieved_rps"),
	                                         "median")));
	assert_true(json_is_null(json_object_get(o, "session_losses")));
	assert_true(json_is_null(json_object_get(o, "other_failures")));
	assert_true(json_is_null(json_object_get(o, "saturated")));
	json_decref(o);
	json_decref(runs);
	json_decref(paths);
}

static void test_other_failures_list(void **state)
{
	int n = 0;

	(void)state;
	for (const char *const *k = mgw_bench_other_failures; *k; k++) {
		assert_string_not_equal(*k, "session_lost");
		assert_string_not_equal(*k, "handle_lost");
		assert_string_not_equal(*k, "state_lost");
		assert_string_not_equal(*k, "task_lost");
		n++;
	}
	assert_int_equal(n, 7);
}

/* A run of a stateful cell: the load total's flow counts and failures,
 * a gateway's counters after the run, two replica samples. */
static json_t *state_run(int valid, int forked, int state_lost, int task_lost,
                         int conn)
{
	json_t *total = json_pack(
		"{s:f, s:{s:f, s:f}, s:{s:i, s:i, s:i, s:i, s:i}, s:i, s:i, s:i, "
		"s:i, s:i, s:i, s:i}",
		"achieved_rps", 50.0, "latency_ms", "p50", 200.0, "p99", 210.0,
		"failures", "session_lost", 0, "handle_lost", 0, "state_lost",
		state_lost, "task_lost", task_lost, "connect_error", conn,
		"dialogues", 100, "rounds", 300, "represented", 100, "forked", forked,
		"refused", 100 - forked, "tasks", 0, "task_polls", 0);
	json_t *gw = json_pack("[{s:s, s:{s:[{s:{s:i}}], s:{s:i}}}]", "when",
		"after the run", "stats", "upstreams", "tasks", "owner_gone", 2,
		"mrtr_guard", "refused", 100 - forked);
	json_t *reps = json_pack("[{s:{s:i, s:i, s:i, s:i}}, {s:{s:i, s:i, s:i, "
		"s:i}}]", "stats", "mrtr_states_issued", 120, "mrtr_state_bytes_total",
		30000, "mrtr_completed", 40, "mrtr_store_ops", 240, "stats",
		"mrtr_states_issued", 180, "mrtr_state_bytes_total", 45000,
		"mrtr_completed", 60, "mrtr_store_ops", 360);

	return json_pack("{s:b, s:o, s:o, s:{s:o}}", "valid", valid,
	                 "gateway_stats", gw, "replica_stats", reps, "load",
	                 "total", total);
}

static void test_state_cell(void **state)
{
	struct mgw_bench_cell c;
	json_t *runs = json_array(), *paths = json_array(), *o, *f;

	(void)state;
	cell(&c, 50);
	c.era = MGW_BENCH_MODERN;
	c.flow = MGW_BENCH_FLOW_FORK;
	c.keep = MGW_BENCH_STORE_SEALED;
	c.guard = 1;
	json_array_append_new(runs, state_run(1, 10, 3, 1, 2));
	json_array_append_new(runs, state_run(1, 20, 4, 0, 0));
	json_array_append_new(runs, state_run(0, 99, 99, 99, 99)); /* left out */
	for (int i = 1; i <= 3; i++)
		json_array_append_new(paths, json_sprintf("runs/f-r%02d.json", i));
	o = mgw_bench_aggregate(&c, runs, paths);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "flow")), "fork");
	assert_string_equal(json_string_value(json_object_get(o, "keep")), "sealed");
	assert_true(json_is_true(json_object_get(o, "guard")));
	assert_true(json_is_false(json_object_get(o, "affinity")));
	assert_int_equal(integer(o, "dialogues"), 200);
	assert_int_equal(integer(o, "rounds"), 600);
	assert_int_equal(integer(o, "represented"), 200);
	assert_int_equal(integer(o, "forked"), 30);
	assert_int_equal(integer(o, "refused"), 170);
	assert_int_equal(integer(o, "state_losses"), 7);
	assert_int_equal(integer(o, "task_losses"), 1);
	/* state and task losses have columns: not "other" */
	assert_int_equal(integer(o, "other_failures"), 2);
	assert_int_equal(integer(o, "task_owner_gone"), 4);
	assert_int_equal(integer(o, "guard_refused"), 170);
	/* (30000 + 45000) bytes / (120 + 180) states, twice over */
	assert_float_equal(num(o, "state_bytes_per_round", NULL), 250.0, 1e-9);
	assert_float_equal(num(o, "store_ops_per_dialogue", NULL), 6.0, 1e-9);
	f = json_object_get(o, "failures");
	/* the fork scene's loss kind, for the losses chart */
	assert_int_equal(json_integer_value(json_object_get(f, "forked")), 30);
	assert_int_equal(json_integer_value(json_object_get(f, "state_lost")), 7);
	json_decref(o);

	/* a cell of the other scenes has none of these keys */
	c.flow = MGW_BENCH_FLOW_PLAIN;
	o = mgw_bench_aggregate(&c, runs, paths);
	assert_null(json_object_get(o, "dialogues"));
	assert_null(json_object_get(json_object_get(o, "failures"), "forked"));
	assert_int_equal(integer(o, "state_losses"), 7);
	json_decref(o);
	json_decref(runs);
	json_decref(paths);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_cell_row),
		cmocka_unit_test(test_saturation_and_repins),
		cmocka_unit_test(test_no_valid_run),
		cmocka_unit_test(test_other_failures_list),
		cmocka_unit_test(test_state_cell),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
