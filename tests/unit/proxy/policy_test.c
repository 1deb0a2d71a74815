/* policy_test.c - the per-route tool policy (src/proxy/policy.c,
 * conf_policy.c, policy_filter.c): routes loaded through the whole schema,
 * then a table of messages (method, notification, body name) with the
 * verdict and the list kind that refused; the rules of "policy:" chosen
 * by a constructed principal's scopes and claims (the auth check that
 * sets t->principal is tested end to end elsewhere); the tools/list
 * filter; and the configuration errors with their key paths. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/principal.h"
#include "conf/config.h"
#include "proxy/policy.h"
#include "proxy/policy_filter.h"

static char err[1024];

#define HEAD "upstreams:\n  - name: a\n    servers:\n      - url: http://127.0.0.1:9001\n" \
             "routes:\n  - upstream: a\n"

static struct mgw_config *load(const char *route)
{
	char text[4096];

	snprintf(text, sizeof(text), "%s%s", HEAD, route);
	err[0] = '\0';
	return mgw_config_load_string("t.yaml", text, strlen(text), err,
	                              sizeof(err));
}

static struct mgw_config *load_ok(const char *route)
{
	struct mgw_config *c = load(route);

	if (!c)
		fail_msg("unexpected error: %s", err);
	return c;
}

struct row {
	const char *method;
	int notification;
	const char *name;
	int allowed;
	enum mgw_policy_kind why;  /* when refused */
};

static void run_rows(const char *route, const struct row *rows, size_t n)
{
	struct mgw_config *c = load_ok(route);
	const struct mgw_route_conf *rc = &c->serve.routes[0];
	const struct mgw_policy_lists *l = mgw_policy_select(rc, NULL);

	assert_true(mgw_policy_active(rc));
	for (size_t i = 0; i < n; i++) {
		enum mgw_policy_kind why = (enum mgw_policy_kind)-1;
		int got = mgw_policy_allows(l, rows[i].method, rows[i].notification,
		                            rows[i].name, &why);

		if (got != rows[i].allowed)
			fail_msg("%s row %zu (%s %s): expected %s", route, i,
			         rows[i].method ? rows[i].method : "(response)",
			         rows[i].name ? rows[i].name : "-",
			         rows[i].allowed ? "allowed" : "refused");
		if (!got && why != rows[i].why)
			fail_msg("%s row %zu: refused by kind %d, expected %d", route,
			         i, (int)why, (int)rows[i].why);
	}
	mgw_config_free(c);
}

#define ROWS(route, r) run_rows(route, r, sizeof(r) / sizeof(r[0]))

static void test_deny_tools(void **state)
{
	static const struct row r[] = {
		{"tools/call", 0, "dangerous", 0, MGW_POL_TOOLS},
		{"tools/call", 0, "echo", 1, 0},
		{"tools/call", 0, "Dangerous", 1, 0},     /* exact, case counts */
		{"tools/call", 0, "dangerous2", 1, 0},    /* no prefix for tools */
		{"tools/call", 0, NULL, 1, 0},            /* no name: upstream's */
		{"tools/list", 0, NULL, 1, 0},
		{"prompts/get", 0, "dangerous", 1, 0},    /* another kind */
		{NULL, 0, NULL, 1, 0},                    /* a response */
	};
	(void)state;
	ROWS("    deny_tools: [dangerous]\n", r);
}

static void test_allow_tools(void **state)
{
	static const struct row r[] = {
		{"tools/call", 0, "echo", 1, 0},
		{"tools/call", 0, "add", 1, 0},
		{"tools/call", 0, "whoami", 0, MGW_POL_TOOLS},
		{"tools/call", 0, NULL, 0, MGW_POL_TOOLS}, /* unnamed: not named */
		{"tools/list", 0, NULL, 1, 0},
		{"initialize", 0, NULL, 1, 0},
	};
	static const struct row both[] = {
		{"tools/call", 0, "echo", 0, MGW_POL_TOOLS}, /* deny wins */
		{"tools/call", 0, "add", 1, 0},
	};
	static const struct row empty[] = {
		{"tools/call", 0, "echo", 0, MGW_POL_TOOLS}, /* [] allows none */
		{"tools/list", 0, NULL, 1, 0},
	};
	static const struct row star[] = {
		{"tools/call", 0, "anything", 0, MGW_POL_TOOLS},
		{"tools/call", 0, NULL, 0, MGW_POL_TOOLS},
		{"resources/read", 0, "file:///x", 1, 0},
	};
	(void)state;
	ROWS("    allow_tools: [echo, add]\n", r);
	ROWS("    allow_tools: [echo, add]\n    deny_tools: [echo]\n", both);
	ROWS("    allow_tools: []\n", empty);
	ROWS("    deny_tools: ['*']\n", star);
}

static void test_methods(void **state)
{
	static const struct row r[] = {
		{"tools/call", 0, "echo", 1, 0},
		{"initialize", 0, NULL, 1, 0},
		{"resources/list", 0, NULL, 0, MGW_POL_METHODS},
		{"tools/listx", 0, NULL, 0, MGW_POL_METHODS},
		/* notifications pass the allow list and a '*' ... */
		{"notifications/initialized", 1, NULL, 1, 0},
		/* ... and are refused only when deny_methods names them */
		{"notifications/roots/list_changed", 1, NULL, 0, MGW_POL_METHODS},
		{NULL, 0, NULL, 1, 0},
	};
	static const struct row deny[] = {
		{"tools/call", 0, "echo", 0, MGW_POL_METHODS},
		{"tools/list", 0, NULL, 1, 0},
		{"notifications/cancelled", 1, NULL, 1, 0},
	};
	static const struct row all[] = {
		{"tools/list", 0, NULL, 0, MGW_POL_METHODS},
		{"ping", 0, NULL, 0, MGW_POL_METHODS},
		{"notifications/initialized", 1, NULL, 1, 0},  /* '*' is not a name */
	};
	(void)state;
	ROWS("    allow_methods: [initialize, tools/call]\n"
	     "    deny_methods: [notifications/roots/list_changed]\n", r);
	ROWS("    deny_methods: [tools/call]\n", deny);
	ROWS("    deny_methods: ['*']\n", all);
}

static void test_prompts_resources(void **state)
{
	static const struct row r[] = {
		{"prompts/get", 0, "summary", 1, 0},
		{"prompts/get", 0, "secret", 0, MGW_POL_PROMPTS},
		{"resources/read", 0, "file:///public/a.txt", 1, 0},
		{"resources/read", 0, "file:///public/", 1, 0},
		{"resources/read", 0, "file:///public", 0, MGW_POL_RESOURCES},
		{"resources/read", 0, "file:///public/private/k", 0, MGW_POL_RESOURCES},
		{"resources/read", 0, "https://x", 0, MGW_POL_RESOURCES},
		{"resources/read", 0, "db://exact", 1, 0},
		{"resources/read", 0, "db://exactly", 0, MGW_POL_RESOURCES},
		{"resources/list", 0, NULL, 1, 0},
	};
	(void)state;
	ROWS("    deny_prompts: [secret]\n"
	     "    allow_resources: ['file:///public/*', 'db://exact']\n"
	     "    deny_resources: ['file:///public/private/*']\n", r);
}

static struct mgw_principal *principal(const char *scopes, const char *tenant)
{
	struct mgw_principal *p = mgw_principal_new(MGW_PRINCIPAL_JWT, "alice",
	                                            "client-1");
	char buf[256], *tok, *save = NULL;

	assert_non_null(p);
	snprintf(buf, sizeof(buf), "%s", scopes);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		assert_int_equal(mgw_principal_add_scope(p, tok, strlen(tok)), 0);
	p->claims = tenant ? json_pack("{s:s, s:s, s:i}", "sub", "alice",
	                               "tenant", tenant, "level", 3)
	                   : json_pack("{s:s}", "sub", "alice");
	return p;
}

static void test_rules(void **state)
{
	struct mgw_config *c = load_ok(
		"    deny_tools: ['*']\n"
		"    policy:\n"
		"      - when: {scopes: [admin], claims: {tenant: acme, level: '3'}}\n"
		"        deny_tools: [rm]\n"
		"      - when: {scopes: [tools, read]}\n"
		"        allow_tools: [echo]\n"
		"      - when: {claims: {tenant: beta}}\n"
		"        allow_tools: [add]\n");
	const struct mgw_route_conf *rc = &c->serve.routes[0];
	struct mgw_principal *admin = principal("admin", "acme");
	struct mgw_principal *admin_other = principal("admin tools read", "other");
	struct mgw_principal *reader = principal("read tools", NULL);
	struct mgw_principal *half = principal("tools", NULL);
	struct mgw_principal *beta = principal("", "beta");
	enum mgw_policy_kind why;

	(void)state;
	assert_int_equal(rc->n_policy_rules, 3);
	/* no principal: no rule with scopes or claims holds -> route lists */
	assert_ptr_equal(mgw_policy_select(rc, NULL), &rc->policy);
	assert_false(mgw_policy_allows(mgw_policy_select(rc, NULL), "tools/call",
	                               0, "echo", &why));
	/* every scope and every claim (a number claim as JSON writes it) */
	assert_ptr_equal(mgw_policy_select(rc, admin), &rc->policy_rules[0].lists);
	assert_true(mgw_policy_allows(mgw_policy_select(rc, admin), "tools/call",
	                              0, "echo", &why));
	assert_false(mgw_policy_allows(mgw_policy_select(rc, admin), "tools/call",
	                               0, "rm", &why));
	/* the claim differs: the next rule whose scopes are all granted */
	assert_ptr_equal(mgw_policy_select(rc, admin_other),
	                 &rc->policy_rules[1].lists);
	assert_ptr_equal(mgw_policy_select(rc, reader), &rc->policy_rules[1].lists);
	assert_true(mgw_policy_allows(mgw_policy_select(rc, reader), "tools/call",
	                              0, "echo", &why));
	assert_false(mgw_policy_allows(mgw_policy_select(rc, reader), "tools/call",
	                               0, "add", &why));
	/* one scope missing: no rule -> the route's deny everything */
	assert_ptr_equal(mgw_policy_select(rc, half), &rc->policy);
	assert_ptr_equal(mgw_policy_select(rc, beta), &rc->policy_rules[2].lists);
	mgw_principal_free(admin);
	mgw_principal_free(admin_other);
	mgw_principal_free(reader);
	mgw_principal_free(half);
	mgw_principal_free(beta);
	mgw_config_free(c);

	/* a rule with an empty when holds for everyone, even without auth */
	c = load_ok("    policy:\n      - deny_tools: [add]\n");
	rc = &c->serve.routes[0];
	assert_true(mgw_policy_active(rc));
	assert_false(rc->policy.any);
	assert_ptr_equal(mgw_policy_select(rc, NULL), &rc->policy_rules[0].lists);
	assert_false(mgw_policy_allows(mgw_policy_select(rc, NULL), "tools/call",
	                               0, "add", &why));
	mgw_config_free(c);

	/* no policy keys: inactive */
	c = load_ok("    retries: 1\n");
	assert_false(mgw_policy_active(&c->serve.routes[0]));
	mgw_config_free(c);
}

static void test_filter(void **state)
{
	struct mgw_config *c = load_ok("    deny_tools: [add, rm]\n"
	                               "    filter_tools_list: true\n");
	const struct mgw_policy_lists *l = mgw_policy_select(&c->serve.routes[0], NULL);
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":["
		"{\"name\":\"echo\",\"description\":\"caf\xc3\xa9 \\u00e9\"},"
		"{\"name\":\"add\"},{\"name\":\"rm\"},{\"name\":\"whoami\"}],"
		"\"nextCursor\":\"c2\",\"_meta\":{\"z\":1,\"a\":2}}}";
	const char *kept = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":["
	                   "{\"name\":\"echo\",\"description\":\"caf\xc3\xa9 \xc3\xa9\"},"
	                   "{\"name\":\"whoami\"}],\"nextCursor\":\"c2\","
	                   "\"_meta\":{\"z\":1,\"a\":2}}}";
	const char *nothing = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":"
	                      "[{\"name\":\"echo\"}]}}";
	const char *wide = "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234,"
	                   "\"result\":{\"tools\":[{\"name\":\"rm\"},{\"name\":"
	                   "\"echo\",\"inputSchema\":{\"maximum\":1e400}}]}}";
	const char *wide_kept = "{\"jsonrpc\":\"2.0\",\"id\":"
	                        "123456789012345678901234,\"result\":{\"tools\":"
	                        "[{\"name\":\"echo\",\"inputSchema\":"
	                        "{\"maximum\":1e400}}]}}";
	char *out;
	size_t n;

	(void)state;
	assert_true(c->serve.routes[0].filter_tools_list);
	assert_int_equal(mgw_policy_filter_tools(l, body, strlen(body), &out, &n), 1);
	assert_int_equal(n, strlen(kept));
	assert_string_equal(out, kept);
	free(out);
	/* nothing denied, an error answer, junk: unchanged */
	assert_int_equal(mgw_policy_filter_tools(l, nothing, strlen(nothing), &out,
	                                         &n), 0);
	assert_null(out);
	assert_int_equal(mgw_policy_filter_tools(l, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	                 "\"error\":{\"code\":1,\"message\":\"x\"}}", 50, &out, &n), 0);
	assert_int_equal(mgw_policy_filter_tools(l, "{\"result\":", 10, &out, &n), 0);
	assert_int_equal(mgw_policy_filter_tools(l, "{\"result\":{\"tools\":[],"
	                 "\"tools\":[]}}", 30, &out, &n), 0);
	/* numbers no double holds are filtered around and kept as written */
	assert_int_equal(mgw_policy_filter_tools(l, wide, strlen(wide), &out, &n), 1);
	assert_string_equal(out, wide_kept);
	free(out);
	mgw_config_free(c);
}

static void expect_error(const char *route, const char *msg)
{
	struct mgw_config *c = load(route);

	if (c) {
		mgw_config_free(c);
		fail_msg("accepted: %s", route);
	}
	if (!strstr(err, msg))
		fail_msg("for:\n%s\nexpected: %s\n     got: %s", route, msg, err);
}

static void test_config_errors(void **state)
{
	(void)state;
	expect_error("    deny_tools: tool\n",
	             "t.yaml:7:17: routes[0].deny_tools: expected a list of strings");
	expect_error("    allow_tools: ['']\n",
	             "t.yaml:7:19: routes[0].allow_tools[0]: must be 1 to 1024 bytes long");
	expect_error("    deny_methodz: [x]\n",
	             "routes[0].deny_methodz: unknown key");
	expect_error("    policy:\n      - when: {scopes: [a]}\n",
	             "routes[0].policy[0]: a policy rule needs at least one allow_* or deny_* list");
	expect_error("    policy:\n      - when: {claims: [a]}\n        deny_tools: [x]\n",
	             "routes[0].policy[0].when.claims: expected a mapping of strings");
	expect_error("    policy:\n      - when: {claims: {a: {b: c}}}\n        deny_tools: [x]\n",
	             "routes[0].policy[0].when.claims.a: expected a string");
	expect_error("    policy:\n      - when: {claims: {a: b, a: c}}\n        deny_tools: [x]\n",
	             "routes[0].policy[0].when.claims.a: duplicate key");
	expect_error("    policy:\n      - when: {roles: [a]}\n        deny_tools: [x]\n",
	             "routes[0].policy[0].when.roles: unknown key");
	expect_error("    filter_tools_list: maybe\n",
	             "routes[0].filter_tools_list:");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deny_tools),
		cmocka_unit_test(test_allow_tools),
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_prompts_resources),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
