/* conf_mrtr.c - a route's "mrtr:" ({single_use, ttl, shared}: the
 * at-most-once guard for SEP-2322 requestState, check_mrtr.c) and the
 * top-level "mrtr_guard:" (max_states, redis) every route's guard
 * shares. */
#include "autoconf.h"

#include <stddef.h>
#include <stdio.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "proxy/conf_serve.h"

static const struct mgw_cfg_enum mrtr_shared[] = {
	{"none", MGW_MRTR_SHARED_NONE}, {"redis", MGW_MRTR_SHARED_REDIS},
	{NULL, 0},
};

#define M(member) MGW_CFG_AT(struct mgw_mrtr_conf, member)
static const struct mgw_cfg_field mrtr_fields[] = {
	{.key = "single_use", .type = MGW_CFG_BOOL, M(single_use),
	 .flags = MGW_CFG_REQUIRED},
	/* a sealed state's own expiry is unreadable to the gateway: ttl is
	 * the bound, so it must be at least the servers' state lifetime */
	{.key = "ttl", .type = MGW_CFG_DURATION, M(ttl), .dmin = 1,
	 .dmax = 7 * 86400, .def = "10m"},
	{.key = "shared", .type = MGW_CFG_ENUM, M(shared), .enums = mrtr_shared,
	 .def = "none"},
};
#undef M
const struct mgw_cfg_section mgw_mrtr_conf_section = {
	.size = sizeof(struct mgw_mrtr_conf),
	.fields = mrtr_fields, .nfields = MGW_CFG_COUNT(mrtr_fields),
};

#define G(member) MGW_CFG_AT(struct mgw_mrtr_guard_conf, member)
static const struct mgw_cfg_field guard_fields[] = {
	{.key = "max_states", .type = MGW_CFG_INT, G(max_states), .min = 16,
	 .max = 100000000, .def = "100000"},
	{.key = "redis", .type = MGW_CFG_SECTION, G(redis),
	 .sub = &mgw_redis_conf_section},
};
#undef G
const struct mgw_cfg_section mgw_mrtr_guard_conf_section = {
	.size = sizeof(struct mgw_mrtr_guard_conf),
	.fields = guard_fields, .nfields = MGW_CFG_COUNT(guard_fields),
};

int mgw_conf_check_mrtr(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *routes,
                        const struct mgw_serve_conf *s)
{
	char key[64];

	if (s->mrtr_guard.redis.url || s->rate_limits.redis.url)
		return 0;
	for (size_t i = 0; i < s->n_routes; i++) {
		const struct mgw_route_conf *r = &s->routes[i];
		const struct mgw_cfg_node *n = NULL;

		if (!r->has_mrtr || r->mrtr.shared != MGW_MRTR_SHARED_REDIS)
			continue;
		if (routes && i < routes->n) {
			n = mgw_cfg_map_value(routes->kids[i], "mrtr");
			if (n)
				n = mgw_cfg_map_value(n, "shared");
		}
		snprintf(key, sizeof(key), "routes[%zu].mrtr.shared", i);
		return mgw_cfg_fail(c, n, key, "redis needs mrtr_guard.redis.url "
		                    "(or rate_limits.redis.url)");
	}
	return 0;
}
