/* forward-t.h - per-worker state of the request path (types only; see
 * forward.h). */
#ifndef MGW_PROXY_FORWARD_T_H
#define MGW_PROXY_FORWARD_T_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "proxy/conf_serve-t.h"
#include "http/client-t.h"
#include "proxy/errors-t.h"
#include "proxy/route-t.h"
#include "proxy/stateful-t.h"
#include "proxy/upstream-t.h"

/* Counters of one worker (only grow; read from the worker's thread or
 * after it stopped). */
struct mgw_fwd_stats {
	uint64_t requests;              /* handed to the forwarder */
	uint64_t forwarded;             /* answered by an upstream (any status) */
	uint64_t rejected_headers;      /* SEP-2243 validation failures (400) */
	uint64_t retries;               /* extra attempts sent */
	uint64_t client_aborts;         /* client left before the end */
	uint64_t stream_aborts;         /* response cut after it started */
	uint64_t errors[MGW_PERR_N];    /* gateway answers by kind */
};

/* The forwarder of one worker thread.  Everything here is used from that
 * thread only; the routes, groups and configuration it points to are
 * shared read-only (the groups' atomics aside). */
struct mgw_fwd {
	struct event_base *base;
	const struct mgw_serve_conf *conf;   /* borrowed */
	const struct mgw_routes *routes;     /* borrowed */
	struct mgw_upstreams *ups;           /* borrowed */
	struct mgw_upstream_picker *picker;  /* owned */
	size_t n_groups;
	struct mgw_client **clients;         /* owned, one per group */
	struct mgw_client_origin ***origins; /* owned, [group][server] */
	size_t live;                         /* requests in progress */
	struct mgw_sf *sf;                   /* owned: the stateful path
	                                      * (modes stateful and auto), or
	                                      * NULL */
	struct mgw_fwd_stats st;
};

#endif
