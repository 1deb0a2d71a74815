/* report_html_test.c - unit tests for bench/src/report_html*.c: a
 * synthetic report with raw run files renders to well-formed HTML (every
 * tag closed in order, every entity terminated), one SVG per chart (the
 * losses chart first, a bar chart per scene with cells, a per-second
 * chart per kill cell with a marker at the kill, all of a scene's on one
 * scale), the losses per cell and kind as the report sums them, the
 * machine tables after the results, text from the report escaped (a cell
 * named with a <script> tag stays text), and the awkward inputs - an
 * empty scene, missing run files, a run whose kill did not land, a cell
 * without a valid repetition, a report that is not one, an unwritable
 * output - neither crash nor produce a half-written file. */
#include "autoconf.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/errors.h"
#include "bench/src/report_html.h"

#define EVIL "pod <script>alert(1)</script> & 'x'"

struct fixture {
	char dir[64];
	char out[128];
};

static void write_file(const char *dir, const char *rel, json_t *o)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(json_dump_file(o, path, JSON_INDENT(1)), 0);
	json_decref(o);
}

/* A run record (doc/bench.md) of secs seconds at rate ok/s, failing
 * lost requests in second lost_at (none when lost_at < 0), with the given
 * kill records; valid as the bench judged the repetition. */
static json_t *load_run(int secs, int rate, int lost_at, int lost,
                        json_t *kills)
{
	json_t *tl = json_array();
	int valid = 1;
	size_t i;
	json_t *k;

	for (int t = 0; t < secs; t++)
		json_array_append_new(tl, json_pack(
		        "{s:i, s:i, s:i, s:i, s:i, s:f, s:f}", "t", t, "ok",
		        t == lost_at ? rate - lost : rate, "failed",
		        t == lost_at ? lost : 0, "session_lost",
		        t == lost_at ? lost : 0, "handle_lost", 0, "p50_ms", 1.2,
		        "p99_ms", 3.4));
	json_array_foreach(kills, i, k)
		valid &= json_is_true(json_object_get(k, "valid"));
	return json_pack("{s:s, s:b, s:o, s:{s:s, s:s, s:o}}", "scene",
	                 "pod-kill", "valid", valid, "kills",
	                 kills ? kills : json_array(), "load", "version", "0.1",
	                 "dialect", "legacy", "timeline", tl);
}

static json_t *cell(const char *name, double med, double lo, double hi,
                    json_t *runs)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:n, s:i, s:i, s:i, "
	                 "s:{s:f, s:f, s:f}, s:f, s:f, s:i, s:i, s:i, s:i, "
	                 "s:b, s:o}",
	                 "cell", name, "path", "direct", "era", "legacy",
	                 "replicas", 2, "connection", "new", "state",
	                 "offered_rps", 100, "n", 3, "valid", 3, "achieved_rps",
	                 "median", med, "min", lo, "max", hi, "p50_ms", 1.25,
	                 "p99_ms", 7.5, "session_losses", 12, "handle_losses",
	                 0, "other_failures", 1, "repins", 0, "saturated",
	                 med < 95, "runs", runs);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/mgw-rhtml.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->out, sizeof(fx->out), "%s/report.html", fx->dir);
	{
		char runs[128];

		snprintf(runs, sizeof(runs), "%s/runs", fx->dir);
		assert_int_equal(mkdir(runs, 0700), 0);
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *s;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static int is_void(const char *name)
{
	static const char *const v[] = { "meta", "br", "hr", "img", "input",
		                         "link", NULL };

	for (int i = 0; v[i]; i++)
		if (!strcmp(name, v[i]))
			return 1;
	return 0;
}

/* Checks that html is well-formed in the XML-ish sense the renderer
 * promises: tags nest and close in order (void HTML elements and "/>"
 * excepted), attribute values are quoted, every '&' starts a terminated
 * entity, and no '<' or '>' stands in text.  Returns NULL, or what is
 * wrong (in why) with the byte offset. */
static const char *well_formed(const char *html, char *why, size_t len)
{
	char stack[64][32];
	int depth = 0;
	const char *p = html;

#define BAD(...) do { snprintf(why, len, __VA_ARGS__); return why; } while (0)
	while (*p) {
		if (*p == '&') {
			const char *q = p + 1;

			while (isalnum((unsigned char)*q) || *q == '#')
				q++;
			if (*q != ';' || q == p + 1)
				BAD("unterminated entity at %td", p - html);
			p = q + 1;
			continue;
		}
		if (*p == '>')
			BAD("bare '>' in text at %td", p - html);
		if (*p != '<') {
			p++;
			continue;
		}
		if (!strncmp(p, "<!DOCTYPE", 9)) {
			p = strchr(p, '>');
			if (!p)
				BAD("unterminated doctype");
			p++;
			continue;
		}
		{
			int closing = p[1] == '/', selfclose;
			const char *q = p + 1 + closing, *e;
			char name[32];
			size_t n = 0;

			while (isalnum((unsigned char)q[n]))
				n++;
			if (n == 0 || n >= sizeof(name))
				BAD("bad tag name at %td", p - html);
			memcpy(name, q, n);
			name[n] = 0;
			/* attributes: skip quoted values, find the tag's end */
			for (e = q + n; *e && *e != '>'; e++) {
				if (*e == '<')
					BAD("'<' inside a tag at %td", e - html);
				if (*e == '"') {
					e = strchr(e + 1, '"');
					if (!e)
						BAD("unterminated attribute");
				}
			}
			if (!*e)
				BAD("unterminated tag at %td", p - html);
			selfclose = e[-1] == '/';
			if (closing) {
				if (depth == 0 || strcmp(stack[depth - 1], name))
					BAD("</%s> at %td closes <%s>", name,
					    p - html,
					    depth ? stack[depth - 1] : "(none)");
				depth--;
			} else if (!selfclose && !is_void(name)) {
				if (depth >= 64)
					BAD("nesting too deep at %td", p - html);
				strcpy(stack[depth++], name);
			}
			p = e + 1;
			/* raw text elements: skip to their end tag */
			if (!closing && !strcmp(name, "style")) {
				const char *end = strstr(p, "</style>");

				if (!end || memchr(p, '<', (size_t)(end - p)))
					BAD("bad <style> at %td", p - html);
				p = end;
			}
		}
	}
	if (depth != 0)
		BAD("<%s> not closed", stack[depth - 1]);
	return NULL;
#undef BAD
}

static void assert_well_formed(const char *html)
{
	char why[160];
	const char *err = well_formed(html, why, sizeof(why));

	if (err)
		fail_msg("not well-formed: %s", err);
}

/* The report the tests share: a scale-out scene without kill records, a
 * pod-kill scene whose first cell is named with a <script> tag, a cell
 * whose run files are missing and a cell whose kill did not land, and an
 * empty scene. */
static json_t *make_report(const struct fixture *fx)
{
	json_t *kill20 = json_pack("[{s:s, s:s, s:f, s:f, s:b, s:{s:b, s:f}}]",
	                           "victim", "replica-1", "signal", "KILL",
	                           "planned_at_s", 20.0, "at_s", 20.25, "valid",
	                           1, "replacement", "healthy", 1,
	                           "healthy_at_s", 22.5);
	json_t *dead = json_pack("[{s:s, s:f, s:b, s:s}]", "victim", "replica-1",
	                         "at_s", 20.0, "valid", 0, "reason",
	                         "the victim had already exited");
	json_t *scale, *kill, *empty, *dead_cell;

	write_file(fx->dir, "runs/s1.json", load_run(10, 200, -1, 0, NULL));
	write_file(fx->dir, "runs/k1.json",
	           load_run(30, 100, 20, 37, json_deep_copy(kill20)));
	write_file(fx->dir, "runs/k2.json",
	           load_run(30, 100, 21, 5, json_deep_copy(kill20)));
	write_file(fx->dir, "runs/g1.json", load_run(30, 100, -1, 0, kill20));
	write_file(fx->dir, "runs/bad.json", load_run(30, 100, -1, 0, dead));
	dead_cell = cell("victim already dead", 100, 100, 100,
	                 json_pack("[s]", "runs/bad.json"));
	json_object_set_new(dead_cell, "valid", json_integer(0));
	json_object_set_new(dead_cell, "invalid", json_pack("[{s:s, s:s}]",
	        "run", "runs/bad.json", "reason",
	        "the victim <replica-1> had already exited"));
	scale = json_pack("{s:s, s:[o, o]}", "scene", "scale-out", "cells",
	                  cell("legacy direct 1 replica", 199.5, 198, 200,
	                       json_pack("[s]", "runs/s1.json")),
	                  cell("legacy gateway 1 replica", 80, 70, 90,
	                       json_pack("[s]", "runs/s1.json")));
	kill = json_pack("{s:s, s:s, s:f, s:f, s:i, s:f, s:s, s:f, s:[o, o, o, o]}",
	                 "scene", "pod-kill", "title", "Pod kill <M3>",
	                 "offered_rps", 100.0, "duration_s", 30.0, "reps", 3,
	                 "kill_at_s", 20.0, "kill_signal", "KILL",
	                 "readiness_delay_s", 2.0, "cells",
	                 cell(EVIL, 99, 97, 100,
	                      json_pack("[s, s]", "runs/k1.json",
	                                "runs/k2.json")),
	                 cell("legacy gateway 2 replicas", 100, 100, 100,
	                      json_pack("[s]", "runs/g1.json")),
	                 cell("lost files", 100, 100, 100,
	                      json_pack("[s, s]", "runs/none1.json",
	                                "runs/none2.json")),
	                 dead_cell);
	empty = json_pack("{s:s, s:[]}", "scene", "redis-outage", "cells");
	return json_pack("{s:{s:s, s:i}, s:{s:s, s:s}, s:s, s:[o, o, o]}",
	                 "machine", "cpu", "Test CPU <fast> & cheap", "cores",
	                 8, "versions", "mcpgw", "0.1.0", "redis-server",
	                 "7.0 \"stable\"", "started", "2026-11-30T00:00:00Z",
	                 "scenes", scale, kill, empty);
}

static void test_renders_well_formed(void **state)
{
	struct fixture *fx = *state;
	json_t *r = make_report(fx);
	char *html;

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	assert_well_formed(html);
	assert_non_null(strstr(html, "<!DOCTYPE html>"));
	/* self-contained: no scripts, no external resources */
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "href="));
	assert_null(strstr(html, "@import"));
	assert_null(strstr(html, "url("));
	free(html);
	json_decref(r);
}

static void test_one_svg_per_chart(void **state)
{
	struct fixture *fx = *state;
	json_t *r = make_report(fx);
	char *html;

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	/* the losses chart of every cell; bar charts: scale-out and pod-kill
	 * (the empty scene has none); kill charts: the <script> cell and the
	 * gateway cell; the scale-out runs have no kill, the lost files and
	 * the dead victim none */
	assert_int_equal(count(html, "<svg class=\"losses\""), 1);
	assert_int_equal(count(html, "<svg class=\"bars\""), 2);
	assert_int_equal(count(html, "<svg class=\"timeline\""), 2);
	assert_int_equal(count(html, "<svg"), 5);
	assert_int_equal(count(html, "</svg>"), 5);
	/* both runs of the first kill cell killed at 20.25 s: one marker */
	assert_int_equal(count(html, "class=\"kill\""), 2);
	assert_non_null(strstr(html, "kill at 20.25 s"));
	assert_int_equal(count(html, "class=\"ready\""), 2);
	assert_non_null(strstr(html, "replacement healthy at 22.50 s"));
	/* the scene's conditions, as report.md words them */
	assert_non_null(strstr(html, "<p>Pod kill &lt;M3&gt;. Offered 100 rps "
	                             "(open loop) for 30 s per run, 3 "
	                             "repetitions per cell; SIGKILL at 20 s, "
	                             "the replacement started 2 s later on the "
	                             "same port.</p>"));
	/* the mean failures of the two runs: 37/2 in second 20, 5/2 in 21 */
	assert_non_null(strstr(html, "t=20 s: 18.50 failures/s"));
	assert_non_null(strstr(html, "t=21 s: 2.50 failures/s"));
	/* a bar per cell in the two bar charts, whiskers and offered marks */
	assert_int_equal(count(html, "offered 100.0 rps"), 6);
	assert_non_null(strstr(html, "median 80.0 rps, range 70.0&#8211;90.0 "
	                             "(saturated)"));
	/* the table of report.md */
	assert_non_null(strstr(html, "<td>99.0 (97.0&#8211;100.0)</td>"));
	assert_non_null(strstr(html, "<th>re-pins</th>"));
	free(html);
	json_decref(r);
}

static void test_escapes_text(void **state)
{
	struct fixture *fx = *state;
	json_t *r = make_report(fx);
	char *html;

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	assert_null(strstr(html, "<script>"));
	assert_null(strstr(html, "</script>"));
	/* table, bar label, bar tooltip, kill chart title and caption */
	assert_true(count(html, "pod &lt;script&gt;alert(1)&lt;/script&gt; "
	                        "&amp; &#39;x&#39;") >= 5);
	assert_non_null(strstr(html, "Test CPU &lt;fast&gt; &amp; cheap"));
	assert_non_null(strstr(html, "7.0 &quot;stable&quot;"));
	assert_non_null(strstr(html, "2026-11-30T00:00:00Z"));
	free(html);
	json_decref(r);
}

static void test_empty_and_missing(void **state)
{
	struct fixture *fx = *state;
	json_t *r = make_report(fx);
	char *html;

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	assert_non_null(strstr(html, "<h2>redis-outage</h2>\n<p class=\"small\">"
	                             "No cells.</p>"));
	assert_non_null(strstr(html, "lost files: 2 of 2 run files missing or "
	                             "unreadable.</p>"));
	/* a kill that did not land is not drawn as a run without losses */
	assert_null(strstr(html, "victim already dead: successes"));
	assert_non_null(strstr(html, "victim already dead: no per-second chart, "
	                             "no valid repetition (1 invalid"));
	/* and it is listed with its reason under the table */
	assert_non_null(strstr(html, "<li>victim already dead (<code>runs/bad.json"
	                             "</code>): the victim &lt;replica-1&gt; had "
	                             "already exited</li>"));
	assert_non_null(strstr(html, "<td>0&#8224;</td>"));
	free(html);
	json_decref(r);

	/* no scenes at all, and a run_dir that does not exist */
	r = json_pack("{s:{}, s:{}, s:[]}", "machine", "versions", "scenes");
	assert_int_equal(mgw_bench_report_html(r, "/nonexistent", fx->out), 0);
	html = slurp(fx->out);
	assert_well_formed(html);
	assert_non_null(strstr(html, "No scenes."));
	assert_null(strstr(html, "<svg"));
	free(html);
	json_decref(r);

	/* cells with nothing but a name: no numbers, no runs */
	r = json_pack("{s:[{s:s, s:[{s:s}, {s:i}]}]}", "scenes", "scene", "x",
	              "cells", "cell", "bare", "n", 1);
	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	assert_well_formed(html);
	assert_int_equal(count(html, "<svg"), 2); /* losses and rates */
	assert_non_null(strstr(html, "no valid repetition"));
	assert_null(strstr(html, "nan"));
	assert_null(strstr(html, "inf"));
	free(html);
	json_decref(r);
}

/* A long cell name is cut beside its bar, on a character boundary, and
 * kept whole in the table. */
static void test_long_label(void **state)
{
	struct fixture *fx = *state;
	/* 40 ASCII bytes, then "é" (2 bytes) straddling the 42-byte cut */
	const char *name = "0123456789012345678901234567890123456789x\xc3\xa9 "
	                   "and more words";
	json_t *r = json_pack("{s:[{s:s, s:[{s:s, s:{s:f}}]}]}", "scenes",
	                      "scene", "s", "cells", "cell", name,
	                      "achieved_rps", "median", 10.0);
	char *html;

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	assert_well_formed(html);
	assert_non_null(strstr(html, ">0123456789012345678901234567890123456789x"
	                             "&#8230;<title>"));
	assert_non_null(strstr(html, "<td class=\"l\">0123456789012345678901234"
	                             "567890123456789x\xc3\xa9 and more words"));
	free(html);
	json_decref(r);
}

/* The load client's last timeline row is the partial second after the
 * planned end: too short, it is left out; half a second, it is scaled to
 * a rate. */
static void test_partial_last_second(void **state)
{
	struct fixture *fx = *state;
	json_t *kills = json_pack("[{s:f, s:b}]", "at_s", 2.0, "valid", 1);
	json_t *run = load_run(4, 100, -1, 0, json_deep_copy(kills)), *r;
	json_t *tl = json_object_get(json_object_get(run, "load"), "timeline");
	char *html;

	/* 4 s planned: row 4 is 10 ms after the end, with a failure in it */
	json_object_set_new(json_object_get(run, "load"), "phases",
	                    json_pack("[{s:f}]", "duration_s", 4.0));
	json_array_append_new(tl, json_pack("{s:i, s:i, s:i}", "t", 4, "ok", 0,
	                                    "failed", 1));
	write_file(fx->dir, "runs/p1.json", run);
	/* 3.5 s planned: row 3 covers half a second, 2 failures = 4/s */
	run = load_run(4, 100, 3, 2, kills);
	json_object_set_new(json_object_get(run, "load"), "phases",
	                    json_pack("[{s:f}, {s:f}]", "duration_s", 1.0,
	                              "duration_s", 2.5));
	write_file(fx->dir, "runs/p2.json", run);
	r = json_pack("{s:[{s:s, s:[{s:s, s:[s]}, {s:s, s:[s]}]}]}", "scenes",
	              "scene", "pod-kill", "cells", "cell", "short", "runs",
	              "runs/p1.json", "cell", "half", "runs", "runs/p2.json");
	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	assert_well_formed(html);
	assert_int_equal(count(html, "<svg class=\"timeline\""), 2);
	assert_null(strstr(html, "t=4 s:"));
	assert_non_null(strstr(html, "t=3 s: 4.00 failures/s"));
	free(html);
	json_decref(r);
}

static void test_bad_input(void **state)
{
	struct fixture *fx = *state;
	json_t *r = json_pack("{s:s}", "scenes", "nope"), *ok;
	char bad[160], tmp[160];

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out),
	                 MGW_EINVAL);
	json_decref(r);
	r = json_array();
	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out),
	                 MGW_EINVAL);
	json_decref(r);
	assert_int_equal(access(fx->out, F_OK), -1);

	ok = json_pack("{s:[]}", "scenes");
	snprintf(bad, sizeof(bad), "%s/no/such/dir/report.html", fx->dir);
	assert_int_equal(mgw_bench_report_html(ok, fx->dir, bad), MGW_EIO);
	/* the output exists only complete: no stray temporary file */
	assert_int_equal(mgw_bench_report_html(ok, fx->dir, fx->out), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fx->out);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(access(fx->out, F_OK), 0);
	json_decref(ok);
}

static void test_html_main(void **state)
{
	struct fixture *fx = *state;
	json_t *r = make_report(fx);
	char in[160], *html;
	char *argv_ok[] = { "html", fx->dir, NULL };
	char *argv_none[] = { "html", NULL };
	char *argv_missing[] = { "html", "/nonexistent-mgw-dir", NULL };
	char *argv_flag[] = { "html", "--bogus", NULL };

	snprintf(in, sizeof(in), "%s/report.json", fx->dir);
	assert_int_equal(json_dump_file(r, in, 0), 0);
	json_decref(r);
	assert_int_equal(mgw_bench_html_main(2, argv_ok), 0);
	html = slurp(fx->out);
	assert_well_formed(html);
	assert_int_equal(count(html, "<svg"), 5);
	free(html);
	assert_int_equal(mgw_bench_html_main(1, argv_none), 2);
	assert_int_equal(mgw_bench_html_main(2, argv_flag), 2);
	assert_int_equal(mgw_bench_html_main(2, argv_missing), 1);
}

/* The number after each occurrence of marker (the y axes' upper ends:
 * class="ymax" texts), up to max of them; returns how many. */
static size_t numbers_after(const char *html, const char *marker, double *out,
                            size_t max)
{
	size_t n = 0;

	for (const char *p = html; n < max && (p = strstr(p, marker)); p++) {
		const char *gt = strchr(p, '>');

		assert_non_null(gt);
		out[n++] = strtod(gt + 1, NULL);
	}
	return n;
}

/* The per-second charts of one scene end their axes at the same values:
 * the <script> cell's mean failures peak at 18.5/s (axis to 20), the
 * gateway cell's at 0 (alone, its axis would end at 1). */
static void test_shared_scale(void **state)
{
	struct fixture *fx = *state;
	json_t *r = make_report(fx);
	double top[8];
	char *html;

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	/* two charts, two panels each: successes, failures */
	assert_int_equal(numbers_after(html, "class=\"ymax\"", top, 8), 4);
	assert_true(top[0] == 100 && top[2] == 100);
	assert_true(top[1] == 20 && top[3] == 20);
	free(html);
	json_decref(r);
}

/* The group of cell in the losses chart (its opening tag up to the next
 * group's end) holds every string of has and none of lacks (both
 * NULL-terminated). */
static void check_row(const char *html, const char *cell,
                      const char *const *has, const char *const *lacks)
{
	char key[160], *row;
	const char *p, *e;

	snprintf(key, sizeof(key), "data-cell=\"%s\"", cell);
	p = strstr(html, key);
	assert_non_null(p);
	e = strstr(p, "</g>");
	assert_non_null(e);
	row = strndup(p, (size_t)(e - p));
	assert_non_null(row);
	for (; *has; has++)
		if (!strstr(row, *has))
			fail_msg("%s: no %s in %s", cell, *has, row);
	for (; *lacks; lacks++)
		if (strstr(row, *lacks))
			fail_msg("%s: %s in %s", cell, *lacks, row);
	free(row);
}

/* The losses chart comes first and counts what the report sums: the
 * per-kind "failures" (an unknown kind too, escaped), the table's three
 * sums for a cell without them, nothing for a cell without a valid
 * repetition; the machine and versions come after every scene. */
static void test_losses_first(void **state)
{
	struct fixture *fx = *state;
	json_t *r = json_pack(
	        "{s:{s:s}, s:[{s:s, s:[{s:s, s:i, s:{s:i, s:i, s:i, s:i}}, "
	        "{s:s, s:i, s:i, s:i, s:i}, {s:s, s:i, s:n, s:n}]}, "
	        "{s:s, s:[{s:s, s:i, s:{s:i, s:i}}]}]}",
	        "machine", "cpu", "test", "scenes", "scene", "pod-kill", "cells",
	        "cell", "a", "valid", 3, "failures", "session_lost", 40,
	        "connect_error", 2, "<b>odd</b>", 3, "timeout", -5,
	        "cell", "old report", "valid", 2, "session_losses", 4,
	        "handle_losses", 1, "other_failures", 6,
	        "cell", "none valid", "valid", 0, "failures",
	        "session_losses",
	        "scene", "handles", "cells", "cell", "h", "valid", 1,
	        "failures", "handle_lost", 7, "session_lost", 0);
	char *html;
	const char *svg, *machine, *scene;

	assert_int_equal(mgw_bench_report_html(r, fx->dir, fx->out), 0);
	html = slurp(fx->out);
	assert_well_formed(html);
	svg = strstr(html, "<svg");
	assert_non_null(svg);
	assert_int_equal(strncmp(svg, "<svg class=\"losses\"", 19), 0);
	/* nothing but the title and the summary before it */
	assert_true(strstr(html, "<table") > svg);
	assert_true(strstr(html, "<h2") > svg);
	assert_true(strstr(html, "<p class=\"summary\">") < svg);
	assert_non_null(strstr(html, "4 cells in 2 scenes; together they "
	                             "lost 63 requests; the most: a (pod-kill), "
	                             "45; 1 cell without a valid repetition, "
	                             "not counted."));
	check_row(html, "a", (const char *const[]){
		"data-kind=\"session_lost\" data-count=\"40\"",
		"data-kind=\"connect_error\" data-count=\"2\"",
		"data-kind=\"&lt;b&gt;odd&lt;/b&gt;\" data-count=\"3\"",
		"class=\"total\"", ">45</text>", NULL },
		/* a negative count is not one */
		(const char *const[]){ "timeout", NULL });
	check_row(html, "old report", (const char *const[]){
		"data-kind=\"session_lost\" data-count=\"4\"",
		"data-kind=\"handle_lost\" data-count=\"1\"",
		"data-kind=\"other\" data-count=\"6\"", ">11</text>", NULL },
		(const char *const[]){ NULL });
	check_row(html, "none valid",
	          (const char *const[]){ "no valid repetition", NULL },
	          (const char *const[]){ "<rect", NULL });
	/* a zero draws no segment */
	check_row(html, "h", (const char *const[]){
		"data-kind=\"handle_lost\" data-count=\"7\"", NULL },
		(const char *const[]){ "data-kind=\"session_lost\"", NULL });
	/* the table under the chart: a column per kind shown, then totals */
	assert_non_null(strstr(html, "<th>session lost</th><th>state lost "
	                             "(handle)</th><th>connection error</th>"
	                             "<th>other failures</th><th>&lt;b&gt;odd"
	                             "&lt;/b&gt;</th><th>total</th>"));
	assert_non_null(strstr(html, "<td class=\"l\">a</td><td>40</td><td>0</td>"
	                             "<td>2</td><td>0</td><td>3</td>"
	                             "<td class=\"total\"><b>45</b></td>"));
	assert_non_null(strstr(html, "<td class=\"l\">none valid</td><td>&#8211;"));
	/* the unknown kind is not in the legend as markup */
	assert_null(strstr(html, "<b>odd"));
	/* setup tables at the end */
	machine = strstr(html, "id=\"machine\"");
	assert_non_null(machine);
	for (scene = html; (scene = strstr(scene, "<section class=\"scene\""));
	     scene++)
		assert_true(scene < machine);
	free(html);
	json_decref(r);
}

/* The checker itself must catch what it is there to catch. */
static void test_checker_rejects(void **state)
{
	char why[160];

	(void)state;
	assert_null(well_formed("<p>a &amp; b<br></p><svg><line/></svg>", why,
	                        sizeof(why)));
	assert_non_null(well_formed("<p><b></p></b>", why, sizeof(why)));
	assert_non_null(well_formed("<p>a & b</p>", why, sizeof(why)));
	assert_non_null(well_formed("<p>1 > 0</p>", why, sizeof(why)));
	assert_non_null(well_formed("<p>", why, sizeof(why)));
	assert_non_null(well_formed("<p title=\"x>", why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_renders_well_formed, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_one_svg_per_chart, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_escapes_text, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_missing, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_long_label, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_partial_last_second, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_shared_scale, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_losses_first, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_html_main, setup, teardown),
		cmocka_unit_test(test_checker_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
