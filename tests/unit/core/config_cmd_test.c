/* config_cmd_test.c - unit tests for src/core/config_cmd.c: the options,
 * exit codes and output of "mcpgw check-config". */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/commands.h"
#include "core/errors.h"

static char out[8192], errout[8192];

/* Reads back what was written to fd since it was created, then closes it. */
static void slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Runs check-config with stdout and stderr captured into out / errout. */
static int run(int argc, char **argv)
{
	FILE *fo = tmpfile(), *fe = tmpfile();
	int so, se, rc;

	assert_non_null(fo);
	assert_non_null(fe);
	fflush(stdout);
	fflush(stderr);
	so = dup(STDOUT_FILENO);
	se = dup(STDERR_FILENO);
	dup2(fileno(fo), STDOUT_FILENO);
	dup2(fileno(fe), STDERR_FILENO);
	rc = mgw_check_config_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, STDOUT_FILENO);
	dup2(se, STDERR_FILENO);
	close(so);
	close(se);
	slurp(fo, out, sizeof(out));
	slurp(fe, errout, sizeof(errout));
	return rc;
}

/* Runs check-config with the NULL-terminated argument list. */
static int runv(const char *first, ...)
{
	char *argv[16] = {"check-config"};
	int argc = 1;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return run(argc, argv);
}

#define RUN(...) runv(__VA_ARGS__, (const char *)NULL)

static char good[64], bad[64];

static void write_file(char *tmpl, const char *content)
{
	int fd;

	strcpy(tmpl, "/tmp/mgw-cc-test-XXXXXX");
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)),
	                 (ssize_t)strlen(content));
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	write_file(good, "listeners:\n  - address: 127.0.0.1:0\n"
	                 "  - address: :0\nbackend:\n  era: legacy\n"
	                 "  state: hmac\n");
	write_file(bad, "backend:\n  era: dual\n  bogus_key: 1\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(good);
	unlink(bad);
	return 0;
}

static void test_ok_summary(void **state)
{
	char want[256];

	(void)state;
	assert_int_equal(RUN("-c", good), MGW_EXIT_OK);
	snprintf(want, sizeof(want), "%s: ok\nlisteners: 2, backend: era legacy, "
	         "state hmac, sse never\n", good);
	assert_string_equal(out, want);
	assert_string_equal(errout, "");
	/* the other spellings of the option */
	assert_int_equal(RUN("--config", good), MGW_EXIT_OK);
	assert_string_equal(out, want);
	snprintf(want, sizeof(want), "--config=%s", good);
	assert_int_equal(RUN(want), MGW_EXIT_OK);
	snprintf(want, sizeof(want), "-c%s", good);
	assert_int_equal(RUN(want), MGW_EXIT_OK);
}

static void test_no_backend_section(void **state)
{
	char path[64], want[256];

	(void)state;
	write_file(path, "log: {level: warn}\nlisteners: [{address: ':0'}]\n");
	assert_int_equal(RUN("-c", path), MGW_EXIT_OK);
	snprintf(want, sizeof(want), "%s: ok\nlisteners: 1, no backend section\n",
	         path);
	assert_string_equal(out, want);
	unlink(path);
}

static void test_serve_summary(void **state)
{
	char path[64], want[256];

	(void)state;
	write_file(path, "upstreams:\n  - name: a\n    servers:\n"
	                 "      - url: http://h:1\n      - url: http://h:2\n"
	                 "mode: auto\nlisteners: [{address: ':0'}]\n");
	assert_int_equal(RUN("-c", path), MGW_EXIT_OK);
	snprintf(want, sizeof(want), "%s: ok\nlisteners: 1, no backend section\n"
	         "serve: mode auto, 1 upstream group, 2 servers, 1 route\n",
	         path);
	assert_string_equal(out, want);
	unlink(path);
}

/* What serve (or backend) refuses at start is refused here too, with
 * the words they use, the file named first. */
static void test_start_refusals(void **state)
{
	char path[64], want[512];

	(void)state;
	/* a serve key but no upstreams */
	write_file(path, "mode: auto\nlisteners: [{address: ':0'}]\n");
	assert_int_equal(RUN("-c", path), MGW_EXIT_USAGE);
	snprintf(want, sizeof(want), "%s: no upstream: give --upstream URL or "
	         "an upstreams: section\n", path);
	assert_string_equal(errout, want);
	unlink(path);
	/* no listeners (serve, then backend) */
	write_file(path, "upstreams: [{name: a, servers: [{url: 'http://h:1'}]}]\n");
	assert_int_equal(RUN("-c", path), MGW_EXIT_USAGE);
	snprintf(want, sizeof(want), "%s: no listener: give --listen HOST:PORT or "
	         "a listeners: section\n", path);
	assert_string_equal(errout, want);
	unlink(path);
	write_file(path, "backend: {era: legacy}\n");
	assert_int_equal(RUN("-c", path), MGW_EXIT_USAGE);
	assert_non_null(strstr(errout, ": no listener: give --listen HOST:PORT "
	                       "or a listeners: section\n"));
	unlink(path);
	/* a TLS listener whose certificate is missing */
	write_file(path, "listeners: [{address: ':0', tls: {cert: /nonexistent/c.pem, "
	                 "key: /nonexistent/k.pem}}]\n");
	assert_int_equal(RUN("-c", path), MGW_EXIT_USAGE);
	assert_non_null(strstr(errout, ": TLS for :0: "));
	assert_non_null(strstr(errout, "/nonexistent/c.pem"));
	unlink(path);
}

static void test_version(void **state)
{
	(void)state;
	assert_int_equal(RUN("--version"), MGW_EXIT_OK);
	assert_int_equal(strncmp(out, "mcpgw " PACKAGE_VERSION "\n",
	                         strlen("mcpgw " PACKAGE_VERSION "\n")), 0);
	assert_string_equal(errout, "");
}

static void test_quiet(void **state)
{
	(void)state;
	assert_int_equal(RUN("-q", "-c", good), MGW_EXIT_OK);
	assert_string_equal(out, "");
	assert_int_equal(RUN("-c", good, "--quiet"), MGW_EXIT_OK);
	assert_string_equal(out, "");
	/* quiet does not hide errors */
	assert_int_equal(RUN("-q", "-c", bad), MGW_EXIT_USAGE);
	assert_non_null(strstr(errout, ":3:3: backend.bogus_key: unknown key"));
}

static void test_invalid_file(void **state)
{
	char want[256];

	(void)state;
	assert_int_equal(RUN("-c", bad), MGW_EXIT_USAGE);
	snprintf(want, sizeof(want), "%s:3:3: backend.bogus_key: unknown key\n",
	         bad);
	assert_string_equal(errout, want);
	assert_string_equal(out, "");
	assert_int_equal(RUN("-c", "/nonexistent/mcpgw.yaml"), MGW_EXIT_USAGE);
	assert_string_equal(errout, "/nonexistent/mcpgw.yaml: cannot open: No "
	                    "such file or directory\n");
}

static void test_usage(void **state)
{
	char *argv[] = {"check-config", NULL};

	(void)state;
	assert_int_equal(run(1, argv), MGW_EXIT_USAGE);
	assert_non_null(strstr(errout, "usage: mcpgw check-config -c FILE"));
	assert_string_equal(out, "");
	assert_int_equal(RUN("-c"), MGW_EXIT_USAGE);
	assert_non_null(strstr(errout, "-c needs a FILE"));
	assert_int_equal(RUN("--bogus"), MGW_EXIT_USAGE);
	assert_non_null(strstr(errout, "unexpected argument '--bogus'"));
	assert_int_equal(RUN("-c", good, "extra"), MGW_EXIT_USAGE);
	assert_int_equal(RUN("-q"), MGW_EXIT_USAGE);
	/* one file per run: "-s A -c B" used to check B as a scenario */
	assert_int_equal(RUN("-s", good, "-c", good), MGW_EXIT_USAGE);
	assert_non_null(strstr(errout, "one FILE per run"));
	assert_int_equal(RUN("-c", good, "-c", good), MGW_EXIT_USAGE);
}

static void test_help(void **state)
{
	(void)state;
	assert_int_equal(RUN("--help"), MGW_EXIT_OK);
	assert_non_null(strstr(out, "usage: mcpgw check-config -c FILE"));
	assert_non_null(strstr(out, "--config FILE"));
	assert_non_null(strstr(out, "--quiet"));
	assert_string_equal(errout, "");
	assert_int_equal(RUN("-h"), MGW_EXIT_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok_summary),
		cmocka_unit_test(test_no_backend_section),
		cmocka_unit_test(test_serve_summary),
		cmocka_unit_test(test_start_refusals),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_invalid_file),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_help),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
