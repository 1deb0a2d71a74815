/* pipeline-t.h - the request pipeline of one worker (types only; see
 * pipeline.h). */
#ifndef MGW_PROXY_PIPELINE_T_H
#define MGW_PROXY_PIPELINE_T_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "core/log.h"
#include "proxy/conf_serve-t.h"
#include "proxy/errors-t.h"
#include "proxy/route-t.h"
#include "proxy/upstream-t.h"

struct mgw_upool;
struct mgw_sf;
struct mgw_liveness;
struct mgw_metrics;
struct mgw_metrics_worker;
struct mgw_auth_wait;
struct mgw_rl_table;
struct mgw_mrtr_set;
struct mgw_redis;

/* Counters of one worker (only grow; read from the worker's thread or
 * after it stopped). */
struct mgw_pipeline_stats {
	uint64_t requests;              /* exchanges handed to the pipeline */
	uint64_t forwarded;             /* answered by an upstream (any status) */
	uint64_t rejected_headers;      /* SEP-2243 / JSON-RPC validation (400) */
	uint64_t retries;               /* extra attempts sent */
	uint64_t client_aborts;         /* client left before the end */
	uint64_t stream_aborts;         /* response cut after it started */
	uint64_t errors[MGW_PERR_N];    /* gateway answers by kind */
};

/* The pipeline of one worker thread.  Everything here is used from that
 * thread only; the routes, groups and configuration it points to are
 * shared read-only (the groups' atomics aside). */
struct mgw_pipeline {
	struct event_base *base;
	const struct mgw_serve_conf *conf;   /* borrowed */
	const struct mgw_routes *routes;     /* borrowed */
	struct mgw_upstreams *ups;           /* borrowed */
	struct mgw_upool *pool;              /* owned */
	struct mgw_sf *sf;                   /* owned: the stateful handler's
	                                      * state (modes stateful and
	                                      * auto), or NULL */
	size_t live;                         /* transactions in progress */
	struct mgw_liveness *live_beats;     /* borrowed: every worker's loop
	                                      * stamps, or NULL (then only
	                                      * this loop answering counts) */
	struct mgw_pipeline_stats st;
	struct mgw_metrics *metrics;         /* borrowed: every worker's
	                                      * counters (GET /metrics), or
	                                      * NULL */
	struct mgw_metrics_worker *mx;       /* this worker's block of it */
	struct mgw_auth_wait *auth;          /* owned: the auth check's side
	                                      * of this worker (auth:), or
	                                      * NULL */
	struct mgw_rl_table *rlt;            /* borrowed: the process's rate
	                                      * limit buckets (ratelimit.h),
	                                      * or NULL (no limits) */
	struct mgw_redis *rl_redis;          /* owned: this worker's
	                                      * connection for shared rate
	                                      * limits, made at first use */
	struct mgw_log_limit rl_log;         /* its connection errors */
	struct mgw_mrtr_set *mrtr;           /* borrowed: the process's
	                                      * requestState digests
	                                      * (mrtr_set.h), or NULL */
	struct mgw_redis *mrtr_redis;        /* owned: this worker's
	                                      * connection for mrtr: shared:
	                                      * redis, made at first use */
	struct mgw_log_limit mrtr_log;       /* its connection errors */
	struct mgw_redis **task_redis;       /* owned: this worker's
	                                      * connection per upstream group
	                                      * for task_affinity.redis (index
	                                      * of the group), made at first
	                                      * use; NULL until then */
	size_t n_task_redis;
	struct mgw_log_limit task_log;       /* their connection errors */
};

#endif
