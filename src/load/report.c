/* report.c - the outputs of `mcpgw load`: the JSON report whose names the
 * bench and CI depend on (keep them), the CSV timeline, the terminal table
 * and the live progress line.  Latencies are reported in milliseconds
 * with microsecond resolution; a latency nobody measured (no successful
 * call) is null in JSON and "-" in the table, never a made-up 0. */
#include "autoconf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "load/histogram.h"
#include "load/report.h"
#include "load/scenario.h"
#include "load/stats.h"

static double round3(double v)
{
	return round(v * 1000.0) / 1000.0;
}

static json_t *ms(uint64_t ns)
{
	return json_real(round3((double)ns / 1e6));
}

static const char *mode_name(int mode)
{
	return mode == MGW_LOAD_OPEN ? "open" : mode == MGW_LOAD_CLOSED ? "closed"
	                                                                : "mixed";
}

static json_t *latency_json(const struct mgw_hist *h)
{
	static const struct { const char *key; double p; } pcts[] = {
		{"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p999", 99.9},
	};
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (h->count == 0) {
		json_object_set_new(o, "min", json_null());
		json_object_set_new(o, "mean", json_null());
		for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
			json_object_set_new(o, pcts[i].key, json_null());
		json_object_set_new(o, "max", json_null());
		return o;
	}
	json_object_set_new(o, "min", ms(mgw_hist_min(h)));
	json_object_set_new(o, "mean", json_real(round3(mgw_hist_mean(h) / 1e6)));
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		json_object_set_new(o, pcts[i].key,
		                    ms(mgw_hist_percentile(h, pcts[i].p)));
	json_object_set_new(o, "max", ms(mgw_hist_max(h)));
	return o;
}

static json_t *failures_json(const struct mgw_load_counts *c)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	for (int i = MGW_LOAD_OK + 1; i < MGW_LOAD_OUTCOME_N; i++)
		json_object_set_new(o, mgw_load_outcome_name((enum mgw_load_outcome)i),
		                    json_integer((json_int_t)c->fail[i]));
	json_object_set_new(o, "shed", json_integer((json_int_t)c->shed));
	return o;
}

/* The first failures of the run, each with what it said. */
static json_t *samples_json(const struct mgw_load_stats *st)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < st->n_samples; i++) {
		const struct mgw_load_fail_sample *fs = &st->samples[i];

		json_array_append_new(a, json_pack("{s:f, s:s, s:s, s:o, s:s}",
			"t_s", round(fs->t_s * 1000) / 1000,
			"kind", mgw_load_outcome_name((enum mgw_load_outcome)fs->outcome),
			"call", st->tools[st->call_tool[fs->call]],
			"status", fs->status ? json_integer(fs->status) : json_null(),
			"detail", fs->detail));
	}
	return a;
}

/* A phase, a total or a tool within one: the same shape for all. */
static json_t *row_json(const struct mgw_load_phase_stats *ps,
                        const struct mgw_load_row *row, const char *name)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "warmup", json_boolean(ps->warmup));
	json_object_set_new(o, "mode", json_string(mode_name(ps->mode)));
	json_object_set_new(o, "concurrency", json_integer(ps->concurrency));
	json_object_set_new(o, "rate", ps->rate > 0 ? json_real(ps->rate)
	                                            : json_null());
	json_object_set_new(o, "offered_rps",
	                    json_real(round3(mgw_load_offered_rps(ps, row))));
	json_object_set_new(o, "achieved_rps",
	                    json_real(round3(mgw_load_achieved_rps(ps, row))));
	json_object_set_new(o, "duration_s", json_real(round3(ps->duration_s)));
	json_object_set_new(o, "requests", json_integer((json_int_t)row->c.requests));
	json_object_set_new(o, "ok", json_integer((json_int_t)row->c.ok));
	json_object_set_new(o, "error_rate",
	                    json_real(mgw_load_error_rate(&row->c)));
	json_object_set_new(o, "latency_ms", latency_json(row->lat));
	json_object_set_new(o, "service_ms", latency_json(row->svc));
	json_object_set_new(o, "failures", failures_json(&row->c));
	json_object_set_new(o, "reinitializations",
	                    json_integer((json_int_t)row->c.reinit));
	json_object_set_new(o, "reconnects",
	                    json_integer((json_int_t)row->c.reconnects));
	json_object_set_new(o, "dialogues",
	                    json_integer((json_int_t)row->c.dialogues));
	json_object_set_new(o, "rounds", json_integer((json_int_t)row->c.rounds));
	json_object_set_new(o, "rounds_per_dialogue",
	                    row->c.dialogues
	                    ? json_real(round3((double)row->c.rounds /
	                                       (double)row->c.dialogues))
	                    : json_null());
	json_object_set_new(o, "represented",
	                    json_integer((json_int_t)row->c.represented));
	json_object_set_new(o, "forked", json_integer((json_int_t)row->c.forked));
	json_object_set_new(o, "refused", json_integer((json_int_t)row->c.refused));
	json_object_set_new(o, "tasks", json_integer((json_int_t)row->c.tasks));
	json_object_set_new(o, "task_polls", json_integer((json_int_t)row->c.polls));
	json_object_set_new(o, "session_deletes",
	                    json_integer((json_int_t)row->c.deletes));
	json_object_set_new(o, "bytes", json_integer((json_int_t)row->c.bytes));
	return o;
}

static json_t *phase_json(const struct mgw_load_stats *st,
                          const struct mgw_load_phase_stats *ps)
{
	json_t *o = row_json(ps, &ps->all, ps->name);
	json_t *tools = json_object();

	if (!o || !tools) {
		json_decref(o);
		json_decref(tools);
		return NULL;
	}
	for (size_t t = 0; t < st->n_tools; t++)
		json_object_set_new(tools, st->tools[t],
		                    row_json(ps, &ps->tools[t], st->tools[t]));
	json_object_set_new(o, "per_tool", tools);
	return o;
}

static json_t *config_json(const struct mgw_load_conf *c)
{
	const struct mgw_load_transport_conf *t = &c->transport;
	json_t *o = json_object(), *a, *auth;

	if (!o)
		return NULL;
	if (c->source)
		json_object_set_new(o, "scenario", json_string(c->source));
	if (c->name)
		json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "transport", json_string(t->type == MGW_LOAD_STDIO
	                                                ? "stdio" : "http"));
	a = json_array();
	for (size_t i = 0; a && i < t->n_targets; i++)
		json_array_append_new(a, json_string(t->targets[i]));
	json_object_set_new(o, "targets", a);
	if (t->command)
		json_object_set_new(o, "command", json_string(t->command));
	json_object_set_new(o, "connection",
	                    json_string(mgw_load_conn_name(t->connection)));
	json_object_set_new(o, "reconnect_after",
	                    json_integer((json_int_t)t->reconnect_after));
	json_object_set_new(o, "spread_users", json_boolean(c->spread_users));
	json_object_set_new(o, "users", json_integer((json_int_t)c->users));
	json_object_set_new(o, "delete_sessions",
	                    json_integer((json_int_t)c->delete_sessions));
	json_object_set_new(o, "http2", json_boolean(t->http2));
	if (t->ca_file)
		json_object_set_new(o, "ca_file", json_string(t->ca_file));
	json_object_set_new(o, "dialect",
	                    json_string(mgw_load_dialect_name(c->dialect)));
	if (c->protocol_version)
		json_object_set_new(o, "protocol_version",
		                    json_string(c->protocol_version));
	json_object_set_new(o, "list_tools", json_boolean(c->list_tools));
	json_object_set_new(o, "timeout_s", json_real(c->timeout));
	json_object_set_new(o, "think", json_pack(
		"{s:s, s:f, s:f, s:f, s:f, s:f}",
		"mode", mgw_load_think_name(c->think.kind), "min_s", c->think.min,
		"max_s", c->think.max, "long_min_s", c->think.long_min,
		"long_max_s", c->think.long_max, "long_share", c->think.long_share));
	json_object_set_new(o, "seed", json_integer(c->seed));
	/* header names only: values and commands may hold credentials */
	auth = json_object();
	a = json_array();
	for (size_t i = 0; a && i < c->auth.n_headers; i++)
		json_array_append_new(a, json_string(c->auth.headers[i].name));
	if (auth) {
		json_object_set_new(auth, "headers", a);
		json_object_set_new(auth, "command", json_boolean(c->auth.command));
	} else {
		json_decref(a);
	}
	json_object_set_new(o, "auth", auth);
	a = json_array();
	for (size_t i = 0; a && i < c->n_calls; i++) {
		const struct mgw_load_call *k = &c->calls[i];
		json_t *e = json_pack("{s:s, s:s, s:s, s:f, s:O}", "name", k->name,
		                      "tool", k->tool,
		                      "flow", k->flow == MGW_LOAD_FLOW_COUNTER
		                              ? "counter"
		                              : k->flow == MGW_LOAD_FLOW_MRTR ? "mrtr"
		                              : k->flow == MGW_LOAD_FLOW_TASK ? "task"
		                                                              : "call",
		                      "weight", k->weight, "arguments", k->arguments);
		if (e && k->create_tool)
			json_object_set_new(e, "create_tool",
			                    json_string(k->create_tool));
		if (e && k->flow == MGW_LOAD_FLOW_MRTR) {
			json_object_set(e, "answers", k->answers);
			json_object_set_new(e, "max_rounds",
			                    json_integer((json_int_t)k->max_rounds));
			json_object_set_new(e, "fork_every",
			                    json_integer((json_int_t)k->fork_every));
			json_object_set_new(e, "fork_round",
			                    json_integer((json_int_t)k->fork_round));
		}
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "calls", a);
	a = json_array();
	for (size_t i = 0; a && i < c->n_phases; i++) {
		const struct mgw_load_phase *p = &c->phases[i];
		json_t *e = json_pack("{s:s, s:b, s:s, s:I, s:o, s:I, s:f, s:I}",
		                      "name", p->name, "warmup", p->warmup,
		                      "mode", mode_name(p->mode),
		                      "concurrency", (json_int_t)p->concurrency,
		                      "rate", p->mode == MGW_LOAD_OPEN
		                              ? json_real(p->rate) : json_null(),
		                      "backlog", (json_int_t)p->backlog,
		                      "duration_s", p->duration,
		                      "requests", (json_int_t)p->requests);
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "phases", a);
	return o;
}

static json_t *opt_ms(const struct mgw_load_tl_row *r, uint64_t ns)
{
	return r->c.ok ? ms(ns) : json_null();
}

static json_t *timeline_json(const struct mgw_load_stats *st)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < st->n_timeline; i++) {
		const struct mgw_load_tl_row *r = &st->timeline[i];
		json_t *o = json_object();

		if (!o)
			break;
		json_object_set_new(o, "t", json_integer(r->t));
		json_object_set_new(o, "phase",
		                    json_string(st->phases[r->phase].name));
		json_object_set_new(o, "ok", json_integer((json_int_t)r->c.ok));
		json_object_set_new(o, "failed",
		                    json_integer((json_int_t)mgw_load_failed(&r->c)));
		for (int k = MGW_LOAD_OK + 1; k < MGW_LOAD_OUTCOME_N; k++)
			json_object_set_new(o,
			        mgw_load_outcome_name((enum mgw_load_outcome)k),
			        json_integer((json_int_t)r->c.fail[k]));
		json_object_set_new(o, "shed", json_integer((json_int_t)r->c.shed));
		json_object_set_new(o, "reinitializations",
		                    json_integer((json_int_t)r->c.reinit));
		json_object_set_new(o, "p50_ms", opt_ms(r, r->p50_ns));
		json_object_set_new(o, "p99_ms", opt_ms(r, r->p99_ns));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *gates_json(const struct mgw_load_gate_result *g)
{
	json_t *o = json_object(), *a = json_array();

	if (!o || !a) {
		json_decref(o);
		json_decref(a);
		return NULL;
	}
	for (size_t i = 0; g && i < g->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:b}",
		        "name", g->checks[i].name,
		        "limit", num_or_null(g->checks[i].limit),
		        "value", num_or_null(g->checks[i].value),
		        "passed", g->checks[i].passed));
	json_object_set_new(o, "passed", json_boolean(!g || g->passed));
	json_object_set_new(o, "checks", a);
	return o;
}

json_t *mgw_load_report_json(const struct mgw_load_conf *c,
                             const struct mgw_load_stats *st,
                             const struct mgw_load_gate_result *g)
{
	json_t *o = json_object(), *phases = json_array();
	const char *era = st->era == MGW_ERA_IS_LEGACY   ? "legacy"
	                  : st->era == MGW_ERA_IS_MODERN ? "modern"
	                                                 : "unknown";

	if (!o || !phases) {
		json_decref(o);
		json_decref(phases);
		return NULL;
	}
	json_object_set_new(o, "version", json_string(PACKAGE_VERSION));
	json_object_set_new(o, "dialect", json_string(era));
	json_object_set_new(o, "config", config_json(c));
	for (size_t p = 0; p < st->n_phases; p++)
		if (st->phases[p].ran)
			json_array_append_new(phases, phase_json(st, &st->phases[p]));
	json_object_set_new(o, "phases", phases);
	json_object_set_new(o, "total", phase_json(st, &st->total));
	json_object_set_new(o, "timeline", timeline_json(st));
	json_object_set_new(o, "first_failures", samples_json(st));
	/* t = 0 of the timeline (and of --clock-file), for programs that
	 * schedule events on this run's clock */
	json_object_set_new(o, "clock", json_pack("{s:s, s:I}", "source",
		"CLOCK_MONOTONIC", "start_ns", (json_int_t)st->start_ns));
	json_object_set_new(o, "gates", gates_json(g));
	json_object_set_new(o, "interrupted", json_boolean(st->interrupted));
	return o;
}

/* ---- files ---- */

static FILE *open_out(const char *path, char *err, size_t errlen)
{
	FILE *f;

	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path, char *err, size_t errlen)
{
	int bad = ferror(f);

	if (f == stdout)
		bad |= fflush(f) != 0;
	else
		bad |= fclose(f) != 0;
	if (!bad)
		return 0;
	snprintf(err, errlen, "%s: write failed", path);
	return MGW_EIO;
}

int mgw_load_report_write_json(const json_t *report, const char *path,
                               char *err, size_t errlen)
{
	FILE *f = open_out(path, err, errlen);

	if (!f)
		return MGW_EIO;
	if (json_dumpf(report, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) != 0)
		snprintf(err, errlen, "%s: write failed", path);
	fputc('\n', f);
	return close_out(f, path, err, errlen);
}

/* A CSV field: quoted when it holds a comma, quote or line break. */
static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int mgw_load_report_write_csv(const struct mgw_load_stats *st,
                              const char *path, char *err, size_t errlen)
{
	FILE *f = open_out(path, err, errlen);

	if (!f)
		return MGW_EIO;
	fputs("t,phase,ok,failed", f);
	for (int k = MGW_LOAD_OK + 1; k < MGW_LOAD_OUTCOME_N; k++)
		fprintf(f, ",%s", mgw_load_outcome_name((enum mgw_load_outcome)k));
	fputs(",shed,reinitializations,p50_ms,p99_ms\n", f);
	for (size_t i = 0; i < st->n_timeline; i++) {
		const struct mgw_load_tl_row *r = &st->timeline[i];

		fprintf(f, "%u,", r->t);
		csv_str(f, st->phases[r->phase].name);
		fprintf(f, ",%llu,%llu", (unsigned long long)r->c.ok,
		        (unsigned long long)mgw_load_failed(&r->c));
		for (int k = MGW_LOAD_OK + 1; k < MGW_LOAD_OUTCOME_N; k++)
			fprintf(f, ",%llu", (unsigned long long)r->c.fail[k]);
		fprintf(f, ",%llu,%llu", (unsigned long long)r->c.shed,
		        (unsigned long long)r->c.reinit);
		if (r->c.ok)
			fprintf(f, ",%.3f,%.3f\n", (double)r->p50_ns / 1e6,
			        (double)r->p99_ns / 1e6);
		else
			fputs(",,\n", f);
	}
	return close_out(f, path, err, errlen);
}

/* ---- the table ---- */

#define NCOLS 12

struct cells {
	char c[NCOLS][32];
};

static void fmt_ms(char *buf, size_t len, const struct mgw_hist *h, double p)
{
	if (h->count == 0)
		snprintf(buf, len, "-");
	else if (p < 0)
		snprintf(buf, len, "%.2f", mgw_hist_mean(h) / 1e6);
	else
		snprintf(buf, len, "%.2f", (double)mgw_hist_percentile(h, p) / 1e6);
}

static void row_cells(struct cells *r, const struct mgw_load_phase_stats *ps,
                      const char *name, int star)
{
	const struct mgw_load_row *row = &ps->all;
	const struct mgw_load_counts *c = &row->c;

	snprintf(r->c[0], sizeof(r->c[0]), "%.28s%s", name, star ? "*" : "");
	if (ps->mode == MGW_LOAD_OPEN)
		snprintf(r->c[1], sizeof(r->c[1]), "%g/s", ps->rate);
	else if (ps->mode == MGW_LOAD_CLOSED)
		snprintf(r->c[1], sizeof(r->c[1]), "%ld", ps->concurrency);
	else
		snprintf(r->c[1], sizeof(r->c[1]), "mixed");
	snprintf(r->c[2], sizeof(r->c[2]), "%llu", (unsigned long long)c->requests);
	snprintf(r->c[3], sizeof(r->c[3]), "%.1f", mgw_load_achieved_rps(ps, row));
	if (c->requests + c->shed)
		snprintf(r->c[4], sizeof(r->c[4]), "%.1f",
		         100.0 * (1.0 - mgw_load_error_rate(c)));
	else
		snprintf(r->c[4], sizeof(r->c[4]), "-");
	fmt_ms(r->c[5], sizeof(r->c[5]), row->lat, -1);
	fmt_ms(r->c[6], sizeof(r->c[6]), row->lat, 50);
	fmt_ms(r->c[7], sizeof(r->c[7]), row->lat, 90);
	fmt_ms(r->c[8], sizeof(r->c[8]), row->lat, 95);
	fmt_ms(r->c[9], sizeof(r->c[9]), row->lat, 99);
	fmt_ms(r->c[10], sizeof(r->c[10]), row->lat, 100);
	snprintf(r->c[11], sizeof(r->c[11]), "%llu/%llu",
	         (unsigned long long)c->fail[MGW_LOAD_SESSION_LOST],
	         (unsigned long long)c->fail[MGW_LOAD_HANDLE_LOST]);
}

static void print_row(FILE *out, const struct cells *r, const size_t *w)
{
	for (int i = 0; i < NCOLS; i++)
		fprintf(out, i == 0 ? "%-*s" : "  %*s", (int)w[i], r->c[i]);
	fputc('\n', out);
}

/* " 12 session_lost, 40 shed, 12 reinitializations" */
static void print_failures(FILE *out, const struct mgw_load_counts *c)
{
	int any = 0;

	for (int k = MGW_LOAD_OK + 1; k < MGW_LOAD_OUTCOME_N; k++)
		if (c->fail[k])
			fprintf(out, "%s %llu %s", any++ ? "," : "",
			        (unsigned long long)c->fail[k],
			        mgw_load_outcome_name((enum mgw_load_outcome)k));
	if (c->shed)
		fprintf(out, "%s %llu shed", any++ ? "," : "",
		        (unsigned long long)c->shed);
	if (c->reinit)
		fprintf(out, "%s %llu reinitializations", any++ ? "," : "",
		        (unsigned long long)c->reinit);
	if (c->reconnects)
		fprintf(out, "%s %llu reconnects", any++ ? "," : "",
		        (unsigned long long)c->reconnects);
	if (!any)
		fputs(" none", out);
}

/* What the failures said: the first failures kept (first_failures in the
 * JSON), grouped by kind and detail, most frequent first, so that the
 * text shows why without the JSON. */
#define REASONS_MAX 8
static void print_reasons(FILE *out, const struct mgw_load_stats *st)
{
	size_t first[MGW_LOAD_FAIL_SAMPLES], count[MGW_LOAD_FAIL_SAMPLES];
	size_t n = 0, shown = 0;

	for (size_t i = 0; i < st->n_samples; i++) {
		const struct mgw_load_fail_sample *fs = &st->samples[i];
		size_t k;

		for (k = 0; k < n; k++) {
			const struct mgw_load_fail_sample *g = &st->samples[first[k]];

			if (g->outcome == fs->outcome && strcmp(g->detail, fs->detail) == 0)
				break;
		}
		if (k == n) {
			first[n] = i;
			count[n++] = 0;
		}
		count[k]++;
	}
	if (!n)
		return;
	fprintf(out, "failure reasons (the first %zu failures):\n", st->n_samples);
	while (shown < n && shown < REASONS_MAX) {
		size_t best = 0;

		for (size_t k = 1; k < n; k++)
			if (count[k] > count[best])
				best = k;
		if (!count[best])
			break;
		fprintf(out, "  %4zu  %s: %.160s\n", count[best],
		        mgw_load_outcome_name((enum mgw_load_outcome)
		                              st->samples[first[best]].outcome),
		        st->samples[first[best]].detail[0]
		                ? st->samples[first[best]].detail : "-");
		count[best] = 0;
		shown++;
	}
	if (shown < n)
		fprintf(out, "  (%zu other reasons: see first_failures in --json)\n",
		        n - shown);
}

void mgw_load_report_table(FILE *out, const struct mgw_load_conf *c,
                           const struct mgw_load_stats *st,
                           const struct mgw_load_gate_result *g)
{
	static const char *const head[NCOLS] = {
		"phase", "conc/rate", "reqs", "rps", "ok%", "mean", "p50", "p90",
		"p95", "p99", "max", "losses",
	};
	struct cells *rows = calloc(st->n_phases + 2, sizeof(*rows));
	size_t w[NCOLS] = {0}, n = 0;
	int any_warmup = 0;

	(void)c;
	if (!rows)
		return;
	for (int i = 0; i < NCOLS; i++)
		snprintf(rows[n].c[i], sizeof(rows[n].c[i]), "%s", head[i]);
	n++;
	for (size_t p = 0; p < st->n_phases; p++) {
		if (!st->phases[p].ran)
			continue;
		any_warmup |= st->phases[p].warmup;
		row_cells(&rows[n++], &st->phases[p], st->phases[p].name,
		          st->phases[p].warmup);
	}
	if (st->total.ran)
		row_cells(&rows[n++], &st->total, "total", 0);
	for (size_t r = 0; r < n; r++)
		for (int i = 0; i < NCOLS; i++)
			if (strlen(rows[r].c[i]) > w[i])
				w[i] = strlen(rows[r].c[i]);
	print_row(out, &rows[0], w);
	for (int i = 0; i < NCOLS; i++)
		fprintf(out, i == 0 ? "%.*s" : "  %.*s", (int)w[i],
		        "--------------------------------");
	fputc('\n', out);
	for (size_t r = 1; r < n; r++)
		print_row(out, &rows[r], w);
	fprintf(out, "\n(latencies in ms from the intended start; losses = "
	        "session/handle%s)\n",
	        any_warmup ? "; * = warmup, excluded from total and gates" : "");
	for (size_t p = 0; p < st->n_phases; p++) {
		const struct mgw_load_counts *k = &st->phases[p].all.c;

		if (!st->phases[p].ran)
			continue;
		if (k->dialogues)
			fprintf(out, "%s: %llu dialogues, %llu rounds (%.2f per "
			        "dialogue)\n", st->phases[p].name,
			        (unsigned long long)k->dialogues,
			        (unsigned long long)k->rounds,
			        (double)k->rounds / (double)k->dialogues);
		if (k->represented)
			fprintf(out, "%s: %llu old states re-presented: %llu forked, "
			        "%llu refused\n", st->phases[p].name,
			        (unsigned long long)k->represented,
			        (unsigned long long)k->forked,
			        (unsigned long long)k->refused);
		if (!mgw_load_failed(k) && !k->shed && !k->reinit && !k->reconnects)
			continue;
		fprintf(out, "%s:", st->phases[p].name);
		print_failures(out, k);
		fputc('\n', out);
	}
	print_reasons(out, st);
	if (st->interrupted)
		fputs("(interrupted: later phases skipped)\n", out);
	for (size_t i = 0; g && i < g->n; i++) {
		const struct mgw_load_gate_check *k = &g->checks[i];

		if (isfinite(k->value))
			fprintf(out, "gate %s: %g %s %g: %s\n", k->name, k->value,
			        strncmp(k->name, "min", 3) == 0 ? ">=" : "<=",
			        k->limit, k->passed ? "pass" : "FAIL");
		else
			fprintf(out, "gate %s: not measured: FAIL\n", k->name);
	}
	free(rows);
}

/* ---- live progress ---- */

void mgw_load_report_progress(FILE *out, const struct mgw_load_conf *c,
                              const struct mgw_load_stats *st, size_t phase,
                              size_t inflight, uint64_t now)
{
	const struct mgw_load_phase_stats *ps;
	const struct mgw_load_counts *k;
	const struct mgw_load_tl_row *last;
	double el;

	if (phase >= st->n_phases)
		return;
	ps = &st->phases[phase];
	k = &ps->all.c;
	el = ps->ran && now > ps->start_ns ? (double)(now - ps->start_ns) / 1e9 : 0;
	last = st->n_timeline ? &st->timeline[st->n_timeline - 1] : NULL;
	fprintf(out, "\r\033[K[%s %.0f", ps->name, el);
	if (c->phases[phase].duration > 0)
		fprintf(out, "/%.0f", c->phases[phase].duration);
	fprintf(out, "s] reqs %llu ok %.1f%% rps %.1f",
	        (unsigned long long)k->requests,
	        k->requests + k->shed ? 100.0 * (1 - mgw_load_error_rate(k)) : 100.0,
	        el > 0 ? (double)k->ok / el : 0.0);
	if (last && last->c.ok)
		fprintf(out, " p50 %.2f p99 %.2f ms", (double)last->p50_ns / 1e6,
		        (double)last->p99_ns / 1e6);
	fprintf(out, " in-flight %zu", inflight);
	if (k->shed)
		fprintf(out, " shed %llu", (unsigned long long)k->shed);
	if (k->fail[MGW_LOAD_SESSION_LOST] || k->fail[MGW_LOAD_HANDLE_LOST] ||
	    k->fail[MGW_LOAD_TASK_LOST] || k->fail[MGW_LOAD_STATE_LOST])
		fprintf(out, " lost %llu/%llu/%llu/%llu",
		        (unsigned long long)k->fail[MGW_LOAD_SESSION_LOST],
		        (unsigned long long)k->fail[MGW_LOAD_HANDLE_LOST],
		        (unsigned long long)k->fail[MGW_LOAD_TASK_LOST],
		        (unsigned long long)k->fail[MGW_LOAD_STATE_LOST]);
	fflush(out);
}

json_t *mgw_load_report_progress_json(const struct mgw_load_stats *st,
                                     size_t inflight, uint64_t now)
{
	struct mgw_load_counts k;
	json_t *o;

	/* every phase that ran, warm-up included: what the client did so
	 * far, not what the report's total will count */
	memset(&k, 0, sizeof(k));
	for (size_t p = 0; p < st->n_phases; p++) {
		const struct mgw_load_counts *c = &st->phases[p].all.c;

		if (!st->phases[p].ran)
			continue;
		k.requests += c->requests;
		k.ok += c->ok;
		for (int i = 0; i < MGW_LOAD_OUTCOME_N; i++)
			k.fail[i] += c->fail[i];
		k.shed += c->shed;
		k.reinit += c->reinit;
	}
	o = json_pack("{s:o, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:b}",
	              "t_s", json_real(round3(now > st->start_ns
	                  ? (double)(now - st->start_ns) / 1e9 : 0)),
	              "requests", (json_int_t)k.requests,
	              "ok", (json_int_t)k.ok,
	              "failed", (json_int_t)mgw_load_failed(&k),
	              "failures", failures_json(&k),
	              "shed", (json_int_t)k.shed,
	              "reinitializations", (json_int_t)k.reinit,
	              "in_flight", (json_int_t)inflight,
	              "finished", st->finished);
	return o;
}

void mgw_load_report_progress_clear(FILE *out)
{
	fputs("\r\033[K", out);
	fflush(out);
}
