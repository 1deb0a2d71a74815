/* proc_test.c - unit tests for bench/src/proc.c: a child's "listening on"
 * line gives its port; a child that exits first, or prints something
 * else, is told apart from one that is slow; a kill is seen in the reaped
 * status; stop escalates to SIGKILL for a child that ignores SIGTERM (and
 * reaches its whole process group); a child that already exited is not
 * signalled; version lines are captured; an exec failure is exit
 * status 127; a child's RSS and open descriptors are read from /proc;
 * and a process moved to another slot is still stopped by the
 * emergency teardown. */
#include "autoconf.h"

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/errors.h"
#include "bench/src/proc.h"

static char dir[] = "/tmp/mcpgw-bench-proc-XXXXXX";
static char out[256], err[256];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mgw_bench_proc_kill_all();
	unlink(out);
	unlink(err);
	rmdir(dir);
	return 0;
}

static void test_listening_and_kill(void **state)
{
	char *argv[] = { "/bin/sh", "-c",
		         "echo 'listening on 127.0.0.1:43210'; exec sleep 30", NULL };
	struct mgw_bench_proc p;
	char st[64];

	(void)state;
	assert_int_equal(mgw_bench_proc_spawn(&p, "replica 1", argv, out, err, 1), 0);
	assert_int_equal(mgw_bench_proc_wait_listening(&p, 10.0), 0);
	assert_int_equal(p.port, 43210);
	assert_int_equal(mgw_bench_proc_running(&p), 1);
	assert_int_equal(mgw_bench_proc_signal(&p, SIGKILL), 0);
	assert_int_equal(mgw_bench_proc_wait(&p, 10.0), 0);
	assert_true(p.reaped);
	assert_true(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGKILL);
	assert_string_equal(mgw_bench_status_str(p.status, st, sizeof(st)),
	                    "killed by SIGKILL");
	/* reaped: the PID is no longer ours to signal */
	assert_int_equal(mgw_bench_proc_signal(&p, SIGTERM), MGW_ECLOSED);
	assert_int_equal(mgw_bench_proc_running(&p), 0);
}

static void test_exits_first(void **state)
{
	char *argv1[] = { "/bin/sh", "-c", "echo oops >&2; exit 3", NULL };
	char *argv2[] = { "/bin/sh", "-c", "echo hello; exec sleep 30", NULL };
	char *argv3[] = { "/nonexistent/mcpgw", "backend", NULL };
	struct mgw_bench_proc p;
	char st[64];

	(void)state;
	assert_int_equal(mgw_bench_proc_spawn(&p, "r", argv1, out, err, 1), 0);
	assert_int_equal(mgw_bench_proc_wait_listening(&p, 10.0), MGW_ECLOSED);
	assert_string_equal(mgw_bench_status_str(p.status, st, sizeof(st)),
	                    "exited 3");

	assert_int_equal(mgw_bench_proc_spawn(&p, "r", argv2, out, err, 1), 0);
	assert_int_equal(mgw_bench_proc_wait_listening(&p, 10.0), MGW_EPROTO);
	assert_int_equal(mgw_bench_proc_stop(&p, SIGTERM, 5.0), 0);
	assert_true(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGTERM);

	assert_int_equal(mgw_bench_proc_spawn(&p, "r", argv3, out, err, 1), 0);
	assert_int_equal(mgw_bench_proc_wait(&p, 10.0), 0);
	assert_true(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 127);
}

/* Processes of process group pgid that are not zombies (from /proc). */
static int live_in_group(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[300], buf[512], *rp, st;
		int pgrp = 0;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) != NULL &&
		    sscanf(rp + 1, " %c %*d %d", &st, &pgrp) == 2 &&
		    pgrp == (int)pgid && st != 'Z')
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void test_stop_escalates(void **state)
{
	/* ignores SIGTERM, and leaves a grandchild in its group */
	char *argv[] = { "/bin/sh", "-c",
		         "trap '' TERM; sleep 30 & echo listening on 127.0.0.1:1; "
		         "while :; do sleep 1; done", NULL };
	struct mgw_bench_proc p;
	int left = -1;

	(void)state;
	assert_int_equal(mgw_bench_proc_spawn(&p, "stubborn", argv, out, err, 1), 0);
	assert_int_equal(mgw_bench_proc_wait_listening(&p, 10.0), 0);
	assert_true(live_in_group(p.pid) >= 2); /* sh and its sleeps */
	assert_int_equal(mgw_bench_proc_stop(&p, SIGTERM, 0.5), MGW_ETIMEDOUT);
	assert_true(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGKILL);
	/* the group is gone too (its orphan may linger as a zombie until
	 * whoever adopted it reaps it, which is not ours to wait for) */
	for (int i = 0; i < 100 && (left = live_in_group(p.pid)) != 0; i++)
		usleep(20000);
	assert_int_equal(left, 0);
}

static void test_capture(void **state)
{
	char *ok[] = { "/bin/sh", "-c", "echo 'v 1.2.3'; echo second", NULL };
	char *bad[] = { "/nonexistent/redis-server", "--version", NULL };
	char line[64];

	(void)state;
	assert_int_equal(mgw_bench_capture_line(ok, 5.0, line, sizeof(line)), 0);
	assert_string_equal(line, "v 1.2.3");
	assert_int_not_equal(mgw_bench_capture_line(bad, 5.0, line, sizeof(line)), 0);
	assert_string_equal(line, "");
}

static void test_rss_parse(void **state)
{
	(void)state;
	assert_int_equal(mgw_bench_status_rss_kib(
		"Name:\tmcpgw\nVmPeak:\t  9999 kB\nVmRSS:\t   12345 kB\n"), 12345);
	assert_int_equal(mgw_bench_status_rss_kib("Name:\tx\nVmRSS:\n"), -1);
	assert_int_equal(mgw_bench_status_rss_kib("Name:\tkthreadd\n"), -1);
	assert_int_equal(mgw_bench_status_rss_kib(""), -1);
}

/* A child holding two more descriptors than a plain sleep is counted
 * with two more; a reaped child has neither RSS nor descriptors. */
static void test_rss_and_fds(void **state)
{
	char *plain[] = { "/bin/sh", "-c", "exec sleep 30", NULL };
	char *more[] = { "/bin/sh", "-c", "exec 7</dev/null 8</dev/null; "
	                 "exec sleep 30", NULL };
	struct mgw_bench_proc a, b;
	long long fa = -1, fb = -1;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_int_equal(mgw_bench_proc_spawn(&a, "a", plain, out, err, 1), 0);
	assert_int_equal(mgw_bench_proc_spawn(&b, "b", more, NULL, NULL, 1), 0);
	/* until both have exec'd sleep (the shell's own descriptors differ) */
	for (int i = 0; i < 200; i++) {
		fa = mgw_bench_proc_fd_count(a.pid);
		fb = mgw_bench_proc_fd_count(b.pid);
		if (fa > 0 && fb == fa + 2)
			break;
		usleep(10000);
	}
	assert_true(fa >= 3);
	assert_int_equal(fb, fa + 2);
	assert_true(mgw_bench_proc_rss_kib(a.pid) > 0);
	assert_int_equal(mgw_bench_proc_stop(&a, SIGKILL, 2.0), 0);
	assert_int_equal(mgw_bench_proc_stop(&b, SIGKILL, 2.0), 0);
	assert_int_equal(mgw_bench_proc_rss_kib(a.pid), -1);
	assert_int_equal(mgw_bench_proc_fd_count(a.pid), -1);
}

static void test_move(void **state)
{
	char *av[] = { "/bin/sh", "-c", "exec sleep 30", NULL };
	struct mgw_bench_proc src, dst;
	pid_t pid;

	(void)state;
	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	assert_int_equal(mgw_bench_proc_spawn(&src, "replacement", av, NULL,
	                                      NULL, 1), 0);
	pid = src.pid;
	mgw_bench_proc_move(&dst, &src);
	assert_int_equal(src.pid, 0);
	assert_int_equal(src.registered, 0);
	assert_int_equal(dst.pid, pid);
	assert_string_equal(dst.role, "replacement");
	assert_int_equal(dst.registered, 1);
	/* the registry now names dst: the teardown stops and reaps it */
	mgw_bench_proc_kill_all();
	assert_int_equal(dst.reaped, 1);
	assert_int_equal(mgw_bench_proc_running(&dst), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listening_and_kill),
		cmocka_unit_test(test_exits_first),
		cmocka_unit_test(test_stop_escalates),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_rss_parse),
		cmocka_unit_test(test_rss_and_fds),
		cmocka_unit_test(test_move),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
