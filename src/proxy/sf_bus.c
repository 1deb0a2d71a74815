/* sf_bus.c - re-pins told to every worker (sf_bus.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "net/wake.h"
#include "proxy/sf_bus.h"

int mgw_sf_bus_init(struct mgw_sf_bus *bus)
{
	memset(bus, 0, sizeof(*bus));
	return pthread_mutex_init(&bus->mu, NULL) == 0 ? 0 : MGW_ENOMEM;
}

void mgw_sf_bus_deinit(struct mgw_sf_bus *bus)
{
	for (size_t i = 0; i < MGW_SF_BUS_SLOTS; i++) {
		free(bus->ring[i].sid);
	}
	pthread_mutex_destroy(&bus->mu);
}

/* Reads, on the subscriber's loop, what it has not read yet: copies
 * taken under the mutex, callbacks run without it. */
static void on_wake(void *arg)
{
	struct mgw_sf_bus_sub *s = arg;
	struct mgw_sf_bus *bus = s->bus;
	struct mgw_sf_bus_entry got[MGW_SF_BUS_SLOTS];
	size_t n = 0;

	pthread_mutex_lock(&bus->mu);
	if (bus->seq - s->next > MGW_SF_BUS_SLOTS) {
		bus->missed += bus->seq - s->next - MGW_SF_BUS_SLOTS;
		s->next = bus->seq - MGW_SF_BUS_SLOTS;
	}
	for (; s->next < bus->seq; s->next++) {
		struct mgw_sf_bus_entry *e = &bus->ring[s->next % MGW_SF_BUS_SLOTS];

		got[n].sid = e->sid ? strdup(e->sid) : NULL;
		got[n].gen = e->gen;
		n++;
	}
	pthread_mutex_unlock(&bus->mu);
	for (size_t i = 0; i < n; i++) {
		if (got[i].sid)
			s->cb(s->arg, got[i].sid, got[i].gen);
		free(got[i].sid);
	}
}

struct mgw_sf_bus_sub *mgw_sf_bus_subscribe(
	struct mgw_sf_bus *bus, struct event_base *base,
	void (*cb)(void *arg, const char *sid, uint32_t gen), void *arg)
{
	struct mgw_sf_bus_sub *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->bus = bus;
	s->cb = cb;
	s->arg = arg;
	s->wake = mgw_wake_new(base, on_wake, s);
	if (!s->wake) {
		free(s);
		return NULL;
	}
	pthread_mutex_lock(&bus->mu);
	s->next = bus->seq;
	s->snext = bus->subs;
	bus->subs = s;
	pthread_mutex_unlock(&bus->mu);
	return s;
}

void mgw_sf_bus_unsubscribe(struct mgw_sf_bus_sub *s)
{
	struct mgw_sf_bus *bus;

	if (!s)
		return;
	bus = s->bus;
	pthread_mutex_lock(&bus->mu);
	for (struct mgw_sf_bus_sub **p = &bus->subs; *p; p = &(*p)->snext)
		if (*p == s) {
			*p = s->snext;
			break;
		}
	/* under the mutex: no publisher rings it any more */
	mgw_wake_free(s->wake);
	pthread_mutex_unlock(&bus->mu);
	free(s);
}

int mgw_sf_bus_publish(struct mgw_sf_bus_sub *from, const char *sid,
                       uint32_t gen)
{
	struct mgw_sf_bus *bus = from->bus;
	char *a = strdup(sid);
	struct mgw_sf_bus_entry *e;

	if (!a)
		return MGW_ENOMEM;
	pthread_mutex_lock(&bus->mu);
	e = &bus->ring[bus->seq % MGW_SF_BUS_SLOTS];
	free(e->sid);
	e->sid = a;
	e->gen = gen;
	bus->seq++;
	for (struct mgw_sf_bus_sub *s = bus->subs; s; s = s->snext)
		if (s != from)
			mgw_wake_ring(s->wake);
	pthread_mutex_unlock(&bus->mu);
	return 0;
}

uint64_t mgw_sf_bus_missed(struct mgw_sf_bus *bus)
{
	uint64_t n;

	pthread_mutex_lock(&bus->mu);
	n = bus->missed;
	pthread_mutex_unlock(&bus->mu);
	return n;
}
