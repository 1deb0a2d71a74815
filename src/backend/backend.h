/* backend.h - internal interfaces between the files of the reference MCP
 * server.  Only cmd.c's mgw_backend_main (core/commands.h) is public; the
 * rest is shared by server.c (routing), call.c (answering one request),
 * stream.c (long-lived SSE), legacy.c, modern.c, tools.c and stats.c. */
#ifndef MGW_BACKEND_BACKEND_H
#define MGW_BACKEND_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "backend/backend-t.h"
#include "core/log.h"
#include "mcp/sep2243.h"

#define MGW_BE_SERVER_NAME "mcpgw-backend"

/* Upper bounds that keep client-driven growth finite. */
#define MGW_BE_MAX_SLEEP_MS 60000
#define MGW_BE_MAX_COUNTERS_PER_SESSION 1024
#define MGW_BE_MAX_STREAMS_PER_SESSION 8
#define MGW_BE_MAX_TEXT 65536

/* ---- server.c: HTTP routing and immediate answers -------------------- */

/* The mgw_http_handler_cb of the server; arg is the struct mgw_backend. */
void mgw_be_on_request(struct mgw_http_exchange *x, void *arg);

/* Log context for an exchange (session may be NULL). */
struct mgw_log_ctx mgw_be_ctx(struct mgw_http_exchange *x, const char *session);

/* Answers x at once with a JSON-RPC error body; data is stolen (may be
 * NULL), id is borrowed (NULL -> null).  hdrs may be NULL. */
void mgw_be_reply_error(struct mgw_http_exchange *x, int status, json_t *id,
                        int code, const char *message, json_t *data,
                        const struct mgw_headers *hdrs);

/* Answers x with a JSON body (len bytes, not NUL-terminated) followed by
 * a newline, so that bodies read well in terminals and line-oriented
 * tools.  hdrs may be NULL. */
void mgw_be_respond_json(struct mgw_http_exchange *x, int status,
                         const struct mgw_headers *hdrs, const char *json,
                         size_t len);

/* Answers x at once with a status and no body (202 for notifications). */
void mgw_be_reply_empty(struct mgw_http_exchange *x, int status);

/* 1 when the request's Accept admits media type "type/subtype" (exact,
 * type wildcard, or a wildcard range; a q=0 range does not count). */
int mgw_be_accepts(struct mgw_http_exchange *x, const char *type);

/* A new serverInfo object {name, version, title}. */
json_t *mgw_be_server_info(const struct mgw_backend *be);

/* ---- call.c: answering one JSON-RPC request ------------------------- */

/* Creates the call for request x, taking ownership of *msg (left zeroed)
 * and installing the abort callback on x.  The call starts with two
 * references: the exchange's (dropped when the answer is sent or the
 * client leaves) and the caller's, which the caller drops with
 * mgw_be_call_unref when it has finished dispatching.  Returns NULL on no
 * memory (x is then answered 500 and *msg released). */
struct mgw_be_call *mgw_be_call_new(struct mgw_backend *be,
                                    struct mgw_http_exchange *x,
                                    struct mgw_jrpc_msg *msg,
                                    enum mgw_be_era era);
void mgw_be_call_ref(struct mgw_be_call *c);
/* Drops a reference; the last one frees the call. */
void mgw_be_call_unref(struct mgw_be_call *c);

/* 1 while the client still waits for the answer. */
int mgw_be_call_alive(const struct mgw_be_call *c);

/* Marks the start of method processing: with --sse always (or force) the
 * response becomes an SSE stream whose first event is a progress
 * notification (when the request carries a progressToken), a log message
 * (where the era allows one), or else an SSE comment. */
void mgw_be_call_start(struct mgw_be_call *c, int force_sse);

/* Writes a notification on the call's SSE response, starting it first if
 * needed.  params is stolen (may be NULL).  Returns 0, MGW_ECLOSED, or
 * MGW_ELIMIT when the client reads too slowly and it was dropped. */
int mgw_be_call_notify(struct mgw_be_call *c, const char *method,
                       json_t *params);

/* Finishes the call with a result (stolen).  Modern answers get
 * resultType "complete" (unless set) and _meta serverInfo.  --delay-ms
 * holds the answer back on a timer. */
void mgw_be_call_result(struct mgw_be_call *c, json_t *result);

/* Finishes the call with a JSON-RPC error; data stolen (may be NULL).
 * status applies only when no SSE stream was started. */
void mgw_be_call_error(struct mgw_be_call *c, int status, int code,
                       const char *message, json_t *data);

/* Takes the exchange away from the call (which drops its reference) so a
 * long-lived stream can own it.  Returns the exchange or NULL. */
struct mgw_http_exchange *mgw_be_call_detach(struct mgw_be_call *c);

/* Arms the call's timer: fn runs after ms unless the client leaves first.
 * The timer holds a reference on the call while armed. */
typedef void (*mgw_be_call_timer_cb)(struct mgw_be_call *c);
int mgw_be_call_after(struct mgw_be_call *c, uint32_t ms,
                      mgw_be_call_timer_cb fn);

/* ---- stream.c: long-lived SSE responses ----------------------------- */

/* Starts an SSE response on x and registers it: keep-alive comments every
 * conf.keepalive_interval, abort handling, stats.  hdrs may be NULL.
 * Returns NULL (x answered with an error) on failure. */
struct mgw_be_stream *mgw_be_stream_open(struct mgw_backend *be,
                                         struct mgw_http_exchange *x,
                                         enum mgw_be_stream_kind kind,
                                         struct mgw_be_session *sess,
                                         const struct mgw_headers *hdrs);

/* Writes one "event: message" frame carrying json (len bytes).
 * Returns 0, MGW_ELIMIT (client too slow; frame dropped) or MGW_ECLOSED. */
int mgw_be_stream_send(struct mgw_be_stream *st, const char *json, size_t len);

/* Ends the response and frees the stream. */
void mgw_be_stream_close(struct mgw_be_stream *st);

/* Ends every GET stream of sess (the session is going away). */
void mgw_be_streams_close_session(struct mgw_backend *be,
                                  struct mgw_be_session *sess);

/* Ends every stream; listen streams first get their graceful completion
 * result (subscriptions spec).  Used when shutting down. */
void mgw_be_streams_close_all(struct mgw_backend *be);

/* Writes one SSE "event: message" frame to x, with "id: <id>" first when
 * id is not 0 (legacy streams number their events, so that a client has
 * a Last-Event-ID to resume with; this server does not replay them).
 * Returns what mgw_http_stream_write returns. */
int mgw_be_sse_write_event(struct mgw_http_exchange *x, unsigned long id,
                           const char *json, size_t len);

/* Headers every SSE response carries (Cache-Control, X-Accel-Buffering)
 * appended to h. */
void mgw_be_sse_headers(struct mgw_headers *h);

/* ---- legacy.c: 2025-era sessions ------------------------------------ */

int mgw_be_sessions_init(struct mgw_backend *be);
void mgw_be_sessions_deinit(struct mgw_backend *be);

/* POST in the legacy era; takes ownership of *msg. */
void mgw_be_legacy_post(struct mgw_backend *be, struct mgw_http_exchange *x,
                        struct mgw_jrpc_msg *msg);
/* GET (standalone SSE stream) and DELETE (end session) in the legacy era. */
void mgw_be_legacy_get(struct mgw_backend *be, struct mgw_http_exchange *x);
void mgw_be_legacy_delete(struct mgw_backend *be, struct mgw_http_exchange *x);

/* Sends a JSON-RPC message on one of the session's GET streams (the spec
 * forbids broadcasting one message to several).  Returns 1 when written,
 * 0 when the session has no stream that could take it. */
int mgw_be_session_push(struct mgw_backend *be, struct mgw_be_session *sess,
                        const char *json, size_t len);

/* Session counters (legacy counter_* tools).  handle receives the new
 * handle (needs 35 bytes).  Return 0, MGW_ELIMIT, MGW_ENOMEM, MGW_EIO or
 * MGW_ENOTFOUND. */
int mgw_be_session_counter_new(struct mgw_backend *be,
                               struct mgw_be_session *sess, char *handle);
int mgw_be_session_counter_incr(struct mgw_be_session *sess,
                                const char *handle, int64_t *value);

/* ---- modern.c: 2026-07-28 stateless requests ------------------------ */

/* POST in the modern era; takes ownership of *msg. */
void mgw_be_modern_post(struct mgw_backend *be, struct mgw_http_exchange *x,
                        struct mgw_jrpc_msg *msg);

/* Sends notifications/tools/list_changed on every listen stream that
 * asked for it.  Returns how many streams got it. */
int mgw_be_listen_tools_changed(struct mgw_backend *be);

/* ---- tools.c: the tools of both eras -------------------------------- */

/* The tools/list "tools" array for an era (new reference). */
json_t *mgw_be_tools_list(const struct mgw_backend *be, enum mgw_be_era era);

/* Parameters a tool mirrors into Mcp-Param-* headers (x-mcp-header), for
 * SEP-2243 validation.  Sets *n (0 for unknown tools). */
const struct mgw_sep2243_param *mgw_be_tool_header_params(const char *tool,
                                                         size_t *n);

/* Runs tools/call for c (sess: the legacy session, NULL when modern).
 * Finishes the call now or later (sleep, redis). */
void mgw_be_tools_call(struct mgw_be_call *c, struct mgw_be_session *sess);

/* ---- stats.c -------------------------------------------------------- */

/* Counts one JSON-RPC message by method (responses as "(response)"). */
void mgw_be_stats_method(struct mgw_be_stats *st, const char *method);

/* The GET /stats document (new reference). */
json_t *mgw_be_stats_json(const struct mgw_backend *be);

/* Names for logs and stats. */
const char *mgw_be_era_name(enum mgw_era_conf era);
const char *mgw_be_state_name(enum mgw_state_conf state);
const char *mgw_be_rs_name(enum mgw_rs_conf rs);

#endif
