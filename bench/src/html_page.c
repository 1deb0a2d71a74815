/* html_page.c - the page around the charts, shared by report.html and
 * soak.html: one style sheet (a page needs no network), the setup tables
 * and the write through a temporary file. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/html_out.h"
#include "bench/src/html_page.h"

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
	"svg text{font-family:system-ui,sans-serif;font-size:12px}"
	/* a default colour that a text's own fill attribute overrides */
	"svg text:not([fill]){fill:#333}"
	"p.summary{font-size:1.05em;max-width:900px}"
	"table.losses td.total{font-weight:bold}"
	"table.losses td.l{white-space:nowrap}"
	"p.note{color:#7a4b00;font-size:.9em}"
	"p.small{color:#555;font-size:.85em}"
	"ul.invalid{font-size:.85em;color:#7a4b00}";

void mgw_html_page_open(FILE *f, const char *title)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	        "<meta charset=\"utf-8\">\n<title>%s</title>\n"
	        "<style>%s</style>\n</head>\n<body>\n<h1>%s</h1>\n", title, CSS,
	        title);
}

void mgw_html_page_close(FILE *f)
{
	fputs("</body>\n</html>\n", f);
}

static void kv_row(FILE *f, const char *k, const json_t *v)
{
	fputs("<tr><th>", f);
	mgw_html_esc(f, k);
	fputs("</th><td>", f);
	mgw_html_esc_json(f, v);
	fputs("</td></tr>\n", f);
}

void mgw_html_kv_table(FILE *f, const char *id, const char *title,
                       const json_t *o)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o) || json_object_size(o) == 0)
		return;
	fprintf(f, "<h3>%s</h3>\n<table class=\"kv\" id=\"%s\">\n", title, id);
	json_object_foreach((json_t *)o, k, v)
		kv_row(f, k, v);
	fputs("</table>\n", f);
}

/* Top-level scalars other than the known sections (a start time, the
 * command line, options): shown so a reader knows how the run was made. */
static void run_table(FILE *f, const json_t *doc)
{
	const char *k;
	json_t *v;
	int any = 0;

	json_object_foreach((json_t *)doc, k, v) {
		if (json_is_object(v) ||
		    json_is_array(v))
			continue;
		if (!any)
			fputs("<h3>Run</h3>\n<table class=\"kv\" id=\"run\">\n", f);
		any = 1;
		kv_row(f, k, v);
	}
	if (any)
		fputs("</table>\n", f);
}

/* The sittings of a resumed run: when each began, on which kernel and
 * CPU model (a resume may run on another machine of the same kind) and
 * with which build of mcpgw-bench. */
static void sittings_table(FILE *f, const json_t *doc)
{
	const json_t *list = json_object_get(doc, "sittings"), *s;
	static const char *const cols[] = { "command", "started_at", "kernel",
	                                    "cpu", "harness_sha256" };
	size_t i;

	if (!json_is_array(list) || json_array_size(list) == 0)
		return;
	fputs("<h3>Sittings</h3>\n<table id=\"sittings\">\n<tr><th>#</th>"
	      "<th>command</th><th>started at</th><th>kernel</th><th>CPU</th>"
	      "<th>mcpgw-bench SHA-256</th></tr>\n", f);
	json_array_foreach(list, i, s) {
		fprintf(f, "<tr><td>%zu</td>", i + 1);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			const json_t *v = json_object_get(s, cols[c]);

			fputs("<td>", f);
			if (json_is_string(v))
				mgw_html_esc(f, json_string_value(v));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

void mgw_html_setup_section(FILE *f, const json_t *doc)
{
	fputs("<section class=\"setup\" id=\"setup\">\n<h2>Machine, versions "
	      "and options</h2>\n", f);
	mgw_html_kv_table(f, "machine", "Machine",
	                  json_object_get(doc, "machine"));
	mgw_html_kv_table(f, "versions", "Versions",
	                  json_object_get(doc, "versions"));
	run_table(f, doc);
	sittings_table(f, doc);
	mgw_html_kv_table(f, "options", "Options",
	                  json_object_get(doc, "options"));
	fputs("</section>\n", f);
}

int mgw_html_write_page(int (*render)(FILE *, const json_t *, const char *),
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
	rc = render(f, doc, run_dir);
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
