/* report_html_losses.h - the top of report.html: a summary of what was
 * lost and a chart of failed requests per cell by kind, with the numbers
 * in a table under it.  Private to bench/src/report_html*.c. */
#ifndef MGW_BENCH_REPORT_HTML_LOSSES_H
#define MGW_BENCH_REPORT_HTML_LOSSES_H

#include <stdio.h>

#include <jansson.h>

/* Writes, for report (the report.json object), a one-paragraph summary
 * (cells, scenes, failed requests in all, the cell that lost most, and
 * whether the run is incomplete), then one stacked bar chart of every
 * scene's cells (<svg class="losses">: a bar per cell, one segment per
 * failure kind, the total beside it), then a table of the same numbers.
 * The counts are a cell's "failures" object (the sums per kind over its
 * valid repetitions, aggregate.c); a cell without one falls back to
 * "session_losses", "handle_losses" and "other_failures"; a cell without
 * either had no valid repetition and is drawn as such, never as zero.
 * Negative or non-finite counts are ignored.  Every name is escaped.
 * Returns 0, or MGW_ENOMEM. */
int mgw_html_losses(FILE *f, const json_t *report);

#endif
