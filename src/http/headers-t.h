/* headers-t.h - an ordered HTTP header list (types only). */
#ifndef MGW_HTTP_HEADERS_T_H
#define MGW_HTTP_HEADERS_T_H

#include <stddef.h>

/* One field.  Both strings are NUL-terminated copies owned by the list
 * (in its blocks, name then value; never freed one by one); names keep
 * the case they arrived with (HTTP/2 delivers lowercase). */
struct mgw_header {
	char *name;
	char *value;
	size_t name_len;
	size_t value_len;
};

/* Fields in arrival order; duplicates are kept as separate entries.  The
 * strings live in a chain of blocks the list allocates as it grows (a
 * request's fields usually fit one), not in one allocation per field:
 * three lists per proxied request made that a third of the allocator's
 * calls.  A removed or replaced field's bytes stay until deinit.  The
 * struct may be moved by plain assignment (the blocks are on the heap). */
struct mgw_headers {
	struct mgw_header *v;
	size_t n;
	size_t cap;
	size_t bytes; /* sum of name_len + value_len, for limits */
	char *block;  /* newest block; its first bytes link to the previous */
	size_t block_used, block_cap;
	/* 1 when every field's name is a token and its value field-content,
	 * checked as they were read (the HTTP/1 head readers set it);
	 * cleared by any addition not checked (mgw_headers_add, _set,
	 * _append_value), kept by a clone and a removal.  What writes the
	 * list out skips the checks it vouches for (mgw_resp_field_ok). */
	unsigned checked;
};

#endif
