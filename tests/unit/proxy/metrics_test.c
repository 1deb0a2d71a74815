/* metrics_test.c - the counters behind GET /metrics (src/proxy/metrics.c,
 * metrics_page.c) without a network: transactions as the pipeline ends
 * them, summed over two workers' blocks, in the exposition text.
 *   - the MCP method list is sorted; spec methods keep their name, the
 *     rest is "other", no method "none";
 *   - tool names get a slot up to the cap, then "other", also with two
 *     threads racing for the slots;
 *   - requests land under their route, upstream, method, era and status
 *     class, summed across workers, durations in the histogram;
 *   - upstream health transitions are counted once per change;
 *   - reloads count by outcome. */
#include "autoconf.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/config.h"
#include "proxy/metrics.h"
#include "proxy/pipeline-t.h"
#include "proxy/route.h"
#include "proxy/upstream.h"
#include "util/time.h"

static void test_methods(void **state)
{
	(void)state;
	for (size_t i = 1; i < mgw_metrics_n_methods; i++)
		assert_true(strcmp(mgw_metrics_methods[i - 1], mgw_metrics_methods[i]) < 0);
	for (size_t i = 0; i < mgw_metrics_n_methods; i++) {
		assert_int_equal(mgw_metrics_method_index(mgw_metrics_methods[i]), i);
		assert_string_equal(mgw_metrics_method_label(i), mgw_metrics_methods[i]);
	}
	assert_string_equal(mgw_metrics_method_label(
		mgw_metrics_method_index("tools/call")), "tools/call");
	assert_string_equal(mgw_metrics_method_label(
		mgw_metrics_method_index("server/discover")), "server/discover");
	assert_int_equal(mgw_metrics_method_index("vendor/thing"),
	                 MGW_METRICS_METHOD_OTHER);
	assert_int_equal(mgw_metrics_method_index(""), MGW_METRICS_METHOD_OTHER);
	assert_int_equal(mgw_metrics_method_index("tools/cal"),
	                 MGW_METRICS_METHOD_OTHER);
	assert_int_equal(mgw_metrics_method_index(NULL), MGW_METRICS_METHOD_NONE);
	assert_string_equal(mgw_metrics_method_label(MGW_METRICS_METHOD_OTHER), "other");
	assert_string_equal(mgw_metrics_method_label(MGW_METRICS_METHOD_NONE), "none");
}

static void test_tool_slots(void **state)
{
	struct mgw_metrics *m = mgw_metrics_new(1, 1, 1, 3);
	struct mgw_metrics_tools *tl;
	size_t a, b, c;
	char longname[200];

	(void)state;
	assert_non_null(m);
	tl = &m->tools;
	assert_true(tl->size > tl->cap);
	a = mgw_metrics_tool_slot(tl, "alpha");
	b = mgw_metrics_tool_slot(tl, "beta");
	assert_true(a < tl->size && b < tl->size && a != b);
	assert_int_equal(mgw_metrics_tool_slot(tl, "alpha"), a);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(mgw_metrics_tool_slot(tl, longname), tl->size);
	c = mgw_metrics_tool_slot(tl, "gamma");
	assert_true(c < tl->size);
	/* the cap is reached: new names are "other", known ones keep theirs */
	assert_int_equal(mgw_metrics_tool_slot(tl, "delta"), tl->size);
	assert_int_equal(mgw_metrics_tool_slot(tl, "epsilon"), tl->size);
	assert_int_equal(mgw_metrics_tool_slot(tl, "beta"), b);
	assert_int_equal(atomic_load(&tl->used), 3);
	mgw_metrics_free(m);

	/* cap 0: nothing gets a slot */
	m = mgw_metrics_new(1, 1, 1, 0);
	assert_non_null(m);
	assert_int_equal(mgw_metrics_tool_slot(&m->tools, "alpha"), m->tools.size);
	mgw_metrics_free(m);
}

struct racer {
	struct mgw_metrics_tools *tl;
	size_t slot[64];
};

static void *race(void *arg)
{
	struct racer *r = arg;
	char name[16];

	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "tool%d", i);
		r->slot[i] = mgw_metrics_tool_slot(r->tl, name);
	}
	return NULL;
}

/* Two threads claiming the same names: each name ends in one slot, both
 * see the same one, and no more than cap names get one. */
static void test_tool_slots_race(void **state)
{
	struct mgw_metrics *m = mgw_metrics_new(2, 1, 1, 40);
	struct racer r1 = {0}, r2 = {0};
	pthread_t t1, t2;
	size_t named = 0;

	(void)state;
	assert_non_null(m);
	r1.tl = r2.tl = &m->tools;
	assert_int_equal(pthread_create(&t1, NULL, race, &r1), 0);
	assert_int_equal(pthread_create(&t2, NULL, race, &r2), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	for (int i = 0; i < 64; i++) {
		if (r1.slot[i] < m->tools.size && r2.slot[i] < m->tools.size)
			assert_int_equal(r1.slot[i], r2.slot[i]);
		if (r1.slot[i] < m->tools.size || r2.slot[i] < m->tools.size)
			named++;
	}
	assert_true(named <= 40);
	assert_true(named >= 1);
	assert_true(atomic_load(&m->tools.used) <= 40);
	mgw_metrics_free(m);
}

/* ---- transactions into the page ------------------------------------------------ */

struct fx {
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_routes *routes;
	struct mgw_metrics *m;
	struct mgw_pipeline pl[2];      /* two workers' pipelines */
};

static void fx_start(struct fx *f)
{
	static const char doc[] =
		"upstreams:\n"
		"  - name: a\n"
		"    health: {enabled: false}\n"
		"    servers: [{url: 'http://127.0.0.1:1'}, {url: 'http://127.0.0.1:2'}]\n"
		"  - name: b\n"
		"    health: {enabled: false}\n"
		"    servers: [{url: 'http://127.0.0.1:3'}]\n"
		"routes:\n"
		"  - {match: {path: /a}, upstream: a}\n"
		"  - {upstream: b}\n";
	char err[512];

	memset(f, 0, sizeof(*f));
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	assert_non_null(f->ups);
	f->routes = mgw_routes_new(&f->cfg->serve, f->ups, err, sizeof(err));
	assert_non_null(f->routes);
	f->m = mgw_metrics_new(2, f->routes->n, f->ups->n_groups, 10);
	assert_non_null(f->m);
	for (int i = 0; i < 2; i++) {
		f->pl[i].conf = &f->cfg->serve;
		f->pl[i].metrics = f->m;
		f->pl[i].mx = &f->m->w[i];
	}
}

static void fx_stop(struct fx *f)
{
	mgw_metrics_free(f->m);
	mgw_routes_free(f->routes);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
}

/* A transaction of worker w that ends with status after ms. */
static void txn(struct fx *f, int w, int route, const char *method,
                const char *tool, enum mgw_era era, int status, uint64_t ms,
                unsigned retries)
{
	struct mgw_txn t;

	memset(&t, 0, sizeof(t));
	t.pl = &f->pl[w];
	t.route = route >= 0 ? &f->routes->v[route] : NULL;
	t.have_msg = method != NULL;
	t.msg.method = method;
	t.msg.name = tool;
	t.era = era;
	t.retries = retries;
	t.t0 = mgw_now_ms() - ms;
	t.t0_ns = mgw_now_ns() - (uint64_t)ms * 1000000ULL;
	mgw_metrics_txn_done(&t, status);
}

/* The page, with the line starting with prefix, or NULL. */
static char *page(struct fx *f)
{
	char *body = NULL;
	size_t len = 0;

	assert_int_equal(mgw_metrics_page(f->m, f->routes, f->ups, NULL, NULL, &body,
	                                  &len), 0);
	assert_int_equal(strlen(body), len);
	return body;
}

static void has_line(const char *body, const char *line)
{
	const char *p = body;
	size_t n = strlen(line);

	while ((p = strstr(p, line)) != NULL) {
		if ((p == body || p[-1] == '\n') && p[n] == '\n')
			return;
		p++;
	}
	fail_msg("no line '%s' in:\n%s", line, body);
}

static void test_requests(void **state)
{
	struct fx f;
	char *s;

	(void)state;
	fx_start(&f);
	/* tools/call, route 0, modern, 2xx: 2 on worker 0, 1 on worker 1 */
	txn(&f, 0, 0, "tools/call", "whoami", MGW_ERA_IS_MODERN, 200, 0, 0);
	txn(&f, 0, 0, "tools/call", "whoami", MGW_ERA_IS_MODERN, 202, 3, 1);
	txn(&f, 1, 0, "tools/call", "echo", MGW_ERA_IS_MODERN, 200, 0, 2);
	/* legacy initialize on route 1, a 502 */
	txn(&f, 1, 1, "initialize", NULL, MGW_ERA_IS_LEGACY, 502, 0, 0);
	/* an unknown method, no route (answered before routing), no status */
	txn(&f, 0, -1, "vendor/x", NULL, MGW_ERA_UNKNOWN, 0, 0, 0);
	/* a GET (no method) answered 405 */
	txn(&f, 1, -1, NULL, NULL, MGW_ERA_UNKNOWN, 405, 0, 0);
	s = page(&f);
	has_line(s, "mcpgw_requests_total{route=\"0\",upstream=\"a\","
	            "mcp_method=\"tools/call\",era=\"modern\",status_class=\"2xx\"} 3");
	has_line(s, "mcpgw_requests_total{route=\"1\",upstream=\"b\","
	            "mcp_method=\"initialize\",era=\"legacy\",status_class=\"5xx\"} 1");
	has_line(s, "mcpgw_requests_total{route=\"none\",upstream=\"none\","
	            "mcp_method=\"other\",era=\"unknown\",status_class=\"none\"} 1");
	has_line(s, "mcpgw_requests_total{route=\"none\",upstream=\"none\","
	            "mcp_method=\"none\",era=\"unknown\",status_class=\"4xx\"} 1");
	assert_null(strstr(s, "vendor/x"));
	/* durations: 0, 3 and 0 ms */
	has_line(s, "mcpgw_request_duration_seconds_bucket{route=\"0\",upstream=\"a\","
	            "mcp_method=\"tools/call\",le=\"0.001\"} 2");
	has_line(s, "mcpgw_request_duration_seconds_bucket{route=\"0\",upstream=\"a\","
	            "mcp_method=\"tools/call\",le=\"0.005\"} 3");
	has_line(s, "mcpgw_request_duration_seconds_bucket{route=\"0\",upstream=\"a\","
	            "mcp_method=\"tools/call\",le=\"+Inf\"} 3");
	has_line(s, "mcpgw_request_duration_seconds_count{route=\"0\",upstream=\"a\","
	            "mcp_method=\"tools/call\"} 3");
	has_line(s, "mcpgw_tool_calls_total{tool=\"whoami\",status_class=\"2xx\"} 2");
	has_line(s, "mcpgw_tool_calls_total{tool=\"echo\",status_class=\"2xx\"} 1");
	has_line(s, "mcpgw_upstream_retries_total{upstream=\"a\"} 3");
	has_line(s, "mcpgw_upstream_retries_total{upstream=\"b\"} 0");
	has_line(s, "mcpgw_workers 2");
	has_line(s, "mcpgw_sse_streams_open 0");
	free(s);
	/* one SSE stream open on worker 1 */
	mgw_metrics_sse_open(&f.m->w[1]);
	mgw_metrics_sse_open(&f.m->w[0]);
	mgw_metrics_sse_close(&f.m->w[0]);
	s = page(&f);
	has_line(s, "mcpgw_sse_streams_open 1");
	has_line(s, "mcpgw_sse_streams_total 2");
	has_line(s, "mcpgw_memory_trims_total 0");
	free(s);
	/* the trim timers' counters, summed over the workers */
	atomic_fetch_add(&f.m->w[0].jalloc_trimmed, 4096);
	atomic_fetch_add(&f.m->w[1].jalloc_trimmed, 1024);
	atomic_fetch_add(&f.m->w[0].heap_trims, 2);
	atomic_fetch_add(&f.m->w[1].heap_trims, 1);
	atomic_fetch_add(&f.m->w[1].heap_returned, 65536);
	s = page(&f);
	has_line(s, "mcpgw_memory_cache_trimmed_bytes_total 5120");
	has_line(s, "mcpgw_memory_trims_total 3");
	has_line(s, "mcpgw_memory_returned_bytes_total 65536");
	free(s);
	fx_stop(&f);
}

static void test_upstreams(void **state)
{
	struct fx f;
	struct mgw_upstream_server *s1;
	char *s;

	(void)state;
	fx_start(&f);
	s1 = &f.ups->groups[0].servers[1];
	mgw_upstream_set_health(s1, 1);   /* already up: no transition */
	mgw_upstream_set_health(s1, 0);
	mgw_upstream_set_health(s1, 0);   /* still down: none */
	mgw_upstream_set_health(s1, 1);
	mgw_upstream_set_health(s1, 0);
	s = page(&f);
	has_line(s, "mcpgw_upstream_server_up{upstream=\"a\",server=\"http://127.0.0.1:1\"} 1");
	has_line(s, "mcpgw_upstream_server_up{upstream=\"a\",server=\"http://127.0.0.1:2\"} 0");
	has_line(s, "mcpgw_upstream_server_state{upstream=\"a\",server=\"http://127.0.0.1:2\",state=\"down\"} 1");
	has_line(s, "mcpgw_upstream_server_state{upstream=\"a\",server=\"http://127.0.0.1:2\",state=\"up\"} 0");
	has_line(s, "mcpgw_upstream_health_transitions_total{upstream=\"a\",server=\"http://127.0.0.1:2\",to=\"down\"} 2");
	has_line(s, "mcpgw_upstream_health_transitions_total{upstream=\"a\",server=\"http://127.0.0.1:2\",to=\"up\"} 1");
	has_line(s, "mcpgw_upstream_health_transitions_total{upstream=\"b\",server=\"http://127.0.0.1:3\",to=\"down\"} 0");
	has_line(s, "mcpgw_retry_budget_denied_total 0");
	has_line(s, "mcpgw_retry_budget_ratio 0.20000000000000001");
	free(s);
	fx_stop(&f);
}

static void test_reloads(void **state)
{
	uint64_t ok, failed;
	double last;

	(void)state;
	mgw_metrics_reloads(&ok, &failed, &last);
	assert_int_equal(ok, 0);
	assert_int_equal(failed, 0);
	assert_true(last == 0);
	mgw_metrics_reload_done(1);
	mgw_metrics_reload_done(0);
	mgw_metrics_reload_done(1);
	mgw_metrics_reloads(&ok, &failed, &last);
	assert_int_equal(ok, 2);
	assert_int_equal(failed, 1);
	assert_true(last >= (double)mgw_wall_s() - 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_tool_slots),
		cmocka_unit_test(test_tool_slots_race),
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_upstreams),
		cmocka_unit_test(test_reloads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
