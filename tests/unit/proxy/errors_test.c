/* errors_test.c - unit tests for src/proxy/errors.c: the table of the
 * gateway's own error codes, the JSON-RPC / plain-text choice, the id
 * echoed, and the bodies built. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "mcp/jsonrpc.h"
#include "proxy/errors.h"

static void test_table(void **state)
{
	static const struct {
		enum mgw_proxy_error e;
		int code, status;
	} want[] = {
		{MGW_PERR_NO_UPSTREAM, -32001, 503},
		{MGW_PERR_CONNECT, -32002, 502},
		{MGW_PERR_TIMEOUT, -32003, 504},
		{MGW_PERR_TOO_LARGE, -32004, 413},
		{MGW_PERR_UPSTREAM, -32005, 502},
		{MGW_PERR_NO_ROUTE, -32006, 404},
		{MGW_PERR_METHOD, -32007, 405},
		{MGW_PERR_OVERLOADED, -32008, 503},
		{MGW_PERR_INTERNAL, -32009, 500},
		{MGW_PERR_NOT_REPLAYED, -32010, 502},
		{MGW_PERR_SESSION_NOT_FOUND, -32011, 404},
		{MGW_PERR_SESSION_LOST, -32012, 404},
		{MGW_PERR_SESSION_STORE, -32013, 503},
		{MGW_PERR_SESSION_REQUIRED, -32014, 400},
		{MGW_PERR_ORIGIN, -32015, 403},
		{MGW_PERR_BAD_HEADER, -32016, 400},
		{MGW_PERR_UNAUTHORIZED, -32017, 401},
		{MGW_PERR_FORBIDDEN, -32018, 403},
		{MGW_PERR_RATE_LIMITED, -32019, 429},
		{MGW_PERR_STATE_REUSED, -31023, 409},
		{MGW_PERR_STATE_STORE, -31024, 503},
	};

	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), MGW_PERR_N);
	for (size_t i = 0; i < MGW_PERR_N; i++) {
		const struct mgw_proxy_error_info *in = mgw_proxy_error_info(want[i].e);

		assert_int_equal(in->code, want[i].code);
		assert_int_equal(in->status, want[i].status);
		/* ours: below MCP's -32020..-32099 in JSON-RPC's server
		 * range, or application-defined -31000..-31099 (outside
		 * every range JSON-RPC and MCP reserve) */
		assert_true((in->code <= -32000 && in->code >= -32019) ||
		            (in->code <= -31000 && in->code >= -31099));
		assert_non_null(in->name);
		assert_true(strlen(in->message) > 0);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(mgw_proxy_error_info(want[j].e)->code,
			                     in->code);
	}
	/* out of range falls back to the internal error, never crashes */
	assert_int_equal(mgw_proxy_error_info((enum mgw_proxy_error)999)->code,
	                 -32009);
}

static void classify(const char *body, struct mgw_jrpc_msg *m)
{
	assert_int_equal(mgw_jrpc_classify(body, strlen(body), 0, m), 0);
}

static void test_wants_jsonrpc(void **state)
{
	struct mgw_jrpc_msg m;

	(void)state;
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}", &m);
	assert_true(mgw_proxy_wants_jsonrpc(&m, NULL, NULL, 30));
	mgw_jrpc_msg_deinit(&m);
	/* a form body is not JSON and not declared JSON: plain text */
	classify("a=1&b=2", &m);
	assert_false(mgw_proxy_wants_jsonrpc(&m, "application/x-www-form-urlencoded",
	                                      "application/json", 7));
	/* declared JSON even if broken: the client reads JSON */
	assert_true(mgw_proxy_wants_jsonrpc(&m, "Application/JSON; charset=utf-8",
	                                     NULL, 7));
	mgw_jrpc_msg_deinit(&m);
	assert_false(mgw_proxy_wants_jsonrpc(NULL, "application/json-seq", NULL, 3));
	/* bodiless: decided by Accept, as MCP clients list application/json */
	assert_true(mgw_proxy_wants_jsonrpc(NULL, NULL,
	                                     "application/json, text/event-stream", 0));
	assert_true(mgw_proxy_wants_jsonrpc(NULL, NULL,
	                                     "text/event-stream,application/json;q=0.5", 0));
	assert_false(mgw_proxy_wants_jsonrpc(NULL, NULL, "text/event-stream", 0));
	assert_false(mgw_proxy_wants_jsonrpc(NULL, NULL, "text/html,*/*", 0));
	assert_false(mgw_proxy_wants_jsonrpc(NULL, NULL, "application/jsonx", 0));
	assert_false(mgw_proxy_wants_jsonrpc(NULL, NULL, NULL, 0));
	/* Accept does not count when there was a (non-JSON) body */
	assert_false(mgw_proxy_wants_jsonrpc(NULL, "text/plain", "application/json", 5));
}

static void test_reply_id(void **state)
{
	struct mgw_jrpc_msg m;

	(void)state;
	assert_null(mgw_proxy_reply_id(NULL));
	classify("{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"tools/call\"}", &m);
	assert_non_null(mgw_proxy_reply_id(&m));
	assert_string_equal(json_string_value(mgw_proxy_reply_id(&m)), "r-1");
	mgw_jrpc_msg_deinit(&m);
	/* notifications have no id to echo */
	classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}", &m);
	assert_null(mgw_proxy_reply_id(&m));
	mgw_jrpc_msg_deinit(&m);
	/* a client-sent response is not a request: null */
	classify("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", &m);
	assert_null(mgw_proxy_reply_id(&m));
	mgw_jrpc_msg_deinit(&m);
	/* invalid but with a usable id: echo it */
	classify("{\"jsonrpc\":\"1.0\",\"id\":9,\"method\":\"x\"}", &m);
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	assert_non_null(mgw_proxy_reply_id(&m));
	assert_int_equal(json_integer_value(mgw_proxy_reply_id(&m)), 9);
	mgw_jrpc_msg_deinit(&m);
}

/* Parses a reply body and checks the JSON-RPC error shape. */
static json_t *parse_error_body(const struct mgw_proxy_reply *r, int code)
{
	json_error_t je;
	json_t *o = json_loadb(r->body, r->len, 0, &je);
	json_t *err;

	if (!o)
		fail_msg("not JSON: %.*s", (int)r->len, r->body);
	assert_string_equal(json_string_value(json_object_get(o, "jsonrpc")), "2.0");
	err = json_object_get(o, "error");
	assert_non_null(err);
	assert_int_equal(json_integer_value(json_object_get(err, "code")), code);
	return o;
}

static void test_json_bodies(void **state)
{
	struct mgw_proxy_reply r;
	struct mgw_jrpc_msg m;
	json_t *o;

	(void)state;
	classify("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\"}", &m);
	assert_int_equal(mgw_proxy_reply_error(&r, MGW_PERR_NO_UPSTREAM, NULL, 1,
	                                       mgw_proxy_reply_id(&m)), 0);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.content_type, "application/json");
	o = parse_error_body(&r, -32001);
	assert_int_equal(json_integer_value(json_object_get(o, "id")), 42);
	assert_string_equal(json_string_value(json_object_get(json_object_get(o, "error"),
	                                                      "message")),
	                    "no healthy upstream server");
	json_decref(o);
	mgw_proxy_reply_deinit(&r);
	mgw_jrpc_msg_deinit(&m);

	/* detail replaces the default message; null id when none */
	assert_int_equal(mgw_proxy_reply_error(&r, MGW_PERR_TIMEOUT,
	                                       "upstream timeout: first byte", 1,
	                                       NULL), 0);
	assert_int_equal(r.status, 504);
	o = parse_error_body(&r, -32003);
	assert_true(json_is_null(json_object_get(o, "id")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(o, "error"),
	                                                      "message")),
	                    "upstream timeout: first byte");
	json_decref(o);
	mgw_proxy_reply_deinit(&r);

	/* explicit status/code with data (a -32022 with its supported list) */
	{
		json_t *id = json_string("q");
		json_t *data = json_pack("{s:[s],s:s}", "supported", "2026-07-28",
		                         "requested", "2099-01-01");

		assert_int_equal(mgw_proxy_reply_build(&r, 400, -32022, "unsupported",
		                                       data, 1, id), 0);
		assert_int_equal(r.status, 400);
		o = parse_error_body(&r, -32022);
		assert_string_equal(json_string_value(json_object_get(o, "id")), "q");
		assert_string_equal(json_string_value(json_object_get(
			json_object_get(json_object_get(o, "error"), "data"), "requested")),
			"2099-01-01");
		json_decref(o);
		mgw_proxy_reply_deinit(&r);
		json_decref(id);
	}
}

static void test_plain_text(void **state)
{
	struct mgw_proxy_reply r;
	json_t *data = json_pack("{s:i}", "x", 1);

	(void)state;
	assert_int_equal(mgw_proxy_reply_error(&r, MGW_PERR_METHOD,
	                                       "only POST is served", 0, NULL), 0);
	assert_int_equal(r.status, 405);
	assert_string_equal(r.content_type, "text/plain; charset=utf-8");
	assert_int_equal(r.len, strlen(r.body));
	assert_string_equal(r.body, "405 Method Not Allowed: only POST is served\n");
	mgw_proxy_reply_deinit(&r);
	/* data is released on the text path (ASan would report a leak) */
	assert_int_equal(mgw_proxy_reply_build(&r, 502, -32002, "x", data, 0, NULL), 0);
	assert_string_equal(r.body, "502 Bad Gateway: x\n");
	mgw_proxy_reply_deinit(&r);
	assert_null(r.body);
	mgw_proxy_reply_deinit(&r); /* twice is fine */
	mgw_proxy_reply_deinit(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_wants_jsonrpc),
		cmocka_unit_test(test_reply_id),
		cmocka_unit_test(test_json_bodies),
		cmocka_unit_test(test_plain_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
