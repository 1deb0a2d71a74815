/* conf_upstreams.c - the "upstreams:" section: groups of servers, their
 * balancer, protocol and TLS, active health checks and passive outlier
 * ejection, with the checks that need several keys at once. */
#include "autoconf.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "core/errors.h"
#include "http/headers.h"
#include "mcp/era.h"
#include "proxy/conf_serve.h"
#include "util/url.h"

static const struct mgw_cfg_enum balancers[] = {
	{"round_robin", MGW_BAL_ROUND_ROBIN},
	{"least_request", MGW_BAL_LEAST_REQUEST},
	{"random", MGW_BAL_RANDOM}, {"hash", MGW_BAL_HASH}, {NULL, 0},
};
static const struct mgw_cfg_enum up_protocols[] = {
	{"http1", MGW_UP_HTTP1}, {"h2c", MGW_UP_H2C}, {"alpn", MGW_UP_ALPN},
	{NULL, 0},
};
static const struct mgw_cfg_enum upstream_auths[] = {
	{"strip", MGW_UPAUTH_STRIP}, {"static", MGW_UPAUTH_STATIC},
	{"passthrough", MGW_UPAUTH_PASSTHROUGH}, {NULL, 0},
};
static const struct mgw_cfg_enum affinities[] = {
	{"none", MGW_AFFINITY_NONE}, {"task", MGW_AFFINITY_TASK}, {NULL, 0},
};
static const struct mgw_cfg_enum tools_probes[] = {
	{"auto", MGW_TOOLS_PROBE_AUTO}, {"true", MGW_TOOLS_PROBE_ON},
	{"false", MGW_TOOLS_PROBE_OFF}, {"yes", MGW_TOOLS_PROBE_ON},
	{"no", MGW_TOOLS_PROBE_OFF}, {"on", MGW_TOOLS_PROBE_ON},
	{"off", MGW_TOOLS_PROBE_OFF}, {NULL, 0},
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
int mgw_conf_check_group_name(const char *s, char *why, size_t whylen)
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

/* ---- sections ---- */

static const struct mgw_cfg_field server_fields[] = {
	{.key = "url", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_server_conf, url), .flags = MGW_CFG_REQUIRED,
	 .check = mgw_cfg_check_url},
	{.key = "weight", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_server_conf, weight), .min = 1, .max = 1000,
	 .def = "1"},
};
const struct mgw_cfg_section mgw_server_conf_section = {
	.size = sizeof(struct mgw_server_conf),
	.fields = server_fields, .nfields = MGW_CFG_COUNT(server_fields),
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
	.fields = header_fields, .nfields = MGW_CFG_COUNT(header_fields),
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
	.fields = health_fields, .nfields = MGW_CFG_COUNT(health_fields),
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
	.fields = outlier_fields, .nfields = MGW_CFG_COUNT(outlier_fields),
	.check = check_outlier,
};

#define U(member) MGW_CFG_AT(struct mgw_upstream_conf, member)
/* "tls:" of a group stores into the group itself. */
static const struct mgw_cfg_field up_tls_fields[] = {
	{.key = "ca_file", .type = MGW_CFG_STRING, U(tls_ca_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_file},
	{.key = "verify", .type = MGW_CFG_BOOL, U(tls_verify), .def = "true"},
	{.key = "sni", .type = MGW_CFG_STRING, U(tls_sni),
	 .check = mgw_cfg_check_nonempty},
};
static const struct mgw_cfg_section up_tls_section = {
	.size = sizeof(struct mgw_upstream_conf),
	.fields = up_tls_fields, .nfields = MGW_CFG_COUNT(up_tls_fields),
};

/* "upstream_credential:" of a group stores into the group itself. */
static const struct mgw_cfg_field up_cred_fields[] = {
	{.key = "file", .type = MGW_CFG_STRING, U(credential_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_file},
	{.key = "env", .type = MGW_CFG_STRING, U(credential_env),
	 .check = mgw_cfg_check_nonempty},
};
static const struct mgw_cfg_section up_cred_section = {
	.size = sizeof(struct mgw_upstream_conf),
	.fields = up_cred_fields, .nfields = MGW_CFG_COUNT(up_cred_fields),
};

/* "task_affinity:" of a group stores into its affinity member. */
#define TA(member) MGW_CFG_AT(struct mgw_task_affinity_conf, member)
static const struct mgw_cfg_field ta_fields[] = {
	{.key = "max_tasks", .type = MGW_CFG_INT, TA(max_tasks), .min = 1,
	 .max = 10000000, .def = "100000"},
	{.key = "max_ttl", .type = MGW_CFG_DURATION, TA(max_ttl), .dmin = 1,
	 .dmax = 30 * 86400, .def = "24h"},
	{.key = "redis", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_task_affinity_conf, redis),
	 .sub = &mgw_redis_conf_section},
};
#undef TA
static const struct mgw_cfg_section ta_section = {
	.size = sizeof(struct mgw_task_affinity_conf),
	.fields = ta_fields, .nfields = MGW_CFG_COUNT(ta_fields),
};

static int check_upstream(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                          void *obj);

static const struct mgw_cfg_field upstream_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING, U(name),
	 .flags = MGW_CFG_REQUIRED, .check = mgw_conf_check_group_name},
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
	{.key = "max_queue", .type = MGW_CFG_INT, U(max_queue),
	 .min = 1, .max = 1000000, .def = "1024"},
	{.key = "servers", .type = MGW_CFG_LIST,
	 .off = offsetof(struct mgw_upstream_conf, servers),
	 .aux = offsetof(struct mgw_upstream_conf, n_servers),
	 .flags = MGW_CFG_REQUIRED, .sub = &mgw_server_conf_section},
	{.key = "health", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_upstream_conf, health),
	 .sub = &health_section},
	{.key = "outlier", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_upstream_conf, outlier),
	 .sub = &outlier_section},
	{.key = "upstream_auth", .type = MGW_CFG_ENUM, U(upstream_auth),
	 .enums = upstream_auths, .def = "strip"},
	{.key = "upstream_credential", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &up_cred_section},
	{.key = "tools_probe", .type = MGW_CFG_ENUM, U(tools_probe),
	 .enums = tools_probes, .def = "auto"},
	{.key = "tools_ttl", .type = MGW_CFG_DURATION, U(tools_ttl),
	 .dmin = 2, .dmax = 86400, .def = "10m"},
	{.key = "affinity", .type = MGW_CFG_ENUM, U(affinity.mode),
	 .enums = affinities, .def = "none"},
	{.key = "task_affinity", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_upstream_conf, affinity),
	 .sub = &ta_section},
};
#undef U
const struct mgw_cfg_section mgw_upstream_conf_section = {
	.size = sizeof(struct mgw_upstream_conf),
	.fields = upstream_fields, .nfields = MGW_CFG_COUNT(upstream_fields),
	.check = check_upstream,
};

/* ---- cross-field checks ---- */

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

/* static needs one credential source, the other modes none (a
 * credential that would silently go unused is a mistake); the value is
 * read now, so check-config and a reload fail on a missing file or
 * variable.  The value is never put in a message. */
static int check_upstream_auth(struct mgw_cfg_ctx *c,
                               const struct mgw_cfg_scope *sc,
                               const struct mgw_upstream_conf *u)
{
	const struct mgw_cfg_node *at = mgw_cfg_scope_value(sc, "upstream_auth");
	const struct mgw_cfg_node *cred =
		mgw_cfg_scope_value(sc, "upstream_credential");
	char why[256];
	char *v = NULL;

	if (u->upstream_auth != MGW_UPAUTH_STATIC) {
		if (cred && (u->credential_file || u->credential_env))
			return mgw_cfg_fail(c, cred, "upstream_credential",
			                    "only used with upstream_auth: static");
		return 0;
	}
	if (!u->credential_file == !u->credential_env)
		return mgw_cfg_fail(c, cred ? cred : at,
		                    cred ? "upstream_credential" : "upstream_auth",
		                    "static needs upstream_credential with "
		                    "exactly one of file or env");
	if (mgw_upstream_credential_load(u, &v, why, sizeof(why)) != 0)
		return mgw_cfg_fail(c, mgw_cfg_map_value(cred, u->credential_file
		                                                ? "file" : "env"),
		                    u->credential_file ? "upstream_credential.file"
		                                       : "upstream_credential.env",
		                    "%s", why);
	mgw_upstream_credential_free(v);
	return 0;
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
	int rc;

	if ((rc = check_upstream_auth(c, sc, u)) != 0)
		return rc;
	if (u->affinity.mode != MGW_AFFINITY_TASK &&
	    mgw_cfg_scope_value(sc, "task_affinity"))
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "task_affinity"),
		                    "task_affinity", "only used with affinity: task");
	if (u->balancer == MGW_BAL_HASH && !u->hash_header)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "balancer"),
		                    "balancer", "hash needs hash_header");
	if (u->n_servers == 0)
		return mgw_cfg_fail(c, list, "servers",
		                    "must list at least one server");
	for (size_t i = 0; i < u->n_servers; i++) {
		struct mgw_url url;
		const struct mgw_cfg_node *at =
			mgw_cfg_map_value(list->kids[i], "url");

		if (mgw_url_parse(u->servers[i].url, &url, NULL, 0) != 0)
			continue; /* cannot happen: mgw_cfg_check_url passed */
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

int mgw_conf_check_affinity(struct mgw_cfg_ctx *c,
                            const struct mgw_cfg_node *upstreams,
                            const struct mgw_serve_conf *s)
{
	char key[64];

	if (s->mode != MGW_MODE_STATEFUL)
		return 0;
	for (size_t i = 0; i < s->n_upstreams; i++) {
		if (s->upstreams[i].affinity.mode != MGW_AFFINITY_TASK)
			continue;
		snprintf(key, sizeof(key), "upstreams[%zu].affinity", i);
		return mgw_cfg_fail(c, upstreams && i < upstreams->n
		                       ? mgw_cfg_map_value(upstreams->kids[i],
		                                           "affinity")
		                       : NULL,
		                    key, "task needs the stateless path (mode: "
		                    "stateless or auto); in mode stateful a "
		                    "session's requests already stay on its "
		                    "replica");
	}
	return 0;
}

/* ---- the static credential ---- */

/* Longest credential accepted (a header value the client layer sends). */
#define CRED_MAX 8192

static int cred_value(char *v, char *why, size_t whylen)
{
	size_t n = strlen(v), i = 0;

	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r' ||
	             v[n - 1] == '\n'))
		v[--n] = '\0';
	while (v[i] == ' ' || v[i] == '\t')
		i++;
	memmove(v, v + i, n - i + 1);
	n -= i;
	if (n == 0) {
		snprintf(why, whylen, "the credential is empty");
		return -1;
	}
	if (n > CRED_MAX || !mgw_header_value_valid(v, n)) {
		snprintf(why, whylen, "the credential is not a valid header value "
		         "(visible ASCII, spaces or tabs, at most %d bytes)",
		         CRED_MAX);
		return -1;
	}
	return 0;
}

static int cred_from_file(const char *path, char **out, char *why,
                          size_t whylen)
{
	char *line = calloc(1, CRED_MAX + 3);
	FILE *f;

	if (!line) {
		snprintf(why, whylen, "out of memory");
		return MGW_ENOMEM;
	}
	f = fopen(path, "re");
	if (!f) {
		snprintf(why, whylen, "cannot read '%.100s': %s", path,
		         strerror(errno));
		goto fail;
	}
	if (!fgets(line, CRED_MAX + 2, f))
		line[0] = '\0';
	fclose(f);
	if (strlen(line) > CRED_MAX && !strchr(line, '\n')) {
		snprintf(why, whylen, "the credential's first line is longer than "
		         "%d bytes", CRED_MAX);
		goto fail;
	}
	if (cred_value(line, why, whylen) != 0)
		goto fail;
	*out = line;
	return 0;
fail:
	mgw_upstream_credential_free(line);
	return MGW_EINVAL;
}

int mgw_upstream_credential_load(const struct mgw_upstream_conf *u, char **out,
                                 char *why, size_t whylen)
{
	const char *e;
	char *v;

	*out = NULL;
	if (u->upstream_auth != MGW_UPAUTH_STATIC)
		return 0;
	if (u->credential_file)
		return cred_from_file(u->credential_file, out, why, whylen);
	e = u->credential_env ? getenv(u->credential_env) : NULL;
	if (!e || !*e) {
		snprintf(why, whylen, "the environment variable %.64s is %s",
		         u->credential_env ? u->credential_env : "?",
		         e ? "empty" : "not set");
		return MGW_EINVAL;
	}
	if (strlen(e) > CRED_MAX + 64 || !(v = strdup(e))) {
		snprintf(why, whylen, "the credential is longer than %d bytes",
		         CRED_MAX);
		return MGW_EINVAL;
	}
	if (cred_value(v, why, whylen) != 0) {
		mgw_upstream_credential_free(v);
		return MGW_EINVAL;
	}
	*out = v;
	return 0;
}

void mgw_upstream_credential_free(char *v)
{
	if (v) {
		OPENSSL_cleanse(v, strlen(v));
		free(v);
	}
}

/* ---- enumerations ---- */

int mgw_config_parse_balancer(const char *s, enum mgw_balancer_conf *out)
{
	int v;

	if (mgw_cfg_enum_lookup(balancers, s, &v) != 0)
		return MGW_EINVAL;
	*out = (enum mgw_balancer_conf)v;
	return 0;
}

const char *mgw_config_balancer_name(enum mgw_balancer_conf v)
{
	return mgw_cfg_enum_name(balancers, (int)v);
}
