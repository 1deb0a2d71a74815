/* pool_test.c - unit tests for src/proxy/pool.c: a worker's pool built
 * from a snapshot, the next attempt of a request (first attempts never
 * ask the retry budget, retries do; every server once, then none), an
 * explicit exclusion list, request targets with the server's path
 * prefix, and a send that acquires the server. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "conf/config.h"
#include "core/errors.h"
#include "http/headers.h"
#include "proxy/pool.h"
#include "proxy/upstream.h"

static char err[512];

struct fx {
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct event_base *base;
	struct mgw_upool *pool;
};

static const char doc[] =
	"upstreams:\n"
	"  - name: a\n"
	"    servers:\n"
	"      - url: http://127.0.0.1:9/base\n"
	"  - name: g\n"
	"    servers:\n"
	"      - url: http://127.0.0.1:9001\n"
	"      - url: http://127.0.0.1:9002\n"
	"      - url: http://127.0.0.1:9003\n"
	"retry_budget:\n"
	"  ratio: 0\n"
	"  min_per_second: 0\n";

static void build(struct fx *f)
{
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	if (!f->ups)
		fail_msg("upstreams: %s", err);
	f->base = event_base_new();
	assert_non_null(f->base);
	f->pool = mgw_upool_new(f->base, f->ups, 2, 1, err, sizeof(err));
	if (!f->pool)
		fail_msg("pool: %s", err);
}

static void destroy(struct fx *f)
{
	mgw_upool_free(f->pool);
	event_base_free(f->base);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
}

static void test_build(void **state)
{
	struct fx f;

	(void)state;
	build(&f);
	assert_int_equal(f.pool->n_groups, 2);
	for (size_t g = 0; g < 2; g++) {
		assert_non_null(f.pool->clients[g]);
		for (size_t s = 0; s < f.ups->groups[g].n_servers; s++)
			assert_non_null(f.pool->origins[g][s]);
	}
	destroy(&f);
	mgw_upool_free(NULL);
}

static void test_next_attempts(void **state)
{
	struct mgw_upstream_tried t = {0};
	struct mgw_upstream_server *s = NULL, *first;
	const struct mgw_upstream_group *g;
	struct fx f;

	(void)state;
	build(&f);
	g = mgw_upstreams_find(f.ups, "g");
	/* a first attempt does not ask the budget (which allows nothing) */
	assert_int_equal(mgw_upool_next(f.pool, g, NULL, 0, &t, MGW_UPOOL_FIRST,
	                                1000, &s), MGW_NEXT_OK);
	assert_int_equal(t.n, 1);
	assert_ptr_equal(t.v[0], s);
	first = s;
	/* a retry does, and is refused */
	assert_int_equal(mgw_upool_next(f.pool, g, NULL, 0, &t, MGW_UPOOL_RETRY,
	                                1000, &s), MGW_NEXT_NO_BUDGET);
	assert_int_equal(t.n, 1);
	/* without asking: every server once, then none is left */
	for (int i = 1; i < 3; i++) {
		assert_int_equal(mgw_upool_next(f.pool, g, NULL, 0, &t,
		                                MGW_UPOOL_FIRST, 1000, &s),
		                 MGW_NEXT_OK);
		assert_ptr_not_equal(s, first);
	}
	assert_int_equal(t.n, 3);
	assert_ptr_not_equal(t.v[1], t.v[2]);
	assert_int_equal(mgw_upool_next(f.pool, g, NULL, 0, &t, MGW_UPOOL_FIRST,
	                                1000, &s), MGW_NEXT_ALL_TRIED);
	mgw_upstream_tried_free(&t);
	assert_int_equal(t.n, 0);
	/* nothing tried and nothing available */
	for (size_t i = 0; i < g->n_servers; i++)
		mgw_upstream_set_health(&g->servers[i], 0);
	assert_int_equal(mgw_upool_next(f.pool, g, NULL, 0, &t, MGW_UPOOL_FIRST,
	                                1000, &s), MGW_NEXT_NONE_HEALTHY);
	mgw_upstream_tried_free(&t);
	destroy(&f);
}

/* The re-pin run's exclusion list: excluded servers are never chosen,
 * and a re-pin replay is a retry (the budget is asked). */
static void test_choose_excludes(void **state)
{
	struct mgw_upstream_server *ex[2], *s = NULL;
	const struct mgw_upstream_group *g;
	struct fx f;

	(void)state;
	build(&f);
	g = mgw_upstreams_find(f.ups, "g");
	ex[0] = &g->servers[0];
	ex[1] = &g->servers[2];
	for (int i = 0; i < 5; i++) {
		assert_int_equal(mgw_upool_choose(f.pool, g, NULL, 0, ex, 2,
		                                  MGW_UPOOL_FIRST, 1000, &s),
		                 MGW_NEXT_OK);
		assert_ptr_equal(s, &g->servers[1]);
	}
	assert_int_equal(mgw_upool_choose(f.pool, g, NULL, 0, ex, 2,
	                                  MGW_UPOOL_RETRY, 1000, &s),
	                 MGW_NEXT_NO_BUDGET);
	mgw_upstream_set_health(&g->servers[1], 0);
	assert_int_equal(mgw_upool_choose(f.pool, g, NULL, 0, ex, 2,
	                                  MGW_UPOOL_FIRST, 1000, &s),
	                 MGW_NEXT_ALL_TRIED);
	destroy(&f);
}

static void test_target(void **state)
{
	struct fx f;
	const struct mgw_upstream_group *a, *g;
	char *t;

	(void)state;
	build(&f);
	a = mgw_upstreams_find(f.ups, "a");
	g = mgw_upstreams_find(f.ups, "g");
	t = mgw_upool_target(&a->servers[0], "/mcp?x=1");
	assert_string_equal(t, "/base/mcp?x=1");
	free(t);
	t = mgw_upool_target(&a->servers[0], "*");
	assert_string_equal(t, "*");
	free(t);
	t = mgw_upool_target(&g->servers[0], "/mcp");
	assert_string_equal(t, "/mcp");
	free(t);
	destroy(&f);
}

static void cb_head(struct mgw_client_req *r, int status,
                    const struct mgw_headers *h, void *arg)
{
	(void)r; (void)status; (void)h; (void)arg;
}

static void cb_data(struct mgw_client_req *r, const unsigned char *d,
                    size_t n, void *arg)
{
	(void)r; (void)d; (void)n; (void)arg;
}

static void cb_end(struct mgw_client_req *r, void *arg)
{
	(void)r; (void)arg;
}

static void cb_error(struct mgw_client_req *r,
                     const struct mgw_client_error *e, void *arg)
{
	(void)r; (void)e; (void)arg;
}

/* A send acquires the server (its in-flight count) until released. */
static void test_send_acquires(void **state)
{
	struct mgw_client_reqspec spec;
	struct mgw_client_req *r = NULL;
	struct mgw_upstream_server *s;
	struct mgw_headers h;
	struct fx f;

	(void)state;
	build(&f);
	s = &mgw_upstreams_find(f.ups, "g")->servers[1];
	mgw_headers_init(&h);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.target = "/mcp";
	spec.authority = "example";
	spec.headers = &h;
	spec.on_head = cb_head;
	spec.on_data = cb_data;
	spec.on_end = cb_end;
	spec.on_error = cb_error;
	assert_int_equal(atomic_load(&s->in_flight), 0);
	assert_int_equal(mgw_upool_send(f.pool, s, &spec, &r), 0);
	assert_non_null(r);
	assert_int_equal(atomic_load(&s->in_flight), 1);
	mgw_client_cancel(r);
	mgw_upstream_release(s);
	assert_int_equal(atomic_load(&s->in_flight), 0);
	mgw_headers_deinit(&h);
	destroy(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_next_attempts),
		cmocka_unit_test(test_choose_excludes),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_send_acquires),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
