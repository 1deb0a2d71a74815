/* cli_config.c - loading a command's configuration (cli_config.h). */
#include "autoconf.h"

#include <stdio.h>

#include "conf/cli_config.h"
#include "conf/config.h"
#include "core/commands.h"
#include "core/errors.h"

struct mgw_config *mgw_cli_config_load(const char *cmd, const char *path)
{
	struct mgw_config *cfg;
	char err[1024];

	cfg = path ? mgw_config_load(path, err, sizeof(err))
	           : mgw_config_defaults();
	if (!cfg)
		fprintf(stderr, "mcpgw %s: %s\n", cmd, path ? err : "out of memory");
	return cfg;
}

int mgw_cli_server_begin(const struct mgw_cli_server_cmd *cmd, int argc,
                         char **argv, struct mgw_cli_server *srv, void *arg,
                         struct mgw_config **cfg)
{
	int rc;

	*cfg = NULL;
	rc = mgw_cli_parse_server(cmd->name, argc, argv, cmd->longopts, srv,
	                          cmd->on_opt, arg);
	if (rc)
		return rc;
	if (srv->help) {
		cmd->usage(stdout);
		return MGW_EXIT_OK;
	}
	if (srv->version)
		return mgw_cli_version(stdout);
	*cfg = mgw_cli_config_load(cmd->name, srv->config);
	return *cfg ? 0 : MGW_EXIT_USAGE;
}

