/* pipeline.h - the request pipeline of `mcpgw serve`.
 *
 * The HTTP server layer calls mgw_pipeline_on_request once per complete
 * request.  Dispatch happens once, here, in a fixed order:
 *   1. classify: a transaction (txn.h) reads a POST body as JSON-RPC,
 *      never changing it, and decides whether errors are JSON-RPC;
 *   2. era: modern (2026-07-28) or legacy, from headers and body;
 *   3. handler: stateful (mode stateful or auto, and mgw_sf_claims) or
 *      stateless (handler.h);
 *   4. request checks (checks.h, phase REQUEST): repeated singleton
 *      headers, the Origin check, the gateway's health
 *      endpoints, the admin endpoint, an unreadable sessionless body, the
 *      stateless MCP endpoint's 405;
 *   5. route (route.h): no route is -32001's sibling 404 "no route";
 *   6. routed checks (phase ROUTED): SEP-2243 header validation;
 *   7. the handler's start: upstream attempts (pool.h), the answer
 *      through the relay (relay.h), the access line at the end.
 * Each check may answer the request, which ends the pipeline there. */
#ifndef MGW_PROXY_PIPELINE_H
#define MGW_PROXY_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "proxy/conf_serve-t.h"
#include "http/server.h"
#include "proxy/pipeline-t.h"
#include "proxy/route-t.h"
#include "proxy/stateful-t.h"
#include "proxy/upstream-t.h"

/* The path of the gateway's own statistics page (JSON, GET only); see
 * doc/serve.md and admin.stats. */
#define MGW_PROXY_STATS_PATH "/mcpgw/stats"
/* The gateway's own liveness and readiness (check_health.c). */
#define MGW_PROXY_HEALTHZ_PATH "/mcpgw/healthz"
#define MGW_PROXY_READYZ_PATH "/mcpgw/readyz"

/* Creates the pipeline of one worker on base with its upstream pool
 * (pool.h; seed 0 = random picks).  conf, routes and ups must outlive it.
 * Returns NULL with a message in err. */
struct mgw_pipeline *mgw_pipeline_new(struct event_base *base,
                                      const struct mgw_serve_conf *conf,
                                      const struct mgw_routes *routes,
                                      struct mgw_upstreams *ups,
                                      unsigned n_workers, uint64_t seed,
                                      char *err, size_t errlen);

/* Frees it after the worker's HTTP server was freed (which aborts every
 * exchange and so ends every transaction), from the worker's thread or
 * after it ended.  NULL allowed. */
void mgw_pipeline_free(struct mgw_pipeline *pl);

/* 1 when no transaction of pl is in progress and its stateful state (if
 * any) is idle: a retired pipeline can then be freed. */
int mgw_pipeline_idle(const struct mgw_pipeline *pl);

/* Turns the stateful handler on (mode stateful or auto): builds the
 * worker's part of it (mgw_sf_new) on pl's loop.  Main thread, before
 * the worker starts.  Returns 0 or MGW_E* with a message in err. */
int mgw_pipeline_enable_stateful(struct mgw_pipeline *pl,
                                 struct mgw_sf_shared *sh, char *err,
                                 size_t errlen);

/* Turns the auth check on (auth: configured): the worker's side of it
 * over keys (borrowed: it outlives pl).  Main thread, before the worker
 * runs its new pipeline.  Returns 0 or MGW_ENOMEM with err. */
struct mgw_keyring;
int mgw_pipeline_enable_auth(struct mgw_pipeline *pl, struct mgw_keyring *keys,
                             char *err, size_t errlen);

/* The HTTP server handler (mgw_http_handler_cb); arg is the pipeline. */
void mgw_pipeline_on_request(struct mgw_http_exchange *x, void *arg);

/* Goes on with t after the check that kept it (MGW_CHECK_PENDING, on t's
 * worker thread): the checks after it, then the route, the routed checks
 * and the handler's start. */
struct mgw_txn;
void mgw_pipeline_resume(struct mgw_txn *t);

/* This worker's connection for a check's shared state: *slot (owned by
 * pl, freed with it), made from c at first use.  NULL when c has no url,
 * or the URL or memory failed (warned through lim, named what). */
struct mgw_redis;
struct mgw_redis_conf;
struct mgw_redis *mgw_pipeline_redis(struct mgw_pipeline *pl,
                                     struct mgw_redis **slot,
                                     const struct mgw_redis_conf *c,
                                     struct mgw_log_limit *lim,
                                     const char *what);

#endif
