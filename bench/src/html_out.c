/* html_out.c - escaping, defensive numbers and axis helpers for the HTML
 * report.  Everything taken from a report is untrusted text here: it is
 * escaped on output, and numbers are checked for finiteness before they
 * become coordinates. */
#include "autoconf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/src/html_out.h"

void mgw_html_esc(FILE *f, const char *s)
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

void mgw_html_esc_json(FILE *f, const json_t *v)
{
	char *s;

	if (!v || json_is_null(v)) {
		fputs("-", f);
		return;
	}
	if (json_is_string(v)) {
		mgw_html_esc(f, json_string_value(v));
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
	mgw_html_esc(f, s ? s : "?");
	free(s);
}

void mgw_html_esc_label(FILE *f, const json_t *v, size_t max)
{
	const char *s = json_string_value(v);
	char buf[256];
	size_t n;

	if (!s || strlen(s) <= max || max >= sizeof(buf)) {
		mgw_html_esc_json(f, v);
		return;
	}
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	memcpy(buf, s, n);
	buf[n] = 0;
	mgw_html_esc(f, buf);
	fputs("&#8230;", f);
}

double mgw_html_num(const json_t *v)
{
	double d;

	if (!v || !json_is_number(v))
		return NAN;
	d = json_number_value(v);
	return isfinite(d) ? d : NAN;
}

double mgw_html_field(const json_t *o, const char *key)
{
	return mgw_html_num(json_object_get(o, key));
}

const char *mgw_html_str_field(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

double mgw_html_nice_step(double max)
{
	double raw, mag, n;

	if (!(max > 0))
		return 1;
	raw = max / 5.0;
	mag = pow(10.0, floor(log10(raw)));
	n = raw / mag;
	return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
}

double mgw_html_nice_max(double max)
{
	double st = mgw_html_nice_step(max);

	if (!(max > 0))
		return 1;
	return ceil(max / st) * st;
}

void mgw_html_svg_open(FILE *f, const char *cls, double w, double h,
                       const json_t *name, const char *title)
{
	fprintf(f, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
	        "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	        "role=\"img\">\n<title>", cls, w, h, w, h);
	if (name) {
		mgw_html_esc_json(f, name);
		fputs(": ", f);
	}
	fprintf(f, "%s</title>\n", title);
}

void mgw_html_swatch(FILE *f, double x, double y, double w, const char *fill,
                     const char *label)
{
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" "
	        "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x,
	        y - 9, w, fill, x + w + 4, y, label);
}
