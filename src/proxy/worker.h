/* worker.h - the worker threads of `mcpgw serve`.  Each worker owns an
 * event loop, an HTTP server whose listeners share their addresses with
 * the other workers' through SO_REUSEPORT (the kernel spreads connections
 * over them), and a forwarder with its own upstream connection pools, so
 * workers share nothing on the request path except the upstream groups'
 * atomic health and load counters and the retry budget.
 *
 * Life: mgw_worker_new and mgw_worker_listen run on the main thread
 * before any worker starts; mgw_worker_start spawns the thread;
 * mgw_worker_stop (main thread, any time) asks for a graceful stop, after
 * which the worker closes its listeners, lets requests in flight finish
 * for shutdown_timeout seconds, ends its loop and activates the main
 * loop's exited event; mgw_worker_join then mgw_worker_free clean up.
 *
 * Every MGW_WORKER_TRIM_MS a worker gives back what a burst left behind:
 * its jansson cache's blocks unused for a whole period (util/jalloc.h),
 * and, when the arenas hold at least MGW_WORKER_TRIM_MIN_FREE free
 * bytes, their free pages (malloc_trim, util/heaptrim.h); counted in
 * the worker's metrics (mcpgw_memory_*_total). */
#ifndef MGW_PROXY_WORKER_H
#define MGW_PROXY_WORKER_H

#define MGW_WORKER_TRIM_MS 10000
#define MGW_WORKER_TRIM_MIN_FREE (128 * 1024)  /* glibc's M_TRIM_THRESHOLD */

#include <stddef.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "conf/config-t.h"
#include "proxy/route-t.h"
#include "proxy/upstream-t.h"
#include "proxy/worker-t.h"

/* Creates worker index (its loop, HTTP server with cfg->limits and
 * forwarder).  n_workers shares connection limits out.  exited_ev is
 * activated (thread-safely) when the worker's loop ends.  The libevent
 * thread support must be on (evthread_use_pthreads) before this.
 * Returns NULL with a message in err. */
struct mgw_worker *mgw_worker_new(unsigned index, const struct mgw_config *cfg,
                                  const struct mgw_routes *routes,
                                  struct mgw_upstreams *ups, unsigned n_workers,
                                  struct event *exited_ev, char *err,
                                  size_t errlen);

/* Adds a listener (see mgw_http_server_listen_opts; reuseport sets
 * SO_REUSEPORT).  Main thread, before mgw_worker_start. */
int mgw_worker_listen(struct mgw_worker *w, const char *address, SSL_CTX *tls,
                      int reuseport, char *bound, size_t boundlen);

/* Makes the worker stamp slot w->index of l every MGW_LIVENESS_BEAT_MS
 * from its loop, and its pipeline answer /mcpgw/healthz from l.  Main
 * thread, before the worker starts; l outlives it.  0 or MGW_ENOMEM. */
struct mgw_liveness;
int mgw_worker_set_liveness(struct mgw_worker *w, struct mgw_liveness *l);

/* ---- configuration reload ----
 * The main thread parks every worker (each waits inside a callback of its
 * own loop), changes what they use, and releases them: a reload is a
 * pause of a few milliseconds, and no request sees half of a change. */

/* A park to share between the workers and the main thread; 0 or
 * MGW_ENOMEM.  Destroyed after every worker was freed. */
int mgw_park_init(struct mgw_park *p);
void mgw_park_destroy(struct mgw_park *p);
/* The worker takes part in reloads through p (main thread, before it
 * starts).  0 or MGW_ENOMEM. */
int mgw_worker_set_park(struct mgw_worker *w, struct mgw_park *p);
/* Main thread: waits (at most timeout seconds) until the n workers are
 * parked.  0, or MGW_ETIMEDOUT (then none stays parked). */
int mgw_workers_park(struct mgw_park *p, struct mgw_worker **w, unsigned n,
                     double timeout);
/* Main thread: lets the parked workers go on. */
void mgw_workers_release(struct mgw_park *p);
/* While parked: requests read from now on go to pl (its liveness is
 * taken over); the worker's previous pipeline is retired, freed on the
 * worker's thread once idle (mgw_pipeline_idle), and *old_gen_refs
 * decremented then (may be NULL).  0 or MGW_ENOMEM (nothing changed). */
int mgw_worker_swap(struct mgw_worker *w, struct mgw_pipeline *pl,
                    atomic_int *old_gen_refs);
/* While parked: closes the worker's listener bound to bound; its
 * connections carry on.  0 or MGW_EINVAL. */
int mgw_worker_unlisten(struct mgw_worker *w, const char *bound);

/* Makes the worker count into block w->index of m (its requests, its
 * listeners' connections) and answer GET /metrics from all of m.  Main
 * thread, before mgw_worker_listen; m outlives the worker. */
struct mgw_metrics;
void mgw_worker_set_metrics(struct mgw_worker *w, struct mgw_metrics *m);

/* Makes w's pipelines (this one and every one a reload swaps in) take
 * the routes' rate-limit buckets from t.  Main thread, before
 * mgw_worker_start; t outlives the worker. */
struct mgw_rl_table;
void mgw_worker_set_ratelimit(struct mgw_worker *w, struct mgw_rl_table *t);

/* The same for the requestState digests of the routes' mrtr: guard
 * (mrtr_set.h); s outlives the worker. */
struct mgw_mrtr_set;
void mgw_worker_set_mrtr(struct mgw_worker *w, struct mgw_mrtr_set *s);

/* Starts the thread, which runs the loop until stopped.  SIGTERM and
 * SIGINT stay blocked in it (the main thread handles them).  Returns 0 or
 * MGW_EIO. */
int mgw_worker_start(struct mgw_worker *w);

/* Asks the worker to stop gracefully.  Safe from any thread, idempotent. */
void mgw_worker_stop(struct mgw_worker *w);

/* 1 once the worker's loop has ended. */
int mgw_worker_exited(const struct mgw_worker *w);

/* Waits for the thread to end (no-op if it never started). */
void mgw_worker_join(struct mgw_worker *w);

/* Frees a joined (or never started) worker: its server (aborting what is
 * left), forwarder and loop.  NULL allowed. */
void mgw_worker_free(struct mgw_worker *w);

#endif
