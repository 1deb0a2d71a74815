/* sep2243.h - SEP-2243 mirrored request headers: MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name and Mcp-Param-*, with the "=?base64?...?=" sentinel
 * for values that are not plain visible ASCII. */
#ifndef MGW_MCP_SEP2243_H
#define MGW_MCP_SEP2243_H

#include <stddef.h>

#include "http/headers-t.h"
#include "mcp/jsonrpc.h"

/* Decodes a header value: a "=?base64?B64?=" sentinel yields the decoded
 * UTF-8 (validated UTF-8, strict base64); any other value is copied as is.
 * Returns a malloc'd NUL-terminated string and *len, or NULL when the
 * sentinel is malformed or the result is not valid UTF-8. */
char *mgw_sep2243_decode(const char *value, size_t vlen, size_t *len);

/* Encodes a value for a header: plain when it is visible ASCII with no
 * leading/trailing space, otherwise the base64 sentinel.  malloc'd. */
char *mgw_sep2243_encode(const char *value, size_t len);

/* One header declared by a tool through x-mcp-header on a parameter. */
struct mgw_sep2243_param {
	const char *header; /* suffix after "Mcp-Param-" (case-insensitive) */
	const char *param;  /* name of the argument in params.arguments */
};

/* Outcome of validation. */
struct mgw_sep2243_verdict {
	int ok;             /* 1 = headers match the body */
	int status;         /* HTTP status to answer when !ok (400) */
	int code;           /* -32020 mismatch/missing, -32022 unsupported version */
	char message[200];  /* human-readable cause naming the header */
};

/* Validates the mirrored headers of a modern request against its body:
 * MCP-Protocol-Version present, equal to _meta protocolVersion and in
 * supported (NULL-terminated; NULL = modern versions); Mcp-Method equal to
 * method; Mcp-Name equal to params.name / params.uri where the method
 * requires it (decoded first); each declared param header equal to its
 * argument (string/number/bool rendered as JSON scalars without quotes).
 * params may be NULL.  Returns 0 and fills *v. */
int mgw_sep2243_validate(const struct mgw_headers *h,
                         const struct mgw_jrpc_msg *m,
                         const char *const *supported,
                         const struct mgw_sep2243_param *params,
                         size_t n_params, struct mgw_sep2243_verdict *v);

#endif
