/* cli.h - the command-line helpers of mcpgw-bench's commands (the scenes
 * in main.c, `soak` in soak.c): usage errors, option values, the mcpgw
 * binary to run, and the command line and times a report is stamped
 * with. */
#ifndef MGW_BENCH_CLI_H
#define MGW_BENCH_CLI_H

#include <stddef.h>

/* Prints "mcpgw-bench[ CMD]: MESSAGE" and where the options are listed
 * to stderr (cmd NULL: the scenes' command line).  Returns
 * MGW_EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
int mgw_bench_usage_error(const char *cmd, const char *fmt, ...);

/* A duration (seconds, or a number with ms, s, m, h) in (0, 86400] into
 * *out.  Returns 0, else the usage error's exit status. */
int mgw_bench_parse_secs(const char *cmd, const char *flag, const char *v,
                         double *out);

/* An integer in min..max into *out.  Returns 0 or the usage error's exit
 * status. */
int mgw_bench_parse_num(const char *cmd, const char *flag, const char *v,
                        long long min, long long max, long long *out);

/* The mcpgw binary: given (--mcpgw) when not NULL, else $MCPGW, else the
 * sibling of this executable (a build tree or an install prefix, the
 * path written into buf), else "mcpgw" (looked up in PATH). */
const char *mgw_bench_find_mcpgw(const char *given, char *buf, size_t len);

/* Runs `MCPGW version`: 0 when it answers like mcpgw, else an error on
 * stderr (naming --mcpgw) and MGW_EIO. */
int mgw_bench_check_mcpgw(const char *cmd, const char *mcpgw);

/* argv as one shell command line, arguments quoted where the shell would
 * split or expand them (argv[0] shown as "mcpgw-bench"). */
void mgw_bench_command_line(char *buf, size_t len, int argc, char **argv);

/* The UTC time now as 2026-01-02T03:04:05Z. */
void mgw_bench_iso_now(char *buf, size_t len);

/* SIGINT, SIGTERM and SIGHUP set mgw_bench_interrupted (every wait of
 * the bench then returns early and the fleet is stopped); SIGPIPE is
 * ignored (a probe's peer may close first). */
void mgw_bench_catch_signals(void);

#endif
