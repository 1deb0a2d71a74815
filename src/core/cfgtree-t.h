/* cfgtree-t.h - the untyped document tree a configuration file is read
 * into before the schema gives it types.  Every node keeps its 1-based
 * position so that later errors can point at it. */
#ifndef MGW_CORE_CFGTREE_T_H
#define MGW_CORE_CFGTREE_T_H

#include <stddef.h>

/* Limits on the configuration input itself: a config file is trusted
 * more than a request, but a mistaken or hostile file must still not be
 * able to exhaust memory or stack. */
#define MGW_CFG_MAX_BYTES ((size_t)1 << 20) /* file size */
#define MGW_CFG_MAX_DEPTH 32                /* nested mappings/lists */
#define MGW_CFG_MAX_NODES 65536             /* scalars + containers */

enum mgw_cfg_kind {
	MGW_CFG_SCALAR,
	MGW_CFG_MAP,
	MGW_CFG_SEQ,
};

struct mgw_cfg_node {
	enum mgw_cfg_kind kind;
	unsigned line;               /* 1-based position of the node start */
	unsigned col;
	int plain;                   /* scalar written without quotes: only
	                              * plain scalars can be null, booleans
	                              * or numbers */
	char *text;                  /* scalar value, NUL-terminated */
	size_t len;                  /* bytes in text (may hold a NUL) */
	struct mgw_cfg_node **kids;  /* MAP: key, value, key, value...;
	                              * SEQ: the items in order */
	size_t n;                    /* entries used in kids */
	size_t cap;
};

#endif
