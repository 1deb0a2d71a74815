/* checks_test.c - unit tests for the request checks' pure parts
 * (src/proxy/checks.c, check_*.c): the table's order and phases, and the
 * "GET/DELETE on the MCP endpoint" test of check_endpoint.c, the
 * repeated-header finder (check_singleton.c), the Origin comparison and
 * its configuration check (check_origin.c), and the
 * worker loop stamps behind /mcpgw/healthz (liveness.c).  Each
 * check's answers are covered by the integration tests (serve_validate.sh,
 * serve_balance.sh, stateful_pin.sh). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http/headers.h"
#include "proxy/checks.h"
#include "proxy/handler.h"
#include "proxy/liveness.h"

static void add(struct mgw_headers *h, const char *n, const char *v)
{
	assert_int_equal(mgw_headers_adds(h, n, v), 0);
}

static void test_mcp_endpoint(void **state)
{
	struct mgw_headers h;

	(void)state;
	mgw_headers_init(&h);
	assert_true(mgw_proxy_is_mcp_endpoint("GET", "/mcp", &h));
	assert_true(mgw_proxy_is_mcp_endpoint("DELETE", "/mcp", NULL));
	/* only GET and DELETE are in question */
	assert_false(mgw_proxy_is_mcp_endpoint("POST", "/mcp", &h));
	assert_false(mgw_proxy_is_mcp_endpoint("OPTIONS", "/mcp", &h));
	/* other GETs pass: OAuth metadata, health pages */
	assert_false(mgw_proxy_is_mcp_endpoint("GET", "/.well-known/oauth-protected-resource", &h));
	assert_false(mgw_proxy_is_mcp_endpoint("GET", "/healthz", NULL));
	assert_false(mgw_proxy_is_mcp_endpoint("DELETE", "/items/3", &h));
	/* ... unless they carry MCP transport signs */
	add(&h, "Accept", "text/event-stream");
	assert_true(mgw_proxy_is_mcp_endpoint("GET", "/", &h));
	assert_false(mgw_proxy_is_mcp_endpoint("DELETE", "/", &h));
	mgw_headers_deinit(&h);
	mgw_headers_init(&h);
	add(&h, "Mcp-Session-Id", "abc");
	assert_true(mgw_proxy_is_mcp_endpoint("DELETE", "/api", &h));
	mgw_headers_deinit(&h);
	mgw_headers_init(&h);
	add(&h, "mcp-protocol-version", "2025-11-25");
	assert_true(mgw_proxy_is_mcp_endpoint("GET", "/api", &h));
	mgw_headers_deinit(&h);
	mgw_headers_init(&h);
	add(&h, "Last-Event-ID", "7");
	assert_true(mgw_proxy_is_mcp_endpoint("GET", "/api", &h));
	mgw_headers_deinit(&h);
}

/* The documented order: repeated headers and Origin first (they cover
 * every page), then the gateway's own endpoints (they answer whatever the
 * mode), authentication first after the route, then SEP-2243
 * validation, the tool policy, the rate limit last; each check names
 * at least one
 * handler. */
/* The position of the check called name in the table (fails if none). */
static size_t pos(const struct mgw_check *const *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i]->name, name) == 0)
			return i;
	fail_msg("no check called %s", name);
	return n;
}

static void test_table_order(void **state)
{
	const struct mgw_check *const *t;
	size_t n, i;
	int routed = 0;

	(void)state;
	t = mgw_checks_table(&n);
	/* refusals that protect everything, before anything answers */
	assert_string_equal(t[0]->name, "singleton-headers");
	assert_string_equal(t[1]->name, "origin");
	for (i = 0; i < 2; i++) {
		assert_int_equal(t[i]->handlers, MGW_H_ALL);
		assert_int_equal(t[i]->phase, MGW_PHASE_REQUEST);
	}
	/* the gateway's own endpoints next: they answer whatever the mode,
	 * the protected resource metadata without a token */
	assert_string_equal(t[2]->name, "protected-resource-metadata");
	assert_string_equal(t[3]->name, "health");
	assert_string_equal(t[4]->name, "admin");
	assert_string_equal(t[5]->name, "metrics");
	for (i = 2; i < 6; i++) {
		assert_int_equal(t[i]->handlers, MGW_H_ALL);
		assert_int_equal(t[i]->phase, MGW_PHASE_REQUEST);
	}
	/* authentication first among the routed checks, for every handler */
	i = pos(t, n, "auth");
	assert_int_equal(t[i]->phase, MGW_PHASE_ROUTED);
	assert_int_equal(t[i]->handlers, MGW_H_ALL);
	assert_true(i < pos(t, n, "sep2243"));
	for (size_t j = 0; j < i; j++)
		assert_int_equal(t[j]->phase, MGW_PHASE_REQUEST);
	i = pos(t, n, "sep2243");
	assert_int_equal(t[i]->phase, MGW_PHASE_ROUTED);
	assert_int_equal(t[i]->handlers, MGW_H_ALL);
	/* the tool policy after the headers were confirmed against the
	 * body, for both handlers (legacy requests in a session too) */
	assert_string_equal(t[n - 4]->name, "policy");
	assert_int_equal(t[n - 4]->phase, MGW_PHASE_ROUTED);
	assert_int_equal(t[n - 4]->handlers, MGW_H_ALL);
	assert_true(pos(t, n, "sep2243") < n - 4);
	/* rate limits after the route, after authentication (the principal
	 * is its key), after validation and the policy (a refused request
	 * takes no token) */
	assert_string_equal(t[n - 3]->name, "rate-limit");
	assert_int_equal(t[n - 3]->phase, MGW_PHASE_ROUTED);
	assert_int_equal(t[n - 3]->handlers, MGW_H_ALL);
	/* task affinity next, on the stateless path: it routes on the task
	 * id sep2243 confirmed against Mcp-Name, and may wait for Redis, so
	 * nothing refused earlier costs a lookup */
	assert_string_equal(t[n - 2]->name, "task-affinity");
	assert_int_equal(t[n - 2]->phase, MGW_PHASE_ROUTED);
	assert_int_equal(t[n - 2]->handlers, MGW_H_STATELESS);
	/* the requestState guard last: a request any other check refuses
	 * does not use up its state */
	assert_string_equal(t[n - 1]->name, "mrtr-single-use");
	assert_int_equal(t[n - 1]->phase, MGW_PHASE_ROUTED);
	assert_int_equal(t[n - 1]->handlers, MGW_H_ALL);
	for (i = 0; i < n; i++) {
		assert_non_null(t[i]->run);
		assert_true(t[i]->handlers != 0);
		/* every REQUEST check comes before every ROUTED one */
		if (t[i]->phase == MGW_PHASE_ROUTED)
			routed = 1;
		else
			assert_false(routed);
	}
	for (i = 0; i < n; i++)
		if (strcmp(t[i]->name, "stateless-endpoint") == 0)
			assert_int_equal(t[i]->handlers, MGW_H_STATELESS);
}

/* Each singleton twice (any case) is found; once each, and repeated
 * fields the gateway does not read, are not. */
static void test_repeated_header(void **state)
{
	static const char *const names[][2] = {
		{"authorization", "Authorization"},
		{"MCP-SESSION-ID", "Mcp-Session-Id"},
		{"mcp-protocol-version", "MCP-Protocol-Version"},
		{"Mcp-Method", "Mcp-Method"},
		{"mcp-name", "Mcp-Name"},
		{"last-event-id", "Last-Event-ID"},
		{"content-length", "Content-Length"},
		{"ORIGIN", "Origin"},
	};
	struct mgw_headers h;

	(void)state;
	mgw_headers_init(&h);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		add(&h, names[i][1], "1");
	add(&h, "Accept", "a");
	add(&h, "accept", "b");
	add(&h, "Mcp-Param-X", "1");
	add(&h, "Mcp-Param-X", "2");
	assert_null(mgw_check_repeated_header(&h));
	mgw_headers_deinit(&h);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		mgw_headers_init(&h);
		add(&h, "Content-Type", "application/json");
		add(&h, names[i][1], "a");
		add(&h, "X-Other", "x");
		add(&h, names[i][0], "a");
		assert_non_null(mgw_check_repeated_header(&h));
		assert_string_equal(mgw_check_repeated_header(&h), names[i][1]);
		mgw_headers_deinit(&h);
	}
}

/* Origins against allowed lists: RFC 6454 comparison and "self". */
static void test_origin_allowed(void **state)
{
	static char *const list[] = {"https://App.Example", "http://h:8080"};
	static char *const self[] = {"self"};
	static const struct {
		const char *origin, *authority;
		char *const *allowed;
		size_t n;
		int want;
	} cases[] = {
		{"https://app.example", NULL, list, 2, 1},
		{"HTTPS://APP.EXAMPLE", NULL, list, 2, 1},
		{"https://app.example:443", NULL, list, 2, 1},
		{"http://h:8080", NULL, list, 2, 1},
		{"http://app.example", NULL, list, 2, 0},
		{"https://app.example:444", NULL, list, 2, 0},
		{"https://app.example.evil", NULL, list, 2, 0},
		{"https://evil.app.example", NULL, list, 2, 0},
		{"http://h", NULL, list, 2, 0},
		{"http://h:8080/", NULL, list, 2, 0},
		{"https://user@app.example", NULL, list, 2, 0},
		{"null", NULL, list, 2, 0},
		{"", NULL, list, 2, 0},
		{"app.example", NULL, list, 2, 0},
		{"http://gw:8080", "gw:8080", self, 1, 1},
		{"http://GW:8080", "gw:8080", self, 1, 1},
		{"https://gw", "gw:443", self, 1, 1},
		{"https://gw:443", "gw", self, 1, 1},
		{"http://gw", "gw:80", self, 1, 1},
		{"http://[::1]:9", "[::1]:9", self, 1, 1},
		{"http://gw:8081", "gw:8080", self, 1, 0},
		{"http://gw", "gw:443", self, 1, 0},
		{"http://other:8080", "gw:8080", self, 1, 0},
		{"http://gw:8080", NULL, self, 1, 0},
		{"null", "gw", self, 1, 0},
		{"https://app.example", NULL, list, 0, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = mgw_origin_allowed(cases[i].origin, cases[i].authority,
		                             cases[i].allowed, cases[i].n);
		if (got != cases[i].want)
			fail_msg("case %zu: '%s' (authority %s): got %d", i,
			         cases[i].origin,
			         cases[i].authority ? cases[i].authority : "-",
			         got);
	}
}

static void test_origin_entry_check(void **state)
{
	static const char *const good[] = {
		"self", "https://app.example", "http://h:8080", "http://[::1]:9",
		"custom+scheme://h",
	};
	static const char *const bad[] = {
		"", "SELF", "*", "null", "app.example", "https://", "https://a/",
		"https://a/path", "https://u@a", "https://a:0", "https://a:65536",
		"https://a:", "https://a?q", "://a", "1http://a", "https://a b",
	};
	char why[128];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (mgw_origin_entry_check(good[i], why, sizeof(why)) != 0)
			fail_msg("'%s' refused: %s", good[i], why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (mgw_origin_entry_check(bad[i], why, sizeof(why)) == 0)
			fail_msg("'%s' accepted", bad[i]);
		assert_true(why[0] != '\0');
	}
}

/* Content-Encoding: any coding but identity, in any field or list
 * element, makes the body unreadable here. */
static void test_content_coded(void **state)
{
	static const struct {
		const char *v1, *v2;
		int coded;
	} rows[] = {
		{NULL, NULL, 0},
		{"identity", NULL, 0},
		{"IDENTITY", NULL, 0},
		{"", NULL, 0},
		{" , ", NULL, 0},
		{"gzip", NULL, 1},
		{"GZip", NULL, 1},
		{"identity, gzip", NULL, 1},
		{"br", NULL, 1},
		{"identity", "deflate", 1},
		{"identity", "identity", 0},
		{"identityx", NULL, 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mgw_headers h;

		mgw_headers_init(&h);
		add(&h, "Content-Type", "application/json");
		if (rows[i].v1)
			add(&h, i % 2 ? "content-encoding" : "Content-Encoding", rows[i].v1);
		if (rows[i].v2)
			add(&h, "Content-Encoding", rows[i].v2);
		if (mgw_body_content_coded(&h) != rows[i].coded)
			fail_msg("row %zu ('%s', '%s'): expected %d", i,
			         rows[i].v1 ? rows[i].v1 : "-",
			         rows[i].v2 ? rows[i].v2 : "-", rows[i].coded);
		mgw_headers_deinit(&h);
	}
	assert_int_equal(mgw_body_content_coded(NULL), 0);
}

/* Which modern POSTs are judged, whatever their Content-Type: those that
 * lean on Mcp-Method / Mcp-Name (route or header) always; others only
 * when their body is JSON.  A BOM'd body reads as JSON. */
static void test_confirm_need(void **state)
{
	static const char *const call =
	        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"add\"}}";
	static const struct {
		const char *body;     /* NULL: the call above */
		const char *ctype;    /* NULL: none */
		const char *method, *name, *coding;
		int route_on_headers;
		enum mgw_confirm want;
	} rows[] = {
		/* the case: BOM, text/plain, Mcp-Name */
		{"\xEF\xBB\xBF", "text/plain", "tools/call", "add", NULL, 1, MGW_CONFIRM_VALIDATE},
		{NULL, "text/plain", "tools/call", "add", NULL, 1, MGW_CONFIRM_VALIDATE},
		{NULL, NULL, "tools/call", "add", NULL, 0, MGW_CONFIRM_VALIDATE},
		{NULL, "application/octet-stream", NULL, NULL, NULL, 0, MGW_CONFIRM_VALIDATE},
		{"garbage", "text/plain", "tools/call", "add", NULL, 1, MGW_CONFIRM_INVALID},
		{"garbage", "text/plain", "tools/call", NULL, NULL, 0, MGW_CONFIRM_INVALID},
		{"garbage", "multipart/form-data; boundary=x", NULL, "add", NULL, 0, MGW_CONFIRM_INVALID},
		{"", NULL, NULL, NULL, NULL, 1, MGW_CONFIRM_INVALID},
		{"[1]", "text/plain", "tools/call", NULL, NULL, 0, MGW_CONFIRM_VALIDATE},
		{"\"x\"", "text/plain", "tools/call", NULL, NULL, 0, MGW_CONFIRM_INVALID},
		{"\x1f\x8b\x08", "application/json", "tools/call", "add", "gzip", 1, MGW_CONFIRM_CODED},
		{NULL, "application/json", "tools/call", "add", "gzip", 1, MGW_CONFIRM_CODED},
		{NULL, "application/json", "tools/call", "add", "identity", 1, MGW_CONFIRM_VALIDATE},
		{"\x1f\x8b\x08", "Application/JSON; charset=utf-8", NULL, NULL, "gzip", 0, MGW_CONFIRM_CODED},
		/* neither MCP headers nor a JSON body: not an MCP message */
		{"a=1&b=2", "application/x-www-form-urlencoded", NULL, NULL, NULL, 0, MGW_CONFIRM_NONE},
		{"", NULL, NULL, NULL, NULL, 0, MGW_CONFIRM_NONE},
		{"\x1f\x8b\x08", "text/plain", NULL, NULL, "gzip", 0, MGW_CONFIRM_NONE},
		/* ... but a JSON type is a JSON body, readable or not */
		{"garbage", "APPLICATION/JSON", NULL, NULL, NULL, 0, MGW_CONFIRM_INVALID},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mgw_headers h;
		struct mgw_jrpc_msg m;
		char body[256];
		enum mgw_confirm got;

		snprintf(body, sizeof(body), "%s%s",
		         rows[i].body ? rows[i].body : call,
		         rows[i].body && !strcmp(rows[i].body, "\xEF\xBB\xBF") ? call : "");
		mgw_headers_init(&h);
		if (rows[i].ctype)
			add(&h, "Content-Type", rows[i].ctype);
		if (rows[i].method)
			add(&h, "Mcp-Method", rows[i].method);
		if (rows[i].name)
			add(&h, "Mcp-Name", rows[i].name);
		if (rows[i].coding)
			add(&h, "Content-Encoding", rows[i].coding);
		assert_int_equal(mgw_jrpc_classify(body, strlen(body), 0, &m), 0);
		got = mgw_confirm_need(&h, &m, rows[i].route_on_headers);
		if (got != rows[i].want)
			fail_msg("row %zu: expected %d, got %d", i, rows[i].want, got);
		mgw_jrpc_msg_deinit(&m);
		mgw_headers_deinit(&h);
	}
}

static void test_liveness(void **state)
{
	struct mgw_liveness *l = mgw_liveness_new(3, 1000);
	size_t first = 99;

	(void)state;
	assert_non_null(l);
	assert_int_equal(mgw_liveness_stale(l, 1000 + MGW_LIVENESS_STALE_MS, &first), 0);
	mgw_liveness_beat(l, 0, 7000);
	mgw_liveness_beat(l, 2, 7000);
	/* worker 1 stamped nothing since 1000 */
	assert_int_equal(mgw_liveness_stale(l, 7000, &first), 1);
	assert_int_equal(first, 1);
	mgw_liveness_beat(l, 1, 7000);
	assert_int_equal(mgw_liveness_stale(l, 7001, &first), 0);
	/* every one stuck: counted, the first named */
	assert_int_equal(mgw_liveness_stale(l, 7001 + MGW_LIVENESS_STALE_MS, &first), 3);
	assert_int_equal(first, 0);
	/* out-of-range slots are ignored; NULL means nothing to check */
	mgw_liveness_beat(l, 3, 1);
	assert_int_equal(mgw_liveness_stale(NULL, 1, &first), 0);
	mgw_liveness_free(l);
	mgw_liveness_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mcp_endpoint),
		cmocka_unit_test(test_table_order),
		cmocka_unit_test(test_liveness),
		cmocka_unit_test(test_content_coded),
		cmocka_unit_test(test_confirm_need),
		cmocka_unit_test(test_repeated_header),
		cmocka_unit_test(test_origin_allowed),
		cmocka_unit_test(test_origin_entry_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
