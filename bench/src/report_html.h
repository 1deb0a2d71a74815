/* report_html.h - the bench's self-contained HTML report: one file, inline
 * CSS and inline SVG charts drawn here (no scripts, no fonts, no links),
 * so it opens the same from a CI artifact, a mail attachment or a laptop
 * without a network. */
#ifndef MGW_BENCH_REPORT_HTML_H
#define MGW_BENCH_REPORT_HTML_H

#include <jansson.h>

/* Renders report (the report.json object: machine, versions, scenes) as
 * HTML into out_path.  First a summary and the losses chart: failed
 * requests per cell stacked by kind, each scene on its own axis, with a
 * table of the numbers (report_html_losses.h).  Then for every scene a
 * table in the shape of report.md, a bar chart of achieved requests/s
 * per cell (median, min–max whiskers, the offered rate marked) and, for
 * every cell whose run files carry kill records, a chart of successes and
 * failures per second with a marker at each kill, all of a scene's on the
 * same axes (report_html_timeline.h).  Last the machine, versions, run
 * and options tables.  Run files are read from the paths in each cell's
 * "runs", relative to run_dir (the bench's output directory); a missing
 * or unreadable run file only drops that run from the chart (a cell
 * without any readable run gets a note instead of a chart).  Every text
 * taken from the report is HTML-escaped.  The file is written to
 * out_path.tmp and renamed, so a reader never sees half a report.
 * Returns 0, MGW_EINVAL when report is not an object or its "scenes" is
 * not an array, MGW_ENOMEM, or MGW_EIO when the file cannot be
 * written. */
int mgw_bench_report_html(const json_t *report, const char *run_dir,
                          const char *out_path);

/* `mcpgw-bench html DIR`: re-renders DIR/report.html from DIR/report.json
 * (argv[0] is "html").  Returns a process exit status: 0 on success, 1
 * when the report cannot be read or written, 2 on a usage error. */
int mgw_bench_html_main(int argc, char **argv);

#endif
