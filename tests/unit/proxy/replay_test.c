/* replay_test.c - the replay judgement (src/proxy/replay.c) as a table of
 * request bodies, and a group's replay-safe tools: learned from tools/list
 * results (JSON and SSE), replaced by the latest, merged by a later page,
 * bounded, expiring. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/errors.h"
#include "mcp/jsonrpc.h"
#include "proxy/conf_serve-t.h"
#include "proxy/replay.h"

/* A tool source that knows only "safe_tool". */
static int only_safe_tool(const void *arg, const char *name, size_t len)
{
	(void)arg;
	return len == 9 && memcmp(name, "safe_tool", 9) == 0;
}

struct jrow {
	const char *what;
	const char *body;           /* NULL: GET / DELETE */
	int route;
	enum mgw_replay_verdict want;
};

static const struct jrow jrows[] = {
	{"GET", NULL, MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"tools/list", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"prompts/list", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/list\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"resources/list", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"resources/templates/list",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/templates/list\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"server/discover", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"tasks/get", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\","
	 "\"params\":{\"taskId\":\"t1\"}}", MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"resources/read", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\","
	 "\"params\":{\"uri\":\"x:/a\"}}", MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"prompts/get", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\","
	 "\"params\":{\"name\":\"p\"}}", MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"ping", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
	{"tasks/update: not safe",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/update\","
	 "\"params\":{\"taskId\":\"t1\"}}", MGW_REPLAY_SAFE, MGW_REPLAY_NO_METHOD},
	{"tasks/cancel: not safe",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/cancel\","
	 "\"params\":{\"taskId\":\"t1\"}}", MGW_REPLAY_SAFE, MGW_REPLAY_NO_METHOD},
	{"completion/complete: not safe",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"completion/complete\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_NO_METHOD},
	{"tasks/get with requestState",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\","
	 "\"params\":{\"taskId\":\"t1\",\"requestState\":\"abc\"}}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_NO_STATE},
	{"tools/call with inputResponses",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	 "\"params\":{\"name\":\"safe_tool\",\"inputResponses\":{}}}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_NO_STATE},
	{"requestState on a replay: always route",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	 "\"params\":{\"name\":\"x\",\"requestState\":\"abc\"}}",
	 MGW_REPLAY_ALWAYS, MGW_REPLAY_OK_ROUTE},
	{"tools/call of a known safe tool",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	 "\"params\":{\"name\":\"safe_tool\"}}", MGW_REPLAY_SAFE, MGW_REPLAY_OK_TOOL},
	{"tools/call of another tool",
	 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	 "\"params\":{\"name\":\"other\"}}", MGW_REPLAY_SAFE, MGW_REPLAY_NO_TOOL},
	{"a batch", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
	 MGW_REPLAY_SAFE, MGW_REPLAY_NO_BATCH},
	{"not JSON-RPC", "{\"id\":1", MGW_REPLAY_SAFE, MGW_REPLAY_NO_UNREAD},
	{"a notification", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}",
	 MGW_REPLAY_SAFE, MGW_REPLAY_OK_METHOD},
};

static void test_judge(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(jrows) / sizeof(jrows[0]); i++) {
		const struct jrow *r = &jrows[i];
		struct mgw_jrpc_msg m;
		enum mgw_replay_verdict v;

		memset(&m, 0, sizeof(m));
		if (r->body)
			assert_int_equal(mgw_jrpc_classify((const unsigned char *)r->body,
			                                   strlen(r->body), 64, &m), 0);
		v = mgw_replay_judge(r->body ? &m : NULL, r->route, only_safe_tool,
		                     NULL);
		if (v != r->want)
			fail_msg("%s: verdict %d, want %d", r->what, (int)v, (int)r->want);
		if (r->body)
			mgw_jrpc_msg_deinit(&m);
	}
}

static void test_refusal_msg(void **state)
{
	struct mgw_jrpc_msg m;
	const char *b = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	                "\"params\":{\"name\":\"counter_create\"}}";
	char msg[320];

	(void)state;
	assert_int_equal(mgw_jrpc_classify((const unsigned char *)b, strlen(b),
	                                   64, &m), 0);
	mgw_replay_refusal_msg(MGW_REPLAY_NO_TOOL, &m, msg, sizeof(msg));
	assert_non_null(strstr(msg, "not replayed"));
	assert_non_null(strstr(msg, "'counter_create'"));
	mgw_replay_refusal_msg(MGW_REPLAY_NO_STATE, &m, msg, sizeof(msg));
	assert_non_null(strstr(msg, "requestState"));
	mgw_jrpc_msg_deinit(&m);
}

static json_t *tools_result(const char *json)
{
	json_t *v = json_loads(json, 0, NULL);

	assert_non_null(v);
	return v;
}

static void test_tools_learn(void **state)
{
	struct mgw_replay_group g;
	json_t *r;

	(void)state;
	assert_int_equal(mgw_replay_group_init(&g), 0);
	assert_false(mgw_replay_tools_safe(&g.tools, "a", 1, 1000));
	r = tools_result("{\"tools\":[{\"name\":\"a\",\"annotations\":{\"readOnlyHint\":true}},"
	                 "{\"name\":\"b\",\"annotations\":{\"idempotentHint\":true,"
	                 "\"destructiveHint\":true}},"
	                 "{\"name\":\"c\",\"annotations\":{\"readOnlyHint\":false}},"
	                 "{\"name\":\"d\",\"annotations\":{\"readOnlyHint\":\"true\"}},"
	                 "{\"name\":\"e\"}]}");
	assert_int_equal(mgw_replay_tools_learn(&g.tools, r, 0, 1000), 0);
	json_decref(r);
	assert_true(mgw_replay_tools_safe(&g.tools, "a", 1, 1000));
	assert_true(mgw_replay_tools_safe(&g.tools, "b", 1, 1000));
	assert_false(mgw_replay_tools_safe(&g.tools, "c", 1, 1000));
	assert_false(mgw_replay_tools_safe(&g.tools, "d", 1, 1000)); /* not the literal */
	assert_false(mgw_replay_tools_safe(&g.tools, "e", 1, 1000));
	assert_int_equal(mgw_replay_tools_count(&g.tools, 1000), 2);
	/* a later page adds */
	r = tools_result("{\"tools\":[{\"name\":\"f\",\"annotations\":{\"readOnlyHint\":true}}]}");
	assert_int_equal(mgw_replay_tools_learn(&g.tools, r, 1, 1001), 0);
	json_decref(r);
	assert_true(mgw_replay_tools_safe(&g.tools, "a", 1, 1001));
	assert_true(mgw_replay_tools_safe(&g.tools, "f", 1, 1001));
	/* the latest first page replaces: "a" lost its annotation */
	r = tools_result("{\"tools\":[{\"name\":\"a\",\"annotations\":{}},"
	                 "{\"name\":\"b\",\"annotations\":{\"idempotentHint\":true}}]}");
	assert_int_equal(mgw_replay_tools_learn(&g.tools, r, 0, 2000), 0);
	json_decref(r);
	assert_false(mgw_replay_tools_safe(&g.tools, "a", 1, 2000));
	assert_false(mgw_replay_tools_safe(&g.tools, "f", 1, 2000));
	assert_true(mgw_replay_tools_safe(&g.tools, "b", 1, 2000));
	/* expiry */
	assert_true(mgw_replay_tools_safe(&g.tools, "b", 1, 2000 + MGW_REPLAY_TOOLS_TTL_MS));
	assert_false(mgw_replay_tools_safe(&g.tools, "b", 1,
	                                   2001 + MGW_REPLAY_TOOLS_TTL_MS));
	assert_int_equal(mgw_replay_tools_count(&g.tools, 2001 + MGW_REPLAY_TOOLS_TTL_MS), 0);
	/* no tools array */
	r = tools_result("{\"x\":1}");
	assert_int_equal(mgw_replay_tools_learn(&g.tools, r, 0, 3000), MGW_EINVAL);
	json_decref(r);
	mgw_replay_group_deinit(&g);
}

static void test_tools_sse_and_bounds(void **state)
{
	struct mgw_replay_group g;
	const char *sse = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":"
	                  "{\"tools\":[{\"name\":\"s\",\"annotations\":"
	                  "{\"readOnlyHint\":true}}]}}\n\n";
	json_t *tools = json_array(), *r;
	char name[MGW_REPLAY_TOOL_NAME_MAX + 2];

	(void)state;
	assert_int_equal(mgw_replay_group_init(&g), 0);
	assert_int_equal(mgw_replay_tools_learn_body(&g.tools, sse, strlen(sse), 1,
	                                             64, 0, 10), 0);
	assert_true(mgw_replay_tools_safe(&g.tools, "s", 1, 10));
	/* more names than kept, and one too long: bounded, never a failure */
	for (int i = 0; i < MGW_REPLAY_TOOLS_MAX + 50; i++) {
		snprintf(name, sizeof(name), "tool_%05d", i);
		json_array_append_new(tools, json_pack("{s:s, s:{s:b}}", "name", name,
		                                       "annotations", "readOnlyHint", 1));
	}
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	json_array_append_new(tools, json_pack("{s:s, s:{s:b}}", "name", name,
	                                       "annotations", "idempotentHint", 1));
	r = json_pack("{s:o}", "tools", tools);
	assert_int_equal(mgw_replay_tools_learn(&g.tools, r, 0, 20), 0);
	json_decref(r);
	assert_int_equal(mgw_replay_tools_count(&g.tools, 20), MGW_REPLAY_TOOLS_MAX);
	assert_true(mgw_replay_tools_safe(&g.tools, "tool_00000", 10, 20));
	assert_false(mgw_replay_tools_safe(&g.tools, name, strlen(name), 20));
	assert_true(g.tools.bytes <= MGW_REPLAY_TOOLS_BYTES);
	mgw_replay_group_deinit(&g);
}

static void test_carry(void **state)
{
	struct mgw_replay_group a, b;
	json_t *r = tools_result("{\"tools\":[{\"name\":\"k\",\"annotations\":"
	                         "{\"readOnlyHint\":true}}]}");

	(void)state;
	assert_int_equal(mgw_replay_group_init(&a), 0);
	assert_int_equal(mgw_replay_group_init(&b), 0);
	assert_int_equal(mgw_replay_tools_learn(&a.tools, r, 0, 5), 0);
	json_decref(r);
	atomic_store(&a.replayed, 3);
	mgw_replay_group_carry(&b, &a);
	assert_true(mgw_replay_tools_safe(&b.tools, "k", 1, 6));
	assert_int_equal(atomic_load(&b.replayed), 3);
	mgw_replay_group_deinit(&a);
	mgw_replay_group_deinit(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_refusal_msg),
		cmocka_unit_test(test_tools_learn),
		cmocka_unit_test(test_tools_sse_and_bounds),
		cmocka_unit_test(test_carry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
