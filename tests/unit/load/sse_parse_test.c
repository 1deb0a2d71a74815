/* sse_parse_test.c - the incremental SSE parser (src/load/sse_parse.c):
 * line ends (LF, CRLF, CR, and CRLF split across feeds), a stream fed in
 * two pieces at every split point and byte by byte gives the same events,
 * multi-line data, comments, event types, ids, BOM, bounds, stopping from
 * the callback, and partial events at the end of a stream. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "load/sse_parse.h"

#define MAXEV 16

/* Events collected by the callback, rendered "type|id|data". */
struct got {
	char ev[MAXEV][256];
	size_t len[MAXEV];
	int n;
	int stop_at;   /* return 1 from the stop_at-th event (1-based) */
};

static int on_ev(void *arg, const struct mgw_sse_event *e)
{
	struct got *g = arg;
	int k;

	assert_true(g->n < MAXEV);
	assert_int_equal(e->data[e->data_len], '\0');
	k = snprintf(g->ev[g->n], sizeof(g->ev[g->n]), "%s|%s|", e->type, e->id);
	assert_true(k >= 0 && (size_t)k + e->data_len < sizeof(g->ev[g->n]));
	memcpy(g->ev[g->n] + k, e->data, e->data_len);
	g->ev[g->n][k + e->data_len] = '\0';
	g->len[g->n] = (size_t)k + e->data_len;
	g->n++;
	return g->stop_at && g->n == g->stop_at ? 1 : 0;
}

static void parse_all(const char *s, size_t len, struct got *g)
{
	struct mgw_sse_parser p;

	memset(g, 0, sizeof(*g));
	mgw_sse_init(&p, 0, 0);
	assert_int_equal(mgw_sse_feed(&p, s, len, on_ev, g), 0);
	mgw_sse_deinit(&p);
}

static void test_line_ends(void **state)
{
	static const char *const streams[] = {
		"event: message\ndata: {\"a\":1}\n\n",
		"event: message\r\ndata: {\"a\":1}\r\n\r\n",
		"event: message\rdata: {\"a\":1}\r\r",
		"event: message\r\ndata: {\"a\":1}\r\r\n", /* CR then CRLF */
	};
	struct got g;

	(void)state;
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		parse_all(streams[i], strlen(streams[i]), &g);
		assert_int_equal(g.n, 1);
		assert_string_equal(g.ev[0], "message||{\"a\":1}");
	}
	/* LF LF after CR: the LF belongs to the CR, the next LF is blank */
	parse_all("data: x\r\n\n", 10, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.ev[0], "message||x");
	/* a CR alone is a line end, not "\r\n" waiting for its LF */
	parse_all("data: x\r\rdata: y\n\n", 19, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.ev[1], "message||y");
}

static void test_fields(void **state)
{
	struct got g;
	const char *s =
		": keep-alive comment\n"
		"data: first\n"
		"data:second\n"
		"data:  two spaces\n"
		"data\n"
		"retry: 100\n"
		"unknown: x\n"
		"\n"
		"event: progress\n"
		"id: 7\n"
		"data: {}\n"
		"\n"
		"data: after id\n"
		"\n"
		"event: nodata\n"
		"id: 9\n"
		"\n"
		"id\n"
		"data: id cleared\n"
		"\n";
	struct mgw_sse_parser p;

	(void)state;
	memset(&g, 0, sizeof(g));
	mgw_sse_init(&p, 0, 0);
	assert_int_equal(mgw_sse_feed(&p, s, strlen(s), on_ev, &g), 0);
	assert_int_equal(g.n, 4);
	/* joined with LF, one leading space removed, "data" alone is empty */
	assert_string_equal(g.ev[0], "message||first\nsecond\n two spaces\n");
	assert_string_equal(g.ev[1], "progress|7|{}");
	/* the id survives into later events; the type does not */
	assert_string_equal(g.ev[2], "message|7|after id");
	/* an event without data is not dispatched but its id still counts,
	 * and an empty id field resets it */
	assert_string_equal(g.ev[3], "message||id cleared");
	assert_int_equal(p.comments, 1);
	assert_int_equal(p.events, 4);
	assert_int_equal(mgw_sse_finish(&p), 0);
	mgw_sse_deinit(&p);
}

static void test_id_with_nul_ignored(void **state)
{
	static const char s[] = "id: 5\ndata: a\n\nid: 6\0x\ndata: b\n\n";
	struct got g;

	(void)state;
	parse_all(s, sizeof(s) - 1, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.ev[0], "message|5|a");
	assert_string_equal(g.ev[1], "message|5|b");
}

static void test_data_may_hold_nul(void **state)
{
	static const char s[] = "data: a\0b\n\n";
	struct got g;

	(void)state;
	parse_all(s, sizeof(s) - 1, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.len[0], strlen("message||") + 3);
	assert_memory_equal(g.ev[0] + strlen("message||"), "a\0b", 3);
}

/* Feeding a stream in any pieces gives the events of feeding it whole. */
static const char split_stream[] =
	"\xEF\xBB\xBF"
	": ping\r\n"
	"event: message\r\n"
	"id: 1\r\n"
	"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n"
	"\r\n"
	"data: line one\r"
	"data: line two\n"
	"\r\n"
	"event: message\n"
	"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n"
	"\n";

static void test_split_everywhere(void **state)
{
	size_t len = sizeof(split_stream) - 1;
	struct got whole, g;

	(void)state;
	parse_all(split_stream, len, &whole);
	assert_int_equal(whole.n, 3);
	assert_string_equal(whole.ev[0],
	    "message|1|{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}");
	assert_string_equal(whole.ev[1], "message|1|line one\nline two");
	assert_string_equal(whole.ev[2],
	    "message|1|{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
	for (size_t cut = 0; cut <= len; cut++) {
		struct mgw_sse_parser p;

		memset(&g, 0, sizeof(g));
		mgw_sse_init(&p, 0, 0);
		assert_int_equal(mgw_sse_feed(&p, split_stream, cut, on_ev, &g), 0);
		assert_int_equal(mgw_sse_feed(&p, split_stream + cut, len - cut,
		                              on_ev, &g), 0);
		assert_int_equal(g.n, whole.n);
		for (int i = 0; i < g.n; i++)
			assert_string_equal(g.ev[i], whole.ev[i]);
		assert_int_equal(p.comments, 1);
		mgw_sse_deinit(&p);
	}
	/* and one byte at a time */
	{
		struct mgw_sse_parser p;

		memset(&g, 0, sizeof(g));
		mgw_sse_init(&p, 0, 0);
		for (size_t i = 0; i < len; i++)
			assert_int_equal(mgw_sse_feed(&p, split_stream + i, 1, on_ev, &g), 0);
		assert_int_equal(g.n, whole.n);
		for (int i = 0; i < g.n; i++)
			assert_string_equal(g.ev[i], whole.ev[i]);
		mgw_sse_deinit(&p);
	}
}

static void test_bom_only_at_start(void **state)
{
	struct got g;
	struct mgw_sse_parser p;

	(void)state;
	/* bytes that start like a BOM but are not one stay in the line:
	 * "\xEF" then "data" makes a field named "\xEF" "data", ignored */
	parse_all("\xEF" "data: x\n\ndata: y\n\n", 19, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.ev[0], "message||y");
	/* a BOM later in the stream is part of the field name */
	memset(&g, 0, sizeof(g));
	mgw_sse_init(&p, 0, 0);
	assert_int_equal(mgw_sse_feed(&p, "data: a\n\n", 9, on_ev, &g), 0);
	assert_int_equal(mgw_sse_feed(&p, "\xEF\xBB\xBF" "data: b\n\n", 12, on_ev, &g), 0);
	assert_int_equal(g.n, 1);
	mgw_sse_deinit(&p);
}

static void test_line_limit(void **state)
{
	struct mgw_sse_parser p;
	struct got g;
	char line[80];

	(void)state;
	memset(&g, 0, sizeof(g));
	/* exactly max_line is fine, whole or split */
	mgw_sse_init(&p, 16, 1024);
	memcpy(line, "data: 0123456789\n\n", 18); /* 16-byte line */
	assert_int_equal(mgw_sse_feed(&p, line, 18, on_ev, &g), 0);
	assert_int_equal(mgw_sse_feed(&p, line, 5, on_ev, &g), 0);
	assert_int_equal(mgw_sse_feed(&p, line + 5, 13, on_ev, &g), 0);
	assert_int_equal(g.n, 2);
	/* one more byte fails, in a single buffer ... */
	assert_int_equal(mgw_sse_feed(&p, "data: 0123456789A\n", 18, on_ev, &g),
	                 MGW_ELIMIT);
	/* ... and the failure sticks */
	assert_int_equal(mgw_sse_feed(&p, "data: x\n\n", 9, on_ev, &g), MGW_ELIMIT);
	assert_int_equal(g.n, 2);
	mgw_sse_deinit(&p);

	/* a line that grows across feeds without an end fails as it passes
	 * the bound, not when (if ever) it ends */
	mgw_sse_init(&p, 16, 1024);
	assert_int_equal(mgw_sse_feed(&p, "data: 01234", 11, on_ev, &g), 0);
	assert_int_equal(mgw_sse_feed(&p, "56789", 5, on_ev, &g), 0);
	assert_int_equal(mgw_sse_feed(&p, "A", 1, on_ev, &g), MGW_ELIMIT);
	mgw_sse_deinit(&p);

	/* a comment counts against the line bound too */
	mgw_sse_init(&p, 16, 1024);
	assert_int_equal(mgw_sse_feed(&p, ":0123456789abcdefg\n", 19, on_ev, &g),
	                 MGW_ELIMIT);
	mgw_sse_deinit(&p);
}

static void test_event_limit(void **state)
{
	struct mgw_sse_parser p;
	struct got g;

	(void)state;
	memset(&g, 0, sizeof(g));
	/* 8 data bytes per event: "abcd" + LF + "efg" = 8 is fine */
	mgw_sse_init(&p, 64, 8);
	assert_int_equal(mgw_sse_feed(&p, "data: abcd\ndata: efg\n\n", 22, on_ev, &g), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.ev[0], "message||abcd\nefg");
	/* the bound is per event: the next one starts from zero */
	assert_int_equal(mgw_sse_feed(&p, "data: 12345678\n\n", 16, on_ev, &g), 0);
	assert_int_equal(g.n, 2);
	/* many short lines add up */
	assert_int_equal(mgw_sse_feed(&p, "data: abcd\ndata: efgh\n\n", 23, on_ev, &g),
	                 MGW_ELIMIT);
	assert_int_equal(g.n, 2);
	mgw_sse_deinit(&p);
	/* so do empty data lines */
	mgw_sse_init(&p, 64, 4);
	assert_int_equal(mgw_sse_feed(&p, "data\ndata\ndata\ndata\ndata\ndata\n", 30,
	                              on_ev, &g), MGW_ELIMIT);
	mgw_sse_deinit(&p);
}

static void test_stop_from_callback(void **state)
{
	struct mgw_sse_parser p;
	struct got g;
	const char *s = "data: 1\n\ndata: 2\n\ndata: 3\n\n";

	(void)state;
	memset(&g, 0, sizeof(g));
	g.stop_at = 2;
	mgw_sse_init(&p, 0, 0);
	assert_int_equal(mgw_sse_feed(&p, s, strlen(s), on_ev, &g), 1);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.ev[1], "message||2");
	mgw_sse_deinit(&p);
}

static void test_finish_reports_partial(void **state)
{
	struct mgw_sse_parser p;
	struct got g;

	(void)state;
	memset(&g, 0, sizeof(g));
	mgw_sse_init(&p, 0, 0);
	/* a stream cut after a data line but before the blank line: the
	 * event is discarded, and finish says so */
	assert_int_equal(mgw_sse_feed(&p, "data: {\"id\":1}\n", 15, on_ev, &g), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(mgw_sse_finish(&p), 1);
	assert_int_equal(g.n, 0);
	mgw_sse_deinit(&p);
	/* a cut inside a line */
	mgw_sse_init(&p, 0, 0);
	assert_int_equal(mgw_sse_feed(&p, "data: {\"id\"", 11, on_ev, &g), 0);
	assert_int_equal(mgw_sse_finish(&p), 1);
	mgw_sse_deinit(&p);
	/* clean end */
	mgw_sse_init(&p, 0, 0);
	assert_int_equal(mgw_sse_feed(&p, "data: x\n\n: bye\n", 15, on_ev, &g), 0);
	assert_int_equal(mgw_sse_finish(&p), 0);
	assert_int_equal(g.n, 1);
	mgw_sse_deinit(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_line_ends),
	    cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_id_with_nul_ignored),
	    cmocka_unit_test(test_data_may_hold_nul),
	    cmocka_unit_test(test_split_everywhere),
	    cmocka_unit_test(test_bom_only_at_start),
	    cmocka_unit_test(test_line_limit),
	    cmocka_unit_test(test_event_limit),
	    cmocka_unit_test(test_stop_from_callback),
	    cmocka_unit_test(test_finish_reports_partial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
