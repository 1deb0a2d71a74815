/* resume_test.c - unit tests for bench/src/resume.c's build and machine
 * check: a resume is refused when a value changed, when the run's report
 * lacks a key this build stamps (it was started by another build, one
 * that did not stamp it), and accepted when only the load average moved. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bench/src/resume.h"

static json_t *report(json_t *machine, json_t *versions)
{
	return json_pack("{s:o, s:o}", "machine", machine, "versions", versions);
}

static json_t *machine(double load)
{
	return json_pack("{s:s, s:i, s:f}", "cpu", "AMD EPYC", "cpus", 2,
	                 "loadavg_1m", load);
}

static json_t *versions(const char *sha, int with_bench_sha)
{
	json_t *v = json_pack("{s:s, s:s}", "mcpgw", "mcpgw 0.1.0",
	                      "mcpgw_sha256", sha);

	if (with_bench_sha)
		json_object_set_new(v, "mcpgw-bench_sha256", json_string("b1"));
	return v;
}

static void test_compare(void **state)
{
	json_t *rep = report(machine(0.5), versions("a1", 1));
	json_t *m = machine(1.9), *v;
	char err[256];

	(void)state;
	v = versions("a1", 1);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, err, sizeof(err)), 0);
	json_decref(v);
	v = versions("a2", 1);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "versions.mcpgw_sha256"));
	json_decref(v);
	json_decref(rep);

	/* a run started by a build that did not stamp its own SHA-256 */
	rep = report(machine(0.5), versions("a1", 0));
	v = versions("a1", 1);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "versions.mcpgw-bench_sha256"));
	assert_non_null(strstr(err, "another build"));
	json_decref(v);
	/* ... is resumed by that same build */
	v = versions("a1", 0);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, err, sizeof(err)), 0);
	json_decref(v);
	json_decref(m);
	/* another machine */
	m = json_pack("{s:s, s:i, s:f}", "cpu", "AMD EPYC", "cpus", 4,
	              "loadavg_1m", 0.5);
	v = versions("a1", 0);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "machine.cpus"));
	json_decref(v);
	json_decref(m);
	json_decref(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
