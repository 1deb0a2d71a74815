/* config.h - load YAML (or JSON) configuration into an immutable snapshot.
 *
 * Errors name "FILE:LINE:COLUMN: KEY: message" — unknown keys, wrong types,
 * out-of-range values, duplicate keys, YAML syntax errors. */
#ifndef MGW_CORE_CONFIG_H
#define MGW_CORE_CONFIG_H

#include <stddef.h>

#include "core/config-t.h"

/* Returns a snapshot holding every built-in default (no listeners). */
struct mgw_config *mgw_config_defaults(void);

/* Parses and validates path.  On success returns a new snapshot; on
 * failure returns NULL and writes one message to err. */
struct mgw_config *mgw_config_load(const char *path, char *err, size_t errlen);

/* Same as mgw_config_load on an in-memory document (name used in errors). */
struct mgw_config *mgw_config_load_string(const char *name, const char *text,
                                          size_t len, char *err, size_t errlen);

/* Frees a snapshot; NULL is allowed. */
void mgw_config_free(struct mgw_config *c);

/* Parsers of the enumerations shared with command-line flags.
 * Return 0 or MGW_EINVAL. */
int mgw_config_parse_era(const char *s, enum mgw_era_conf *out);
int mgw_config_parse_state(const char *s, enum mgw_state_conf *out);
int mgw_config_parse_sse(const char *s, enum mgw_sse_conf *out);
int mgw_config_parse_mode(const char *s, enum mgw_mode_conf *out);
int mgw_config_parse_balancer(const char *s, enum mgw_balancer_conf *out);

/* The spelling of each enumeration value as accepted by the parsers above
 * (static strings, for logs and summaries). */
const char *mgw_config_era_name(enum mgw_era_conf v);
const char *mgw_config_state_name(enum mgw_state_conf v);
const char *mgw_config_sse_name(enum mgw_sse_conf v);
const char *mgw_config_mode_name(enum mgw_mode_conf v);
const char *mgw_config_balancer_name(enum mgw_balancer_conf v);

/* For `mcpgw serve --upstream URL ...` without a file: replaces c->serve's
 * upstream groups and routes by one group "default" (round_robin, every
 * other value at its default) holding urls (weight 1 each) and one route
 * sending every path to it, and sets c->has_serve.  The URLs are checked
 * as in a file (scheme, host, port).  Other serve values (mode, workers,
 * retry budget, ...) are kept.  Returns 0, or MGW_EINVAL with "URL:
 * reason" in err (c unchanged), or MGW_ENOMEM.  Call it before the
 * snapshot is shared. */
int mgw_config_serve_urls(struct mgw_config *c, const char *const *urls,
                          size_t n_urls, char *err, size_t errlen);

/* The built-in default health-check body: a modern server/discover
 * JSON-RPC request (protocol 2026-07-28, empty client capabilities). */
extern const char mgw_config_default_probe_body[];

#endif
