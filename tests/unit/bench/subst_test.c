/* subst_test.c - unit tests for bench/src/subst.c: every placeholder of
 * the --external command, shell syntax left alone, {dir} quoted against
 * the shell, unknown names and out-of-range ports refused, and a result
 * that does not fit refused rather than cut. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "bench/src/subst.h"

static struct mgw_bench_subst_vars vars(void)
{
	struct mgw_bench_subst_vars v;

	memset(&v, 0, sizeof(v));
	v.listen_port = 4000;
	v.ports[0] = 5001;
	v.ports[1] = 5002;
	v.n_ports = 2;
	v.dir = "/tmp/run dir/it's";
	return v;
}

static void test_placeholders(void **state)
{
	struct mgw_bench_subst_vars v = vars();
	char out[512], err[256];

	(void)state;
	assert_int_equal(mgw_bench_subst("p {listen} {listen_port} [{ports}] "
	                                 "{addrs} {port2} {port1} n={n}", &v,
	                                 out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "p 127.0.0.1:4000 4000 [5001 5002] "
	                         "127.0.0.1:5001,127.0.0.1:5002 5002 5001 n=2");
	assert_int_equal(mgw_bench_subst("cd {dir}", &v, out, sizeof(out), err,
	                                 sizeof(err)), 0);
	assert_string_equal(out, "cd '/tmp/run dir/it'\\''s'");
}

static void test_shell_syntax_kept(void **state)
{
	struct mgw_bench_subst_vars v = vars();
	char out[512], err[256];

	(void)state;
	assert_int_equal(mgw_bench_subst("echo ${HOME} {a,b} {} {Port1} x{", &v,
	                                 out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "echo ${HOME} {a,b} {} {Port1} x{");
}

static void test_refused(void **state)
{
	struct mgw_bench_subst_vars v = vars();
	char out[64], err[256];

	(void)state;
	assert_int_equal(mgw_bench_subst("x {lsiten}", &v, out, sizeof(out), err,
	                                 sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "{lsiten}"));
	assert_int_equal(mgw_bench_subst("x {port3}", &v, out, sizeof(out), err,
	                                 sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "{port2}"));
	assert_int_equal(mgw_bench_subst("x {port0}", &v, out, sizeof(out), err,
	                                 sizeof(err)), MGW_EINVAL);
	assert_int_equal(mgw_bench_subst("{addrs} {addrs} {addrs}", &v, out, 40,
	                                 err, sizeof(err)), MGW_ELIMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_shell_syntax_kept),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
