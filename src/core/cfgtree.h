/* cfgtree.h - read YAML (JSON is a subset libyaml accepts) into a
 * mgw_cfg_node tree, refusing what a configuration has no use for:
 * aliases and anchors (exponential expansion), tags, several documents,
 * non-scalar keys, and inputs beyond the MGW_CFG_MAX_* limits. */
#ifndef MGW_CORE_CFGTREE_H
#define MGW_CORE_CFGTREE_H

#include <stddef.h>

#include "core/cfgtree-t.h"

/* Parses len bytes of text; name is only used in messages.  On success
 * returns 0 and sets *root to the document's root node (NULL for an empty
 * stream); the caller frees it with mgw_cfg_tree_free.  On failure returns
 * MGW_EINVAL (bad input), MGW_ELIMIT (a limit hit) or MGW_ENOMEM and writes
 * "NAME:LINE:COLUMN: message" into err. */
int mgw_cfg_tree_parse(const char *name, const char *text, size_t len,
                       struct mgw_cfg_node **root, char *err, size_t errlen);

/* Frees a tree; NULL is allowed. */
void mgw_cfg_tree_free(struct mgw_cfg_node *n);

/* 1 when n is a plain scalar spelling null ("", "~", "null"). */
int mgw_cfg_node_is_null(const struct mgw_cfg_node *n);

#endif
