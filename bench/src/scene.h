/* scene.h - the scenes of the churn bench and the cells each one runs,
 * with the names reports use for scenes, paths, eras and designs. */
#ifndef MGW_BENCH_SCENE_H
#define MGW_BENCH_SCENE_H

#include <stddef.h>

#include "bench/src/bench-t.h"

/* Most cells any scene has (with an external path). */
#define MGW_BENCH_MAX_CELLS 32

/* "scale-out", "handles", "pod-kill", "gateway-kill", "redis-outage",
 * "mrtr", "fork", "tasks", "demo", "soak". */
const char *mgw_bench_scene_name(enum mgw_bench_scene s);

/* Parses a scene name.  Returns 0 or MGW_EINVAL ("all" is not a scene:
 * the command line expands it). */
int mgw_bench_scene_parse(const char *name, enum mgw_bench_scene *out);

/* One line on what the scene measures, for reports. */
const char *mgw_bench_scene_title(enum mgw_bench_scene s);

const char *mgw_bench_path_name(enum mgw_bench_path p);
const char *mgw_bench_era_name(enum mgw_bench_era e);
const char *mgw_bench_conn_name(enum mgw_bench_conn c);
/* NULL for MGW_BENCH_STATE_NONE / MGW_BENCH_STORE_NONE / VICTIM_NONE
 * (reported as JSON null). */
const char *mgw_bench_state_name(enum mgw_bench_state s);
const char *mgw_bench_store_name(enum mgw_bench_store s);
const char *mgw_bench_victim_name(enum mgw_bench_victim v);

/* The scene's defaults, before command-line overrides: offered rate
 * (200 rps scale-out, 50 mrtr/fork/tasks, 100 otherwise), run length (30 s without a kill,
 * 60 s with one; --quick: 4 s and 6 s) and kill time (20 s; --quick
 * 2 s). */
double mgw_bench_scene_rate(enum mgw_bench_scene s);
double mgw_bench_scene_duration(enum mgw_bench_scene s, int quick);
double mgw_bench_scene_kill_at(enum mgw_bench_scene s, int quick);
/* 1 when the scene's cells kill something. */
int mgw_bench_scene_kills(enum mgw_bench_scene s);
/* 1 for mrtr, fork and tasks: scenes whose replicas keep request state
 * or tasks (their reports add a table of what that state did). */
int mgw_bench_scene_stateful(enum mgw_bench_scene s);
/* "mrtr", "fork", "task"; NULL for MGW_BENCH_FLOW_PLAIN. */
const char *mgw_bench_flow_name(enum mgw_bench_flow f);

/* Fills cells[0..cap) with the scene's cells for o (rate, duration and
 * kill time after o's overrides; external-path cells only when
 * o->external is set, named after o->external_name), then drops those
 * matching none of o's --cell filters.  Returns the number of cells, or
 * MGW_ELIMIT when cap is too small. */
int mgw_bench_scene_cells(enum mgw_bench_scene s,
                          const struct mgw_bench_opts *o,
                          struct mgw_bench_cell *cells, size_t cap);

/* Names cell c from its fields ("legacy gateway 2 replicas", ...; an
 * external path as ext_name, the connection mode when show_conn) and
 * derives its slug. */
void mgw_bench_cell_name(struct mgw_bench_cell *c, const char *ext_name,
                         int show_conn);

/* 1 when the cell's slug or name matches one of the glob patterns (or
 * there are none). */
int mgw_bench_cell_selected(const struct mgw_bench_cell *c,
                            const char *const *filters, size_t n);

#endif
