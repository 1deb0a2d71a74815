/* gates.h - pass/fail thresholds of a `mcpgw load` run for CI, checked on
 * the total of the measured (non-warmup) phases. */
#ifndef MGW_LOAD_GATES_H
#define MGW_LOAD_GATES_H

#include <stddef.h>

#include "load/load-t.h"
#include "load/stats-t.h"

#define MGW_LOAD_GATES_MAX 7

/* One active gate.  value is NaN when it could not be measured (a latency
 * gate with no successful call), which fails the gate. */
struct mgw_load_gate_check {
	const char *name;          /* "max_p95_ms", "min_rps", ... */
	double limit;
	double value;
	int passed;
};

struct mgw_load_gate_result {
	size_t n;
	struct mgw_load_gate_check checks[MGW_LOAD_GATES_MAX];
	int passed;                /* every check passed (also when none) */
};

/* Evaluates the active gates of g on st->total (st must be finished). */
void mgw_load_gates_eval(const struct mgw_load_gates *g,
                         const struct mgw_load_stats *st,
                         struct mgw_load_gate_result *out);

#endif
