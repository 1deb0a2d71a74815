/* chunked_test.c - the strict chunked decoder (src/http/chunked.c): valid
 * bodies decode identically however the bytes are split, the body ends
 * exactly after its final CRLF, the consumer can stop it, and every
 * framing leniency that could let two parsers disagree is refused. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/chunked.h"

struct sink {
	unsigned char buf[16384];
	size_t len;
	int spans;
	int stop_every;   /* > 0: ask to stop after every span */
	int fail_with;    /* < 0: return it from the callback */
};

static int on_data(void *arg, const unsigned char *p, size_t n)
{
	struct sink *s = arg;

	assert_true(n > 0);
	assert_true(s->len + n <= sizeof(s->buf));
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->spans++;
	if (s->fail_with)
		return s->fail_with;
	return s->stop_every ? 1 : 0;
}

/* Feeds in[0..len) in pieces of at most step bytes (0: one piece),
 * resuming after stops, until the body ends, an error, or the input is
 * used up.  Returns the last rc; *consumed is the total used. */
static int feed_all(struct mgw_chunked *ck, const char *in, size_t len,
                    size_t step, struct sink *s, size_t *consumed)
{
	size_t off = 0;
	int guard = 100000;

	while (off < len && !mgw_chunked_done(ck) && guard--) {
		size_t n = step && len - off > step ? step : len - off;
		size_t used;
		int rc = mgw_chunked_feed(ck, in + off, n, &used, on_data, s);

		assert_true(used <= n);
		off += used;
		if (rc) {
			*consumed = off;
			return rc;
		}
		if (used < n && !mgw_chunked_done(ck))
			assert_true(s->stop_every); /* only a stop leaves bytes */
	}
	assert_true(guard > 0);
	*consumed = off;
	return 0;
}

/* The whole input split in two at every position, and fed byte by byte:
 * the same data, the same end. */
static void expect_valid(const char *in, size_t len, const char *want,
                         size_t wlen, size_t body_len)
{
	for (size_t cut = 0; cut <= len; cut++) {
		struct mgw_chunked ck;
		struct sink s = {.len = 0};
		size_t u1 = 0, u2 = 0;
		int rc;

		mgw_chunked_init(&ck, 1024);
		rc = feed_all(&ck, in, cut, 0, &s, &u1);
		assert_int_equal(rc, 0);
		if (!mgw_chunked_done(&ck)) {
			assert_int_equal(u1, cut);
			rc = feed_all(&ck, in + cut, len - cut, 0, &s, &u2);
			assert_int_equal(rc, 0);
		}
		if (!mgw_chunked_done(&ck))
			fail_msg("cut %zu: body did not end", cut);
		assert_int_equal(u1 + u2, body_len);
		assert_int_equal(s.len, wlen);
		assert_memory_equal(s.buf, want, wlen);
		assert_null(mgw_chunked_error(&ck));
	}
	{
		struct mgw_chunked ck;
		struct sink s = {.len = 0};
		size_t used;

		mgw_chunked_init(&ck, 1024);
		assert_int_equal(feed_all(&ck, in, len, 1, &s, &used), 0);
		assert_true(mgw_chunked_done(&ck));
		assert_int_equal(used, body_len);
		assert_int_equal(s.len, wlen);
		assert_memory_equal(s.buf, want, wlen);
	}
}

/* in is a whole body, nothing after it */
#define VALID(in, want) \
	expect_valid(in, sizeof(in) - 1, want, sizeof(want) - 1, sizeof(in) - 1)

static void test_valid_bodies(void **state)
{
	(void)state;
	VALID("0\r\n\r\n", "");
	VALID("5\r\nhello\r\n0\r\n\r\n", "hello");
	VALID("5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n", "hello, world");
	VALID("a\r\n0123456789\r\nA\r\nabcdefghij\r\n0\r\n\r\n",
	      "0123456789abcdefghij");
	VALID("00000000000002\r\nok\r\n000\r\n\r\n", "ok");
	/* binary data is data, CRLFs inside it included */
	VALID("4\r\n\r\n\0\xff\r\n0\r\n\r\n", "\r\n\0\xff");
}

/* Bytes after the final CRLF are not consumed: they belong to the next
 * pipelined message. */
static void test_stops_at_end(void **state)
{
	static const char in[] = "2\r\nok\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n";
	(void)state;

	expect_valid(in, sizeof(in) - 1, "ok", 2, 12);
	/* and a finished decoder takes nothing more */
	{
		struct mgw_chunked ck;
		struct sink s = {.len = 0};
		size_t used;

		mgw_chunked_init(&ck, 64);
		assert_int_equal(mgw_chunked_feed(&ck, in, sizeof(in) - 1, &used,
		                                  on_data, &s), 0);
		assert_int_equal(used, 12);
		assert_int_equal(mgw_chunked_feed(&ck, in + 12, 3, &used,
		                                  on_data, &s), 0);
		assert_int_equal(used, 0);
		assert_true(mgw_chunked_done(&ck));
	}
}

static void test_extensions(void **state)
{
	(void)state;
	VALID("3;a=b\r\nabc\r\n0\r\n\r\n", "abc");
	VALID("3;a=b;c=\"q;x y\"\r\nabc\r\n0;last\r\n\r\n", "abc");
	VALID("3 ;a\r\nabc\r\n0\t ; z\r\n\r\n", "abc");
	VALID("3;\xc3\xa9=\x80\r\nabc\r\n0\r\n\r\n", "abc");
	VALID("3;a\tb\r\nabc\r\n0\r\n\r\n", "abc");
}

static void test_trailers(void **state)
{
	(void)state;
	VALID("2\r\nok\r\n0\r\nX-Trailer: t\r\n\r\n", "ok");
	VALID("2\r\nok\r\n0\r\nA: 1\r\nB:\r\nC:\tx y \xff\r\n\r\n", "ok");
	VALID("0\r\n!#$%&'*+-.^_`|~09az:v\r\n\r\n", "");
}

/* Each input must fail with err before the body ends, and no data byte
 * after the offending position may have been delivered. */
struct bad {
	const char *in;
	size_t len;
	int err;
	size_t max_trailer;
};

#define BAD(s) {s, sizeof(s) - 1, MGW_EPROTO, 1024}

static void expect_bad(const struct bad *b, size_t step)
{
	struct mgw_chunked ck;
	struct sink s = {.len = 0};
	size_t used, again;
	int rc;

	mgw_chunked_init(&ck, b->max_trailer);
	rc = feed_all(&ck, b->in, b->len, step, &s, &used);
	if (rc != b->err)
		fail_msg("input %s (step %zu): rc %d, want %d (used %zu, done %d)",
		         b->in, step, rc, b->err, used, mgw_chunked_done(&ck));
	assert_false(mgw_chunked_done(&ck));
	assert_non_null(mgw_chunked_error(&ck));
	assert_true(used < b->len);
	assert_true(s.len <= used);
	/* a failed decoder stays failed */
	rc = mgw_chunked_feed(&ck, "0\r\n\r\n", 5, &again, on_data, &s);
	assert_int_equal(rc, b->err);
	assert_int_equal(again, 0);
}

static void test_malformed(void **state)
{
	static char long_ext[MGW_CHUNKED_MAX_EXT + 64];
	static const struct bad bad[] = {
		/* chunk data not followed by exactly CRLF: the smuggling case
		 * http-parser's non-strict build lets through */
		BAD("2\r\nokXX0\r\n\r\n"),
		BAD("2\r\nok\n0\r\n\r\n"),
		BAD("2\r\nok\r\r0\r\n\r\n"),
		BAD("2\r\nok\r0\r\n\r\n"),
		BAD("2\r\nok0\r\n\r\n"),
		BAD("2\r\nokX\r\n0\r\n\r\n"),
		BAD("2\r\nokX\n0\r\n\r\n"),
		BAD("2\r\nok\n\n0\r\n\r\n"),
		BAD("2\r\nok\n\r\n0\r\n\r\n"),
		/* size line */
		BAD("2\nok\r\n0\r\n\r\n"),
		BAD("2\r\rok\r\n0\r\n\r\n"),
		BAD("\r\nok\r\n0\r\n\r\n"),
		BAD(";x\r\nok\r\n0\r\n\r\n"),
		BAD(" 2\r\nok\r\n0\r\n\r\n"),
		BAD("\t2\r\nok\r\n0\r\n\r\n"),
		BAD("0x2\r\nok\r\n0\r\n\r\n"),
		BAD("-2\r\nok\r\n0\r\n\r\n"),
		BAD("+2\r\nok\r\n0\r\n\r\n"),
		BAD("2x\r\nok\r\n0\r\n\r\n"),
		BAD("2 \r\nok\r\n0\r\n\r\n"),
		BAD("2 x\r\nok\r\n0\r\n\r\n"),
		BAD("zz\r\nok\r\n0\r\n\r\n"),
		BAD("0\n\r\n"),
		BAD("0\r\r\n\r\n"),
		/* 16 and more hex digits, even when the value is small */
		BAD("0000000000000002\r\nok\r\n0\r\n\r\n"),
		BAD("FFFFFFFFFFFFFFFF\r\n"),
		BAD("10000000000000000\r\n"),
		BAD("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF1\r\nx\r\n"),
		/* control bytes in an extension */
		BAD("2;a\x01\r\nok\r\n0\r\n\r\n"),
		BAD("2;a\nb\r\nok\r\n0\r\n\r\n"),
		BAD("2;a\x7f\r\nok\r\n0\r\n\r\n"),
		BAD("2;a\0b\r\nok\r\n0\r\n\r\n"),
		BAD("2;a\rb\r\nok\r\n0\r\n\r\n"),
		/* trailer section */
		BAD("0\r\n X: 1\r\n\r\n"),
		BAD("0\r\nA: 1\r\n\tcont\r\n\r\n"),
		BAD("0\r\nA: 1\r\n cont\r\n\r\n"),
		BAD("0\r\nNoColon\r\n\r\n"),
		BAD("0\r\nA B: 1\r\n\r\n"),
		BAD("0\r\nA : 1\r\n\r\n"),
		BAD("0\r\n: v\r\n\r\n"),
		BAD("0\r\nA: \x01\r\n\r\n"),
		BAD("0\r\nA: 1\n\r\n"),
		BAD("0\r\nA: 1\r\r\n"),
		BAD("0\r\nA: 1\rx\r\n\r\n"),
		BAD("0\r\n\n"),
		BAD("0\r\n\rX"),
		BAD("0\r\n\r\r"),
		/* trailer section over its limit */
		{"0\r\nX-Long: 0123456789\r\n\r\n", 25, MGW_ELIMIT, 16},
		{"0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 24, MGW_ELIMIT, 11},
	};
	struct bad ext = {long_ext, 0, MGW_EPROTO, 1024};
	size_t n;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_bad(&bad[i], 0);
		expect_bad(&bad[i], 1);
	}
	/* an extension over its bound */
	n = (size_t)snprintf(long_ext, sizeof(long_ext), "1;");
	memset(long_ext + n, 'e', MGW_CHUNKED_MAX_EXT);
	n += MGW_CHUNKED_MAX_EXT;
	memcpy(long_ext + n, "\r\nx\r\n0\r\n\r\n", 10);
	ext.len = n + 10;
	expect_bad(&ext, 0);
	expect_bad(&ext, 7);
}

/* A continuation line is reported as what it is. */
static void test_obs_fold_named(void **state)
{
	static const char *const in[] = {"0\r\nA: 1\r\n two\r\n\r\n",
	                                 "0\r\nA: 1\r\n\ttwo\r\n\r\n"};
	(void)state;

	for (size_t i = 0; i < 2; i++) {
		struct mgw_chunked ck;
		struct sink s = {.len = 0};
		size_t used;

		mgw_chunked_init(&ck, 64);
		assert_int_equal(feed_all(&ck, in[i], strlen(in[i]), 0, &s, &used),
		                 MGW_EPROTO);
		assert_int_equal(used, 9); /* up to the blank */
		assert_non_null(strstr(mgw_chunked_error(&ck), "obs-fold"));
	}
}

/* Limits are inclusive: exactly at them is accepted. */
static void test_at_limits(void **state)
{
	static char ext[MGW_CHUNKED_MAX_EXT + 64];
	struct mgw_chunked ck;
	struct sink s = {.len = 0};
	size_t used, n;
	(void)state;

	/* trailer bytes: "A: 1" and "B: 2" are 8 bytes */
	mgw_chunked_init(&ck, 8);
	assert_int_equal(feed_all(&ck, "0\r\nA: 1\r\nB: 2\r\n\r\n", 17, 0, &s, &used), 0);
	assert_true(mgw_chunked_done(&ck));
	assert_int_equal(used, 17);

	/* extension bytes after the size: ';' plus MAX_EXT - 1 */
	n = (size_t)snprintf(ext, sizeof(ext), "1;");
	memset(ext + n, 'e', MGW_CHUNKED_MAX_EXT - 1);
	n += MGW_CHUNKED_MAX_EXT - 1;
	memcpy(ext + n, "\r\nx\r\n0\r\n\r\n", 10);
	n += 10;
	mgw_chunked_init(&ck, 8);
	s.len = 0;
	assert_int_equal(feed_all(&ck, ext, n, 0, &s, &used), 0);
	assert_true(mgw_chunked_done(&ck));
	assert_int_equal(s.len, 1);

	/* 15 hex digits: the largest size line, and a body it leaves open */
	mgw_chunked_init(&ck, 8);
	s.len = 0;
	assert_int_equal(feed_all(&ck, "FFFFFFFFFFFFFFF\r\nabc", 20, 0, &s, &used), 0);
	assert_false(mgw_chunked_done(&ck));
	assert_int_equal(used, 20);
	assert_int_equal(ck.left, 0xFFFFFFFFFFFFFFFULL - 3);
	assert_int_equal(s.len, 3);
}

/* A consumer that pauses after every span gets the same bytes; the
 * decoder resumes where it stopped. */
static void test_consumer_stops(void **state)
{
	static const char in[] = "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\nNEXT";
	struct mgw_chunked ck;
	struct sink s = {.len = 0, .stop_every = 1};
	size_t used, total = 0;
	int calls = 0;
	(void)state;

	mgw_chunked_init(&ck, 64);
	while (!mgw_chunked_done(&ck) && calls++ < 10) {
		int before = s.spans;
		assert_int_equal(mgw_chunked_feed(&ck, in + total,
		                                  sizeof(in) - 1 - total, &used,
		                                  on_data, &s), 0);
		total += used;
		/* each call stops right after the span it delivered */
		if (s.spans > before)
			assert_memory_equal(in + total - (s.spans == 1 ? 3 : 4),
			                    s.spans == 1 ? "abc" : "defg",
			                    s.spans == 1 ? 3 : 4);
	}
	assert_true(mgw_chunked_done(&ck));
	assert_int_equal(s.spans, 2);
	assert_int_equal(s.len, 7);
	assert_memory_equal(s.buf, "abcdefg", 7);
	assert_int_equal(total, sizeof(in) - 1 - 4);
}

/* A consumer's error comes back unchanged, after its span was counted. */
static void test_consumer_error(void **state)
{
	struct mgw_chunked ck;
	struct sink s = {.len = 0, .fail_with = MGW_ELIMIT};
	size_t used;
	(void)state;

	mgw_chunked_init(&ck, 64);
	assert_int_equal(mgw_chunked_feed(&ck, "3\r\nabc\r\n0\r\n\r\n", 13, &used,
	                                  on_data, &s), MGW_ELIMIT);
	assert_int_equal(used, 6);
	assert_int_equal(s.len, 3);
	assert_false(mgw_chunked_done(&ck));
	assert_null(mgw_chunked_error(&ck));
}

/* mgw_chunked_declared: the announced bytes of the chunk being read, from
 * the first size digit (a lower bound that only grows) through its data;
 * 0 between chunks and in the trailer. */
static void test_declared(void **state)
{
	static const struct { const char *in; uint64_t want; } cases[] = {
		{ "", 0 },
		{ "1", 1 },
		{ "1f", 0x1f },
		{ "1f4", 0x1f4 },
		{ "1f4 ", 0x1f4 },
		{ "1f4;x=y", 0x1f4 },
		{ "1f4\r", 0x1f4 },
		{ "1f4\r\n", 0x1f4 },
		{ "1f4\r\nabc", 0x1f4 - 3 },
		{ "3\r\nabc", 0 },
		{ "3\r\nabc\r\n", 0 },
		{ "3\r\nabc\r\nFFFFFFFFFFFFFFF", 0xFFFFFFFFFFFFFFFull },
		{ "0\r\n", 0 },
		{ "0\r\nX-T: 1", 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mgw_chunked ck;
		struct sink s = {.len = 0};
		size_t used;

		mgw_chunked_init(&ck, 1024);
		assert_int_equal(feed_all(&ck, cases[i].in, strlen(cases[i].in), 0,
		                          &s, &used), 0);
		if (mgw_chunked_declared(&ck) != cases[i].want)
			print_error("declared after \"%s\"\n", cases[i].in);
		assert_true(mgw_chunked_declared(&ck) == cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_bodies),
		cmocka_unit_test(test_declared),
		cmocka_unit_test(test_stops_at_end),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_trailers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_obs_fold_named),
		cmocka_unit_test(test_at_limits),
		cmocka_unit_test(test_consumer_stops),
		cmocka_unit_test(test_consumer_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
