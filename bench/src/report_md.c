/* report_md.c - the human-readable outputs.  report.md is what a README
 * quotes: per scene the conditions in one paragraph, then the table the
 * field study published (cell, n, achieved rps as median and range,
 * latency medians, the three kinds of loss, re-pins).  Numbers missing
 * from a cell (no valid repetition, no gateway to count re-pins) show as
 * an en dash rather than a zero that would claim something. */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/report_md.h"
#include "bench/src/state_table.h"

static const json_t *get(const json_t *o, const char *k)
{
	return json_object_get(o, k);
}

static const char *str(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : dflt;
}

/* A cell name inside a table: '|' would end the cell. */
static void cell_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void rps(FILE *f, const json_t *v)
{
	if (json_is_number(v))
		fprintf(f, "%.1f", json_number_value(v));
	else
		fputs("–", f);
}

static void ms(FILE *f, const json_t *v)
{
	double x;

	if (!json_is_number(v)) {
		fputs("–", f);
		return;
	}
	x = json_number_value(v);
	fprintf(f, x < 10 ? "%.2f" : "%.1f", x);
}

static void count(FILE *f, const json_t *v)
{
	if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else
		fputs("–", f);
}

int mgw_bench_report_md_table(FILE *f, const json_t *scene)
{
	const json_t *cells = get(scene, "cells"), *c;
	size_t i;

	fprintf(f, "%s\n", MGW_BENCH_MD_HEADER);
	fputs("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", f);
	json_array_foreach(cells, i, c) {
		const json_t *a = get(c, "achieved_rps");
		json_int_t n = json_integer_value(get(c, "n")),
		           valid = json_integer_value(get(c, "valid"));

		fputs("| ", f);
		cell_text(f, str(c, "cell", "?"));
		fputs(" | ", f);
		count(f, get(c, "users"));
		fprintf(f, " | %lld%s%s | ", (long long)valid, valid < n ? "†" : "",
		        json_array_size(get(c, "cooldown_timeouts")) ? "‡" : "");
		rps(f, get(a, "median"));
		if (json_is_number(get(a, "min"))) {
			fputs(" (", f);
			rps(f, get(a, "min"));
			fputs("–", f);
			rps(f, get(a, "max"));
			fputs(")", f);
		}
		if (json_is_true(get(c, "saturated")))
			fputs(" ⚠", f);
		fputs(" | ", f);
		ms(f, get(c, "p50_ms"));
		fputs(" | ", f);
		ms(f, get(c, "p99_ms"));
		fputs(" | ", f);
		count(f, get(c, "session_losses"));
		fputs(" | ", f);
		count(f, get(c, "handle_losses"));
		fputs(" | ", f);
		count(f, get(c, "deleted_served"));
		fputs(" | ", f);
		count(f, get(c, "other_failures"));
		fputs(" | ", f);
		count(f, get(c, "repins"));
		fputs(" |\n", f);
	}
	return ferror(f) ? MGW_EIO : 0;
}

int mgw_bench_report_md_state_table(FILE *f, const json_t *scene)
{
	const struct mgw_bench_state_col *cols =
		mgw_bench_state_cols(str(scene, "scene", NULL));
	const json_t *c;
	char v[32];
	size_t i;

	if (!cols)
		return 0;
	fputs("| cell |", f);
	for (const struct mgw_bench_state_col *k = cols; k->head; k++)
		fprintf(f, " %s |", k->head);
	fputs("\n|---|", f);
	for (const struct mgw_bench_state_col *k = cols; k->head; k++)
		fputs("---:|", f);
	fputc('\n', f);
	json_array_foreach(get(scene, "cells"), i, c) {
		fputs("| ", f);
		cell_text(f, str(c, "cell", "?"));
		fputs(" |", f);
		for (const struct mgw_bench_state_col *k = cols; k->head; k++) {
			mgw_bench_state_value(get(c, k->key), v, sizeof(v));
			fprintf(f, " %s |", v);
		}
		fputc('\n', f);
	}
	return ferror(f) ? MGW_EIO : 0;
}

static void conditions(FILE *f, const json_t *s)
{
	const json_t *k = get(s, "kill_at_s");

	json_int_t reps = json_integer_value(get(s, "reps"));

	fprintf(f, "Offered %g rps (open loop) for %g s per run, %lld "
	        "repetition%s per cell", json_number_value(get(s, "offered_rps")),
	        json_number_value(get(s, "duration_s")), (long long)reps,
	        reps == 1 ? "" : "s");
	if (reps > 1)
		fputs(" in alternating order", f);
	if (json_integer_value(get(s, "service_ms")) > 0)
		fprintf(f, "; replicas answer after %lld ms",
		        (long long)json_integer_value(get(s, "service_ms")));
	if (json_is_true(get(s, "list_tools")))
		fputs("; legacy clients list tools after each initialization", f);
	if (json_is_number(k))
		fprintf(f, "; SIG%s at %g s on the load client's clock, the "
		        "replacement started %g s later on the same port",
		        str(s, "kill_signal", "KILL"), json_number_value(k),
		        json_number_value(get(s, "readiness_delay_s")));
	fputs(".", f);
	if (json_is_string(get(s, "note")))
		fprintf(f, " %s", str(s, "note", ""));
	fputs("\n\n", f);
}

/* The legend and the list of invalid repetitions under a table. */
static void footnotes(FILE *f, const json_t *s)
{
	const json_t *cells = get(s, "cells"), *c, *inv, *e;
	size_t i, j;
	int sat = 0, any_inv = 0, any_cool = 0;

	json_array_foreach(cells, i, c) {
		if (json_is_true(get(c, "saturated")))
			sat = 1;
		if (json_array_size(get(c, "invalid")) > 0)
			any_inv = 1;
		if (json_array_size(get(c, "cooldown_timeouts")) > 0)
			any_cool = 1;
	}
	if (sat)
		fprintf(f, "\n⚠ saturated: the median achieved rate is below 95%% "
		        "of the offered rate.\n");
	if (any_cool) {
		fprintf(f, "\n‡ repetitions counted although the cooldown before "
		        "them gave up (`--cooldown-max`) with TIME_WAIT sockets still "
		        "at or above its threshold:\n\n");
		json_array_foreach(cells, i, c)
			json_array_foreach(get(c, "cooldown_timeouts"), j, e) {
				fputs("- ", f);
				cell_text(f, str(c, "cell", "?"));
				fprintf(f, " (`%s`): %lld before, %lld after (threshold "
				        "%lld)\n", str(e, "run", "?"),
				        (long long)json_integer_value(get(e, "time_wait_before")),
				        (long long)json_integer_value(get(e, "time_wait_after")),
				        (long long)json_integer_value(get(e, "threshold")));
			}
	}
	if (!any_inv)
		return;
	fprintf(f, "\n† repetitions left out as invalid (not counted as zero "
	        "loss):\n\n");
	json_array_foreach(cells, i, c) {
		inv = get(c, "invalid");
		json_array_foreach(inv, j, e) {
			fputs("- ", f);
			cell_text(f, str(c, "cell", "?"));
			fprintf(f, " (`%s`): %s\n", str(e, "run", "?"),
			        str(e, "reason", "no reason recorded"));
		}
	}
}

/* A run of more than one sitting: when, on which kernel and CPU model
 * each ran (a resume may run on another machine of the same kind). */
static void sittings(FILE *f, const json_t *report)
{
	const json_t *list = get(report, "sittings"), *s;
	size_t i;

	if (!json_is_array(list) || json_array_size(list) < 2)
		return;
	fprintf(f, "Sittings: %zu", json_array_size(list));
	json_array_foreach(list, i, s)
		fprintf(f, "%s%s %s%s%s%s%s", i ? "; " : " (",
		        str(s, "command", "?"), str(s, "started_at", "?"),
		        json_is_string(get(s, "kernel")) ? " on " : "",
		        str(s, "kernel", ""),
		        json_is_string(get(s, "cpu")) ? ", " : "", str(s, "cpu", ""));
	fputs("); each repetition of a cell ran whole within one sitting.  \n",
	      f);
}

int mgw_bench_report_md(FILE *f, const json_t *report)
{
	const json_t *m = get(report, "machine"), *v = get(report, "versions"),
	             *scenes = get(report, "scenes"), *s;
	const char *key;
	json_t *val;
	size_t i;

	fprintf(f, "# mcpgw-bench results\n\n");
	if (json_is_string(get(report, "command")))
		fprintf(f, "Command: `%s`  \n", str(report, "command", ""));
	fprintf(f, "Started %s, finished %s.\n\n", str(report, "started_at", "?"),
	        str(report, "finished_at", "?"));
	fprintf(f, "Machine: %s, %s (%lld CPUs), %lld MiB memory, %s.  \n",
	        str(m, "kernel", "?"), str(m, "cpu", "?"),
	        (long long)json_integer_value(get(m, "cpus")),
	        (long long)json_integer_value(get(m, "memory_mib")),
	        str(m, "os", "?"));
	sittings(f, report);
	fputs("Versions:", f);
	i = 0;
	json_object_foreach((json_t *)v, key, val) {
		fprintf(f, "%s %s: %s", i++ ? ";" : "", key,
		        json_is_string(val) ? json_string_value(val) : "-");
	}
	fputs(".\n\nEverything ran on 127.0.0.1 of one machine (in each "
	      "sitting): replicas, "
	      "gateways and redis-server are processes standing in for pods, "
	      "and the load client shares the CPUs with them.  Absolute rates "
	      "do not transfer to other machines; which cells lose requests "
	      "and which hold the offered rate does.\n", f);
	json_array_foreach(scenes, i, s) {
		fprintf(f, "\n## %s\n\n", str(s, "scene", "?"));
		if (json_is_string(get(s, "title")))
			fprintf(f, "%s.  ", str(s, "title", ""));
		conditions(f, s);
		mgw_bench_report_md_table(f, s);
		if (mgw_bench_state_cols(str(s, "scene", NULL))) {
			fputs("\n", f);
			mgw_bench_report_md_state_table(f, s);
		}
		footnotes(f, s);
	}
	return ferror(f) ? MGW_EIO : 0;
}

/* RFC 4180: quote when the field holds a comma, quote or line break. */
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

static void csv_val(FILE *f, const json_t *v)
{
	if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		fprintf(f, "%.3f", json_real_value(v));
	else if (json_is_string(v))
		csv_str(f, json_string_value(v));
	else if (json_is_true(v))
		fputs("true", f);
	else if (json_is_false(v))
		fputs("false", f);
	/* null: empty field */
}

int mgw_bench_report_csv(FILE *f, const json_t *report)
{
	static const char *const cols[] = {
		"cell", "path", "era", "replicas", "connection", "state",
		"session_store", "victim", "offered_rps", "duration_s", "n",
		"valid", NULL, NULL, NULL, "p50_ms", "p99_ms", "session_losses",
		"handle_losses", "other_failures", "reinitializations", "repins",
		"saturated", "users", "deleted_served", "state_losses", "task_losses",
		"flow", "keep", "guard", "affinity", "dialogues", "rounds",
		"represented", "forked", "refused", "tasks", "task_polls",
		"task_owner_gone", "guard_refused", "state_bytes_per_round",
		"store_ops_per_dialogue",
	};
	static const char *const ach[] = { "median", "min", "max" };
	const size_t ncols = sizeof(cols) / sizeof(cols[0]);
	const json_t *s, *c;
	size_t i, j;

	fputs("scene", f);
	for (size_t k = 0; k < ncols; k++) {
		if (cols[k])
			fprintf(f, ",%s", cols[k]);
		else
			fprintf(f, ",achieved_rps_%s", ach[k - 12]);
	}
	fputs("\r\n", f);
	json_array_foreach(get(report, "scenes"), i, s) {
		json_array_foreach(get(s, "cells"), j, c) {
			csv_str(f, str(s, "scene", ""));
			for (size_t k = 0; k < ncols; k++) {
				fputc(',', f);
				if (cols[k])
					csv_val(f, get(c, cols[k]));
				else
					csv_val(f, get(get(c, "achieved_rps"),
					               ach[k - 12]));
			}
			fputs("\r\n", f);
		}
	}
	return ferror(f) ? MGW_EIO : 0;
}
