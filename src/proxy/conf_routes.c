/* conf_routes.c - the "routes:" section: which requests go to which
 * upstream group (first match wins), with their retries, timeouts and the
 * stateful mode's per-route keys. */
#include "autoconf.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "core/errors.h"
#include "proxy/conf_policy.h"
#include "proxy/conf_serve.h"

static const struct mgw_cfg_enum route_session_stores[] = {
	{"default", MGW_SESSION_STORE_DEFAULT},
	{"memory", MGW_SESSION_STORE_MEMORY},
	{"sealed", MGW_SESSION_STORE_SEALED},
	{"redis", MGW_SESSION_STORE_REDIS}, {NULL, 0},
};
static const struct mgw_cfg_enum replays[] = {
	{"safe", MGW_REPLAY_SAFE}, {"always", MGW_REPLAY_ALWAYS}, {NULL, 0},
};

/* ---- string checks ---- */

/* A route's match.path: "*" (any), an exact path, or a prefix ending
 * in '*'. */
static int check_match_path(const char *s, char *why, size_t whylen)
{
	char buf[1100];
	size_t n = strlen(s);

	if (strcmp(s, "*") == 0)
		return 0;
	if (n >= sizeof(buf)) {
		snprintf(why, whylen, "must be at most 1024 bytes");
		return -1;
	}
	memcpy(buf, s, n + 1);
	if (n > 1 && buf[n - 1] == '*')
		buf[n - 1] = '\0';
	if (strchr(buf, '*')) {
		snprintf(why, whylen, "'*' is only allowed at the end");
		return -1;
	}
	return mgw_cfg_check_path(buf, why, whylen);
}

/* ---- sections ---- */

#define R(member) MGW_CFG_AT(struct mgw_route_conf, member)
static const struct mgw_cfg_field match_fields[] = {
	{.key = "path", .type = MGW_CFG_STRING, R(match_path),
	 .check = check_match_path},
	{.key = "mcp_method", .type = MGW_CFG_STRING, R(match_mcp_method),
	 .check = mgw_cfg_check_nonempty},
	{.key = "mcp_name", .type = MGW_CFG_STRING, R(match_mcp_name),
	 .check = mgw_cfg_check_nonempty},
};
static const struct mgw_cfg_section match_section = {
	.size = sizeof(struct mgw_route_conf),
	.fields = match_fields, .nfields = MGW_CFG_COUNT(match_fields),
};

static const struct mgw_cfg_field route_timeout_fields[] = {
	{.key = "connect", .type = MGW_CFG_DURATION, R(connect_timeout),
	 .dmin = 0.001, .dmax = 3600, .def = "2s"},
	{.key = "first_byte", .type = MGW_CFG_DURATION, R(first_byte_timeout),
	 .dmin = 0.001, .dmax = 86400, .def = "30s"},
	{.key = "idle", .type = MGW_CFG_DURATION, R(idle_timeout),
	 .dmin = 0.001, .dmax = 86400, .def = "60s"},
	{.key = "total", .type = MGW_CFG_DURATION, R(total_timeout),
	 .dmin = 0, .dmax = 7 * 86400, .def = "0"},
};
static const struct mgw_cfg_section route_timeout_section = {
	.size = sizeof(struct mgw_route_conf),
	.fields = route_timeout_fields,
	.nfields = MGW_CFG_COUNT(route_timeout_fields),
};

static const struct mgw_cfg_field route_fields[] = {
	{.key = "match", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &match_section},
	{.key = "upstream", .type = MGW_CFG_STRING, R(upstream),
	 .flags = MGW_CFG_REQUIRED, .check = mgw_conf_check_group_name},
	{.key = "validate_headers", .type = MGW_CFG_BOOL, R(validate_headers),
	 .def = "true"},
	{.key = "retries", .type = MGW_CFG_INT, R(retries), .min = 0,
	 .max = 10, .def = "2"},
	{.key = "timeouts", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &route_timeout_section},
	/* stateful mode (issue 4) */
	{.key = "replay", .type = MGW_CFG_ENUM, R(replay), .enums = replays,
	 .def = "safe"},
	{.key = "session_store", .type = MGW_CFG_ENUM, R(session_store),
	 .enums = route_session_stores, .def = "default"},
	/* auth: (doc/security.md) */
	{.key = "auth", .type = MGW_CFG_BOOL, R(auth), .def = "true"},
	{.key = "required_scopes", .type = MGW_CFG_STRLIST,
	 .off = offsetof(struct mgw_route_conf, required_scopes),
	 .aux = offsetof(struct mgw_route_conf, n_required_scopes),
	 .check = mgw_cfg_check_nonempty},
	/* rate limits (issue 15; conf_ratelimit.c) */
	{.key = "rate_limit", .type = MGW_CFG_SECTION, R(rate_limit),
	 .aux = offsetof(struct mgw_route_conf, has_rate_limit),
	 .flags = MGW_CFG_PRESENCE, .sub = &mgw_rate_limit_conf_section},
	/* the requestState guard (issue 18; conf_mrtr.c) */
	{.key = "mrtr", .type = MGW_CFG_SECTION, R(mrtr),
	 .aux = offsetof(struct mgw_route_conf, has_mrtr),
	 .flags = MGW_CFG_PRESENCE, .sub = &mgw_mrtr_conf_section},
	/* tool policy (issue 15, conf_policy.c) */
	MGW_POLICY_FIELDS(struct mgw_route_conf, policy),
	{.key = "policy", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_route_conf, policy_rules),
	 .aux = offsetof(struct mgw_route_conf, n_policy_rules),
	 .sub = &mgw_policy_rule_section},
	{.key = "filter_tools_list", .type = MGW_CFG_BOOL, R(filter_tools_list),
	 .def = "false"},
};
#undef R

static int check_route(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	(void)c;
	return mgw_policy_lists_seen(sc, &((struct mgw_route_conf *)obj)->policy);
}

const struct mgw_cfg_section mgw_route_conf_section = {
	.size = sizeof(struct mgw_route_conf),
	.fields = route_fields, .nfields = MGW_CFG_COUNT(route_fields),
	.check = check_route,
};

/* ---- the default route ---- */

int mgw_serve_conf_default_route(struct mgw_serve_conf *s)
{
	struct mgw_route_conf *r = calloc(1, sizeof(*r));

	if (!r)
		return MGW_ENOMEM;
	mgw_cfg_defaults(&mgw_route_conf_section, r);
	r->upstream = strdup(s->upstreams[0].name);
	if (!r->upstream) {
		mgw_cfg_release(&mgw_route_conf_section, r);
		free(r);
		return MGW_ENOMEM;
	}
	s->routes = r;
	s->n_routes = 1;
	return 0;
}
