/* report_html_soak.c - soak.html: one page for `mcpgw-bench soak`'s
 * soak.json (bench/src/soak.c): the verdict, a chart of the gateway's
 * RSS and open descriptors over the run with the kills and the end of
 * the warm-up marked, the targets, the figures, the first failures and
 * the setup tables.  The chart's axes and markers are those of
 * report.html's per-second charts (html_out.c); soak.json is untrusted
 * text like a report, escaped on output. */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>

#include "core/errors.h"
#include "bench/src/html_out.h"
#include "bench/src/html_page.h"
#include "bench/src/report_html.h"

#define MAX_KILLS_SOAK 1440 /* a day's soak at one kill a minute */

/* Geometry: an RSS panel above an open-descriptors panel. */
#define X0 70.0
#define PLOT_W (MGW_HTML_CHART_W - X0 - MGW_HTML_RIGHT_PAD)
#define Y_R 30.0
#define H_R 180.0
#define Y_F (Y_R + H_R + 30.0)
#define H_F 140.0
#define CHART_H (Y_F + H_F + 45.0)

static const struct mgw_html_marker kill_marker = {
	"kill", "#000", "6 3", "kill", "kill", 16,
};
static const struct mgw_html_marker warm_marker = {
	"warmup", "#1f5fbf", "2 3", "end of the warm-up", "start sample", 30,
};

/* One sampled figure over time: a polyline through (t_s, key) of every
 * sample that has both, scaled by 1/div. */
static void soak_line(FILE *f, const json_t *samples, const char *key,
                      double div, double xs, double y0, double h, double top)
{
	const json_t *sm;
	size_t i;
	int first = 1;

	fputs("<path fill=\"none\" stroke=\"#3b73b9\" stroke-width=\"2\" "
	      "d=\"", f);
	json_array_foreach(samples, i, sm) {
		double t = mgw_html_field(sm, "t_s"),
		       v = mgw_html_field(sm, key) / div;

		if (isnan(t) || isnan(v))
			continue;
		fprintf(f, "%s%.1f %.1f", first ? "M" : "L", X0 + t * xs,
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
		double v = mgw_html_field(sm, key) / div;

		if (!isnan(v))
			m = fmax(m, v);
	}
	return m;
}

/* The run's length on the time axis: the planned duration, else the last
 * sample's time, else 1 s (an axis needs a scale). */
static double soak_tmax(const json_t *doc, const json_t *samples)
{
	double tmax = mgw_html_field(json_object_get(doc, "options"),
	                             "duration_s");

	if (!(tmax > 0))
		tmax = soak_max(samples, "t_s", 1);
	return tmax > 0 ? tmax : 1;
}

/* RSS (MiB) and open descriptors of the gateway over the run, the kills
 * and the end of the warm-up marked. */
static void soak_chart(FILE *f, const json_t *doc)
{
	const json_t *samples = json_object_get(doc, "samples");
	const json_t *at = json_object_get(json_object_get(doc, "kills"), "at_s");
	double tmax = soak_tmax(doc, samples), xs = PLOT_W / tmax;
	double kills[MAX_KILLS_SOAK], warm[1], top_r, top_f;
	size_t nk = 0, i;
	const json_t *k;

	json_array_foreach(at, i, k)
		if (nk < MAX_KILLS_SOAK && !isnan(mgw_html_num(k)))
			kills[nk++] = mgw_html_num(k);
	warm[0] = mgw_html_field(json_object_get(doc, "rss_kib"), "start_t_s");
	top_r = mgw_html_nice_max(soak_max(samples, "rss_kib", 1024.0) * 1.1);
	top_f = mgw_html_nice_max(soak_max(samples, "fds", 1) * 1.1);
	fputs("<figure>", f);
	mgw_html_svg_open(f, "soak", MGW_HTML_CHART_W, CHART_H, NULL,
	                  "gateway RSS and open file descriptors over the soak");
	mgw_html_panel_axes(f, "rss", X0, Y_R, PLOT_W, H_R, top_r, "RSS MiB");
	mgw_html_panel_axes(f, "fds", X0, Y_F, PLOT_W, H_F, top_f, "open fds");
	mgw_html_time_axis(f, X0, PLOT_W, Y_F + H_F + 16, tmax, CHART_H);
	soak_line(f, samples, "rss_kib", 1024.0, xs, Y_R, H_R, top_r);
	soak_line(f, samples, "fds", 1, xs, Y_F, H_F, top_f);
	mgw_html_markers(f, kills, nk, X0, xs, Y_R - 4, Y_F + H_F, tmax,
	                 &kill_marker);
	mgw_html_markers(f, warm, 1, X0, xs, Y_R - 4, Y_F + H_F, tmax,
	                 &warm_marker);
	fprintf(f, "</svg><figcaption>The gateway process sampled every %g s: "
	        "RSS (VmRSS) above, open file descriptors below; dashed = a "
	        "replica SIGKILLed, dotted = the start sample (end of the "
	        "warm-up) growth is measured from.</figcaption></figure>\n",
	        mgw_html_field(json_object_get(doc, "options"),
	                       "sample_every_s"));
}

static void soak_targets(FILE *f, const json_t *targets)
{
	const json_t *t;
	size_t i;

	fputs("<h2>Targets</h2>\n<table id=\"targets\">\n<tr><th class=\"l\">"
	      "target</th><th>limit</th><th>value</th><th>verdict</th></tr>\n",
	      f);
	json_array_foreach(targets, i, t) {
		const char *name = mgw_html_str_field(t, "name");
		double v = mgw_html_field(t, "value");

		fputs("<tr><td class=\"l\">", f);
		mgw_html_esc(f, name ? name : "?");
		fprintf(f, "</td><td>%g</td>", mgw_html_field(t, "limit"));
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

/* The measured figures, one table each. */
static void soak_figures(FILE *f, const json_t *doc)
{
	fputs("<h2>Figures</h2>\n", f);
	mgw_html_kv_table(f, "rss", "RSS (KiB)", json_object_get(doc, "rss_kib"));
	mgw_html_kv_table(f, "fds", "Open file descriptors",
	                  json_object_get(doc, "fds"));
	mgw_html_kv_table(f, "losses", "Losses by reason",
	                  json_object_get(json_object_get(doc, "losses"),
	                                  "by_reason"));
	mgw_html_kv_table(f, "load", "Load", json_object_get(doc, "load"));
	mgw_html_kv_table(f, "kills", "Kills", json_object_get(doc, "kills"));
	mgw_html_kv_table(f, "gateway", "Gateway counters",
	                  json_object_get(doc, "gateway"));
}

static void soak_failures(FILE *f, const json_t *ff)
{
	static const char *const cols[] = { "kind", "call", "status", "detail" };
	const json_t *e;
	size_t i;

	if (json_array_size(ff) == 0)
		return;
	fputs("<h2>First failures</h2>\n<table id=\"first-failures\">\n<tr>"
	      "<th>t s</th><th class=\"l\">kind</th><th class=\"l\">call</th>"
	      "<th>status</th><th class=\"l\">detail</th></tr>\n", f);
	json_array_foreach(ff, i, e) {
		fprintf(f, "<tr><td>%.3f</td>", mgw_html_field(e, "t_s"));
		for (size_t c = 0; c < 4; c++) {
			fputs(c == 2 ? "<td>" : "<td class=\"l\">", f);
			mgw_html_esc_json(f, json_object_get(e, cols[c]));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static int render_soak(FILE *f, const json_t *doc, const char *unused)
{
	(void)unused;
	mgw_html_page_open(f, "mcpgw-bench soak");
	fputs("<p class=\"summary\">", f);
	mgw_html_esc_json(f, json_object_get(doc, "cell"));
	fprintf(f, ": <b>%s</b></p>\n", json_is_true(json_object_get(doc,
	        "passed")) ? "every target met" : "a target was missed");
	if (!json_is_true(json_object_get(doc, "valid"))) {
		fputs("<p class=\"note\">The run is invalid: ", f);
		mgw_html_esc_json(f, json_object_get(doc, "invalid_reason"));
		fputs("</p>\n", f);
	}
	soak_chart(f, doc);
	soak_targets(f, json_object_get(doc, "targets"));
	soak_figures(f, doc);
	soak_failures(f, json_object_get(doc, "first_failures"));
	mgw_html_setup_section(f, doc);
	mgw_html_page_close(f);
	return 0;
}

int mgw_bench_soak_html(const json_t *doc, const char *out_path)
{
	if (!json_is_object(doc) || !out_path ||
	    !json_is_array(json_object_get(doc, "samples")))
		return MGW_EINVAL;
	return mgw_html_write_page(render_soak, doc, NULL, out_path);
}
