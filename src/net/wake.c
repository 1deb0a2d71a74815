/* wake.c - waking an event loop from another thread (wake.h). */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/errors.h"
#include "net/wake.h"

struct wake_hub {
	struct event_base *base;
	int fd;                 /* the eventfd every ring writes */
	struct event *ev;       /* its read event, on base */
	pthread_mutex_t mu;     /* guards wakes */
	struct mgw_wake *wakes; /* every wake of the base */
	struct mgw_wake *fired; /* rung, not yet run (the loop's thread) */
	struct wake_hub *next;  /* the registry */
};

struct mgw_wake {
	struct wake_hub *hub;   /* NULL: a plain event */
	struct event *ev;       /* without a hub */
	void (*cb)(void *arg);
	void *arg;
	atomic_int rung;
	struct mgw_wake *next;  /* hub->wakes */
	struct mgw_wake *fnext; /* hub->fired */
};

/* The bases that have a hub: looked up when a wake is made (rare). */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wake_hub *reg;

static struct wake_hub *hub_of(struct event_base *base)
{
	struct wake_hub *h;

	pthread_mutex_lock(&reg_mu);
	for (h = reg; h && h->base != base; h = h->next)
		;
	pthread_mutex_unlock(&reg_mu);
	return h;
}

/* The loop's thread: every wake rung since the last read runs once.  The
 * rung ones are taken under the mutex, run without it (a callback may
 * make or free wakes). */
static void on_hub(evutil_socket_t fd, short what, void *arg)
{
	struct wake_hub *h = arg;
	struct mgw_wake *w;
	uint64_t n;

	(void)what;
	while (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		;
	pthread_mutex_lock(&h->mu);
	for (w = h->wakes; w; w = w->next)
		if (atomic_exchange(&w->rung, 0)) {
			w->fnext = h->fired;
			h->fired = w;
		}
	pthread_mutex_unlock(&h->mu);
	while ((w = h->fired) != NULL) {
		h->fired = w->fnext;
		w->cb(w->arg);
	}
}

int mgw_wake_hub_attach(struct event_base *base)
{
	struct wake_hub *h = calloc(1, sizeof(*h));

	if (!h)
		return MGW_ENOMEM;
	h->base = base;
	h->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->fd < 0) {
		free(h);
		return MGW_EIO;
	}
	if (pthread_mutex_init(&h->mu, NULL) != 0)
		goto fail_fd;
	h->ev = event_new(base, h->fd, EV_READ | EV_PERSIST, on_hub, h);
	if (!h->ev || event_add(h->ev, NULL) != 0)
		goto fail_mu;
	pthread_mutex_lock(&reg_mu);
	h->next = reg;
	reg = h;
	pthread_mutex_unlock(&reg_mu);
	return 0;
fail_mu:
	if (h->ev)
		event_free(h->ev);
	pthread_mutex_destroy(&h->mu);
fail_fd:
	close(h->fd);
	free(h);
	return MGW_ENOMEM;
}

void mgw_wake_hub_detach(struct event_base *base)
{
	struct wake_hub *h = NULL;

	pthread_mutex_lock(&reg_mu);
	for (struct wake_hub **p = &reg; *p; p = &(*p)->next)
		if ((*p)->base == base) {
			h = *p;
			*p = h->next;
			break;
		}
	pthread_mutex_unlock(&reg_mu);
	if (!h)
		return;
	event_free(h->ev);
	close(h->fd);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static void on_plain(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_wake *w = arg;

	(void)fd;
	(void)what;
	w->cb(w->arg);
}

struct mgw_wake *mgw_wake_new(struct event_base *base, void (*cb)(void *arg),
                              void *arg)
{
	struct mgw_wake *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->cb = cb;
	w->arg = arg;
	atomic_init(&w->rung, 0);
	w->hub = hub_of(base);
	if (!w->hub) {
		w->ev = event_new(base, -1, 0, on_plain, w);
		if (!w->ev) {
			free(w);
			return NULL;
		}
		return w;
	}
	pthread_mutex_lock(&w->hub->mu);
	w->next = w->hub->wakes;
	w->hub->wakes = w;
	pthread_mutex_unlock(&w->hub->mu);
	return w;
}

void mgw_wake_ring(struct mgw_wake *w)
{
	uint64_t one = 1;

	if (!w->hub) {
		event_active(w->ev, EV_READ, 0); /* a locked base: thread-safe */
		return;
	}
	atomic_store(&w->rung, 1);
	/* an eventfd write fails only when its counter would pass 2^64 - 2 */
	while (write(w->hub->fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void mgw_wake_free(struct mgw_wake *w)
{
	struct wake_hub *h;

	if (!w)
		return;
	h = w->hub;
	if (!h) {
		event_free(w->ev);
		free(w);
		return;
	}
	pthread_mutex_lock(&h->mu);
	for (struct mgw_wake **p = &h->wakes; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_mutex_unlock(&h->mu);
	/* rung and taken by a run in progress (a callback frees it) */
	for (struct mgw_wake **p = &h->fired; *p; p = &(*p)->fnext)
		if (*p == w) {
			*p = w->fnext;
			break;
		}
	free(w);
}
