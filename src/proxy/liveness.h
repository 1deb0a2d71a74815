/* liveness.h - the gateway's own state that every worker reads: is every
 * worker's event loop turning, and is the process draining?  Each worker stamps
 * its slot from a timer on its own loop every MGW_LIVENESS_BEAT_MS; a slot
 * older than MGW_LIVENESS_STALE_MS means that loop is stuck (or its
 * thread gone).  GET /mcpgw/healthz reads it (check_health.c).  Slots are
 * atomics: written by their worker, read by any. */
#ifndef MGW_PROXY_LIVENESS_H
#define MGW_PROXY_LIVENESS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MGW_LIVENESS_BEAT_MS 1000
#define MGW_LIVENESS_STALE_MS 5000

struct mgw_liveness {
	size_t n;
	atomic_uint_fast64_t *beat;   /* monotonic ms of the last stamp */
	atomic_int draining;          /* set once a stop was asked for:
	                               * GET /mcpgw/readyz answers 503 */
};

/* n slots, every one stamped now.  NULL on no memory. */
struct mgw_liveness *mgw_liveness_new(size_t n, uint64_t now);
void mgw_liveness_free(struct mgw_liveness *l);    /* NULL allowed */

/* Worker i's loop ran at now. */
void mgw_liveness_beat(struct mgw_liveness *l, size_t i, uint64_t now);

/* The number of slots stale at now; the first of them in *first. */
size_t mgw_liveness_stale(const struct mgw_liveness *l, uint64_t now,
                          size_t *first);

/* The process is stopping (readiness off); never cleared. */
void mgw_liveness_set_draining(struct mgw_liveness *l);
int mgw_liveness_draining(const struct mgw_liveness *l);  /* NULL: 0 */

#endif
