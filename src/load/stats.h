/* stats.h - collecting the measurements of a `mcpgw load` run (types in
 * stats-t.h).  The engine reports every event with the monotonic time it
 * happened; the per-second timeline is cut from those times, so it does
 * not depend on timers firing on time. */
#ifndef MGW_LOAD_STATS_H
#define MGW_LOAD_STATS_H

#include <stdint.h>

#include "load/load-t.h"
#include "load/stats-t.h"

/* Statistics for the phases and calls of conf (borrowed: the phase names
 * must outlive the result).  Calls sharing a name share a tool row.
 * Returns NULL on no memory. */
struct mgw_load_stats *mgw_load_stats_new(const struct mgw_load_conf *conf);

/* NULL allowed. */
void mgw_load_stats_free(struct mgw_load_stats *st);

/* The run starts at now (second 0 of the timeline). */
void mgw_load_stats_start(struct mgw_load_stats *st, uint64_t now);

/* Phase p starts / stops starting calls / has seen its last call end. */
void mgw_load_stats_phase_start(struct mgw_load_stats *st, size_t p,
                                uint64_t now);
void mgw_load_stats_phase_issue_end(struct mgw_load_stats *st, size_t p,
                                    uint64_t now);
void mgw_load_stats_phase_end(struct mgw_load_stats *st, size_t p,
                              uint64_t now);

/* A call of plan entry call, started in phase p, ended at now with r.
 * lat_ns and svc_ns are its two latencies (see struct mgw_load_row). */
void mgw_load_stats_call(struct mgw_load_stats *st, size_t p, size_t call,
                         const struct mgw_load_result *r, uint64_t lat_ns,
                         uint64_t svc_ns, uint64_t now);

/* An open-loop tick of plan entry call in phase p was shed at now. */
void mgw_load_stats_shed(struct mgw_load_stats *st, size_t p, size_t call,
                         uint64_t now);

/* Closes every timeline second that ended before now (empty seconds get
 * rows too), so a live view sees them. */
void mgw_load_stats_advance(struct mgw_load_stats *st, uint64_t now);

/* Ends the run at now: closes the last (partial) second and computes the
 * totals over the non-warmup phases that ran.  Returns 0 or MGW_ENOMEM. */
int mgw_load_stats_finish(struct mgw_load_stats *st, uint64_t now);

/* Derived values of a row within its phase (or total). */
double mgw_load_offered_rps(const struct mgw_load_phase_stats *ps,
                            const struct mgw_load_row *row);
double mgw_load_achieved_rps(const struct mgw_load_phase_stats *ps,
                             const struct mgw_load_row *row);
/* (failed + shed) / (requests + shed); 0 when nothing was attempted. */
double mgw_load_error_rate(const struct mgw_load_counts *c);
/* Sum of the failure counters (not shed). */
uint64_t mgw_load_failed(const struct mgw_load_counts *c);

/* Report name of an outcome ("ok", "session_lost", ...). */
const char *mgw_load_outcome_name(enum mgw_load_outcome o);

#endif
