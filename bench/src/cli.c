/* cli.c - command-line helpers shared by mcpgw-bench's commands (the
 * scenes' main.c and soak.c), so both speak the same errors and find the
 * same mcpgw. */
#include "autoconf.h"

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/errors.h"
#include "util/parse.h"
#include "bench/src/cli.h"
#include "bench/src/proc.h"

int mgw_bench_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mcpgw-bench%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(mcpgw-bench%s%s --help lists the options)\n",
	        cmd ? " " : "", cmd ? cmd : "");
	return MGW_EXIT_USAGE;
}

int mgw_bench_parse_secs(const char *cmd, const char *flag, const char *v,
                         double *out)
{
	if (mgw_parse_duration(v, out) != 0 || *out <= 0 || *out > 86400)
		return mgw_bench_usage_error(cmd, "%s: '%s' is not a duration "
		                             "(seconds, or a number with ms, s, m, "
		                             "h)", flag, v);
	return 0;
}

int mgw_bench_parse_num(const char *cmd, const char *flag, const char *v,
                        long long min, long long max, long long *out)
{
	if (mgw_parse_int(v, min, max, out) != 0)
		return mgw_bench_usage_error(cmd, "%s: '%s' is not an integer in "
		                             "%lld..%lld", flag, v, min, max);
	return 0;
}

const char *mgw_bench_find_mcpgw(const char *given, char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;

	if (given)
		return given;
	if (getenv("MCPGW") && *getenv("MCPGW"))
		return getenv("MCPGW");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(buf, len, "%s/mcpgw", self) < (int)len &&
			    access(buf, X_OK) == 0)
				return buf;
		}
	}
	return "mcpgw";
}

int mgw_bench_check_mcpgw(const char *cmd, const char *mcpgw)
{
	char *av[] = { (char *)mcpgw, "version", NULL };
	char line[256];

	if (mgw_bench_capture_line(av, 10.0, line, sizeof(line)) == 0 &&
	    strncmp(line, "mcpgw ", 6) == 0)
		return 0;
	fprintf(stderr, "mcpgw-bench%s%s: cannot run '%s version' (build mcpgw, "
	        "or give --mcpgw PATH)\n", cmd ? " " : "", cmd ? cmd : "", mcpgw);
	return MGW_EIO;
}

void mgw_bench_command_line(char *buf, size_t len, int argc, char **argv)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && used + 4 < len; i++) {
		const char *a = i ? argv[i] : "mcpgw-bench";
		int quote = !*a || strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") != NULL;

		if (i)
			buf[used++] = ' ';
		if (quote)
			buf[used++] = '\'';
		for (; *a && used + 6 < len; a++) {
			if (quote && *a == '\'') {
				memcpy(buf + used, "'\\''", 4);
				used += 4;
			} else {
				buf[used++] = *a;
			}
		}
		if (quote)
			buf[used++] = '\'';
		buf[used] = '\0';
	}
}

void mgw_bench_iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void on_signal(int sig)
{
	(void)sig;
	mgw_bench_interrupted = 1;
}

void mgw_bench_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}
