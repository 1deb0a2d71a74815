/* jsonrpc.h - JSON-RPC 2.0 message classification for MCP bodies.
 *
 * Classification never modifies the bytes: the gateway forwards the body it
 * received; this parse only reads it.  Depth and size are bounded. */
#ifndef MGW_MCP_JSONRPC_H
#define MGW_MCP_JSONRPC_H

#include <stddef.h>

#include <jansson.h>

#include "mcp/json.h"

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

/* The classification of one body.  The four views of the document
 * (root_, params_, meta_, id_) are read through mgw_jrpc_root,
 * mgw_jrpc_params, mgw_jrpc_meta and mgw_jrpc_id, never directly: after
 * mgw_jrpc_classify_lazy they are built on first use.  The strings
 * (method, name, task_id, meta_protocol_version) are always there and
 * live as long as the message. */
struct mgw_jrpc_msg {
	enum mgw_jrpc_kind kind;
	json_t *root_;            /* owned: the parsed document (NULL if
	                           * unparsable, or not built yet) */
	json_t *id_;              /* string or integer id, or NULL */
	const char *method;       /* NULL unless request/notification */
	json_t *params_;          /* object or NULL */
	const char *name;         /* params.name (tools/call, prompts/get) or
	                           * params.uri (resources/read), else NULL */
	const char *task_id;      /* params.taskId of a tasks/... request (the
	                           * value Mcp-Name mirrors, SEP-2663), else
	                           * NULL; kept apart from name since a task id
	                           * may be a bearer handle, never logged */
	json_t *meta_;            /* params._meta object or NULL */
	const char *meta_protocol_version; /* _meta["io.modelcontextprotocol/protocolVersion"] */
	int error_code;           /* for INVALID: -32700 or -32600 */
	char error_msg[128];      /* for INVALID: why */
	/* mgw_jrpc_classify_lazy's: the body's copy (the tree is built from
	 * it on first use), the strings above after it; params' member names
	 * as offsets into it */
	char *text;
	size_t text_len;
	unsigned char lazy;       /* classified by the skim; tree on demand */
	unsigned char lazy_failed; /* building it ran out of memory */
	unsigned char has_meta;   /* lazy: params._meta is an object */
	unsigned n_pkeys;
	struct { size_t off, len; } pkey[MGW_JSON_SKIM_MEMBERS];
};

/* Parses and classifies a body of len bytes.  Rejects nesting deeper than
 * max_depth (0 = 64) with -32600 before handing anything to jansson.
 * Always fills *m (kind INVALID with error_code on failure) and returns 0,
 * or MGW_ENOMEM.  Release with mgw_jrpc_msg_deinit.
 * Details: duplicate object member names anywhere are rejected (-32600; see
 * jsonrpc.c for why); a request id must be a string or integer (null,
 * fractions, booleans are -32600); a notification has no "id" member at
 * all; params may be an object or an array, but the params view is set
 * only for an object (MCP uses objects); a response has exactly one of
 * result / error, an error response may have a null or missing id (id
 * view NULL); an empty batch "[]" is INVALID; for INVALID messages the
 * id view still names a valid string/integer id when the body had one,
 * so the error can echo it.
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

/* The same classification, with the same answers, for the gateway's
 * request path: a body the skim (mcp/json.h) reads whole, an object
 * whose envelope and MCP members are plain (no escapes), is classified
 * without a jansson tree; the tree is built from a copy of the body when
 * one of the views is first asked for.  Anything else (a batch, an
 * error, an escaped string the classification reads, an invalid
 * message) goes through mgw_jrpc_classify, so every message and error
 * is the same. */
int mgw_jrpc_classify_lazy(const void *body, size_t len, size_t max_depth,
                           struct mgw_jrpc_msg *m);

/* The views.  Each builds the tree on first use after
 * mgw_jrpc_classify_lazy (NULL, as if absent, only when that ran out of
 * memory: mgw_jrpc_tree_failed says so).  m is const for the caller: the
 * message is the same before and after. */
json_t *mgw_jrpc_root(const struct mgw_jrpc_msg *m);
json_t *mgw_jrpc_params(const struct mgw_jrpc_msg *m);
json_t *mgw_jrpc_meta(const struct mgw_jrpc_msg *m);
json_t *mgw_jrpc_id(const struct mgw_jrpc_msg *m);
int mgw_jrpc_tree_failed(const struct mgw_jrpc_msg *m);

/* 1 when the body was JSON (whatever its classification): what a
 * non-NULL root used to say. */
int mgw_jrpc_parsed(const struct mgw_jrpc_msg *m);

/* 1 when params is an object with a member named key (no tree built). */
int mgw_jrpc_params_has(const struct mgw_jrpc_msg *m, const char *key);

/* 1 when params has an _meta object (no tree built). */
int mgw_jrpc_has_meta(const struct mgw_jrpc_msg *m);

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
