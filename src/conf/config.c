/* config.c - the mcpgw configuration: which module's section sits where
 * in a file and in the snapshot, and the public loading API.
 *
 * Each module declares its own tables (backend/conf_backend.c,
 * http/conf_limits.c, proxy/conf_*.c, session/conf_sessions.c; the
 * listener item and the engine are core's).  This file only places them:
 * the keys common to every command ("log", "listeners", "limits",
 * "timeouts") and "backend" form the first part of the root, the
 * gateway's top-level keys the second.  To add a section, declare its
 * table in its module and give it a field (or a part) here. */
#include "autoconf.h"

#include <stddef.h>
#include <stdio.h>

#include "conf/config.h"
#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "core/config.h"
#include "core/errors.h"
#include "http/conf_limits.h"

/* ---- the sections every command shares ---- */

static const struct mgw_cfg_enum access_formats[] = {
	{"text", MGW_ACCESS_TEXT}, {"json", MGW_ACCESS_JSON}, {NULL, 0},
};

#define C(member) MGW_CFG_AT(struct mgw_config, member)
static const struct mgw_cfg_field log_fields[] = {
	{.key = "level", .type = MGW_CFG_ENUM, C(log_level),
	 .enums = mgw_cfg_log_levels, .def = "info"},
	{.key = "access", .type = MGW_CFG_BOOL, C(log_access), .def = "false"},
	{.key = "access_format", .type = MGW_CFG_ENUM, C(log_access_format),
	 .enums = access_formats, .def = "text"},
	{.key = "access_file", .type = MGW_CFG_STRING, C(log_access_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_log_file},
};
static const struct mgw_cfg_section log_section = {
	.size = sizeof(struct mgw_config),
	.fields = log_fields, .nfields = MGW_CFG_COUNT(log_fields),
};

/* "timeouts:" mixes HTTP limits and process-wide values, so it stores
 * into mgw_config itself through nested member offsets. */
#define TIMEOUT(k, member)                                                \
	{.key = k, .type = MGW_CFG_DURATION, C(limits.member),            \
	 .dmin = 0.001, .dmax = 86400}
static const struct mgw_cfg_field timeouts_fields[] = {
	TIMEOUT("header", header_timeout),
	TIMEOUT("body", body_timeout),
	TIMEOUT("idle", idle_timeout),
	TIMEOUT("write", write_timeout),
	{.key = "shutdown", .type = MGW_CFG_DURATION, C(shutdown_timeout),
	 .dmin = 0, .dmax = 3600, .def = "10s"},
};
#undef TIMEOUT
#undef C
static const struct mgw_cfg_section timeouts_section = {
	.size = sizeof(struct mgw_config),
	.fields = timeouts_fields, .nfields = MGW_CFG_COUNT(timeouts_fields),
};

static int check_common(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                        void *obj)
{
	const struct mgw_config *cfg = obj;

	return mgw_cfg_check_listeners(c, mgw_cfg_scope_value(sc, "listeners"),
	                               cfg->listeners, cfg->n_listeners);
}

static const struct mgw_cfg_field common_fields[] = {
	{.key = "log", .type = MGW_CFG_SECTION, .off = 0, .sub = &log_section},
	{.key = "listeners", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_config, listeners),
	 .aux = offsetof(struct mgw_config, n_listeners),
	 .sub = &mgw_cfg_listener_section},
	{.key = "limits", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_config, limits),
	 .sub = &mgw_http_limits_section},
	{.key = "timeouts", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &timeouts_section},
	{.key = "backend", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_config, backend),
	 .aux = offsetof(struct mgw_config, has_backend),
	 .flags = MGW_CFG_PRESENCE, .sub = &mgw_backend_conf_section},
};
static const struct mgw_cfg_section common_section = {
	.size = sizeof(struct mgw_config),
	.fields = common_fields, .nfields = MGW_CFG_COUNT(common_fields),
	.check = check_common,
};

/* ---- the root ---- */

static const struct mgw_cfg_part parts[] = {
	{.sec = &common_section, .off = 0},
	{.sec = &mgw_serve_conf_section,
	 .off = offsetof(struct mgw_config, serve)},
};

static const struct mgw_cfg_root root = {
	.size = sizeof(struct mgw_config),
	.source_off = offsetof(struct mgw_config, source),
	.parts = parts, .n_parts = MGW_CFG_COUNT(parts),
};

/* A file configures the gateway when it lists upstream groups (the serve
 * check refuses an empty list). */
static struct mgw_config *finish(struct mgw_config *c)
{
	if (c)
		c->has_serve = c->serve.n_upstreams > 0;
	return c;
}

struct mgw_config *mgw_config_defaults(void)
{
	return mgw_cfg_root_defaults(&root);
}

struct mgw_config *mgw_config_load_string(const char *name, const char *text,
                                          size_t len, char *err, size_t errlen)
{
	return finish(mgw_cfg_root_load_string(&root, name, text, len, err,
	                                       errlen));
}

struct mgw_config *mgw_config_load(const char *path, char *err, size_t errlen)
{
	return finish(mgw_cfg_root_load(&root, path, err, errlen));
}

void mgw_config_free(struct mgw_config *c)
{
	mgw_cfg_root_free(&root, c);
}

int mgw_config_serve_urls(struct mgw_config *c, const char *const *urls,
                          size_t n_urls, char *err, size_t errlen)
{
	int rc = mgw_serve_conf_set_urls(&c->serve, urls, n_urls, err, errlen);

	if (rc == 0)
		c->has_serve = 1;
	return rc;
}

void mgw_config_summary(const struct mgw_config *c, FILE *out)
{
	const struct mgw_serve_conf *s = &c->serve;
	size_t servers = 0;

	fprintf(out, "%s: ok\n", c->source);
	fprintf(out, "listeners: %zu", c->n_listeners);
	if (c->has_backend)
		fprintf(out, ", backend: era %s, state %s, sse %s\n",
		        mgw_config_era_name(c->backend.era),
		        mgw_config_state_name(c->backend.state),
		        mgw_config_sse_name(c->backend.sse));
	else
		fprintf(out, ", no backend section\n");
	if (!c->has_serve)
		return;
	for (size_t i = 0; i < s->n_upstreams; i++)
		servers += s->upstreams[i].n_servers;
	fprintf(out, "serve: mode %s, %zu upstream group%s, %zu server%s, "
	        "%zu route%s\n", mgw_config_mode_name(s->mode),
	        s->n_upstreams, s->n_upstreams == 1 ? "" : "s",
	        servers, servers == 1 ? "" : "s", s->n_routes,
	        s->n_routes == 1 ? "" : "s");
}
