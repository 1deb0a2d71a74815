/* state_table.h - the second table of the mrtr, fork and tasks scenes:
 * what the request states and tasks did in each cell (dialogues, state
 * losses, re-presentations, task losses, the state's bytes and store
 * operations).  One column list per scene, shared by report.md and
 * report.html so both show the same numbers. */
#ifndef MGW_BENCH_STATE_TABLE_H
#define MGW_BENCH_STATE_TABLE_H

#include <jansson.h>

struct mgw_bench_state_col {
	const char *head; /* column header (plain text) */
	const char *key;  /* the cell object's key */
};

/* The columns for scene name (report.json "scene"), ended by an entry
 * whose head is NULL; NULL when the scene has no second table. */
const struct mgw_bench_state_col *mgw_bench_state_cols(const char *scene);

/* A cell's value as the tables print it: an integer as it is, a real
 * with one decimal, anything else (null, missing) as an en dash. */
void mgw_bench_state_value(const json_t *v, char *buf, size_t len);

#endif
