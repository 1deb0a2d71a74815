/* config_cmd.h - the command line of "mcpgw check-config", with the
 * checks themselves supplied by the caller: core knows no section, and
 * load scenarios belong to the load client. */
#ifndef MGW_CORE_CONFIG_CMD_H
#define MGW_CORE_CONFIG_CMD_H

#include <stddef.h>

/* Each check validates the file path; on success it prints its summary on
 * stdout unless quiet and returns 0.  Otherwise it returns MGW_ENOMEM
 * (exit 1) or another negative MGW_E* (exit 2) with the one-line message
 * to print on stderr in err. */
typedef int (*mgw_check_file_fn)(const char *path, int quiet, char *err,
                                 size_t errlen);

struct mgw_check_config_ops {
	mgw_check_file_fn config;   /* -c FILE: a serve/backend configuration */
	mgw_check_file_fn scenario; /* -s FILE: a `mcpgw load` scenario */
};

/* Parses the arguments after "check-config" (argv[0] is the subcommand),
 * runs the check they ask for and returns the exit code (MGW_EXIT_*). */
int mgw_check_config_run(int argc, char **argv,
                         const struct mgw_check_config_ops *ops);

#endif
