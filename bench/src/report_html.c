/* report_html.c - renders report.json (plus the raw runs it lists) as one
 * self-contained HTML page, in the order a reader needs it: a summary and
 * the chart of what each cell lost by kind (report_html_losses.c), then
 * per scene the table of report.md, a bar chart of achieved requests/s
 * per cell and the per-second charts of the cells that killed something
 * (report_html_timeline.c), and last the machine, versions, run and
 * options it was measured with (html_page.c, which soak.html's
 * report_html_soak.c shares).  The charts are SVG written by hand: a
 * page that needs no script or network renders the same in a browser, a
 * CI artifact viewer and a headless screenshot.
 *
 * Everything taken from a report is untrusted text: it is escaped on
 * output (html_out.c), and numbers are checked for finiteness before they
 * become coordinates. */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/html_out.h"
#include "bench/src/html_page.h"
#include "bench/src/report_html.h"
#include "bench/src/report_html_losses.h"
#include "bench/src/report_html_timeline.h"
#include "bench/src/state_table.h"

#define BAR_ROW_H 26.0

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
	double off = mgw_html_field(scene, "offered_rps"), dur = mgw_html_field(scene, "duration_s"),
	       reps = mgw_html_field(scene, "reps"), kill = mgw_html_field(scene, "kill_at_s"),
	       ready = mgw_html_field(scene, "readiness_delay_s");
	const char *title = mgw_html_str_field(scene, "title"),
	           *sig = mgw_html_str_field(scene, "kill_signal");

	if (!title && isnan(off) && isnan(dur) && isnan(reps))
		return;
	fputs("<p>", f);
	if (title) {
		mgw_html_esc(f, title);
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
		mgw_html_esc(f, sig ? sig : "KILL");
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

	fputs("<table>\n<tr><th class=\"l\">cell</th><th>users</th><th>n</th>"
	      "<th>achieved rps, median (range)</th><th>p50 ms</th>"
	      "<th>p99 ms</th><th>session losses</th><th>handle losses</th>"
	      "<th>deleted served</th><th>other failures</th><th>re-pins</th>"
	      "</tr>\n", f);
	json_array_foreach(cells, i, c) {
		const json_t *a = json_object_get(c, "achieved_rps");
		double n = mgw_html_field(c, "n"), valid = mgw_html_field(c, "valid");
		double med = mgw_html_field(a, "median"), lo = mgw_html_field(a, "min"),
		       hi = mgw_html_field(a, "max");
		int sat = json_is_true(json_object_get(c, "saturated"));

		fprintf(f, "<tr%s><td class=\"l\">", sat ? " class=\"sat\"" : "");
		mgw_html_esc_json(f, json_object_get(c, "cell"));
		fputs("</td>", f);
		td_count(f, mgw_html_field(c, "users"));
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
		td_ms(f, mgw_html_field(c, "p50_ms"));
		td_ms(f, mgw_html_field(c, "p99_ms"));
		td_count(f, mgw_html_field(c, "session_losses"));
		td_count(f, mgw_html_field(c, "handle_losses"));
		td_count(f, mgw_html_field(c, "deleted_served"));
		td_count(f, mgw_html_field(c, "other_failures"));
		td_count(f, mgw_html_field(c, "repins"));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The mrtr, fork and tasks scenes' second table (state_table.h). */
static void state_table(FILE *f, const json_t *scene)
{
	const struct mgw_bench_state_col *cols =
		mgw_bench_state_cols(mgw_html_str_field(scene, "scene"));
	const json_t *c;
	char v[32];
	size_t i;

	if (!cols)
		return;
	fputs("<table class=\"state\">\n<tr><th class=\"l\">cell</th>", f);
	for (const struct mgw_bench_state_col *k = cols; k->head; k++) {
		fputs("<th>", f);
		mgw_html_esc(f, k->head);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	json_array_foreach(json_object_get(scene, "cells"), i, c) {
		fputs("<tr><td class=\"l\">", f);
		mgw_html_esc_json(f, json_object_get(c, "cell"));
		fputs("</td>", f);
		for (const struct mgw_bench_state_col *k = cols; k->head; k++) {
			mgw_bench_state_value(json_object_get(c, k->key), v, sizeof(v));
			fputs("<td>", f);
			mgw_html_esc(f, v);
			fputs("</td>", f);
		}
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
			const char *why = mgw_html_str_field(e, "reason");

			fputs("<li>", f);
			mgw_html_esc_json(f, json_object_get(c, "cell"));
			fputs(" (<code>", f);
			mgw_html_esc_json(f, json_object_get(e, "run"));
			fputs("</code>): ", f);
			mgw_html_esc(f, why ? why : "no reason recorded");
			fputs("</li>\n", f);
		}
	}
	fputs("</ul>\n", f);
}

/* ---- bar chart: achieved rps per cell ---- */

#define BAR_X0 MGW_HTML_LABEL_W
#define BAR_PLOT_W (MGW_HTML_CHART_W - BAR_X0 - MGW_HTML_RIGHT_PAD)

/* The axis's upper end: the largest median, min, max or offered rate. */
static double bar_top(const json_t *cells)
{
	double top = 0;
	size_t i;
	json_t *c;

	json_array_foreach(cells, i, c) {
		const json_t *a = json_object_get(c, "achieved_rps");
		double v[4] = { mgw_html_field(a, "median"),
			        mgw_html_field(a, "max"), mgw_html_field(a, "min"),
			        mgw_html_field(c, "offered_rps") };

		for (int k = 0; k < 4; k++)
			if (!isnan(v[k]) && v[k] > top)
				top = v[k];
	}
	return mgw_html_nice_max(top);
}

/* Grid and tick labels over n rows, and the axis's name. */
static void bar_axis(FILE *f, size_t n, double top, double h)
{
	double st = mgw_html_nice_step(top), yb = 30 + (double)n * BAR_ROW_H;

	for (double t = 0; t <= top + st / 2; t += st) {
		double x = BAR_X0 + t / top * BAR_PLOT_W;

		fprintf(f, "<line x1=\"%.1f\" y1=\"20\" x2=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"#e4e4e4\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"middle\">%g</text>\n", x, x, yb, x, yb + 16,
		        t);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
	        "requests/s</text>\n", BAR_X0 + BAR_PLOT_W / 2, h - 4);
}

/* The median's bar of cell c, with its numbers as a tooltip. */
static void bar_median(FILE *f, const json_t *c, double y, double top)
{
	const json_t *a = json_object_get(c, "achieved_rps");
	double med = mgw_html_field(a, "median"), lo = mgw_html_field(a, "min"),
	       hi = mgw_html_field(a, "max");
	int sat = json_is_true(json_object_get(c, "saturated"));

	if (isnan(med))
		return;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
	        "fill=\"%s\"><title>", BAR_X0, y + 4,
	        fmax(med / top * BAR_PLOT_W, 0.5), BAR_ROW_H - 8,
	        sat ? "#e69f00" : "#3b73b9");
	mgw_html_esc_json(f, json_object_get(c, "cell"));
	fprintf(f, ": median %.1f rps", med);
	if (!isnan(lo) && !isnan(hi))
		fprintf(f, ", range %.1f&#8211;%.1f", lo, hi);
	if (sat)
		fputs(" (saturated)", f);
	fputs("</title></rect>\n", f);
}

/* Row i: the cell's name, its bar, the min-max whisker, the offered
 * rate's mark. */
static void bar_row(FILE *f, const json_t *c, size_t i, double top)
{
	const json_t *a = json_object_get(c, "achieved_rps");
	double lo = mgw_html_field(a, "min"), hi = mgw_html_field(a, "max"),
	       off = mgw_html_field(c, "offered_rps");
	double y = 30 + (double)i * BAR_ROW_H, cy = y + BAR_ROW_H / 2;

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
	        BAR_X0 - 8, cy + 4);
	mgw_html_esc_label(f, json_object_get(c, "cell"), MGW_HTML_LABEL_MAX);
	fputs("<title>", f);
	mgw_html_esc_json(f, json_object_get(c, "cell"));
	fputs("</title></text>\n", f);
	bar_median(f, c, y, top);
	if (!isnan(lo) && !isnan(hi)) {
		double xl = BAR_X0 + lo / top * BAR_PLOT_W,
		       xh = BAR_X0 + hi / top * BAR_PLOT_W;

		fprintf(f, "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1f"
		        "V%.1f\" stroke=\"#222\" stroke-width=\"1.5\" "
		        "fill=\"none\"/>\n", xl, cy, xh, xl, cy - 6, cy + 6, xh,
		        cy - 6, cy + 6);
	}
	if (!isnan(off)) {
		double xo = BAR_X0 + off / top * BAR_PLOT_W;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"#c0392b\" stroke-width=\"2\" "
		        "stroke-dasharray=\"4 2\"><title>offered %.1f rps</title>"
		        "</line>\n", xo, y + 1, xo, y + BAR_ROW_H - 1, off);
	}
}

static void bar_legend(FILE *f)
{
	const double x0 = BAR_X0;

	mgw_html_swatch(f, x0, 13, 12, "#3b73b9", "achieved (median)");
	fprintf(f, "<path d=\"M%.1f 9H%.1f\" stroke=\"#222\" "
	        "stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"13\">min&#8211;max"
	        "</text>\n<line x1=\"%.1f\" y1=\"3\" x2=\"%.1f\" y2=\"15\" "
	        "stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>"
	        "<text x=\"%.1f\" y=\"13\">offered</text>\n", x0 + 140, x0 + 160,
	        x0 + 166, x0 + 240, x0 + 240, x0 + 248);
	mgw_html_swatch(f, x0 + 320, 13, 12, "#e69f00",
	                "saturated (&lt; 95% of offered)");
}

static void bar_chart(FILE *f, const json_t *cells)
{
	size_t i, n = json_array_size(cells);
	double top = bar_top(cells), h = 30 + (double)n * BAR_ROW_H + 40;
	json_t *c;

	fputs("<figure>", f);
	mgw_html_svg_open(f, "bars", MGW_HTML_CHART_W, h, NULL,
	                  "achieved requests/s per cell");
	bar_axis(f, n, top, h);
	json_array_foreach(cells, i, c)
		bar_row(f, c, i, top);
	bar_legend(f);
	fputs("</svg><figcaption>Achieved requests/s per cell: bar = median "
	      "over valid repetitions, whisker = min&#8211;max, dashed = "
	      "offered rate. In an open-loop run these are close to the "
	      "offered rate everywhere; what differs is above, in the losses."
	      "</figcaption></figure>\n", f);
}

/* ---- page ---- */

static int scene_section(FILE *f, const json_t *scene, const char *run_dir)
{
	const json_t *cells = json_object_get(scene, "cells");
	const char *name = mgw_html_str_field(scene, "scene");
	int rc;

	fputs("<section class=\"scene\">\n<h2>", f);
	mgw_html_esc(f, name ? name : "(unnamed scene)");
	fputs("</h2>\n", f);
	scene_conditions(f, scene);
	if (!json_is_array(cells) || json_array_size(cells) == 0) {
		fputs("<p class=\"small\">No cells.</p>\n</section>\n", f);
		return 0;
	}
	scene_table(f, cells);
	state_table(f, scene);
	scene_footnotes(f, cells);
	bar_chart(f, cells);
	if ((rc = mgw_html_scene_timelines(f, cells, run_dir)) < 0)
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

	mgw_html_page_open(f, "mcpgw-bench report");
	if ((rc = mgw_html_losses(f, report)) < 0)
		return rc;
	if (json_array_size(scenes) == 0)
		fputs("<p class=\"small\">No scenes.</p>\n", f);
	json_array_foreach(scenes, i, s)
		if ((rc = scene_section(f, s, run_dir)) < 0)
			return rc;
	fputs("<p class=\"small\">Rates are requests/s; latencies are medians "
	      "over repetitions; losses are summed.</p>\n", f);
	mgw_html_setup_section(f, report);
	mgw_html_page_close(f);
	return 0;
}

int mgw_bench_report_html(const json_t *report, const char *run_dir,
                          const char *out_path)
{
	if (!json_is_object(report) || !out_path ||
	    !json_is_array(json_object_get(report, "scenes")))
		return MGW_EINVAL;
	return mgw_html_write_page(render, report, run_dir, out_path);
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
