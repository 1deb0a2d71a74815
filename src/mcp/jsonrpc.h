/* jsonrpc.h - JSON-RPC 2.0 message classification for MCP bodies.
 *
 * Classification never modifies the bytes: the gateway forwards the body it
 * received; this parse only reads it.  Depth and size are bounded. */
#ifndef MGW_MCP_JSONRPC_H
#define MGW_MCP_JSONRPC_H

#include <stddef.h>

#include <jansson.h>

/* JSON-RPC and MCP error codes. */
enum {
	MGW_JRPC_PARSE_ERROR = -32700,
	MGW_JRPC_INVALID_REQUEST = -32600,
	MGW_JRPC_METHOD_NOT_FOUND = -32601,
	MGW_JRPC_INVALID_PARAMS = -32602,
	MGW_JRPC_INTERNAL_ERROR = -32603,
	MGW_MCP_HEADER_MISMATCH = -32020,        /* SEP-2243 */
	MGW_MCP_MISSING_CLIENT_CAPABILITY = -32021,
	MGW_MCP_UNSUPPORTED_VERSION = -32022,
};

enum mgw_jrpc_kind {
	MGW_JRPC_INVALID = 0,     /* not JSON, or not a JSON-RPC 2.0 message */
	MGW_JRPC_REQUEST,         /* method + id */
	MGW_JRPC_NOTIFICATION,    /* method, no id */
	MGW_JRPC_RESPONSE,        /* result or error + id */
	MGW_JRPC_BATCH,           /* a JSON array (not allowed since 2025-06-18) */
};

/* The classification of one body.  All pointers borrow from root. */
struct mgw_jrpc_msg {
	enum mgw_jrpc_kind kind;
	json_t *root;             /* owned: the parsed document (NULL if unparsable) */
	json_t *id;               /* string or integer id, or NULL */
	const char *method;       /* NULL unless request/notification */
	json_t *params;           /* object or NULL */
	const char *name;         /* params.name (tools/call, prompts/get) or
	                           * params.uri (resources/read), else NULL */
	const char *task_id;      /* params.taskId of a tasks/... request (the
	                           * value Mcp-Name mirrors, SEP-2663), else
	                           * NULL; kept apart from name since a task id
	                           * may be a bearer handle, never logged */
	json_t *meta;             /* params._meta object or NULL */
	const char *meta_protocol_version; /* _meta["io.modelcontextprotocol/protocolVersion"] */
	int error_code;           /* for INVALID: -32700 or -32600 */
	char error_msg[128];      /* for INVALID: why */
};

/* Parses and classifies a body of len bytes.  Rejects nesting deeper than
 * max_depth (0 = 64) with -32600 before handing anything to jansson.
 * Always fills *m (kind INVALID with error_code on failure) and returns 0,
 * or MGW_ENOMEM.  Release with mgw_jrpc_msg_deinit.
 * Details: duplicate object member names anywhere are rejected (-32600; see
 * jsonrpc.c for why); a request id must be a string or integer (null,
 * fractions, booleans are -32600); a notification has no "id" member at
 * all; params may be an object or an array, but m->params is set only for
 * an object (MCP uses objects); a response has exactly one of result /
 * error, an error response may have a null or missing id (m->id NULL);
 * an empty batch "[]" is INVALID; for INVALID messages m->id still names a
 * valid string/integer id when the body had one, so the error can echo it.
 * Numbers of any size are read (MGW_JSON_WIDE_NUMBERS, mcp/json.h): an
 * integer id beyond json_int_t is a wide number, which the builders
 * below write back as its exact text.
 * m->name and m->task_id are filled for requests only; extracted strings never contain an
 * embedded NUL (such a method/name makes the message INVALID).  One
 * leading UTF-8 byte order mark (EF BB BF) is ignored, as RFC 8259 8.1
 * allows (the bytes themselves are never changed: the caller forwards
 * what it received); a second one, or a UTF-16/32 mark, is a parse
 * error. */
int mgw_jrpc_classify(const void *body, size_t len, size_t max_depth,
                      struct mgw_jrpc_msg *m);
void mgw_jrpc_msg_deinit(struct mgw_jrpc_msg *m);

/* Serializes {"jsonrpc":"2.0","id":id,"error":{"code","message"[,"data"]}}.
 * id may be NULL (-> null); data is stolen (may be NULL).  Returns a
 * malloc'd string and *len, or NULL on no memory. */
char *mgw_jrpc_error_body(json_t *id, int code, const char *message,
                          json_t *data, size_t *len);
/* Serializes {"jsonrpc":"2.0","id":id,"result":result}; result stolen. */
char *mgw_jrpc_result_body(json_t *id, json_t *result, size_t *len);
/* Serializes a notification {"jsonrpc":"2.0","method":m,"params":p};
 * params is stolen and may be NULL (member omitted).  For all three
 * builders id is borrowed (copied into the body). */
char *mgw_jrpc_notification_body(const char *method, json_t *params,
                                 size_t *len);

#endif
