/* conf_serve.h - the section tables of "mcpgw serve" (conf_upstreams.c,
 * conf_routes.c, conf_serve.c) and the parsers of their enumerations,
 * which the command line shares. */
#ifndef MGW_PROXY_CONF_SERVE_H
#define MGW_PROXY_CONF_SERVE_H

#include <stddef.h>

#include "core/cfgschema-t.h"
#include "proxy/conf_serve-t.h"

/* The top-level keys of serve (mode, workers, upstreams, routes,
 * retry_budget, forwarded, mcp, admin, sessions), relative to struct
 * mgw_serve_conf; its check adds the default route. */
extern const struct mgw_cfg_section mgw_serve_conf_section;

/* One item of "upstreams:" (struct mgw_upstream_conf) and of its
 * "servers:" (struct mgw_server_conf). */
extern const struct mgw_cfg_section mgw_upstream_conf_section;
extern const struct mgw_cfg_section mgw_server_conf_section;

/* One item of "routes:" (struct mgw_route_conf). */
extern const struct mgw_cfg_section mgw_route_conf_section;

/* A route's "rate_limit:" (struct mgw_rate_limit_conf) and the
 * top-level "rate_limits:" (struct mgw_rate_limits_conf), in
 * conf_ratelimit.c; the check that a route with shared: redis has
 * rate_limits.redis.url (routes: the routes' node, may be NULL). */
extern const struct mgw_cfg_section mgw_rate_limit_conf_section;
extern const struct mgw_cfg_section mgw_rate_limits_conf_section;
/* A "redis:" section (struct mgw_redis_conf: url, timeout, sentinels,
 * master_name), in conf_ratelimit.c. */
extern const struct mgw_cfg_section mgw_redis_conf_section;
struct mgw_cfg_ctx;
struct mgw_cfg_node;
int mgw_conf_check_rate_limits(struct mgw_cfg_ctx *c,
                               const struct mgw_cfg_node *routes,
                               const struct mgw_serve_conf *s);

/* affinity: task works on the stateless path: refused in mode stateful,
 * where no request takes it (upstreams: the groups' node, may be
 * NULL). */
int mgw_conf_check_affinity(struct mgw_cfg_ctx *c,
                            const struct mgw_cfg_node *upstreams,
                            const struct mgw_serve_conf *s);

/* A route's "mrtr:" (struct mgw_mrtr_conf) and the top-level
 * "mrtr_guard:" (struct mgw_mrtr_guard_conf), in conf_mrtr.c; the check
 * that a route with shared: redis has a Redis (mrtr_guard.redis.url or
 * rate_limits.redis.url). */
extern const struct mgw_cfg_section mgw_mrtr_conf_section;
extern const struct mgw_cfg_section mgw_mrtr_guard_conf_section;
int mgw_conf_check_mrtr(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *routes,
                        const struct mgw_serve_conf *s);

/* Group names appear in routes, logs ("group/host:port") and metrics:
 * 1 to 64 letters, digits, '-', '_' or '.' (an mgw_cfg_string_check). */
int mgw_conf_check_group_name(const char *s, char *why, size_t whylen);

/* The Authorization value of a group with upstream_auth: static, read
 * now from upstream_credential (the first line of its file, or its
 * environment variable; trimmed, a valid header value) into a malloc'd
 * *out; *out is NULL for the other modes.  Returns 0, or MGW_E* with the
 * reason in why (never the value).  Free with
 * mgw_upstream_credential_free (which wipes it). */
int mgw_upstream_credential_load(const struct mgw_upstream_conf *u, char **out,
                                 char *why, size_t whylen);
void mgw_upstream_credential_free(char *v);

/* Without routes: one route, every path, to the first group (s has at
 * least one).  Returns 0 or MGW_ENOMEM (s unchanged). */
int mgw_serve_conf_default_route(struct mgw_serve_conf *s);

/* Replaces the upstream groups and routes of s by one group "default"
 * (round_robin, every other value at its default) holding urls (weight 1
 * each) and one route sending every path to it; see
 * mgw_config_serve_urls (conf/config.h). */
int mgw_serve_conf_set_urls(struct mgw_serve_conf *s, const char *const *urls,
                            size_t n_urls, char *err, size_t errlen);

/* Parsers of the enumerations shared with command-line flags.
 * Return 0 or MGW_EINVAL. */
int mgw_config_parse_mode(const char *s, enum mgw_mode_conf *out);
int mgw_config_parse_balancer(const char *s, enum mgw_balancer_conf *out);

/* The spelling of each value as the parsers accept it (static strings). */
const char *mgw_config_mode_name(enum mgw_mode_conf v);
const char *mgw_config_balancer_name(enum mgw_balancer_conf v);

/* The built-in default health-check body: a modern server/discover
 * JSON-RPC request (protocol 2026-07-28, empty client capabilities). */
extern const char mgw_config_default_probe_body[];

#endif
