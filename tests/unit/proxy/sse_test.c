/* sse_test.c - unit tests for src/proxy/sse.c: event ids stamped with the
 * pin tag (with and without the optional space, empty ids and look-alike
 * fields untouched, any line ending, the same output however the input
 * is split), request stamps naming a POST's request id (and the
 * answered form), Last-Event-ID checked and stripped, and the JSON-RPC
 * response found among the events of a whole SSE body. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/sse.h"

/* Stamps in (whole) under tag; returns a malloc'd string. */
static char *stamp_whole(const char *in, uint32_t tag)
{
	struct mgw_sse_stamper st;
	struct evbuffer *out = evbuffer_new();
	size_t n;
	char *s;

	assert_non_null(out);
	mgw_sse_stamper_init(&st, tag);
	assert_int_equal(mgw_sse_stamp(&st, in, strlen(in), out), 0);
	assert_int_equal(mgw_sse_stamp_flush(&st, out), 0);
	n = evbuffer_get_length(out);
	s = malloc(n + 1);
	assert_non_null(s);
	evbuffer_remove(out, s, n);
	s[n] = '\0';
	evbuffer_free(out);
	return s;
}

static void expect_stamp(const char *in, const char *want)
{
	char *got = stamp_whole(in, 0xdeadbeef);

	assert_string_equal(got, want);
	free(got);
}

static void test_stamp_fields(void **state)
{
	(void)state;
	expect_stamp("id: 7\ndata: x\n\n", "id: deadbeef.7\ndata: x\n\n");
	expect_stamp("id:7\n\n", "id:deadbeef.7\n\n");
	/* an empty id resets the client's last id: left alone */
	expect_stamp("id:\n\n", "id:\n\n");
	expect_stamp("id: \n\n", "id: \n\n");
	expect_stamp("id\n\n", "id\n\n");
	/* look-alikes are other fields (or comments) */
	expect_stamp("idx: 1\nidentity: 2\n: id: 3\ndata: id: 4\n\n",
	             "idx: 1\nidentity: 2\n: id: 3\ndata: id: 4\n\n");
	/* only at the start of a line */
	expect_stamp("data: a\nid: b\n", "data: a\nid: deadbeef.b\n");
	/* CR LF and CR line ends */
	expect_stamp("id: 1\r\ndata: x\r\n\r\nid: 2\rdata: y\r\r",
	             "id: deadbeef.1\r\ndata: x\r\n\r\nid: deadbeef.2\rdata: y\r\r");
	/* a stream that ends inside a held prefix keeps its bytes */
	expect_stamp("data: x\n\nid", "data: x\n\nid");
	expect_stamp("i", "i");
	/* the tag is 8 lowercase hex digits, zero-padded */
	{
		char *got = stamp_whole("id: z\n", 0x1a);

		assert_string_equal(got, "id: 0000001a.z\n");
		free(got);
	}
}

/* Every split of the input gives the same bytes as the whole. */
static void test_stamp_split_anywhere(void **state)
{
	static const char in[] =
		": keepalive\n\nid: 41\nevent: message\ndata: {\"a\":1}\n\n"
		"id:42\r\ndata: x\r\n\r\nid\nidx: 5\nid: \n\n";
	char *whole = stamp_whole(in, 0x01020304);
	size_t n = strlen(in);

	(void)state;
	for (size_t a = 0; a <= n; a++) {
		for (size_t b = a; b <= n; b += 3) {
			struct mgw_sse_stamper st;
			struct evbuffer *out = evbuffer_new();
			size_t len;
			char *got;

			mgw_sse_stamper_init(&st, 0x01020304);
			assert_int_equal(mgw_sse_stamp(&st, in, a, out), 0);
			assert_int_equal(mgw_sse_stamp(&st, in + a, b - a, out), 0);
			assert_int_equal(mgw_sse_stamp(&st, in + b, n - b, out), 0);
			assert_int_equal(mgw_sse_stamp_flush(&st, out), 0);
			len = evbuffer_get_length(out);
			got = calloc(1, len + 1);
			evbuffer_remove(out, got, len);
			if (strcmp(got, whole) != 0)
				fail_msg("split at %zu/%zu: %s", a, b, got);
			free(got);
			evbuffer_free(out);
		}
	}
	free(whole);
}

static void test_unstamp(void **state)
{
	const char *rest = NULL;
	size_t rl = 0;

	(void)state;
	assert_int_equal(mgw_sse_unstamp("deadbeef.41", 11, 0xdeadbeef, &rest, &rl), 1);
	assert_int_equal(rl, 2);
	assert_memory_equal(rest, "41", 2);
	/* hex case does not matter; the rest is kept as it is */
	assert_int_equal(mgw_sse_unstamp("DEADBEEF.a.b", 12, 0xdeadbeef, &rest, &rl), 1);
	assert_int_equal(rl, 3);
	/* another pin, no stamp, an empty rest, junk */
	assert_int_equal(mgw_sse_unstamp("deadbeee.41", 11, 0xdeadbeef, &rest, &rl), 0);
	assert_int_equal(mgw_sse_unstamp("41", 2, 0xdeadbeef, &rest, &rl), 0);
	assert_int_equal(mgw_sse_unstamp("deadbeef.", 9, 0xdeadbeef, &rest, &rl), 0);
	assert_int_equal(mgw_sse_unstamp("deadbeefx41", 11, 0xdeadbeef, &rest, &rl), 0);
	assert_int_equal(mgw_sse_unstamp("deadbeeg.41", 11, 0xdeadbeef, &rest, &rl), 0);
	assert_int_equal(mgw_sse_unstamp(NULL, 0, 0xdeadbeef, &rest, &rl), 0);
	/* what the stamper writes, the checker accepts */
	{
		char *s = stamp_whole("id: 99\n", 0x00c0ffee);

		assert_int_equal(mgw_sse_unstamp(s + 4, strlen(s) - 5, 0x00c0ffee,
		                                 &rest, &rl), 1);
		assert_int_equal(rl, 2);
		assert_memory_equal(rest, "99", 2);
		free(s);
	}
}

/* Stamps in under tag for the request whose id is the JSON text idj. */
static char *stamp_req(const char *in, uint32_t tag, const char *idj)
{
	struct mgw_sse_stamper st;
	struct evbuffer *out = evbuffer_new();
	json_t *id = json_loads(idj, JSON_DECODE_ANY, NULL);
	size_t n;
	char *s;

	assert_non_null(out);
	assert_non_null(id);
	mgw_sse_stamper_init_req(&st, tag, id);
	json_decref(id);
	assert_int_equal(mgw_sse_stamp(&st, in, strlen(in), out), 0);
	assert_int_equal(mgw_sse_stamp_flush(&st, out), 0);
	n = evbuffer_get_length(out);
	s = malloc(n + 1);
	assert_non_null(s);
	evbuffer_remove(out, s, n);
	s[n] = '\0';
	evbuffer_free(out);
	return s;
}

static void expect_id(const struct mgw_sse_stamp_view *sv, const char *want)
{
	json_t *id = mgw_sse_stamp_request_id(sv);
	char *got;

	assert_non_null(id);
	got = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
	assert_string_equal(got, want);
	free(got);
	json_decref(id);
}

static void test_request_stamp(void **state)
{
	struct mgw_sse_stamp_view sv;
	const char *rest;
	size_t rl;
	char buf[MGW_SSE_STAMP_MAX + 2], big[200];
	json_t *id;
	char *s;

	(void)state;
	/* "call-7" is base64url ImNhbGwtNyI */
	s = stamp_req("id: 5\ndata: x\n\n", 0xdeadbeef, "\"call-7\"");
	assert_string_equal(s, "id: deadbeef-ImNhbGwtNyI.5\ndata: x\n\n");
	assert_int_equal(mgw_sse_stamp_parse(s + 4, strlen("deadbeef-ImNhbGwtNyI.5"), &sv), 1);
	assert_int_equal(sv.kind, MGW_SSE_STAMP_REQUEST);
	assert_true(sv.tag == 0xdeadbeef);
	assert_int_equal(sv.rest_len, 1);
	expect_id(&sv, "\"call-7\"");
	/* under its own pin it is passed on as the upstream's id */
	assert_int_equal(mgw_sse_unstamp("deadbeef-ImNhbGwtNyI.5", 22, 0xdeadbeef, &rest, &rl), 1);
	assert_int_equal(rl, 1);
	assert_memory_equal(rest, "5", 1);
	free(s);
	/* integer ids; an upstream id holding dots is kept whole */
	s = stamp_req("id:a.b\n", 1, "42");
	assert_string_equal(s, "id:00000001-NDI.a.b\n");
	assert_int_equal(mgw_sse_stamp_parse("00000001-NDI.a.b", 16, &sv), 1);
	expect_id(&sv, "42");
	assert_int_equal(sv.rest_len, 3);
	free(s);
	/* an id too long to carry: the plain stamp */
	memset(big, 'x', sizeof(big));
	big[0] = '"';
	big[MGW_SSE_REQ_ID_MAX] = '"';
	big[MGW_SSE_REQ_ID_MAX + 1] = '\0';
	s = stamp_req("id: 1\n", 2, big);
	assert_string_equal(s, "id: 00000002.1\n");
	free(s);
	/* the answered form: parsed, never passed on */
	id = json_string("call-7");
	assert_int_equal(mgw_sse_answered_id(0xdeadbeef, id, buf, sizeof(buf)), 22);
	assert_string_equal(buf, "deadbeef+ImNhbGwtNyI.0");
	json_decref(id);
	assert_int_equal(mgw_sse_stamp_parse(buf, 22, &sv), 1);
	assert_int_equal(sv.kind, MGW_SSE_STAMP_ANSWERED);
	expect_id(&sv, "\"call-7\"");
	assert_int_equal(mgw_sse_unstamp(buf, 22, 0xdeadbeef, &rest, &rl), 0);
	/* malformed: no id, no end of the id, no upstream id, junk in the
	 * id, an id that is not a string or integer */
	assert_int_equal(mgw_sse_stamp_parse("deadbeef-.5", 11, &sv), 0);
	assert_int_equal(mgw_sse_stamp_parse("deadbeef-ImNhbGwtNyI", 20, &sv), 0);
	assert_int_equal(mgw_sse_stamp_parse("deadbeef-ImNhbGwtNyI.", 21, &sv), 0);
	assert_int_equal(mgw_sse_stamp_parse("deadbeef-!!.5", 13, &sv), 1);
	assert_null(mgw_sse_stamp_request_id(&sv));
	/* "[1]" is WzFd */
	assert_int_equal(mgw_sse_stamp_parse("deadbeef-WzFd.5", 15, &sv), 1);
	assert_null(mgw_sse_stamp_request_id(&sv));
	assert_int_equal(mgw_sse_stamp_parse("deadbeef*WzFd.5", 15, &sv), 0);
}

static void test_find_response(void **state)
{
	static const char body[] =
		": comment\n\n"
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
		"id: 3\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{\"x\":true}}\r\n\r\n";
	json_t *r;

	(void)state;
	r = mgw_sse_find_response(body, strlen(body), 0);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
	assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "x")));
	json_decref(r);
	/* no blank line after the last event: still found */
	{
		static const char tail[] = "data:{\"jsonrpc\":\"2.0\",\"id\":\"a\","
		                           "\"error\":{\"code\":1,\"message\":\"m\"}}";

		r = mgw_sse_find_response(tail, strlen(tail), 0);
	}
	assert_non_null(r);
	json_decref(r);
	/* only notifications, or nothing parsable */
	{
		static const char note[] = "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n";

		r = mgw_sse_find_response(note, strlen(note), 0);
	}
	assert_null(r);
	r = mgw_sse_find_response("data: {\n\n", 9, 0);
	assert_null(r);
	r = mgw_sse_find_response("", 0, 0);
	assert_null(r);
	/* the plain JSON flavour */
	{
		static const char res[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
		static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}";

		r = mgw_sse_body_response(res, strlen(res), 0, 0);
		assert_non_null(r);
		json_decref(r);
		r = mgw_sse_body_response(req, strlen(req), 0, 0);
	}
	assert_null(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stamp_fields),
		cmocka_unit_test(test_stamp_split_anywhere),
		cmocka_unit_test(test_unstamp),
		cmocka_unit_test(test_request_stamp),
		cmocka_unit_test(test_find_response),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
