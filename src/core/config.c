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
#include "http/headers.h"
#include "mcp/era.h"
#include "util/parse.h"
#include "util/redis_url.h"
#include "util/url.h"

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
static const struct mgw_cfg_enum stats_access[] = {
	{"loopback", MGW_STATS_LOOPBACK}, {"any", MGW_STATS_ANY},
	{"off", MGW_STATS_OFF},           {NULL, 0},
};
/* Widely used servers answer 400 for a lost session, the spec says 404. */
static const struct mgw_cfg_enum lost_statuses[] = {
	{"404", 404}, {"400", 400}, {NULL, 0},
};

static const struct mgw_cfg_enum modes[] = {
	{"stateless", MGW_MODE_STATELESS}, {"stateful", MGW_MODE_STATEFUL},
	{"auto", MGW_MODE_AUTO}, {NULL, 0},
};
static const struct mgw_cfg_enum balancers[] = {
	{"round_robin", MGW_BAL_ROUND_ROBIN},
	{"least_request", MGW_BAL_LEAST_REQUEST},
	{"random", MGW_BAL_RANDOM}, {"hash", MGW_BAL_HASH}, {NULL, 0},
};
static const struct mgw_cfg_enum up_protocols[] = {
	{"http1", MGW_UP_HTTP1}, {"h2c", MGW_UP_H2C}, {"alpn", MGW_UP_ALPN},
	{NULL, 0},
};
static const struct mgw_cfg_enum probe_types[] = {
	{"http", MGW_PROBE_HTTP}, {"tcp", MGW_PROBE_TCP}, {NULL, 0},
};

/* The default active probe: what a modern client sends first.  The
 * prober mirrors MCP-Protocol-Version and Mcp-Method from it. */
const char mgw_config_default_probe_body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":\"mcpgw-health\","
	"\"method\":\"server/discover\",\"params\":{\"_meta\":{"
	"\"io.modelcontextprotocol/protocolVersion\":\"" MGW_MCP_MODERN_VERSION
	"\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";

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
	return check_path(buf, why, whylen);
}

/* A probe target may carry a query ("/healthz?full=1"). */
static int check_probe_path(const char *s, char *why, size_t whylen)
{
	if (s[0] != '/' || strlen(s) > 1024) {
		snprintf(why, whylen, "must start with '/' (at most 1024 bytes)");
		return -1;
	}
	for (; *s; s++) {
		if (*s <= 0x20 || *s >= 0x7f || *s == '#') {
			snprintf(why, whylen,
			         "must be visible ASCII without '#' or spaces");
			return -1;
		}
	}
	return 0;
}

/* Group names appear in routes, logs ("group/host:port") and metrics. */
static int check_group_name(const char *s, char *why, size_t whylen)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		      ch == '.')) {
			snprintf(why, whylen,
			         "must be letters, digits, '-', '_' or '.'");
			return -1;
		}
	}
	if (n >= 1 && n <= 64)
		return 0;
	snprintf(why, whylen, "must be 1 to 64 characters long");
	return -1;
}

static int check_token(const char *s, char *why, size_t whylen)
{
	if (mgw_header_name_valid(s, strlen(s)) && strlen(s) <= 256)
		return 0;
	snprintf(why, whylen, "'%.60s' is not a valid header name / token", s);
	return -1;
}

static int check_header_value(const char *s, char *why, size_t whylen)
{
	if (mgw_header_value_valid(s, strlen(s)) && strlen(s) <= 8192)
		return 0;
	snprintf(why, whylen, "must be visible ASCII, spaces or tabs");
	return -1;
}

static int check_url(const char *s, char *why, size_t whylen)
{
	struct mgw_url u;
	char reason[64];

	if (mgw_url_parse(s, &u, reason, sizeof(reason)) == 0)
		return 0;
	snprintf(why, whylen, "'%.60s' %.60s", s, reason);
	return -1;
}

static int check_redis_url(const char *s, char *why, size_t whylen)
{
	char err[256];

	/* the connection's own parser, so that check-config finds what
	 * serve would refuse (its message shows no password) */
	if (mgw_redis_url_check(s, NULL, 0, err, sizeof(err)) == 0)
		return 0;
	snprintf(why, whylen, "%s", err);
	return -1;
}

/* The key file (and an upstream CA file) is read at startup; a typo should fail
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
	{.key = "access", .type = MGW_CFG_BOOL,
	 MGW_CFG_AT(struct mgw_config, log_access), .def = "false"},
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

/* ---- "mcpgw serve": upstream groups, routes, proxy policy ---- */

static const struct mgw_cfg_field server_fields[] = {
	{.key = "url", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_server_conf, url), .flags = MGW_CFG_REQUIRED,
	 .check = check_url},
	{.key = "weight", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_server_conf, weight), .min = 1, .max = 1000,
	 .def = "1"},
};
static const struct mgw_cfg_section server_section = {
	.size = sizeof(struct mgw_server_conf),
	.fields = server_fields, .nfields = NFIELDS(server_fields),
};

static const struct mgw_cfg_field header_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_header_conf, name), .flags = MGW_CFG_REQUIRED,
	 .check = check_token},
	{.key = "value", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_header_conf, value), .flags = MGW_CFG_REQUIRED,
	 .check = check_header_value},
};
static const struct mgw_cfg_section header_section = {
	.size = sizeof(struct mgw_header_conf),
	.fields = header_fields, .nfields = NFIELDS(header_fields),
};

static int check_health(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                        void *obj);

#define H(member) MGW_CFG_AT(struct mgw_health_conf, member)
static const struct mgw_cfg_field health_fields[] = {
	{.key = "enabled", .type = MGW_CFG_BOOL, H(enabled), .def = "true"},
	{.key = "type", .type = MGW_CFG_ENUM, H(type), .enums = probe_types,
	 .def = "http"},
	{.key = "interval", .type = MGW_CFG_DURATION, H(interval),
	 .dmin = 0.01, .dmax = 3600, .def = "2s"},
	{.key = "timeout", .type = MGW_CFG_DURATION, H(timeout),
	 .dmin = 0.001, .dmax = 3600, .def = "1s"},
	{.key = "rise", .type = MGW_CFG_INT, H(rise), .min = 1, .max = 1000,
	 .def = "2"},
	{.key = "fall", .type = MGW_CFG_INT, H(fall), .min = 1, .max = 1000,
	 .def = "3"},
	{.key = "method", .type = MGW_CFG_STRING, H(method), .def = "POST",
	 .check = check_token},
	{.key = "path", .type = MGW_CFG_STRING, H(path),
	 .check = check_probe_path},
	{.key = "body", .type = MGW_CFG_STRING, H(body),
	 .def = mgw_config_default_probe_body},
	{.key = "headers", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_health_conf, headers),
	 .aux = offsetof(struct mgw_health_conf, n_headers),
	 .sub = &header_section},
	{.key = "expect_status", .type = MGW_CFG_INT, H(expect_status),
	 .min = 100, .max = 599, .def = "200"},
};
#undef H
static const struct mgw_cfg_section health_section = {
	.size = sizeof(struct mgw_health_conf),
	.fields = health_fields, .nfields = NFIELDS(health_fields),
	.check = check_health,
};

static int check_outlier(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                         void *obj);

#define O(member) MGW_CFG_AT(struct mgw_outlier_conf, member)
static const struct mgw_cfg_field outlier_fields[] = {
	{.key = "consecutive_connect_failures", .type = MGW_CFG_INT,
	 O(consecutive_connect_failures), .min = 0, .max = 100000, .def = "3"},
	{.key = "consecutive_5xx", .type = MGW_CFG_INT, O(consecutive_5xx),
	 .min = 0, .max = 100000, .def = "5"},
	{.key = "base_ejection", .type = MGW_CFG_DURATION, O(base_ejection),
	 .dmin = 0.001, .dmax = 86400, .def = "5s"},
	{.key = "max_ejection", .type = MGW_CFG_DURATION, O(max_ejection),
	 .dmin = 0.001, .dmax = 86400, .def = "60s"},
};
#undef O
static const struct mgw_cfg_section outlier_section = {
	.size = sizeof(struct mgw_outlier_conf),
	.fields = outlier_fields, .nfields = NFIELDS(outlier_fields),
	.check = check_outlier,
};

#define U(member) MGW_CFG_AT(struct mgw_upstream_conf, member)
/* "tls:" of a group stores into the group itself. */
static const struct mgw_cfg_field up_tls_fields[] = {
	{.key = "ca_file", .type = MGW_CFG_STRING, U(tls_ca_file),
	 .check = check_key_file},
	{.key = "verify", .type = MGW_CFG_BOOL, U(tls_verify), .def = "true"},
	{.key = "sni", .type = MGW_CFG_STRING, U(tls_sni),
	 .check = check_nonempty},
};
static const struct mgw_cfg_section up_tls_section = {
	.size = sizeof(struct mgw_upstream_conf),
	.fields = up_tls_fields, .nfields = NFIELDS(up_tls_fields),
};

static int check_upstream(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                          void *obj);

static const struct mgw_cfg_field upstream_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING, U(name),
	 .flags = MGW_CFG_REQUIRED, .check = check_group_name},
	{.key = "balancer", .type = MGW_CFG_ENUM, U(balancer),
	 .enums = balancers, .def = "round_robin"},
	{.key = "hash_header", .type = MGW_CFG_STRING, U(hash_header),
	 .check = check_token},
	{.key = "protocol", .type = MGW_CFG_ENUM, U(protocol),
	 .enums = up_protocols, .def = "http1"},
	{.key = "tls", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &up_tls_section},
	{.key = "max_connections", .type = MGW_CFG_INT, U(max_connections),
	 .min = 1, .max = 1000000, .def = "256"},
	{.key = "max_idle", .type = MGW_CFG_INT, U(max_idle),
	 .min = 0, .max = 1000000, .def = "256"},
	{.key = "servers", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_upstream_conf, servers),
	 .aux = offsetof(struct mgw_upstream_conf, n_servers),
	 .flags = MGW_CFG_REQUIRED, .sub = &server_section},
	{.key = "health", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_upstream_conf, health),
	 .sub = &health_section},
	{.key = "outlier", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_upstream_conf, outlier),
	 .sub = &outlier_section},
};
#undef U
static const struct mgw_cfg_section upstream_section = {
	.size = sizeof(struct mgw_upstream_conf),
	.fields = upstream_fields, .nfields = NFIELDS(upstream_fields),
	.check = check_upstream,
};

/* ---- "sessions:" and the routes' stateful keys (issue 4) ---- */

static const struct mgw_cfg_enum session_stores[] = {
	{"memory", MGW_SESSION_STORE_MEMORY},
	{"sealed", MGW_SESSION_STORE_SEALED},
	{"redis", MGW_SESSION_STORE_REDIS}, {NULL, 0},
};
static const struct mgw_cfg_enum route_session_stores[] = {
	{"default", MGW_SESSION_STORE_DEFAULT},
	{"memory", MGW_SESSION_STORE_MEMORY},
	{"sealed", MGW_SESSION_STORE_SEALED},
	{"redis", MGW_SESSION_STORE_REDIS}, {NULL, 0},
};
static const struct mgw_cfg_enum replays[] = {
	{"safe", MGW_REPLAY_SAFE}, {"always", MGW_REPLAY_ALWAYS}, {NULL, 0},
};

/* Largest initialize body a sealed token may carry: the token rides in a
 * request header on every request, and header limits of 16-32 KiB are
 * common (the token is 4/3 of the body plus ~100 bytes). */
#define SEALED_INIT_MAX (16 * KiB)
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

static int check_key_prefix(const char *s, char *why, size_t whylen)
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

#define SR(member) MGW_CFG_AT(struct mgw_session_redis_conf, member)
static const struct mgw_cfg_field session_redis_fields[] = {
	{.key = "url", .type = MGW_CFG_STRING, SR(url),
	 .def = "redis://127.0.0.1:6379", .check = check_redis_url},
	{.key = "cache_size", .type = MGW_CFG_INT, SR(cache_size),
	 .min = 1, .max = 100000000, .def = "10000"},
	{.key = "cache_ttl", .type = MGW_CFG_DURATION, SR(cache_ttl),
	 .dmin = 0, .dmax = 86400, .def = "30s"},
	{.key = "timeout", .type = MGW_CFG_DURATION, SR(timeout),
	 .dmin = 0.001, .dmax = 600, .def = "1s"},
	{.key = "key_prefix", .type = MGW_CFG_STRING, SR(key_prefix),
	 .def = "mcpgw:session:", .check = check_key_prefix},
};
#undef SR
static const struct mgw_cfg_section session_redis_section = {
	.size = sizeof(struct mgw_session_redis_conf),
	.fields = session_redis_fields, .nfields = NFIELDS(session_redis_fields),
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
	.fields = lost_session_fields, .nfields = NFIELDS(lost_session_fields),
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
	 .min = 64 * KiB, .max = 1024 * GiB, .def = "256MiB"},
	{.key = "max_initialize_bytes", .type = MGW_CFG_SIZE,
	 SS(max_initialize_bytes), .min = 64, .max = 16 * MiB,
	 .def = "64KiB"},
	{.key = "key_file", .type = MGW_CFG_STRING, SS(key_file),
	 .check = check_key_file},
	{.key = "bind_principal", .type = MGW_CFG_BOOL, SS(bind_principal),
	 .def = "false"},
	{.key = "max_repin_attempts", .type = MGW_CFG_INT,
	 SS(max_repin_attempts), .min = 0, .max = 10, .def = "2"},
	{.key = "redis", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_sessions_conf, redis),
	 .sub = &session_redis_section},
	{.key = "lost_session", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_sessions_conf, lost_session),
	 .sub = &lost_session_section},
};
#undef SS
static const struct mgw_cfg_section sessions_section = {
	.size = sizeof(struct mgw_sessions_conf),
	.fields = sessions_fields, .nfields = NFIELDS(sessions_fields),
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

#define R(member) MGW_CFG_AT(struct mgw_route_conf, member)
static const struct mgw_cfg_field match_fields[] = {
	{.key = "path", .type = MGW_CFG_STRING, R(match_path),
	 .check = check_match_path},
	{.key = "mcp_method", .type = MGW_CFG_STRING, R(match_mcp_method),
	 .check = check_nonempty},
	{.key = "mcp_name", .type = MGW_CFG_STRING, R(match_mcp_name),
	 .check = check_nonempty},
};
static const struct mgw_cfg_section match_section = {
	.size = sizeof(struct mgw_route_conf),
	.fields = match_fields, .nfields = NFIELDS(match_fields),
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
	.fields = route_timeout_fields, .nfields = NFIELDS(route_timeout_fields),
};

static const struct mgw_cfg_field route_fields[] = {
	{.key = "match", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &match_section},
	{.key = "upstream", .type = MGW_CFG_STRING, R(upstream),
	 .flags = MGW_CFG_REQUIRED, .check = check_group_name},
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
};
#undef R
static const struct mgw_cfg_section route_section = {
	.size = sizeof(struct mgw_route_conf),
	.fields = route_fields, .nfields = NFIELDS(route_fields),
};

/* The proxy-wide sections store into mgw_config through nested offsets,
 * like "timeouts:". */
#define S(member) MGW_CFG_AT(struct mgw_config, serve.member)
static const struct mgw_cfg_field retry_budget_fields[] = {
	{.key = "ratio", .type = MGW_CFG_NUMBER, S(retry_budget_ratio),
	 .dmin = 0, .dmax = 10, .def = "0.2"},
	{.key = "min_per_second", .type = MGW_CFG_INT, S(retry_budget_min),
	 .min = 0, .max = 1000000, .def = "10"},
};
static const struct mgw_cfg_section retry_budget_section = {
	.size = sizeof(struct mgw_config),
	.fields = retry_budget_fields, .nfields = NFIELDS(retry_budget_fields),
};

static const struct mgw_cfg_field forwarded_fields[] = {
	{.key = "trust_client", .type = MGW_CFG_BOOL, S(trust_forwarded),
	 .def = "false"},
	{.key = "add", .type = MGW_CFG_BOOL, S(add_forwarded), .def = "true"},
};
static const struct mgw_cfg_section forwarded_section = {
	.size = sizeof(struct mgw_config),
	.fields = forwarded_fields, .nfields = NFIELDS(forwarded_fields),
};

static const struct mgw_cfg_field mcp_fields[] = {
	{.key = "max_json_depth", .type = MGW_CFG_INT, S(max_json_depth),
	 .min = 1, .max = 1000, .def = "64"},
};
static const struct mgw_cfg_section mcp_section = {
	.size = sizeof(struct mgw_config),
	.fields = mcp_fields, .nfields = NFIELDS(mcp_fields),
};

static const struct mgw_cfg_field admin_fields[] = {
	{.key = "stats", .type = MGW_CFG_ENUM, S(stats), .enums = stats_access,
	 .def = "loopback"},
};
static const struct mgw_cfg_section admin_section = {
	.size = sizeof(struct mgw_config),
	.fields = admin_fields, .nfields = NFIELDS(admin_fields),
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
	{.key = "mode", .type = MGW_CFG_ENUM, S(mode), .enums = modes,
	 .def = "stateless"},
	{.key = "workers", .type = MGW_CFG_INT, S(workers), .min = 0,
	 .max = 1024, .def = "0"},
	{.key = "upstreams", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_config, serve.upstreams),
	 .aux = offsetof(struct mgw_config, serve.n_upstreams),
	 .sub = &upstream_section},
	{.key = "routes", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_config, serve.routes),
	 .aux = offsetof(struct mgw_config, serve.n_routes),
	 .sub = &route_section},
	{.key = "retry_budget", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &retry_budget_section},
	{.key = "forwarded", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &forwarded_section},
	{.key = "mcp", .type = MGW_CFG_SECTION, .off = 0, .sub = &mcp_section},
	{.key = "admin", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &admin_section},
	{.key = "sessions", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_config, serve.sessions),
	 .sub = &sessions_section},
};
#undef S
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


/* A probe body only makes sense with POST (or PUT...): a file that sets
 * "method: GET" and no body means "no body", not the default POST one. */
static int check_health(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                        void *obj)
{
	struct mgw_health_conf *h = obj;
	char *empty;

	if (mgw_cfg_scope_value(sc, "body") || strcmp(h->method, "POST") == 0)
		return 0;
	empty = strdup("");
	if (!empty) {
		mgw_cfg_fail(c, sc->map, NULL, "out of memory");
		return MGW_ENOMEM;
	}
	free(h->body);
	h->body = empty;
	return 0;
}

static int check_outlier(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                         void *obj)
{
	const struct mgw_outlier_conf *o = obj;
	const struct mgw_cfg_node *at = mgw_cfg_scope_value(sc, "max_ejection");

	if (o->max_ejection >= o->base_ejection)
		return 0;
	if (at)
		return mgw_cfg_fail(c, at, "max_ejection",
		                    "must not be below base_ejection (%gs)",
		                    o->base_ejection);
	return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "base_ejection"),
	                    "base_ejection",
	                    "must not exceed max_ejection (%gs)", o->max_ejection);
}

/* https with HTTP/1.1 is HTTP/1.1 over TLS; alpn negotiates h2 or
 * http/1.1 and therefore needs TLS; h2c is cleartext HTTP/2 by
 * definition.  A group speaks one protocol, so these hold per server. */
static int check_upstream(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                          void *obj)
{
	const struct mgw_upstream_conf *u = obj;
	const struct mgw_cfg_node *list = mgw_cfg_scope_value(sc, "servers");
	const struct mgw_cfg_node *proto = mgw_cfg_scope_value(sc, "protocol");
	char key[64];

	if (u->balancer == MGW_BAL_HASH && !u->hash_header)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "balancer"),
		                    "balancer", "hash needs hash_header");
	if (u->n_servers == 0)
		return mgw_cfg_fail(c, list, "servers",
		                    "must list at least one server");
	for (size_t i = 0; i < u->n_servers; i++) {
		struct mgw_url url;
		const struct mgw_cfg_node *at = map_value(list->kids[i], "url");

		if (mgw_url_parse(u->servers[i].url, &url, NULL, 0) != 0)
			continue; /* cannot happen: check_url passed */
		snprintf(key, sizeof(key), "servers[%zu].url", i);
		if (url.tls && u->protocol == MGW_UP_H2C)
			return mgw_cfg_fail(c, proto ? proto : at,
			                    proto ? "protocol" : key,
			                    "h2c is cleartext HTTP/2 but servers[%zu] "
			                    "is https (use alpn for HTTP/2 over TLS)", i);
		if (!url.tls && u->protocol == MGW_UP_ALPN)
			return mgw_cfg_fail(c, proto ? proto : at,
			                    proto ? "protocol" : key,
			                    "alpn needs https but servers[%zu] is "
			                    "http (use h2c or http1)", i);
		for (size_t j = 0; j < i; j++) {
			if (strcmp(u->servers[i].url, u->servers[j].url) != 0)
				continue;
			return mgw_cfg_fail(c, at, key, "same URL as servers[%zu]",
			                    j);
		}
	}
	return 0;
}

/* Two listeners on one fixed address would fail at bind time, long after
 * check-config said "ok".  Port 0 asks for a fresh port each time. */
static int check_listeners(struct mgw_cfg_ctx *c,
                           const struct mgw_cfg_scope *sc,
                           const struct mgw_config *cfg)
{
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

static int find_upstream(const struct mgw_serve_conf *s, const char *name)
{
	for (size_t i = 0; i < s->n_upstreams; i++)
		if (strcmp(s->upstreams[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Without routes: one route, every path, to the first group. */
static int default_route(struct mgw_serve_conf *s)
{
	struct mgw_route_conf *r = calloc(1, sizeof(*r));

	if (!r)
		return MGW_ENOMEM;
	mgw_cfg_defaults(&route_section, r);
	r->upstream = strdup(s->upstreams[0].name);
	if (!r->upstream) {
		mgw_cfg_release(&route_section, r);
		free(r);
		return MGW_ENOMEM;
	}
	s->routes = r;
	s->n_routes = 1;
	return 0;
}

static int check_serve(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       struct mgw_config *cfg)
{
	const struct mgw_cfg_node *ups = mgw_cfg_scope_value(sc, "upstreams");
	const struct mgw_cfg_node *routes = mgw_cfg_scope_value(sc, "routes");
	struct mgw_serve_conf *s = &cfg->serve;
	char key[64];

	if (ups && s->n_upstreams == 0)
		return mgw_cfg_fail(c, ups, "upstreams",
		                    "must list at least one upstream group");
	for (size_t i = 1; i < s->n_upstreams; i++) {
		int j = find_upstream(s, s->upstreams[i].name);

		if ((size_t)j == i)
			continue;
		snprintf(key, sizeof(key), "upstreams[%zu].name", i);
		return mgw_cfg_fail(c, map_value(ups->kids[i], "name"), key,
		                    "'%s' is already the name of upstreams[%d]",
		                    s->upstreams[i].name, j);
	}
	if (routes && s->n_routes == 0)
		return mgw_cfg_fail(c, routes, "routes",
		                    "must list at least one route (leave routes "
		                    "out to send every request to the first "
		                    "upstream group)");
	for (size_t i = 0; i < s->n_routes; i++) {
		if (find_upstream(s, s->routes[i].upstream) >= 0)
			continue;
		snprintf(key, sizeof(key), "routes[%zu].upstream", i);
		return mgw_cfg_fail(c, map_value(routes->kids[i], "upstream"), key,
		                    "no upstream group is called '%s'",
		                    s->routes[i].upstream);
	}
	if (!ups)
		return 0;
	cfg->has_serve = 1;
	if (s->n_routes == 0 && default_route(s) != 0) {
		mgw_cfg_fail(c, ups, NULL, "out of memory");
		return MGW_ENOMEM;
	}
	return 0;
}

static int check_root(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                      void *obj)
{
	int rc = check_listeners(c, sc, obj);

	return rc ? rc : check_serve(c, sc, obj);
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

int mgw_config_parse_mode(const char *s, enum mgw_mode_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(modes, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_mode_conf)v;
	return 0;
}

int mgw_config_parse_balancer(const char *s, enum mgw_balancer_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(balancers, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_balancer_conf)v;
	return 0;
}

const char *mgw_config_mode_name(enum mgw_mode_conf v)
{
	return mgw_cfg_enum_name(modes, (int)v);
}

const char *mgw_config_balancer_name(enum mgw_balancer_conf v)
{
	return mgw_cfg_enum_name(balancers, (int)v);
}

/* The list fields of the serve section, to release and rebuild them with
 * the engine's own bookkeeping. */
static const struct mgw_cfg_field *root_field(const char *key)
{
	for (size_t i = 0; i < NFIELDS(root_fields); i++)
		if (strcmp(root_fields[i].key, key) == 0)
			return &root_fields[i];
	abort(); /* a key of this file's own table */
}

/* Frees the upstream groups and routes of c (the engine frees a list
 * field given the struct holding it). */
static void release_serve_lists(struct mgw_config *c)
{
	static const char *const keys[] = {"upstreams", "routes"};
	struct mgw_cfg_section one = {.size = sizeof(struct mgw_config),
	                              .nfields = 1};

	for (size_t i = 0; i < 2; i++) {
		one.fields = root_field(keys[i]);
		mgw_cfg_release(&one, c);
	}
}

int mgw_config_serve_urls(struct mgw_config *c, const char *const *urls,
                          size_t n_urls, char *err, size_t errlen)
{
	struct mgw_serve_conf fresh = {0};
	struct mgw_upstream_conf *u = NULL;
	char why[200];

	if (n_urls == 0) {
		snprintf(err, errlen, "at least one upstream URL is needed");
		return MGW_EINVAL;
	}
	for (size_t i = 0; i < n_urls; i++) {
		if (check_url(urls[i], why, sizeof(why)) != 0) {
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
	u = calloc(1, sizeof(*u));
	if (!u)
		goto nomem;
	fresh.upstreams = u;
	fresh.n_upstreams = 1;
	mgw_cfg_defaults(&upstream_section, u);
	u->name = strdup("default");
	u->servers = calloc(n_urls, sizeof(*u->servers));
	if (!u->name || !u->servers)
		goto nomem;
	for (size_t i = 0; i < n_urls; i++) {
		mgw_cfg_defaults(&server_section, &u->servers[i]);
		u->n_servers = i + 1;
		u->servers[i].url = strdup(urls[i]);
		if (!u->servers[i].url)
			goto nomem;
	}
	if (default_route(&fresh) != 0)
		goto nomem;
	release_serve_lists(c);
	c->serve.upstreams = fresh.upstreams;
	c->serve.n_upstreams = fresh.n_upstreams;
	c->serve.routes = fresh.routes;
	c->serve.n_routes = fresh.n_routes;
	c->has_serve = 1;
	return 0;
nomem:
	{
		struct mgw_config tmp;

		memset(&tmp, 0, sizeof(tmp));
		tmp.serve = fresh;
		release_serve_lists(&tmp);
	}
	snprintf(err, errlen, "out of memory");
	return MGW_ENOMEM;
}
