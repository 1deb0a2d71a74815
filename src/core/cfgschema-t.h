/* cfgschema-t.h - declarative description of configuration sections.
 *
 * A section is a table of fields; each field names its key, its type, where
 * the value lives in the C struct (offset and size) and its constraints.
 * The engine in cfgschema.c applies defaults, converts and validates a
 * document tree, and frees the result, all from these tables, so a new
 * section (upstreams, routes, ...) is a new table, not new parsing code. */
#ifndef MGW_CORE_CFGSCHEMA_T_H
#define MGW_CORE_CFGSCHEMA_T_H

#include <stddef.h>

#include "core/cfgtree-t.h"

enum mgw_cfg_type {
	MGW_CFG_STRING,   /* char *, owned by the snapshot */
	MGW_CFG_BOOL,     /* int: true/false (also yes/no, on/off) */
	MGW_CFG_INT,      /* any integer type: decimal within [min, max] */
	MGW_CFG_DURATION, /* double seconds: "250ms", "10s", "2m", "1h", "1.5" */
	MGW_CFG_SIZE,     /* any integer type: "4096", "64KiB", "4MiB" */
	MGW_CFG_ENUM,     /* any integer type (or enum): one of enums[] */
	MGW_CFG_SECTION,  /* a mapping described by sub, stored at off */
	MGW_CFG_LIST,     /* a list of mappings described by sub: an array
	                   * pointer at off and its size_t count at aux */
	MGW_CFG_NUMBER,   /* double: a plain decimal number ("0.2", "3")
	                   * within [dmin, dmax] */
	MGW_CFG_STRLIST,  /* a list of strings: a char ** at off and its
	                   * size_t count at aux; check (optional) runs on
	                   * each item */
	MGW_CFG_STRMAP,   /* a mapping of any keys to strings: a char ** at
	                   * off holding key, value, key, value... and its
	                   * size_t count of strings (twice the pairs) at aux;
	                   * check (optional) runs on each value */
};

/* Field flags. */
#define MGW_CFG_REQUIRED 0x1u /* absent key is an error */
#define MGW_CFG_PRESENCE 0x2u /* SECTION: record presence at aux */
#define MGW_CFG_FILE     0x4u /* STRING: a file name; a relative one is
                               * taken from the configuration file's
                               * folder (mgw_cfg_ctx.dir), and the check
                               * and the snapshot get the resolved name */

struct mgw_cfg_enum {
	const char *name;      /* spelling in the file; NULL ends the table */
	int value;
};

struct mgw_cfg_ctx;
struct mgw_cfg_scope;

/* Extra validation of a string value.  Returns 0, or non-zero with a short
 * reason in why ("must start with '/'"). */
typedef int (*mgw_cfg_string_check)(const char *s, char *why, size_t whylen);

/* Defaults that cannot be written as text in the table (e.g. filled by
 * another module's function); runs before the fields' own defaults. */
typedef void (*mgw_cfg_section_init)(void *obj);

/* Cross-field validation, after every field of a section was applied.
 * Reports with mgw_cfg_fail() and returns its result, or returns 0. */
typedef int (*mgw_cfg_section_check)(struct mgw_cfg_ctx *c,
                                     const struct mgw_cfg_scope *sc,
                                     void *obj);

struct mgw_cfg_section;

struct mgw_cfg_field {
	const char *key;
	enum mgw_cfg_type type;
	size_t off;           /* offset of the member in the section's struct */
	size_t size;          /* sizeof that member (integers and enums) */
	size_t aux;           /* LIST, STRLIST: offset of the size_t count;
	                       * SECTION with MGW_CFG_PRESENCE: offset of an
	                       * int set to 1 when the key is present */
	unsigned flags;       /* MGW_CFG_REQUIRED, MGW_CFG_PRESENCE */
	const char *def;      /* default, written as in a file; NULL: none */
	long long min, max;   /* INT and SIZE: inclusive range */
	double dmin, dmax;    /* DURATION: inclusive range in seconds;
	                       * NUMBER: inclusive range */
	const struct mgw_cfg_enum *enums;   /* ENUM */
	const struct mgw_cfg_section *sub;  /* SECTION, LIST */
	mgw_cfg_string_check check;         /* STRING (optional) */
};

struct mgw_cfg_section {
	size_t size;                       /* sizeof the struct (list items) */
	const struct mgw_cfg_field *fields;
	size_t nfields;
	mgw_cfg_section_init init;         /* optional */
	mgw_cfg_section_check check;       /* optional */
};

/* Upper bound on fields per section (the engine tracks them on the stack). */
#define MGW_CFG_MAX_FIELDS 64

/* Where a section's values came from, for cross-field checks. */
struct mgw_cfg_scope {
	const struct mgw_cfg_section *sec;
	const struct mgw_cfg_node *map;    /* the mapping (or null scalar) */
	const struct mgw_cfg_node *val[MGW_CFG_MAX_FIELDS]; /* NULL: absent */
};

/* Error reporting state while a document is applied. */
struct mgw_cfg_ctx {
	const char *name;     /* file name in messages */
	const char *dir;      /* folder of that file, for MGW_CFG_FILE
	                       * values (NULL: names stay as written) */
	char *err;
	size_t errlen;
	char path[256];       /* key path of the value being applied */
	size_t plen;
};

/* Table helpers: where a member lives; how many entries a table has;
 * the binary units sizes are written in. */
#define MGW_CFG_AT(type, member)                                         \
	.off = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define MGW_CFG_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define MGW_CFG_KiB 1024LL
#define MGW_CFG_MiB (1024LL * MGW_CFG_KiB)
#define MGW_CFG_GiB (1024LL * MGW_CFG_MiB)

#endif
