/* conf_backend.c - the "backend:" section: the reference MCP server's
 * keys, their defaults and bounds (the command line of `mcpgw backend`
 * takes the same values, see cmd.c). */
#include "autoconf.h"

#include <stddef.h>

#include "backend/conf_backend.h"
#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "net/conf_redis.h"
#include "core/errors.h"

static const struct mgw_cfg_enum eras[] = {
	{"legacy", MGW_ERA_LEGACY}, {"modern", MGW_ERA_MODERN},
	{"dual", MGW_ERA_DUAL},     {NULL, 0},
};
static const struct mgw_cfg_enum states[] = {
	{"memory", MGW_STATE_MEMORY}, {"hmac", MGW_STATE_HMAC},
	{"redis", MGW_STATE_REDIS},   {NULL, 0},
};
static const struct mgw_cfg_enum sse_modes[] = {
	{"never", MGW_SSE_NEVER}, {"always", MGW_SSE_ALWAYS}, {NULL, 0},
};
static const struct mgw_cfg_enum rs_modes[] = {
	{"memory", MGW_RS_MEMORY}, {"sealed", MGW_RS_SEALED},
	{"redis", MGW_RS_REDIS},   {NULL, 0},
};
static const struct mgw_cfg_enum task_modes[] = {
	{"memory", MGW_TASKS_MEMORY}, {"redis", MGW_TASKS_REDIS}, {NULL, 0},
};
/* Widely used servers answer 400 for a lost session, the spec says 404. */
static const struct mgw_cfg_enum lost_statuses[] = {
	{"404", 404}, {"400", 400}, {NULL, 0},
};

#define B(member) MGW_CFG_AT(struct mgw_backend_conf, member)
static const struct mgw_cfg_field backend_fields[] = {
	{.key = "era", .type = MGW_CFG_ENUM, B(era), .enums = eras,
	 .def = "dual"},
	{.key = "state", .type = MGW_CFG_ENUM, B(state), .enums = states,
	 .def = "memory"},
	{.key = "redis", .type = MGW_CFG_STRING, B(redis_url),
	 .def = "redis://127.0.0.1:6379", .check = mgw_cfg_check_redis_url},
	{.key = "redis_tls", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_backend_conf, redis_tls),
	 .sub = &mgw_redis_tls_conf_section},
	/* read at startup: a typo fails check-config, not the first handle */
	{.key = "key_file", .type = MGW_CFG_STRING, B(key_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_keyfile},
	{.key = "sse", .type = MGW_CFG_ENUM, B(sse), .enums = sse_modes,
	 .def = "never"},
	{.key = "delay_ms", .type = MGW_CFG_INT, B(delay_ms),
	 .min = 0, .max = 600000, .def = "0"},
	/* replica ids end up in logs and tool results: one visible word */
	{.key = "id", .type = MGW_CFG_STRING, B(id),
	 .check = mgw_cfg_check_word},
	{.key = "lost_session_status", .type = MGW_CFG_ENUM,
	 B(lost_session_status), .enums = lost_statuses, .def = "404"},
	{.key = "session_idle_timeout", .type = MGW_CFG_DURATION,
	 B(session_idle_timeout), .dmin = 0.01, .dmax = 7 * 86400,
	 .def = "30m"},
	{.key = "max_sessions", .type = MGW_CFG_INT, B(max_sessions),
	 .min = 1, .max = 100000000, .def = "100000"},
	{.key = "sse_keepalive", .type = MGW_CFG_DURATION,
	 B(keepalive_interval), .dmin = 0.01, .dmax = 3600, .def = "15s"},
	{.key = "handle_ttl", .type = MGW_CFG_DURATION, B(handle_ttl),
	 .dmin = 0.01, .dmax = 366 * 86400, .def = "1h"},
	{.key = "request_state", .type = MGW_CFG_ENUM, B(request_state),
	 .enums = rs_modes, .def = "memory"},
	{.key = "request_state_ttl", .type = MGW_CFG_DURATION,
	 B(request_state_ttl), .dmin = 1, .dmax = 86400, .def = "10m"},
	{.key = "request_state_bind_principal", .type = MGW_CFG_BOOL,
	 B(request_state_bind_principal), .def = "false"},
	{.key = "request_state_single_use", .type = MGW_CFG_BOOL, B(single_use),
	 .def = "false"},
	{.key = "tasks", .type = MGW_CFG_ENUM, B(tasks), .enums = task_modes,
	 .def = "memory"},
	{.key = "max_tasks", .type = MGW_CFG_INT, B(max_tasks),
	 .min = 1, .max = 10000000, .def = "10000"},
	/* a task must outlive the longest job (slow_job: 60 s) to be read */
	{.key = "task_ttl", .type = MGW_CFG_DURATION, B(task_ttl),
	 .dmin = 1, .dmax = 86400, .def = "5m"},
	{.key = "task_poll_interval", .type = MGW_CFG_DURATION,
	 B(task_poll_interval), .dmin = 0.01, .dmax = 60, .def = "100ms"},
	{.key = "path", .type = MGW_CFG_STRING, B(path), .def = "/mcp",
	 .check = mgw_cfg_check_path},
};
#undef B

/* redis_tls: goes with a rediss:// redis:.  A file without redis: may
 * get its URL from --redis, so that pairing is checked once the flags are
 * known (backend/cmd.c), not here. */
static int check_backend(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                         void *obj)
{
	struct mgw_backend_conf *b = obj;

	if (!mgw_cfg_scope_value(sc, "redis"))
		return 0;
	return mgw_redis_tls_check_url(c, sc, "redis_tls", b->redis_url,
	                               "redis");
}

const struct mgw_cfg_section mgw_backend_conf_section = {
	.size = sizeof(struct mgw_backend_conf),
	.fields = backend_fields, .nfields = MGW_CFG_COUNT(backend_fields),
	.check = check_backend,
};

int mgw_config_parse_era(const char *s, enum mgw_era_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(eras, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_era_conf)v;
	return 0;
}

int mgw_config_parse_state(const char *s, enum mgw_state_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(states, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_state_conf)v;
	return 0;
}

int mgw_config_parse_sse(const char *s, enum mgw_sse_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(sse_modes, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_sse_conf)v;
	return 0;
}

int mgw_config_parse_tasks(const char *s, enum mgw_tasks_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(task_modes, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_tasks_conf)v;
	return 0;
}

const char *mgw_config_tasks_name(enum mgw_tasks_conf v)
{
	return mgw_cfg_enum_name(task_modes, (int)v);
}

const char *mgw_config_era_name(enum mgw_era_conf v)
{
	return mgw_cfg_enum_name(eras, (int)v);
}

const char *mgw_config_state_name(enum mgw_state_conf v)
{
	return mgw_cfg_enum_name(states, (int)v);
}

const char *mgw_config_sse_name(enum mgw_sse_conf v)
{
	return mgw_cfg_enum_name(sse_modes, (int)v);
}
