/* report_html_timeline.c - per-second charts of the cells that killed
 * something.  A scene's charts are built in two passes: first every
 * cell's series from its raw run files, then the charts, all on the
 * scene's largest scale - with a scale per chart, a cell that lost 40
 * requests in one second and one that lost 1 drew the same bar.
 *
 * Run files are untrusted like the report: numbers are checked, and what
 * is read is bounded (an hour of timeline, 200 runs a cell, 16 kills). */
#include "autoconf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/html_out.h"
#include "bench/src/report_html_timeline.h"

#define MAX_RUNS_PER_CELL 200
#define MAX_TIMELINE_S 3600
#define MAX_KILLS 16

/* Geometry of a chart: a successes panel above a failures panel. */
#define X0 70.0
#define PLOT_W (MGW_HTML_CHART_W - X0 - MGW_HTML_RIGHT_PAD)
#define Y_OK 30.0
#define H_OK 200.0
#define Y_F (Y_OK + H_OK + 30.0)
#define H_F 90.0
#define CHART_H (Y_F + H_F + 45.0)

/* One run's timeline and kill times, read from its raw file. */
struct run_tl {
	double ok[MAX_TIMELINE_S];
	double failed[MAX_TIMELINE_S];
	size_t n;
	double kills[MAX_KILLS];  /* "at_s" of each kill */
	size_t n_kills;
	double readies[MAX_KILLS]; /* the replacement's "healthy_at_s" */
	size_t n_readies;
};

enum run_read {
	RUN_UNREADABLE = -1, /* missing, not JSON, not a run record */
	RUN_NO_KILL = 0,     /* a run without kill records */
	RUN_INVALID = 1,     /* its kill did not land, or it did not finish */
	RUN_OK = 2,
};

/* Per-second series over a cell's runs: median and range of successes,
 * mean failures (a loss in one run of ten must stay visible, which a
 * median would hide). */
struct series {
	size_t n;
	double ok_med[MAX_TIMELINE_S], ok_min[MAX_TIMELINE_S],
	       ok_max[MAX_TIMELINE_S], fail_mean[MAX_TIMELINE_S];
	double kills[MAX_KILLS], readies[MAX_KILLS];
	size_t n_kills, n_readies;
	size_t n_runs;
};

/* What pass one found for a cell: its series (NULL when it has no valid
 * run with kills) and the counts its notes report. */
struct cell_tl {
	struct series *s;
	size_t listed, missing, invalid;
};

/* The axes every chart of a scene shares. */
struct scale {
	double top_ok, top_f; /* upper ends of the two panels */
	size_t n;             /* seconds on the time axis */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ---- pass one: run files into series ---- */

static void push_time(double *arr, size_t *n, double t)
{
	if (!isnan(t) && t >= 0 && *n < MAX_KILLS)
		arr[(*n)++] = t;
}

/* The planned length of a load run: the sum of its phases' durations
 * (warm-up included: the timeline counts from the engine's start), or
 * NAN when the report does not say. */
static double run_duration(const json_t *load)
{
	const json_t *phases = json_object_get(load, "phases"), *ph;
	double sum = 0;
	size_t i;

	if (json_array_size(phases) == 0)
		return NAN;
	json_array_foreach(phases, i, ph) {
		double d = mgw_html_field(ph, "duration_s");

		if (isnan(d))
			return NAN;
		sum += d;
	}
	return sum;
}

/* The timeline rows of a load report into r's per-second arrays. */
static void read_timeline(const json_t *load, struct run_tl *r)
{
	const json_t *tl = json_object_get(load, "timeline"), *row;
	double dur = run_duration(load);
	size_t i;

	json_array_foreach(tl, i, row) {
		double t = mgw_html_field(row, "t"), ok = mgw_html_field(row, "ok"),
		       failed = mgw_html_field(row, "failed"), cover = 1;

		if (isnan(t) || t < 0 || t >= MAX_TIMELINE_S)
			continue;
		/* the load client's last row is the partial second after the
		 * planned end: scaled to a rate, or left out when it covers
		 * too little to be one (drawn as is, it looks like a collapse
		 * at the end of every run) */
		if (!isnan(dur) && t + 1 > dur) {
			cover = dur - t;
			if (cover < 0.25)
				continue;
		}
		r->ok[(size_t)t] = isnan(ok) ? 0 : ok / cover;
		r->failed[(size_t)t] = isnan(failed) ? 0 : failed / cover;
		if ((size_t)t + 1 > r->n)
			r->n = (size_t)t + 1;
	}
}

/* Reads run record path (doc/bench.md: "valid", "kills" with each kill's
 * "at_s" and its replacement's "healthy_at_s", "load" = the load
 * client's report with its "timeline") into r. */
static enum run_read read_run(const char *path, struct run_tl *r)
{
	json_t *run, *kills, *k;
	const json_t *load;
	json_error_t jerr;
	enum run_read rc = RUN_UNREADABLE;
	size_t i;

	memset(r, 0, sizeof(*r));
	run = json_load_file(path, 0, &jerr);
	load = json_object_get(run, "load");
	kills = json_object_get(run, "kills");
	if (!json_is_object(run))
		goto out;
	rc = RUN_NO_KILL;
	if (json_array_size(kills) == 0)
		goto out;
	rc = RUN_INVALID;
	if (!json_is_true(json_object_get(run, "valid")) ||
	    !json_is_array(json_object_get(load, "timeline")))
		goto out;
	json_array_foreach(kills, i, k) {
		if (!json_is_true(json_object_get(k, "valid")))
			goto out;
		push_time(r->kills, &r->n_kills, mgw_html_field(k, "at_s"));
		push_time(r->readies, &r->n_readies,
		          mgw_html_field(json_object_get(k, "replacement"),
		                         "healthy_at_s"));
	}
	read_timeline(load, r);
	rc = r->n > 0 ? RUN_OK : RUN_INVALID;
out:
	json_decref(run);
	return rc;
}

/* Adds a marker time unless one within 50 ms is there already: the
 * repetitions of a cell kill at (almost) the same second, and one line
 * per repetition would only thicken the marker. */
static void add_marker(double *arr, size_t *n, double t)
{
	for (size_t i = 0; i < *n; i++)
		if (fabs(arr[i] - t) < 0.05)
			return;
	if (*n < MAX_KILLS)
		arr[(*n)++] = t;
}

/* Second t of the series: median and range of successes, mean failures
 * over the runs that lasted that long. */
static void series_second(struct series *s, const struct run_tl *runs,
                          size_t n, size_t t)
{
	double vals[MAX_RUNS_PER_CELL], fsum = 0;
	size_t m = 0;

	for (size_t r = 0; r < n; r++) {
		if (t >= runs[r].n)
			continue;
		vals[m++] = runs[r].ok[t];
		fsum += runs[r].failed[t];
	}
	if (m == 0)
		return;
	qsort(vals, m, sizeof(vals[0]), cmp_double);
	s->ok_min[t] = vals[0];
	s->ok_max[t] = vals[m - 1];
	s->ok_med[t] = m % 2 ? vals[m / 2] : (vals[m / 2 - 1] + vals[m / 2]) / 2;
	s->fail_mean[t] = fsum / (double)m;
}

static void series_build(struct series *s, const struct run_tl *runs,
                         size_t n)
{
	memset(s, 0, sizeof(*s));
	s->n_runs = n;
	for (size_t r = 0; r < n; r++) {
		if (runs[r].n > s->n)
			s->n = runs[r].n;
		for (size_t k = 0; k < runs[r].n_kills; k++)
			add_marker(s->kills, &s->n_kills, runs[r].kills[k]);
		for (size_t k = 0; k < runs[r].n_readies; k++)
			add_marker(s->readies, &s->n_readies, runs[r].readies[k]);
	}
	for (size_t t = 0; t < s->n; t++)
		series_second(s, runs, n, t);
}

/* Reads the run files of cell into out (tl is scratch room for
 * MAX_RUNS_PER_CELL runs), building its series when a run is valid. */
static int cell_read(const json_t *cell, const char *run_dir,
                     struct run_tl *tl, struct cell_tl *out)
{
	size_t i, n = 0;
	json_t *p;

	json_array_foreach(json_object_get(cell, "runs"), i, p) {
		const char *rel = json_string_value(p);
		char path[4096];

		if (!rel || out->listed >= MAX_RUNS_PER_CELL)
			continue;
		out->listed++;
		if (rel[0] == '/' || !run_dir)
			snprintf(path, sizeof(path), "%s", rel);
		else
			snprintf(path, sizeof(path), "%s/%s", run_dir, rel);
		switch (read_run(path, &tl[n])) {
		case RUN_UNREADABLE: out->missing++; break;
		case RUN_NO_KILL: break;
		case RUN_INVALID: out->invalid++; break;
		case RUN_OK: n++; break;
		}
	}
	if (n == 0)
		return 0;
	out->s = malloc(sizeof(*out->s));
	if (!out->s)
		return MGW_ENOMEM;
	series_build(out->s, tl, n);
	return 0;
}

/* Widens sc to hold series s. */
static void scale_add(struct scale *sc, const struct series *s)
{
	for (size_t t = 0; t < s->n; t++) {
		sc->top_ok = fmax(sc->top_ok, s->ok_max[t]);
		sc->top_f = fmax(sc->top_f, s->fail_mean[t]);
	}
	if (s->n > sc->n)
		sc->n = s->n;
}

/* ---- pass two: the charts ---- */

/* One panel: y axis with ticks from 0 to top (the last tick, class
 * "ymax", is the panel's upper end), plot area at (X0, y0) of height h. */
static void panel_axes(FILE *f, const char *panel, double y0, double h,
                       double top, const char *label)
{
	double st = mgw_html_nice_step(top);
	size_t nt = (size_t)llround(top / st);

	fprintf(f, "<g class=\"yaxis\" data-panel=\"%s\">\n", panel);
	for (size_t i = 0; i <= nt; i++) {
		double v = (double)i * st, y = y0 + h - v / top * h;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"#e4e4e4\"/><text class=\"%s\" x=\"%.1f\" "
		        "y=\"%.1f\" text-anchor=\"end\">%g</text>\n", X0, y,
		        X0 + PLOT_W, y, i == nt ? "ymax" : "ytick", X0 - 6, y + 4,
		        v);
	}
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
	        "fill=\"none\" stroke=\"#999\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
	        "transform=\"rotate(-90 %.1f %.1f)\" text-anchor=\"middle\">%s"
	        "</text>\n</g>\n", X0, y0, PLOT_W, h, X0 - 44, y0 + h / 2,
	        X0 - 44, y0 + h / 2, label);
}

/* The time axis under the failures panel, 0 to sc->n seconds. */
static void time_axis(FILE *f, const struct scale *sc, double xs)
{
	double st = mgw_html_nice_step((double)sc->n);

	for (double t = 0; t <= (double)sc->n + st / 2; t += st)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g"
		        "</text>\n", X0 + t * xs, Y_F + H_F + 16, t);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">seconds "
	        "since the load run started</text>\n", X0 + PLOT_W / 2,
	        CHART_H - 6);
}

static double y_of(double v, double y0, double h, double top)
{
	return y0 + h - fmin(v, top) / top * h;
}

/* Successes: the min-max band, then the median line. */
static void draw_successes(FILE *f, const struct series *s, double xs,
                           double top)
{
	fputs("<path fill=\"#2e7d32\" fill-opacity=\"0.18\" stroke=\"none\" "
	      "d=\"", f);
	for (size_t t = 0; t < s->n; t++)
		fprintf(f, "%s%.1f %.1f", t ? "L" : "M", X0 + (t + 0.5) * xs,
		        y_of(s->ok_max[t], Y_OK, H_OK, top));
	for (size_t t = s->n; t-- > 0;)
		fprintf(f, "L%.1f %.1f", X0 + (t + 0.5) * xs,
		        y_of(s->ok_min[t], Y_OK, H_OK, top));
	fputs("Z\"/>\n<path fill=\"none\" stroke=\"#2e7d32\" "
	      "stroke-width=\"2\" d=\"", f);
	for (size_t t = 0; t < s->n; t++)
		fprintf(f, "%s%.1f %.1f", t ? "L" : "M", X0 + (t + 0.5) * xs,
		        y_of(s->ok_med[t], Y_OK, H_OK, top));
	fputs("\"/>\n", f);
}

/* Failures: one bar per second with a failure. */
static void draw_failures(FILE *f, const struct series *s, double xs,
                          double top)
{
	for (size_t t = 0; t < s->n; t++) {
		double v = s->fail_mean[t], bh;

		if (!(v > 0))
			continue;
		bh = fmax(fmin(v, top) / top * H_F, 1);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		        "height=\"%.1f\" fill=\"#c0392b\"><title>t=%zu s: %.2f "
		        "failures/s</title></rect>\n", X0 + t * xs + xs * 0.1,
		        Y_F + H_F - bh, fmax(xs * 0.8, 1), bh, t, v);
	}
}

/* Vertical markers across both panels (class cls: "kill" or "ready");
 * the label goes on the first only, the rest have tooltips. */
static void draw_markers(FILE *f, const char *cls, const double *ts,
                         size_t n, const struct scale *sc, double xs)
{
	int ready = !strcmp(cls, "ready");

	for (size_t k = 0; k < n; k++) {
		double x = X0 + ts[k] * xs;

		if (ts[k] > (double)sc->n)
			continue;
		fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		        "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
		        "stroke-dasharray=\"%s\"><title>%s at %.2f s</title>"
		        "</line>\n", cls, x, Y_OK - 4, x, Y_F + H_F,
		        ready ? "#1f5fbf" : "#000", ready ? "2 3" : "6 3",
		        ready ? "replacement healthy" : "kill", ts[k]);
		if (k == 0)
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"%s>%s</text>\n",
			        x + 3, Y_OK + (ready ? 26 : 12),
			        ready ? " fill=\"#1f5fbf\"" : "",
			        ready ? "replacement ready" : "kill");
	}
}

static void kill_chart(FILE *f, const json_t *cell, const struct series *s,
                       const struct scale *sc)
{
	const json_t *name = json_object_get(cell, "cell");
	double xs = PLOT_W / (double)sc->n;

	fputs("<h3>", f);
	mgw_html_esc_json(f, name);
	fputs(": per second around the kill</h3>\n<figure>", f);
	mgw_html_svg_open(f, "timeline", MGW_HTML_CHART_W, CHART_H, name,
	                  "successes and failures per second");
	panel_axes(f, "ok", Y_OK, H_OK, sc->top_ok, "successes/s");
	panel_axes(f, "failed", Y_F, H_F, sc->top_f, "failures/s");
	time_axis(f, sc, xs);
	draw_successes(f, s, xs, sc->top_ok);
	draw_failures(f, s, xs, sc->top_f);
	draw_markers(f, "kill", s->kills, s->n_kills, sc, xs);
	draw_markers(f, "ready", s->readies, s->n_readies, sc, xs);
	mgw_html_swatch(f, X0, 15, 12, "#2e7d32",
	                "successes/s (median; band = min&#8211;max)");
	mgw_html_swatch(f, X0 + 300, 15, 12, "#c0392b", "failures/s (mean)");
	fputs("</svg><figcaption>", f);
	mgw_html_esc_json(f, name);
	fprintf(f, ": successes and failures per second over %zu valid run%s; "
	        "dashed line = kill, dotted = replacement healthy (times on the "
	        "bench's clock, from the start of the load run). The axes are "
	        "the same for every chart of this scene.</figcaption>"
	        "</figure>\n", s->n_runs, s->n_runs == 1 ? "" : "s");
}

/* The notes of a cell: why it has no chart, or what its chart lacks. */
static void cell_notes(FILE *f, const json_t *cell, const struct cell_tl *c)
{
	const json_t *name = json_object_get(cell, "cell");

	if (!c->s && c->invalid > 0) {
		fputs("<p class=\"note\">", f);
		mgw_html_esc_json(f, name);
		fprintf(f, ": no per-second chart, no valid repetition (%zu "
		        "invalid: the kill did not land or the run did not "
		        "finish).</p>\n", c->invalid);
	}
	if (c->missing > 0) {
		fputs("<p class=\"note\">", f);
		mgw_html_esc_json(f, name);
		fprintf(f, ": %zu of %zu run file%s missing or unreadable%s.</p>\n",
		        c->missing, c->listed, c->listed == 1 ? "" : "s",
		        c->s ? "; the chart shows the others" : "");
	}
}

int mgw_html_scene_timelines(FILE *f, const json_t *cells, const char *run_dir)
{
	size_t i, n = json_array_size(cells);
	struct scale sc = { 0, 0, 0 };
	struct cell_tl *ct = calloc(n + 1, sizeof(*ct));
	struct run_tl *tl = calloc(MAX_RUNS_PER_CELL, sizeof(*tl));
	json_t *c;
	int rc = MGW_ENOMEM;

	if (!ct || !tl)
		goto fail;
	json_array_foreach(cells, i, c) {
		if ((rc = cell_read(c, run_dir, tl, &ct[i])) < 0)
			goto fail;
		if (ct[i].s)
			scale_add(&sc, ct[i].s);
	}
	sc.top_ok = mgw_html_nice_max(sc.top_ok);
	sc.top_f = mgw_html_nice_max(sc.top_f);
	json_array_foreach(cells, i, c) {
		if (ct[i].s)
			kill_chart(f, c, ct[i].s, &sc);
		cell_notes(f, c, &ct[i]);
	}
	rc = 0;
fail:
	for (i = 0; ct && i < n; i++)
		free(ct[i].s);
	free(ct);
	free(tl);
	return rc;
}
