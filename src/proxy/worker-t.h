/* worker-t.h - one event-loop thread of `mcpgw serve` (types only; see
 * worker.h). */
#ifndef MGW_PROXY_WORKER_T_H
#define MGW_PROXY_WORKER_T_H

#include <pthread.h>
#include <stdatomic.h>

#include <event2/event.h>

#include "http/server.h"
#include "proxy/pipeline-t.h"

struct mgw_worker {
	unsigned index;
	struct event_base *base;        /* this thread's loop (owned) */
	struct mgw_http_server *http;   /* owned: listeners and connections */
	struct mgw_pipeline *pl;        /* owned: the request pipeline */
	struct event *stop_ev;          /* activated by the main thread */
	struct event *beat_ev;          /* stamps the liveness slot */
	struct event *exited_ev;        /* the main loop's "a worker ended"
	                                 * event (not owned) */
	double shutdown_timeout;        /* seconds in-flight requests get */
	pthread_t thread;
	int started;                    /* thread created, not joined yet */
	atomic_int exited;              /* the loop returned */
	atomic_int stopping;            /* a stop was asked for */
};

#endif
