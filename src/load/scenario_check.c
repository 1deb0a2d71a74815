/* scenario_check.c - the load client's part of `mcpgw check-config`:
 * validating a scenario file without running it. */
#include "autoconf.h"

#include <stdio.h>

#include "core/errors.h"
#include "load/scenario.h"

int mgw_load_scenario_check(const char *path, int quiet, char *err,
                            size_t errlen)
{
	struct mgw_load_conf *lc = mgw_load_conf_new();
	int rc;

	if (!lc) {
		snprintf(err, errlen, "mcpgw check-config: out of memory");
		return MGW_ENOMEM;
	}
	rc = mgw_load_scenario_load(lc, path, err, errlen);
	mgw_load_conf_free(lc);
	if (rc != 0)
		return MGW_EINVAL;
	if (!quiet)
		printf("%s: ok (load scenario)\n", path);
	return 0;
}
