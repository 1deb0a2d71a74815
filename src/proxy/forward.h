/* forward.h - the request path of `mcpgw serve` in stateless mode: one
 * forwarder per worker thread takes each request from the HTTP server
 * layer, looks at it as MCP without changing it (classification, era,
 * SEP-2243 validation), routes it, picks a server, forwards it through
 * the HTTP client layer and streams the answer back.
 *
 * What reaches the upstream: the body byte for byte; every end-to-end
 * header in arrival order and unchanged, minus hop-by-hop fields (RFC 9110
 * §7.6.1 and those named in Connection), Expect (already answered by the
 * server layer) and, unless forwarded.trust_client, the client's
 * Forwarded / X-Forwarded-* / X-Real-IP; then Forwarded and
 * X-Forwarded-For naming the client when forwarded.add.  The client's
 * authority is kept (Host / :authority).  HTTP/2 Cookie fields are joined
 * into one as RFC 9113 §8.2.3 asks of a translating intermediary.
 *
 * What reaches the client: the upstream's status and headers (hop-by-hop
 * removed); small JSON answers with a Content-Length are collected and
 * sent whole, everything else (SSE above all) streams chunk by chunk as
 * the upstream sends it, with backpressure both ways.  A response cut
 * after it started is cut for the client too (see mgw_http_stream_abort).
 *
 * Retries go to a different server, only when the client layer reports
 * that the request provably did not reach the upstream, within the
 * route's retries and the global retry budget, and never after a response
 * byte was received.  doc/serve.md tells the whole story. */
#ifndef MGW_PROXY_FORWARD_H
#define MGW_PROXY_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "proxy/conf_serve-t.h"
#include "http/server.h"
#include "http/client-t.h"
#include "proxy/errors-t.h"
#include "proxy/forward-t.h"
#include "proxy/route-t.h"
#include "proxy/stateful-t.h"
#include "proxy/upstream-t.h"

/* Collected answers: a response at most this large (by its Content-Length)
 * is read whole and sent with a Content-Length; larger or unsized ones
 * stream. */
#define MGW_FWD_COLLECT_MAX (64 * 1024)

/* Creates the forwarder of one worker on base: a picker (seed 0 = random),
 * one HTTP client per upstream group and one client origin per server.
 * The per-server connection limits of each group are shared out over
 * n_workers (at least one connection per worker).  conf, routes and ups
 * must outlive it.  Returns NULL with a message in err. */
struct mgw_fwd *mgw_fwd_new(struct event_base *base,
                            const struct mgw_serve_conf *conf,
                            const struct mgw_routes *routes,
                            struct mgw_upstreams *ups, unsigned n_workers,
                            uint64_t seed, char *err, size_t errlen);

/* Frees the forwarder.  Call it after the worker's HTTP server was freed
 * (which aborts every exchange and so ends every request of this
 * forwarder), from the worker's thread or after it ended.  NULL allowed. */
void mgw_fwd_free(struct mgw_fwd *f);

/* The HTTP server handler (mgw_http_handler_cb); arg is the forwarder. */
void mgw_fwd_on_request(struct mgw_http_exchange *x, void *arg);

/* The server layer's refusal-body builder (mgw_http_refusal_cb) for the
 * gateway: a request refused for its size (413, before its body was read,
 * so without an id) gets the JSON-RPC error -32004 with a null id when it
 * declared a JSON body or accepts JSON; every other refusal keeps the
 * layer's plain text.  arg is unused. */
int mgw_fwd_refusal_body(int status, const struct mgw_headers *req,
                         const char **ctype, char **body, size_t *len,
                         void *arg);

/* 1 when a GET or DELETE is aimed at the MCP endpoint, which stateless
 * mode answers 405 itself: the path is "/mcp", or the request carries an
 * MCP transport header (Mcp-Session-Id, MCP-Protocol-Version,
 * Last-Event-ID), or it is a GET accepting text/event-stream (the legacy
 * standalone stream).  Other GETs (OAuth metadata under /.well-known/,
 * health pages) are forwarded.  Exposed for tests. */
int mgw_fwd_is_mcp_endpoint(const char *method, const char *path,
                            const struct mgw_headers *h);

/* Turns the stateful path on for forwarder f (mode stateful or auto):
 * builds the worker's part of it (mgw_sf_new) on f's loop; requests that
 * mgw_sf_claims are handed to it from then on.  Main thread, before the
 * worker starts.  Returns 0 or MGW_E* with a message in err. */
int mgw_fwd_enable_stateful(struct mgw_fwd *f, struct mgw_sf_shared *sh,
                            char *err, size_t errlen);

/* The request-target sent to server s: the path prefix of its URL in
 * front of the client's target (a target not starting with '/', such as
 * "*", is sent as it is).  Returns a malloc'd string, NULL on no memory. */
char *mgw_fwd_upstream_target(const struct mgw_upstream_server *s,
                              const char *target);

/* The gateway error for a failed upstream attempt whose failure has not
 * reached the client: timeouts -32003, failures to connect -32002,
 * everything else -32005. */
enum mgw_proxy_error mgw_fwd_error_kind(const struct mgw_client_error *e);

/* The message of such an error: a timeout names which one; other classes
 * get a fixed phrase, so that no upstream address or system detail
 * reaches the client.  Writes at most len bytes to buf. */
void mgw_fwd_describe_error(const struct mgw_client_error *e,
                            enum mgw_proxy_error kind, char *buf, size_t len);

/* 1 when the Content-Length value v is a plain number no larger than max
 * (*out gets it), else 0. */
int mgw_fwd_small_length(const char *v, size_t max, size_t *out);

/* 1 when a Content-Type value names text/event-stream. */
int mgw_fwd_is_event_stream(const char *ctype);

/* The path of the gateway's own statistics page (JSON, GET only), served
 * on every listener in every mode; see doc/serve.md. */
#define MGW_FWD_STATS_PATH "/mcpgw/stats"

/* Builds in out (initialised by the caller) the header list to send
 * upstream from the client's list in (see the top of this file).  peer is
 * "IP:PORT" / "[V6]:PORT", tls whether the client used TLS, authority the
 * client's Host (may be NULL), h2 whether the client spoke HTTP/2 (Cookie
 * joining).  Returns 0 or MGW_ENOMEM.  Exposed for tests. */
int mgw_fwd_build_headers(struct mgw_headers *out,
                          const struct mgw_headers *in,
                          const struct mgw_serve_conf *conf,
                          const char *peer, int tls, const char *authority,
                          int h2);

#endif
