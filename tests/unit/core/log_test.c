/* log_test.c - unit tests for src/core/log.c: a message is one line
 * whatever it contains (control bytes written as \xHH), long messages are
 * cut with their length shown, session ids are redacted, and the level
 * and access switches filter; the access log goes to a file when asked,
 * reopened under its name after a move; rate-limited lines and operator
 * events stop at their budget and say how many were left out. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/errors.h"
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

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *out;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	out = calloc(1, (size_t)n + 1);
	assert_non_null(out);
	assert_int_equal(fread(out, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return out;
}

static void log_access_lines(void)
{
	mgw_log_access(NULL, "GET %s status=%d", "/a\nb", 200);
	mgw_log_access_line("{\"a\":1}", 7);
}

/* A file, whatever the level; moved away and reopened: the new lines go
 * to a new file under the name, none to the moved one. */
static void test_access_file_reopen(void **state)
{
	char dir[] = "/tmp/mcpgw-log-test.XXXXXX", path[64], moved[64];
	char *a, *b, *err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/access.log", dir);
	snprintf(moved, sizeof(moved), "%s/access.log.1", dir);
	mgw_log_set_access(1);
	mgw_log_set_level(MGW_LOG_WARN);
	assert_false(mgw_log_access_enabled());
	assert_int_equal(mgw_log_access_open(path), 0);
	assert_true(mgw_log_access_enabled()); /* a file: any level */
	err = capture(log_access_lines);
	assert_string_equal(err, "");          /* nothing on stderr */
	free(err);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(mgw_log_access_reopen(), 0);
	mgw_log_access_line("{\"after\":1}", 11);
	a = slurp(moved);
	b = slurp(path);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(lines(a), 2);
	assert_non_null(strstr(a, " info  GET /a\\x0ab status=200\n{\"a\":1}\n"));
	assert_string_equal(b, "{\"after\":1}\n");
	free(a);
	free(b);
	/* opened again under another name (a reload): the lines go there */
	assert_int_equal(mgw_log_access_open(moved), 0);
	mgw_log_access_line("{\"third\":1}", 11);
	a = slurp(moved);
	b = slurp(path);
	assert_int_equal(lines(a), 3);
	assert_int_equal(lines(b), 1);
	free(a);
	free(b);
	mgw_log_access_close();
	assert_int_equal(mgw_log_access_reopen(), 0); /* no file: nothing */
	assert_int_equal(mgw_log_access_open("/nonexistent-dir/x.log"), MGW_EIO);
	mgw_log_set_access(0);
	mgw_log_set_level(MGW_LOG_INFO);
	unlink(path);
	unlink(moved);
	rmdir(dir);
}

static void log_limited(void)
{
	static struct mgw_log_limit lim = MGW_LOG_LIMIT_INIT("test", 3, MGW_LOG_WARN);
	time_t start = time(NULL);

	/* all within one second (retried if the second turned meanwhile) */
	for (int i = 0; i < 10; i++)
		if (mgw_log_limit_ok(&lim))
			mgw_warn(NULL, "limited %d", i);
	/* the next second: the summary, then the line */
	while (time(NULL) == start)
		usleep(10000);
	if (mgw_log_limit_ok(&lim))
		mgw_warn(NULL, "next second");
}

static void test_limit(void **state)
{
	char *out;

	(void)state;
	mgw_log_set_level(MGW_LOG_INFO);
	out = capture(log_limited);
	/* 10 tries in the first second: at most 3 a second; if the loop
	 * straddled a second boundary a few more */
	assert_non_null(strstr(out, "limited 0"));
	assert_non_null(strstr(out, "limited 2"));
	assert_non_null(strstr(out, " lines left out in the last second(s)\n"));
	assert_non_null(strstr(out, "next second\n"));
	assert_true(strstr(out, "left out") < strstr(out, "next second"));
	assert_true(lines(out) <= 8);
	free(out);
}

static void log_events(void)
{
	for (int i = 0; i < 100; i++)
		mgw_event(NULL, "test_event", "n=%d", i);
}

static void test_event(void **state)
{
	char *out;

	(void)state;
	mgw_log_set_level(MGW_LOG_WARN);
	out = capture(log_events);
	assert_non_null(strstr(out, " warn  event=test_event n=0\n"));
	/* the budget of a second, or two when the loop straddled one */
	assert_true(lines(out) >= MGW_EVENT_LOGS_PER_S);
	assert_true(lines(out) <= 2 * MGW_EVENT_LOGS_PER_S + 1);
	free(out);
	mgw_log_set_level(MGW_LOG_ERROR);
	out = capture(log_events);
	assert_string_equal(out, "");
	free(out);
	mgw_log_set_level(MGW_LOG_INFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_bytes_escaped),
		cmocka_unit_test(test_long_message_cut),
		cmocka_unit_test(test_context_and_level),
		cmocka_unit_test(test_access_switch),
		cmocka_unit_test(test_access_file_reopen),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
