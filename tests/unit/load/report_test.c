/* report_test.c - unit tests for src/load/report.c and src/load/gates.c:
 * the JSON report keeps the names the bench and CI parse, leaves secrets
 * out of its config echo, reports unmeasured latencies as null; the CSV
 * timeline, the terminal table; and every gate passing and failing on the
 * right side of its limit. */
#include "autoconf.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/errors.h"
#include "load/gates.h"
#include "load/report.h"
#include "load/scenario.h"
#include "load/stats.h"

#define S 1000000000ull
#define MS 1000000ull
#define T0 (50 * S)

static const char scenario[] =
	"targets: [http://127.0.0.1:1/mcp]\n"
	"dialect: legacy\n"
	"auth:\n"
	"  headers: [{name: Authorization, value: Bearer s3cr3t}]\n"
	"  command: get-token --secret\n"
	"calls:\n"
	"  - {tool: echo, arguments: {text: hi}}\n"
	"  - {tool: add, weight: 2}\n"
	"phases:\n"
	"  - {name: warm, warmup: true, duration: 1s}\n"
	"  - {name: 'a,b', concurrency: 4, duration: 2s}\n"
	"  - {name: never, rate: 10, duration: 1s}\n";

struct fixture {
	struct mgw_load_conf *conf;
	struct mgw_load_stats *st;
};

static void rec(struct mgw_load_stats *st, size_t p, size_t k,
                enum mgw_load_outcome o, uint64_t lat, uint64_t at)
{
	struct mgw_load_result r = {.outcome = o, .bytes = 3,
	                            .detail = o == MGW_LOAD_OK ? NULL
	                                    : "HTTP 404: Session not found"};

	mgw_load_stats_call(st, p, k, &r, lat, lat, at);
}

/* warm: 1 ok; "a,b": 97 ok echo at 10 ms, 1 ok add at 100 ms,
 * 2 session losses; "never" does not run. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	f->conf = mgw_load_conf_new();
	assert_int_equal(mgw_load_scenario_parse(f->conf, "r.yaml", scenario,
	                                         strlen(scenario), err,
	                                         sizeof(err)), 0);
	f->st = mgw_load_stats_new(f->conf);
	mgw_load_stats_start(f->st, T0);
	mgw_load_stats_phase_start(f->st, 0, T0);
	rec(f->st, 0, 0, MGW_LOAD_OK, 500 * MS, T0 + 500 * MS);
	mgw_load_stats_phase_issue_end(f->st, 0, T0 + S);
	mgw_load_stats_phase_end(f->st, 0, T0 + S);
	mgw_load_stats_phase_start(f->st, 1, T0 + S);
	for (int i = 0; i < 97; i++)
		rec(f->st, 1, 0, MGW_LOAD_OK, 10 * MS, T0 + S + (uint64_t)i * 10 * MS);
	rec(f->st, 1, 1, MGW_LOAD_OK, 100 * MS, T0 + 2 * S + 100 * MS);
	rec(f->st, 1, 1, MGW_LOAD_SESSION_LOST, MS, T0 + 2 * S + 200 * MS);
	rec(f->st, 1, 1, MGW_LOAD_SESSION_LOST, MS, T0 + 2 * S + 300 * MS);
	mgw_load_stats_phase_issue_end(f->st, 1, T0 + 3 * S);
	mgw_load_stats_phase_end(f->st, 1, T0 + 3 * S);
	mgw_load_stats_finish(f->st, T0 + 3 * S);
	f->st->era = MGW_ERA_IS_LEGACY;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mgw_load_stats_free(f->st);
	mgw_load_conf_free(f->conf);
	free(f);
	return 0;
}

static double num(json_t *o, const char *path)
{
	char buf[256], *save = NULL, *k;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_get(o, k);
	assert_non_null(o);
	assert_true(json_is_number(o));
	return json_number_value(o);
}

static void test_json_shape(void **state)
{
	struct fixture *f = *state;
	struct mgw_load_gate_result g;
	json_t *r, *ph, *tot, *tl;
	char *dump;
	static const char *const fail_keys[] = {
		"session_lost", "handle_lost", "http_4xx", "http_5xx", "rpc_error",
		"tool_error", "timeout", "connect_error", "task_lost", "state_lost",
		"shed",
	};
	static const char *const lat_keys[] = {
		"min", "mean", "p50", "p90", "p95", "p99", "p999", "max",
	};

	f->conf->gates.has_max_session_losses = 1;
	mgw_load_gates_eval(&f->conf->gates, f->st, &g);
	r = mgw_load_report_json(f->conf, f->st, &g);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "version")),
	                    PACKAGE_VERSION);
	assert_string_equal(json_string_value(json_object_get(r, "dialect")),
	                    "legacy");
	assert_true(json_is_object(json_object_get(r, "config")));
	ph = json_object_get(r, "phases");
	assert_int_equal(json_array_size(ph), 2); /* "never" did not run */
	ph = json_array_get(ph, 1);
	assert_string_equal(json_string_value(json_object_get(ph, "name")), "a,b");
	assert_true(json_is_false(json_object_get(ph, "warmup")));
	assert_string_equal(json_string_value(json_object_get(ph, "mode")),
	                    "closed");
	assert_true(num(ph, "concurrency") == 4);
	assert_true(num(ph, "requests") == 100);
	assert_true(num(ph, "ok") == 98);
	assert_true(num(ph, "duration_s") == 2.0);
	assert_true(num(ph, "achieved_rps") == 49.0);
	assert_true(num(ph, "offered_rps") == 50.0);
	assert_true(num(ph, "failures.session_lost") == 2);
	assert_true(num(ph, "reinitializations") == 0);
	assert_true(num(ph, "reconnects") == 0);
	for (size_t i = 0; i < sizeof(fail_keys) / sizeof(*fail_keys); i++)
		assert_non_null(json_object_get(json_object_get(ph, "failures"),
		                                fail_keys[i]));
	for (size_t i = 0; i < sizeof(lat_keys) / sizeof(*lat_keys); i++)
		assert_true(json_is_number(json_object_get(
			json_object_get(ph, "latency_ms"), lat_keys[i])));
	assert_true(fabs(num(ph, "latency_ms.p50") - 10) < 0.05);
	assert_true(fabs(num(ph, "latency_ms.max") - 100) < 0.5);
	assert_true(num(ph, "per_tool.echo.requests") == 97);
	assert_true(num(ph, "per_tool.add.failures.session_lost") == 2);
	assert_true(num(ph, "per_tool.add.ok") == 1);
	assert_null(json_object_get(json_object_get(json_object_get(ph,
	            "per_tool"), "add"), "per_tool"));
	/* total = the measured phase only */
	tot = json_object_get(r, "total");
	assert_true(num(tot, "requests") == 100);
	assert_true(num(tot, "ok") == 98);
	assert_non_null(json_object_get(tot, "per_tool"));
	/* timeline rows with the issue's names */
	tl = json_object_get(r, "timeline");
	assert_int_equal(json_array_size(tl), 3);
	assert_true(num(json_array_get(tl, 0), "t") == 0);
	assert_true(num(json_array_get(tl, 0), "ok") == 1);
	assert_true(num(json_array_get(tl, 2), "session_lost") == 2);
	assert_true(num(json_array_get(tl, 2), "failed") == 2);
	assert_non_null(json_object_get(json_array_get(tl, 1), "p50_ms"));
	assert_non_null(json_object_get(json_array_get(tl, 1), "p99_ms"));
	assert_non_null(json_object_get(json_array_get(tl, 1), "handle_lost"));
	/* gates */
	assert_true(json_is_false(json_object_get(json_object_get(r, "gates"),
	                                          "passed")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(json_object_get(r, "gates"), "checks"), 0),
		"name")), "max_session_losses");
	/* no credentials in the report */
	dump = json_dumps(r, 0);
	assert_non_null(dump);
	assert_null(strstr(dump, "s3cr3t"));
	assert_null(strstr(dump, "--secret"));
	assert_non_null(strstr(dump, "Authorization"));
	free(dump);
	json_decref(r);
}

static void test_json_unmeasured_is_null(void **state)
{
	struct fixture *f = *state;
	json_t *r, *never;
	struct mgw_load_stats *st = mgw_load_stats_new(f->conf);

	(void)state;
	mgw_load_stats_start(st, T0);
	mgw_load_stats_phase_start(st, 1, T0);
	rec(st, 1, 0, MGW_LOAD_CONNECT_ERROR, 0, T0 + MS);
	mgw_load_stats_phase_end(st, 1, T0 + S);
	mgw_load_stats_finish(st, T0 + S);
	r = mgw_load_report_json(f->conf, st, NULL);
	never = json_object_get(json_array_get(json_object_get(r, "phases"), 0),
	                        "latency_ms");
	assert_true(json_is_null(json_object_get(never, "p99")));
	assert_true(json_is_null(json_object_get(never, "mean")));
	assert_string_equal(json_string_value(json_object_get(r, "dialect")),
	                    "unknown");
	assert_true(json_is_null(json_object_get(json_array_get(
		json_object_get(r, "timeline"), 0), "p50_ms")));
	assert_true(json_is_true(json_object_get(json_object_get(r, "gates"),
	                                         "passed")));
	json_decref(r);
	mgw_load_stats_free(st);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 65535, f) > 0);
	fclose(f);
	return buf;
}

static void test_files(void **state)
{
	struct fixture *f = *state;
	static const char hdr[] =
		"t,phase,ok,failed,session_lost,handle_lost,http_4xx,http_5xx,"
		"rpc_error,tool_error,timeout,connect_error,task_lost,state_lost,"
		"deleted_served,shed,"
		"reinitializations,p50_ms,p99_ms\n";
	char dir[] = "/tmp/mgw-report-XXXXXX", path[128], err[256], *text;
	json_t *r, *back;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	assert_int_equal(mgw_load_report_write_csv(f->st, path, err,
	                                           sizeof(err)), 0);
	text = slurp(path);
	assert_true(strncmp(text, hdr, strlen(hdr)) == 0);
	assert_non_null(strstr(text, "\n0,warm,1,0,"));
	assert_non_null(strstr(text, "\n1,\"a,b\",97,0,")); /* quoted name */
	assert_non_null(strstr(text, "\n2,\"a,b\",1,2,2,0,"));
	free(text);
	unlink(path);

	snprintf(path, sizeof(path), "%s/r.json", dir);
	r = mgw_load_report_json(f->conf, f->st, NULL);
	assert_int_equal(mgw_load_report_write_json(r, path, err, sizeof(err)), 0);
	back = json_load_file(path, 0, NULL);
	assert_non_null(back);
	/* reals are written with 10 significant digits; the rest is exact */
	assert_true(json_equal(json_object_get(back, "timeline"),
	                       json_object_get(r, "timeline")));
	assert_true(num(back, "total.requests") == 100);
	assert_true(fabs(num(back, "total.error_rate") - 0.02) < 1e-9);
	json_decref(back);
	json_decref(r);
	unlink(path);
	assert_int_equal(mgw_load_report_write_csv(f->st, "/nonexistent/x.csv",
	                                           err, sizeof(err)), MGW_EIO);
	assert_non_null(strstr(err, "/nonexistent/x.csv"));
	rmdir(dir);
}

static void test_table(void **state)
{
	struct fixture *f = *state;
	struct mgw_load_gate_result g;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	f->conf->gates.has_max_p95_ms = 1;
	f->conf->gates.max_p95_ms = 50;
	mgw_load_gates_eval(&f->conf->gates, f->st, &g);
	mgw_load_report_table(out, f->conf, f->st, &g);
	fclose(out);
	assert_non_null(strstr(buf, "phase"));
	assert_non_null(strstr(buf, "conc/rate"));
	assert_non_null(strstr(buf, "p99"));
	assert_non_null(strstr(buf, "losses"));
	assert_non_null(strstr(buf, "warm*"));
	assert_non_null(strstr(buf, "\na,b "));
	assert_non_null(strstr(buf, "\ntotal "));
	assert_null(strstr(buf, "never"));
	assert_non_null(strstr(buf, "2/0"));
	assert_non_null(strstr(buf, "a,b: 2 session_lost"));
	/* what the failures said, grouped, in the text too */
	assert_non_null(strstr(buf, "failure reasons (the first 2 failures):\n"
	                            "     2  session_lost: HTTP 404: Session not found\n"));
	assert_non_null(strstr(buf, "gate max_p95_ms:"));
	assert_non_null(strstr(buf, ": pass"));
	free(buf);
}

static void test_gates(void **state)
{
	struct fixture *f = *state;
	struct mgw_load_gates g = {0};
	struct mgw_load_gate_result r;

	mgw_load_gates_eval(&g, f->st, &r);
	assert_int_equal(r.n, 0);
	assert_true(r.passed);

	/* p95 is 10 ms (97 of 98 successes), p99 100 ms */
	g.has_max_p95_ms = 1;
	g.max_p95_ms = 11;
	g.has_max_p99_ms = 1;
	g.max_p99_ms = 99;
	mgw_load_gates_eval(&g, f->st, &r);
	assert_int_equal(r.n, 2);
	assert_true(r.checks[0].passed);
	assert_false(r.checks[1].passed);
	assert_true(fabs(r.checks[1].value - 100) < 0.5);
	assert_false(r.passed);
	g.max_p99_ms = 101;
	mgw_load_gates_eval(&g, f->st, &r);
	assert_true(r.passed);

	/* error rate 2/100; achieved 49/s; 2 session losses, 0 handle */
	g = (struct mgw_load_gates){.has_max_error_rate = 1,
	                            .max_error_rate = 0.02, .has_min_rps = 1,
	                            .min_rps = 49, .has_max_session_losses = 1,
	                            .max_session_losses = 2,
	                            .has_max_handle_losses = 1};
	mgw_load_gates_eval(&g, f->st, &r);
	assert_int_equal(r.n, 4);
	assert_true(r.passed);
	g.max_error_rate = 0.019;
	mgw_load_gates_eval(&g, f->st, &r);
	assert_false(r.passed);
	assert_false(r.checks[0].passed);
	g.max_error_rate = 0.02;
	g.min_rps = 49.5;
	mgw_load_gates_eval(&g, f->st, &r);
	assert_false(r.checks[1].passed);
	g.min_rps = 0;
	g.max_session_losses = 1;
	mgw_load_gates_eval(&g, f->st, &r);
	assert_false(r.checks[2].passed);
	assert_true(r.checks[3].passed);
	assert_string_equal(r.checks[3].name, "max_handle_losses");
}

static void test_gates_unmeasured_fail(void **state)
{
	struct fixture *f = *state;
	struct mgw_load_gates g = {.has_max_p95_ms = 1, .max_p95_ms = 1e9,
	                           .has_max_error_rate = 1, .max_error_rate = 1};
	struct mgw_load_gate_result r;
	struct mgw_load_stats *st = mgw_load_stats_new(f->conf);

	/* nothing measured: a latency gate cannot pass, nor an error rate */
	mgw_load_stats_start(st, T0);
	mgw_load_stats_finish(st, T0 + S);
	mgw_load_gates_eval(&g, st, &r);
	assert_false(r.passed);
	assert_true(isnan(r.checks[0].value));
	assert_false(r.checks[1].passed);
	mgw_load_stats_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_unmeasured_is_null, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gates_unmeasured_fail, setup,
		                                teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
