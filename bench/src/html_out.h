/* html_out.h - what the pieces of report.html share: escaping of text
 * taken from a report, numbers read defensively from JSON, axis ticks and
 * the common chart geometry.  Private to bench/src/report_html*.c. */
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

#endif
