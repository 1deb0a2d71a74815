/* h1_scan_test.c - the strict HTTP/1 head scanner and field assembly
 * (src/http/h1_scan.c): heads end exactly after their empty line however
 * the bytes are split, every leniency http-parser would let through is
 * refused, the byte cap holds, and assembled fields are trimmed and
 * validated. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/h1_head.h"
#include "http/h1_scan.h"
#include "http/headers.h"

/* Scans in[0..len) in pieces of at most step bytes (0: one piece) until
 * the head ends or fails.  *fed counts the bytes that belong to it. */
static int scan_all(struct mgw_h1_scan *s, const char *in, size_t len,
                    size_t step, size_t *fed)
{
	size_t off = 0;

	*fed = 0;
	while (off < len && s->in_head) {
		size_t n = step && len - off > step ? step : len - off;
		size_t feed = 0;
		int rc = mgw_h1_scan_feed(s, (const unsigned char *)in + off, n,
		                          &feed);

		if (rc)
			return rc;
		assert_true(feed <= n);
		*fed += feed;
		off += n;
	}
	return 0;
}

static int scan_str(const char *in, size_t cap, int lead, size_t step,
                    size_t *fed, int *ended)
{
	struct mgw_h1_scan s;
	int rc;

	mgw_h1_scan_reset(&s, cap, lead);
	rc = scan_all(&s, in, strlen(in), step, fed);
	*ended = !s.in_head;
	return rc;
}

static void test_head_ends(void **state)
{
	static const char head[] = "GET / HTTP/1.1\r\nHost: a\r\nX: \tb\r\n\r\n";
	static const char more[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\nNEXT";
	size_t fed;
	int ended;
	(void)state;

	for (size_t step = 0; step < 8; step++) {
		assert_int_equal(scan_str(head, 1024, 1, step, &fed, &ended), 0);
		assert_true(ended);
		assert_int_equal(fed, strlen(head));
		assert_int_equal(scan_str(more, 1024, 0, step, &fed, &ended), 0);
		assert_true(ended);
		assert_int_equal(fed, strlen(more) - 4);
	}
	/* a head still going on: every byte belongs to it */
	assert_int_equal(scan_str("HTTP/1.1 200 OK\r\nA: b", 1024, 0, 0, &fed,
	                          &ended), 0);
	assert_false(ended);
	assert_int_equal(fed, 21);
}

static void test_leading_empty_lines(void **state)
{
	size_t fed;
	int ended;
	(void)state;

	/* requests: skipped (RFC 9112 §2.2) */
	assert_int_equal(scan_str("\r\n\r\nGET / HTTP/1.1\r\n\r\n", 1024, 1, 0,
	                          &fed, &ended), 0);
	assert_true(ended);
	assert_int_equal(fed, 22);
	/* responses: refused */
	assert_int_equal(scan_str("\r\nHTTP/1.1 200 OK\r\n\r\n", 1024, 0, 0, &fed,
	                          &ended), MGW_EPROTO);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
	    "GET / HTTP/1.1\nHost: a\r\n\r\n",        /* bare LF */
	    "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",   /* bare CR */
	    "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n",/* obs-fold, SP */
	    "GET / HTTP/1.1\r\nHost: a\r\n\tb\r\n\r\n",/* obs-fold, HTAB */
	    " GET / HTTP/1.1\r\n\r\n",                /* blank start line */
	    "GET / HTTP/1.1\r\nX: a\001b\r\n\r\n",    /* control byte */
	    "GET / HTTP/1.1\r\nX: a\177\r\n\r\n",     /* DEL */
	};
	/* NUL, fed by length */
	static const char nul[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
	struct mgw_h1_scan s;
	size_t fed;
	int ended;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (size_t step = 0; step < 4; step++)
			assert_int_equal(scan_str(bad[i], 1024, 1, step, &fed, &ended),
			                 MGW_EPROTO);
	mgw_h1_scan_reset(&s, 1024, 1);
	assert_int_equal(scan_all(&s, nul, sizeof(nul) - 1, 0, &fed), MGW_EPROTO);
}

static void test_cap(void **state)
{
	static const char head[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	size_t len = strlen(head), fed;
	int ended;
	(void)state;

	for (size_t step = 0; step < 4; step++) {
		assert_int_equal(scan_str(head, len, 1, step, &fed, &ended), 0);
		assert_true(ended);
		assert_int_equal(scan_str(head, len - 1, 1, step, &fed, &ended),
		                 MGW_ELIMIT);
		/* the cap counts runs of ordinary bytes too */
		assert_int_equal(scan_str(head, 5, 1, step, &fed, &ended),
		                 MGW_ELIMIT);
	}
}

static void test_reset_reuses(void **state)
{
	struct mgw_h1_scan s;
	size_t fed;
	(void)state;

	mgw_h1_scan_reset(&s, 64, 0);
	assert_int_equal(scan_all(&s, "HTTP/1.1 100 Continue\r\n\r\n", 25, 0,
	                          &fed), 0);
	assert_false(s.in_head);
	mgw_h1_scan_reset(&s, 64, 0);
	assert_true(s.in_head);
	assert_int_equal(s.bytes, 0);
	assert_int_equal(scan_all(&s, "HTTP/1.1 200 OK\r\n\r\n", 19, 0, &fed), 0);
	assert_false(s.in_head);
	assert_int_equal(fed, 19);
}

static void test_buf_append(void **state)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char big[300];
	(void)state;

	assert_int_equal(mgw_h1_buf_append(&buf, &len, &cap, "ab", 2), 0);
	assert_string_equal(buf, "ab");
	assert_int_equal(mgw_h1_buf_append(&buf, &len, &cap, "", 0), 0);
	assert_int_equal(len, 2);
	memset(big, 'x', sizeof(big));
	assert_int_equal(mgw_h1_buf_append(&buf, &len, &cap, big, sizeof(big)),
	                 0);
	assert_int_equal(len, 302);
	assert_true(cap > len);
	assert_int_equal(buf[len], '\0');
	assert_int_equal(buf[1], 'b');
	assert_int_equal(buf[2], 'x');
	free(buf);
}

/* The reader of a scanned head (h1_head.c): lines, the request line,
 * field lines split at the colon, status lines. */
static void test_head_reader(void **state)
{
	static const char head[] = "\r\nPOST /m?q HTTP/1.0\r\n"
	                           "Content-Type: \t text/plain \t\r\n"
	                           "X-Empty:\r\n\r\n";
	struct mgw_h1_lines it;
	struct mgw_h1_reqline rl;
	const char *line = NULL, *n, *v;
	size_t len = 0, nl, vl;
	int major, minor, status;
	(void)state;

	mgw_h1_lines_init(&it, head, sizeof(head) - 1);
	assert_int_equal(mgw_h1_request_line(&it, &rl), 0);
	assert_int_equal(rl.method_len, 4);
	assert_memory_equal(rl.method, "POST", 4);
	assert_int_equal(rl.target_len, 4);
	assert_memory_equal(rl.target, "/m?q", 4);
	assert_int_equal(rl.major, 1);
	assert_int_equal(rl.minor, 0);
	assert_int_equal(mgw_h1_next_line(&it, &line, &len), 1);
	assert_int_equal(mgw_h1_split_field(line, len, &n, &nl, &v, &vl), 0);
	assert_int_equal(nl, 12);
	assert_memory_equal(n, "Content-Type", 12);
	assert_int_equal(vl, 10);
	assert_memory_equal(v, "text/plain", 10);
	assert_int_equal(mgw_h1_next_line(&it, &line, &len), 1);
	assert_int_equal(mgw_h1_split_field(line, len, &n, &nl, &v, &vl), 0);
	assert_int_equal(vl, 0); /* an empty value is valid */
	assert_int_equal(mgw_h1_next_line(&it, &line, &len), 1);
	assert_int_equal(len, 0); /* the empty line that ends the head */
	assert_int_equal(mgw_h1_next_line(&it, &line, &len), 0);

	/* a space in the name or before the colon, no name, no colon */
	assert_int_equal(mgw_h1_split_field("X Y: a", 6, &n, &nl, &v, &vl), MGW_EPROTO);
	assert_int_equal(mgw_h1_split_field("X : a", 5, &n, &nl, &v, &vl), MGW_EPROTO);
	assert_int_equal(mgw_h1_split_field(": a", 3, &n, &nl, &v, &vl), MGW_EPROTO);
	assert_int_equal(mgw_h1_split_field("X-A", 3, &n, &nl, &v, &vl), MGW_EPROTO);

	mgw_h1_lines_init(&it, "HTTP/1.1 204\r\n\r\n", 16);
	assert_int_equal(mgw_h1_status_line(&it, &major, &minor, &status), 0);
	assert_int_equal(status, 204);
	assert_int_equal(minor, 1);
	mgw_h1_lines_init(&it, "HTTP/1.1 404 Not Found\r\n", 24);
	assert_int_equal(mgw_h1_status_line(&it, &major, &minor, &status), 0);
	assert_int_equal(status, 404);
	mgw_h1_lines_init(&it, "HTTP/1.1 20 OK\r\n", 16);
	assert_int_equal(mgw_h1_status_line(&it, &major, &minor, &status), MGW_EPROTO);
	mgw_h1_lines_init(&it, "HTTP/1.1 2000\r\n", 15);
	assert_int_equal(mgw_h1_status_line(&it, &major, &minor, &status), MGW_EPROTO);
}

/* The field lines of a scanned head into a list (mgw_h1_take_fields):
 * copied once, each name and value NUL-terminated in the copy, the list
 * marked checked; the byte and count limits, and a line that is no
 * field. */
static void test_take_fields(void **state)
{
	static const char head[] = "GET / HTTP/1.1\r\n"
	                           "Host: h \t\r\n"
	                           "X-Empty:\r\n"
	                           "Accept:a, b\r\n\r\n";
	char buf[sizeof(head)];
	struct mgw_h1_lines it;
	struct mgw_h1_reqline rl;
	struct mgw_headers h;
	struct mgw_h1_fields lim = {.max_bytes = 100, .max_fields = 10};
	(void)state;

	memcpy(buf, head, sizeof(head));
	mgw_headers_init(&h);
	mgw_h1_lines_init(&it, buf, sizeof(head) - 1);
	assert_int_equal(mgw_h1_request_line(&it, &rl), 0);
	assert_int_equal(mgw_h1_take_fields(&it, &h, &lim), 0);
	assert_int_equal(h.n, 3);
	assert_true(h.checked);
	assert_string_equal(h.v[0].name, "Host");
	assert_string_equal(h.v[0].value, "h");
	assert_string_equal(h.v[1].name, "X-Empty");
	assert_string_equal(h.v[1].value, "");
	assert_string_equal(h.v[2].name, "Accept");
	assert_string_equal(h.v[2].value, "a, b");
	assert_int_equal(h.v[2].value_len, 4);
	assert_int_equal(lim.bytes, 4 + 1 + 7 + 6 + 4);
	/* the caller's buffer is not written: the list has its own copy */
	assert_memory_equal(buf, head, sizeof(head));
	assert_true(it.p == it.end);
	/* an addition that is not checked clears the mark */
	assert_int_equal(mgw_headers_adds(&h, "X-Mine", "v"), 0);
	assert_false(h.checked);
	mgw_headers_deinit(&h);

	/* over the bytes, over the count, not a field */
	lim = (struct mgw_h1_fields){.max_bytes = 20, .max_fields = 10};
	mgw_h1_lines_init(&it, buf, sizeof(head) - 1);
	assert_int_equal(mgw_h1_request_line(&it, &rl), 0);
	assert_int_equal(mgw_h1_take_fields(&it, &h, &lim), MGW_ELIMIT);
	assert_false(lim.too_many);
	mgw_headers_deinit(&h);
	lim = (struct mgw_h1_fields){.max_bytes = 100, .max_fields = 2};
	mgw_h1_lines_init(&it, buf, sizeof(head) - 1);
	assert_int_equal(mgw_h1_request_line(&it, &rl), 0);
	assert_int_equal(mgw_h1_take_fields(&it, &h, &lim), MGW_ELIMIT);
	assert_true(lim.too_many);
	mgw_headers_deinit(&h);
	lim = (struct mgw_h1_fields){.max_bytes = 100, .max_fields = 10};
	mgw_h1_lines_init(&it, "X-A: 1\r\nX B: 2\r\n\r\n", 19);
	assert_int_equal(mgw_h1_take_fields(&it, &h, &lim), MGW_EPROTO);
	mgw_headers_deinit(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_ends),
		cmocka_unit_test(test_leading_empty_lines),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_reset_reuses),
		cmocka_unit_test(test_buf_append),
		cmocka_unit_test(test_head_reader),
		cmocka_unit_test(test_take_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
