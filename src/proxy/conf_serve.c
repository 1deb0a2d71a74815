/* conf_serve.c - the top-level keys of "mcpgw serve": mode, workers, the
 * lists of upstream groups and routes (conf_upstreams.c, conf_routes.c),
 * the proxy-wide policy sections and "sessions:" (session/
 * conf_sessions.c), with the checks that tie routes to groups. */
#include "autoconf.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/conf_auth.h"
#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "core/errors.h"
#include "proxy/checks.h"
#include "proxy/conf_serve.h"
#include "session/conf_sessions.h"

static const struct mgw_cfg_enum modes[] = {
	{"stateless", MGW_MODE_STATELESS}, {"stateful", MGW_MODE_STATEFUL},
	{"auto", MGW_MODE_AUTO}, {NULL, 0},
};
static const struct mgw_cfg_enum stats_access[] = {
	{"loopback", MGW_STATS_LOOPBACK}, {"any", MGW_STATS_ANY},
	{"off", MGW_STATS_OFF},           {NULL, 0},
};

/* ---- sections ---- */

/* The proxy-wide sections store into mgw_serve_conf itself, like
 * "timeouts:" stores into the root. */
#define S(member) MGW_CFG_AT(struct mgw_serve_conf, member)
static const struct mgw_cfg_field retry_budget_fields[] = {
	{.key = "ratio", .type = MGW_CFG_NUMBER, S(retry_budget_ratio),
	 .dmin = 0, .dmax = 10, .def = "0.2"},
	{.key = "min_per_second", .type = MGW_CFG_INT, S(retry_budget_min),
	 .min = 0, .max = 1000000, .def = "10"},
};
static const struct mgw_cfg_section retry_budget_section = {
	.size = sizeof(struct mgw_serve_conf),
	.fields = retry_budget_fields,
	.nfields = MGW_CFG_COUNT(retry_budget_fields),
};

static const struct mgw_cfg_field forwarded_fields[] = {
	{.key = "trust_client", .type = MGW_CFG_BOOL, S(trust_forwarded),
	 .def = "false"},
	{.key = "add", .type = MGW_CFG_BOOL, S(add_forwarded), .def = "true"},
};
static const struct mgw_cfg_section forwarded_section = {
	.size = sizeof(struct mgw_serve_conf),
	.fields = forwarded_fields, .nfields = MGW_CFG_COUNT(forwarded_fields),
};

static const struct mgw_cfg_field mcp_fields[] = {
	{.key = "max_json_depth", .type = MGW_CFG_INT, S(max_json_depth),
	 .min = 1, .max = 1000, .def = "64"},
	{.key = "metrics_tool_names", .type = MGW_CFG_BOOL,
	 S(metrics_tool_names), .def = "false"},
	{.key = "metrics_tool_names_max", .type = MGW_CFG_INT,
	 S(metrics_tool_names_max), .min = 1, .max = 10000, .def = "100"},
};
static const struct mgw_cfg_section mcp_section = {
	.size = sizeof(struct mgw_serve_conf),
	.fields = mcp_fields, .nfields = MGW_CFG_COUNT(mcp_fields),
};

static int check_admin(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj);

static const struct mgw_cfg_field admin_fields[] = {
	{.key = "stats", .type = MGW_CFG_ENUM, S(stats), .enums = stats_access,
	 .def = "loopback"},
	{.key = "metrics", .type = MGW_CFG_ENUM, S(metrics),
	 .enums = stats_access, .def = "loopback"},
	{.key = "metrics_path", .type = MGW_CFG_STRING, S(metrics_path),
	 .def = "/metrics", .check = mgw_cfg_check_path},
	{.key = "metrics_listener", .type = MGW_CFG_STRING,
	 S(metrics_listener), .check = mgw_cfg_check_hostport},
};
static const struct mgw_cfg_section admin_section = {
	.size = sizeof(struct mgw_serve_conf),
	.fields = admin_fields, .nfields = MGW_CFG_COUNT(admin_fields),
	.check = check_admin,
};

static const struct mgw_cfg_field drain_fields[] = {
	{.key = "delay", .type = MGW_CFG_DURATION, S(drain_delay), .dmin = 0,
	 .dmax = 3600, .def = "0s"},
};
static const struct mgw_cfg_section drain_section = {
	.size = sizeof(struct mgw_serve_conf),
	.fields = drain_fields, .nfields = MGW_CFG_COUNT(drain_fields),
};
/* The metrics path must not hide one of the gateway's own pages. */
static int check_admin(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	static const char *const own[] = {
		"/mcpgw/stats", "/mcpgw/healthz", "/mcpgw/readyz",
	};
	const struct mgw_serve_conf *s = obj;

	for (size_t i = 0; s->metrics_path && i < MGW_CFG_COUNT(own); i++)
		if (strcmp(s->metrics_path, own[i]) == 0)
			return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "metrics_path"),
			                    "metrics_path", "'%s' is the path of "
			                    "another page of the gateway", own[i]);
	return 0;
}

static const struct mgw_cfg_field security_fields[] = {
	{.key = "allowed_origins", .type = MGW_CFG_STRLIST,
	 .off = offsetof(struct mgw_serve_conf, allowed_origins),
	 .aux = offsetof(struct mgw_serve_conf, n_allowed_origins),
	 .check = mgw_origin_entry_check},
};
static const struct mgw_cfg_section security_section = {
	.size = sizeof(struct mgw_serve_conf),
	.fields = security_fields, .nfields = MGW_CFG_COUNT(security_fields),
};

static int check_serve(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj);

static const struct mgw_cfg_field serve_fields[] = {
	{.key = "mode", .type = MGW_CFG_ENUM, S(mode), .enums = modes,
	 .def = "auto"},
	{.key = "workers", .type = MGW_CFG_INT, S(workers), .min = 0,
	 .max = 1024, .def = "0"},
	{.key = "upstreams", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_serve_conf, upstreams),
	 .aux = offsetof(struct mgw_serve_conf, n_upstreams),
	 .sub = &mgw_upstream_conf_section},
	{.key = "routes", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_serve_conf, routes),
	 .aux = offsetof(struct mgw_serve_conf, n_routes),
	 .sub = &mgw_route_conf_section},
	{.key = "retry_budget", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &retry_budget_section},
	{.key = "forwarded", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &forwarded_section},
	{.key = "mcp", .type = MGW_CFG_SECTION, .off = 0, .sub = &mcp_section},
	{.key = "admin", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &admin_section},
	{.key = "sessions", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_serve_conf, sessions),
	 .sub = &mgw_sessions_conf_section},
	{.key = "drain", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &drain_section},
	{.key = "security", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &security_section},
	{.key = "auth", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_serve_conf, auth),
	 .aux = offsetof(struct mgw_serve_conf, auth.enabled),
	 .flags = MGW_CFG_PRESENCE, .sub = &mgw_auth_conf_section},
	{.key = "rate_limits", .type = MGW_CFG_SECTION, S(rate_limits),
	 .sub = &mgw_rate_limits_conf_section},
	{.key = "mrtr_guard", .type = MGW_CFG_SECTION, S(mrtr_guard),
	 .sub = &mgw_mrtr_guard_conf_section},
};
#undef S
const struct mgw_cfg_section mgw_serve_conf_section = {
	.size = sizeof(struct mgw_serve_conf),
	.fields = serve_fields, .nfields = MGW_CFG_COUNT(serve_fields),
	.check = check_serve,
};

/* ---- cross-field checks ---- */

static int find_upstream(const struct mgw_serve_conf *s, const char *name)
{
	for (size_t i = 0; i < s->n_upstreams; i++)
		if (strcmp(s->upstreams[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int check_group_names(struct mgw_cfg_ctx *c,
                             const struct mgw_cfg_node *ups,
                             const struct mgw_serve_conf *s)
{
	char key[64];

	if (ups && s->n_upstreams == 0)
		return mgw_cfg_fail(c, ups, "upstreams",
		                    "must list at least one upstream group");
	for (size_t i = 1; i < s->n_upstreams; i++) {
		int j = find_upstream(s, s->upstreams[i].name);

		if ((size_t)j == i)
			continue;
		snprintf(key, sizeof(key), "upstreams[%zu].name", i);
		return mgw_cfg_fail(c, mgw_cfg_map_value(ups->kids[i], "name"),
		                    key, "'%s' is already the name of "
		                    "upstreams[%d]", s->upstreams[i].name, j);
	}
	return 0;
}

static int check_route_groups(struct mgw_cfg_ctx *c,
                              const struct mgw_cfg_node *routes,
                              const struct mgw_serve_conf *s)
{
	char key[64];

	if (routes && s->n_routes == 0)
		return mgw_cfg_fail(c, routes, "routes",
		                    "must list at least one route (leave routes "
		                    "out to send every request to the first "
		                    "upstream group)");
	for (size_t i = 0; i < s->n_routes; i++) {
		if (find_upstream(s, s->routes[i].upstream) >= 0)
			continue;
		snprintf(key, sizeof(key), "routes[%zu].upstream", i);
		return mgw_cfg_fail(c, mgw_cfg_map_value(routes->kids[i],
		                                         "upstream"),
		                    key, "no upstream group is called '%s'",
		                    s->routes[i].upstream);
	}
	return 0;
}

/* A route's required_scopes need the auth: section. */
static int check_route_scopes(struct mgw_cfg_ctx *c,
                              const struct mgw_cfg_node *routes,
                              const struct mgw_serve_conf *s)
{
	char key[64];

	for (size_t i = 0; !s->auth.enabled && i < s->n_routes; i++) {
		if (s->routes[i].n_required_scopes == 0)
			continue;
		snprintf(key, sizeof(key), "routes[%zu].required_scopes", i);
		return mgw_cfg_fail(c, mgw_cfg_map_value(routes->kids[i],
		                                         "required_scopes"),
		                    key, "needs the auth: section (nothing "
		                    "checks a token without it)");
	}
	return 0;
}

/* Group names are unique, routes name existing groups, and a file with
 * groups but no routes gets the default route. */
static int check_serve(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	const struct mgw_cfg_node *ups = mgw_cfg_scope_value(sc, "upstreams");
	struct mgw_serve_conf *s = obj;
	int rc = check_group_names(c, ups, s);

	for (size_t i = 0; i < sc->sec->nfields; i++)
		s->keys_given |= sc->val[i] != NULL;
	if (rc == 0)
		rc = check_route_groups(c, mgw_cfg_scope_value(sc, "routes"), s);
	if (rc == 0)
		rc = check_route_scopes(c, mgw_cfg_scope_value(sc, "routes"), s);
	if (rc == 0)
		rc = mgw_conf_check_rate_limits(c, mgw_cfg_scope_value(sc, "routes"),
		                                s);
	if (rc == 0)
		rc = mgw_conf_check_mrtr(c, mgw_cfg_scope_value(sc, "routes"), s);
	if (rc == 0)
		rc = mgw_conf_check_affinity(c, ups, s);
	if (rc != 0 || !ups || s->n_routes != 0)
		return rc;
	if (mgw_serve_conf_default_route(s) != 0) {
		mgw_cfg_fail(c, ups, NULL, "out of memory");
		return MGW_ENOMEM;
	}
	return 0;
}

/* ---- groups from the command line ---- */

/* Frees the upstream groups and routes of s (the engine frees a list
 * field given the struct holding it). */
static void release_lists(struct mgw_serve_conf *s)
{
	struct mgw_cfg_section one = {.size = sizeof(struct mgw_serve_conf),
	                              .nfields = 1};

	for (size_t i = 0; i < MGW_CFG_COUNT(serve_fields); i++) {
		if (serve_fields[i].type != MGW_CFG_LIST)
			continue;
		one.fields = &serve_fields[i];
		mgw_cfg_release(&one, s);
	}
}

static int check_urls(const char *const *urls, size_t n_urls, char *err,
                      size_t errlen)
{
	char why[200];

	if (n_urls == 0) {
		snprintf(err, errlen, "at least one upstream URL is needed");
		return MGW_EINVAL;
	}
	for (size_t i = 0; i < n_urls; i++) {
		if (mgw_cfg_check_url(urls[i], why, sizeof(why)) != 0) {
			snprintf(err, errlen, "%s", why);
			return MGW_EINVAL;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(urls[i], urls[j]) == 0) {
				snprintf(err, errlen, "'%.80s' is given twice", urls[i]);
				return MGW_EINVAL;
			}
		}
	}
	return 0;
}

/* One group "default" of urls, and the default route, into fresh. */
static int build_default(struct mgw_serve_conf *fresh, const char *const *urls,
                         size_t n_urls)
{
	struct mgw_upstream_conf *u = calloc(1, sizeof(*u));

	if (!u)
		return MGW_ENOMEM;
	fresh->upstreams = u;
	fresh->n_upstreams = 1;
	mgw_cfg_defaults(&mgw_upstream_conf_section, u);
	u->name = strdup("default");
	u->servers = calloc(n_urls, sizeof(*u->servers));
	if (!u->name || !u->servers)
		return MGW_ENOMEM;
	for (size_t i = 0; i < n_urls; i++) {
		mgw_cfg_defaults(&mgw_server_conf_section, &u->servers[i]);
		u->n_servers = i + 1;
		u->servers[i].url = strdup(urls[i]);
		if (!u->servers[i].url)
			return MGW_ENOMEM;
	}
	return mgw_serve_conf_default_route(fresh);
}

int mgw_serve_conf_set_urls(struct mgw_serve_conf *s, const char *const *urls,
                            size_t n_urls, char *err, size_t errlen)
{
	struct mgw_serve_conf fresh = {0};
	int rc = check_urls(urls, n_urls, err, errlen);

	if (rc != 0)
		return rc;
	if (build_default(&fresh, urls, n_urls) != 0) {
		release_lists(&fresh);
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	release_lists(s);
	s->upstreams = fresh.upstreams;
	s->n_upstreams = fresh.n_upstreams;
	s->routes = fresh.routes;
	s->n_routes = fresh.n_routes;
	return 0;
}

/* ---- enumerations ---- */

int mgw_config_parse_mode(const char *s, enum mgw_mode_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(modes, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_mode_conf)v;
	return 0;
}

const char *mgw_config_mode_name(enum mgw_mode_conf v)
{
	return mgw_cfg_enum_name(modes, (int)v);
}
