/* html_page.h - what the bench's HTML pages (report.html, soak.html)
 * share around their charts: the style sheet and the page's head, the
 * key-value tables of the setup section, and the writer that puts a page
 * in place whole.  Private to bench/src/report_html*.c. */
#ifndef MGW_BENCH_HTML_PAGE_H
#define MGW_BENCH_HTML_PAGE_H

#include <stdio.h>

#include <jansson.h>

/* The doctype, the head with the inline style sheet, and <h1> of a page
 * titled title (trusted text); mgw_html_page_close() ends it. */
void mgw_html_page_open(FILE *f, const char *title);
void mgw_html_page_close(FILE *f);

/* An <h3> title (trusted) over a two-column table with id id of the
 * members of object o, every key and value escaped; nothing when o is
 * not an object or is empty. */
void mgw_html_kv_table(FILE *f, const char *id, const char *title,
                       const json_t *o);

/* How the numbers were made, after them: a section with the "machine",
 * "versions" and "options" objects of doc and its top-level scalars (a
 * start time, the command line) as the "Run" table. */
void mgw_html_setup_section(FILE *f, const json_t *doc);

/* Renders doc through render(f, doc, run_dir) into out_path by way of
 * out_path.tmp and rename(), so a reader never sees half a page.
 * Returns 0, render's error, MGW_ENOMEM or MGW_EIO. */
int mgw_html_write_page(int (*render)(FILE *, const json_t *, const char *),
                        const json_t *doc, const char *run_dir,
                        const char *out_path);

#endif
