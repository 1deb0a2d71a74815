/* pipeline_test.c - the request pipeline end to end on one event loop:
 * a real HTTP server layer calling mgw_pipeline_on_request, a real
 * upstream (tests/unit/http/testsrv.c) and a raw HTTP/1 client.  Reaches
 * dispatch, the checks, the stateless handler, the failover policy, the
 * transaction and both relay modes through their seams:
 *   - a small answer is collected and comes back whole, body byte for
 *     byte, the upstream seeing the client's request unchanged;
 *   - a large one and an SSE one stream (chunked), intact;
 *   - GET /mcp in stateless mode is answered 405 by its check, and the
 *     admin check answers GET /mcpgw/stats from loopback;
 *   - /mcpgw/healthz and /mcpgw/readyz are the gateway's own, readyz 503
 *     once no server of the route's group is available;
 *   - a first server refusing connections costs one retry on the other;
 *   - no server at all: the JSON-RPC error carries the request's id;
 *   - a route's tool policy refuses a tools/call before any upstream, and
 *     filter_tools_list removes the denied tool from an unsized (chunked)
 *     tools/list answer, sent with its Content-Length; one larger than
 *     the capture bound streams unfiltered, intact;
 *   - every transaction ends (live back to 0) and is counted. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/config.h"
#include "http/headers.h"
#include "http/server.h"
#include "proxy/errors.h"
#include "proxy/pipeline.h"
#include "proxy/route.h"
#include "proxy/upstream.h"
#include "../http/client_util.h"
#include "../http/testsrv.h"

static char err[512];
static const char *route_keys = ""; /* more keys of the one route */

struct fx {
	struct ts up;               /* the upstream */
	struct ts gw;               /* the gateway's listener (same loop) */
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_routes *routes;
	struct mgw_pipeline *pl;
};

/* The gateway in front of servers (a YAML flow list of {url: ...}). */
static void gw_start(struct fx *f, const char *servers)
{
	char doc[2048];

	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    health: {enabled: false}\n"
	         "    balancer: round_robin\n"
	         "    servers: %s\n"
	         "routes:\n"
	         "  - {upstream: g, retries: 1%s}\n", servers, route_keys);
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	assert_non_null(f->ups);
	f->routes = mgw_routes_new(&f->cfg->serve, f->ups, err, sizeof(err));
	assert_non_null(f->routes);
	f->pl = mgw_pipeline_new(f->up.base, &f->cfg->serve, f->routes, f->ups, 1,
	                         1, err, sizeof(err));
	if (!f->pl)
		fail_msg("pipeline: %s", err);
	memset(&f->gw, 0, sizeof(f->gw));
	f->gw.base = f->up.base;
	mgw_http_limits_default(&f->gw.lim);
	f->gw.srv = mgw_http_server_new(f->up.base, &f->gw.lim,
	                                mgw_pipeline_on_request, f->pl);
	assert_non_null(f->gw.srv);
	mgw_http_server_set_refusal_cb(f->gw.srv, mgw_proxy_refusal_body, NULL);
	assert_int_equal(mgw_http_server_listen(f->gw.srv, "127.0.0.1:0", NULL,
	                                        f->gw.addr, sizeof(f->gw.addr)), 0);
}

static void start(struct fx *f, int dead_first)
{
	char servers[256];

	ts_start(&f->up, NULL, NULL);
	if (dead_first)
		snprintf(servers, sizeof(servers),
		         "[{url: 'http://127.0.0.1:%u'}, {url: 'http://%s'}]",
		         (unsigned)cu_dead_port(), f->up.addr);
	else
		snprintf(servers, sizeof(servers), "[{url: 'http://%s'}]",
		         f->up.addr);
	gw_start(f, servers);
}

static void stop(struct fx *f)
{
	mgw_http_server_free(f->gw.srv);
	assert_int_equal(f->pl->live, 0);
	mgw_pipeline_free(f->pl);
	mgw_routes_free(f->routes);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
	ts_stop(&f->up);
}

/* One request on a fresh connection; r gets the answer. */
static void ask(struct fx *f, const char *req, struct resp *r)
{
	struct tc c;

	tc_open(&f->gw, &c);
	assert_int_equal(tc_sends(&c, req), 0);
	assert_int_equal(tc_response(&c, r), 0);
	tc_close(&c);
	ts_pump(&f->up, 20); /* let the gateway finish its side */
}

static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}";

static char *post(const char *path)
{
	static char req[512];

	snprintf(req, sizeof(req),
	         "POST %s HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\n"
	         "Accept: application/json, text/event-stream\r\n"
	         "Content-Length: %zu\r\n\r\n%s", path, strlen(body), body);
	return req;
}

static void test_collected_answer(void **state)
{
	struct fx f;
	struct resp r;
	char want[256];

	(void)state;
	start(&f, 0);
	ask(&f, post("/echo"), &r);
	assert_int_equal(r.status, 200);
	assert_false(r.chunked);
	snprintf(want, sizeof(want), "POST /echo\n%s", body);
	assert_int_equal(r.blen, strlen(want));
	assert_memory_equal(r.body, want, r.blen);
	assert_string_equal(f.up.last_authority, "gw.test");
	resp_free(&r);
	assert_int_equal(f.pl->st.requests, 1);
	assert_int_equal(f.pl->st.forwarded, 1);
	stop(&f);
}

static void test_streamed_answers(void **state)
{
	struct fx f;
	struct resp r;

	(void)state;
	start(&f, 0);
	ask(&f, "GET /big HTTP/1.1\r\nHost: gw.test\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_true(r.chunked);
	assert_int_equal(r.blen, TS_BIG_BODY);
	for (size_t i = 0; i < r.blen; i++)
		if (r.body[i] != 'b')
			fail_msg("byte %zu changed", i);
	resp_free(&r);
	ask(&f, "GET /sse HTTP/1.1\r\nHost: gw.test\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_true(r.chunked);
	assert_non_null(strstr(resp_header(&r, "content-type"), "text/event-stream"));
	assert_int_equal(f.up.sse_done, 1);
	/* three events, relayed as sent (no stamping on the stateless path) */
	assert_non_null(strstr(r.body, "data:"));
	assert_null(strstr(r.body, "id: 0000"));
	resp_free(&r);
	stop(&f);
}

static void test_checks_answer(void **state)
{
	struct fx f;
	struct resp r;
	int handled;

	(void)state;
	start(&f, 0);
	handled = f.up.handled;
	ask(&f, "GET /mcp HTTP/1.1\r\nHost: gw.test\r\nAccept: application/json\r\n\r\n",
	    &r);
	assert_int_equal(r.status, 405);
	assert_string_equal(resp_header(&r, "allow"), "POST");
	resp_free(&r);
	ask(&f, "GET " MGW_PROXY_STATS_PATH " HTTP/1.1\r\nHost: gw.test\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"mode\""));
	resp_free(&r);
	/* neither reached the upstream */
	assert_int_equal(f.up.handled, handled);
	assert_int_equal(f.pl->st.errors[MGW_PERR_METHOD], 1);
	stop(&f);
}

static void test_health_endpoints(void **state)
{
	struct fx f;
	struct resp r;
	struct mgw_upstream_group *g;
	int handled;

	(void)state;
	start(&f, 0);
	handled = f.up.handled;
	ask(&f, "GET " MGW_PROXY_HEALTHZ_PATH " HTTP/1.1\r\nHost: gw.test\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"status\":\"ok\""));
	resp_free(&r);
	ask(&f, "GET " MGW_PROXY_READYZ_PATH " HTTP/1.1\r\nHost: gw.test\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	g = &f.ups->groups[0];
	for (size_t i = 0; i < g->n_servers; i++)
		mgw_upstream_set_health(&g->servers[i], 0);
	ask(&f, "GET " MGW_PROXY_READYZ_PATH " HTTP/1.1\r\nHost: gw.test\r\n\r\n", &r);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body, "no server available in upstream group g"));
	resp_free(&r);
	/* liveness does not depend on the upstreams */
	ask(&f, "GET " MGW_PROXY_HEALTHZ_PATH " HTTP/1.1\r\nHost: gw.test\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	/* never forwarded */
	assert_int_equal(f.up.handled, handled);
	stop(&f);
}

static void test_retry_on_refused(void **state)
{
	struct fx f;
	struct resp r;

	(void)state;
	start(&f, 1);
	/* round robin from a fixed seed: one of two requests lands first
	 * on the dead server and is retried on the live one */
	for (int i = 0; i < 2; i++) {
		ask(&f, post("/echo"), &r);
		assert_int_equal(r.status, 200);
		resp_free(&r);
	}
	assert_int_equal(f.pl->st.retries, 1);
	assert_int_equal(f.pl->st.forwarded, 2);
	stop(&f);
}

static void test_no_server_error_has_id(void **state)
{
	struct fx f;
	struct resp r;
	char servers[128];

	(void)state;
	ts_start(&f.up, NULL, NULL);
	snprintf(servers, sizeof(servers), "[{url: 'http://127.0.0.1:%u'}]",
	         (unsigned)cu_dead_port());
	gw_start(&f, servers);
	ask(&f, post("/echo"), &r);
	assert_int_equal(r.status, 502);
	assert_non_null(strstr(r.body, "\"id\":7"));
	assert_non_null(strstr(r.body, "-32002"));
	resp_free(&r);
	stop(&f);
}

static char *post_body(const char *path, const char *b)
{
	static char req[1024];

	snprintf(req, sizeof(req),
	         "POST %s HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\n"
	         "Accept: application/json, text/event-stream\r\n"
	         "Content-Length: %zu\r\n\r\n%s", path, strlen(b), b);
	return req;
}

static size_t count(const char *hay, size_t n, const char *needle)
{
	size_t c = 0, l = strlen(needle);

	for (size_t i = 0; i + l <= n; i++)
		if (memcmp(hay + i, needle, l) == 0)
			c++;
	return c;
}

static void test_policy_and_tools_list_filter(void **state)
{
	static const char list[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}";
	struct fx f;
	struct resp r;
	char want[32];

	(void)state;
	route_keys = ", deny_tools: [t1], filter_tools_list: true";
	start(&f, 0);
	ask(&f, post_body("/echo", "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":"
	                  "\"tools/call\",\"params\":{\"name\":\"t1\"}}"), &r);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "\"code\":-32018"));
	assert_non_null(strstr(r.body, "\"id\":\"c1\""));
	assert_int_equal(f.up.handled, 0);
	resp_free(&r);
	/* small and unsized: collected, filtered, sent with its length */
	ask(&f, post_body("/tools?n=3", list), &r);
	assert_int_equal(r.status, 200);
	assert_false(r.chunked);
	snprintf(want, sizeof(want), "%zu", r.blen);
	assert_string_equal(resp_header(&r, "content-length"), want);
	assert_int_equal(count(r.body, r.blen, "{\"name\":"), 2);
	assert_non_null(strstr(r.body, "\"name\":\"t0\""));
	assert_null(strstr(r.body, "\"name\":\"t1\""));
	assert_non_null(strstr(r.body, "\"name\":\"t2\""));
	resp_free(&r);
	/* past the capture bound: streamed as it came, t1 included */
	ask(&f, post_body("/tools?n=1200", list), &r);
	assert_int_equal(r.status, 200);
	assert_true(r.chunked);
	assert_true(r.blen > 1024 * 1024);
	assert_int_equal(count(r.body, r.blen, "{\"name\":"), 1200);
	assert_non_null(strstr(r.body, "\"name\":\"t1\""));
	assert_memory_equal(r.body + r.blen - 3, "]}}", 3);
	resp_free(&r);
	stop(&f);
	route_keys = "";
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collected_answer),
		cmocka_unit_test(test_streamed_answers),
		cmocka_unit_test(test_checks_answer),
		cmocka_unit_test(test_health_endpoints),
		cmocka_unit_test(test_retry_on_refused),
		cmocka_unit_test(test_no_server_error_has_id),
		cmocka_unit_test(test_policy_and_tools_list_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
