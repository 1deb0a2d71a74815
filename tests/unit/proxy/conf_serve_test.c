/* conf_serve_test.c - unit tests for the `mcpgw serve` sections
 * (src/proxy/conf_serve.c, conf_upstreams.c, conf_routes.c) loaded
 * through the whole schema (src/conf/config.c): defaults, every key
 * parsed, the default route, the cross-checks with their exact
 * FILE:LINE:COLUMN messages, the shipped examples conf/serve.yaml
 * (documented defaults) and serve-minimal.yaml, the command-line helper
 * mgw_config_serve_urls and the enum parsers. */
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
#include "core/errors.h"

static char err[1024];

static struct mgw_config *load(const char *text)
{
	err[0] = '\0';
	return mgw_config_load_string("t.yaml", text, strlen(text), err,
	                              sizeof(err));
}

static struct mgw_config *load_ok(const char *text)
{
	struct mgw_config *c = load(text);

	if (!c)
		fail_msg("unexpected error: %s", err);
	return c;
}

static void expect_error(const char *text, const char *msg)
{
	struct mgw_config *c = load(text);

	if (c) {
		mgw_config_free(c);
		fail_msg("accepted: %s", text);
	}
	if (strcmp(err, msg) != 0)
		fail_msg("for:\n%s\nexpected: %s\n     got: %s", text, msg, err);
}

#define UP1 "upstreams:\n  - name: a\n    servers:\n      - url: http://127.0.0.1:9001\n"

/* ---- defaults ---- */

static void assert_health_default(const struct mgw_health_conf *h)
{
	assert_int_equal(h->enabled, 1);
	assert_int_equal(h->type, MGW_PROBE_HTTP);
	assert_true(h->interval == 2.0);
	assert_true(h->timeout == 1.0);
	assert_int_equal(h->rise, 2);
	assert_int_equal(h->fall, 3);
	assert_string_equal(h->method, "POST");
	assert_null(h->path);
	assert_string_equal(h->body, mgw_config_default_probe_body);
	assert_int_equal(h->n_headers, 0);
	assert_int_equal(h->expect_status, 200);
}

static void assert_outlier_default(const struct mgw_outlier_conf *o)
{
	assert_int_equal(o->consecutive_connect_failures, 3);
	assert_int_equal(o->consecutive_5xx, 5);
	assert_true(o->base_ejection == 5.0);
	assert_true(o->max_ejection == 60.0);
}

static void assert_route_default(const struct mgw_route_conf *r,
                                 const char *upstream)
{
	assert_null(r->match_path);
	assert_null(r->match_mcp_method);
	assert_null(r->match_mcp_name);
	assert_string_equal(r->upstream, upstream);
	assert_int_equal(r->validate_headers, 1);
	assert_int_equal(r->retries, 2);
	assert_true(r->connect_timeout == 2.0);
	assert_true(r->first_byte_timeout == 30.0);
	assert_true(r->idle_timeout == 60.0);
	assert_true(r->total_timeout == 0.0);
}

static void assert_upstream_default(const struct mgw_upstream_conf *u)
{
	assert_int_equal(u->balancer, MGW_BAL_ROUND_ROBIN);
	assert_null(u->hash_header);
	assert_int_equal(u->protocol, MGW_UP_HTTP1);
	assert_null(u->tls_ca_file);
	assert_int_equal(u->tls_verify, 1);
	assert_null(u->tls_sni);
	assert_int_equal(u->max_connections, 256);
	assert_int_equal(u->max_idle, 256);
	assert_int_equal(u->max_queue, 1024);
	assert_int_equal(u->tools_probe, MGW_TOOLS_PROBE_AUTO);
	assert_true(u->tools_ttl == 600.0);
	assert_int_equal(u->affinity.mode, MGW_AFFINITY_NONE);
	assert_int_equal(u->affinity.max_tasks, 100000);
	assert_true(u->affinity.max_ttl == 86400.0);
	assert_null(u->affinity.redis.url);
	for (size_t i = 0; i < u->n_servers; i++)
		assert_int_equal(u->servers[i].weight, 1);
	assert_health_default(&u->health);
	assert_outlier_default(&u->outlier);
}

static void assert_proxy_default(const struct mgw_serve_conf *s)
{
	assert_int_equal(s->mode, MGW_MODE_AUTO);
	assert_int_equal(s->workers, 0);
	assert_true(s->retry_budget_ratio == 0.2);
	assert_int_equal(s->retry_budget_min, 10);
	assert_int_equal(s->trust_forwarded, 0);
	assert_int_equal(s->add_forwarded, 1);
	assert_int_equal(s->max_json_depth, 64);
	assert_int_equal(s->stats, MGW_STATS_LOOPBACK);
	assert_int_equal(s->metrics, MGW_STATS_LOOPBACK);
	assert_string_equal(s->metrics_path, "/metrics");
	assert_null(s->metrics_listener);
	assert_int_equal(s->metrics_tool_names, 0);
	assert_int_equal(s->metrics_tool_names_max, 100);
}

static void test_defaults(void **state)
{
	struct mgw_config *c = mgw_config_defaults();

	(void)state;
	assert_int_equal(c->has_serve, 0);
	assert_int_equal(c->serve.n_upstreams, 0);
	assert_null(c->serve.upstreams);
	assert_int_equal(c->serve.n_routes, 0);
	assert_proxy_default(&c->serve);
	mgw_config_free(c);
	/* a backend-only file is no gateway file */
	c = load_ok("backend:\n  era: modern\n");
	assert_int_equal(c->has_serve, 0);
	mgw_config_free(c);
}

static void test_default_probe_body(void **state)
{
	(void)state;
	assert_string_equal(
		mgw_config_default_probe_body,
		"{\"jsonrpc\":\"2.0\",\"id\":\"mcpgw-health\",\"method\":"
		"\"server/discover\",\"params\":{\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
}

static void test_minimal_gets_default_route(void **state)
{
	struct mgw_config *c = load_ok(UP1 "  - name: b\n    servers:\n"
	                               "      - url: http://127.0.0.1:9002\n");

	(void)state;
	assert_int_equal(c->has_serve, 1);
	assert_int_equal(c->serve.n_upstreams, 2);
	assert_string_equal(c->serve.upstreams[0].name, "a");
	assert_int_equal(c->serve.upstreams[0].n_servers, 1);
	assert_string_equal(c->serve.upstreams[0].servers[0].url,
	                    "http://127.0.0.1:9001");
	assert_upstream_default(&c->serve.upstreams[0]);
	assert_upstream_default(&c->serve.upstreams[1]);
	assert_int_equal(c->serve.n_routes, 1);
	assert_route_default(&c->serve.routes[0], "a");
	assert_proxy_default(&c->serve);
	mgw_config_free(c);
}

/* ---- every key ---- */

static const char full_yaml[] =
	"mode: auto\n"
	"workers: 8\n"
	"upstreams:\n"
	"  - name: main\n"
	"    balancer: hash\n"
	"    hash_header: X-User\n"
	"    protocol: alpn\n"
	"    tls:\n"
	"      verify: false\n"
	"      sni: mcp.example.com\n"
	"    max_connections: 10\n"
	"    max_idle: 0\n"
	"    max_queue: 3\n"
	"    tools_probe: true\n"
	"    affinity: task\n"
	"    task_affinity:\n"
	"      max_tasks: 500\n"
	"      max_ttl: 10m\n"
	"      redis:\n"
	"        url: redis://10.0.0.9:6380/2\n"
	"        timeout: 20ms\n"
	"    servers:\n"
	"      - url: https://10.0.0.1:8443/api\n"
	"        weight: 1000\n"
	"      - url: https://[::1]\n"
	"    health:\n"
	"      enabled: false\n"
	"      type: tcp\n"
	"      interval: 500ms\n"
	"      timeout: 250ms\n"
	"      rise: 1\n"
	"      fall: 10\n"
	"      method: GET\n"
	"      path: /healthz?x=1\n"
	"      body: ping\n"
	"      headers:\n"
	"        - name: Authorization\n"
	"          value: Bearer abc def\n"
	"        - name: X-Probe\n"
	"          value: \"1\"\n"
	"      expect_status: 204\n"
	"    outlier:\n"
	"      consecutive_connect_failures: 0\n"
	"      consecutive_5xx: 7\n"
	"      base_ejection: 1s\n"
	"      max_ejection: 1s\n"
	"  - name: tools.v2\n"
	"    protocol: h2c\n"
	"    servers:\n"
	"      - url: http://tools:7000\n"
	"routes:\n"
	"  - match:\n"
	"      path: /mcp/tools*\n"
	"      mcp_method: tools/call\n"
	"      mcp_name: search\n"
	"    upstream: tools.v2\n"
	"    validate_headers: false\n"
	"    retries: 0\n"
	"    timeouts:\n"
	"      connect: 100ms\n"
	"      first_byte: 5s\n"
	"      idle: 2m\n"
	"      total: 1h\n"
	"  - upstream: main\n"
	"retry_budget:\n"
	"  ratio: 0.05\n"
	"  min_per_second: 0\n"
	"forwarded:\n"
	"  trust_client: true\n"
	"  add: false\n"
	"mcp:\n"
	"  max_json_depth: 16\n"
	"  metrics_tool_names: true\n"
	"  metrics_tool_names_max: 7\n"
	"admin:\n"
	"  stats: any\n"
	"  metrics: off\n"
	"  metrics_path: /internal/metrics\n"
	"  metrics_listener: 127.0.0.1:9464\n";

static void test_affinity_errors(void **state)
{
	(void)state;
	expect_error("upstreams:\n  - name: a\n    affinity: sticky\n"
	             "    servers:\n      - url: http://127.0.0.1:9001\n",
	             "t.yaml:3:15: upstreams[0].affinity: 'sticky' is not one of: "
	             "none, task");
	expect_error("upstreams:\n  - name: a\n    task_affinity:\n"
	             "      max_tasks: 9\n"
	             "    servers:\n      - url: http://127.0.0.1:9001\n",
	             "t.yaml:4:7: upstreams[0].task_affinity: only used with "
	             "affinity: task");
	expect_error("mode: stateful\nupstreams:\n  - name: a\n"
	             "    affinity: task\n"
	             "    servers:\n      - url: http://127.0.0.1:9001\n",
	             "t.yaml:4:15: upstreams[0].affinity: task needs the "
	             "stateless path (mode: stateless or auto); in mode stateful "
	             "a session's requests already stay on its replica");
	expect_error("upstreams:\n  - name: a\n    affinity: task\n"
	             "    task_affinity:\n      redis:\n        url: http://x\n"
	             "    servers:\n      - url: http://127.0.0.1:9001\n",
	             "t.yaml:6:14: upstreams[0].task_affinity.redis.url: redis "
	             "URL must be redis://HOST[:PORT][/DB], rediss://HOST[:PORT][/DB] "
	             "or unix:PATH: http://x");
}

static void test_full(void **state)
{
	struct mgw_config *c = load_ok(full_yaml);
	const struct mgw_serve_conf *s = &c->serve;
	const struct mgw_upstream_conf *u;
	const struct mgw_route_conf *r;

	(void)state;
	assert_int_equal(c->has_serve, 1);
	assert_int_equal(s->mode, MGW_MODE_AUTO);
	assert_int_equal(s->workers, 8);
	assert_int_equal(s->n_upstreams, 2);
	u = &s->upstreams[0];
	assert_string_equal(u->name, "main");
	assert_int_equal(u->balancer, MGW_BAL_HASH);
	assert_string_equal(u->hash_header, "X-User");
	assert_int_equal(u->protocol, MGW_UP_ALPN);
	assert_int_equal(u->tls_verify, 0);
	assert_string_equal(u->tls_sni, "mcp.example.com");
	assert_int_equal(u->max_connections, 10);
	assert_int_equal(u->max_idle, 0);
	assert_int_equal(u->max_queue, 3);
	assert_int_equal(u->tools_probe, 1);
	assert_int_equal(u->affinity.mode, MGW_AFFINITY_TASK);
	assert_int_equal(u->affinity.max_tasks, 500);
	assert_true(u->affinity.max_ttl == 600.0);
	assert_string_equal(u->affinity.redis.url, "redis://10.0.0.9:6380/2");
	assert_true(u->affinity.redis.timeout == 0.02);
	assert_int_equal(u->n_servers, 2);
	assert_string_equal(u->servers[0].url, "https://10.0.0.1:8443/api");
	assert_int_equal(u->servers[0].weight, 1000);
	assert_int_equal(u->servers[1].weight, 1);
	assert_int_equal(u->health.enabled, 0);
	assert_int_equal(u->health.type, MGW_PROBE_TCP);
	assert_true(u->health.interval == 0.5);
	assert_true(u->health.timeout == 0.25);
	assert_int_equal(u->health.rise, 1);
	assert_int_equal(u->health.fall, 10);
	assert_string_equal(u->health.method, "GET");
	assert_string_equal(u->health.path, "/healthz?x=1");
	assert_string_equal(u->health.body, "ping");
	assert_int_equal(u->health.n_headers, 2);
	assert_string_equal(u->health.headers[0].name, "Authorization");
	assert_string_equal(u->health.headers[0].value, "Bearer abc def");
	assert_string_equal(u->health.headers[1].value, "1");
	assert_int_equal(u->health.expect_status, 204);
	assert_int_equal(u->outlier.consecutive_connect_failures, 0);
	assert_int_equal(u->outlier.consecutive_5xx, 7);
	assert_true(u->outlier.base_ejection == 1.0);
	assert_true(u->outlier.max_ejection == 1.0);
	assert_string_equal(s->upstreams[1].name, "tools.v2");
	assert_int_equal(s->upstreams[1].protocol, MGW_UP_H2C);

	assert_int_equal(s->n_routes, 2);
	r = &s->routes[0];
	assert_string_equal(r->match_path, "/mcp/tools*");
	assert_string_equal(r->match_mcp_method, "tools/call");
	assert_string_equal(r->match_mcp_name, "search");
	assert_string_equal(r->upstream, "tools.v2");
	assert_int_equal(r->validate_headers, 0);
	assert_int_equal(r->retries, 0);
	assert_true(r->connect_timeout == 0.1);
	assert_true(r->first_byte_timeout == 5.0);
	assert_true(r->idle_timeout == 120.0);
	assert_true(r->total_timeout == 3600.0);
	assert_route_default(&s->routes[1], "main");

	assert_true(s->retry_budget_ratio == 0.05);
	assert_int_equal(s->retry_budget_min, 0);
	assert_int_equal(s->trust_forwarded, 1);
	assert_int_equal(s->add_forwarded, 0);
	assert_int_equal(s->max_json_depth, 16);
	assert_int_equal(s->stats, MGW_STATS_ANY);
	assert_int_equal(s->metrics, MGW_STATS_OFF);
	assert_string_equal(s->metrics_path, "/internal/metrics");
	assert_string_equal(s->metrics_listener, "127.0.0.1:9464");
	assert_int_equal(s->metrics_tool_names, 1);
	assert_int_equal(s->metrics_tool_names_max, 7);
	mgw_config_free(c);
}

static void test_json(void **state)
{
	static const char doc[] =
		"{\"mode\": \"stateful\", \"upstreams\": [{\"name\": \"j\", "
		"\"balancer\": \"least_request\", \"servers\": [{\"url\": "
		"\"http://127.0.0.1:1\", \"weight\": 3}]}], "
		"\"retry_budget\": {\"ratio\": 1}}";
	struct mgw_config *c = load_ok(doc);

	(void)state;
	assert_int_equal(c->serve.mode, MGW_MODE_STATEFUL);
	assert_int_equal(c->serve.upstreams[0].balancer, MGW_BAL_LEAST_REQUEST);
	assert_int_equal(c->serve.upstreams[0].servers[0].weight, 3);
	assert_true(c->serve.retry_budget_ratio == 1.0);
	assert_route_default(&c->serve.routes[0], "j");
	mgw_config_free(c);
}

/* "method: GET" without a body means no body, not the default POST one;
 * an explicit body stays. */
static void test_probe_body_follows_method(void **state)
{
	struct mgw_config *c;

	(void)state;
	c = load_ok(UP1 "    health:\n      method: GET\n");
	assert_string_equal(c->serve.upstreams[0].health.body, "");
	mgw_config_free(c);
	c = load_ok(UP1 "    health:\n      method: PUT\n      body: x\n");
	assert_string_equal(c->serve.upstreams[0].health.body, "x");
	mgw_config_free(c);
	c = load_ok(UP1 "    health:\n      method: POST\n");
	assert_string_equal(c->serve.upstreams[0].health.body,
	                    mgw_config_default_probe_body);
	mgw_config_free(c);
}

/* ---- errors ---- */

static void test_cross_checks(void **state)
{
	(void)state;
	expect_error(UP1 "  - name: a\n    servers:\n      - url: http://h:1\n",
	             "t.yaml:5:11: upstreams[1].name: 'a' is already the name "
	             "of upstreams[0]");
	expect_error(UP1 "routes:\n  - upstream: a\n  - upstream: b\n",
	             "t.yaml:7:15: routes[1].upstream: no upstream group is "
	             "called 'b'");
	expect_error("routes:\n  - upstream: a\n",
	             "t.yaml:2:15: routes[0].upstream: no upstream group is "
	             "called 'a'");
	expect_error("upstreams:\n  - name: a\n    balancer: hash\n"
	             "    servers:\n      - url: http://h:1\n",
	             "t.yaml:3:15: upstreams[0].balancer: hash needs hash_header");
	expect_error("upstreams:\n  - name: a\n    protocol: h2c\n"
	             "    servers:\n      - url: http://h:1\n"
	             "      - url: https://h:2\n",
	             "t.yaml:3:15: upstreams[0].protocol: h2c is cleartext "
	             "HTTP/2 but servers[1] is https (use alpn for HTTP/2 over "
	             "TLS)");
	expect_error("upstreams:\n  - name: a\n    protocol: alpn\n"
	             "    servers:\n      - url: http://h:1\n",
	             "t.yaml:3:15: upstreams[0].protocol: alpn needs https but "
	             "servers[0] is http (use h2c or http1)");
	expect_error(UP1 "      - url: http://127.0.0.1:9001\n",
	             "t.yaml:5:14: upstreams[0].servers[1].url: same URL as "
	             "servers[0]");
	expect_error(UP1 "    outlier:\n      base_ejection: 10s\n"
	             "      max_ejection: 5s\n",
	             "t.yaml:7:21: upstreams[0].outlier.max_ejection: must not "
	             "be below base_ejection (10s)");
	expect_error(UP1 "    outlier:\n      base_ejection: 2m\n",
	             "t.yaml:6:22: upstreams[0].outlier.base_ejection: must not "
	             "exceed max_ejection (60s)");
	expect_error("upstreams: []\n",
	             "t.yaml:1:12: upstreams: must list at least one upstream "
	             "group");
	expect_error(UP1 "routes: []\n",
	             "t.yaml:5:9: routes: must list at least one route (leave "
	             "routes out to send every request to the first upstream "
	             "group)");
	expect_error("upstreams:\n  - name: a\n    servers: []\n",
	             "t.yaml:3:14: upstreams[0].servers: must list at least one "
	             "server");
	expect_error("upstreams:\n  - name: a\n",
	             "t.yaml:2:5: upstreams[0].servers: missing required key");
	expect_error("upstreams:\n  - servers:\n      - url: http://h:1\n",
	             "t.yaml:2:5: upstreams[0].name: missing required key");
	expect_error("upstreams:\n  - name: a\n    servers:\n      - weight: 2\n",
	             "t.yaml:4:9: upstreams[0].servers[0].url: missing required "
	             "key");
	expect_error(UP1 "routes:\n  - match:\n      path: /a\n",
	             "t.yaml:6:5: routes[0].upstream: missing required key");
}

/* rate_limit: defaults (burst = rate rounded up, key principal, not
 * shared), absence, rate_limits defaults; the errors check-config gives. */
static void test_rate_limits(void **state)
{
	struct mgw_config *c;
	const struct mgw_serve_conf *s;

	(void)state;
	c = load_ok(UP1 "routes:\n  - upstream: a\n    rate_limit: {rate: 2.5}\n"
	            "  - upstream: a\n");
	s = &c->serve;
	assert_int_equal(s->routes[0].has_rate_limit, 1);
	assert_true(s->routes[0].rate_limit.rate == 2.5);
	assert_int_equal(s->routes[0].rate_limit.burst, 3);
	assert_int_equal(s->routes[0].rate_limit.key, MGW_RL_KEY_PRINCIPAL);
	assert_int_equal(s->routes[0].rate_limit.shared, MGW_RL_SHARED_NONE);
	assert_int_equal(s->routes[1].has_rate_limit, 0);
	assert_int_equal(s->rate_limits.max_keys, 100000);
	assert_null(s->rate_limits.redis.url);
	assert_true(s->rate_limits.redis.timeout == 0.05);
	mgw_config_free(c);
	c = load_ok(UP1 "rate_limits: {max_keys: 64, redis: {url: "
	            "\"redis://127.0.0.1:1\", timeout: 10ms}}\n"
	            "routes:\n  - upstream: a\n    rate_limit: {rate: 1, "
	            "burst: 7, key: tool, shared: redis}\n");
	s = &c->serve;
	assert_int_equal(s->routes[0].rate_limit.burst, 7);
	assert_int_equal(s->routes[0].rate_limit.key, MGW_RL_KEY_TOOL);
	assert_int_equal(s->routes[0].rate_limit.shared, MGW_RL_SHARED_REDIS);
	assert_int_equal(s->rate_limits.max_keys, 64);
	assert_string_equal(s->rate_limits.redis.url, "redis://127.0.0.1:1");
	mgw_config_free(c);
	expect_error(UP1 "routes:\n  - upstream: a\n    rate_limit: {rate: 0}\n",
	             "t.yaml:7:24: routes[0].rate_limit.rate: must be more "
	             "than 0 (requests per second)");
	expect_error(UP1 "routes:\n  - upstream: a\n    rate_limit: {burst: 2}\n",
	             "t.yaml:7:17: routes[0].rate_limit.rate: missing required "
	             "key");
	expect_error(UP1 "routes:\n  - upstream: a\n    rate_limit: {rate: 1, "
	             "shared: redis}\n",
	             "t.yaml:7:35: routes[0].rate_limit.shared: redis needs "
	             "rate_limits.redis.url");
}

static void test_value_errors(void **state)
{
	(void)state;
	expect_error("upstreams:\n  - name: a\n    servers:\n"
	             "      - url: 127.0.0.1:9001\n",
	             "t.yaml:4:14: upstreams[0].servers[0].url: "
	             "'127.0.0.1:9001' must start with http:// or https://");
	expect_error("upstreams:\n  - name: a\n    servers:\n"
	             "      - url: http://h:99999\n",
	             "t.yaml:4:14: upstreams[0].servers[0].url: 'http://h:99999' "
	             "port must be 1 to 65535");
	expect_error("upstreams:\n  - name: a\n    servers:\n"
	             "      - url: http://h/mcp?x\n",
	             "t.yaml:4:14: upstreams[0].servers[0].url: 'http://h/mcp?x' "
	             "must not have a query or fragment");
	expect_error(UP1 "        weight: 0\n",
	             "t.yaml:5:17: upstreams[0].servers[0].weight: out of range: "
	             "must be between 1 and 1000");
	expect_error(UP1 "        weight: 1001\n",
	             "t.yaml:5:17: upstreams[0].servers[0].weight: out of range: "
	             "must be between 1 and 1000");
	expect_error(UP1 "    max_queue: 0\n",
	             "t.yaml:5:16: upstreams[0].max_queue: out of range: must "
	             "be between 1 and 1000000");
	expect_error(UP1 "    health:\n      rise: 0\n",
	             "t.yaml:6:13: upstreams[0].health.rise: out of range: must "
	             "be between 1 and 1000");
	expect_error(UP1 "    health:\n      fall: 0\n",
	             "t.yaml:6:13: upstreams[0].health.fall: out of range: must "
	             "be between 1 and 1000");
	expect_error(UP1 "    health:\n      expect_status: 99\n",
	             "t.yaml:6:22: upstreams[0].health.expect_status: out of "
	             "range: must be between 100 and 599");
	expect_error(UP1 "    health:\n      type: icmp\n",
	             "t.yaml:6:13: upstreams[0].health.type: 'icmp' is not one "
	             "of: http, tcp");
	expect_error(UP1 "    health:\n      path: healthz\n",
	             "t.yaml:6:13: upstreams[0].health.path: must start with '/' "
	             "(at most 1024 bytes)");
	expect_error(UP1 "    health:\n      method: \"GET /\"\n",
	             "t.yaml:6:15: upstreams[0].health.method: 'GET /' is not a "
	             "valid header name / token");
	expect_error(UP1 "    health:\n      headers:\n        - name: \"X Y\"\n"
	             "          value: v\n",
	             "t.yaml:7:17: upstreams[0].health.headers[0].name: 'X Y' is "
	             "not a valid header name / token");
	expect_error(UP1 "    health:\n      headers:\n        - name: X\n"
	             "          value: \"a\\rb\"\n",
	             "t.yaml:8:18: upstreams[0].health.headers[0].value: must be "
	             "visible ASCII, spaces or tabs");
	expect_error(UP1 "    balancer: fastest\n",
	             "t.yaml:5:15: upstreams[0].balancer: 'fastest' is not one "
	             "of: round_robin, least_request, random, hash");
	expect_error(UP1 "    protocol: h3\n",
	             "t.yaml:5:15: upstreams[0].protocol: 'h3' is not one of: "
	             "http1, h2c, alpn");
	expect_error(UP1 "    hash_header: \"X:Y\"\n",
	             "t.yaml:5:18: upstreams[0].hash_header: 'X:Y' is not a valid "
	             "header name / token");
	expect_error("upstreams:\n  - name: \"a b\"\n",
	             "t.yaml:2:11: upstreams[0].name: must be letters, digits, "
	             "'-', '_' or '.'");
	expect_error(UP1 "    tls:\n      ca_file: /nonexistent/ca.pem\n",
	             "t.yaml:6:16: upstreams[0].tls.ca_file: cannot read "
	             "'/nonexistent/ca.pem': No such file or directory");
	expect_error(UP1 "    tls:\n      sni: \"\"\n",
	             "t.yaml:6:12: upstreams[0].tls.sni: must not be empty");
	expect_error(UP1 "routes:\n  - upstream: a\n    match:\n      path: /a*b\n",
	             "t.yaml:8:13: routes[0].match.path: '*' is only allowed at "
	             "the end");
	expect_error(UP1 "routes:\n  - upstream: a\n    retries: 11\n",
	             "t.yaml:7:14: routes[0].retries: out of range: must be "
	             "between 0 and 10");
	expect_error(UP1 "routes:\n  - upstream: a\n    timeouts:\n"
	             "      connect: 0\n",
	             "t.yaml:8:16: routes[0].timeouts.connect: out of range: must "
	             "be between 1ms and 1h");
	expect_error(UP1 "routes:\n  - upstream: a\n    match:\n      extra: 1\n",
	             "t.yaml:8:7: routes[0].match.extra: unknown key");
	expect_error("mode: proxy\n",
	             "t.yaml:1:7: mode: 'proxy' is not one of: stateless, "
	             "stateful, auto");
	expect_error("workers: 1025\n",
	             "t.yaml:1:10: workers: out of range: must be between 0 and "
	             "1024");
	expect_error("retry_budget:\n  ratio: 11\n",
	             "t.yaml:2:10: retry_budget.ratio: out of range: must be "
	             "between 0 and 10");
	expect_error("retry_budget:\n  ratio: 1e3\n",
	             "t.yaml:2:10: retry_budget.ratio: expected a number, got "
	             "'1e3'");
	expect_error("retry_budget:\n  ratio: \"0.2\"\n",
	             "t.yaml:2:10: retry_budget.ratio: expected a number, got a "
	             "quoted string");
	expect_error("retry_budget:\n  ratio: -0.1\n",
	             "t.yaml:2:10: retry_budget.ratio: out of range: must be "
	             "between 0 and 10");
	expect_error("forwarded:\n  trust_client: maybe\n",
	             "t.yaml:2:17: forwarded.trust_client: expected a boolean "
	             "(true or false), got 'maybe'");
	expect_error("mcp:\n  max_json_depth: 0\n",
	             "t.yaml:2:19: mcp.max_json_depth: out of range: must be "
	             "between 1 and 1000");
	expect_error("admin:\n  stats: public\n",
	             "t.yaml:2:10: admin.stats: 'public' is not one of: "
	             "loopback, any, off");
	expect_error("admin:\n  metrics: all\n",
	             "t.yaml:2:12: admin.metrics: 'all' is not one of: "
	             "loopback, any, off");
	expect_error("admin:\n  metrics_path: metrics\n",
	             "t.yaml:2:17: admin.metrics_path: must start with '/' (at most "
	             "1024 bytes)");
	expect_error("admin:\n  metrics_path: /mcpgw/readyz\n",
	             "t.yaml:2:17: admin.metrics_path: '/mcpgw/readyz' is the "
	             "path of another page of the gateway");
	expect_error("admin:\n  metrics_listener: nowhere\n",
	             "t.yaml:2:21: admin.metrics_listener: 'nowhere' is not "
	             "HOST:PORT, [IPV6]:PORT or :PORT");
	expect_error("mcp:\n  metrics_tool_names_max: 0\n",
	             "t.yaml:2:27: mcp.metrics_tool_names_max: out of range: "
	             "must be between 1 and 10000");
}

static void test_match_paths(void **state)
{
	static const char *const ok[] = {"*", "/", "/mcp", "/mcp*", "/*"};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char doc[512];
		struct mgw_config *c;

		snprintf(doc, sizeof(doc),
		         UP1 "routes:\n  - upstream: a\n    match:\n      path: \"%s\"\n",
		         ok[i]);
		c = load_ok(doc);
		assert_string_equal(c->serve.routes[0].match_path, ok[i]);
		mgw_config_free(c);
	}
}

static void test_number_syntax(void **state)
{
	static const struct { const char *s; double v; } ok[] = {
		{"0", 0}, {"3", 3}, {".5", 0.5}, {"0.25", 0.25}, {"10", 10},
		{"1.", 1}, {"007", 7},
	};
	static const char *const bad[] = {"1e3", "0x1", "inf", "nan", ".",
	                                  "1.2.3", "+1", "1,5"};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char doc[128];
		struct mgw_config *c;

		snprintf(doc, sizeof(doc), "retry_budget:\n  ratio: %s\n", ok[i].s);
		c = load_ok(doc);
		assert_true(c->serve.retry_budget_ratio == ok[i].v);
		mgw_config_free(c);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char doc[128], want[160];

		snprintf(doc, sizeof(doc), "retry_budget:\n  ratio: %s\n", bad[i]);
		snprintf(want, sizeof(want), "t.yaml:2:10: retry_budget.ratio: "
		         "expected a number, got '%s'", bad[i]);
		expect_error(doc, want);
	}
}

/* ---- the shipped examples ---- */

static const char *srcdir(void)
{
	const char *d = getenv("TOP_SRCDIR");

	return d && *d ? d : MGW_TEST_SRCDIR;
}

static struct mgw_config *load_example(const char *name)
{
	char path[4096];
	struct mgw_config *c;

	snprintf(path, sizeof(path), "%s/conf/%s", srcdir(), name);
	err[0] = '\0';
	c = mgw_config_load(path, err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	return c;
}

/* serve.yaml claims every value it shows is the default: it must load to
 * the very snapshot serve-minimal.yaml gives, and that must hold the
 * documented defaults. */
static void test_examples(void **state)
{
	struct mgw_config *full = load_example("serve.yaml");
	struct mgw_config *min = load_example("serve-minimal.yaml");
	const struct mgw_serve_conf *a = &full->serve, *b = &min->serve;

	(void)state;
	assert_int_equal(full->has_serve, 1);
	assert_int_equal(min->has_serve, 1);
	assert_int_equal(full->has_backend, 0);
	assert_int_equal(full->log_level, min->log_level);
	assert_int_equal(full->n_listeners, 1);
	assert_int_equal(min->n_listeners, 1);
	assert_string_equal(full->listeners[0].address, min->listeners[0].address);
	assert_memory_equal(&full->limits, &min->limits, sizeof(full->limits));
	assert_true(full->shutdown_timeout == min->shutdown_timeout);

	assert_proxy_default(a);
	assert_proxy_default(b);
	assert_int_equal(a->n_upstreams, 1);
	assert_int_equal(b->n_upstreams, 1);
	assert_string_equal(a->upstreams[0].name, b->upstreams[0].name);
	assert_int_equal(a->upstreams[0].n_servers, 3);
	assert_int_equal(b->upstreams[0].n_servers, 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(a->upstreams[0].servers[i].url,
		                    b->upstreams[0].servers[i].url);
	assert_upstream_default(&a->upstreams[0]);
	assert_upstream_default(&b->upstreams[0]);
	assert_int_equal(a->n_routes, 1);
	assert_int_equal(b->n_routes, 1);
	assert_route_default(&a->routes[0], "mcp");
	assert_route_default(&b->routes[0], "mcp");
	mgw_config_free(full);
	mgw_config_free(min);
}

/* ---- flags ---- */

static void test_serve_urls(void **state)
{
	static const char *const urls[] = {"http://127.0.0.1:9001",
	                                   "https://[::1]:9443/x"};
	static const char *const bad[] = {"http://127.0.0.1:9001", "tcp://x"};
	static const char *const twice[] = {"http://h:1", "http://h:1"};
	struct mgw_config *c = load_ok(full_yaml);

	(void)state;
	/* replaces the file's groups and routes, keeps the rest */
	assert_int_equal(mgw_config_serve_urls(c, urls, 2, err, sizeof(err)), 0);
	assert_int_equal(c->has_serve, 1);
	assert_int_equal(c->serve.mode, MGW_MODE_AUTO);
	assert_int_equal(c->serve.workers, 8);
	assert_int_equal(c->serve.n_upstreams, 1);
	assert_string_equal(c->serve.upstreams[0].name, "default");
	assert_upstream_default(&c->serve.upstreams[0]);
	assert_int_equal(c->serve.upstreams[0].n_servers, 2);
	assert_string_equal(c->serve.upstreams[0].servers[1].url,
	                    "https://[::1]:9443/x");
	assert_int_equal(c->serve.n_routes, 1);
	assert_route_default(&c->serve.routes[0], "default");

	/* errors leave the snapshot as it was */
	assert_int_equal(mgw_config_serve_urls(c, bad, 2, err, sizeof(err)),
	                 MGW_EINVAL);
	assert_string_equal(err, "'tcp://x' must start with http:// or https://");
	assert_int_equal(mgw_config_serve_urls(c, twice, 2, err, sizeof(err)),
	                 MGW_EINVAL);
	assert_string_equal(err, "'http://h:1' is given twice");
	assert_int_equal(mgw_config_serve_urls(c, urls, 0, err, sizeof(err)),
	                 MGW_EINVAL);
	assert_int_equal(c->serve.upstreams[0].n_servers, 2);
	mgw_config_free(c);

	c = mgw_config_defaults();
	assert_int_equal(mgw_config_serve_urls(c, urls, 1, err, sizeof(err)), 0);
	assert_int_equal(c->has_serve, 1);
	assert_proxy_default(&c->serve);
	mgw_config_free(c);
}

static void test_enum_parsers(void **state)
{
	enum mgw_mode_conf m = MGW_MODE_AUTO;
	enum mgw_balancer_conf b = MGW_BAL_HASH;

	(void)state;
	assert_int_equal(mgw_config_parse_mode("stateless", &m), 0);
	assert_int_equal(m, MGW_MODE_STATELESS);
	assert_int_equal(mgw_config_parse_mode("stateful", &m), 0);
	assert_int_equal(m, MGW_MODE_STATEFUL);
	assert_int_equal(mgw_config_parse_mode("auto", &m), 0);
	assert_int_equal(m, MGW_MODE_AUTO);
	assert_int_equal(mgw_config_parse_mode("Auto", &m), MGW_EINVAL);
	assert_int_equal(mgw_config_parse_mode(NULL, &m), MGW_EINVAL);
	assert_int_equal(m, MGW_MODE_AUTO);
	assert_int_equal(mgw_config_parse_balancer("least_request", &b), 0);
	assert_int_equal(b, MGW_BAL_LEAST_REQUEST);
	assert_int_equal(mgw_config_parse_balancer("rr", &b), MGW_EINVAL);
	assert_string_equal(mgw_config_mode_name(MGW_MODE_STATEFUL), "stateful");
	assert_string_equal(mgw_config_balancer_name(MGW_BAL_HASH), "hash");
	assert_string_equal(mgw_config_balancer_name(MGW_BAL_ROUND_ROBIN),
	                    "round_robin");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_default_probe_body),
		cmocka_unit_test(test_minimal_gets_default_route),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_affinity_errors),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_probe_body_follows_method),
		cmocka_unit_test(test_cross_checks),
		cmocka_unit_test(test_value_errors),
		cmocka_unit_test(test_match_paths),
		cmocka_unit_test(test_number_syntax),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_serve_urls),
		cmocka_unit_test(test_enum_parsers),
		cmocka_unit_test(test_rate_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
