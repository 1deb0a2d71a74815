/* cell.h - one repetition of one cell: start the fleet (redis-server,
 * replicas, gateways or the external proxy), run the load client, kill
 * and replace the victim on schedule and verify that the kill landed,
 * collect the gateway's re-pin counters, stop everything, and write the
 * run record. */
#ifndef MGW_BENCH_CELL_H
#define MGW_BENCH_CELL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bench/src/bench-t.h"

#define MGW_BENCH_MAX_PORTS 4096
/* Most kills one repetition makes (a day's soak at one a minute). */
#define MGW_BENCH_MAX_KILLS 1440

/* State shared by every repetition of a bench run. */
struct mgw_bench_env {
	const struct mgw_bench_opts *o;
	char handle_key[1024];   /* backend --key-file (hmac handles) */
	char session_key[1024];  /* gateway sessions.key_file (sealed) */
	double readiness_delay_s;
	/* every port a bench process listened on: the TIME_WAIT census of
	 * the cooldown counts sockets on these */
	uint16_t ports[MGW_BENCH_MAX_PORTS];
	size_t n_ports;
};

/* Runs repetition rep (1-based) of cell c.  cooldown (borrowed, may be
 * NULL) is stored in the record as the wait that preceded it.  Writes
 * the record to OUT/runs/SCENE/SLUG-rNN.json and puts that path,
 * relative to OUT, into rel.  *rec gets the record (new reference) even
 * for an invalid repetition: a repetition that could not be measured is
 * data too.  Returns 0, MGW_EIO when the record could not be written (a
 * fatal error for the bench), or MGW_ECLOSED when the bench was
 * interrupted (*rec is NULL then). */
int mgw_bench_run_rep(struct mgw_bench_env *env, const struct mgw_bench_cell *c,
                      int rep, const json_t *cooldown, json_t **rec, char *rel,
                      size_t rel_len);

/* The kill times of cell c on the load run's clock into at[0..cap): its
 * kill_at_s, or with kill_every_s every multiple of it whose replacement
 * (readiness_s later) can be ready before the run ends.  Returns the
 * number of kills (which may exceed cap), 0 without a victim. */
int mgw_bench_cell_kill_times(const struct mgw_bench_cell *c,
                              double readiness_s, double *at, int cap);

/* Adds the ports a run record names (its processes and kills) to the
 * ports the cooldown watches: a resume's first cooldown then waits for
 * the sockets an earlier sitting left. */
void mgw_bench_env_note_record(struct mgw_bench_env *e, const json_t *rec);

/* Waits, at most max_s seconds, until fewer than threshold TIME_WAIT
 * sockets involve the ports of env, checking once a second.  Returns the
 * record of the wait: {"threshold", "time_wait_before",
 * "time_wait_after", "waited_s", "timed_out"} (new reference). */
json_t *mgw_bench_cooldown(const struct mgw_bench_env *env, int threshold,
                           double max_s);

/* The re-pins a gateway's counters (GET /mcpgw/stats) report: the first
 * of "repinned" (sessions moved to another replica by a replay),
 * "repins_total", "repins" (a number, or an object whose numbers are
 * summed: re-pins begun by reason), looked up in "sessions" first.
 * Returns 0 and *out, or MGW_ENOTFOUND. */
int mgw_bench_stats_repins(const json_t *stats, json_int_t *out);

/* Creates dir and its parents (mode 0755).  Returns 0 or MGW_EIO. */
int mgw_bench_mkdirs(const char *dir);

#endif
