/* html_out.h - what the pieces of report.html and soak.html share:
 * escaping of text taken from a report, numbers read defensively from
 * JSON, axes, time markers and the common chart geometry.  Private to
 * bench/src/report_html*.c and html_page.c. */
#ifndef MGW_BENCH_HTML_OUT_H
#define MGW_BENCH_HTML_OUT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Chart geometry (SVG user units = CSS px at 100%). */
#define MGW_HTML_CHART_W 900.0
#define MGW_HTML_LABEL_W 300.0    /* room for a cell name left of a bar */
#define MGW_HTML_RIGHT_PAD 30.0
#define MGW_HTML_LABEL_MAX 42     /* bytes of a cell name beside its bar */

/* Writes s HTML-escaped (the five characters that can end a text node or
 * an attribute value), so one function serves text and attributes.  NULL
 * writes nothing. */
void mgw_html_esc(FILE *f, const char *s);

/* A JSON value as escaped text: strings as they are, numbers compactly,
 * null or absent as "-", anything else as compact JSON. */
void mgw_html_esc_json(FILE *f, const json_t *v);

/* A chart label: at most max bytes of the string v, cut on a UTF-8
 * character boundary with an ellipsis, escaped (the full name stays in
 * the tables and the tooltips). */
void mgw_html_esc_label(FILE *f, const json_t *v, size_t max);

/* A number from a JSON value, or NAN when it is absent, not a number or
 * not finite: callers draw nothing for NAN.  field() reads o[key]. */
double mgw_html_num(const json_t *v);
double mgw_html_field(const json_t *o, const char *key);
const char *mgw_html_str_field(const json_t *o, const char *key);

/* Tick step of 1, 2 or 5 times a power of ten giving at most ~5 ticks
 * from 0 to max; and the axis's upper end, max rounded up to a whole step
 * (1 when max is not positive, so an all-zero series still has a scale). */
double mgw_html_nice_step(double max);
double mgw_html_nice_max(double max);

/* Opens an inline SVG chart of class cls, w x h user units, whose <title>
 * (for screen readers and tooltips) is title followed by the escaped
 * string name when name is not NULL.  The caller closes it with
 * "</svg>". */
void mgw_html_svg_open(FILE *f, const char *cls, double w, double h,
                       const json_t *name, const char *title);

/* A legend key: a w x 10 swatch of colour fill at (x, y - 9) and the text
 * label (trusted, already HTML) after it. */
void mgw_html_swatch(FILE *f, double x, double y, double w, const char *fill,
                     const char *label);

/* One panel's y axis: grid lines and ticks from 0 to top (the last tick,
 * class "ymax", is the panel's upper end) in a group of class "yaxis"
 * with data-panel="panel", the plot's frame at (x0, y0), w x h, and the
 * rotated label left of it. */
void mgw_html_panel_axes(FILE *f, const char *panel, double x0, double y0,
                         double w, double h, double top, const char *label);

/* A time axis at baseline y under a plot at x0 of width w: ticks in
 * seconds from 0 to tmax, and its title at the chart's bottom (chart
 * height H). */
void mgw_html_time_axis(FILE *f, double x0, double w, double y, double tmax,
                        double H);

/* How one kind of vertical time marker looks. */
struct mgw_html_marker {
	const char *cls, *stroke, *dash;
	const char *what;   /* the tooltip: "<what> at T s" */
	const char *label;  /* written beside the first marker drawn only */
	double label_dy;    /* its offset below y1 */
};

/* Vertical lines of style m from y1 to y2 at times t[0..n) (x = x0 +
 * t * xs); times that are negative, not numbers or after tmax are left
 * out.  The label goes on the first line only, the rest have tooltips
 * (one label per kill would be unreadable). */
void mgw_html_markers(FILE *f, const double *t, size_t n, double x0,
                      double xs, double y1, double y2, double tmax,
                      const struct mgw_html_marker *m);

#endif
