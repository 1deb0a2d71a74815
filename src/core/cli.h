/* cli.h - what every mcpgw subcommand's command line shares: usage
 * errors, the getopt loop, repeatable flags, --log-level, -c FILE and the
 * listeners a server is asked for.  Functions named for the command line
 * return 0 or a process exit code (MGW_EXIT_*), having printed the reason,
 * so that a command can return what they return. */
#ifndef MGW_CORE_CLI_H
#define MGW_CORE_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "core/cli-t.h"
#include "core/log.h"

struct mgw_config;
struct mgw_listener_conf;

/* Prints "mcpgw CMD: MESSAGE" and "Try 'mcpgw CMD --help'." on stderr
 * and returns MGW_EXIT_USAGE (2), the exit status of a usage error. */
int mgw_cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints what `mcpgw --version` prints (the version, then the libraries
 * built in) on out: every command's --version.  Returns MGW_EXIT_OK, or
 * MGW_EXIT_RUNTIME when out cannot be written. */
int mgw_cli_version(FILE *out);

/* Runs getopt_long over argv (argv[0] is the subcommand) from the start,
 * with getopt's own messages off, and hands every option to on_opt.
 * shortopts must begin with ':' so that a missing value is told from an
 * unknown option.  A missing value, an unknown option and a leftover
 * operand are usage errors of cmd.  Returns 0, MGW_EXIT_USAGE or what
 * on_opt returned. */
int mgw_cli_parse(const char *cmd, int argc, char **argv,
                  const char *shortopts, const struct option *longopts,
                  mgw_cli_opt_cb on_opt, void *arg);

/* Appends value (borrowed) to the repeatable flag name's list v of *n
 * entries, which holds at most max.  Returns 0, or the usage error "at
 * most MAX NAME options" when it is full. */
int mgw_cli_repeat(const char *cmd, const char **v, size_t *n, size_t max,
                   const char *value, const char *name);

/* Replaces the owned string *dst (freed; may be NULL) with a copy of v.
 * Returns 0 or MGW_ENOMEM (*dst unchanged). */
int mgw_cli_set_str(char **dst, const char *v);

/* Sets the log level from --log-level value, or to fallback when value
 * is NULL.  Returns 0, or the usage error naming the levels (the level is
 * then left as it was). */
int mgw_cli_log_level(const char *cmd, const char *value,
                      enum mgw_log_level fallback);

/* The struct option entries of the options every server command takes
 * (struct mgw_cli_server), for its long options table; its short options
 * are ":c:h". */
#define MGW_CLI_SERVER_OPTIONS                                              \
	{"config", required_argument, NULL, 'c'},                          \
	{"help", no_argument, NULL, 'h'},                                  \
	{"version", no_argument, NULL, MGW_CLI_OPT_VERSION},               \
	{"listen", required_argument, NULL, MGW_CLI_OPT_LISTEN},           \
	{"tls-cert", required_argument, NULL, MGW_CLI_OPT_TLS_CERT},       \
	{"tls-key", required_argument, NULL, MGW_CLI_OPT_TLS_KEY},         \
	{"log-level", required_argument, NULL, MGW_CLI_OPT_LOG_LEVEL}

/* mgw_cli_parse for a server command, with shortopts ":c:h": the
 * options of MGW_CLI_SERVER_OPTIONS (longopts lists them) go into srv,
 * the command's own to on_opt.  Returns 0 or an exit code. */
int mgw_cli_parse_server(const char *cmd, int argc, char **argv,
                         const struct option *longopts,
                         struct mgw_cli_server *srv, mgw_cli_opt_cb on_opt,
                         void *arg);

/* The --listen flag: mgw_cli_repeat into l (at most MGW_CLI_MAX_LISTEN). */
int mgw_cli_listen_add(const char *cmd, struct mgw_cli_listen *l,
                       const char *address);

/* What mgw_cli_listen_specs checks and builds, with the reason in why
 * instead of a printed usage error (for `mcpgw check-config`, which
 * refuses what the servers refuse).  Returns 0 or MGW_EINVAL. */
int mgw_listen_specs(const struct mgw_cli_listen *l,
                     const struct mgw_listener_conf *file, size_t n_file,
                     const char *too_many, struct mgw_listen_spec *out,
                     size_t *n_out, char *why, size_t whylen);

/* The listeners to bind, into out (MGW_CLI_MAX_LISTEN entries): the
 * --listen flags with --tls-cert/--tls-key when any was given (they
 * replace the file's), else the n_file listeners of the file.  Usage
 * errors: --tls-cert without --tls-key (or the reverse), an address that
 * is not HOST:PORT, --tls-cert without --listen, no listener at all, and
 * more than MGW_CLI_MAX_LISTEN in the file: "N listeners" too_many " at
 * most 16", too_many being each command's words (":" for serve, " in the
 * file;" for backend).  Returns 0 (*n_out >= 1) or MGW_EXIT_USAGE. */
int mgw_cli_listen_specs(const char *cmd, const struct mgw_cli_listen *l,
                         const struct mgw_listener_conf *file, size_t n_file,
                         const char *too_many, struct mgw_listen_spec *out,
                         size_t *n_out);

/* The exit code for a negative MGW_E* of a command's set-up whose reason
 * was printed: MGW_EINVAL (the input is wrong) is a usage or
 * configuration error, anything else a runtime failure; 0 stays 0. */
int mgw_cli_exit_code(int err);

#endif
