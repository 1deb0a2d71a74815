/* scenario_test.c - unit tests for src/load/scenario.c: scenario files in
 * YAML and JSON into a plan, errors that name FILE:LINE:COL and the key,
 * the free-form arguments and target list the schema cannot describe,
 * --arg and --think spellings, and the final plan checks. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/errors.h"
#include "load/scenario.h"

static struct mgw_load_conf *parse(const char *text, int want_rc, char *err,
                                   size_t errlen)
{
	struct mgw_load_conf *c = mgw_load_conf_new();

	assert_non_null(c);
	err[0] = '\0';
	assert_int_equal(mgw_load_scenario_parse(c, "s.yaml", text, strlen(text),
	                                         err, errlen),
	                 want_rc);
	return c;
}

/* Parses text expecting failure; err must contain every needle. */
static void expect_error(const char *text, const char *needle1,
                         const char *needle2)
{
	char err[512];
	struct mgw_load_conf *c = parse(text, MGW_EINVAL, err, sizeof(err));

	if (!strstr(err, needle1) || (needle2 && !strstr(err, needle2))) {
		print_error("error '%s' lacks '%s' / '%s'\n", err, needle1,
		            needle2 ? needle2 : "");
		fail();
	}
	mgw_load_conf_free(c);
}

static void test_defaults(void **state)
{
	struct mgw_load_conf *c = mgw_load_conf_new();
	char err[256];

	(void)state;
	assert_non_null(c);
	assert_int_equal(c->transport.type, MGW_LOAD_HTTP);
	assert_int_equal(c->transport.connection, MGW_LOAD_CONN_REUSE);
	assert_int_equal(c->dialect, MGW_LOAD_AUTO);
	assert_true(c->timeout == 10);
	assert_int_equal(c->think.kind, MGW_THINK_NONE);
	assert_int_equal(c->n_calls, 0);
	assert_int_equal(c->n_phases, 0);
	assert_false(c->gates.has_max_p95_ms);
	/* an empty plan is refused, with the fix in the message */
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "--target"));
	mgw_load_conf_free(c);
	mgw_load_conf_free(NULL);
}

static const char yaml_full[] =
	"name: churn\n"
	"targets:\n"
	"  - http://127.0.0.1:8001/mcp\n"
	"  - https://replica.example:8443/mcp\n"
	"transport:\n"
	"  connection: new\n"
	"  http2: true\n"
	"  ca_file: /etc/ca.pem\n"
	"dialect: legacy\n"
	"list_tools: true\n"
	"timeout: 2500ms\n"
	"seed: 7\n"
	"think: {mode: agent, long_share: 0.2}\n"
	"auth:\n"
	"  headers:\n"
	"    - {name: Authorization, value: Bearer abc}\n"
	"    - {name: X-Tenant, env: TENANT}\n"
	"calls:\n"
	"  - tool: echo\n"
	"    weight: 3\n"
	"    arguments: {text: hello, n: 42, r: 1.5, b: true, z: null,\n"
	"                q: '42', list: [1, two], obj: {k: v}}\n"
	"  - flow: counter\n"
	"phases:\n"
	"  - {name: warm, warmup: true, concurrency: 4, duration: 2s}\n"
	"  - {concurrency: 16, duration: 30s}\n"
	"  - {name: open, rate: 200, duration: 1m, backlog: 10}\n"
	"  - {rate: 50.5, concurrency: 8, requests: 1000}\n"
	"gates:\n"
	"  max_p95_ms: 50\n"
	"  max_error_rate: 0.01\n"
	"  max_session_losses: 0\n"
	"output: {json: r.json, csv: t.csv}\n";

static void test_full_yaml(void **state)
{
	char err[512];
	struct mgw_load_conf *c = parse(yaml_full, 0, err, sizeof(err));
	json_t *a;

	(void)state;
	assert_string_equal(c->name, "churn");
	assert_string_equal(c->source, "s.yaml");
	assert_int_equal(c->transport.n_targets, 2);
	assert_string_equal(c->transport.targets[1],
	                    "https://replica.example:8443/mcp");
	assert_int_equal(c->transport.connection, MGW_LOAD_CONN_NEW);
	assert_true(c->transport.http2);
	assert_string_equal(c->transport.ca_file, "/etc/ca.pem");
	assert_int_equal(c->dialect, MGW_LOAD_LEGACY);
	assert_true(c->list_tools);
	assert_true(c->timeout == 2.5);
	assert_int_equal(c->seed, 7);
	/* agent think: its defaults, with the key given winning */
	assert_int_equal(c->think.kind, MGW_THINK_AGENT);
	assert_true(c->think.min == 0.05 && c->think.max == 0.5);
	assert_true(c->think.long_share == 0.2);
	assert_int_equal(c->auth.n_headers, 2);
	assert_string_equal(c->auth.headers[1].env, "TENANT");
	assert_null(c->auth.headers[1].value);

	assert_int_equal(c->n_calls, 2);
	assert_string_equal(c->calls[0].name, "echo");
	assert_true(c->calls[0].weight == 3);
	a = c->calls[0].arguments;
	assert_string_equal(json_string_value(json_object_get(a, "text")), "hello");
	assert_true(json_is_integer(json_object_get(a, "n")));
	assert_int_equal(json_integer_value(json_object_get(a, "n")), 42);
	assert_true(json_is_real(json_object_get(a, "r")));
	assert_true(json_is_true(json_object_get(a, "b")));
	assert_true(json_is_null(json_object_get(a, "z")));
	/* quoted stays a string */
	assert_string_equal(json_string_value(json_object_get(a, "q")), "42");
	assert_int_equal(json_array_size(json_object_get(a, "list")), 2);
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(a, "obj"), "k")), "v");
	/* the counter flow fills its tools; no arguments means {} */
	assert_int_equal(c->calls[1].flow, MGW_LOAD_FLOW_COUNTER);
	assert_string_equal(c->calls[1].name, "counter");
	assert_string_equal(c->calls[1].tool, "counter_increment");
	assert_string_equal(c->calls[1].create_tool, "counter_create");
	assert_string_equal(c->calls[1].handle_arg, "handle");
	assert_true(json_is_object(c->calls[1].arguments));
	assert_int_equal(json_object_size(c->calls[1].arguments), 0);

	assert_int_equal(c->n_phases, 4);
	assert_true(c->phases[0].warmup);
	assert_string_equal(c->phases[1].name, "phase2");
	assert_int_equal(c->phases[1].mode, MGW_LOAD_CLOSED);
	assert_int_equal(c->phases[1].concurrency, 16);
	assert_int_equal(c->phases[2].mode, MGW_LOAD_OPEN);
	assert_true(c->phases[2].rate == 200);
	assert_int_equal(c->phases[2].concurrency, 64); /* open default bound */
	assert_int_equal(c->phases[2].backlog, 10);
	assert_true(c->phases[3].rate == 50.5);
	assert_int_equal(c->phases[3].concurrency, 8);
	assert_int_equal(c->phases[3].requests, 1000);

	assert_true(c->gates.has_max_p95_ms && c->gates.max_p95_ms == 50);
	assert_true(c->gates.has_max_error_rate);
	assert_true(c->gates.has_max_session_losses);
	assert_int_equal(c->gates.max_session_losses, 0);
	assert_false(c->gates.has_max_p99_ms);
	assert_false(c->gates.has_min_rps);
	assert_string_equal(c->output.csv, "t.csv");
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), 0);
	mgw_load_conf_free(c);
}

static void test_json_scenario(void **state)
{
	static const char js[] =
		"{\"targets\": \"http://[::1]:9000/mcp\",\n"
		" \"dialect\": \"modern\",\n"
		" \"calls\": [{\"tool\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2.5}}],\n"
		" \"phases\": [{\"rate\": 100, \"duration\": \"10s\"}],\n"
		" \"gates\": {\"min_rps\": 95, \"max_handle_losses\": 3}}\n";
	char err[512];
	struct mgw_load_conf *c = parse(js, 0, err, sizeof(err));

	(void)state;
	assert_int_equal(c->transport.n_targets, 1);
	assert_int_equal(c->dialect, MGW_LOAD_MODERN);
	assert_int_equal(json_integer_value(json_object_get(c->calls[0].arguments,
	                                                    "a")), 1);
	assert_true(json_real_value(json_object_get(c->calls[0].arguments, "b"))
	            == 2.5);
	assert_int_equal(c->phases[0].mode, MGW_LOAD_OPEN);
	assert_true(c->gates.has_min_rps && c->gates.min_rps == 95);
	assert_int_equal(c->gates.max_handle_losses, 3);
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), 0);
	mgw_load_conf_free(c);
}

static void test_errors_have_positions(void **state)
{
	(void)state;
	expect_error("dialect: old\n", "s.yaml:1:10: dialect:", "legacy, modern, auto");
	expect_error("calls:\n  - tool: echo\n    colour: red\n",
	             "s.yaml:3:5: calls[0].colour: unknown key", NULL);
	expect_error("targets: [http://a/mcp, 'ftp://b']\n",
	             "s.yaml:1:25: targets[1]", "not a valid URL");
	expect_error("targets: {a: 1}\n", "s.yaml:1:10: targets",
	             "list of URLs");
	expect_error("calls:\n  - tool: echo\n    arguments: [1, 2]\n",
	             "s.yaml:3:16: calls[0].arguments", "expected a mapping");
	expect_error("calls:\n  - tool: echo\n    arguments: {a: 1, a: 2}\n",
	             "s.yaml:3:23: calls[0].arguments", "duplicate key 'a'");
	expect_error("calls:\n  - tool: echo\n    arguments: {}\n    arguments: {}\n",
	             "s.yaml:4:5: calls[0].arguments", "duplicate key");
	expect_error("calls:\n  - tool: echo\n    weight: 0\n",
	             "s.yaml:3:13: calls[0].weight", "greater than 0");
	expect_error("calls:\n  - flow: counter\n    weight: 0\n",
	             "s.yaml:3:13: calls[0].weight", "greater than 0");
	expect_error("calls:\n  - weight: 2\n", "calls[0].tool",
	             "missing required key");
	expect_error("phases:\n  - concurrency: 0\n", "s.yaml:2:18: phases[0].concurrency",
	             "out of range");
	expect_error("phases:\n  - rate: fast\n", "phases[0].rate", "a number");
	expect_error("timeout: forever\n", "s.yaml:1:10: timeout", "duration");
	expect_error("think: {mode: uniform, min: 2s, max: 1s}\n", "think.max",
	             "below min");
	expect_error("auth:\n  headers:\n    - {name: 'bad name', value: x}\n",
	             "auth.headers[0].name", "not a valid header name");
	expect_error("auth:\n  headers:\n    - {name: A, value: x, env: Y}\n",
	             "auth.headers[0]", "exactly one of value or env");
	expect_error("gates: {max_error_rate: 2}\n", "gates.max_error_rate",
	             "out of range");
	expect_error("- a\n- b\n", "s.yaml:1:1", "expected a mapping");
	expect_error("dialect: [legacy\n", "s.yaml:", NULL);
}

static void test_file_errors(void **state)
{
	struct mgw_load_conf *c = mgw_load_conf_new();
	char err[512], path[] = "/tmp/mgw-scenario-XXXXXX";
	int fd;
	FILE *f;

	(void)state;
	assert_int_equal(mgw_load_scenario_load(c, "/nonexistent/x.yaml", err,
	                                        sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "/nonexistent/x.yaml: cannot open"));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("targets: http://127.0.0.1:1/mcp\ncalls: [{tool: echo}]\n", f);
	fclose(f);
	assert_int_equal(mgw_load_scenario_load(c, path, err, sizeof(err)), 0);
	assert_int_equal(c->n_calls, 1);
	assert_string_equal(c->source, path);
	unlink(path);
	mgw_load_conf_free(c);
}

static void test_conf_check(void **state)
{
	char err[512];
	struct mgw_load_conf *c = mgw_load_conf_new();
	struct mgw_load_phase *p;

	(void)state;
	assert_int_equal(mgw_load_conf_add_target(c, "http://127.0.0.1:1/mcp"), 0);
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "no calls"));
	assert_non_null(mgw_load_conf_add_call(c, "counter"));
	assert_int_equal(c->calls[0].flow, MGW_LOAD_FLOW_COUNTER);
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "no phases"));
	p = mgw_load_conf_add_phase(c, "load");
	assert_non_null(p);
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "duration or a number of requests"));
	p->requests = 10;
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), 0);
	p->mode = MGW_LOAD_OPEN;
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "needs a rate"));
	p->rate = 5;
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), 0);
	/* stdio excludes targets and HTTP-only options */
	c->transport.type = MGW_LOAD_STDIO;
	c->transport.command = strdup("mcpgw backend --stdio");
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "stdio"));
	mgw_load_conf_clear_targets(c);
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), 0);
	c->transport.http2 = 1;
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	mgw_load_conf_free(c);
}

static void test_scalars_and_args(void **state)
{
	static const struct { const char *s; int plain; int type; } cases[] = {
		{"42", 1, JSON_INTEGER}, {"-7", 1, JSON_INTEGER},
		{"1.5", 1, JSON_REAL}, {"1e3", 1, JSON_REAL},
		{"true", 1, JSON_TRUE}, {"false", 1, JSON_FALSE},
		{"null", 1, JSON_NULL}, {"", 1, JSON_NULL},
		{"42", 0, JSON_STRING}, {"true", 0, JSON_STRING},
		{"007", 1, JSON_STRING}, {"1.", 1, JSON_STRING},
		{"0x10", 1, JSON_STRING}, {"hello", 1, JSON_STRING},
		{"True", 1, JSON_STRING}, {"99999999999999999999999", 1, JSON_STRING},
	};
	json_t *o = json_object();
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *v = mgw_load_json_scalar(cases[i].s, strlen(cases[i].s),
		                                 cases[i].plain);
		assert_non_null(v);
		if ((int)json_typeof(v) != cases[i].type) {
			print_error("'%s' plain=%d: type %d\n", cases[i].s,
			            cases[i].plain, json_typeof(v));
			fail();
		}
		json_decref(v);
	}
	assert_int_equal(mgw_load_parse_arg(o, "text=hello world", err,
	                                    sizeof(err)), 0);
	assert_int_equal(mgw_load_parse_arg(o, "ms=250", err, sizeof(err)), 0);
	assert_int_equal(mgw_load_parse_arg(o, "eq=a=b", err, sizeof(err)), 0);
	assert_int_equal(mgw_load_parse_arg(o, "obj:={\"k\": [1, 2]}", err,
	                                    sizeof(err)), 0);
	assert_int_equal(mgw_load_parse_arg(o, "s:=\"42\"", err, sizeof(err)), 0);
	assert_string_equal(json_string_value(json_object_get(o, "text")),
	                    "hello world");
	assert_int_equal(json_integer_value(json_object_get(o, "ms")), 250);
	assert_string_equal(json_string_value(json_object_get(o, "eq")), "a=b");
	assert_int_equal(json_array_size(json_object_get(
		json_object_get(o, "obj"), "k")), 2);
	assert_string_equal(json_string_value(json_object_get(o, "s")), "42");
	assert_int_equal(mgw_load_parse_arg(o, "noequals", err, sizeof(err)),
	                 MGW_EINVAL);
	assert_int_equal(mgw_load_parse_arg(o, "=v", err, sizeof(err)),
	                 MGW_EINVAL);
	assert_int_equal(mgw_load_parse_arg(o, "x:={bad", err, sizeof(err)),
	                 MGW_EINVAL);
	assert_non_null(strstr(err, "not JSON"));
	/* JSON strings are UTF-8: a byte string that is not is refused */
	assert_int_equal(mgw_load_parse_arg(o, "t=\xff\xfe", err, sizeof(err)),
	                 MGW_EINVAL);
	assert_non_null(strstr(err, "not valid UTF-8"));
	assert_int_equal(mgw_load_parse_arg(o, "\xc3(=1", err, sizeof(err)),
	                 MGW_EINVAL);
	assert_non_null(strstr(err, "key is not valid UTF-8"));
	assert_int_equal(mgw_load_parse_arg(o, "caf\xc3\xa9=cr\xc3\xa8me", err,
	                                    sizeof(err)), 0);
	json_decref(o);
}

static void test_think_and_enums(void **state)
{
	struct mgw_load_think t;
	int v;

	(void)state;
	assert_int_equal(mgw_load_parse_think("none", &t), 0);
	assert_int_equal(t.kind, MGW_THINK_NONE);
	assert_int_equal(mgw_load_parse_think("200ms", &t), 0);
	assert_int_equal(t.kind, MGW_THINK_FIXED);
	assert_true(t.min == 0.2);
	assert_int_equal(mgw_load_parse_think("100ms-2s", &t), 0);
	assert_int_equal(t.kind, MGW_THINK_UNIFORM);
	assert_true(t.min == 0.1 && t.max == 2);
	assert_int_equal(mgw_load_parse_think("agent", &t), 0);
	assert_int_equal(t.kind, MGW_THINK_AGENT);
	assert_true(t.long_share > 0 && t.long_max > t.long_min);
	assert_int_equal(mgw_load_parse_think("2s-1s", &t), MGW_EINVAL);
	assert_int_equal(mgw_load_parse_think("-1s", &t), MGW_EINVAL);
	assert_int_equal(mgw_load_parse_think("soon", &t), MGW_EINVAL);
	/* the scenario keys' bound, or seconds overflow into nanoseconds */
	assert_int_equal(mgw_load_parse_think("3600s", &t), 0);
	assert_int_equal(mgw_load_parse_think("3601s", &t), MGW_EINVAL);
	assert_int_equal(mgw_load_parse_think("20000000000", &t), MGW_EINVAL);
	assert_int_equal(mgw_load_parse_think("1s-2h", &t), MGW_EINVAL);
	assert_int_equal(mgw_load_parse_dialect("modern", &v), 0);
	assert_int_equal(v, MGW_LOAD_MODERN);
	assert_int_equal(mgw_load_parse_dialect("dual", &v), MGW_EINVAL);
	assert_int_equal(mgw_load_parse_conn("new", &v), 0);
	assert_int_equal(v, MGW_LOAD_CONN_NEW);
	assert_string_equal(mgw_load_dialect_name(MGW_LOAD_AUTO), "auto");
	assert_string_equal(mgw_load_conn_name(MGW_LOAD_CONN_REUSE), "reuse");
}

/* flow: mrtr: answers as free JSON with the accept/decline/cancel
 * shorthand expanded, max_rounds bounded, answers required. */
static void test_mrtr_calls(void **state)
{
	static const char y[] =
		"targets: http://127.0.0.1:1/mcp\n"
		"calls:\n"
		"  - tool: book\n"
		"    flow: mrtr\n"
		"    arguments: {rounds: 3}\n"
		"    max_rounds: 7\n"
		"    answers:\n"
		"      date: {action: accept, content: {date: '2026-08-01'}}\n"
		"      confirm: accept\n"
		"      '*': decline\n"
		"phases: [{requests: 1}]\n"
		"gates: {max_state_losses: 0}\n";
	char err[512];
	struct mgw_load_conf *c = parse(y, 0, err, sizeof(err));
	json_t *an;

	(void)state;
	assert_int_equal(c->calls[0].flow, MGW_LOAD_FLOW_MRTR);
	assert_int_equal(c->calls[0].max_rounds, 7);
	an = c->calls[0].answers;
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(json_object_get(an, "date"), "content"), "date")),
		"2026-08-01");
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(an, "confirm"), "action")), "accept");
	assert_true(json_is_object(json_object_get(json_object_get(an, "confirm"),
	                                           "content")));
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(an, "*"), "action")), "decline");
	assert_null(json_object_get(json_object_get(an, "*"), "content"));
	assert_true(c->gates.has_max_state_losses);
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), 0);
	mgw_load_conf_free(c);

	/* the default bound, and answers required by the final check */
	c = parse("targets: http://127.0.0.1:1/mcp\n"
	          "calls: [{tool: book, flow: mrtr}]\nphases: [{requests: 1}]\n",
	          0, err, sizeof(err));
	assert_int_equal(c->calls[0].max_rounds, 20);
	assert_int_equal(mgw_load_conf_check(c, err, sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "needs answers"));
	mgw_load_conf_free(c);

	expect_error("calls:\n  - {tool: b, flow: mrtr, answers: {x: maybe}}\n",
	             "calls[0].answers", "answer 'x'");
	expect_error("calls:\n  - {tool: b, flow: mrtr, answers: {x: {content: {}}}}\n",
	             "calls[0].answers", "string action");
	expect_error("calls:\n  - {tool: b, flow: mrtr, answers: [accept]}\n",
	             "calls[0].answers", "expected a mapping");
	expect_error("calls:\n  - {tool: b, flow: mrtr, max_rounds: 0}\n",
	             "calls[0].max_rounds", "out of range");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full_yaml),
		cmocka_unit_test(test_json_scenario),
		cmocka_unit_test(test_errors_have_positions),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_conf_check),
		cmocka_unit_test(test_scalars_and_args),
		cmocka_unit_test(test_think_and_enums),
		cmocka_unit_test(test_mrtr_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
