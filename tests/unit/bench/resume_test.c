/* resume_test.c - unit tests for bench/src/resume.c's build and machine
 * check: a resume is refused when a value changed, when the run's report
 * lacks a key this build stamps (it was started by another build, one
 * that did not stamp it), and accepted when only the load average, the
 * kernel or the CPU model moved, or (when allowed) only mcpgw-bench's own
 * build. */
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

static json_t *machine_on(const char *cpu, double load)
{
	return json_pack("{s:s, s:i, s:f}", "cpu", cpu, "cpus", 2,
	                 "loadavg_1m", load);
}

static json_t *machine(double load)
{
	return machine_on("AMD EPYC", load);
}

static json_t *versions_of(const char *sha, const char *bench_sha)
{
	json_t *v = json_pack("{s:s, s:s}", "mcpgw", "mcpgw 0.1.0",
	                      "mcpgw_sha256", sha);

	if (bench_sha)
		json_object_set_new(v, "mcpgw-bench_sha256", json_string(bench_sha));
	return v;
}

static json_t *versions(const char *sha, int with_bench_sha)
{
	return versions_of(sha, with_bench_sha ? "b1" : NULL);
}

static void test_compare(void **state)
{
	json_t *rep = report(machine(0.5), versions("a1", 1));
	json_t *m = machine(1.9), *v;
	char err[256];

	(void)state;
	v = versions("a1", 1);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 0, err, sizeof(err)), 0);
	json_decref(v);
	v = versions("a2", 1);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "versions.mcpgw_sha256"));
	json_decref(v);
	json_decref(rep);

	/* a run started by a build that did not stamp its own SHA-256 */
	rep = report(machine(0.5), versions("a1", 0));
	v = versions("a1", 1);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "versions.mcpgw-bench_sha256"));
	assert_non_null(strstr(err, "another build"));
	json_decref(v);
	/* ... is resumed by that same build */
	v = versions("a1", 0);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 0, err, sizeof(err)), 0);
	json_decref(v);
	json_decref(m);
	/* another machine */
	m = json_pack("{s:s, s:i, s:f}", "cpu", "AMD EPYC", "cpus", 4,
	              "loadavg_1m", 0.5);
	v = versions("a1", 0);
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "machine.cpus"));
	json_decref(v);
	json_decref(m);
	json_decref(rep);
}

/* Another CPU model of the kind is a sitting's, like its kernel; another
 * mcpgw-bench build only when the resume allows it, and never another
 * mcpgw build. */
static void test_cpu_and_harness(void **state)
{
	json_t *rep = report(machine(0.5), versions_of("a1", "b1"));
	json_t *m = machine_on("Intel(R) Xeon(R) Processor", 0.1), *v;
	char err[256];

	(void)state;
	v = versions_of("a1", "b1");
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 0, err, sizeof(err)),
	                 0);
	json_decref(v);
	v = versions_of("a1", "b2");
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 0, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "versions.mcpgw-bench_sha256"));
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 1, err, sizeof(err)),
	                 0);
	json_decref(v);
	v = versions_of("a2", "b2");
	assert_int_equal(mgw_bench_resume_compare(rep, m, v, 1, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "versions.mcpgw_sha256"));
	json_decref(v);
	json_decref(m);
	json_decref(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_cpu_and_harness),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
