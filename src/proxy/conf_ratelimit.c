/* conf_ratelimit.c - a route's "rate_limit:" ({rate, burst, key,
 * shared}) and the top-level "rate_limits:" (max_keys, redis.url,
 * redis.timeout) that every route's limit shares; the "redis:" section
 * it shares with mrtr_guard:. */
#include "autoconf.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "net/conf_redis.h"
#include "proxy/conf_serve.h"

static const struct mgw_cfg_enum rl_keys[] = {
	{"principal", MGW_RL_KEY_PRINCIPAL}, {"client", MGW_RL_KEY_CLIENT},
	{"method", MGW_RL_KEY_METHOD},       {"tool", MGW_RL_KEY_TOOL},
	{NULL, 0},
};
static const struct mgw_cfg_enum rl_shared[] = {
	{"none", MGW_RL_SHARED_NONE}, {"redis", MGW_RL_SHARED_REDIS},
	{NULL, 0},
};

/* rate > 0; burst defaults to the rate rounded up. */
static int check_rate_limit(struct mgw_cfg_ctx *c,
                            const struct mgw_cfg_scope *sc, void *obj)
{
	struct mgw_rate_limit_conf *rl = obj;

	if (!(rl->rate > 0))
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "rate"), "rate",
		                    "must be more than 0 (requests per second)");
	if (!mgw_cfg_scope_value(sc, "burst"))
		rl->burst = (uint32_t)ceil(rl->rate);
	return 0;
}

#define RL(member) MGW_CFG_AT(struct mgw_rate_limit_conf, member)
static const struct mgw_cfg_field rate_limit_fields[] = {
	{.key = "rate", .type = MGW_CFG_NUMBER, RL(rate),
	 .flags = MGW_CFG_REQUIRED, .dmin = 0, .dmax = 1000000},
	{.key = "burst", .type = MGW_CFG_INT, RL(burst), .min = 1,
	 .max = 10000000},
	{.key = "key", .type = MGW_CFG_ENUM, RL(key), .enums = rl_keys,
	 .def = "principal"},
	{.key = "shared", .type = MGW_CFG_ENUM, RL(shared), .enums = rl_shared,
	 .def = "none"},
};
#undef RL
const struct mgw_cfg_section mgw_rate_limit_conf_section = {
	.size = sizeof(struct mgw_rate_limit_conf),
	.fields = rate_limit_fields,
	.nfields = MGW_CFG_COUNT(rate_limit_fields),
	.check = check_rate_limit,
};

#define RC(member) MGW_CFG_AT(struct mgw_redis_conf, member)
static const struct mgw_cfg_field redis_fields[] = {
	{.key = "url", .type = MGW_CFG_STRING, RC(url),
	 .check = mgw_cfg_check_redis_url},
	{.key = "timeout", .type = MGW_CFG_DURATION, RC(timeout),
	 .dmin = 0.001, .dmax = 10, .def = "50ms"},
	{.key = "sentinels", .type = MGW_CFG_STRLIST, RC(sentinels),
	 .aux = offsetof(struct mgw_redis_conf, n_sentinels),
	 .check = mgw_cfg_check_sentinel},
	{.key = "master_name", .type = MGW_CFG_STRING, RC(master_name),
	 .check = mgw_cfg_check_word},
	{.key = "tls", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_redis_conf, tls),
	 .sub = &mgw_redis_tls_conf_section},
};
#undef RC
/* sentinels and master_name go together. */
static int check_redis(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	struct mgw_redis_conf *r = obj;

	if (!r->n_sentinels != !r->master_name)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, r->master_name
		                                           ? "master_name"
		                                           : "sentinels"),
		                    r->master_name ? "master_name" : "sentinels",
		                    r->master_name ? "needs sentinels"
		                                   : "needs master_name");
	return mgw_redis_tls_check_url(c, sc, "tls", r->url, "url");
}

const struct mgw_cfg_section mgw_redis_conf_section = {
	.size = sizeof(struct mgw_redis_conf),
	.check = check_redis,
	.fields = redis_fields, .nfields = MGW_CFG_COUNT(redis_fields),
};
#define RS(member) MGW_CFG_AT(struct mgw_rate_limits_conf, member)
static const struct mgw_cfg_field rate_limits_fields[] = {
	{.key = "max_keys", .type = MGW_CFG_INT, RS(max_keys), .min = 16,
	 .max = 100000000, .def = "100000"},
	{.key = "redis", .type = MGW_CFG_SECTION, RS(redis),
	 .sub = &mgw_redis_conf_section},
};
#undef RS
const struct mgw_cfg_section mgw_rate_limits_conf_section = {
	.size = sizeof(struct mgw_rate_limits_conf),
	.fields = rate_limits_fields,
	.nfields = MGW_CFG_COUNT(rate_limits_fields),
};

int mgw_conf_check_rate_limits(struct mgw_cfg_ctx *c,
                               const struct mgw_cfg_node *routes,
                               const struct mgw_serve_conf *s)
{
	char key[64];

	if (s->rate_limits.redis.url)
		return 0;
	for (size_t i = 0; i < s->n_routes; i++) {
		const struct mgw_route_conf *r = &s->routes[i];
		const struct mgw_cfg_node *n = NULL;

		if (!r->has_rate_limit || r->rate_limit.shared != MGW_RL_SHARED_REDIS)
			continue;
		if (routes && i < routes->n) {
			n = mgw_cfg_map_value(routes->kids[i], "rate_limit");
			if (n)
				n = mgw_cfg_map_value(n, "shared");
		}
		snprintf(key, sizeof(key), "routes[%zu].rate_limit.shared", i);
		return mgw_cfg_fail(c, n, key, "redis needs rate_limits.redis.url");
	}
	return 0;
}
