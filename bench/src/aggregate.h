/* aggregate.h - from the repetitions of a cell to its row: the rules
 * the report promises (and the tests recompute from the run files). */
#ifndef MGW_BENCH_AGGREGATE_H
#define MGW_BENCH_AGGREGATE_H

#include <stddef.h>

#include <jansson.h>

#include "bench/src/bench-t.h"

/* A cell is saturated when its median achieved rate is below this share
 * of the offered rate. */
#define MGW_BENCH_SATURATION 0.95

/* Median of v[0..n) (v is sorted in place): the middle value, or the mean
 * of the two middle values when n is even.  NAN when n is 0. */
double mgw_bench_median(double *v, size_t n);

/* The failure kinds of a load report's "failures" object that the table
 * sums as "other failures": every kind except session_lost, handle_lost,
 * state_lost and task_lost, which have columns (NULL-terminated). */
extern const char *const mgw_bench_other_failures[];

/* Builds the report.json object of cell c from its repetitions.  runs is
 * an array of run records (the files under runs/, see doc/bench.md), and
 * paths the array of their paths relative to the output directory (the
 * cell's "runs").  Only records with "valid": true count:
 *  - achieved_rps: median, min, max of load.total.achieved_rps;
 *  - p50_ms, p99_ms: medians of load.total.latency_ms.p50 / .p99 (runs
 *    without a latency are left out);
 *  - session_losses, handle_losses, state_losses, task_losses,
 *    other_failures, failures (per kind; in the fork scene also
 *    "forked"), reinitializations: sums;
 *  - cells of the mrtr, fork and tasks scenes (c->flow) also: flow, keep,
 *    guard, affinity; dialogues, rounds, represented, forked, refused,
 *    tasks, task_polls (sums of the load totals); task_owner_gone and
 *    guard_refused (sums of the gateways' counters after the run, null
 *    without them); state_bytes_per_round (the replicas' request-state
 *    bytes / states issued) and store_ops_per_dialogue (their Redis
 *    commands for request states / dialogues completed; null unless
 *    redis);
 *  - repins: the sum of the records' "repins" (null when none has one);
 *  - saturated: median < 95 % of the offered rate.
 * n counts every repetition, valid the valid ones; "invalid" lists the
 * others with their reason; "cooldown_timeouts" lists the valid ones
 * whose cooldown gave up with TIME_WAIT sockets still at or above its
 * threshold (counted, but shown).  With no valid repetition the numbers are
 * null.  Returns a new reference, or NULL when out of memory. */
json_t *mgw_bench_aggregate(const struct mgw_bench_cell *c, const json_t *runs,
                            const json_t *paths);

#endif
