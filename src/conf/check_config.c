/* check_config.c - "mcpgw check-config" wired to what it checks: the
 * whole mcpgw configuration (config.c) and load scenarios (the load
 * client's own check); the command line itself is core/config_cmd.c. */
#include "autoconf.h"

#include <stdio.h>

#include "conf/config.h"
#include "core/commands.h"
#include "core/config_cmd.h"
#include "core/errors.h"
#include "load/scenario.h"

static int check_config(const char *path, int quiet, char *err, size_t errlen)
{
	struct mgw_config *c = mgw_config_load(path, err, errlen);

	if (!c)
		return MGW_EINVAL;
	if (!quiet)
		mgw_config_summary(c, stdout);
	mgw_config_free(c);
	return 0;
}

static const struct mgw_check_config_ops ops = {
	.config = check_config,
	.scenario = mgw_load_scenario_check,
};

int mgw_check_config_main(int argc, char **argv)
{
	return mgw_check_config_run(argc, argv, &ops);
}
