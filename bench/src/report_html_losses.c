/* report_html_losses.c - what was lost, first.  The achieved rates of a
 * churn bench are nearly equal in every cell (the load is open loop:
 * the rate is what was offered), so the page leads with what differs:
 * the failed requests of each cell, split by the load client's outcome
 * kinds (doc/load-protocol.md), summed over the valid repetitions - a
 * sum, because one loss in ten runs must stay visible. */
#include "autoconf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/html_out.h"
#include "bench/src/report_html_losses.h"

/* Kinds a report may carry beyond the known ones are drawn too, up to
 * this many kinds in all; the rest are counted as "other". */
#define MAX_KINDS 24

#define ROW_H 24.0
#define SCENE_H 22.0
#define AXIS_H 22.0 /* a scene's tick labels under its rows */
#define KEY_W 175.0 /* one legend entry */
#define PLOT_W (MGW_HTML_CHART_W - MGW_HTML_LABEL_W - 60.0)

struct kind {
	const char *key;
	const char *label; /* trusted HTML; NULL: the escaped key */
	const char *fill, *ink; /* bar colour, colour of a number on it */
};

/* The load client's failure kinds, the two the bench is about first;
 * "other" holds the cells of reports without per-kind sums.  Colours
 * from the Okabe-Ito set, which colour-blind readers tell apart. */
static const struct kind KNOWN[] = {
	{ "session_lost", "session lost", "#d55e00", "#fff" },
	{ "handle_lost", "state lost (handle)", "#cc79a7", "#000" },
	{ "state_lost", "state lost (MRTR requestState)", "#882255", "#fff" },
	{ "task_lost", "task lost", "#44aa99", "#000" },
	{ "forked", "forked (an old requestState acted on again)", "#332288",
	  "#fff" },
	{ "deleted_served", "deleted session served", "#000000", "#fff" },
	{ "connect_error", "connection error", "#e69f00", "#000" },
	{ "timeout", "timeout", "#f0e442", "#000" },
	{ "http_5xx", "HTTP 5xx", "#0072b2", "#fff" },
	{ "http_4xx", "HTTP 4xx", "#56b4e9", "#000" },
	{ "rpc_error", "JSON-RPC error", "#009e73", "#fff" },
	{ "tool_error", "tool error", "#555555", "#fff" },
	{ "shed", "shed (never sent)", "#999999", "#000" },
	{ "other", "other failures", "#bbbbbb", "#000" },
};
#define N_KNOWN (sizeof(KNOWN) / sizeof(KNOWN[0]))
#define K_OTHER (N_KNOWN - 1)
/* kinds of a report that the bench does not know, by arrival */
static const char *const EXTRA_FILL[] = { "#7a5c3a", "#3a6b7a", "#6b3a7a",
	                                  "#3a7a4a" };

struct row {
	const json_t *cell, *scene; /* the cell object, the scene's name */
	size_t scene_ix;            /* which scene: a heading per change */
	double count[MAX_KINDS];
	double total;
	int has; /* 0: no valid repetition, nothing to count */
};

struct losses {
	struct kind kinds[MAX_KINDS];
	size_t n_kinds;
	double sum[MAX_KINDS]; /* per kind over every cell */
	int per_kind;          /* some cell had a "failures" object */
	struct row *rows;
	size_t n_rows;
	size_t n_scenes; /* scenes with cells */
};

/* ---- counting ---- */

static size_t kind_index(struct losses *L, const char *key)
{
	struct kind *k;

	for (size_t i = 0; i < L->n_kinds; i++)
		if (!strcmp(L->kinds[i].key, key))
			return i;
	if (L->n_kinds == MAX_KINDS)
		return K_OTHER;
	k = &L->kinds[L->n_kinds];
	k->key = key; /* owned by the report, which outlives L */
	k->label = NULL;
	k->fill = EXTRA_FILL[(L->n_kinds - N_KNOWN) %
	                     (sizeof(EXTRA_FILL) / sizeof(EXTRA_FILL[0]))];
	k->ink = "#fff";
	return L->n_kinds++;
}

static void add(struct losses *L, struct row *r, size_t k, const json_t *v)
{
	double x = mgw_html_num(v);

	if (isnan(x) || x < 0)
		return;
	r->count[k] += x;
	r->total += x;
	L->sum[k] += x;
	r->has = 1;
}

/* A cell's counts: its per-kind "failures", else the three sums of the
 * table (reports written before "failures" existed). */
static void count_cell(struct losses *L, struct row *r)
{
	const json_t *fails = json_object_get(r->cell, "failures"), *v;
	const char *key;

	if (json_is_object(fails)) {
		L->per_kind = 1;
		r->has = 1; /* an object of zeros is a cell that lost nothing */
		json_object_foreach((json_t *)fails, key, v)
			add(L, r, kind_index(L, key), v);
		return;
	}
	add(L, r, 0, json_object_get(r->cell, "session_losses"));
	add(L, r, 1, json_object_get(r->cell, "handle_losses"));
	add(L, r, K_OTHER, json_object_get(r->cell, "other_failures"));
}

static int collect(struct losses *L, const json_t *scenes)
{
	size_t i, j, n = 0;
	json_t *s, *c;

	memcpy(L->kinds, KNOWN, sizeof(KNOWN));
	L->n_kinds = N_KNOWN;
	json_array_foreach(scenes, i, s)
		n += json_array_size(json_object_get(s, "cells"));
	L->rows = calloc(n + 1, sizeof(*L->rows));
	if (!L->rows)
		return MGW_ENOMEM;
	json_array_foreach(scenes, i, s) {
		const json_t *cells = json_object_get(s, "cells");

		L->n_scenes += json_array_size(cells) > 0;
		json_array_foreach(cells, j, c) {
			struct row *r = &L->rows[L->n_rows++];

			r->cell = c;
			r->scene = json_object_get(s, "scene");
			r->scene_ix = i;
			count_cell(L, r);
		}
	}
	return 0;
}

/* Session and state losses always have a key (the two the bench is
 * about; a zero there is a result); other kinds when some cell has one. */
static int shown(const struct losses *L, size_t k)
{
	return k < 2 || L->sum[k] > 0;
}

static void kind_label(FILE *f, const struct kind *k)
{
	if (k->label)
		fputs(k->label, f);
	else
		mgw_html_esc(f, k->key);
}

static void scene_name(FILE *f, const json_t *name)
{
	if (json_is_string(name))
		mgw_html_esc(f, json_string_value(name));
	else
		fputs("(unnamed scene)", f);
}

/* ---- summary ---- */

static void summary(FILE *f, const json_t *report, const struct losses *L)
{
	const struct row *most = NULL;
	double all = 0;
	size_t cells = 0;

	for (size_t i = 0; i < L->n_rows; i++) {
		const struct row *r = &L->rows[i];

		if (!r->has)
			continue;
		cells++;
		all += r->total;
		if (!most || r->total > most->total)
			most = r;
	}
	fputs("<p class=\"summary\">What each configuration lost while "
	      "replicas, gateways and Redis were killed and replaced: the "
	      "failed requests of every cell, summed over its valid "
	      "repetitions and split by kind, come first; then each scene's "
	      "table, rates and per-second charts; the machine, versions and "
	      "options of the run are at the end. ", f);
	fprintf(f, "%zu cell%s in %zu scene%s; together they lost %.0f "
	        "request%s", L->n_rows, L->n_rows == 1 ? "" : "s", L->n_scenes,
	        L->n_scenes == 1 ? "" : "s", all, all == 1 ? "" : "s");
	if (most && most->total > 0) {
		fputs("; the most: ", f);
		mgw_html_esc_json(f, json_object_get(most->cell, "cell"));
		fputs(" (", f);
		scene_name(f, most->scene);
		fprintf(f, "), %.0f", most->total);
	}
	if (cells < L->n_rows)
		fprintf(f, "; %zu cell%s without a valid repetition, not "
		        "counted", L->n_rows - cells,
		        L->n_rows - cells == 1 ? "" : "s");
	fputs(".", f);
	if (json_is_false(json_object_get(report, "complete")))
		fputs(" <strong>This run is incomplete</strong>: the numbers "
		      "cover the repetitions that finished (<code>mcpgw-bench "
		      "resume</code> completes it).", f);
	fputs("</p>\n", f);
}

/* ---- the chart ---- */

static size_t legend_lines(const struct losses *L)
{
	size_t per = (size_t)((MGW_HTML_CHART_W - 10) / KEY_W), n = 0;

	for (size_t k = 0; k < L->n_kinds; k++)
		n += shown(L, k);
	return (n + per - 1) / per;
}

static void legend(FILE *f, const struct losses *L)
{
	size_t per = (size_t)((MGW_HTML_CHART_W - 10) / KEY_W), i = 0;

	fputs("<g class=\"legend\">\n", f);
	for (size_t k = 0; k < L->n_kinds; k++) {
		double x = 8 + (double)(i % per) * KEY_W,
		       y = 14 + (double)(i / per) * 18;

		if (!shown(L, k))
			continue;
		i++;
		fprintf(f, "<g class=\"key\" data-kind=\"");
		mgw_html_esc(f, L->kinds[k].key);
		fprintf(f, "\"><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
		        "height=\"10\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">",
		        x, y - 9, L->kinds[k].fill, x + 16, y);
		kind_label(f, &L->kinds[k]);
		fputs("</text></g>\n", f);
	}
	fputs("</g>\n", f);
}

/* One segment of a bar: kind k's count c from x, w wide, with its count
 * written on it when it fits. */
static void segment(FILE *f, const struct losses *L, const struct row *r,
                    size_t k, double x, double y, double w)
{
	const struct kind *kd = &L->kinds[k];
	char num[32];

	snprintf(num, sizeof(num), "%.0f", r->count[k]);
	fprintf(f, "<rect class=\"seg\" data-kind=\"");
	mgw_html_esc(f, kd->key);
	fprintf(f, "\" data-count=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
	        "height=\"%.1f\" fill=\"%s\"><title>", num, x, y + 4, w,
	        ROW_H - 8, kd->fill);
	mgw_html_esc_json(f, json_object_get(r->cell, "cell"));
	fputs(": ", f);
	kind_label(f, kd);
	fprintf(f, " %s</title></rect>\n", num);
	if (w >= 8 + 7 * (double)strlen(num))
		fprintf(f, "<text class=\"segn\" x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"middle\" fill=\"%s\">%s</text>\n",
		        x + w / 2, y + ROW_H / 2 + 4, kd->ink, num);
}

static void cell_row(FILE *f, const struct losses *L, const struct row *r,
                     double y, double top)
{
	const json_t *name = json_object_get(r->cell, "cell");
	double x0 = MGW_HTML_LABEL_W, x = x0;

	fputs("<g class=\"cell\" data-scene=\"", f);
	mgw_html_esc(f, json_string_value(r->scene));
	fputs("\" data-cell=\"", f);
	mgw_html_esc(f, json_string_value(name));
	fputs("\">\n", f);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x0 - 8,
	        y + ROW_H / 2 + 4);
	mgw_html_esc_label(f, name, MGW_HTML_LABEL_MAX);
	fputs("<title>", f);
	mgw_html_esc_json(f, name);
	fputs("</title></text>\n", f);
	for (size_t k = 0; k < L->n_kinds && r->has; k++) {
		double w = r->count[k] / top * PLOT_W;

		if (r->count[k] > 0) {
			segment(f, L, r, k, x, y, w);
			x += w;
		}
	}
	if (r->has)
		fprintf(f, "<text class=\"total\" x=\"%.1f\" y=\"%.1f\">%.0f"
		        "</text>\n", x + 6, y + ROW_H / 2 + 4, r->total);
	else
		fprintf(f, "<text class=\"total none\" x=\"%.1f\" y=\"%.1f\" "
		        "fill=\"#7a4b00\">no valid repetition</text>\n", x + 6,
		        y + ROW_H / 2 + 4);
	fputs("</g>\n", f);
}

/* Grid lines over the rows [y0, y1) and ticks under them, 0 to top. */
static void x_axis(FILE *f, double top, double y0, double y1)
{
	double st = mgw_html_nice_step(top), x0 = MGW_HTML_LABEL_W;
	size_t nt = (size_t)llround(top / st);

	for (size_t i = 0; i <= nt; i++) {
		double v = (double)i * st, x = x0 + v / top * PLOT_W;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"#e4e4e4\"/><text class=\"xtick\" x=\"%.1f\" "
		        "y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, y0, x,
		        y1, x, y1 + 15, v);
	}
}

/* The end of the scene block starting at row i: the rows of one scene. */
static size_t block_end(const struct losses *L, size_t i)
{
	size_t j = i + 1;

	while (j < L->n_rows && L->rows[j].scene_ix == L->rows[i].scene_ix)
		j++;
	return j;
}

/* A scene's axis: its largest total, in whole numbers, at least 0..5.
 * Each scene has its own: scale-out's session losses run to tens of
 * thousands, a pod kill's to tens, and on one axis the second would not
 * show. */
static double block_top(const struct losses *L, size_t i, size_t j)
{
	double top = 5;

	for (; i < j; i++)
		top = fmax(top, L->rows[i].total);
	return mgw_html_nice_max(top);
}

/* Rows [i, j) of one scene from y: its name, its bars, its axis.
 * Returns the y under it. */
static double block(FILE *f, const struct losses *L, size_t i, size_t j,
                    double y)
{
	double top = block_top(L, i, j), y0 = y + SCENE_H,
	       y1 = y0 + (double)(j - i) * ROW_H;

	fprintf(f, "<g class=\"scene\" data-top=\"%g\">\n<text x=\"8\" "
	        "y=\"%.1f\" font-weight=\"bold\">", top, y + SCENE_H - 6);
	scene_name(f, L->rows[i].scene);
	fputs("</text>\n", f);
	x_axis(f, top, y0, y1);
	for (y = y0; i < j; i++, y += ROW_H)
		cell_row(f, L, &L->rows[i], y, top);
	fputs("</g>\n", f);
	return y1 + AXIS_H;
}

static void chart(FILE *f, const struct losses *L)
{
	double y = 10 + (double)legend_lines(L) * 18, h;

	h = y + (double)L->n_scenes * (SCENE_H + AXIS_H) +
	    (double)L->n_rows * ROW_H + 24;
	fputs("<figure id=\"losses\">", f);
	mgw_html_svg_open(f, "losses", MGW_HTML_CHART_W, h, NULL,
	                  "failed requests per cell by kind");
	legend(f, L);
	for (size_t i = 0, j; i < L->n_rows; i = j) {
		j = block_end(L, i);
		y = block(f, L, i, j, y);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">failed "
	        "requests, summed over the valid repetitions (each scene on "
	        "its own scale)</text>\n</svg>",
	        MGW_HTML_LABEL_W + PLOT_W / 2, y + 12);
}

/* ---- the numbers under it ---- */

static void caption(FILE *f, const struct losses *L)
{
	int any = 0;

	fputs("<figcaption>Failed requests per cell by kind, summed over the "
	      "cell's valid repetitions (invalid ones are left out, not "
	      "counted as zero); each scene has its own scale, cells of one "
	      "scene compare by bar length. Session lost: the request's session was gone; "
	      "state lost: a server-side handle was gone.", f);
	if (!L->per_kind)
		fputs(" This report has no per-kind sums: other failures are "
		      "every kind but session and state losses.", f);
	for (size_t k = 2; L->per_kind && k < K_OTHER; k++) {
		if (shown(L, k))
			continue;
		fputs(any ? ", " : " No cell had: ", f);
		kind_label(f, &L->kinds[k]);
		any = 1;
	}
	fputs(any ? ".</figcaption></figure>\n" : "</figcaption></figure>\n", f);
}

static void table_row(FILE *f, const struct losses *L, const struct row *r)
{
	fputs("<tr><td class=\"l\">", f);
	scene_name(f, r->scene);
	fputs("</td><td class=\"l\">", f);
	mgw_html_esc_json(f, json_object_get(r->cell, "cell"));
	fputs("</td>", f);
	for (size_t k = 0; k < L->n_kinds; k++) {
		if (!shown(L, k))
			continue;
		if (r->has)
			fprintf(f, "<td>%.0f</td>", r->count[k]);
		else
			fputs("<td>&#8211;</td>", f);
	}
	if (r->has)
		fprintf(f, "<td class=\"total\"><b>%.0f</b></td></tr>\n", r->total);
	else
		fputs("<td class=\"total\">&#8211;</td></tr>\n", f);
}

static void table(FILE *f, const struct losses *L)
{
	fputs("<table class=\"losses\">\n<tr><th class=\"l\">scene</th>"
	      "<th class=\"l\">cell</th>", f);
	for (size_t k = 0; k < L->n_kinds; k++) {
		if (!shown(L, k))
			continue;
		fputs("<th>", f);
		kind_label(f, &L->kinds[k]);
		fputs("</th>", f);
	}
	fputs("<th>total</th></tr>\n", f);
	for (size_t i = 0; i < L->n_rows; i++)
		table_row(f, L, &L->rows[i]);
	fputs("</table>\n", f);
}

int mgw_html_losses(FILE *f, const json_t *report)
{
	struct losses *L = calloc(1, sizeof(*L));
	int rc;

	if (!L)
		return MGW_ENOMEM;
	rc = collect(L, json_object_get(report, "scenes"));
	if (rc == 0) {
		summary(f, report, L);
		if (L->n_rows > 0) {
			chart(f, L);
			caption(f, L);
			table(f, L);
		}
	}
	free(L->rows);
	free(L);
	return rc;
}
