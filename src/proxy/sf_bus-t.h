/* sf_bus-t.h - how the workers of one `mcpgw serve` tell each other that a
 * session moved (types only; see sf_bus.h). */
#ifndef MGW_PROXY_SF_BUS_T_H
#define MGW_PROXY_SF_BUS_T_H

#include <pthread.h>
#include <stdint.h>

/* Re-pins remembered for workers that have not read them yet. */
#define MGW_SF_BUS_SLOTS 256

struct event;
struct mgw_sf_bus_sub;

/* One re-pin: the session (client id) got pin generation gen. */
struct mgw_sf_bus_entry {
	char *sid;
	uint32_t gen;
};

struct mgw_wake;

/* The process's bus: a ring of the latest re-pins under a mutex (taken
 * when a worker re-pins and when a worker reads, never on the request
 * path) and the workers listening, each woken on its own loop
 * (net/wake.h). */
struct mgw_sf_bus {
	pthread_mutex_t mu;
	uint64_t seq;                   /* re-pins published so far */
	struct mgw_sf_bus_entry ring[MGW_SF_BUS_SLOTS]; /* seq % SLOTS */
	struct mgw_sf_bus_sub *subs;
	uint64_t missed;                /* entries overwritten before a
	                                 * worker read them */
};

/* A worker listening: cb runs on its loop for each re-pin another
 * worker published. */
struct mgw_sf_bus_sub {
	struct mgw_sf_bus *bus;
	struct mgw_wake *wake;          /* rung by the other workers */
	uint64_t next;                  /* the next seq to read */
	void (*cb)(void *arg, const char *sid, uint32_t gen);
	void *arg;
	struct mgw_sf_bus_sub *snext;
};

#endif
