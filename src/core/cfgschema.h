/* cfgschema.h - the table-driven engine that turns a document tree into a
 * typed struct (see cfgschema-t.h for the tables). */
#ifndef MGW_CORE_CFGSCHEMA_H
#define MGW_CORE_CFGSCHEMA_H

#include <stddef.h>

#include "core/cfgschema-t.h"

/* Writes the defaults of sec (its init function, then every field's def,
 * recursing into sub-sections; lists start empty) into obj, which must be
 * zeroed.  A default that does not parse is a bug in a table: abort(). */
void mgw_cfg_defaults(const struct mgw_cfg_section *sec, void *obj);

/* Applies the mapping n to obj (already holding defaults) following sec.
 * n may be a null scalar (an empty section).  Returns 0, or MGW_EINVAL /
 * MGW_ENOMEM with "NAME:LINE:COL: PATH: message" written to c->err; obj
 * then holds partial values and must still be released with
 * mgw_cfg_release. */
int mgw_cfg_apply(struct mgw_cfg_ctx *c, const struct mgw_cfg_section *sec,
                  void *obj, const struct mgw_cfg_node *n);

/* Frees what the engine allocated inside obj (strings, lists), not obj. */
void mgw_cfg_release(const struct mgw_cfg_section *sec, void *obj);

/* 1 when a and b (two objects of sec, filled by the engine) hold the same
 * values in every field sec describes, nested sections and lists
 * included; strings compared by content.  A reload uses it to tell which
 * sections changed. */
int mgw_cfg_equal(const struct mgw_cfg_section *sec, const void *a,
                  const void *b);

/* Reports an error at node at, naming the current key path followed by
 * ".key" when key is not NULL.  Returns MGW_EINVAL. */
int mgw_cfg_fail(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *at,
                 const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The value node of field key in a scope, or NULL when it was absent. */
const struct mgw_cfg_node *mgw_cfg_scope_value(const struct mgw_cfg_scope *sc,
                                               const char *key);

/* The value of key in the mapping map, or map itself when the key is
 * absent (or map is not a mapping): a position to report an error at. */
const struct mgw_cfg_node *mgw_cfg_map_value(const struct mgw_cfg_node *map,
                                             const char *key);

/* Looks s up in an enum table.  Returns 0 and *value, or MGW_EINVAL. */
int mgw_cfg_enum_lookup(const struct mgw_cfg_enum *e, const char *s,
                        int *value);

/* The spelling of value in an enum table, or "?" . */
const char *mgw_cfg_enum_name(const struct mgw_cfg_enum *e, int value);

#endif
