/* worker.c - event-loop threads of `mcpgw serve`: creation on the main
 * thread, the thread body, the cross-thread stop and the cleanup. */
#include "autoconf.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/listener.h"
#include "net/wake.h"
#include "proxy/errors.h"
#include "proxy/liveness.h"
#include "proxy/metrics.h"
#include "proxy/pipeline.h"
#include "proxy/worker.h"
#include "util/heaptrim.h"
#include "util/jalloc.h"
#include "util/time.h"

static void on_shutdown_done(void *arg)
{
	struct mgw_worker *w = arg;

	event_base_loopexit(w->base, NULL);
}

/* Runs on the worker's own thread (rung from the main thread). */
static void on_stop(void *arg)
{
	struct mgw_worker *w = arg;

	mgw_debug(NULL, "worker %u: stopping (%zu connections, %zu in flight)",
	          w->index, mgw_http_server_connections(w->http),
	          mgw_http_server_inflight(w->http));
	mgw_http_server_shutdown(w->http, w->shutdown_timeout, on_shutdown_done, w);
}

/* A worker's loop.  epoll's changelist: interest changes are applied at
 * the next epoll_wait, so the write interest a response turns on and
 * off, and the read interest a body pause toggles, cost one epoll_ctl
 * per net change instead of one per call (the fds are never dup()ed,
 * the changelist's one caveat).  No locks: only this thread touches the
 * base while its loop runs; other threads wake it through its hub
 * (net/wake.h), and the main thread changes it only while it is parked
 * (reload.c). */
static struct event_base *worker_base(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *b;

	if (!ec)
		return NULL;
	event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	event_config_set_flag(ec, EVENT_BASE_FLAG_NOLOCK);
	b = event_base_new_with_config(ec);
	event_config_free(ec);
	if (b && mgw_wake_hub_attach(b) != 0) {
		event_base_free(b);
		return NULL;
	}
	return b;
}

/* Every MGW_WORKER_TRIM_MS: the jansson blocks this thread's cache kept
 * unused for the whole period are freed, then, when the arenas hold at
 * least MGW_WORKER_TRIM_MIN_FREE free bytes, their free pages go back to
 * the kernel (util/heaptrim.h), so that the memory a burst took returns
 * toward the live set. */
static void on_trim(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_worker *w = arg;
	struct mgw_metrics_worker *mx = w->pl ? w->pl->mx : NULL;
	struct mgw_heap_trim t;
	size_t freed;

	(void)fd;
	(void)what;
	freed = mgw_jalloc_trim();
	mgw_heap_trim(MGW_WORKER_TRIM_MIN_FREE, &t);
	if (!mx)
		return;
	atomic_fetch_add(&mx->jalloc_trimmed, freed);
	if (t.trimmed) {
		atomic_fetch_add(&mx->heap_trims, 1);
		atomic_fetch_add(&mx->heap_returned, t.returned);
	}
}

static int start_trim(struct mgw_worker *w)
{
	struct timeval tv = {MGW_WORKER_TRIM_MS / 1000,
	                     (MGW_WORKER_TRIM_MS % 1000) * 1000};

	w->trim_ev = event_new(w->base, -1, EV_PERSIST, on_trim, w);
	return w->trim_ev && event_add(w->trim_ev, &tv) == 0 ? 0 : -1;
}

struct mgw_worker *mgw_worker_new(unsigned index, const struct mgw_config *cfg,
                                  const struct mgw_routes *routes,
                                  struct mgw_upstreams *ups, unsigned n_workers,
                                  struct event *exited_ev, char *err,
                                  size_t errlen)
{
	struct mgw_worker *w = calloc(1, sizeof(*w));

	if (!w)
		goto nomem;
	w->index = index;
	w->exited_ev = exited_ev;
	w->shutdown_timeout = cfg->shutdown_timeout;
	w->base = worker_base();
	if (!w->base)
		goto nomem;
	w->stop = mgw_wake_new(w->base, on_stop, w);
	if (!w->stop || start_trim(w) != 0)
		goto nomem;
	w->pl = mgw_pipeline_new(w->base, &cfg->serve, routes, ups, n_workers, 0,
	                         err, errlen);
	if (!w->pl)
		goto fail;
	{
		/* limits.max_connections is the gateway's: each worker takes
		 * its share (rounded up), as with the upstream pools */
		struct mgw_http_limits lim = cfg->limits;

		if (n_workers > 1)
			lim.max_connections = (lim.max_connections + n_workers - 1) /
			                      n_workers;
		w->http = mgw_http_server_new(w->base, &lim, mgw_pipeline_on_request,
		                              w->pl);
	}
	if (!w->http)
		goto nomem;
	mgw_http_server_set_refusal_cb(w->http, mgw_proxy_refusal_body, NULL);
	return w;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	mgw_worker_free(w);
	return NULL;
}

int mgw_worker_listen(struct mgw_worker *w, const char *address, SSL_CTX *tls,
                      int reuseport, char *bound, size_t boundlen)
{
	return mgw_http_server_listen_opts(w->http, address, tls,
	                                   reuseport ? MGW_LISTEN_REUSEPORT : 0,
	                                   bound, boundlen);
}

static void *worker_main(void *arg)
{
	struct mgw_worker *w = arg;

	event_base_dispatch(w->base);
	atomic_store(&w->exited, 1);
	if (w->exited_ev)
		event_active(w->exited_ev, EV_READ, 0);
	return NULL;
}

int mgw_worker_start(struct mgw_worker *w)
{
	sigset_t block, old;
	int rc;

	/* The thread inherits this mask: signals go to the main thread,
	 * whose loop turns them into a graceful stop. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return MGW_EIO;
	w->started = 1;
	return 0;
}

void mgw_worker_stop(struct mgw_worker *w)
{
	if (atomic_exchange(&w->stopping, 1))
		return;
	mgw_wake_ring(w->stop);
}

int mgw_worker_exited(const struct mgw_worker *w)
{
	return atomic_load(&w->exited);
}

void mgw_worker_join(struct mgw_worker *w)
{
	if (!w || !w->started)
		return;
	pthread_join(w->thread, NULL);
	w->started = 0;
}

/* Frees the retired pipelines whose work is over (worker's thread). */
static void reap_retired(struct mgw_worker *w, int all)
{
	struct mgw_retired **pp = &w->retired;

	while (*pp) {
		struct mgw_retired *r = *pp;

		if (!all && !mgw_pipeline_idle(r->pl)) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		mgw_pipeline_free(r->pl);
		if (r->gen_refs)
			atomic_fetch_sub(r->gen_refs, 1);
		free(r);
	}
}

/* Stamps this worker's liveness slot: the loop is turning; and lets go
 * of the pipelines a reload retired once they are idle. */
static void on_beat(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_worker *w = arg;

	(void)fd;
	(void)what;
	mgw_liveness_beat(w->pl->live_beats, w->index, mgw_now_ms());
	if (w->retired)
		reap_retired(w, 0);
}

/* Runs on the worker's thread: waits until the main thread releases the
 * park it asked for (the mutex orders what the main thread changed on
 * this loop meanwhile before the loop goes on). */
static void on_park(void *arg)
{
	struct mgw_worker *w = arg;
	struct mgw_park *p = w->park;
	uint64_t mine;

	pthread_mutex_lock(&p->mu);
	mine = p->want;
	p->parked++;
	pthread_cond_broadcast(&p->cv);
	while (p->released < mine)
		pthread_cond_wait(&p->cv, &p->mu);
	p->parked--;
	pthread_mutex_unlock(&p->mu);
}

int mgw_worker_set_park(struct mgw_worker *w, struct mgw_park *p)
{
	w->park = p;
	w->park_wake = mgw_wake_new(w->base, on_park, w);
	return w->park_wake ? 0 : MGW_ENOMEM;
}

int mgw_park_init(struct mgw_park *p)
{
	memset(p, 0, sizeof(*p));
	if (pthread_mutex_init(&p->mu, NULL) != 0)
		return MGW_ENOMEM;
	if (pthread_cond_init(&p->cv, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		return MGW_ENOMEM;
	}
	return 0;
}

void mgw_park_destroy(struct mgw_park *p)
{
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}

int mgw_workers_park(struct mgw_park *p, struct mgw_worker **w, unsigned n,
                     double timeout)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)timeout;
	until.tv_nsec += (long)((timeout - (double)(time_t)timeout) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->mu);
	p->want++;
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < n; i++)
		mgw_wake_ring(w[i]->park_wake);
	pthread_mutex_lock(&p->mu);
	while (p->parked < n && rc == 0)
		rc = pthread_cond_timedwait(&p->cv, &p->mu, &until);
	if (p->parked < n) {
		/* a loop that does not answer: let the others go */
		p->released = p->want;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		return MGW_ETIMEDOUT;
	}
	pthread_mutex_unlock(&p->mu);
	return 0;
}

void mgw_workers_release(struct mgw_park *p)
{
	pthread_mutex_lock(&p->mu);
	p->released = p->want;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int mgw_worker_swap(struct mgw_worker *w, struct mgw_pipeline *pl,
                    atomic_int *old_gen_refs)
{
	struct mgw_retired *r = calloc(1, sizeof(*r));

	if (!r)
		return MGW_ENOMEM;
	r->pl = w->pl;
	r->gen_refs = old_gen_refs;
	r->next = w->retired;
	w->retired = r;
	pl->live_beats = w->pl->live_beats;
	pl->metrics = w->pl->metrics;   /* the worker's counters go on */
	pl->mx = w->pl->mx;
	pl->rlt = w->pl->rlt;           /* the buckets outlive reloads */
	pl->mrtr = w->pl->mrtr;         /* and the requestState digests */
	w->pl = pl;
	mgw_http_server_set_handler(w->http, mgw_pipeline_on_request, pl);
	return 0;
}

int mgw_worker_unlisten(struct mgw_worker *w, const char *bound)
{
	return mgw_http_server_unlisten(w->http, bound);
}

int mgw_worker_set_liveness(struct mgw_worker *w, struct mgw_liveness *l)
{
	struct timeval tv = {MGW_LIVENESS_BEAT_MS / 1000,
	                     (MGW_LIVENESS_BEAT_MS % 1000) * 1000};

	w->pl->live_beats = l;
	w->beat_ev = event_new(w->base, -1, EV_PERSIST, on_beat, w);
	if (!w->beat_ev || event_add(w->beat_ev, &tv) != 0)
		return MGW_ENOMEM;
	return 0;
}

void mgw_worker_set_ratelimit(struct mgw_worker *w, struct mgw_rl_table *t)
{
	w->pl->rlt = t;
}

void mgw_worker_set_mrtr(struct mgw_worker *w, struct mgw_mrtr_set *s)
{
	w->pl->mrtr = s;
}

void mgw_worker_set_metrics(struct mgw_worker *w, struct mgw_metrics *m)
{
	w->pl->metrics = m;
	w->pl->mx = &m->w[w->index];
	mgw_http_server_set_counters(w->http, &m->w[w->index].http);
}

void mgw_worker_free(struct mgw_worker *w)
{
	if (!w)
		return;
	/* the server first: aborting its exchanges ends every request of the
	 * forwarder, which can then go */
	mgw_http_server_free(w->http);
	reap_retired(w, 1);
	mgw_pipeline_free(w->pl);
	mgw_wake_free(w->stop);
	if (w->beat_ev)
		event_free(w->beat_ev);
	if (w->trim_ev)
		event_free(w->trim_ev);
	mgw_wake_free(w->park_wake);
	if (w->base) {
		mgw_wake_hub_detach(w->base);
		event_base_free(w->base);
	}
	free(w);
}
