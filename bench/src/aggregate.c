/* aggregate.c - a cell's row from its repetitions.  The rules are the
 * study's: throughput as the median with the observed range, because
 * legacy cells above one replica scatter by a factor of two from run to
 * run and a mean would hide that; losses summed, because one loss in ten
 * runs must stay visible; latency percentiles as medians over runs.
 * Invalid repetitions (a kill that did not land, a load run that did not
 * finish) are left out of every number and listed instead. */
#include "autoconf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/src/aggregate.h"
#include "bench/src/scene.h"

const char *const mgw_bench_other_failures[] = {
	"http_4xx", "http_5xx", "rpc_error", "tool_error", "timeout",
	"connect_error", "shed", NULL,
};

/* The failure kinds with a column of their own (besides "other"), and
 * the cell key that sums each. */
static const char *const loss_kinds[][2] = {
	{ "session_lost", "session_losses" },
	{ "handle_lost", "handle_losses" },
	{ "state_lost", "state_losses" },
	{ "task_lost", "task_losses" },
	{ "deleted_served", "deleted_served" },
};
#define N_LOSS_KINDS (sizeof(loss_kinds) / sizeof(loss_kinds[0]))

/* Counts of the stateful flows, from the load report's total row. */
static const char *const flow_counts[] = {
	"dialogues", "rounds", "represented", "forked", "refused", "tasks",
	"task_polls", NULL,
};
#define FC_FORKED 3 /* flow_counts[FC_FORKED] is "forked" */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double mgw_bench_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Numbers in reports carry three decimals, like the load client's. */
static json_t *num(double v)
{
	if (isnan(v))
		return json_null();
	return json_real(round(v * 1000.0) / 1000.0);
}

static json_t *name_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static const json_t *total_of(const json_t *rec)
{
	return json_object_get(json_object_get(rec, "load"), "total");
}

/* Sums of a stateful cell's valid runs: the load client's flow counts,
 * what the gateways said after the run (task affinity's owner_gone, the
 * guard's refusals) and what the replicas said (request-state bytes and
 * store operations; the victim's figures as it was killed). */
struct state_sums {
	json_int_t flow[8];
	json_int_t owner_gone, guard_refused;
	double issued, bytes, ops, completed;
	int have_gw_tasks, have_guard, have_ops;
};

static void add_gateway_stats(struct state_sums *s, const json_t *rec)
{
	const json_t *g, *u;
	size_t i, j;

	json_array_foreach(json_object_get(rec, "gateway_stats"), i, g) {
		const json_t *st = json_object_get(g, "stats"),
		             *guard = json_object_get(st, "mrtr_guard");

		json_array_foreach(json_object_get(st, "upstreams"), j, u) {
			const json_t *t = json_object_get(u, "tasks");

			if (json_is_object(t)) {
				s->owner_gone += json_integer_value(
					json_object_get(t, "owner_gone"));
				s->have_gw_tasks = 1;
			}
		}
		if (json_is_object(guard)) {
			s->guard_refused += json_integer_value(
				json_object_get(guard, "refused"));
			s->have_guard = 1;
		}
	}
}

static void add_replica_stats(struct state_sums *s, const json_t *rec)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(rec, "replica_stats"), i, e) {
		const json_t *st = json_object_get(e, "stats"),
		             *ops = json_object_get(st, "mrtr_store_ops");

		s->issued += json_number_value(json_object_get(st, "mrtr_states_issued"));
		s->bytes += json_number_value(json_object_get(st,
		                                              "mrtr_state_bytes_total"));
		s->completed += json_number_value(json_object_get(st, "mrtr_completed"));
		if (json_is_number(ops)) {
			s->ops += json_number_value(ops);
			s->have_ops = 1;
		}
	}
}

static void add_state_run(struct state_sums *s, const json_t *rec)
{
	const json_t *t = total_of(rec);

	for (size_t k = 0; flow_counts[k]; k++)
		s->flow[k] += json_integer_value(json_object_get(t, flow_counts[k]));
	add_gateway_stats(s, rec);
	add_replica_stats(s, rec);
}

static json_t *ratio(double num, double den, int have)
{
	return have && den > 0 ? json_real(round(num / den * 1000.0) / 1000.0)
	                       : json_null();
}

/* The stateful cell's numbers (null without a valid repetition). */
static void set_state_fields(json_t *o, const struct mgw_bench_cell *c,
                             const struct state_sums *s, size_t valid)
{
	int v = valid > 0, mrtr = c->flow != MGW_BENCH_FLOW_TASK;

	json_object_set_new(o, "flow", json_string(mgw_bench_flow_name(c->flow)));
	json_object_set_new(o, "keep", name_or_null(mgw_bench_store_name(c->keep)));
	json_object_set_new(o, "guard", json_boolean(c->guard));
	json_object_set_new(o, "affinity", json_boolean(c->affinity));
	for (size_t k = 0; flow_counts[k]; k++)
		json_object_set_new(o, flow_counts[k],
		                    v ? json_integer(s->flow[k]) : json_null());
	json_object_set_new(o, "task_owner_gone", v && s->have_gw_tasks
	                    ? json_integer(s->owner_gone) : json_null());
	json_object_set_new(o, "guard_refused", v && s->have_guard
	                    ? json_integer(s->guard_refused) : json_null());
	/* bytes of the requestStates handed out, per state (one a round) */
	json_object_set_new(o, "state_bytes_per_round",
	                    ratio(s->bytes, s->issued, v && mrtr));
	json_object_set_new(o, "store_ops_per_dialogue",
	                    ratio(s->ops, s->completed, v && mrtr && s->have_ops));
}

json_t *mgw_bench_aggregate(const struct mgw_bench_cell *c, const json_t *runs,
                            const json_t *paths)
{
	size_t n = json_array_size(runs), valid = 0, nlat50 = 0, nlat99 = 0;
	double *ach = NULL, *p50 = NULL, *p99 = NULL, med = NAN, mn = NAN, mx = NAN;
	json_int_t loss[N_LOSS_KINDS] = { 0 }, other = 0, reinit = 0, repins = 0;
	struct state_sums ss;
	int have_repins = 0;
	json_t *o = NULL, *fails = NULL, *invalid = NULL, *cooled = NULL, *rec;
	size_t i;

	ach = calloc(n + 1, sizeof(*ach));
	p50 = calloc(n + 1, sizeof(*p50));
	p99 = calloc(n + 1, sizeof(*p99));
	fails = json_object();
	invalid = json_array();
	cooled = json_array();
	if (!ach || !p50 || !p99 || !fails || !invalid || !cooled)
		goto fail;
	memset(&ss, 0, sizeof(ss));
	for (const char *const *k = mgw_bench_other_failures; *k; k++)
		json_object_set_new(fails, *k, json_integer(0));
	for (size_t k = 0; k < N_LOSS_KINDS; k++)
		json_object_set_new(fails, loss_kinds[k][0], json_integer(0));
	/* a booking made twice from one old state: a loss of the fork scene
	 * (the load client counts it beside the calls, not as a failure) */
	if (c->flow == MGW_BENCH_FLOW_FORK)
		json_object_set_new(fails, "forked", json_integer(0));
	json_array_foreach(runs, i, rec) {
		const json_t *t = total_of(rec), *lat, *f, *v;
		const char *key;
		json_t *val;

		if (!json_is_true(json_object_get(rec, "valid")) || !t) {
			json_t *why = json_object_get(rec, "invalid_reason");

			json_array_append_new(invalid, json_pack("{s:O?, s:O?}",
				"run", json_array_get(paths, i),
				"reason", json_is_string(why) ? why : NULL));
			continue;
		}
		ach[valid++] = json_number_value(json_object_get(t, "achieved_rps"));
		v = json_object_get(rec, "cooldown");
		if (json_is_true(json_object_get(v, "timed_out")))
			json_array_append_new(cooled, json_pack("{s:O?, s:O?, s:O?, s:O?}",
				"run", json_array_get(paths, i),
				"threshold", json_object_get(v, "threshold"),
				"time_wait_before", json_object_get(v, "time_wait_before"),
				"time_wait_after", json_object_get(v, "time_wait_after")));
		lat = json_object_get(t, "latency_ms");
		if (json_is_number(json_object_get(lat, "p50")))
			p50[nlat50++] = json_number_value(json_object_get(lat, "p50"));
		if (json_is_number(json_object_get(lat, "p99")))
			p99[nlat99++] = json_number_value(json_object_get(lat, "p99"));
		f = json_object_get(t, "failures");
		json_object_foreach((json_t *)f, key, val) {
			json_int_t x = json_integer_value(val);
			json_t *acc = json_object_get(fails, key);

			if (!json_is_integer(val))
				continue;
			if (acc)
				json_integer_set(acc, json_integer_value(acc) + x);
			else
				json_object_set_new(fails, key, json_integer(x));
			for (size_t k = 0; k < N_LOSS_KINDS; k++)
				if (strcmp(key, loss_kinds[k][0]) == 0)
					loss[k] += x;
		}
		if (c->flow != MGW_BENCH_FLOW_PLAIN)
			add_state_run(&ss, rec);
		for (const char *const *k = mgw_bench_other_failures; *k; k++)
			other += json_integer_value(json_object_get(f, *k));
		reinit += json_integer_value(json_object_get(t, "reinitializations"));
		v = json_object_get(rec, "repins");
		if (json_is_integer(v)) {
			repins += json_integer_value(v);
			have_repins = 1;
		}
	}
	if (c->flow == MGW_BENCH_FLOW_FORK)
		json_object_set_new(fails, "forked", json_integer(ss.flow[FC_FORKED]));
	if (valid > 0) {
		med = mgw_bench_median(ach, valid); /* sorts ach */
		mn = ach[0];
		mx = ach[valid - 1];
	}
	o = json_object();
	if (!o)
		goto fail;
	json_object_set_new(o, "cell", json_string(c->name));
	json_object_set_new(o, "slug", json_string(c->slug));
	json_object_set_new(o, "path", json_string(mgw_bench_path_name(c->path)));
	json_object_set_new(o, "era", json_string(mgw_bench_era_name(c->era)));
	json_object_set_new(o, "replicas", json_integer(c->replicas));
	json_object_set_new(o, "connection",
	                    json_string(mgw_bench_conn_name(c->conn)));
	json_object_set_new(o, "state", name_or_null(mgw_bench_state_name(c->state)));
	json_object_set_new(o, "session_store",
	                    name_or_null(mgw_bench_store_name(c->store)));
	json_object_set_new(o, "victim",
	                    name_or_null(mgw_bench_victim_name(c->victim)));
	json_object_set_new(o, "offered_rps", num(c->offered_rps));
	json_object_set_new(o, "duration_s", num(c->duration_s));
	json_object_set_new(o, "users", json_integer(c->users));
	json_object_set_new(o, "delete_sessions", json_integer(c->delete_after));
	json_object_set_new(o, "sentinel", json_boolean(c->sentinel));
	json_object_set_new(o, "kill_at_s", c->victim != MGW_BENCH_VICTIM_NONE
	                                        ? num(c->kill_at_s) : json_null());
	json_object_set_new(o, "n", json_integer((json_int_t)n));
	json_object_set_new(o, "valid", json_integer((json_int_t)valid));
	json_object_set_new(o, "achieved_rps", json_pack("{s:o, s:o, s:o}",
		"median", num(med), "min", num(mn), "max", num(mx)));
	json_object_set_new(o, "p50_ms", num(mgw_bench_median(p50, nlat50)));
	json_object_set_new(o, "p99_ms", num(mgw_bench_median(p99, nlat99)));
	if (valid > 0) {
		for (size_t k = 0; k < N_LOSS_KINDS; k++)
			json_object_set_new(o, loss_kinds[k][1], json_integer(loss[k]));
		json_object_set_new(o, "other_failures", json_integer(other));
		json_object_set_new(o, "failures", fails);
		json_object_set_new(o, "reinitializations", json_integer(reinit));
		json_object_set_new(o, "repins",
		                    have_repins ? json_integer(repins) : json_null());
		json_object_set_new(o, "saturated",
		                    json_boolean(med < MGW_BENCH_SATURATION *
		                                           c->offered_rps));
	} else {
		json_decref(fails);
		for (size_t k = 0; k < N_LOSS_KINDS; k++)
			json_object_set_new(o, loss_kinds[k][1], json_null());
		json_object_set_new(o, "other_failures", json_null());
		json_object_set_new(o, "failures", json_null());
		json_object_set_new(o, "reinitializations", json_null());
		json_object_set_new(o, "repins", json_null());
		json_object_set_new(o, "saturated", json_null());
	}
	fails = NULL;
	if (c->flow != MGW_BENCH_FLOW_PLAIN)
		set_state_fields(o, c, &ss, valid);
	json_object_set_new(o, "runs", json_deep_copy(paths));
	json_object_set_new(o, "invalid", invalid);
	json_object_set_new(o, "cooldown_timeouts", cooled);
	invalid = cooled = NULL;
fail:
	json_decref(fails);
	json_decref(invalid);
	json_decref(cooled);
	free(ach);
	free(p50);
	free(p99);
	return o;
}
