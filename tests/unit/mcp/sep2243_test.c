/* sep2243_test.c - unit tests for src/mcp/sep2243.c: the base64 sentinel
 * codec (spec examples and conformance cases of SEP-2243) and header/body
 * validation with its error codes and messages. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/headers.h"
#include "mcp/era.h"
#include "mcp/sep2243.h"

static void expect_decode(const char *in, const char *want, size_t wlen)
{
	size_t len = 12345;
	char *out = mgw_sep2243_decode(in, strlen(in), &len);

	if (!out)
		fail_msg("decode of '%s' failed", in);
	assert_int_equal(len, wlen);
	assert_memory_equal(out, want, wlen);
	assert_int_equal(out[len], '\0');
	free(out);
}

static void expect_reject(const char *in, size_t inlen)
{
	size_t len;
	char *out = mgw_sep2243_decode(in, inlen, &len);

	if (out)
		fail_msg("decode of '%.*s' should fail, got '%s'", (int)inlen, in, out);
}

static void test_decode(void **state)
{
	(void)state;
	/* spec: conformance "Base64 Decoding" table */
	expect_decode("=?base64?SGVsbG8=?=", "Hello", 5);
	expect_reject("=?base64?SGVsbG8?=", 18);          /* bad padding */
	expect_reject("=?base64?SGVs!!!bG8=?=", 22);      /* bad characters */
	expect_decode("SGVsbG8=", "SGVsbG8=", 8);          /* no prefix */
	expect_decode("=?base64?SGVsbG8=", "=?base64?SGVsbG8=", 17); /* no suffix */
	expect_decode("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=", 19);
	/* spec: encoding examples, decoded back */
	expect_decode("=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, \xe4\xb8\x96\xe7\x95\x8c", 13);
	expect_decode("=?base64?IHBhZGRlZCA=?=", " padded ", 8);
	expect_decode("=?base64?bGluZTEKbGluZTI=?=", "line1\nline2", 11);
	expect_decode("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?=", 18);
	expect_decode("=?base64?5pel5pys6Kqe?=", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 9);
	/* empty sentinel is the empty string; too short to be a sentinel */
	expect_decode("=?base64?\?=", "", 0);
	expect_decode("=?base64?=", "=?base64?=", 10);
	/* URL-safe alphabet is not the sentinel's */
	expect_reject("=?base64?-_-_?=", 15);
	/* whitespace inside base64 is not tolerated */
	expect_reject("=?base64?SGVs bG8=?=", 20);
	/* decoded bytes must be UTF-8 */
	expect_reject("=?base64?/w==?=", 15);             /* 0xFF */
	expect_reject("=?base64?wK8=?=", 15);             /* overlong C0 AF */
	expect_reject("=?base64?4ICA?=", 15);             /* overlong E0 80 80 */
	expect_reject("=?base64?8ICAgA==?=", 19);         /* overlong F0 80 80 80 */
	expect_decode("=?base64?8J+YgA==?=", "\xf0\x9f\x98\x80", 4); /* U+1F600 */
	expect_reject("=?base64?7aCA?=", 15);             /* surrogate ED A0 80 */
	expect_reject("=?base64?9JCAgA==?=", 19);         /* > U+10FFFF */
	expect_reject("=?base64?4oI=?=", 15);             /* truncated E2 82 */
	/* NUL is valid UTF-8 and survives with its length */
	expect_decode("=?base64?YQBi?=", "a\0b", 3);
	/* plain values: visible ASCII, space and tab only */
	expect_decode("us west 1", "us west 1", 9);
	expect_decode("", "", 0);
	expect_reject("caf\xc3\xa9", 5);
	expect_reject("a\rb", 3);
	expect_reject("a\0b", 3);
	expect_reject("a\x7f", 2);
}

static void expect_encode(const char *in, size_t len, const char *want)
{
	char *out = mgw_sep2243_encode(in, len);

	assert_non_null(out);
	assert_string_equal(out, want);
	free(out);
}

static void test_encode(void **state)
{
	(void)state;
	/* spec: "Value Encoding Edge Cases" */
	expect_encode("us-west1", 8, "us-west1");
	expect_encode(" us-west1", 9, "=?base64?IHVzLXdlc3Qx?=");
	expect_encode("us-west1 ", 9, "=?base64?dXMtd2VzdDEg?=");
	expect_encode(" us-west1 ", 10, "=?base64?IHVzLXdlc3QxIA==?=");
	expect_encode("us west 1", 9, "us west 1");
	expect_encode("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 9, "=?base64?5pel5pys6Kqe?=");
	expect_encode("line1\nline2", 11, "=?base64?bGluZTEKbGluZTI=?=");
	expect_encode("line1\r\nline2", 12, "=?base64?bGluZTENCmxpbmUy?=");
	expect_encode("\tindented", 9, "=?base64?CWluZGVudGVk?=");
	expect_encode("", 0, "");
	expect_encode("Hello, \xe4\xb8\x96\xe7\x95\x8c", 13, "=?base64?SGVsbG8sIOS4lueVjA==?=");
	expect_encode("=?base64?literal?=", 18, "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
	/* an inner tab is a control character: encoded */
	expect_encode("a\tb", 3, "=?base64?YQli?=");
}

static void test_roundtrip(void **state)
{
	static const char *vals[] = {
		"plain", " lead", "trail ", "\xc3\xa9t\xc3\xa9", "=?base64?x?=",
		"a\nb", "", "x?=", "=?base64?",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		char *enc = mgw_sep2243_encode(vals[i], strlen(vals[i])), *dec;
		size_t len;

		assert_non_null(enc);
		dec = mgw_sep2243_decode(enc, strlen(enc), &len);
		assert_non_null(dec);
		assert_int_equal(len, strlen(vals[i]));
		assert_memory_equal(dec, vals[i], len);
		free(enc);
		free(dec);
	}
}

/* --- validation ------------------------------------------------------- */

struct fx {
	struct mgw_headers h;
	struct mgw_jrpc_msg m;
	struct mgw_sep2243_verdict v;
};

static void load(struct fx *f, const char *body)
{
	mgw_headers_init(&f->h);
	assert_int_equal(mgw_jrpc_classify(body, strlen(body), 0, &f->m), 0);
}

static void done(struct fx *f)
{
	mgw_headers_deinit(&f->h);
	mgw_jrpc_msg_deinit(&f->m);
}

static void hdr(struct fx *f, const char *name, const char *value)
{
	assert_int_equal(mgw_headers_adds(&f->h, name, value), 0);
}

static void run(struct fx *f, const struct mgw_sep2243_param *p, size_t n)
{
	assert_int_equal(mgw_sep2243_validate(&f->h, &f->m, NULL, p, n, &f->v), 0);
}

static void expect_fail(struct fx *f, int code, const char *needle)
{
	if (f->v.ok)
		fail_msg("validation passed, expected failure with '%s'", needle);
	assert_int_equal(f->v.status, 400);
	assert_int_equal(f->v.code, code);
	if (!strstr(f->v.message, needle))
		fail_msg("message '%s' lacks '%s'", f->v.message, needle);
}

static void expect_ok(struct fx *f)
{
	if (!f->v.ok)
		fail_msg("validation failed: %s", f->v.message);
}

#define META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}"
#define CALL(args) \
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":" \
	"{\"name\":\"execute_sql\",\"arguments\":" args "," META "}}"

static void modern_headers(struct fx *f, const char *method, const char *name)
{
	hdr(f, "MCP-Protocol-Version", "2026-07-28");
	if (method)
		hdr(f, "Mcp-Method", method);
	if (name)
		hdr(f, "Mcp-Name", name);
}

static void test_valid_call(void **state)
{
	struct fx f;

	(void)state;
	load(&f, CALL("{\"q\":1}"));
	modern_headers(&f, "tools/call", "execute_sql");
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);
}

static void test_case_insensitive_names_and_trim(void **state)
{
	struct fx f;

	(void)state;
	load(&f, CALL("{\"q\":1}"));
	hdr(&f, "mcp-protocol-version", "2026-07-28");
	hdr(&f, "MCP-METHOD", "tools/call");
	hdr(&f, "mcp-name", "  execute_sql ");   /* OWS is not part of the value */
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);
}

static void test_method_value_case_sensitive(void **state)
{
	struct fx f;

	(void)state;
	load(&f, CALL("{}"));
	modern_headers(&f, "TOOLS/CALL", "execute_sql");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH,
	            "Mcp-Method header value 'TOOLS/CALL' does not match method 'tools/call'");
	done(&f);
}

static void test_method_mismatch_and_missing(void **state)
{
	struct fx f;

	(void)state;
	load(&f, CALL("{}"));
	modern_headers(&f, "prompts/get", "execute_sql");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "Mcp-Method");
	done(&f);

	load(&f, CALL("{}"));
	modern_headers(&f, NULL, "execute_sql");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "missing Mcp-Method header");
	done(&f);

	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "mcp-method", "tools/call");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "multiple Mcp-Method");
	done(&f);
}

#define TASK(method, id) \
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" method "\",\"params\":" \
	"{\"taskId\":" id "," META "}}"

/* SEP-2663: tasks/get, tasks/update and tasks/cancel carry Mcp-Name =
 * params.taskId, which intermediaries route on. */
static void test_task_name(void **state)
{
	static const char *const methods[] = {
		"tasks/get", "tasks/update", "tasks/cancel",
	};
	struct fx f;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		char body[512];

		snprintf(body, sizeof(body), TASK("%s", "\"t-42\""), methods[i]);
		load(&f, body);
		modern_headers(&f, methods[i], "t-42");
		run(&f, NULL, 0);
		expect_ok(&f);
		done(&f);

		load(&f, body);
		modern_headers(&f, methods[i], "t-43");
		run(&f, NULL, 0);
		expect_fail(&f, MGW_MCP_HEADER_MISMATCH,
		            "Mcp-Name header value 't-43' does not match "
		            "params.taskId 't-42'");
		done(&f);

		load(&f, body);
		modern_headers(&f, methods[i], NULL);
		run(&f, NULL, 0);
		expect_fail(&f, MGW_MCP_HEADER_MISMATCH,
		            "missing Mcp-Name header (params.taskId is 't-42')");
		done(&f);
	}
	/* the base64 sentinel decodes before the comparison */
	load(&f, TASK("tasks/get", "\" t \""));
	modern_headers(&f, "tasks/get", "=?base64?IHQg?=");
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);
	/* no taskId in the body: the header has nothing to mirror */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\","
	         "\"params\":{" META "}}");
	modern_headers(&f, "tasks/get", "t-42");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "the body has no params.taskId");
	done(&f);
	/* a taskId that is not a string: the server's -32602, with or
	 * without the header */
	load(&f, TASK("tasks/get", "5"));
	modern_headers(&f, "tasks/get", "5");
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);
	load(&f, TASK("tasks/get", "5"));
	modern_headers(&f, "tasks/get", NULL);
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);
	/* another tasks/ method is not one the extension routes */
	load(&f, TASK("tasks/list", "\"t-42\""));
	modern_headers(&f, "tasks/list", NULL);
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);
}

static void test_name_rules(void **state)
{
	struct fx f;

	(void)state;
	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", "foo");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH,
	            "Mcp-Name header value 'foo' does not match params.name 'execute_sql'");
	done(&f);

	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", NULL);
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "missing Mcp-Name header");
	done(&f);

	/* resources/read mirrors params.uri */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\","
	         "\"params\":{\"uri\":\"https://example.com/resource?id=123\"," META "}}");
	modern_headers(&f, "resources/read", "https://example.com/resource?id=123");
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);

	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\","
	         "\"params\":{\"uri\":\"file:///a\"," META "}}");
	modern_headers(&f, "resources/read", "file:///b");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "does not match params.uri 'file:///a'");
	done(&f);

	/* prompts/get with a base64-encoded non-ASCII name */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\","
	         "\"params\":{\"name\":\"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\"," META "}}");
	modern_headers(&f, "prompts/get", "=?base64?5pel5pys6Kqe?=");
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);

	/* a sentinel with broken base64 is a mismatch, not a literal */
	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", "=?base64?ZXhlY3V0ZV9zcWw?=");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "malformed");
	done(&f);

	/* a header naming a tool the body does not name */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	         "\"params\":{" META "}}");
	modern_headers(&f, "tools/call", "x");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "body has no params.name");
	done(&f);

	/* methods without a name do not need Mcp-Name */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	         "\"params\":{" META "}}");
	modern_headers(&f, "tools/list", NULL);
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);
}

static void test_version_rules(void **state)
{
	struct fx f;
	json_t *data;

	(void)state;
	load(&f, CALL("{}"));
	hdr(&f, "Mcp-Method", "tools/call");
	hdr(&f, "Mcp-Name", "execute_sql");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "missing MCP-Protocol-Version header");
	done(&f);

	load(&f, CALL("{}"));
	hdr(&f, "MCP-Protocol-Version", "2025-11-25");
	hdr(&f, "Mcp-Method", "tools/call");
	hdr(&f, "Mcp-Name", "execute_sql");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH,
	            "MCP-Protocol-Version header value '2025-11-25' does not match _meta protocolVersion '2026-07-28'");
	done(&f);

	/* _meta lacks the version */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	modern_headers(&f, "tools/list", NULL);
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "no io.modelcontextprotocol/protocolVersion");
	done(&f);

	/* both agree on a version we do not speak: -32022 */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":"
	         "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\"}}}");
	hdr(&f, "MCP-Protocol-Version", "1900-01-01");
	hdr(&f, "Mcp-Method", "tools/list");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_UNSUPPORTED_VERSION, "1900-01-01");
	assert_string_equal(f.v.requested, "1900-01-01");
	data = mgw_sep2243_unsupported_data(NULL, f.v.requested);
	assert_non_null(data);
	assert_string_equal(json_string_value(json_object_get(data, "requested")),
	                    "1900-01-01");
	assert_int_equal(json_array_size(json_object_get(data, "supported")), 1);
	assert_string_equal(json_string_value(json_array_get(
	        json_object_get(data, "supported"), 0)), "2026-07-28");
	json_decref(data);
	done(&f);

	/* a caller-supplied list (dual era) */
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":"
	         "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}}");
	hdr(&f, "MCP-Protocol-Version", "2025-11-25");
	hdr(&f, "Mcp-Method", "tools/list");
	assert_int_equal(mgw_sep2243_validate(&f.h, &f.m, mgw_mcp_legacy_versions,
	                                      NULL, 0, &f.v), 0);
	expect_ok(&f);
	done(&f);

	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "mcp-protocol-version", "2026-07-28");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "multiple MCP-Protocol-Version");
	done(&f);
}

static void test_unsupported_data_shape(void **state)
{
	static const char *const list[] = { "2026-07-28", "2025-11-25", NULL };
	json_t *d = mgw_sep2243_unsupported_data(list, NULL);
	char *s;

	(void)state;
	assert_non_null(d);
	s = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"requested\":\"\",\"supported\":[\"2026-07-28\",\"2025-11-25\"]}");
	free(s);
	json_decref(d);
}

static void test_notification_rules(void **state)
{
	struct fx f;

	(void)state;
	load(&f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
	hdr(&f, "MCP-Protocol-Version", "2026-07-28");
	run(&f, NULL, 0);
	expect_ok(&f);
	done(&f);

	load(&f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "missing MCP-Protocol-Version");
	done(&f);

	load(&f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
	modern_headers(&f, "notifications/other", NULL);
	run(&f, NULL, 0);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "Mcp-Method");
	done(&f);
}

static void test_not_a_request(void **state)
{
	struct fx f;

	(void)state;
	load(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	modern_headers(&f, "tools/call", NULL);
	run(&f, NULL, 0);
	assert_false(f.v.ok);
	assert_int_equal(f.v.code, MGW_JRPC_INVALID_REQUEST);
	done(&f);
}

static const struct mgw_sep2243_param region = { "Region", "region" };

static void test_param_headers(void **state)
{
	static const struct mgw_sep2243_param many[] = {
		{ "Count", "count" }, { "Flag", "flag" }, { "Text", "text" },
		{ "Deep", "/conn/region" }, { "Pi", "pi" },
	};
	struct fx f;

	(void)state;
	/* match, header name in any case */
	load(&f, CALL("{\"region\":\"us-west1\",\"query\":\"SELECT 1\"}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "mcp-param-region", "us-west1");
	run(&f, &region, 1);
	expect_ok(&f);
	done(&f);

	/* mismatch */
	load(&f, CALL("{\"region\":\"us-west1\"}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Region", "europe-west1");
	run(&f, &region, 1);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH,
	            "Mcp-Param-Region header value 'europe-west1' does not match argument 'region'");
	done(&f);

	/* value in body, header omitted */
	load(&f, CALL("{\"region\":\"us-west1\"}"));
	modern_headers(&f, "tools/call", "execute_sql");
	run(&f, &region, 1);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "missing Mcp-Param-Region header");
	done(&f);

	/* null or missing argument: header not expected */
	load(&f, CALL("{\"region\":null}"));
	modern_headers(&f, "tools/call", "execute_sql");
	run(&f, &region, 1);
	expect_ok(&f);
	done(&f);
	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", "execute_sql");
	run(&f, &region, 1);
	expect_ok(&f);
	done(&f);

	/* ... and a header for an absent argument is a mismatch */
	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Region", "us-west1");
	run(&f, &region, 1);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "argument 'region' is absent");
	done(&f);

	/* undeclared Mcp-Param-* headers are left alone */
	load(&f, CALL("{}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Other", "whatever");
	run(&f, &region, 1);
	expect_ok(&f);
	done(&f);

	/* scalars: integer compared numerically, booleans lowercase,
	 * encoded strings decoded, nested property by JSON Pointer */
	load(&f, CALL("{\"count\":42,\"flag\":false,\"text\":\" padded \","
	              "\"conn\":{\"region\":\"eu\"},\"pi\":3.14159}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Count", "42.0");
	hdr(&f, "Mcp-Param-Flag", "false");
	hdr(&f, "Mcp-Param-Text", "=?base64?IHBhZGRlZCA=?=");
	hdr(&f, "Mcp-Param-Deep", "eu");
	hdr(&f, "Mcp-Param-Pi", "3.14159");
	run(&f, many, 5);
	expect_ok(&f);
	done(&f);

	/* a number beyond a 64-bit integer or a double (mcp/json.h): the
	 * header carries the same text */
	load(&f, CALL("{\"count\":123456789012345678901234567890}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Count", "123456789012345678901234567890");
	run(&f, many, 1);
	expect_ok(&f);
	done(&f);

	/* exponent form of an integer compares numerically too */
	load(&f, CALL("{\"count\":42}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Count", "4.2e1");
	run(&f, many, 1);
	expect_ok(&f);
	done(&f);
}

static void param_mismatch(const char *args, const char *name,
                           const char *value, const char *needle)
{
	static const struct mgw_sep2243_param many[] = {
		{ "Count", "count" }, { "Flag", "flag" }, { "Text", "text" },
		{ "Obj", "obj" },
	};
	struct fx f;
	char body[512];

	snprintf(body, sizeof(body), CALL("%s"), args);
	load(&f, body);
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, name, value);
	run(&f, many, 4);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, needle);
	done(&f);
}

static void test_param_scalar_mismatches(void **state)
{
	(void)state;
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "43", "Mcp-Param-Count");
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "42.5", "Mcp-Param-Count");
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "4.3e1", "Mcp-Param-Count");
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "42abc", "Mcp-Param-Count");
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "0x2a", "Mcp-Param-Count");
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "+42", "Mcp-Param-Count");
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "042", "Mcp-Param-Count");
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "", "Mcp-Param-Count");
	param_mismatch("{\"count\":9007199254740993}", "Mcp-Param-Count",
	               "9007199254740992.0", "Mcp-Param-Count");
	/* no value to compare for a wide number: another text is another
	 * number, even one a double cannot tell from it */
	param_mismatch("{\"count\":123456789012345678901234567890}", "Mcp-Param-Count",
	               "123456789012345678901234567891", "Mcp-Param-Count");
	param_mismatch("{\"count\":123456789012345678901234567890}", "Mcp-Param-Count",
	               "1.2345678901234568e29", "Mcp-Param-Count");
	param_mismatch("{\"count\":1e400}", "Mcp-Param-Count", "1e401", "Mcp-Param-Count");
	param_mismatch("{\"flag\":true}", "Mcp-Param-Flag", "True", "Mcp-Param-Flag");
	param_mismatch("{\"flag\":true}", "Mcp-Param-Flag", "1", "Mcp-Param-Flag");
	param_mismatch("{\"text\":\"a\"}", "Mcp-Param-Text", "A", "Mcp-Param-Text");
	/* strings compare as text, not numbers */
	param_mismatch("{\"text\":\"42\"}", "Mcp-Param-Text", "42.0", "Mcp-Param-Text");
	param_mismatch("{\"obj\":{\"a\":1}}", "Mcp-Param-Obj", "{\"a\":1}", "Mcp-Param-Obj");
	param_mismatch("{\"text\":\"x\"}", "Mcp-Param-Text", "=?base64?eA?=", "malformed");
	param_mismatch("{\"text\":\"x\"}", "Mcp-Param-Text", "caf\xc3\xa9", "malformed");
	/* the error message quotes the body value as JSON */
	param_mismatch("{\"count\":42}", "Mcp-Param-Count", "7", "= 42");
}

static void test_param_embedded_nul(void **state)
{
	struct fx f;

	(void)state;
	load(&f, CALL("{\"text\":\"a\\u0000b\"}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Text", "=?base64?YQBi?=");
	run(&f, &(const struct mgw_sep2243_param){ "Text", "text" }, 1);
	expect_ok(&f);
	done(&f);

	/* a prefix of the body value does not match */
	load(&f, CALL("{\"text\":\"a\\u0000b\"}"));
	modern_headers(&f, "tools/call", "execute_sql");
	hdr(&f, "Mcp-Param-Text", "a");
	run(&f, &(const struct mgw_sep2243_param){ "Text", "text" }, 1);
	expect_fail(&f, MGW_MCP_HEADER_MISMATCH, "Mcp-Param-Text");
	done(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_task_name),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_valid_call),
		cmocka_unit_test(test_case_insensitive_names_and_trim),
		cmocka_unit_test(test_method_value_case_sensitive),
		cmocka_unit_test(test_method_mismatch_and_missing),
		cmocka_unit_test(test_name_rules),
		cmocka_unit_test(test_version_rules),
		cmocka_unit_test(test_unsupported_data_shape),
		cmocka_unit_test(test_notification_rules),
		cmocka_unit_test(test_not_a_request),
		cmocka_unit_test(test_param_headers),
		cmocka_unit_test(test_param_scalar_mismatches),
		cmocka_unit_test(test_param_embedded_nul),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
