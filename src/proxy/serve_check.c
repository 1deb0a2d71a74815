/* serve_check.c - what `mcpgw serve` refuses before binding (see
 * serve_check.h). */
#include "autoconf.h"

#include <stdio.h>

#include "conf/config.h"
#include "core/errors.h"
#include "proxy/route.h"
#include "proxy/serve_check.h"
#include "proxy/upstream.h"

int mgw_serve_check(const struct mgw_config *cfg, char *err, size_t errlen)
{
	struct mgw_upstreams *ups;
	struct mgw_routes *routes;

	if (!cfg->has_serve || cfg->serve.n_upstreams == 0) {
		snprintf(err, errlen, "no upstream: give --upstream URL or an "
		         "upstreams: section");
		return MGW_EINVAL;
	}
	ups = mgw_upstreams_new(&cfg->serve, err, errlen);
	if (!ups)
		return MGW_EINVAL;
	routes = mgw_routes_new(&cfg->serve, ups, err, errlen);
	mgw_routes_free(routes);
	mgw_upstreams_free(ups);
	return routes ? 0 : MGW_EINVAL;
}
