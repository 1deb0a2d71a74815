/* config.h - load a YAML (or JSON) file into a root object described by
 * the parts modules contribute (config-t.h), and the sections every
 * command shares (listeners, log levels).
 *
 * Errors name "FILE:LINE:COLUMN: KEY: message" — unknown keys, wrong types,
 * out-of-range values, duplicate keys, YAML syntax errors.  The mcpgw
 * snapshot built on this is in conf/config.h. */
#ifndef MGW_CORE_CONFIG_H
#define MGW_CORE_CONFIG_H

#include <stddef.h>

#include "core/cfgtree-t.h"
#include "core/config-t.h"

/* Returns a new root object (r->size bytes) holding every part's defaults
 * and "<defaults>" as its source, or NULL when out of memory. */
void *mgw_cfg_root_defaults(const struct mgw_cfg_root *r);

/* Parses and validates len bytes of text named name (used in errors and
 * kept as the source).  Returns a new root object, or NULL with one
 * message in err. */
void *mgw_cfg_root_load_string(const struct mgw_cfg_root *r, const char *name,
                               const char *text, size_t len, char *err,
                               size_t errlen);

/* Same as mgw_cfg_root_load_string on the file path (at most
 * MGW_CFG_MAX_BYTES; "PATH: cannot open: ..." and the like in err). */
void *mgw_cfg_root_load(const struct mgw_cfg_root *r, const char *path,
                        char *err, size_t errlen);

/* Frees a root object and what its parts hold; NULL is allowed. */
void mgw_cfg_root_free(const struct mgw_cfg_root *r, void *obj);

/* The item of a "listeners:" list (struct mgw_listener_conf). */
extern const struct mgw_cfg_section mgw_cfg_listener_section;

/* Two listeners on one fixed address would fail at bind time, long after
 * check-config said "ok" (port 0 asks for a fresh port each time).  list
 * is the "listeners" node (NULL when absent).  Returns 0, or MGW_EINVAL
 * after mgw_cfg_fail. */
int mgw_cfg_check_listeners(struct mgw_cfg_ctx *c,
                            const struct mgw_cfg_node *list,
                            const struct mgw_listener_conf *l, size_t n);

/* The spellings of log.level (enum mgw_log_level). */
extern const struct mgw_cfg_enum mgw_cfg_log_levels[];

#endif
