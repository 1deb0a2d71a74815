/* report_html_timeline.h - the per-second charts of report.html: for each
 * cell whose run files carry kill records, successes and failures per
 * second over the run with the kill and the replacement's readiness
 * marked.  Private to bench/src/report_html*.c. */
#ifndef MGW_BENCH_REPORT_HTML_TIMELINE_H
#define MGW_BENCH_REPORT_HTML_TIMELINE_H

#include <stdio.h>

#include <jansson.h>

/* Writes the per-second charts of one scene's cells (the scene's "cells"
 * array) to f, reading each cell's run files ("runs", relative to run_dir
 * unless absolute).  Every chart of the scene has the same axes: the
 * successes panel, the failures panel and the time axis each run to the
 * largest value over all the scene's charts, so two cells compare by eye.
 * A cell with run files but no readable valid run gets a note instead
 * (missing files, kills that did not land); cells whose runs carry no
 * kill records get nothing.  Returns 0, or MGW_ENOMEM. */
int mgw_html_scene_timelines(FILE *f, const json_t *cells, const char *run_dir);

#endif
