/* config-t.h - what core knows of the configuration snapshot: the
 * listener entries every command shares, and the descriptors through which
 * modules contribute their top-level keys.  Core knows no module's keys:
 * the snapshot type itself (struct mgw_config) is assembled above every
 * module, in conf/config-t.h, from the sections the modules declare. */
#ifndef MGW_CORE_CONFIG_T_H
#define MGW_CORE_CONFIG_T_H

#include <stddef.h>

#include "core/cfgschema-t.h"

/* One listener: "listeners: [{address, tls: {cert, key}}]". */
struct mgw_listener_conf {
	char *address;   /* "HOST:PORT" (IPv6 as "[::1]:8080") */
	char *tls_cert;  /* PEM file, NULL for a plain listener */
	char *tls_key;   /* PEM file, NULL for a plain listener */
};

/* One module's keys at the top level of a file: a section whose fields
 * (and check) address the module's own struct, found at off in the root
 * object. */
struct mgw_cfg_part {
	const struct mgw_cfg_section *sec;
	size_t off;
};

/* Upper bound on the parts of one root. */
#define MGW_CFG_MAX_PARTS 16

/* A whole configuration file: the parts whose keys make up its top level
 * (together at most MGW_CFG_MAX_FIELDS keys, each owned by one part),
 * the size of the root object and where it keeps the name of the file it
 * came from (a char *).  Parts are checked in this order. */
struct mgw_cfg_root {
	size_t size;
	size_t source_off;
	const struct mgw_cfg_part *parts;
	size_t n_parts;
};

#endif
