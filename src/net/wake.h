/* wake.h - waking an event loop from another thread.
 *
 * The workers' loops run without libevent's locks
 * (EVENT_BASE_FLAG_NOLOCK): a proxied request took some 18 lock and
 * unlock pairs of the base's mutex, about 1,200 instructions, for the
 * few calls that come from another thread (the main thread's stop, park
 * and key-set news, a worker's re-pin news to the others).  Such a base
 * gets a hub (mgw_wake_hub_attach): one eventfd in its loop, and the
 * wakes of the base.  Any thread rings a wake; the loop's thread reads
 * the eventfd and runs the callback of every wake rung since.  On a base
 * without a hub (the main thread's, which keeps its locks; a test's), a
 * wake is a plain event that event_active wakes, which is thread-safe
 * there.  Callers choose by the base alone.
 *
 * A wake must outlive every ring of it, as an event had to: the callers
 * ring and free under a lock of their own (sf_bus, keyring), or free it
 * after the threads that ring are done (worker). */
#ifndef MGW_NET_WAKE_H
#define MGW_NET_WAKE_H

#include <event2/event.h>

struct mgw_wake;

/* Gives base a hub: the wakes made for it from now on go through one
 * eventfd.  For a base made with EVENT_BASE_FLAG_NOLOCK, before any
 * thread but its own may ring.  Returns 0, MGW_ENOMEM or MGW_EIO. */
int mgw_wake_hub_attach(struct event_base *base);
/* Takes base's hub away (after its wakes are freed, before the base is);
 * nothing when it has none. */
void mgw_wake_hub_detach(struct event_base *base);

/* A wake on base: cb(arg) runs on base's loop after a ring.  Rings that
 * come before the callback ran are one run.  NULL on no memory. */
struct mgw_wake *mgw_wake_new(struct event_base *base, void (*cb)(void *arg),
                              void *arg);
/* From any thread. */
void mgw_wake_ring(struct mgw_wake *w);
/* On base's thread (or while its loop does not run); a ring not yet run
 * is dropped.  NULL allowed. */
void mgw_wake_free(struct mgw_wake *w);

#endif
