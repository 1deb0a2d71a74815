/* txn.h - the transaction: one client exchange through the gateway.
 *
 * The pipeline (pipeline.h) makes one per request, classifies it, runs
 * the request checks, chooses the route and gives it to a handler
 * (handler.h).  The transaction owns everything a request holds: the
 * classification, the headers going upstream, the upstream attempt and
 * the response relay (relay.h).  It answers (mgw_txn_reply, _respond,
 * _fail), logs one access line per request, watches the client (abort,
 * drain) and routes the upstream attempt's events: to the relay once it
 * answers, to the handler before.  Every function that answers frees t. */
#ifndef MGW_PROXY_TXN_H
#define MGW_PROXY_TXN_H

#include <stddef.h>

#include "core/log.h"
#include "http/headers-t.h"
#include "proxy/errors-t.h"
#include "proxy/pool.h"
#include "proxy/txn-t.h"
#include "proxy/upstream-t.h"

/* A transaction for exchange x of pipeline pl.  NULL on no memory. */
struct mgw_txn *mgw_txn_new(struct mgw_pipeline *pl,
                            struct mgw_http_exchange *x);

/* Reads a POST body as JSON-RPC (msg) and decides whether gateway errors
 * are JSON-RPC (as_json).  Returns 0 or MGW_ENOMEM. */
int mgw_txn_classify(struct mgw_txn *t);

/* Frees t: the attempt is cancelled, the handler released; the exchange
 * must be finished or gone. */
void mgw_txn_free(struct mgw_txn *t);

void mgw_txn_logctx(const struct mgw_txn *t, struct mgw_log_ctx *ctx);
/* The access line (log.access): method, path, Mcp-Method, upstream
 * server, status, duration, and what happened when not plainly. */
void mgw_txn_access_log(struct mgw_txn *t, int status);
/* The MCP method for the access log: the body's method when it was
 * classified ("response" for a JSON-RPC response), else the Mcp-Method
 * header, else NULL. */
const char *mgw_txn_mcp_method(const struct mgw_txn *t);
/* Adds what to the handler's note for the access line ("a,b"). */
void mgw_txn_note_why(struct mgw_txn *t, const char *what);

/* Answers status with headers h (may be NULL) and body, logs, frees t. */
void mgw_txn_respond(struct mgw_txn *t, int status,
                     const struct mgw_headers *h, const void *body, size_t n);
/* The same with the body's Content-Type (a static string). */
void mgw_txn_respond_typed(struct mgw_txn *t, int status, const char *ctype,
                           const void *body, size_t n);
/* Answers a prepared reply (with extra headers, may be NULL), frees t. */
void mgw_txn_reply(struct mgw_txn *t, struct mgw_proxy_reply *r,
                   const struct mgw_headers *extra);
/* Answers one of the gateway's own errors (JSON-RPC body with the
 * request's id when as_json), cancelling the attempt; frees t. */
void mgw_txn_fail(struct mgw_txn *t, enum mgw_proxy_error e,
                  const char *detail);

/* From now on the client's abort and drain reach t. */
void mgw_txn_watch_client(struct mgw_txn *t);

/* The value of the route's group hash_header in the request (NULL when
 * absent or the group does not hash). */
const char *mgw_txn_hash_key(const struct mgw_txn *t, size_t *len);

/* The next server for t's route: the group's balancer (key/keylen: the
 * hash_header value, may be NULL) among those t has not tried, a
 * MGW_UPOOL_RETRY choice asking the retry budget; t->owner when set
 * (task affinity), tried or not.  NULL when there is
 * none: t was then answered (-32001, or why_last / detail, the previous
 * attempt's failure) and freed. */
struct mgw_upstream_server *mgw_txn_next_server(struct mgw_txn *t,
	const char *key, size_t keylen, enum mgw_upool_budget budget,
	enum mgw_proxy_error why_last, const char *detail);

/* An attempt chosen as MGW_UPOOL_RETRY was sent: counted for the access
 * line and the pipeline's counters. */
void mgw_txn_count_retry(struct mgw_txn *t);

/* Sends the client's request to s with headers h (t->hdrs or the
 * handler's variant), within what is left of the route's total timeout.
 * On 0 the attempt runs; else nothing is sent and t is untouched:
 * MGW_ETIMEDOUT (total timeout spent), MGW_ELIMIT (s's queue is full) or
 * another MGW_E*. */
int mgw_txn_send(struct mgw_txn *t, struct mgw_upstream_server *s,
                 const struct mgw_headers *h);

/* Cancels the running attempt (no callback follows) and releases its
 * server. */
void mgw_txn_cancel_attempt(struct mgw_txn *t);

#endif
