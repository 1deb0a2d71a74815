/* engine.h - the scheduler of `mcpgw load`: runs the phases of a plan with
 * a pool of virtual users (agents, see agent.h), in a closed loop
 * (concurrency users, optional think time) or an open loop (a fixed
 * arrival rate on absolute intended times, a bounded backlog, shed ticks),
 * and feeds every outcome to the statistics (stats.h).
 *
 * Time comes from the monotonic clock (mgw_now_ns); every timer is
 * computed from an absolute target, so lateness never accumulates.  The
 * event_base should be created with EVENT_BASE_FLAG_PRECISE_TIMER. */
#ifndef MGW_LOAD_ENGINE_H
#define MGW_LOAD_ENGINE_H

#include <stddef.h>

#include <event2/event.h>

#include "load/load-t.h"
#include "load/stats-t.h"

struct mgw_load_engine;

/* The run ended (finished callback) / one second of the run passed
 * (progress callback; the timeline has a row for it). */
typedef void (*mgw_load_engine_cb)(struct mgw_load_engine *e, void *arg);

/* Prepares a run of conf (borrowed; must outlive the engine and already be
 * validated, see mgw_load_conf_check): the HTTP client, the TLS context
 * for https targets (verifying against conf->transport.ca_file), the auth
 * headers (env: values read now), the call specs and the statistics.
 * Returns NULL with a message in err on a configuration problem (an
 * unreadable CA file, an unset environment variable) or no memory. */
struct mgw_load_engine *mgw_load_engine_new(struct event_base *base,
                                            const struct mgw_load_conf *conf,
                                            char *err, size_t errlen);

/* Frees the engine and its agents (no callbacks).  Not from inside one of
 * its own callbacks.  NULL allowed. */
void mgw_load_engine_free(struct mgw_load_engine *e);

/* Starts the first phase from the loop.  finished runs once, from the
 * loop, after the last phase drained and every agent was closed;
 * progress (may be NULL) runs once a second.  Returns 0, or MGW_EINVAL if
 * already started. */
int mgw_load_engine_start(struct mgw_load_engine *e,
                          mgw_load_engine_cb finished,
                          mgw_load_engine_cb progress, void *arg);

/* Interrupts the run (SIGINT): the current phase stops starting calls,
 * the calls in flight finish (bounded by the timeout), later phases are
 * skipped, and the run finishes normally with stats->interrupted set. */
void mgw_load_engine_stop(struct mgw_load_engine *e);

/* The measurements; complete once finished ran, live before. */
const struct mgw_load_stats *mgw_load_engine_stats(
	const struct mgw_load_engine *e);

/* The phase running now (n_phases once finished). */
size_t mgw_load_engine_phase(const struct mgw_load_engine *e);

/* Calls in flight now. */
size_t mgw_load_engine_inflight(const struct mgw_load_engine *e);

/* A draw of the think time t (seconds) from a uniform random number u in
 * [0, 1) and a second one v deciding short or long; exposed for tests. */
double mgw_load_think_draw(const struct mgw_load_think *t, double u, double v);

#endif
