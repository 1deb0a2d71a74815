/* jsonrpc_test.c - unit tests for src/mcp/jsonrpc.c: classification of
 * every message kind and every invalid shape, and the body builders. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "mcp/json.h"
#include "mcp/jsonrpc.h"

static struct mgw_jrpc_msg classify(const char *body)
{
	struct mgw_jrpc_msg m;

	assert_int_equal(mgw_jrpc_classify(body, strlen(body), 0, &m), 0);
	return m;
}

static void expect_invalid(const char *body, int code, const char *why)
{
	struct mgw_jrpc_msg m = classify(body);

	if (m.kind != MGW_JRPC_INVALID)
		fail_msg("expected INVALID for %s, got kind %d", body, m.kind);
	assert_int_equal(m.error_code, code);
	if (why && !strstr(m.error_msg, why))
		fail_msg("message '%s' lacks '%s' (body %s)", m.error_msg, why, body);
	mgw_jrpc_msg_deinit(&m);
}

static void test_request_tools_call(void **state)
{
	struct mgw_jrpc_msg m = classify(
	        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"},"
	        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");

	(void)state;
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_true(json_is_integer(mgw_jrpc_id(&m)));
	assert_int_equal(json_integer_value(mgw_jrpc_id(&m)), 7);
	assert_string_equal(m.method, "tools/call");
	assert_non_null(mgw_jrpc_params(&m));
	assert_string_equal(m.name, "echo");
	assert_non_null(mgw_jrpc_meta(&m));
	assert_string_equal(m.meta_protocol_version, "2026-07-28");
	mgw_jrpc_msg_deinit(&m);
	assert_null(mgw_jrpc_root(&m));
}

static void test_request_names(void **state)
{
	struct mgw_jrpc_msg m;

	(void)state;
	m = classify("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"prompts/get\","
	             "\"params\":{\"name\":\"review\"}}");
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_string_equal(json_string_value(mgw_jrpc_id(&m)), "a");
	assert_string_equal(m.name, "review");
	assert_null(mgw_jrpc_meta(&m));
	assert_null(m.meta_protocol_version);
	mgw_jrpc_msg_deinit(&m);

	m = classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\","
	             "\"params\":{\"uri\":\"file:///a b\",\"name\":\"ignored\"}}");
	assert_string_equal(m.name, "file:///a b");
	mgw_jrpc_msg_deinit(&m);

	/* Other methods never expose a name, even when params has one. */
	m = classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	             "\"params\":{\"name\":\"x\"}}");
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_null(m.name);
	mgw_jrpc_msg_deinit(&m);

	/* A non-string name is left for the method handler (-32602). */
	m = classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	             "\"params\":{\"name\":5}}");
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_null(m.name);
	mgw_jrpc_msg_deinit(&m);
}

/* tasks/... requests expose params.taskId (what Mcp-Name mirrors,
 * SEP-2663) apart from name: a task id may be a bearer handle, and name
 * is logged and counted. */
static void test_request_task_id(void **state)
{
	struct mgw_jrpc_msg m;

	(void)state;
	m = classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\","
	             "\"params\":{\"taskId\":\"t-1\",\"name\":\"x\"}}");
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_string_equal(m.task_id, "t-1");
	assert_null(m.name);
	mgw_jrpc_msg_deinit(&m);

	m = classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/cancel\","
	             "\"params\":{\"taskId\":7}}");
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_null(m.task_id);     /* the server answers -32602 */
	mgw_jrpc_msg_deinit(&m);

	/* not a tasks/ method: no task id */
	m = classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	             "\"params\":{\"name\":\"n\",\"taskId\":\"t-1\"}}");
	assert_null(m.task_id);
	mgw_jrpc_msg_deinit(&m);

	/* a notification carries none either */
	m = classify("{\"jsonrpc\":\"2.0\",\"method\":\"tasks/get\","
	             "\"params\":{\"taskId\":\"t-1\"}}");
	assert_int_equal(m.kind, MGW_JRPC_NOTIFICATION);
	assert_null(m.task_id);
	mgw_jrpc_msg_deinit(&m);

	/* an id with NUL could match a header by its prefix only */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\","
	               "\"params\":{\"taskId\":\"a\\u0000b\"}}",
	               MGW_JRPC_INVALID_REQUEST, "taskId contains a NUL");
}

static void test_notification(void **state)
{
	struct mgw_jrpc_msg m = classify(
	        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");

	(void)state;
	assert_int_equal(m.kind, MGW_JRPC_NOTIFICATION);
	assert_null(mgw_jrpc_id(&m));
	assert_string_equal(m.method, "notifications/initialized");
	assert_null(mgw_jrpc_params(&m));
	mgw_jrpc_msg_deinit(&m);
}

static void test_array_params(void **state)
{
	struct mgw_jrpc_msg m = classify(
	        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1,2]}");

	(void)state;
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_null(mgw_jrpc_params(&m));
	mgw_jrpc_msg_deinit(&m);
}

static void test_responses(void **state)
{
	struct mgw_jrpc_msg m;

	(void)state;
	m = classify("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
	assert_int_equal(m.kind, MGW_JRPC_RESPONSE);
	assert_int_equal(json_integer_value(mgw_jrpc_id(&m)), 3);
	assert_null(m.method);
	mgw_jrpc_msg_deinit(&m);

	m = classify("{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"error\":"
	             "{\"code\":-32601,\"message\":\"nope\"}}");
	assert_int_equal(m.kind, MGW_JRPC_RESPONSE);
	mgw_jrpc_msg_deinit(&m);

	/* An error to an unparsable request carries a null id. */
	m = classify("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	             "{\"code\":-32700,\"message\":\"parse\"}}");
	assert_int_equal(m.kind, MGW_JRPC_RESPONSE);
	assert_null(mgw_jrpc_id(&m));
	mgw_jrpc_msg_deinit(&m);
}

static void test_batch(void **state)
{
	struct mgw_jrpc_msg m = classify(
	        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");

	(void)state;
	assert_int_equal(m.kind, MGW_JRPC_BATCH);
	assert_non_null(mgw_jrpc_root(&m));
	mgw_jrpc_msg_deinit(&m);
	expect_invalid("[]", MGW_JRPC_INVALID_REQUEST, "empty batch");
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_invalid("", MGW_JRPC_PARSE_ERROR, "parse error");
	expect_invalid("{", MGW_JRPC_PARSE_ERROR, NULL);
	expect_invalid("{\"jsonrpc\":\"2.0\",}", MGW_JRPC_PARSE_ERROR, NULL);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"} x",
	               MGW_JRPC_PARSE_ERROR, NULL);
	expect_invalid("\xff\xfe", MGW_JRPC_PARSE_ERROR, NULL);
	{
		/* error_msg stays printable ASCII whatever the input was */
		struct mgw_jrpc_msg m = classify("{\"a\":\xff\x01}");
		const char *p;

		assert_int_equal(m.kind, MGW_JRPC_INVALID);
		for (p = m.error_msg; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7F);
		mgw_jrpc_msg_deinit(&m);
	}
}

/* RFC 8259 8.1: one leading UTF-8 BOM is ignored (the same message as
 * without it, whitespace after it allowed); a second BOM, a BOM after
 * whitespace, a UTF-16 mark or a lone "EF BB" are parse errors. */
static void test_bom(void **state)
{
	struct mgw_jrpc_msg m;

	(void)state;
	m = classify("\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	             "\"params\":{\"name\":\"add\"}}");
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_string_equal(m.method, "tools/call");
	assert_string_equal(m.name, "add");
	assert_int_equal(json_integer_value(mgw_jrpc_id(&m)), 3);
	mgw_jrpc_msg_deinit(&m);
	m = classify("\xEF\xBB\xBF \r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}");
	assert_int_equal(m.kind, MGW_JRPC_NOTIFICATION);
	mgw_jrpc_msg_deinit(&m);
	m = classify("\xEF\xBB\xBF[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]");
	assert_int_equal(m.kind, MGW_JRPC_BATCH);
	mgw_jrpc_msg_deinit(&m);
	expect_invalid("\xEF\xBB\xBF", MGW_JRPC_PARSE_ERROR, "parse error");
	expect_invalid("\xEF\xBB\xBF\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
	               MGW_JRPC_PARSE_ERROR, NULL);
	expect_invalid(" \xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
	               MGW_JRPC_PARSE_ERROR, NULL);
	expect_invalid("\xFE\xFF{}", MGW_JRPC_PARSE_ERROR, NULL);
	expect_invalid("\xEF\xBB{}", MGW_JRPC_PARSE_ERROR, NULL);
	expect_invalid("\xEF\xBB\xBF\"tools/call\"", MGW_JRPC_INVALID_REQUEST,
	               "must be an object");
}

static void test_invalid_shapes(void **state)
{
	(void)state;
	expect_invalid("42", MGW_JRPC_INVALID_REQUEST, "must be an object");
	expect_invalid("\"s\"", MGW_JRPC_INVALID_REQUEST, NULL);
	expect_invalid("null", MGW_JRPC_INVALID_REQUEST, NULL);
	/* jsonrpc version */
	expect_invalid("{\"id\":1,\"method\":\"a\"}", MGW_JRPC_INVALID_REQUEST,
	               "jsonrpc");
	expect_invalid("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "jsonrpc");
	expect_invalid("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "jsonrpc");
	expect_invalid("{\"jsonrpc\":\"2.0\\u0000\",\"id\":1,\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "jsonrpc");
	/* id types */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"a\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
	/* method */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
	               MGW_JRPC_INVALID_REQUEST, "method");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
	               MGW_JRPC_INVALID_REQUEST, "method");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\\u0000x\"}",
	               MGW_JRPC_INVALID_REQUEST, "method");
	/* params */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":3}",
	               MGW_JRPC_INVALID_REQUEST, "params");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":\"x\"}",
	               MGW_JRPC_INVALID_REQUEST, "params");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	               "\"params\":{\"name\":\"ec\\u0000ho\"}}",
	               MGW_JRPC_INVALID_REQUEST, "NUL");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":"
	               "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":1}}}",
	               MGW_JRPC_INVALID_REQUEST, "protocolVersion");
	/* method together with result / error */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"result\":{}}",
	               MGW_JRPC_INVALID_REQUEST, "method cannot");
	/* responses */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":"
	               "{\"code\":1,\"message\":\"m\"}}",
	               MGW_JRPC_INVALID_REQUEST, "both result and error");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1}", MGW_JRPC_INVALID_REQUEST,
	               "neither");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"result\":{}}",
	               MGW_JRPC_INVALID_REQUEST, "id");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}",
	               MGW_JRPC_INVALID_REQUEST, "id");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}",
	               MGW_JRPC_INVALID_REQUEST, "error must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"x\",\"message\":\"m\"}}",
	               MGW_JRPC_INVALID_REQUEST, "error must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}",
	               MGW_JRPC_INVALID_REQUEST, "error must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"error\":{\"code\":1,\"message\":\"m\"}}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
}

static void test_invalid_keeps_id(void **state)
{
	struct mgw_jrpc_msg m = classify(
	        "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":7}");

	(void)state;
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	assert_string_equal(json_string_value(mgw_jrpc_id(&m)), "q");
	assert_null(m.method);
	mgw_jrpc_msg_deinit(&m);
}

static void test_duplicates(void **state)
{
	(void)state;
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	               "\"method\":\"tools/call\"}",
	               MGW_JRPC_INVALID_REQUEST, "duplicate");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	               "\"params\":{\"name\":\"a\",\"name\":\"b\"}}",
	               MGW_JRPC_INVALID_REQUEST, "duplicate");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	               "\"params\":{\"arguments\":{\"r\":1,\"r\":2}}}",
	               MGW_JRPC_INVALID_REQUEST, "duplicate");
}

/* Builds "[[[...1...]]]" (arrays) or {"a":{"a":...}} (objects). */
static char *nest(size_t depth, int objects)
{
	char *s = malloc(depth * 6 + 8), *p = s;
	size_t i;

	assert_non_null(s);
	for (i = 0; i < depth; i++) {
		if (objects) {
			memcpy(p, "{\"a\":", 5);
			p += 5;
		} else {
			*p++ = '[';
		}
	}
	*p++ = '1';
	for (i = 0; i < depth; i++)
		*p++ = objects ? '}' : ']';
	*p = '\0';
	return s;
}

static void test_depth(void **state)
{
	struct mgw_jrpc_msg m;
	char *s, *body;

	(void)state;
	/* 64 levels pass the pre-scan (then fail as a non-message only for
	 * arrays, which are batches). */
	s = nest(64, 0);
	assert_int_equal(mgw_jrpc_classify(s, strlen(s), 0, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_BATCH);
	mgw_jrpc_msg_deinit(&m);
	free(s);

	s = nest(65, 0);
	assert_int_equal(mgw_jrpc_classify(s, strlen(s), 0, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	assert_int_equal(m.error_code, MGW_JRPC_INVALID_REQUEST);
	assert_non_null(strstr(m.error_msg, "deeper than 64"));
	assert_null(mgw_jrpc_root(&m));
	mgw_jrpc_msg_deinit(&m);
	free(s);

	/* Far beyond jansson's own limit: rejected by our scan, no crash. */
	s = nest(100000, 1);
	assert_int_equal(mgw_jrpc_classify(s, strlen(s), 0, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	assert_non_null(strstr(m.error_msg, "deeper"));
	mgw_jrpc_msg_deinit(&m);
	free(s);

	/* A small explicit limit counts the envelope too. */
	body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"x\":[1]}}";
	assert_int_equal(mgw_jrpc_classify(body, strlen(body), 3, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	mgw_jrpc_msg_deinit(&m);
	assert_int_equal(mgw_jrpc_classify(body, strlen(body), 2, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	mgw_jrpc_msg_deinit(&m);

	/* More values than the reader builds: invalid, with the request's
	 * envelope unreadable (no id). */
	{
		size_t n = MGW_JSON_MAX_VALUES, len;
		char *b = malloc(64 + 2 * n);
		const char *pre = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\","
		                  "\"params\":{\"x\":[";

		assert_non_null(b);
		len = strlen(pre);
		memcpy(b, pre, len);
		for (size_t i = 0; i < n; i++) {
			b[len++] = '0';
			b[len++] = ',';
		}
		b[len - 1] = ']';
		b[len++] = '}';
		b[len++] = '}';
		assert_int_equal(mgw_jrpc_classify(b, len, 0, &m), 0);
		assert_int_equal(m.kind, MGW_JRPC_INVALID);
		assert_int_equal(m.error_code, MGW_JRPC_INVALID_REQUEST);
		assert_non_null(strstr(m.error_msg, "more than 262144 values"));
		mgw_jrpc_msg_deinit(&m);
		free(b);
	}

	/* Brackets inside strings, including after an escaped quote, do not
	 * count toward depth. */
	body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\","
	       "\"params\":{\"t\":\"\\\"[[[[[[{{{{{\\\\\"}}";
	assert_int_equal(mgw_jrpc_classify(body, strlen(body), 2, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	mgw_jrpc_msg_deinit(&m);
}

static void test_error_body(void **state)
{
	json_t *id = json_integer(9), *data = json_pack("{s:[s]}", "supported", "2026-07-28");
	struct mgw_jrpc_msg m;
	size_t len = 0;
	char *s;

	(void)state;
	s = mgw_jrpc_error_body(id, MGW_MCP_UNSUPPORTED_VERSION, "Unsupported",
	                        data, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen(s));
	assert_int_equal(mgw_jrpc_classify(s, len, 0, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_RESPONSE);
	assert_int_equal(json_integer_value(mgw_jrpc_id(&m)), 9);
	assert_int_equal(json_integer_value(json_object_get(
	        json_object_get(mgw_jrpc_root(&m), "error"), "code")), -32022);
	assert_string_equal(json_string_value(json_array_get(json_object_get(
	        json_object_get(json_object_get(mgw_jrpc_root(&m), "error"), "data"),
	        "supported"), 0)), "2026-07-28");
	mgw_jrpc_msg_deinit(&m);
	free(s);
	/* id is borrowed: still ours to free. */
	assert_int_equal(json_integer_value(id), 9);
	json_decref(id);

	/* A message quoting non-UTF-8 client bytes still yields a body. */
	s = mgw_jrpc_error_body(NULL, MGW_JRPC_PARSE_ERROR, "bad \xff byte", NULL, &len);
	assert_non_null(s);
	assert_non_null(strstr(s, "bad ? byte"));
	free(s);

	s = mgw_jrpc_error_body(NULL, MGW_JRPC_PARSE_ERROR, "bad", NULL, &len);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"id\":null"));
	assert_null(strstr(s, "data"));
	free(s);
}

/* Numbers of any size (RFC 8259) are valid anywhere; an integer id
 * beyond 64 bits is a request id, and answers echo its exact text. */
static void test_wide_numbers(void **state)
{
	static const char *bodies[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		"\"params\":{\"name\":\"echo\",\"_meta\":{\"big\":"
		"12345678901234567890123,\"io.modelcontextprotocol/"
		"protocolVersion\":\"2026-07-28\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		"\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":1e400,"
		"\"b\":-0,\"c\":1E-400,\"d\":-99999999999999999999999999}}}",
	};
	static const char big[] = "{\"jsonrpc\":\"2.0\","
	        "\"id\":123456789012345678901234567890,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"echo\"}}";
	struct mgw_jrpc_msg m, a;
	const char *t;
	size_t n, len;
	char *s;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		m = classify(bodies[i]);
		assert_int_equal(m.kind, MGW_JRPC_REQUEST);
		assert_string_equal(m.name, "echo");
		mgw_jrpc_msg_deinit(&m);
	}
	m = classify(bodies[0]);
	assert_string_equal(m.meta_protocol_version, "2026-07-28");
	mgw_jrpc_msg_deinit(&m);

	m = classify(big);
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_true(mgw_json_wide_number(mgw_jrpc_id(&m), &t, &n));
	assert_int_equal(n, 30);
	s = mgw_jrpc_error_body(mgw_jrpc_id(&m), MGW_JRPC_INVALID_PARAMS, "bad", NULL, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen(s));
	assert_non_null(strstr(s, "\"id\":123456789012345678901234567890,"));
	/* the answer is itself a valid response naming the same id */
	assert_int_equal(mgw_jrpc_classify(s, len, 0, &a), 0);
	assert_int_equal(a.kind, MGW_JRPC_RESPONSE);
	assert_true(mgw_json_wide_number(mgw_jrpc_id(&a), &t, &n));
	assert_memory_equal(t, "123456789012345678901234567890", n);
	mgw_jrpc_msg_deinit(&a);
	free(s);
	s = mgw_jrpc_result_body(mgw_jrpc_id(&m), json_object(), &len);
	assert_non_null(s);
	assert_string_equal(s, "{\"jsonrpc\":\"2.0\",\"id\":"
	                       "123456789012345678901234567890,\"result\":{}}");
	free(s);
	mgw_jrpc_msg_deinit(&m);

	/* an id of a fraction or exponent stays refused, as 1.5 is; an
	 * INVALID message keeps a wide integer id to echo */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"x\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
	m = classify("{\"jsonrpc\":\"1.0\",\"id\":-99999999999999999999,"
	             "\"method\":\"x\"}");
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	assert_true(mgw_json_wide_number(mgw_jrpc_id(&m), &t, &n));
	mgw_jrpc_msg_deinit(&m);
	/* a string id holding U+0000 and digits is no number */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":\"\\u00001\",\"method\":\"x\"}",
	               MGW_JRPC_INVALID_REQUEST, "id must be");
}

static void test_result_and_notification_body(void **state)
{
	json_t *id = json_string("r1");
	struct mgw_jrpc_msg m;
	size_t len;
	char *s;

	(void)state;
	s = mgw_jrpc_result_body(id, json_pack("{s:s}", "resultType", "complete"),
	                         &len);
	assert_non_null(s);
	assert_int_equal(mgw_jrpc_classify(s, len, 0, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_RESPONSE);
	assert_string_equal(json_string_value(mgw_jrpc_id(&m)), "r1");
	mgw_jrpc_msg_deinit(&m);
	free(s);
	json_decref(id);

	s = mgw_jrpc_notification_body("notifications/progress",
	                               json_pack("{s:i}", "progress", 1), &len);
	assert_non_null(s);
	assert_int_equal(mgw_jrpc_classify(s, len, 0, &m), 0);
	assert_int_equal(m.kind, MGW_JRPC_NOTIFICATION);
	assert_string_equal(m.method, "notifications/progress");
	assert_non_null(mgw_jrpc_params(&m));
	mgw_jrpc_msg_deinit(&m);
	free(s);

	s = mgw_jrpc_notification_body("notifications/x", NULL, &len);
	assert_non_null(s);
	assert_null(strstr(s, "params"));
	free(s);
}

/* ---- mgw_jrpc_classify_lazy: the gateway's reading --------------------- */

static struct mgw_jrpc_msg classify_lazy(const char *body)
{
	struct mgw_jrpc_msg m;

	assert_int_equal(mgw_jrpc_classify_lazy(body, strlen(body), 0, &m), 0);
	return m;
}

static void test_lazy_no_tree_until_asked(void **state)
{
	struct mgw_jrpc_msg m = classify_lazy(
	        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"echo\",\"arguments\":{\"n\":123456789012345678901234},"
	        "\"requestState\":\"s\","
	        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");
	json_t *args;

	(void)state;
	assert_int_equal(m.kind, MGW_JRPC_REQUEST);
	assert_true(m.lazy);
	assert_string_equal(m.method, "tools/call");
	assert_string_equal(m.name, "echo");
	assert_string_equal(m.meta_protocol_version, "2026-07-28");
	assert_true(mgw_jrpc_parsed(&m));
	assert_true(mgw_jrpc_has_meta(&m));
	assert_true(mgw_jrpc_params_has(&m, "requestState"));
	assert_true(mgw_jrpc_params_has(&m, "arguments"));
	assert_false(mgw_jrpc_params_has(&m, "inputResponses"));
	assert_false(mgw_jrpc_params_has(&m, "argument"));
	assert_null(m.root_); /* nothing built yet */
	assert_int_equal(json_integer_value(mgw_jrpc_id(&m)), 7);
	assert_non_null(m.root_); /* built by the first view */
	args = json_object_get(mgw_jrpc_params(&m), "arguments");
	assert_true(mgw_json_wide_number(json_object_get(args, "n"), NULL, NULL));
	assert_non_null(json_object_get(mgw_jrpc_meta(&m),
	                "io.modelcontextprotocol/protocolVersion"));
	assert_false(mgw_jrpc_tree_failed(&m));
	mgw_jrpc_msg_deinit(&m);
}

/* What the skim leaves to the full classification, and what it takes:
 * each body gives the same answers both ways. */
static void test_lazy_same_as_eager(void **state)
{
	static const struct {
		const char *body;
		int lazy;
	} cases[] = {
		{"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tasks/get\",\"params\":{\"taskId\":\"t1\",\"cursor\":null}}", 1},
		{"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":-5,\"result\":{\"x\":[1,2.5e-3,true,null]}}", 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":7}}", 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1,2]}", 1},
		/* left to the full classification */
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools\\/call\",\"params\":{\"name\":\"e\"}}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"e\\u0000x\"}}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"n\\u0061me\":\"e\"}}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"e\",\"name\":\"f\"}}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"m\"}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-1,\"message\":\"m\"}}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":1}}}", 0},
		{"[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"", 0},
		{"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"j\":10,\"k\":11,\"l\":12,\"m\":13,\"n\":14,\"o\":15,\"p\":16,\"cursor\":17}}", 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mgw_jrpc_msg e = classify(cases[i].body);
		struct mgw_jrpc_msg l = classify_lazy(cases[i].body);

		if (l.lazy != cases[i].lazy)
			fail_msg("case %zu: lazy %d, expected %d", i, l.lazy,
			         cases[i].lazy);
		assert_int_equal(l.kind, e.kind);
		assert_int_equal(l.error_code, e.error_code);
		assert_string_equal(l.error_msg, e.error_msg);
		assert_true(!l.method == !e.method);
		if (l.method)
			assert_string_equal(l.method, e.method);
		assert_true(!l.name == !e.name);
		if (l.name)
			assert_string_equal(l.name, e.name);
		assert_true(!l.task_id == !e.task_id);
		if (l.task_id)
			assert_string_equal(l.task_id, e.task_id);
		assert_int_equal(mgw_jrpc_params_has(&l, "cursor"),
		                 mgw_jrpc_params_has(&e, "cursor"));
		assert_true(!mgw_jrpc_id(&l) == !mgw_jrpc_id(&e));
		if (mgw_jrpc_id(&l))
			assert_true(json_equal(mgw_jrpc_id(&l), mgw_jrpc_id(&e)));
		assert_true(!mgw_jrpc_root(&l) == !mgw_jrpc_root(&e));
		if (mgw_jrpc_root(&l))
			assert_true(json_equal(mgw_jrpc_root(&l), mgw_jrpc_root(&e)));
		mgw_jrpc_msg_deinit(&l);
		mgw_jrpc_msg_deinit(&e);
	}
}

/* The skim itself: valid documents pass, invalid ones and what it leaves
 * to the parse are "unsure"; the path's members are recorded. */
static void test_skim(void **state)
{
	static const char *const path[] = {"params", "_meta"};
	static const char *const unsure[] = {
		"", " ", "{", "{\"a\":}", "{\"a\":1,}", "[1,]", "01", "1.", "-",
		"\"\\x\"", "\"\x01\"", "\"\xC0\xAF\"", "tru", "nul", "{\"a\":1}x",
		"{\"a\":1,\"a\":2}", "{\"\\u0061\":1}", "\"\\uDC00\"",
	};
	struct mgw_json_skim s;
	const struct mgw_json_member *mb;
	const char *ok = "{\"params\":{\"_meta\":{\"v\":\"x\"},\"n\":1e400},\"id\":[{}]}";

	(void)state;
	for (size_t i = 0; i < sizeof(unsure) / sizeof(unsure[0]); i++)
		if (mgw_json_skim(unsure[i], strlen(unsure[i]), 0, path, 2, &s) == 0)
			fail_msg("skim passed %s", unsure[i]);
	assert_int_equal(mgw_json_skim(ok, strlen(ok), 0, path, 2, &s), 0);
	assert_int_equal(s.top, 'o');
	assert_int_equal(s.n[0], 2);
	assert_int_equal(s.n[1], 2);
	mb = mgw_json_skim_get(&s, 1, "n");
	assert_non_null(mb);
	assert_int_equal(mb->type, 'n');
	assert_false(mb->integer);
	mb = mgw_json_skim_get(&s, 2, "v");
	assert_non_null(mb);
	assert_int_equal(mb->vlen, 3);
	/* the depth bound */
	assert_int_not_equal(mgw_json_skim("[[[1]]]", 7, 2, path, 2, &s), 0);
	assert_int_equal(mgw_json_skim("[[[1]]]", 7, 3, path, 2, &s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_tools_call),
		cmocka_unit_test(test_request_names),
		cmocka_unit_test(test_request_task_id),
		cmocka_unit_test(test_notification),
		cmocka_unit_test(test_array_params),
		cmocka_unit_test(test_responses),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_invalid_shapes),
		cmocka_unit_test(test_invalid_keeps_id),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_error_body),
		cmocka_unit_test(test_result_and_notification_body),
		cmocka_unit_test(test_wide_numbers),
		cmocka_unit_test(test_lazy_no_tree_until_asked),
		cmocka_unit_test(test_lazy_same_as_eager),
		cmocka_unit_test(test_skim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
