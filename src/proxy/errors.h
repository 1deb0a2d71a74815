/* errors.h - the responses mcpgw produces itself instead of an upstream's:
 * a JSON-RPC error object carrying the request's id when the request was
 * JSON-RPC (so MCP clients can tell which request failed and why), plain
 * text otherwise.  Nothing here touches the network. */
#ifndef MGW_PROXY_ERRORS_H
#define MGW_PROXY_ERRORS_H

#include <stddef.h>

#include <jansson.h>

#include "mcp/jsonrpc.h"
#include "proxy/errors-t.h"
#include "http/client-t.h"
#include "http/headers-t.h"
#include "proxy/upstream-t.h"

/* The answer to a request whose next attempt found no server (v from
 * mgw_upstream_next, not MGW_NEXT_OK): with nothing tried yet, "no
 * healthy upstream server in group" (the message written to buf,
 * *detail pointed at it); once every server was tried or the retry budget
 * said no, the last attempt's own error why_last with its *detail (and
 * *note saying which); an internal error on no memory. */
enum mgw_proxy_error mgw_proxy_next_error(enum mgw_upstream_next v,
                                          const char *group,
                                          enum mgw_proxy_error why_last,
                                          const char **detail, char *buf,
                                          size_t len, const char **note);

/* The fixed code, status, name and message of e (e < MGW_PERR_N). */
const struct mgw_proxy_error_info *mgw_proxy_error_info(enum mgw_proxy_error e);

/* Decides whether an error answer to this request is a JSON-RPC error
 * body (1) or plain text (0).  JSON-RPC when the request body parsed as
 * JSON (m->root set; m may be NULL), when its Content-Type is
 * application/json, or when it had no body and its Accept lists
 * application/json (MCP clients send that on every request, a browser
 * does not).  Any argument may be NULL. */
int mgw_proxy_wants_jsonrpc(const struct mgw_jrpc_msg *m,
                            const char *content_type, const char *accept,
                            size_t body_len);

/* 1 if a Content-Type value (may be NULL) is application/json, with any
 * parameters, compared case-insensitively ("application/json-seq" is
 * not). */
int mgw_proxy_is_json_type(const char *content_type);

/* The id to echo in an error answer: the request's id when the body was a
 * request, or an invalid message that still carried a usable id; NULL
 * (sent as null) for notifications, responses and everything else.
 * Borrowed from m; m may be NULL. */
json_t *mgw_proxy_reply_id(const struct mgw_jrpc_msg *m);

/* Builds an answer with an explicit status and code: as_json selects a
 * JSON-RPC error body {"jsonrpc":"2.0","id":id,"error":{code,message
 * [,data]}} (id borrowed, may be NULL; data stolen, may be NULL) served as
 * application/json, otherwise "STATUS Reason: message\n" as text/plain
 * (data is released).  Returns 0, or MGW_ENOMEM with *r zeroed. */
int mgw_proxy_reply_build(struct mgw_proxy_reply *r, int status, int code,
                          const char *message, json_t *data, int as_json,
                          json_t *id);

/* Builds the answer for one of the gateway's own errors; detail, when not
 * NULL, replaces the default message (it should still say what failed,
 * e.g. "no available server in upstream 'default'").  Returns 0 or
 * MGW_ENOMEM. */
int mgw_proxy_reply_error(struct mgw_proxy_reply *r, enum mgw_proxy_error e,
                          const char *detail, int as_json, json_t *id);

/* Frees the body; r may be zeroed already.  NULL allowed. */
void mgw_proxy_reply_deinit(struct mgw_proxy_reply *r);

/* The gateway error for a failed upstream attempt whose failure has not
 * reached the client: timeouts -32003, failures to connect -32002,
 * everything else -32005. */
enum mgw_proxy_error mgw_proxy_error_kind(const struct mgw_client_error *e);

/* The message of such an error: a timeout names which one; other classes
 * get a fixed phrase, so that no upstream address or system detail
 * reaches the client.  Writes at most len bytes to buf. */
void mgw_proxy_describe_error(const struct mgw_client_error *e,
                              enum mgw_proxy_error kind, char *buf,
                              size_t len);

/* The server layer's refusal-body builder (mgw_http_refusal_cb) for the
 * gateway: a request refused for its size (413, before its body was read,
 * so without an id) gets the JSON-RPC error -32004 with a null id when it
 * declared a JSON body or accepts JSON, a 400 the layer gave a reason for
 * (an invalid or repeated Host) -32016 with that reason; every other
 * refusal keeps the layer's plain text.  arg is unused. */
int mgw_proxy_refusal_body(int status, const char *why,
                           const struct mgw_headers *req,
                           const char **ctype, char **body, size_t *len,
                           void *arg);

#endif
