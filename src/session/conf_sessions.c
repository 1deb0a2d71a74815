/* conf_sessions.c - the "sessions:" section: which store keeps the
 * stateful mode's sessions, their bounds, the Redis store's connection and
 * what an upstream's "lost session" answer looks like. */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "net/conf_redis.h"
#include "core/errors.h"
#include "session/conf_sessions.h"
#include "util/parse.h"

static const struct mgw_cfg_enum session_stores[] = {
	{"memory", MGW_SESSION_STORE_MEMORY},
	{"sealed", MGW_SESSION_STORE_SEALED},
	{"redis", MGW_SESSION_STORE_REDIS}, {NULL, 0},
};

/* Largest initialize body a sealed token may carry: the token rides in a
 * request header on every request, and header limits of 16-32 KiB are
 * common (the token is 4/3 of the body plus ~100 bytes). */
#define SEALED_INIT_MAX (16 * MGW_CFG_KiB)
#define SEALED_INIT_DEFAULT "8KiB"

/* "404,400": HTTP statuses (400..599), comma or space separated. */
static int parse_statuses(const char *s, int *out, size_t max, size_t *n)
{
	*n = 0;
	while (*s) {
		char *end;
		long v;

		while (*s == ',' || *s == ' ')
			s++;
		if (!*s)
			break;
		if (*s < '0' || *s > '9')
			return -1;
		v = strtol(s, &end, 10);
		if (v < 400 || v > 599 || *n == max)
			return -1;
		for (size_t i = 0; i < *n; i++)
			if (out[i] == (int)v)
				return -1;
		out[(*n)++] = (int)v;
		s = end;
		if (*s && *s != ',' && *s != ' ')
			return -1;
	}
	return *n ? 0 : -1;
}

static int check_statuses(const char *s, char *why, size_t whylen)
{
	int tmp[MGW_LOST_STATUS_MAX];
	size_t n;

	if (parse_statuses(s, tmp, MGW_LOST_STATUS_MAX, &n) == 0)
		return 0;
	snprintf(why, whylen, "must list 1 to %d different HTTP statuses "
	         "400..599, comma separated (\"404,400\")", MGW_LOST_STATUS_MAX);
	return -1;
}

#define SR(member) MGW_CFG_AT(struct mgw_session_redis_conf, member)
static const struct mgw_cfg_field session_redis_fields[] = {
	{.key = "url", .type = MGW_CFG_STRING, SR(url),
	 .def = "redis://127.0.0.1:6379", .check = mgw_cfg_check_redis_url},
	{.key = "cache_size", .type = MGW_CFG_INT, SR(cache_size),
	 .min = 1, .max = 100000000, .def = "10000"},
	{.key = "cache_ttl", .type = MGW_CFG_DURATION, SR(cache_ttl),
	 .dmin = 0, .dmax = 86400, .def = "30s"},
	{.key = "timeout", .type = MGW_CFG_DURATION, SR(timeout),
	 .dmin = 0.001, .dmax = 600, .def = "1s"},
	{.key = "key_prefix", .type = MGW_CFG_STRING, SR(key_prefix),
	 .def = "mcpgw:session:", .check = mgw_cfg_check_word},
	{.key = "writeback_rate", .type = MGW_CFG_INT, SR(writeback_rate),
	 .min = 1, .max = 1000000, .def = "2000"},
	{.key = "sentinels", .type = MGW_CFG_STRLIST, SR(sentinels),
	 .aux = offsetof(struct mgw_session_redis_conf, n_sentinels),
	 .check = mgw_cfg_check_sentinel},
	{.key = "master_name", .type = MGW_CFG_STRING, SR(master_name),
	 .check = mgw_cfg_check_word},
	{.key = "tls", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_session_redis_conf, tls),
	 .sub = &mgw_redis_tls_conf_section},
};
#undef SR

/* sentinels and master_name go together. */
static int check_session_redis(struct mgw_cfg_ctx *c,
                               const struct mgw_cfg_scope *sc, void *obj)
{
	struct mgw_session_redis_conf *r = obj;

	if (r->n_sentinels && !r->master_name)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "sentinels"),
		                    "sentinels", "needs master_name");
	if (r->master_name && !r->n_sentinels)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "master_name"),
		                    "master_name", "needs sentinels");
	return mgw_redis_tls_check_url(c, sc, "tls", r->url, "url");
}

static const struct mgw_cfg_section session_redis_section = {
	.size = sizeof(struct mgw_session_redis_conf),
	.fields = session_redis_fields,
	.nfields = MGW_CFG_COUNT(session_redis_fields),
	.check = check_session_redis,
};

static const struct mgw_cfg_enum sealed_tombstones[] = {
	{"local", MGW_TOMBSTONES_LOCAL}, {"redis", MGW_TOMBSTONES_REDIS},
	{NULL, 0},
};
static const struct mgw_cfg_enum tombstone_on_error[] = {
	{"serve", MGW_TOMBSTONE_SERVE}, {"refuse", MGW_TOMBSTONE_REFUSE},
	{NULL, 0},
};

#define SD(member) MGW_CFG_AT(struct mgw_session_sealed_conf, member)
static const struct mgw_cfg_field session_sealed_fields[] = {
	{.key = "tombstones", .type = MGW_CFG_ENUM, SD(tombstones),
	 .enums = sealed_tombstones, .def = "local"},
	{.key = "on_redis_error", .type = MGW_CFG_ENUM, SD(on_redis_error),
	 .enums = tombstone_on_error, .def = "serve"},
};
#undef SD
static const struct mgw_cfg_section session_sealed_section = {
	.size = sizeof(struct mgw_session_sealed_conf),
	.fields = session_sealed_fields,
	.nfields = MGW_CFG_COUNT(session_sealed_fields),
};

static int check_lost_session(struct mgw_cfg_ctx *c,
                              const struct mgw_cfg_scope *sc, void *obj);

/* Defaults never run a section's check: parse the default spelling of
 * statuses here (the check re-parses a spelling from the file). */
static void lost_session_init(void *obj)
{
	struct mgw_lost_session_conf *l = obj;

	if (parse_statuses("404,400", l->status, MGW_LOST_STATUS_MAX,
	                   &l->n_status) != 0)
		abort(); /* a constant of this file */
}

#define SL(member) MGW_CFG_AT(struct mgw_lost_session_conf, member)
static const struct mgw_cfg_field lost_session_fields[] = {
	{.key = "statuses", .type = MGW_CFG_STRING, SL(statuses),
	 .def = "404,400", .check = check_statuses},
	/* Real servers word it "Session not found" (SDK transport, mcpgw
	 * backend) or "No valid session ID provided" (server-everything). */
	{.key = "body_contains", .type = MGW_CFG_STRING, SL(body_contains),
	 .def = "session"},
};
#undef SL
static const struct mgw_cfg_section lost_session_section = {
	.size = sizeof(struct mgw_lost_session_conf),
	.fields = lost_session_fields,
	.nfields = MGW_CFG_COUNT(lost_session_fields),
	.init = lost_session_init, .check = check_lost_session,
};

static int check_sessions(struct mgw_cfg_ctx *c,
                          const struct mgw_cfg_scope *sc, void *obj);

#define SS(member) MGW_CFG_AT(struct mgw_sessions_conf, member)
static const struct mgw_cfg_field sessions_fields[] = {
	{.key = "store", .type = MGW_CFG_ENUM, SS(store),
	 .enums = session_stores, .def = "memory"},
	{.key = "idle_timeout", .type = MGW_CFG_DURATION, SS(idle_timeout),
	 .dmin = 1, .dmax = 30 * 86400, .def = "30m"},
	{.key = "max_lifetime", .type = MGW_CFG_DURATION, SS(max_lifetime),
	 .dmin = 1, .dmax = 366 * 86400, .def = "24h"},
	{.key = "max_sessions", .type = MGW_CFG_INT, SS(max_sessions),
	 .min = 1, .max = 100000000, .def = "100000"},
	{.key = "max_memory", .type = MGW_CFG_SIZE, SS(max_memory),
	 .min = 64 * MGW_CFG_KiB, .max = 1024 * MGW_CFG_GiB, .def = "256MiB"},
	{.key = "max_initialize_bytes", .type = MGW_CFG_SIZE,
	 SS(max_initialize_bytes), .min = 64, .max = 16 * MGW_CFG_MiB,
	 .def = "64KiB"},
	{.key = "key_file", .type = MGW_CFG_STRING, SS(key_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_keyfile},
	{.key = "bind_principal", .type = MGW_CFG_BOOL, SS(bind_principal),
	 .def = "false"},
	{.key = "max_repin_attempts", .type = MGW_CFG_INT,
	 SS(max_repin_attempts), .min = 0, .max = 10, .def = "2"},
	{.key = "redis", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_sessions_conf, redis),
	 .sub = &session_redis_section},
	{.key = "sealed", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_sessions_conf, sealed),
	 .sub = &session_sealed_section},
	{.key = "lost_session", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_sessions_conf, lost_session),
	 .sub = &lost_session_section},
};
#undef SS
const struct mgw_cfg_section mgw_sessions_conf_section = {
	.size = sizeof(struct mgw_sessions_conf),
	.fields = sessions_fields, .nfields = MGW_CFG_COUNT(sessions_fields),
	.check = check_sessions,
};

/* The parsed statuses are kept next to their spelling. */
static int check_lost_session(struct mgw_cfg_ctx *c,
                              const struct mgw_cfg_scope *sc, void *obj)
{
	struct mgw_lost_session_conf *l = obj;

	if (parse_statuses(l->statuses, l->status, MGW_LOST_STATUS_MAX,
	                   &l->n_status) != 0)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "statuses"),
		                    "statuses", "not a list of statuses");
	return 0;
}

/* A sealed token carries the initialize body in every request header:
 * smaller default, hard cap. */
static int check_sessions(struct mgw_cfg_ctx *c,
                          const struct mgw_cfg_scope *sc, void *obj)
{
	struct mgw_sessions_conf *s = obj;
	const struct mgw_cfg_node *at = mgw_cfg_scope_value(sc,
	                                                    "max_initialize_bytes");
	uint64_t def;

	if (s->store != MGW_SESSION_STORE_SEALED)
		return 0;
	if (!at) {
		if (mgw_parse_size(SEALED_INIT_DEFAULT, &def) != 0)
			abort(); /* a constant of this file */
		s->max_initialize_bytes = (size_t)def;
		return 0;
	}
	if (s->max_initialize_bytes > SEALED_INIT_MAX)
		return mgw_cfg_fail(c, at, "max_initialize_bytes",
		                    "at most %lld bytes with the sealed store (the "
		                    "token carries the initialize body in a "
		                    "request header)", SEALED_INIT_MAX);
	return 0;
}
