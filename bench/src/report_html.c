/* report_html.c - renders report.json (plus the raw runs it lists) as one
 * self-contained HTML page: a header with the machine and versions, then
 * per scene the table of report.md, a bar chart of achieved requests/s
 * per cell, and for cells whose runs killed something a per-second chart
 * of successes and failures with the kill marked.  The charts are SVG
 * written by hand: a page that needs no script or network renders the
 * same in a browser, a CI artifact viewer and a headless screenshot.
 *
 * Everything taken from a report is untrusted text for this file: it is
 * escaped on output, numbers are checked for finiteness before they
 * become coordinates, and the amount read from run files is bounded. */
#include "autoconf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/report_html.h"

/* Bounds on what one chart reads: a run file longer than an hour of
 * timeline, or a cell with more runs than any bench would repeat, is
 * clipped rather than allowed to grow the page without limit. */
#define MAX_RUNS_PER_CELL 200
#define MAX_TIMELINE_S 3600
#define MAX_KILLS 16
#define MAX_KILLS_SOAK 1440 /* a day's soak at one kill a minute */

/* Chart geometry (SVG user units = CSS px at 100%). */
#define CHART_W 900.0
#define BAR_ROW_H 26.0
#define BAR_LABEL_W 300.0
#define PLOT_RIGHT_PAD 30.0
#define LABEL_MAX 42 /* bytes of a cell name beside its bar */

static const char CSS[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
	"margin:24px;color:#1b1b1b;background:#fff;max-width:1100px}"
	"h1{font-size:1.6em;margin:0 0 .3em}"
	"h2{font-size:1.3em;margin:1.6em 0 .4em;border-bottom:1px solid #ccc}"
	"h3{font-size:1.05em;margin:1.2em 0 .3em}"
	"table{border-collapse:collapse;margin:.4em 0 1em;font-size:.9em}"
	"th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
	"th{background:#f0f0f0}"
	"td.l,th.l{text-align:left}"
	"tr.sat td{background:#fff4e0}"
	"table.kv td,table.kv th{text-align:left}"
	"figure{margin:.5em 0 1.5em}"
	"figcaption{font-size:.85em;color:#555;margin-top:.2em}"
	"svg{display:block;background:#fff}"
	"svg text{font-family:system-ui,sans-serif;font-size:12px;fill:#333}"
	"p.note{color:#7a4b00;font-size:.9em}"
	"p.small{color:#555;font-size:.85em}"
	"ul.invalid{font-size:.85em;color:#7a4b00}";

/* ---- output helpers ---- */

/* HTML-escapes s (text and attribute values alike: the five characters
 * that can end a text node or an attribute). */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f); break;
		}
	}
}

/* A JSON value shown as text: strings as they are, numbers compactly,
 * anything else as compact JSON; all of it escaped. */
static void esc_json(FILE *f, const json_t *v)
{
	char *s;

	if (!v || json_is_null(v)) {
		fputs("-", f);
		return;
	}
	if (json_is_string(v)) {
		esc(f, json_string_value(v));
		return;
	}
	if (json_is_integer(v)) {
		fprintf(f, "%lld", (long long)json_integer_value(v));
		return;
	}
	if (json_is_real(v)) {
		fprintf(f, "%g", json_real_value(v));
		return;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	esc(f, s ? s : "?");
	free(s);
}

/* A chart label: at most max bytes of the cell name (cut on a UTF-8
 * character boundary, with an ellipsis), escaped; the full name stays in
 * the table and in the chart's tooltips. */
static void esc_label(FILE *f, const json_t *v, size_t max)
{
	const char *s = json_string_value(v);
	char buf[256];
	size_t n;

	if (!s || strlen(s) <= max || max >= sizeof(buf)) {
		esc_json(f, v);
		return;
	}
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	memcpy(buf, s, n);
	buf[n] = 0;
	esc(f, buf);
	fputs("&#8230;", f);
}

/* A number from a JSON value, or NAN when it is absent, null, not a
 * number or not finite: callers draw nothing for NAN. */
static double num(const json_t *v)
{
	double d;

	if (!v || !json_is_number(v))
		return NAN;
	d = json_number_value(v);
	return isfinite(d) ? d : NAN;
}

static double field(const json_t *o, const char *key)
{
	return num(json_object_get(o, key));
}

static const char *str_field(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Tick step of 1, 2 or 5 times a power of ten giving at most ~5 ticks
 * from 0 to max. */
static double nice_step(double max)
{
	double raw, mag, n;

	if (!(max > 0))
		return 1;
	raw = max / 5.0;
	mag = pow(10.0, floor(log10(raw)));
	n = raw / mag;
	return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
}

/* Upper end of an axis: max rounded up to a whole step (1 when there is
 * nothing to show, so a zero-only series still has a scale). */
static double nice_max(double max)
{
	double st = nice_step(max);

	if (!(max > 0))
		return 1;
	return ceil(max / st) * st;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ---- header ---- */

static void kv_table(FILE *f, const char *title, const json_t *o)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o) || json_object_size(o) == 0)
		return;
	fprintf(f, "<h2>%s</h2>\n<table class=\"kv\">\n", title);
	json_object_foreach((json_t *)o, k, v) {
		fputs("<tr><th>", f);
		esc(f, k);
		fputs("</th><td>", f);
		esc_json(f, v);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* Top-level scalars other than the known sections (a start time, the
 * command line, options): shown so a reader knows how the run was made. */
static void run_table(FILE *f, const json_t *report)
{
	const char *k;
	json_t *v;
	int any = 0;

	json_object_foreach((json_t *)report, k, v) {
		if (json_is_object(v) ||
		    json_is_array(v))
			continue;
		if (!any)
			fputs("<h2>Run</h2>\n<table class=\"kv\">\n", f);
		any = 1;
		fputs("<tr><th>", f);
		esc(f, k);
		fputs("</th><td>", f);
		esc_json(f, v);
		fputs("</td></tr>\n", f);
	}
	if (any)
		fputs("</table>\n", f);
}

/* ---- scene table ---- */

/* Latency like report.md: two decimals below 10 ms, one above. */
static void td_ms(FILE *f, double v)
{
	if (isnan(v))
		fputs("<td>&#8211;</td>", f);
	else
		fprintf(f, v < 10 ? "<td>%.2f</td>" : "<td>%.1f</td>", v);
}

static void td_count(FILE *f, double v)
{
	if (isnan(v))
		fputs("<td>&#8211;</td>", f);
	else
		fprintf(f, "<td>%.0f</td>", v);
}

/* The scene's conditions in one sentence, as report.md writes them. */
static void scene_conditions(FILE *f, const json_t *scene)
{
	double off = field(scene, "offered_rps"), dur = field(scene, "duration_s"),
	       reps = field(scene, "reps"), kill = field(scene, "kill_at_s"),
	       ready = field(scene, "readiness_delay_s");
	const char *title = str_field(scene, "title"),
	           *sig = str_field(scene, "kill_signal");

	if (!title && isnan(off) && isnan(dur) && isnan(reps))
		return;
	fputs("<p>", f);
	if (title) {
		esc(f, title);
		fputs(". ", f);
	}
	if (!isnan(off))
		fprintf(f, "Offered %g rps (open loop)", off);
	if (!isnan(dur))
		fprintf(f, " for %g s per run", dur);
	if (!isnan(reps))
		fprintf(f, ", %g repetition%s per cell", reps,
		        reps == 1 ? "" : "s");
	if (!isnan(kill)) {
		fputs("; SIG", f);
		esc(f, sig ? sig : "KILL");
		fprintf(f, " at %g s", kill);
		if (!isnan(ready))
			fprintf(f, ", the replacement started %g s later on the "
			        "same port", ready);
	}
	fputs(".</p>\n", f);
}

static void scene_table(FILE *f, const json_t *cells)
{
	size_t i;
	json_t *c;

	fputs("<table>\n<tr><th class=\"l\">cell</th><th>n</th>"
	      "<th>achieved rps, median (range)</th><th>p50 ms</th>"
	      "<th>p99 ms</th><th>session losses</th><th>handle losses</th>"
	      "<th>other failures</th><th>re-pins</th></tr>\n", f);
	json_array_foreach(cells, i, c) {
		const json_t *a = json_object_get(c, "achieved_rps");
		double n = field(c, "n"), valid = field(c, "valid");
		double med = field(a, "median"), lo = field(a, "min"),
		       hi = field(a, "max");
		int sat = json_is_true(json_object_get(c, "saturated"));

		fprintf(f, "<tr%s><td class=\"l\">", sat ? " class=\"sat\"" : "");
		esc_json(f, json_object_get(c, "cell"));
		fputs("</td>", f);
		if (isnan(valid))
			td_count(f, n);
		else
			fprintf(f, "<td>%.0f%s</td>", valid,
			        !isnan(n) && valid < n ? "&#8224;" : "");
		fputs("<td>", f);
		if (isnan(med))
			fputs("&#8211;", f);
		else
			fprintf(f, "%.1f", med);
		if (!isnan(med) && !isnan(lo) && !isnan(hi))
			fprintf(f, " (%.1f&#8211;%.1f)", lo, hi);
		if (sat)
			fputs(" &#9888;", f);
		fputs("</td>", f);
		td_ms(f, field(c, "p50_ms"));
		td_ms(f, field(c, "p99_ms"));
		td_count(f, field(c, "session_losses"));
		td_count(f, field(c, "handle_losses"));
		td_count(f, field(c, "other_failures"));
		td_count(f, field(c, "repins"));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The legend and the invalid repetitions with their reasons, under the
 * table (an invalid repetition is left out, never counted as no loss). */
static void scene_footnotes(FILE *f, const json_t *cells)
{
	size_t i, j;
	json_t *c, *e;
	int sat = 0, any = 0;

	json_array_foreach(cells, i, c) {
		sat |= json_is_true(json_object_get(c, "saturated"));
		any |= json_array_size(json_object_get(c, "invalid")) > 0;
	}
	if (sat)
		fputs("<p class=\"small\">&#9888; saturated: the median achieved "
		      "rate is below 95% of the offered rate.</p>\n", f);
	if (!any)
		return;
	fputs("<p class=\"small\">&#8224; repetitions left out as invalid (not "
	      "counted as zero loss):</p>\n<ul class=\"invalid\">\n", f);
	json_array_foreach(cells, i, c) {
		json_array_foreach(json_object_get(c, "invalid"), j, e) {
			const char *why = str_field(e, "reason");

			fputs("<li>", f);
			esc_json(f, json_object_get(c, "cell"));
			fputs(" (<code>", f);
			esc_json(f, json_object_get(e, "run"));
			fputs("</code>): ", f);
			esc(f, why ? why : "no reason recorded");
			fputs("</li>\n", f);
		}
	}
	fputs("</ul>\n", f);
}

/* ---- bar chart: achieved rps per cell ---- */

static void bar_chart(FILE *f, const json_t *cells)
{
	size_t i, n = json_array_size(cells);
	double top = 0, plot_w, x0 = BAR_LABEL_W, h, st;
	json_t *c;

	json_array_foreach(cells, i, c) {
		const json_t *a = json_object_get(c, "achieved_rps");
		double v[4] = { field(a, "median"), field(a, "max"),
			        field(a, "min"), field(c, "offered_rps") };

		for (int k = 0; k < 4; k++)
			if (!isnan(v[k]) && v[k] > top)
				top = v[k];
	}
	top = nice_max(top);
	st = nice_step(top);
	plot_w = CHART_W - x0 - PLOT_RIGHT_PAD;
	h = 30 + n * BAR_ROW_H + 40;
	fprintf(f, "<figure><svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" "
	        "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	        "role=\"img\">\n<title>achieved requests/s per cell</title>\n",
	        CHART_W, h, CHART_W, h);
	/* grid and axis labels */
	for (double t = 0; t <= top + st / 2; t += st) {
		double x = x0 + t / top * plot_w;

		fprintf(f, "<line x1=\"%.1f\" y1=\"20\" x2=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"#e4e4e4\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"middle\">%g</text>\n",
		        x, x, 30 + n * BAR_ROW_H, x, 30 + n * BAR_ROW_H + 16, t);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
	        "requests/s</text>\n", x0 + plot_w / 2, h - 4);
	json_array_foreach(cells, i, c) {
		const json_t *a = json_object_get(c, "achieved_rps");
		double med = field(a, "median"), lo = field(a, "min"),
		       hi = field(a, "max"), off = field(c, "offered_rps");
		double y = 30 + i * BAR_ROW_H, cy = y + BAR_ROW_H / 2;
		int sat = json_is_true(json_object_get(c, "saturated"));

		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
		        x0 - 8, cy + 4);
		esc_label(f, json_object_get(c, "cell"), LABEL_MAX);
		fputs("<title>", f);
		esc_json(f, json_object_get(c, "cell"));
		fputs("</title></text>\n", f);
		if (!isnan(med)) {
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			        "height=\"%.1f\" fill=\"%s\"><title>",
			        x0, y + 4, fmax(med / top * plot_w, 0.5),
			        BAR_ROW_H - 8, sat ? "#e69f00" : "#3b73b9");
			esc_json(f, json_object_get(c, "cell"));
			fprintf(f, ": median %.1f rps", med);
			if (!isnan(lo) && !isnan(hi))
				fprintf(f, ", range %.1f&#8211;%.1f", lo, hi);
			if (sat)
				fputs(" (saturated)", f);
			fputs("</title></rect>\n", f);
		}
		if (!isnan(lo) && !isnan(hi)) {
			double xl = x0 + lo / top * plot_w,
			       xh = x0 + hi / top * plot_w;

			fprintf(f, "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1f"
			        "M%.1f %.1fV%.1f\" stroke=\"#222\" "
			        "stroke-width=\"1.5\" fill=\"none\"/>\n",
			        xl, cy, xh, xl, cy - 6, cy + 6, xh, cy - 6,
			        cy + 6);
		}
		if (!isnan(off)) {
			double xo = x0 + off / top * plot_w;

			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			        "y2=\"%.1f\" stroke=\"#c0392b\" stroke-width=\"2\" "
			        "stroke-dasharray=\"4 2\"><title>offered %.1f rps"
			        "</title></line>\n",
			        xo, y + 1, xo, y + BAR_ROW_H - 1, off);
		}
	}
	/* legend */
	fprintf(f, "<rect x=\"%.1f\" y=\"4\" width=\"12\" height=\"10\" "
	        "fill=\"#3b73b9\"/><text x=\"%.1f\" y=\"13\">achieved "
	        "(median)</text>\n<path d=\"M%.1f 9H%.1f\" stroke=\"#222\" "
	        "stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"13\">min&#8211;max"
	        "</text>\n<line x1=\"%.1f\" y1=\"3\" x2=\"%.1f\" y2=\"15\" "
	        "stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>"
	        "<text x=\"%.1f\" y=\"13\">offered</text>\n"
	        "<rect x=\"%.1f\" y=\"4\" width=\"12\" height=\"10\" "
	        "fill=\"#e69f00\"/><text x=\"%.1f\" y=\"13\">saturated "
	        "(&lt; 95%% of offered)</text>\n",
	        x0, x0 + 16, x0 + 140, x0 + 160, x0 + 166, x0 + 240, x0 + 240,
	        x0 + 248, x0 + 320, x0 + 336);
	fputs("</svg><figcaption>Achieved requests/s per cell: bar = median "
	      "over valid repetitions, whisker = min&#8211;max, dashed = "
	      "offered rate.</figcaption></figure>\n", f);
}

/* ---- kill charts: per-second successes and failures ---- */

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
		double d = field(ph, "duration_s");

		if (isnan(d))
			return NAN;
		sum += d;
	}
	return sum;
}

/* Reads run record path (doc/bench.md: "valid", "kills" with each kill's
 * "at_s" and its replacement's "healthy_at_s", "load" = the load
 * client's report with its "timeline") into r. */
static enum run_read read_run(const char *path, struct run_tl *r)
{
	json_t *run, *kills, *k, *row;
	const json_t *load, *tl;
	json_error_t jerr;
	enum run_read rc = RUN_UNREADABLE;
	double dur;
	size_t i;

	memset(r, 0, sizeof(*r));
	run = json_load_file(path, 0, &jerr);
	load = json_object_get(run, "load");
	tl = json_object_get(load, "timeline");
	kills = json_object_get(run, "kills");
	if (!json_is_object(run))
		goto out;
	rc = RUN_NO_KILL;
	if (json_array_size(kills) == 0)
		goto out;
	rc = RUN_INVALID;
	if (!json_is_true(json_object_get(run, "valid")) || !json_is_array(tl))
		goto out;
	json_array_foreach(kills, i, k) {
		if (!json_is_true(json_object_get(k, "valid")))
			goto out;
		push_time(r->kills, &r->n_kills, field(k, "at_s"));
		push_time(r->readies, &r->n_readies,
		          field(json_object_get(k, "replacement"), "healthy_at_s"));
	}
	dur = run_duration(load);
	json_array_foreach(tl, i, row) {
		double t = field(row, "t"), ok = field(row, "ok"),
		       failed = field(row, "failed"), cover = 1;

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
	rc = r->n > 0 ? RUN_OK : RUN_INVALID;
out:
	json_decref(run);
	return rc;
}

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

static void series_build(struct series *s, struct run_tl *runs, size_t n)
{
	double vals[MAX_RUNS_PER_CELL];

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
	for (size_t t = 0; t < s->n; t++) {
		size_t m = 0;
		double fsum = 0;

		for (size_t r = 0; r < n; r++) {
			if (t >= runs[r].n)
				continue;
			vals[m++] = runs[r].ok[t];
			fsum += runs[r].failed[t];
		}
		if (m == 0)
			continue;
		qsort(vals, m, sizeof(vals[0]), cmp_double);
		s->ok_min[t] = vals[0];
		s->ok_max[t] = vals[m - 1];
		s->ok_med[t] = m % 2 ? vals[m / 2]
		                     : (vals[m / 2 - 1] + vals[m / 2]) / 2;
		s->fail_mean[t] = fsum / (double)m;
	}
}

/* One panel: y axis with ticks from 0 to top, plot area at (x0, y0) of
 * size (w, h). */
static void panel_axes(FILE *f, double x0, double y0, double w, double h,
                       double top, const char *label)
{
	double st = nice_step(top);

	for (double v = 0; v <= top + st / 2; v += st) {
		double y = y0 + h - v / top * h;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"#e4e4e4\"/><text x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"end\">%g</text>\n",
		        x0, y, x0 + w, y, x0 - 6, y + 4, v);
	}
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
	        "fill=\"none\" stroke=\"#999\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
	        "transform=\"rotate(-90 %.1f %.1f)\" text-anchor=\"middle\">%s"
	        "</text>\n", x0, y0, w, h, x0 - 44, y0 + h / 2, x0 - 44,
	        y0 + h / 2, label);
}

/* A polyline path through values at the middle of each second. */
static void path_line(FILE *f, const double *v, size_t n, double x0,
                      double xs, double y0, double h, double top)
{
	for (size_t t = 0; t < n; t++)
		fprintf(f, "%s%.1f %.1f", t ? "L" : "M", x0 + (t + 0.5) * xs,
		        y0 + h - fmin(v[t], top) / top * h);
}

/* How one kind of vertical marker looks. */
struct marker_style {
	const char *cls, *stroke, *dash;
	const char *what;   /* the tooltip: "<what> at T s" */
	const char *label;  /* written beside the first marker only */
	double label_dy;    /* its offset below the top */
};

static const struct marker_style kill_marker = {
	"kill", "#000", "6 3", "kill", "kill", 16,
};
static const struct marker_style ready_marker = {
	"ready", "#1f5fbf", "2 3", "replacement healthy", "replacement ready",
	30,
};

/* Vertical lines from y1 to y2 at times t[0..n) (x = x0 + t * xs), those
 * after tmax left out; the label goes on the first one only, the rest
 * have tooltips (one label per kill would be unreadable). */
static void markers(FILE *f, const double *t, size_t n, double x0, double xs,
                    double y1, double y2, double tmax,
                    const struct marker_style *m)
{
	int labelled = 0;

	for (size_t k = 0; k < n; k++) {
		double x = x0 + t[k] * xs;

		if (!(t[k] >= 0) || t[k] > tmax)
			continue;
		fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" "
		        "x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		        "stroke-width=\"1.5\" stroke-dasharray=\"%s\"><title>%s "
		        "at %.2f s</title></line>\n", m->cls, x, y1, x, y2, m->stroke,
		        m->dash, m->what, t[k]);
		if (!labelled++)
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s"
			        "</text>\n", x + 3, y1 + m->label_dy, m->stroke,
			        m->label);
	}
}

/* x axis ticks under a plot (seconds from 0 to tmax) and its title. */
static void x_axis(FILE *f, double x0, double w, double y, double tmax,
                   double H)
{
	double st = nice_step(tmax);

	for (double t = 0; t <= tmax + st / 2; t += st)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g"
		        "</text>\n", x0 + t / tmax * w, y, t);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">seconds "
	        "since the load run started</text>\n", x0 + w / 2, H - 6);
}

static void kill_chart(FILE *f, const json_t *cell, const struct series *s)
{
	const double x0 = 70, w = CHART_W - x0 - PLOT_RIGHT_PAD;
	const double y_ok = 30, h_ok = 200, y_f = y_ok + h_ok + 30, h_f = 90;
	const double H = y_f + h_f + 45;
	double top_ok = 0, top_f = 0, xs = w / (double)s->n;

	for (size_t t = 0; t < s->n; t++) {
		top_ok = fmax(top_ok, s->ok_max[t]);
		top_f = fmax(top_f, s->fail_mean[t]);
	}
	top_ok = nice_max(top_ok);
	top_f = nice_max(top_f);
	fputs("<h3>", f);
	esc_json(f, json_object_get(cell, "cell"));
	fputs(": per second around the kill</h3>\n", f);
	fprintf(f, "<figure><svg class=\"timeline\" "
	        "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
	        "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
	        "<title>", CHART_W, H, CHART_W, H);
	esc_json(f, json_object_get(cell, "cell"));
	fputs(": successes and failures per second</title>\n", f);
	panel_axes(f, x0, y_ok, w, h_ok, top_ok, "successes/s");
	panel_axes(f, x0, y_f, w, h_f, top_f, "failures/s");
	x_axis(f, x0, w, y_f + h_f + 16, (double)s->n, H);
	/* successes: min-max band, then the median line */
	fputs("<path fill=\"#2e7d32\" fill-opacity=\"0.18\" stroke=\"none\" d=\"",
	      f);
	path_line(f, s->ok_max, s->n, x0, xs, y_ok, h_ok, top_ok);
	for (size_t t = s->n; t-- > 0;)
		fprintf(f, "L%.1f %.1f", x0 + (t + 0.5) * xs,
		        y_ok + h_ok - fmin(s->ok_min[t], top_ok) / top_ok * h_ok);
	fputs("Z\"/>\n<path fill=\"none\" stroke=\"#2e7d32\" stroke-width=\"2\" "
	      "d=\"", f);
	path_line(f, s->ok_med, s->n, x0, xs, y_ok, h_ok, top_ok);
	fputs("\"/>\n", f);
	/* failures: one bar per second */
	for (size_t t = 0; t < s->n; t++) {
		double v = s->fail_mean[t], bh;

		if (!(v > 0))
			continue;
		bh = fmax(fmin(v, top_f) / top_f * h_f, 1);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		        "height=\"%.1f\" fill=\"#c0392b\"><title>t=%zu s: %.2f "
		        "failures/s</title></rect>\n", x0 + t * xs + xs * 0.1,
		        y_f + h_f - bh, fmax(xs * 0.8, 1), bh, t, v);
	}
	/* kill and replacement-ready markers across both panels */
	markers(f, s->kills, s->n_kills, x0, xs, y_ok - 4, y_f + h_f,
	        (double)s->n, &kill_marker);
	markers(f, s->readies, s->n_readies, x0, xs, y_ok - 4, y_f + h_f,
	        (double)s->n, &ready_marker);
	fprintf(f, "<rect x=\"%.1f\" y=\"6\" width=\"12\" height=\"10\" "
	        "fill=\"#2e7d32\"/><text x=\"%.1f\" y=\"15\">successes/s "
	        "(median; band = min&#8211;max)</text>\n<rect x=\"%.1f\" y=\"6\" "
	        "width=\"12\" height=\"10\" fill=\"#c0392b\"/><text x=\"%.1f\" "
	        "y=\"15\">failures/s (mean)</text>\n",
	        x0, x0 + 16, x0 + 300, x0 + 316);
	fputs("</svg><figcaption>", f);
	esc_json(f, json_object_get(cell, "cell"));
	fprintf(f, ": successes and failures per second over %zu valid run%s; "
	        "dashed line = kill, dotted = replacement healthy (times on the "
	        "bench's clock, from the start of the load run)."
	        "</figcaption></figure>\n", s->n_runs, s->n_runs == 1 ? "" : "s");
}

/* The kill chart of one cell, or a note saying why there is none.  Cells
 * whose runs carry no kill records (scale-out, handles) get nothing. */
static int cell_kill_chart(FILE *f, const json_t *cell, const char *run_dir)
{
	const json_t *runs = json_object_get(cell, "runs");
	struct run_tl *tl = NULL;
	struct series *s = NULL;
	size_t i, n = 0, missing = 0, invalid = 0, listed = 0;
	json_t *p;
	int rc = 0;

	if (!json_is_array(runs) || json_array_size(runs) == 0)
		return 0;
	tl = calloc(MAX_RUNS_PER_CELL, sizeof(*tl));
	s = calloc(1, sizeof(*s));
	if (!tl || !s) {
		rc = MGW_ENOMEM;
		goto fail;
	}
	json_array_foreach(runs, i, p) {
		const char *rel = json_string_value(p);
		char path[4096];

		if (!rel || listed >= MAX_RUNS_PER_CELL)
			continue;
		listed++;
		if (rel[0] == '/' || !run_dir)
			snprintf(path, sizeof(path), "%s", rel);
		else
			snprintf(path, sizeof(path), "%s/%s", run_dir, rel);
		switch (read_run(path, &tl[n])) {
		case RUN_UNREADABLE: missing++; break;
		case RUN_NO_KILL: break;
		case RUN_INVALID: invalid++; break;
		case RUN_OK: n++; break;
		}
	}
	if (n > 0) {
		series_build(s, tl, n);
		kill_chart(f, cell, s);
	} else if (invalid > 0) {
		fputs("<p class=\"note\">", f);
		esc_json(f, json_object_get(cell, "cell"));
		fprintf(f, ": no per-second chart, no valid repetition (%zu "
		        "invalid: the kill did not land or the run did not "
		        "finish).</p>\n", invalid);
	}
	if (missing > 0) {
		fputs("<p class=\"note\">", f);
		esc_json(f, json_object_get(cell, "cell"));
		fprintf(f, ": %zu of %zu run file%s missing or unreadable%s.</p>\n",
		        missing, listed, listed == 1 ? "" : "s",
		        n ? "; the chart shows the others" : "");
	}
fail:
	free(tl);
	free(s);
	return rc;
}

/* ---- page ---- */

static int scene_section(FILE *f, const json_t *scene, const char *run_dir)
{
	const json_t *cells = json_object_get(scene, "cells");
	const char *name = str_field(scene, "scene");
	size_t i;
	json_t *c;
	int rc;

	fputs("<section class=\"scene\">\n<h2>", f);
	esc(f, name ? name : "(unnamed scene)");
	fputs("</h2>\n", f);
	scene_conditions(f, scene);
	if (!json_is_array(cells) || json_array_size(cells) == 0) {
		fputs("<p class=\"small\">No cells.</p>\n</section>\n", f);
		return 0;
	}
	scene_table(f, cells);
	scene_footnotes(f, cells);
	bar_chart(f, cells);
	json_array_foreach(cells, i, c)
		if ((rc = cell_kill_chart(f, c, run_dir)) < 0)
			return rc;
	fputs("</section>\n", f);
	return 0;
}

static int render(FILE *f, const json_t *report, const char *run_dir)
{
	const json_t *scenes = json_object_get(report, "scenes");
	size_t i;
	json_t *s;
	int rc;

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	        "<meta charset=\"utf-8\">\n<title>mcpgw-bench report</title>\n"
	        "<style>%s</style>\n</head>\n<body>\n"
	        "<h1>mcpgw-bench report</h1>\n<p class=\"small\">What each "
	        "configuration lost while replicas, gateways and Redis were "
	        "killed and replaced. Rates are requests/s; latencies are "
	        "medians over repetitions; losses are summed.</p>\n", CSS);
	kv_table(f, "Machine", json_object_get(report, "machine"));
	kv_table(f, "Versions", json_object_get(report, "versions"));
	run_table(f, report);
	kv_table(f, "Options", json_object_get(report, "options"));
	if (json_array_size(scenes) == 0)
		fputs("<p class=\"small\">No scenes.</p>\n", f);
	json_array_foreach(scenes, i, s)
		if ((rc = scene_section(f, s, run_dir)) < 0)
			return rc;
	fputs("</body>\n</html>\n", f);
	return 0;
}

/* ---- the soak page (mcpgw-bench soak's soak.json) ---- */

/* One sampled figure over time: a polyline through (t_s, key) of every
 * sample that has both, scaled by 1/div. */
static void soak_line(FILE *f, const json_t *samples, const char *key,
                      double div, double x0, double xs, double y0, double h,
                      double top)
{
	const json_t *sm;
	size_t i;
	int first = 1;

	fputs("<path fill=\"none\" stroke=\"#3b73b9\" stroke-width=\"2\" "
	      "d=\"", f);
	json_array_foreach(samples, i, sm) {
		double t = field(sm, "t_s"), v = field(sm, key) / div;

		if (isnan(t) || isnan(v))
			continue;
		fprintf(f, "%s%.1f %.1f", first ? "M" : "L", x0 + t * xs,
		        y0 + h - fmin(v, top) / top * h);
		first = 0;
	}
	fputs("\"/>\n", f);
}

static double soak_max(const json_t *samples, const char *key, double div)
{
	const json_t *sm;
	double m = 0;
	size_t i;

	json_array_foreach(samples, i, sm) {
		double v = field(sm, key) / div;

		if (!isnan(v))
			m = fmax(m, v);
	}
	return m;
}

/* RSS (MiB) and open descriptors of the gateway over the run, the kills
 * and the end of the warm-up marked. */
static void soak_chart(FILE *f, const json_t *doc)
{
	const json_t *samples = json_object_get(doc, "samples");
	const json_t *at = json_object_get(json_object_get(doc, "kills"), "at_s");
	const double x0 = 70, w = CHART_W - x0 - PLOT_RIGHT_PAD;
	const double y_r = 30, h_r = 180, y_f = y_r + h_r + 30, h_f = 140;
	const double H = y_f + h_f + 45;
	double tmax = field(json_object_get(doc, "options"), "duration_s");
	double kills[MAX_KILLS_SOAK], warm[1], top_r, top_f, xs;
	size_t nk = 0, i;
	const json_t *k;
	static const struct marker_style warm_marker = {
		"warmup", "#1f5fbf", "2 3", "end of the warm-up",
		"start sample", 30,
	};

	if (!(tmax > 0))
		tmax = soak_max(samples, "t_s", 1);
	tmax = tmax > 0 ? tmax : 1;
	xs = w / tmax;
	json_array_foreach(at, i, k)
		if (nk < MAX_KILLS_SOAK && !isnan(num(k)))
			kills[nk++] = num(k);
	warm[0] = field(json_object_get(doc, "rss_kib"), "start_t_s");
	top_r = nice_max(soak_max(samples, "rss_kib", 1024.0) * 1.1);
	top_f = nice_max(soak_max(samples, "fds", 1) * 1.1);
	fprintf(f, "<figure><svg class=\"soak\" "
	        "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
	        "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
	        "<title>gateway RSS and open file descriptors over the soak"
	        "</title>\n", CHART_W, H, CHART_W, H);
	panel_axes(f, x0, y_r, w, h_r, top_r, "RSS MiB");
	panel_axes(f, x0, y_f, w, h_f, top_f, "open fds");
	x_axis(f, x0, w, y_f + h_f + 16, tmax, H);
	soak_line(f, samples, "rss_kib", 1024.0, x0, xs, y_r, h_r, top_r);
	soak_line(f, samples, "fds", 1, x0, xs, y_f, h_f, top_f);
	markers(f, kills, nk, x0, xs, y_r - 4, y_f + h_f, tmax, &kill_marker);
	markers(f, warm, isnan(warm[0]) ? 0 : 1, x0, xs, y_r - 4, y_f + h_f,
	        tmax, &warm_marker);
	fprintf(f, "</svg><figcaption>The gateway process sampled every %g s: "
	        "RSS (VmRSS) above, open file descriptors below; dashed = a "
	        "replica SIGKILLed, dotted = the start sample (end of the "
	        "warm-up) growth is measured from.</figcaption></figure>\n",
	        field(json_object_get(doc, "options"), "sample_every_s"));
}

static void soak_targets(FILE *f, const json_t *targets)
{
	const json_t *t;
	size_t i;

	fputs("<h2>Targets</h2>\n<table>\n<tr><th class=\"l\">target</th>"
	      "<th>limit</th><th>value</th><th>verdict</th></tr>\n", f);
	json_array_foreach(targets, i, t) {
		double v = field(t, "value");

		fputs("<tr><td class=\"l\">", f);
		esc(f, str_field(t, "name") ? str_field(t, "name") : "?");
		fprintf(f, "</td><td>%g</td>", field(t, "limit"));
		if (isnan(v))
			fputs("<td>not measured</td>", f);
		else
			fprintf(f, "<td>%g</td>", v);
		fprintf(f, "<td>%s</td></tr>\n",
		        json_is_true(json_object_get(t, "passed")) ? "pass"
		                                                   : "<b>MISS</b>");
	}
	fputs("</table>\n", f);
}

static void soak_failures(FILE *f, const json_t *ff)
{
	const json_t *e;
	size_t i;

	if (json_array_size(ff) == 0)
		return;
	fputs("<h2>First failures</h2>\n<table>\n<tr><th>t s</th>"
	      "<th class=\"l\">kind</th><th class=\"l\">call</th><th>status"
	      "</th><th class=\"l\">detail</th></tr>\n", f);
	json_array_foreach(ff, i, e) {
		fprintf(f, "<tr><td>%.3f</td><td class=\"l\">", field(e, "t_s"));
		esc_json(f, json_object_get(e, "kind"));
		fputs("</td><td class=\"l\">", f);
		esc_json(f, json_object_get(e, "call"));
		fputs("</td><td>", f);
		esc_json(f, json_object_get(e, "status"));
		fputs("</td><td class=\"l\">", f);
		esc_json(f, json_object_get(e, "detail"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static int render_soak(FILE *f, const json_t *doc, const char *unused)
{
	const json_t *ls = json_object_get(doc, "losses");

	(void)unused;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	        "<meta charset=\"utf-8\">\n<title>mcpgw-bench soak</title>\n"
	        "<style>%s</style>\n</head>\n<body>\n"
	        "<h1>mcpgw-bench soak</h1>\n<p>", CSS);
	esc_json(f, json_object_get(doc, "cell"));
	fprintf(f, ": <b>%s</b></p>\n", json_is_true(json_object_get(doc,
	        "passed")) ? "every target met" : "a target was missed");
	if (!json_is_true(json_object_get(doc, "valid"))) {
		fputs("<p class=\"note\">The run is invalid: ", f);
		esc_json(f, json_object_get(doc, "invalid_reason"));
		fputs("</p>\n", f);
	}
	soak_chart(f, doc);
	soak_targets(f, json_object_get(doc, "targets"));
	kv_table(f, "RSS (KiB)", json_object_get(doc, "rss_kib"));
	kv_table(f, "Open file descriptors", json_object_get(doc, "fds"));
	kv_table(f, "Losses by reason", json_object_get(ls, "by_reason"));
	kv_table(f, "Load", json_object_get(doc, "load"));
	kv_table(f, "Kills", json_object_get(doc, "kills"));
	kv_table(f, "Gateway counters", json_object_get(doc, "gateway"));
	soak_failures(f, json_object_get(doc, "first_failures"));
	kv_table(f, "Options", json_object_get(doc, "options"));
	kv_table(f, "Machine", json_object_get(doc, "machine"));
	kv_table(f, "Versions", json_object_get(doc, "versions"));
	run_table(f, doc);
	fputs("</body>\n</html>\n", f);
	return 0;
}

/* Renders a page into out_path through out_path.tmp and rename(), so a
 * reader never sees half a page. */
static int write_page(int (*render_fn)(FILE *, const json_t *, const char *),
                      const json_t *doc, const char *run_dir,
                      const char *out_path)
{
	char *tmp = NULL;
	FILE *f = NULL;
	size_t len;
	int rc;

	len = strlen(out_path) + 5;
	tmp = malloc(len);
	if (!tmp)
		return MGW_ENOMEM;
	snprintf(tmp, len, "%s.tmp", out_path);
	f = fopen(tmp, "w");
	if (!f) {
		rc = MGW_EIO;
		goto fail;
	}
	rc = render_fn(f, doc, run_dir);
	if (rc < 0)
		goto fail;
	if (ferror(f)) {
		rc = MGW_EIO;
		goto fail;
	}
	rc = fclose(f);
	f = NULL;
	if (rc != 0 || rename(tmp, out_path) != 0) {
		rc = MGW_EIO;
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	if (f)
		fclose(f);
	remove(tmp);
	free(tmp);
	return rc;
}

int mgw_bench_report_html(const json_t *report, const char *run_dir,
                          const char *out_path)
{
	if (!json_is_object(report) || !out_path ||
	    !json_is_array(json_object_get(report, "scenes")))
		return MGW_EINVAL;
	return write_page(render, report, run_dir, out_path);
}

int mgw_bench_soak_html(const json_t *doc, const char *out_path)
{
	if (!json_is_object(doc) || !out_path ||
	    !json_is_array(json_object_get(doc, "samples")))
		return MGW_EINVAL;
	return write_page(render_soak, doc, NULL, out_path);
}

int mgw_bench_html_main(int argc, char **argv)
{
	char in[4096], out[4096];
	json_error_t jerr;
	json_t *report;
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		fputs("usage: mcpgw-bench html DIR\n"
		      "Re-renders DIR/report.html from DIR/report.json and the "
		      "run files it lists.\n", argc == 2 && !strcmp(argv[1],
		      "--help") ? stdout : stderr);
		return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	if (snprintf(in, sizeof(in), "%s/report.json", argv[1]) >=
	            (int)sizeof(in) ||
	    snprintf(out, sizeof(out), "%s/report.html", argv[1]) >=
	            (int)sizeof(out)) {
		fputs("mcpgw-bench html: directory name too long\n", stderr);
		return 2;
	}
	report = json_load_file(in, 0, &jerr);
	if (!report) {
		if (jerr.line > 0)
			fprintf(stderr, "mcpgw-bench html: %s:%d:%d: %s\n", in,
			        jerr.line, jerr.column, jerr.text);
		else
			fprintf(stderr, "mcpgw-bench html: %s\n", jerr.text);
		return 1;
	}
	rc = mgw_bench_report_html(report, argv[1], out);
	json_decref(report);
	if (rc < 0) {
		fprintf(stderr, "mcpgw-bench html: %s: %s\n", out,
		        rc == MGW_EINVAL ? "report.json has no \"scenes\" array"
		                         : mgw_strerror(rc));
		return 1;
	}
	printf("%s\n", out);
	return 0;
}
