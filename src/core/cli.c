/* cli.c - what every mcpgw subcommand's command line shares. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/cli.h"
#include "core/errors.h"

int mgw_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mcpgw %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'mcpgw %s --help'.\n", cmd);
	return MGW_EXIT_USAGE;
}
