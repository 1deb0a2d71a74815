/* worker-t.h - one event-loop thread of `mcpgw serve` (types only; see
 * worker.h). */
#ifndef MGW_PROXY_WORKER_T_H
#define MGW_PROXY_WORKER_T_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <event2/event.h>

#include "http/server.h"
#include "proxy/pipeline-t.h"

/* A pipeline replaced by a reload, kept until its last transaction ends;
 * then freed on the worker's thread, and *gen_refs dropped (the main
 * thread frees the generation it belonged to when that reaches 0). */
struct mgw_retired {
	struct mgw_retired *next;
	struct mgw_pipeline *pl;
	atomic_int *gen_refs;
};

/* The meeting point of a reload: every worker waits in its own loop,
 * inside a callback, while the main thread changes what they share. */
struct mgw_park {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned parked;                /* workers waiting now */
	uint64_t want;                  /* the park being asked for */
	uint64_t released;              /* the last park released */
};

struct mgw_wake;

struct mgw_worker {
	unsigned index;
	struct event_base *base;        /* this thread's loop (owned) */
	struct mgw_http_server *http;   /* owned: listeners and connections */
	struct mgw_pipeline *pl;        /* owned: the request pipeline */
	struct mgw_wake *stop;          /* rung by the main thread */
	struct event *beat_ev;          /* stamps the liveness slot */
	struct event *trim_ev;          /* gives idle memory back (worker.c) */
	struct event *exited_ev;        /* the main loop's "a worker ended"
	                                 * event (not owned) */
	struct mgw_wake *park_wake;     /* rung by the main thread */
	struct mgw_park *park;          /* borrowed; NULL: no reloads */
	struct mgw_retired *retired;    /* pipelines of older generations */
	double shutdown_timeout;        /* seconds in-flight requests get */
	pthread_t thread;
	int started;                    /* thread created, not joined yet */
	atomic_int exited;              /* the loop returned */
	atomic_int stopping;            /* a stop was asked for */
};

#endif
