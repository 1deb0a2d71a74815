/* sf_bus.h - re-pins told to every worker of the process, so that each
 * closes its own GET streams of a session that moved (stateful.c).
 *
 * The session table is shared by the workers (the stores are per
 * process), but each worker relays its own streams from its own loop.
 * The worker whose request re-pinned a session publishes (session id,
 * new pin generation); every other worker's subscription is woken by an
 * event on its loop and reads what it has not read yet, and closes its
 * streams of that session opened under an older generation (so a late
 * read never closes a stream opened on a newer pin).  Bounded: the ring
 * keeps the last MGW_SF_BUS_SLOTS re-pins; a worker that fell further
 * behind skips the lost ones (counted), as its streams of those sessions
 * end anyway when their replica fails. */
#ifndef MGW_PROXY_SF_BUS_H
#define MGW_PROXY_SF_BUS_H

#include <event2/event.h>

#include "proxy/sf_bus-t.h"

/* Returns 0 or MGW_ENOMEM. */
int mgw_sf_bus_init(struct mgw_sf_bus *bus);
/* Once no subscription is left. */
void mgw_sf_bus_deinit(struct mgw_sf_bus *bus);

/* Subscribes a worker (its loop base): cb(arg, sid, gen) runs there for
 * every re-pin published from now on (its own included, once it is woken
 * by another's: they are harmless to read again).  NULL on
 * no memory. */
struct mgw_sf_bus_sub *mgw_sf_bus_subscribe(
	struct mgw_sf_bus *bus, struct event_base *base,
	void (*cb)(void *arg, const char *sid, uint32_t gen), void *arg);
/* The subscriber's thread.  NULL allowed. */
void mgw_sf_bus_unsubscribe(struct mgw_sf_bus_sub *s);

/* From the re-pinning worker (its own subscription from, which is not
 * woken): the session sid has pin generation gen.  Returns 0 or
 * MGW_ENOMEM (then the others are not told). */
int mgw_sf_bus_publish(struct mgw_sf_bus_sub *from, const char *sid,
                       uint32_t gen);

/* Entries overwritten before some worker read them. */
uint64_t mgw_sf_bus_missed(struct mgw_sf_bus *bus);

#endif
