/* report.h - what `mcpgw load` tells: the JSON report (the shape the bench
 * and CI parse; see doc/load.md), the per-second timeline as CSV, the
 * table on the terminal and the live progress line. */
#ifndef MGW_LOAD_REPORT_H
#define MGW_LOAD_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "load/gates.h"
#include "load/load-t.h"
#include "load/stats-t.h"

/* The whole report: version, dialect (the era the agents found), config
 * (the effective plan, secrets left out), phases, total, timeline and
 * gates.  Returns a new reference, or NULL on no memory. */
json_t *mgw_load_report_json(const struct mgw_load_conf *c,
                             const struct mgw_load_stats *st,
                             const struct mgw_load_gate_result *g);

/* Writes the report to path ("-": stdout), indented, newline-terminated.
 * Returns 0 or MGW_EIO with a message in err. */
int mgw_load_report_write_json(const json_t *report, const char *path,
                               char *err, size_t errlen);

/* Writes the timeline as CSV (a header line, then one line per second)
 * to path ("-": stdout).  Returns 0 or MGW_EIO with a message in err. */
int mgw_load_report_write_csv(const struct mgw_load_stats *st,
                              const char *path, char *err, size_t errlen);

/* The terminal table: one row per phase that ran, then the total, the
 * failures by kind and the gates. */
void mgw_load_report_table(FILE *out, const struct mgw_load_conf *c,
                           const struct mgw_load_stats *st,
                           const struct mgw_load_gate_result *g);

/* One live progress line for a terminal ("\r" + erase + text, no
 * newline): the running phase, its elapsed time, requests, ok %, rps,
 * the last second's p50/p99, calls in flight, shed and losses. */
void mgw_load_report_progress(FILE *out, const struct mgw_load_conf *c,
                              const struct mgw_load_stats *st, size_t phase,
                              size_t inflight, uint64_t now);

/* The counts so far as one object, for --progress-file: t_s (seconds
 * since the engine start), requests, ok, failed, failures by kind (the
 * report's names), shed, reinitializations, in_flight, finished; summed
 * over every phase that ran, warm-up included.  New reference or NULL. */
json_t *mgw_load_report_progress_json(const struct mgw_load_stats *st,
                                     size_t inflight, uint64_t now);

/* Erases the progress line. */
void mgw_load_report_progress_clear(FILE *out);

#endif
