/* log_test.c - unit tests for src/core/log.c: a message is one line
 * whatever it contains (control bytes written as \xHH), long messages are
 * cut with their length shown, session ids are redacted, and the level
 * and access switches filter. */
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

#include "core/log.h"

/* Runs the logging in fn with stderr sent to a temporary file; returns
 * what was written (malloc'd). */
static char *capture(void (*fn)(void))
{
	char path[] = "/tmp/mcpgw-log-test.XXXXXX";
	int fd = mkstemp(path), saved;
	char *out;
	long n;
	FILE *f;

	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	fn();
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	f = fdopen(fd, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	out = calloc(1, (size_t)n + 1);
	assert_non_null(out);
	assert_int_equal(fread(out, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(path);
	return out;
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void log_forged(void)
{
	/* what a JSON-RPC method "x\n... error forged\u001b[2J" decodes to */
	mgw_log(MGW_LOG_INFO, NULL, "mcp=%s status=%d",
	        "x\n2026-01-01T00:00:00.000Z error  forged\x1b[2J\x7f", 404);
}

static void test_control_bytes_escaped(void **state)
{
	char *out;

	(void)state;
	mgw_log_set_level(MGW_LOG_INFO);
	out = capture(log_forged);
	assert_int_equal(lines(out), 1);
	assert_non_null(strstr(out, "mcp=x\\x0a2026-01-01T00:00:00.000Z error  "
	                            "forged\\x1b[2J\\x7f status=404\n"));
	assert_null(strchr(out, '\x1b'));
	free(out);
}

static void log_long(void)
{
	char *big = malloc(100000);

	assert_non_null(big);
	memset(big, 'm', 99999);
	big[99999] = '\0';
	mgw_log(MGW_LOG_WARN, NULL, "method %s", big);
	free(big);
}

static void test_long_message_cut(void **state)
{
	char *out;

	(void)state;
	mgw_log_set_level(MGW_LOG_INFO);
	out = capture(log_long);
	assert_int_equal(lines(out), 1);
	assert_true(strlen(out) < 2200);
	assert_non_null(strstr(out, "...(100006 bytes)\n"));
	free(out);
}

static void log_ctx(void)
{
	struct mgw_log_ctx ctx = {.conn_id = 7, .stream_id = 3,
	                          .session = "0123456789abcdef0123456789abcdef"};

	mgw_log(MGW_LOG_INFO, &ctx, "hello");
	mgw_log(MGW_LOG_DEBUG, &ctx, "not shown at info");
}

static void test_context_and_level(void **state)
{
	char *out;

	(void)state;
	mgw_log_set_level(MGW_LOG_INFO);
	out = capture(log_ctx);
	assert_int_equal(lines(out), 1);
	assert_non_null(strstr(out, "0123…(32)"));
	assert_null(strstr(out, "0123456789abcdef"));
	assert_non_null(strstr(out, " hello\n"));
	free(out);
}

static void test_access_switch(void **state)
{
	(void)state;
	mgw_log_set_level(MGW_LOG_INFO);
	mgw_log_set_access(0);
	assert_false(mgw_log_access_enabled());
	mgw_log_set_access(1);
	assert_true(mgw_log_access_enabled());
	mgw_log_set_level(MGW_LOG_WARN);
	assert_false(mgw_log_access_enabled());
	mgw_log_set_access(0);
	mgw_log_set_level(MGW_LOG_INFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_bytes_escaped),
		cmocka_unit_test(test_long_message_cut),
		cmocka_unit_test(test_context_and_level),
		cmocka_unit_test(test_access_switch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
