/* report_md.h - report.md (a table per scene in the study's shape) and
 * report.csv (one row per cell), both rendered from the report.json
 * object alone, so either can be re-made from a kept report.json. */
#ifndef MGW_BENCH_REPORT_MD_H
#define MGW_BENCH_REPORT_MD_H

#include <stdio.h>

#include <jansson.h>

/* The table's header row, exactly as every scene's table starts. */
#define MGW_BENCH_MD_HEADER                                                  \
	"| cell | users | n | achieved rps, median (range) | p50 ms | "      \
	"p99 ms | session losses | handle losses | deleted served | "         \
	"other failures | re-pins |"

/* Writes the Markdown report of report (machine, versions, then per scene
 * its conditions, table, saturation legend and the invalid repetitions
 * with their reasons) to f.  Returns 0, or MGW_EIO when writing failed. */
int mgw_bench_report_md(FILE *f, const json_t *report);

/* Writes one table of a scene object (header, alignment row, a row per
 * cell) to f.  Returns 0 or MGW_EIO. */
int mgw_bench_report_md_table(FILE *f, const json_t *scene);

/* The mrtr, fork and tasks scenes' second table (state_table.h: a header,
 * the alignment row, a row per cell); nothing for other scenes.  Returns
 * 0 or MGW_EIO. */
int mgw_bench_report_md_state_table(FILE *f, const json_t *scene);

/* Writes report.csv: a header line, then one line per cell of every scene
 * (RFC 4180 quoting).  Returns 0 or MGW_EIO. */
int mgw_bench_report_csv(FILE *f, const json_t *report);

#endif
