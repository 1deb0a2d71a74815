/* cli.h - what every mcpgw subcommand's command line shares. */
#ifndef MGW_CORE_CLI_H
#define MGW_CORE_CLI_H

/* Prints "mcpgw CMD: MESSAGE" and "Try 'mcpgw CMD --help'." on stderr
 * and returns MGW_EXIT_USAGE (2), the exit status of a usage error. */
int mgw_cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
