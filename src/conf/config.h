/* config.h - load YAML (or JSON) configuration into an immutable mcpgw
 * snapshot (config-t.h).
 *
 * Errors name "FILE:LINE:COLUMN: KEY: message" — unknown keys, wrong types,
 * out-of-range values, duplicate keys, YAML syntax errors.  The sections'
 * own parsers and names (mgw_config_parse_era, mgw_config_mode_name, ...)
 * come with this header. */
#ifndef MGW_CONF_CONFIG_H
#define MGW_CONF_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "backend/conf_backend.h"
#include "conf/config-t.h"
#include "proxy/conf_serve.h"

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

/* Writes what `mcpgw check-config` prints for a valid file: "SOURCE: ok",
 * the listeners and backend line, and a serve line when there is one. */
void mgw_config_summary(const struct mgw_config *c, FILE *out);

#endif
