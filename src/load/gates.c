/* gates.c - CI thresholds on the measured total of a `mcpgw load` run.
 * Latency gates use the coordinated-omission corrected latency (what a
 * user would have seen), not the service time. */
#include "autoconf.h"

#include <math.h>

#include "load/gates.h"
#include "load/histogram.h"
#include "load/stats.h"

static void add(struct mgw_load_gate_result *out, const char *name,
                double limit, double value, int upper)
{
	struct mgw_load_gate_check *c = &out->checks[out->n++];

	c->name = name;
	c->limit = limit;
	c->value = value;
	/* NaN compares false either way: an unmeasurable value fails */
	c->passed = upper ? value <= limit : value >= limit;
	if (!c->passed)
		out->passed = 0;
}

static double latency_ms(const struct mgw_load_row *r, double p)
{
	if (r->lat->count == 0)
		return NAN;
	return (double)mgw_hist_percentile(r->lat, p) / 1e6;
}

void mgw_load_gates_eval(const struct mgw_load_gates *g,
                         const struct mgw_load_stats *st,
                         struct mgw_load_gate_result *out)
{
	const struct mgw_load_phase_stats *t = &st->total;

	out->n = 0;
	out->passed = 1;
	if (g->has_max_p95_ms)
		add(out, "max_p95_ms", g->max_p95_ms, latency_ms(&t->all, 95), 1);
	if (g->has_max_p99_ms)
		add(out, "max_p99_ms", g->max_p99_ms, latency_ms(&t->all, 99), 1);
	if (g->has_max_error_rate)
		add(out, "max_error_rate", g->max_error_rate,
		    t->all.c.requests + t->all.c.shed
		            ? mgw_load_error_rate(&t->all.c) : NAN, 1);
	if (g->has_min_rps)
		add(out, "min_rps", g->min_rps,
		    mgw_load_achieved_rps(t, &t->all), 0);
	if (g->has_max_session_losses)
		add(out, "max_session_losses", (double)g->max_session_losses,
		    (double)t->all.c.fail[MGW_LOAD_SESSION_LOST], 1);
	if (g->has_max_handle_losses)
		add(out, "max_handle_losses", (double)g->max_handle_losses,
		    (double)t->all.c.fail[MGW_LOAD_HANDLE_LOST], 1);
	if (g->has_max_state_losses)
		add(out, "max_state_losses", (double)g->max_state_losses,
		    (double)t->all.c.fail[MGW_LOAD_STATE_LOST], 1);
}
