/* record_test.c - unit tests for src/backend/record.c: the recorder is the
 * evidence of byte-exact forwarding in the gateway tests, so its digest,
 * header order, ring eviction and JSON shape must be right. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend/record.h"
#include "http/headers.h"

/* FIPS 180-2 test vectors. */
static void test_sha256_vectors(void **state)
{
	char hex[65];

	(void)state;
	mgw_be_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	mgw_be_sha256_hex(NULL, 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void add(struct mgw_be_record *r, const char *target,
                const struct mgw_headers *h, const char *body)
{
	struct mgw_be_record_req q = {
		.method = "POST", .target = target, .http_version = 11, .tls = 0,
		.peer = "127.0.0.1:1234", .headers = h,
		.body = (const unsigned char *)body, .body_len = body ? strlen(body) : 0,
	};

	assert_int_equal(mgw_be_record_add(r, &q), 0);
}

static void test_headers_in_order_with_duplicates(void **state)
{
	struct mgw_be_record *r = mgw_be_record_new(4);
	struct mgw_headers h;
	json_t *doc, *hs, *e;

	(void)state;
	mgw_headers_init(&h);
	mgw_headers_adds(&h, "X-B", "2");
	mgw_headers_adds(&h, "x-a", "1");
	mgw_headers_adds(&h, "X-B", "3");
	mgw_headers_add(&h, "X-Latin", 7, "caf\xe9", 4); /* obs-text, not UTF-8 */
	add(r, "/mcp?q=1", &h, "{\"a\":1}");
	mgw_headers_deinit(&h);

	doc = mgw_be_record_json(r);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "capacity")), 4);
	assert_int_equal(json_integer_value(json_object_get(doc, "total")), 1);
	e = json_array_get(json_object_get(doc, "requests"), 0);
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "method")), "POST");
	assert_string_equal(json_string_value(json_object_get(e, "target")), "/mcp?q=1");
	assert_string_equal(json_string_value(json_object_get(e, "http_version")), "1.1");
	assert_string_equal(json_string_value(json_object_get(e, "peer")), "127.0.0.1:1234");
	assert_int_equal(json_integer_value(json_object_get(e, "body_length")), 7);
	{
		char hex[65];
		mgw_be_sha256_hex("{\"a\":1}", 7, hex);
		assert_string_equal(json_string_value(json_object_get(e, "body_sha256")), hex);
	}
	hs = json_object_get(e, "headers");
	assert_int_equal(json_array_size(hs), 4);
	/* names keep their case; duplicates stay separate and in place */
	assert_string_equal(json_string_value(json_array_get(json_array_get(hs, 0), 0)), "X-B");
	assert_string_equal(json_string_value(json_array_get(json_array_get(hs, 0), 1)), "2");
	assert_string_equal(json_string_value(json_array_get(json_array_get(hs, 1), 0)), "x-a");
	assert_string_equal(json_string_value(json_array_get(json_array_get(hs, 2), 1)), "3");
	/* 0xE9 shown as U+00E9 (é) */
	assert_string_equal(json_string_value(json_array_get(json_array_get(hs, 3), 1)),
	                    "caf\xc3\xa9");
	json_decref(doc);
	mgw_be_record_free(r);
}

static void test_ring_keeps_the_last_n(void **state)
{
	struct mgw_be_record *r = mgw_be_record_new(3);
	char target[16];
	json_t *doc, *list;

	(void)state;
	for (int i = 1; i <= 7; i++) {
		snprintf(target, sizeof(target), "/t%d", i);
		add(r, target, NULL, NULL);
	}
	doc = mgw_be_record_json(r);
	assert_int_equal(json_integer_value(json_object_get(doc, "total")), 7);
	list = json_object_get(doc, "requests");
	assert_int_equal(json_array_size(list), 3);
	for (int i = 0; i < 3; i++) {
		json_t *e = json_array_get(list, (size_t)i);
		snprintf(target, sizeof(target), "/t%d", i + 5);
		assert_string_equal(json_string_value(json_object_get(e, "target")), target);
		assert_int_equal(json_integer_value(json_object_get(e, "seq")), i + 5);
		assert_int_equal(json_array_size(json_object_get(e, "headers")), 0);
		assert_int_equal(json_integer_value(json_object_get(e, "body_length")), 0);
	}
	json_decref(doc);

	/* clear forgets entries, not the count */
	mgw_be_record_clear(r);
	doc = mgw_be_record_json(r);
	assert_int_equal(json_array_size(json_object_get(doc, "requests")), 0);
	assert_int_equal(json_integer_value(json_object_get(doc, "total")), 7);
	json_decref(doc);
	add(r, "/after", NULL, "x");
	doc = mgw_be_record_json(r);
	list = json_object_get(doc, "requests");
	assert_int_equal(json_array_size(list), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "seq")), 8);
	json_decref(doc);
	mgw_be_record_free(r);
}

static void test_capacity_bounds(void **state)
{
	(void)state;
	assert_null(mgw_be_record_new(0));
	assert_null(mgw_be_record_new(MGW_BE_RECORD_MAX + 1));
	mgw_be_record_free(mgw_be_record_new(1));
	mgw_be_record_free(NULL);
}

/* A body that differs in one byte (key order, whitespace) has another
 * digest: what makes re-serialization by a proxy visible. */
static void test_digest_sees_reserialization(void **state)
{
	struct mgw_be_record *r = mgw_be_record_new(2);
	json_t *doc, *list;

	(void)state;
	add(r, "/mcp", NULL, "{\"b\":1,\"a\":2}");
	add(r, "/mcp", NULL, "{\"a\":2,\"b\":1}");
	doc = mgw_be_record_json(r);
	list = json_object_get(doc, "requests");
	assert_string_not_equal(
		json_string_value(json_object_get(json_array_get(list, 0), "body_sha256")),
		json_string_value(json_object_get(json_array_get(list, 1), "body_sha256")));
	json_decref(doc);
	mgw_be_record_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_headers_in_order_with_duplicates),
		cmocka_unit_test(test_ring_keeps_the_last_n),
		cmocka_unit_test(test_capacity_bounds),
		cmocka_unit_test(test_digest_sees_reserialization),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
