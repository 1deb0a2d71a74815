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
 * sentinel is malformed or the result is not valid UTF-8.
 * Spec details: the markers are case-sensitive ("=?BASE64?...?=" is a
 * literal value); the base64 is the standard alphabet with padding
 * required ("=?base64?SGVsbG8?=" is malformed); a value needs at least the
 * 11 bytes of both markers to be a sentinel.  A plain (non-sentinel) value
 * is also rejected (NULL) when it holds a byte outside HTAB / 0x20-0x7E,
 * since the spec makes "invalid characters" a validation failure.  The
 * decoded value may contain U+0000; use *len, not strlen. */
char *mgw_sep2243_decode(const char *value, size_t vlen, size_t *len);

/* Encodes a value for a header: plain when it is visible ASCII with no
 * leading/trailing space, otherwise the base64 sentinel.  malloc'd.
 * Per the spec a plain value that itself looks like a sentinel (starts
 * "=?base64?", ends "?=") is encoded too; the empty string stays empty. */
char *mgw_sep2243_encode(const char *value, size_t len);

/* One header declared by a tool through x-mcp-header on a parameter. */
struct mgw_sep2243_param {
	const char *header; /* suffix after "Mcp-Param-" (case-insensitive) */
	const char *param;  /* name of the argument in params.arguments, or a
	                     * JSON Pointer starting with '/' ("/a/b") for a
	                     * nested property (x-mcp-header allows any depth
	                     * along a chain of properties) */
};

/* Outcome of validation. */
struct mgw_sep2243_verdict {
	int ok;             /* 1 = headers match the body */
	int status;         /* HTTP status to answer when !ok (400) */
	int code;           /* -32020 mismatch/missing, -32022 unsupported version */
	char message[200];  /* human-readable cause naming the header */
	char requested[64]; /* for -32022: the version the client asked for */
};

/* Validates the mirrored headers of a modern request against its body:
 * MCP-Protocol-Version present, equal to _meta protocolVersion and in
 * supported (NULL-terminated; NULL = modern versions); Mcp-Method equal to
 * method; Mcp-Name equal to params.name / params.uri where the method
 * requires it (decoded first); each declared param header equal to its
 * argument (string/number/bool rendered as JSON scalars without quotes).
 * params may be NULL.  Returns 0 and fills *v. */
/* Rules beyond the paragraph above, from the 2026-07-28 streamable-http
 * "Request Metadata" / "Server Validation" sections:
 * - header names match case-insensitively, values case-sensitively after
 *   trimming surrounding SP/HTAB; a header sent twice is a mismatch;
 * - a mismatch between header and _meta (including _meta lacking the
 *   version) is -32020 and is checked before support, so -32022 is only
 *   answered when both agree on a version we do not speak (v->requested);
 * - notifications (for which this revision defines no header rules) need
 *   MCP-Protocol-Version; Mcp-Method is checked only when present;
 * - Mcp-Name is required for tools/call, prompts/get and resources/read
 *   requests whose body has the name/uri, and (SEP-2663, the tasks
 *   extension) for tasks/get, tasks/update and tasks/cancel whose body
 *   has params.taskId; sent while the body has none it is a mismatch
 *   (a taskId that is not a string is left to the server's -32602); on
 *   other methods it is ignored;
 * - a declared Mcp-Param-* header must be present when the argument is
 *   present and non-null, and absent otherwise; integers compare
 *   numerically ("42.0" matches 42); values that are objects or arrays
 *   cannot be mirrored and are a mismatch;
 * - m that is not a request or notification yields ok = 0, -32600. */
int mgw_sep2243_validate(const struct mgw_headers *h,
                         const struct mgw_jrpc_msg *m,
                         const char *const *supported,
                         const struct mgw_sep2243_param *params,
                         size_t n_params, struct mgw_sep2243_verdict *v);

/* Builds the data member of UnsupportedProtocolVersionError:
 * {"supported":[...], "requested": requested}.  supported is
 * NULL-terminated (NULL = the modern versions); requested may be NULL
 * (then ""), since the schema makes the member required.  Returns a new
 * reference, or NULL on no memory. */
json_t *mgw_sep2243_unsupported_data(const char *const *supported,
                                     const char *requested);

#endif
