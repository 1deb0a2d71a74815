/* cli_config.h - the part of a command's start that needs the whole
 * configuration snapshot (above core/, which only parses the command
 * line: core/cli.h). */
#ifndef MGW_CONF_CLI_CONFIG_H
#define MGW_CONF_CLI_CONFIG_H

#include "conf/config-t.h"
#include "core/cli.h"

/* Loads the configuration file path (-c), or the defaults when path is
 * NULL.  On failure prints "mcpgw CMD: " and the error (FILE:LINE:COLUMN:
 * KEY: message) and returns NULL: the command exits MGW_EXIT_USAGE.  The
 * caller frees the snapshot with mgw_config_free. */
struct mgw_config *mgw_cli_config_load(const char *cmd, const char *path);

/* The start of a server command: parses argv with cmd's options
 * (mgw_cli_parse_server, handing arg to cmd->on_opt); with -h prints
 * cmd->usage on stdout; else loads -c FILE (mgw_cli_config_load).
 * Returns 0 with *cfg set (the caller frees it) to go on, or with *cfg
 * NULL the exit code to return at once: MGW_EXIT_OK after the help,
 * MGW_EXIT_USAGE for a usage or configuration error (printed). */
int mgw_cli_server_begin(const struct mgw_cli_server_cmd *cmd, int argc,
                         char **argv, struct mgw_cli_server *srv, void *arg,
                         struct mgw_config **cfg);

#endif
