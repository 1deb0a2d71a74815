/* soak_report.h - what a soak's run record says: the gateway's RSS and
 * open descriptors after the warm-up, at the end and at most, their
 * growth, the calls lost by reason, the kills made, and the verdict on
 * each target; and the text summary printed at the end of a soak.  Pure
 * functions of the record (tests/unit/bench/soak_report_test.c). */
#ifndef MGW_BENCH_SOAK_REPORT_H
#define MGW_BENCH_SOAK_REPORT_H

#include <stdio.h>

#include <jansson.h>

/* The targets of a soak (--max-growth, --max-losses) and where the
 * warm-up ends. */
struct mgw_bench_soak_targets {
	double max_growth_pct;  /* RSS and descriptors, end against start */
	long long max_losses;   /* failed calls, every reason summed */
	double warmup_s;        /* the start sample is the first due at or
	                         * after this */
	int kills_planned;      /* mgw_bench_cell_kill_times() */
	double offered_rps;
};

/* The results of run record rec (doc/bench.md, "soak"):
 *   samples: [{t_s, rss_kib, fds, done, lost, kills}] (done/lost: the
 *     load client's calls ended / failed so far, null before its first
 *     progress write),
 *   rss_kib / fds: {start, start_t_s, end, end_t_s, max, growth_pct},
 *   load: {requests, ok, achieved_rps, p50_ms, p99_ms, shed},
 *   losses: {total, by_reason: {kind: n}} (kinds with n > 0),
 *   first_failures: the load client's (what each of the first said),
 *   kills: {planned, done, verified, at_s: [..]},
 *   gateway: {replayed, refused, repinned} from its last counters,
 *   targets: [{name, limit, value, passed}], passed, valid,
 *   invalid_reason.
 * A growth that cannot be computed (no sample after the warm-up, or a
 * start of 0) is null and its target fails: nothing measured is never a
 * pass.  Returns a new reference, or NULL when out of memory. */
json_t *mgw_bench_soak_results(const json_t *rec,
                               const struct mgw_bench_soak_targets *t);

/* The text summary of results (the object above) to f: figures, losses
 * by reason, the targets each with PASS or MISS, the verdict. */
void mgw_bench_soak_summary(FILE *f, const json_t *results);

#endif
