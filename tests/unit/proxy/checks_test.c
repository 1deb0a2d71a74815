/* checks_test.c - unit tests for the request checks' pure parts
 * (src/proxy/checks.c, check_*.c): the table's order and phases, and the
 * "GET/DELETE on the MCP endpoint" test of check_endpoint.c, and the
 * worker loop stamps behind /mcpgw/healthz (liveness.c).  Each
 * check's answers are covered by the integration tests (serve_validate.sh,
 * serve_balance.sh, stateful_pin.sh). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

/* The documented order: admin endpoint first (it answers whatever the
 * mode), SEP-2243 validation last and after the route; each check names
 * at least one handler. */
static void test_table_order(void **state)
{
	const struct mgw_check *const *t;
	size_t n, i;
	int routed = 0;

	(void)state;
	t = mgw_checks_table(&n);
	assert_int_equal(n, 6);
	/* the gateway's own endpoints first: they answer whatever the mode */
	assert_string_equal(t[0]->name, "health");
	assert_int_equal(t[0]->handlers, MGW_H_ALL);
	assert_string_equal(t[1]->name, "admin");
	assert_int_equal(t[1]->handlers, MGW_H_ALL);
	assert_string_equal(t[2]->name, "metrics");
	assert_int_equal(t[2]->handlers, MGW_H_ALL);
	assert_int_equal(t[2]->phase, MGW_PHASE_REQUEST);
	assert_string_equal(t[n - 1]->name, "sep2243");
	assert_int_equal(t[n - 1]->phase, MGW_PHASE_ROUTED);
	assert_int_equal(t[n - 1]->handlers, MGW_H_STATELESS);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
