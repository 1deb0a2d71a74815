/* headers-t.h - an ordered HTTP header list (types only). */
#ifndef MGW_HTTP_HEADERS_T_H
#define MGW_HTTP_HEADERS_T_H

#include <stddef.h>

/* One field.  Both strings are NUL-terminated copies owned by the list,
 * in one allocation (name, then value: free name only, through the list's
 * functions); names keep the case they arrived with (HTTP/2 delivers
 * lowercase). */
struct mgw_header {
	char *name;
	char *value;
	size_t name_len;
	size_t value_len;
};

/* Fields in arrival order; duplicates are kept as separate entries. */
struct mgw_headers {
	struct mgw_header *v;
	size_t n;
	size_t cap;
	size_t bytes; /* sum of name_len + value_len, for limits */
};

#endif
