/* config.c - the mcpgw configuration schema and the public loading API.
 *
 * The schema is a set of section tables (see cfgschema-t.h); to add a
 * section, add its struct to config-t.h, a field table here and one entry
 * in root_fields.  Cross-field rules live in the sections' check hooks. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfgschema.h"
#include "core/cfgtree.h"
#include "core/config.h"
#include "core/errors.h"
#include "util/parse.h"

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
#define KiB 1024LL
#define MiB (1024LL * KiB)
#define GiB (1024LL * MiB)

/* ---- enumerations (shared with the command-line parsers) ---- */

static const struct mgw_cfg_enum log_levels[] = {
	{"error", MGW_LOG_ERROR}, {"warn", MGW_LOG_WARN},
	{"info", MGW_LOG_INFO},   {"debug", MGW_LOG_DEBUG}, {NULL, 0},
};
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
/* Widely used servers answer 400 for a lost session, the spec says 404. */
static const struct mgw_cfg_enum lost_statuses[] = {
	{"404", 404}, {"400", 400}, {NULL, 0},
};

/* ---- string checks ---- */

static int check_hostport(const char *s, char *why, size_t whylen)
{
	char host[256];
	uint16_t port;

	if (mgw_parse_hostport(s, host, sizeof(host), &port) == 0)
		return 0;
	snprintf(why, whylen, "'%.60s' is not HOST:PORT, [IPV6]:PORT or :PORT",
	         s);
	return -1;
}

static int check_nonempty(const char *s, char *why, size_t whylen)
{
	if (*s)
		return 0;
	snprintf(why, whylen, "must not be empty");
	return -1;
}

/* Replica ids end up in logs and tool results: keep them one visible word. */
static int check_id(const char *s, char *why, size_t whylen)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++) {
		if (s[i] <= 0x20 || s[i] >= 0x7f) {
			snprintf(why, whylen, "must be visible ASCII without spaces");
			return -1;
		}
	}
	if (n >= 1 && n <= 128)
		return 0;
	snprintf(why, whylen, "must be 1 to 128 characters long");
	return -1;
}

static int check_path(const char *s, char *why, size_t whylen)
{
	if (s[0] != '/' || strlen(s) > 1024) {
		snprintf(why, whylen, "must start with '/' (at most 1024 bytes)");
		return -1;
	}
	for (; *s; s++) {
		if (*s <= 0x20 || *s >= 0x7f || *s == '?' || *s == '#') {
			snprintf(why, whylen,
			         "must be visible ASCII without '?', '#' or spaces");
			return -1;
		}
	}
	return 0;
}

static int check_redis_url(const char *s, char *why, size_t whylen)
{
	if ((strncmp(s, "redis://", 8) == 0 && s[8]) ||
	    (strncmp(s, "unix:", 5) == 0 && s[5]))
		return 0;
	snprintf(why, whylen, "must be redis://HOST[:PORT][/DB] or unix:PATH");
	return -1;
}

/* The key file is read when the backend starts; a typo should fail
 * check-config rather than the first handle.  O_NONBLOCK: opening a FIFO
 * must not hang the check (it then fails as "not a regular file"). */
static int check_key_file(const char *s, char *why, size_t whylen)
{
	struct stat st;
	int fd = open(s, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		snprintf(why, whylen, "cannot read '%.100s': %s", s, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "'%.100s' is not a regular file", s);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* ---- sections ---- */

static const struct mgw_cfg_field log_fields[] = {
	{.key = "level", .type = MGW_CFG_ENUM,
	 MGW_CFG_AT(struct mgw_config, log_level), .enums = log_levels,
	 .def = "info"},
};
static const struct mgw_cfg_section log_section = {
	.size = sizeof(struct mgw_config),
	.fields = log_fields, .nfields = NFIELDS(log_fields),
};

/* "tls:" stores into the listener itself (tls_cert, tls_key). */
static const struct mgw_cfg_field tls_fields[] = {
	{.key = "cert", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_listener_conf, tls_cert),
	 .flags = MGW_CFG_REQUIRED, .check = check_nonempty},
	{.key = "key", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_listener_conf, tls_key),
	 .flags = MGW_CFG_REQUIRED, .check = check_nonempty},
};
static const struct mgw_cfg_section tls_section = {
	.size = sizeof(struct mgw_listener_conf),
	.fields = tls_fields, .nfields = NFIELDS(tls_fields),
};

static const struct mgw_cfg_field listener_fields[] = {
	{.key = "address", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_listener_conf, address),
	 .flags = MGW_CFG_REQUIRED, .check = check_hostport},
	{.key = "tls", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &tls_section},
};
static const struct mgw_cfg_section listener_section = {
	.size = sizeof(struct mgw_listener_conf),
	.fields = listener_fields, .nfields = NFIELDS(listener_fields),
};

static void limits_init(void *obj)
{
	mgw_http_limits_default(obj);
}

static const struct mgw_cfg_field limits_fields[] = {
	{.key = "max_header_bytes", .type = MGW_CFG_SIZE,
	 MGW_CFG_AT(struct mgw_http_limits, max_header_bytes),
	 .min = 256, .max = 16 * MiB},
	{.key = "max_headers", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_http_limits, max_headers),
	 .min = 1, .max = 10000},
	{.key = "max_uri_bytes", .type = MGW_CFG_SIZE,
	 MGW_CFG_AT(struct mgw_http_limits, max_uri),
	 .min = 16, .max = 1 * MiB},
	{.key = "max_body_bytes", .type = MGW_CFG_SIZE,
	 MGW_CFG_AT(struct mgw_http_limits, max_body),
	 .min = 1, .max = 1 * GiB},
	{.key = "max_concurrent_streams", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_http_limits, max_streams),
	 .min = 1, .max = 1000000},
	{.key = "max_connections", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_http_limits, max_connections),
	 .min = 1, .max = 10000000},
	{.key = "write_watermark", .type = MGW_CFG_SIZE,
	 MGW_CFG_AT(struct mgw_http_limits, write_high_watermark),
	 .min = 1 * KiB, .max = 1 * GiB},
};
static const struct mgw_cfg_section limits_section = {
	.size = sizeof(struct mgw_http_limits),
	.fields = limits_fields, .nfields = NFIELDS(limits_fields),
	.init = limits_init,
};

/* "timeouts:" mixes HTTP limits and process-wide values, so it stores
 * into mgw_config itself through nested member offsets. */
#define TIMEOUT(k, member)                                                \
	{.key = k, .type = MGW_CFG_DURATION,                              \
	 MGW_CFG_AT(struct mgw_config, limits.member),                    \
	 .dmin = 0.001, .dmax = 86400}
static const struct mgw_cfg_field timeouts_fields[] = {
	TIMEOUT("header", header_timeout),
	TIMEOUT("body", body_timeout),
	TIMEOUT("idle", idle_timeout),
	TIMEOUT("write", write_timeout),
	{.key = "shutdown", .type = MGW_CFG_DURATION,
	 MGW_CFG_AT(struct mgw_config, shutdown_timeout),
	 .dmin = 0, .dmax = 3600, .def = "10s"},
};
#undef TIMEOUT
static const struct mgw_cfg_section timeouts_section = {
	.size = sizeof(struct mgw_config),
	.fields = timeouts_fields, .nfields = NFIELDS(timeouts_fields),
};

#define B(member) MGW_CFG_AT(struct mgw_backend_conf, member)
static const struct mgw_cfg_field backend_fields[] = {
	{.key = "era", .type = MGW_CFG_ENUM, B(era), .enums = eras,
	 .def = "dual"},
	{.key = "state", .type = MGW_CFG_ENUM, B(state), .enums = states,
	 .def = "memory"},
	{.key = "redis", .type = MGW_CFG_STRING, B(redis_url),
	 .def = "redis://127.0.0.1:6379", .check = check_redis_url},
	{.key = "key_file", .type = MGW_CFG_STRING, B(key_file),
	 .check = check_key_file},
	{.key = "sse", .type = MGW_CFG_ENUM, B(sse), .enums = sse_modes,
	 .def = "never"},
	{.key = "delay_ms", .type = MGW_CFG_INT, B(delay_ms),
	 .min = 0, .max = 600000, .def = "0"},
	{.key = "id", .type = MGW_CFG_STRING, B(id), .check = check_id},
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
	{.key = "path", .type = MGW_CFG_STRING, B(path), .def = "/mcp",
	 .check = check_path},
};
#undef B
static const struct mgw_cfg_section backend_section = {
	.size = sizeof(struct mgw_backend_conf),
	.fields = backend_fields, .nfields = NFIELDS(backend_fields),
};

static int check_root(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                      void *obj);

static const struct mgw_cfg_field root_fields[] = {
	{.key = "log", .type = MGW_CFG_SECTION, .off = 0, .sub = &log_section},
	{.key = "listeners", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_config, listeners),
	 .aux = offsetof(struct mgw_config, n_listeners),
	 .sub = &listener_section},
	{.key = "limits", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_config, limits), .sub = &limits_section},
	{.key = "timeouts", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &timeouts_section},
	{.key = "backend", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_config, backend),
	 .aux = offsetof(struct mgw_config, has_backend),
	 .flags = MGW_CFG_PRESENCE, .sub = &backend_section},
};
static const struct mgw_cfg_section root_section = {
	.size = sizeof(struct mgw_config),
	.fields = root_fields, .nfields = NFIELDS(root_fields),
	.check = check_root,
};

/* ---- cross-field checks ---- */

/* Value of key in a mapping node, or the mapping itself when absent. */
static const struct mgw_cfg_node *map_value(const struct mgw_cfg_node *map,
                                            const char *key)
{
	for (size_t i = 0; map->kind == MGW_CFG_MAP && i + 1 < map->n; i += 2)
		if (strcmp(map->kids[i]->text, key) == 0)
			return map->kids[i + 1];
	return map;
}

static int same_address(const char *a, const char *b)
{
	char ha[256], hb[256];
	uint16_t pa, pb;

	if (mgw_parse_hostport(a, ha, sizeof(ha), &pa) != 0 ||
	    mgw_parse_hostport(b, hb, sizeof(hb), &pb) != 0)
		return 0;
	return pa != 0 && pa == pb && strcmp(ha, hb) == 0;
}

/* Two listeners on one fixed address would fail at bind time, long after
 * check-config said "ok".  Port 0 asks for a fresh port each time. */
static int check_root(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                      void *obj)
{
	const struct mgw_config *cfg = obj;
	const struct mgw_cfg_node *list = mgw_cfg_scope_value(sc, "listeners");
	char key[64];

	for (size_t i = 1; i < cfg->n_listeners; i++) {
		for (size_t j = 0; j < i; j++) {
			if (!same_address(cfg->listeners[i].address,
			                  cfg->listeners[j].address))
				continue;
			snprintf(key, sizeof(key), "listeners[%zu].address", i);
			return mgw_cfg_fail(c, map_value(list->kids[i], "address"),
			                    key, "same address as listeners[%zu]", j);
		}
	}
	return 0;
}

/* ---- public API ---- */

struct mgw_config *mgw_config_defaults(void)
{
	struct mgw_config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->source = strdup("<defaults>");
	if (!c->source) {
		free(c);
		return NULL;
	}
	mgw_cfg_defaults(&root_section, c);
	return c;
}

void mgw_config_free(struct mgw_config *c)
{
	if (!c)
		return;
	mgw_cfg_release(&root_section, c);
	free(c->source);
	free(c);
}

static struct mgw_config *fail_plain(char *err, size_t errlen,
                                     const char *name, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", name, msg);
	return NULL;
}

struct mgw_config *mgw_config_load_string(const char *name, const char *text,
                                          size_t len, char *err, size_t errlen)
{
	struct mgw_cfg_ctx ctx = {.name = name, .err = err, .errlen = errlen};
	struct mgw_cfg_node *root = NULL;
	struct mgw_config *c = NULL;

	if (mgw_cfg_tree_parse(name, text, len, &root, err, errlen) != 0)
		goto fail;
	c = mgw_config_defaults();
	if (!c) {
		fail_plain(err, errlen, name, "out of memory");
		goto fail;
	}
	free(c->source);
	c->source = strdup(name);
	if (!c->source) {
		fail_plain(err, errlen, name, "out of memory");
		goto fail;
	}
	if (root && mgw_cfg_apply(&ctx, &root_section, c, root) != 0)
		goto fail;
	mgw_cfg_tree_free(root);
	return c;
fail:
	mgw_cfg_tree_free(root);
	mgw_config_free(c);
	return NULL;
}

/* Reads at most MGW_CFG_MAX_BYTES + 1 bytes so that a file growing while
 * it is read is still caught by the size limit.  O_NONBLOCK keeps a FIFO
 * given by mistake from blocking the open. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t cap = MGW_CFG_MAX_BYTES + 1, used = 0;
	struct stat st;
	char *buf = NULL, msg[256];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		snprintf(msg, sizeof(msg), "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, sizeof(msg), "not a regular file");
		goto fail;
	}
	if ((unsigned long long)st.st_size > MGW_CFG_MAX_BYTES) {
		snprintf(msg, sizeof(msg), "file too large (%lld bytes, the limit is %zu)",
		         (long long)st.st_size, MGW_CFG_MAX_BYTES);
		goto fail;
	}
	buf = malloc(cap);
	if (!buf) {
		snprintf(msg, sizeof(msg), "out of memory");
		goto fail;
	}
	while (used < cap && (r = read(fd, buf + used, cap - used)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(msg, sizeof(msg), "read failed: %s", strerror(errno));
			goto fail;
		}
		used += (size_t)r;
	}
	close(fd);
	*len = used;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	fail_plain(err, errlen, path, msg);
	return NULL;
}

struct mgw_config *mgw_config_load(const char *path, char *err, size_t errlen)
{
	struct mgw_config *c;
	size_t len = 0;
	char *text = read_file(path, &len, err, errlen);

	if (!text)
		return NULL;
	c = mgw_config_load_string(path, text, len, err, errlen);
	free(text);
	return c;
}

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
