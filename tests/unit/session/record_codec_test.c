/* record_codec_test.c - unit tests for src/session/record_codec.c: the
 * session-record codec of the sealed (core layout) and Redis (full
 * layout) stores.  The byte vectors below were written by the encoders
 * the two stores had before they shared this codec (store_sealed.c's
 * plaintext serializer and redis_store.c's record encoder at 1b0fdac):
 * sealed tokens and Redis values already out there must keep decoding,
 * and records must keep encoding to the same bytes. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "session/record_codec.h"
#include "session/session.h"

/* created 1767225600, expires 1767229200, pin_gen 2, pinned to
 * http://10.0.0.7:8080/mcp / up-42, protocol 2025-11-25, replay headers
 * MCP-Protocol-Version: 2025-11-25 and X-Empty: (empty), an initialize
 * body with a byte that is not UTF-8; full only: bound to
 * SHA-256("Bearer t"), the canonical initialized body, tools add, echo. */
static const unsigned char core_rich[] = {
	0x01, 0x00, 0x00, 0x00, 0x00, 0x69, 0x55, 0xb9, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x69, 0x55, 0xc7, 0x10, 0x00, 0x00, 0x00, 0x02, 0x00, 0x18, 0x68,
	0x74, 0x74, 0x70, 0x3a, 0x2f, 0x2f, 0x31, 0x30, 0x2e, 0x30, 0x2e, 0x30,
	0x2e, 0x37, 0x3a, 0x38, 0x30, 0x38, 0x30, 0x2f, 0x6d, 0x63, 0x70, 0x00,
	0x05, 0x75, 0x70, 0x2d, 0x34, 0x32, 0x0a, 0x32, 0x30, 0x32, 0x35, 0x2d,
	0x31, 0x31, 0x2d, 0x32, 0x35, 0x02, 0x14, 0x4d, 0x43, 0x50, 0x2d, 0x50,
	0x72, 0x6f, 0x74, 0x6f, 0x63, 0x6f, 0x6c, 0x2d, 0x56, 0x65, 0x72, 0x73,
	0x69, 0x6f, 0x6e, 0x00, 0x0a, 0x32, 0x30, 0x32, 0x35, 0x2d, 0x31, 0x31,
	0x2d, 0x32, 0x35, 0x07, 0x58, 0x2d, 0x45, 0x6d, 0x70, 0x74, 0x79, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x41, 0x7b, 0x22, 0x6a, 0x73, 0x6f, 0x6e, 0x72,
	0x70, 0x63, 0x22, 0x3a, 0x22, 0x32, 0x2e, 0x30, 0x22, 0x2c, 0x22, 0x69,
	0x64, 0x22, 0x3a, 0x31, 0x2c, 0x22, 0x6d, 0x65, 0x74, 0x68, 0x6f, 0x64,
	0x22, 0x3a, 0x22, 0x69, 0x6e, 0x69, 0x74, 0x69, 0x61, 0x6c, 0x69, 0x7a,
	0x65, 0x22, 0x2c, 0x22, 0x70, 0x61, 0x72, 0x61, 0x6d, 0x73, 0x22, 0x3a,
	0x7b, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x7d,
};
static const unsigned char full_rich[] = {
	0x01, 0x00, 0x00, 0x00, 0x00, 0x69, 0x55, 0xb9, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x69, 0x55, 0xc7, 0x10, 0x00, 0x00, 0x00, 0x02, 0x03, 0x63, 0xa2,
	0x5a, 0x26, 0x46, 0x4c, 0x31, 0x0e, 0x30, 0xf3, 0xe4, 0xf9, 0x0b, 0x7f,
	0x21, 0x53, 0xa2, 0xaa, 0xc6, 0xe2, 0x36, 0xfd, 0x9d, 0x9e, 0x87, 0x82,
	0xbd, 0x41, 0x39, 0xdf, 0x0c, 0x26, 0x00, 0x18, 0x68, 0x74, 0x74, 0x70,
	0x3a, 0x2f, 0x2f, 0x31, 0x30, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x37, 0x3a,
	0x38, 0x30, 0x38, 0x30, 0x2f, 0x6d, 0x63, 0x70, 0x00, 0x05, 0x75, 0x70,
	0x2d, 0x34, 0x32, 0x0a, 0x32, 0x30, 0x32, 0x35, 0x2d, 0x31, 0x31, 0x2d,
	0x32, 0x35, 0x02, 0x14, 0x4d, 0x43, 0x50, 0x2d, 0x50, 0x72, 0x6f, 0x74,
	0x6f, 0x63, 0x6f, 0x6c, 0x2d, 0x56, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e,
	0x00, 0x0a, 0x32, 0x30, 0x32, 0x35, 0x2d, 0x31, 0x31, 0x2d, 0x32, 0x35,
	0x07, 0x58, 0x2d, 0x45, 0x6d, 0x70, 0x74, 0x79, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x41, 0x7b, 0x22, 0x6a, 0x73, 0x6f, 0x6e, 0x72, 0x70, 0x63, 0x22,
	0x3a, 0x22, 0x32, 0x2e, 0x30, 0x22, 0x2c, 0x22, 0x69, 0x64, 0x22, 0x3a,
	0x31, 0x2c, 0x22, 0x6d, 0x65, 0x74, 0x68, 0x6f, 0x64, 0x22, 0x3a, 0x22,
	0x69, 0x6e, 0x69, 0x74, 0x69, 0x61, 0x6c, 0x69, 0x7a, 0x65, 0x22, 0x2c,
	0x22, 0x70, 0x61, 0x72, 0x61, 0x6d, 0x73, 0x22, 0x3a, 0x7b, 0x22, 0x78,
	0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x7d, 0x00, 0x36, 0x7b, 0x22, 0x6a,
	0x73, 0x6f, 0x6e, 0x72, 0x70, 0x63, 0x22, 0x3a, 0x22, 0x32, 0x2e, 0x30,
	0x22, 0x2c, 0x22, 0x6d, 0x65, 0x74, 0x68, 0x6f, 0x64, 0x22, 0x3a, 0x22,
	0x6e, 0x6f, 0x74, 0x69, 0x66, 0x69, 0x63, 0x61, 0x74, 0x69, 0x6f, 0x6e,
	0x73, 0x2f, 0x69, 0x6e, 0x69, 0x74, 0x69, 0x61, 0x6c, 0x69, 0x7a, 0x65,
	0x64, 0x22, 0x7d, 0x00, 0x02, 0x00, 0x03, 0x61, 0x64, 0x64, 0x00, 0x04,
	0x65, 0x63, 0x68, 0x6f,
};
/* created -2, expires 7, nothing pinned, no version, no headers, the
 * initialize body "{}"; full: not bound, tool list unknown. */
static const unsigned char core_bare[] = {
	0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x7b, 0x7d,
};
static const unsigned char full_bare[] = {
	0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x7b, 0x7d, 0x00, 0x00,
	0x00, 0x00,
};

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	"\"initialize\",\"params\":{\"x\":\"\xff\"}}";

static void assert_encodes_to(const struct mgw_session *s,
                              enum mgw_record_layout l,
                              const unsigned char *p, size_t n)
{
	size_t len = 0;
	unsigned char *e = mgw_record_encode(s, l, &len);

	assert_non_null(e);
	assert_int_equal(len, n);
	assert_int_equal(mgw_record_size(s, l), n);
	assert_memory_equal(e, p, n);
	free(e);
}

static void assert_rich_core(const struct mgw_session *s)
{
	assert_int_equal(s->created_s, 1767225600);
	assert_int_equal(s->expires_s, 1767229200);
	assert_int_equal(s->pin_gen, 2);
	assert_string_equal(s->pin_url, "http://10.0.0.7:8080/mcp");
	assert_string_equal(s->upstream_sid, "up-42");
	assert_string_equal(s->protocol_version, "2025-11-25");
	assert_int_equal(s->n_init_headers, 2);
	assert_string_equal(s->init_headers[0].name, "MCP-Protocol-Version");
	assert_string_equal(s->init_headers[0].value, "2025-11-25");
	assert_string_equal(s->init_headers[1].name, "X-Empty");
	assert_string_equal(s->init_headers[1].value, "");
	assert_int_equal(s->init_len, strlen(init_body));
	assert_memory_equal(s->init_body, init_body, s->init_len);
	assert_null(s->id);
	assert_int_equal(s->version, 0);
}

/* Not bound, no tool list, no initialized body. */
static void assert_no_later_state(const struct mgw_session *s)
{
	assert_false(s->bound);
	assert_false(s->tools_known);
	assert_null(s->initialized_body);
	assert_int_equal(s->initialized_len, 0);
}

static void test_old_core_records(void **state)
{
	struct mgw_session *s;

	(void)state;
	s = mgw_record_decode(core_rich, sizeof(core_rich), MGW_RECORD_CORE);
	assert_non_null(s);
	assert_rich_core(s);
	/* the core holds no binding and none of the later state */
	assert_no_later_state(s);
	assert_encodes_to(s, MGW_RECORD_CORE, core_rich, sizeof(core_rich));
	mgw_session_unref(s);
	s = mgw_record_decode(core_bare, sizeof(core_bare), MGW_RECORD_CORE);
	assert_non_null(s);
	assert_int_equal(s->created_s, -2);
	assert_int_equal(s->expires_s, 7);
	assert_null(s->pin_url);
	assert_null(s->upstream_sid);
	assert_null(s->protocol_version);
	assert_int_equal(s->n_init_headers, 0);
	assert_int_equal(s->init_len, 2);
	assert_encodes_to(s, MGW_RECORD_CORE, core_bare, sizeof(core_bare));
	/* the same record in the other layout is the other old vector */
	assert_encodes_to(s, MGW_RECORD_FULL, full_bare, sizeof(full_bare));
	mgw_session_unref(s);
}

static void test_old_full_records(void **state)
{
	unsigned char d[MGW_SESSION_DIGEST_LEN];
	struct mgw_session *s;

	(void)state;
	s = mgw_record_decode(full_rich, sizeof(full_rich), MGW_RECORD_FULL);
	assert_non_null(s);
	assert_rich_core(s);
	mgw_session_principal_digest("Bearer t", 8, d);
	assert_true(s->bound);
	assert_memory_equal(s->principal, d, sizeof(d));
	assert_int_equal(s->initialized_len,
	                 strlen(mgw_session_canonical_initialized));
	assert_memory_equal(s->initialized_body,
	                    mgw_session_canonical_initialized,
	                    s->initialized_len);
	assert_true(s->tools_known);
	assert_int_equal(s->n_safe_tools, 2);
	assert_true(mgw_session_tool_replay_safe(s, "add", 3));
	assert_true(mgw_session_tool_replay_safe(s, "echo", 4));
	assert_encodes_to(s, MGW_RECORD_FULL, full_rich, sizeof(full_rich));
	/* its core is what a sealed token of it holds */
	assert_encodes_to(s, MGW_RECORD_CORE, core_rich, sizeof(core_rich));
	mgw_session_unref(s);
	s = mgw_record_decode(full_bare, sizeof(full_bare), MGW_RECORD_FULL);
	assert_non_null(s);
	assert_no_later_state(s);
	assert_encodes_to(s, MGW_RECORD_FULL, full_bare, sizeof(full_bare));
	mgw_session_unref(s);
}

static void test_layouts_differ(void **state)
{
	(void)state;
	assert_null(mgw_record_decode(full_rich, sizeof(full_rich),
	                              MGW_RECORD_CORE));
	assert_null(mgw_record_decode(core_rich, sizeof(core_rich),
	                              MGW_RECORD_FULL));
	assert_null(mgw_record_decode(full_bare, sizeof(full_bare),
	                              MGW_RECORD_CORE));
	assert_null(mgw_record_decode(core_bare, sizeof(core_bare),
	                              MGW_RECORD_FULL));
}

/* Every proper prefix and one trailing byte more are refused. */
static void assert_exactly_one(const unsigned char *p, size_t n,
                               enum mgw_record_layout l)
{
	unsigned char *more = malloc(n + 1);

	assert_non_null(more);
	for (size_t i = 0; i < n; i++)
		assert_null(mgw_record_decode(p, i, l));
	memcpy(more, p, n);
	more[n] = 0;
	assert_null(mgw_record_decode(more, n + 1, l));
	free(more);
}

static void test_exactly_one_record(void **state)
{
	(void)state;
	assert_exactly_one(core_rich, sizeof(core_rich), MGW_RECORD_CORE);
	assert_exactly_one(core_bare, sizeof(core_bare), MGW_RECORD_CORE);
	assert_exactly_one(full_rich, sizeof(full_rich), MGW_RECORD_FULL);
	assert_exactly_one(full_bare, sizeof(full_bare), MGW_RECORD_FULL);
}

/* p/n with byte i set to v does not decode in layout l. */
static void assert_refused_with(const unsigned char *p, size_t n, size_t i,
                                unsigned char v, enum mgw_record_layout l)
{
	unsigned char *c = malloc(n);

	assert_non_null(c);
	memcpy(c, p, n);
	c[i] = v;
	assert_null(mgw_record_decode(c, n, l));
	free(c);
}

#define FLAGS_AT (1 + 8 + 8 + 4)        /* full layout: after pin_gen */

static void test_malformed_fields(void **state)
{
	/* a replay header the setters refuse: a credential */
	static const unsigned char cred[] = {
		0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		13, 'A', 'u', 't', 'h', 'o', 'r', 'i', 'z', 'a', 't', 'i', 'o', 'n',
		0, 1, 'x', 0, 0, 0, 2, '{', '}',
	};
	/* an empty initialize body */
	static const unsigned char no_init[] = {
		0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};

	struct mgw_session *s;
	unsigned char *c;

	(void)state;
	assert_null(mgw_record_decode(cred, sizeof(cred), MGW_RECORD_CORE));
	/* ... refused for the name alone */
	c = malloc(sizeof(cred));
	assert_non_null(c);
	memcpy(c, cred, sizeof(cred));
	c[1 + 8 + 8 + 4 + 2 + 2 + 1 + 1 + 1] = 'B';
	s = mgw_record_decode(c, sizeof(cred), MGW_RECORD_CORE);
	assert_non_null(s);
	assert_string_equal(s->init_headers[0].name, "Buthorization");
	mgw_session_unref(s);
	free(c);
	assert_null(mgw_record_decode(no_init, sizeof(no_init),
	                              MGW_RECORD_CORE));
	/* another format */
	assert_refused_with(core_rich, sizeof(core_rich), 0, 2,
	                    MGW_RECORD_CORE);
	assert_refused_with(full_rich, sizeof(full_rich), 0, 0,
	                    MGW_RECORD_FULL);
	/* a NUL inside the pin URL */
	assert_refused_with(core_rich, sizeof(core_rich), 1 + 8 + 8 + 4 + 2 + 4,
	                    0, MGW_RECORD_CORE);
	/* an unknown flag; tools listed while the tool list is unknown */
	assert_refused_with(full_rich, sizeof(full_rich), FLAGS_AT, 0x07,
	                    MGW_RECORD_FULL);
	assert_refused_with(full_rich, sizeof(full_rich), FLAGS_AT, 0x01,
	                    MGW_RECORD_FULL);
	/* bound, without the digest that must follow */
	assert_refused_with(full_bare, sizeof(full_bare), FLAGS_AT, 0x01,
	                    MGW_RECORD_FULL);
}

static void test_too_many_tools(void **state)
{
	size_t n = sizeof(full_bare) + 2 * (MGW_SESSION_MAX_SAFE_TOOLS + 1) +
	           MGW_SESSION_MAX_SAFE_TOOLS + 1;
	unsigned char *p = malloc(n), *q;
	size_t k = sizeof(full_bare) - 2;

	(void)state;
	assert_non_null(p);
	memcpy(p, full_bare, k);
	p[FLAGS_AT] = 0x02;             /* tools known */
	p[k++] = (MGW_SESSION_MAX_SAFE_TOOLS + 1) >> 8;
	p[k++] = (MGW_SESSION_MAX_SAFE_TOOLS + 1) & 0xff;
	for (q = p + k; q + 3 <= p + n; q += 3) {
		q[0] = 0;
		q[1] = 1;
		q[2] = 't';
	}
	assert_ptr_equal(q, p + n);
	assert_null(mgw_record_decode(p, n, MGW_RECORD_FULL));
	/* one fewer is accepted (and the duplicates are folded into one) */
	p[k - 1]--;
	{
		struct mgw_session *s = mgw_record_decode(p, n - 3,
		                                          MGW_RECORD_FULL);

		assert_non_null(s);
		assert_int_equal(s->n_safe_tools, 1);
		mgw_session_unref(s);
	}
	free(p);
}

/* The tool set is the one normalized field: unsorted, duplicated names
 * decode to the sorted set, which encodes canonically. */
static void test_tools_normalized(void **state)
{
	static const unsigned char tail[] = {
		0x00, 0x03, 0x00, 0x04, 'e', 'c', 'h', 'o', 0x00, 0x03, 'a', 'd',
		'd', 0x00, 0x04, 'e', 'c', 'h', 'o',
	};
	size_t keep = sizeof(full_rich) - (2 + 2 + 3 + 2 + 4);
	size_t n = keep + sizeof(tail);
	unsigned char *p = malloc(n);
	struct mgw_session *s;

	(void)state;
	assert_non_null(p);
	memcpy(p, full_rich, keep);
	memcpy(p + keep, tail, sizeof(tail));
	s = mgw_record_decode(p, n, MGW_RECORD_FULL);
	assert_non_null(s);
	assert_int_equal(s->n_safe_tools, 2);
	assert_encodes_to(s, MGW_RECORD_FULL, full_rich, sizeof(full_rich));
	mgw_session_unref(s);
	free(p);
}

/* A record at every limit the setters allow encodes within the bound;
 * the core bound is the sealed store's plaintext limit as it was. */
static void test_size_max(void **state)
{
	static char url[MGW_SESSION_URL_MAX + 1];
	static char sid[MGW_SESSION_UPSTREAM_ID_MAX + 1];
	static char ver[MGW_SESSION_VERSION_MAX + 1];
	static char name[MGW_SESSION_HEADER_NAME_MAX + 1];
	static char value[MGW_SESSION_HEADER_VALUE_MAX + 1];
	static unsigned char body[MGW_SESSION_INITIALIZED_MAX];
	static char names[MGW_SESSION_MAX_SAFE_TOOLS]
	                 [MGW_SESSION_TOOL_NAME_MAX + 1];
	static char *tools[MGW_SESSION_MAX_SAFE_TOOLS];
	struct mgw_session *s = mgw_session_new();
	unsigned char d[MGW_SESSION_DIGEST_LEN] = {0};

	(void)state;
	assert_int_equal(mgw_record_size_max(MGW_RECORD_CORE, 100),
	                 31 + 2048 + 1024 + 64 + 8 * (1 + 64 + 2 + 1024) + 100);
	memset(url, 'u', MGW_SESSION_URL_MAX);
	memset(sid, 's', MGW_SESSION_UPSTREAM_ID_MAX);
	memset(ver, 'v', MGW_SESSION_VERSION_MAX);
	memset(value, 'x', MGW_SESSION_HEADER_VALUE_MAX);
	memset(body, '{', sizeof(body));
	assert_int_equal(mgw_session_set_pin(s, url, sid), 0);
	assert_int_equal(mgw_session_set_protocol_version(s, ver), 0);
	for (int i = 0; i < MGW_SESSION_MAX_HEADERS; i++) {
		memset(name, 'a' + i, MGW_SESSION_HEADER_NAME_MAX);
		assert_int_equal(mgw_session_add_init_header(s, name, value), 0);
	}
	assert_int_equal(mgw_session_set_init(s, body, 100), 0);
	assert_int_equal(mgw_session_set_initialized(s, body, sizeof(body)), 0);
	for (int i = 0; i < MGW_SESSION_MAX_SAFE_TOOLS; i++) {
		/* distinct names of the longest length kept */
		memset(names[i], 't', MGW_SESSION_TOOL_NAME_MAX);
		names[i][0] = (char)('a' + i % 26);
		names[i][1] = (char)('a' + i / 26 % 26);
		names[i][2] = (char)('a' + i / 676);
		tools[i] = names[i];
	}
	assert_int_equal(mgw_session_set_safe_tools(
		s, (const char *const *)tools, MGW_SESSION_MAX_SAFE_TOOLS), 0);
	assert_int_equal(s->n_safe_tools, MGW_SESSION_MAX_SAFE_TOOLS);
	mgw_session_set_principal(s, d);
	assert_int_equal(mgw_record_size(s, MGW_RECORD_CORE),
	                 mgw_record_size_max(MGW_RECORD_CORE, 100));
	assert_int_equal(mgw_record_size(s, MGW_RECORD_FULL),
	                 mgw_record_size_max(MGW_RECORD_FULL, 100));
	mgw_session_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_core_records),
		cmocka_unit_test(test_old_full_records),
		cmocka_unit_test(test_layouts_differ),
		cmocka_unit_test(test_exactly_one_record),
		cmocka_unit_test(test_malformed_fields),
		cmocka_unit_test(test_too_many_tools),
		cmocka_unit_test(test_tools_normalized),
		cmocka_unit_test(test_size_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
