/* upstream_test.c - unit tests for src/proxy/upstream.c: groups built
 * from a snapshot (addresses, prefixes, probe paths, TLS contexts,
 * origin settings), passive outlier ejection with an injected clock
 * (thresholds, counter resets, exponential backoff and its cap and reset,
 * re-admission, the interplay with active checks, never emptying a
 * group), in-flight counts, and the shared state under several threads. */
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
#include "core/log.h"
#include "proxy/retry.h"
#include "proxy/upstream.h"

static char err[512];

struct fx {
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
};

static void build(struct fx *f, const char *doc)
{
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	if (!f->ups)
		fail_msg("upstreams: %s", err);
}

static void destroy(struct fx *f)
{
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
}

static const char three_servers[] =
	"upstreams:\n"
	"  - name: g\n"
	"    servers:\n"
	"      - url: http://127.0.0.1:9001\n"
	"      - url: http://127.0.0.1:9002\n"
	"      - url: http://127.0.0.1:9003\n"
	"    outlier:\n"
	"      consecutive_connect_failures: 3\n"
	"      consecutive_5xx: 5\n"
	"      base_ejection: 5s\n"
	"      max_ejection: 60s\n";

/* ---- a reload: the state of unchanged servers is carried over ---- */

static void test_adopt(void **state)
{
	static const char next_doc[] =
		"upstreams:\n"
		"  - name: g\n"
		"    servers:\n"
		"      - url: http://127.0.0.1:9003\n"
		"      - url: http://127.0.0.1:9004\n"
		"      - url: http://127.0.0.1:9002\n"
		"        weight: 5\n"
		"  - name: h\n"
		"    servers:\n"
		"      - url: http://127.0.0.1:9001\n";
	struct fx old, next;
	struct mgw_upstream_server *s;

	(void)state;
	build(&old, three_servers);
	build(&next, next_doc);
	/* old: 9002 down, 9003 ejected with counters */
	mgw_upstream_set_health(&old.ups->groups[0].servers[1], 0);
	atomic_store(&old.ups->groups[0].servers[2].ejected_until, 123456);
	atomic_store(&old.ups->groups[0].servers[2].n_ejections, 4);
	atomic_store(&old.ups->groups[0].servers[2].n_picked, 99);
	atomic_store(&old.ups->groups[0].servers[2].n_queue_full, 7);
	/* 9003 and 9002 are the same servers of group g (reweighted or
	 * moved); 9004 is new; 9001 moved to another group: new there */
	assert_int_equal(mgw_upstreams_adopt(next.ups, old.ups), 2);
	s = mgw_upstreams_same_server(next.ups, "g", "http://127.0.0.1:9002");
	assert_non_null(s);
	assert_int_equal(atomic_load(&s->health_up), 0);
	assert_int_equal(s->weight, 5);
	s = mgw_upstreams_same_server(next.ups, "g", "http://127.0.0.1:9003");
	assert_int_equal(atomic_load(&s->ejected_until), 123456);
	assert_int_equal(atomic_load(&s->n_ejections), 4);
	assert_int_equal(atomic_load(&s->n_picked), 99);
	assert_int_equal(atomic_load(&s->n_queue_full), 7);
	s = mgw_upstreams_same_server(next.ups, "g", "http://127.0.0.1:9004");
	assert_int_equal(atomic_load(&s->health_up), 1);
	assert_int_equal(atomic_load(&s->ejected_until), 0);
	s = mgw_upstreams_same_server(next.ups, "h", "http://127.0.0.1:9001");
	assert_int_equal(atomic_load(&s->n_picked), 0);
	assert_null(mgw_upstreams_same_server(next.ups, "g",
	                                      "http://127.0.0.1:9001"));
	destroy(&old);
	destroy(&next);
}

/* ---- construction ---- */

static void test_build_servers(void **state)
{
	static const char doc[] =
		"upstreams:\n"
		"  - name: a\n"
		"    servers:\n"
		"      - url: http://127.0.0.1:9001\n"
		"      - url: \"http://[::1]:9002/tenant/\"\n"
		"        weight: 7\n"
		"      - url: http://backend.internal\n"
		"  - name: b\n"
		"    protocol: h2c\n"
		"    health:\n"
		"      path: /healthz?deep=1\n"
		"    servers:\n"
		"      - url: http://10.0.0.1:8080/x\n";
	struct fx f;
	struct mgw_upstream_group *a, *b;
	struct mgw_client_origin_cfg oc;

	(void)state;
	build(&f, doc);
	assert_int_equal(f.ups->n_groups, 2);
	a = mgw_upstreams_find(f.ups, "a");
	b = mgw_upstreams_find(f.ups, "b");
	assert_non_null(a);
	assert_non_null(b);
	assert_null(mgw_upstreams_find(f.ups, "c"));
	assert_int_equal(a->n_servers, 3);
	assert_int_equal(a->total_weight, 9);
	assert_null(a->tls);
	assert_int_equal(a->proto, MGW_CLIENT_H1);
	assert_int_equal(b->proto, MGW_CLIENT_H2);

	assert_string_equal(a->servers[0].host, "127.0.0.1");
	assert_int_equal(a->servers[0].port, 9001);
	assert_string_equal(a->servers[0].authority, "127.0.0.1:9001");
	assert_string_equal(a->servers[0].path_prefix, "");
	assert_string_equal(a->servers[0].probe_path, "/mcp");
	assert_string_equal(a->servers[0].name, "a/127.0.0.1:9001");

	assert_string_equal(a->servers[1].host, "::1");
	assert_string_equal(a->servers[1].authority, "[::1]:9002");
	assert_string_equal(a->servers[1].path_prefix, "/tenant");
	assert_string_equal(a->servers[1].probe_path, "/tenant/mcp");
	assert_int_equal(a->servers[1].weight, 7);

	assert_int_equal(a->servers[2].port, 80);
	assert_string_equal(a->servers[2].authority, "backend.internal:80");

	assert_string_equal(b->servers[0].probe_path, "/healthz?deep=1");
	assert_string_equal(b->servers[0].path_prefix, "/x");

	mgw_upstream_origin_cfg(&a->servers[1], &oc);
	assert_string_equal(oc.host, "::1");
	assert_int_equal(oc.port, 9002);
	assert_int_equal(oc.proto, MGW_CLIENT_H1);
	assert_null(oc.tls);
	assert_null(oc.sni);
	assert_string_equal(oc.name, "a/[::1]:9002");

	for (size_t i = 0; i < 3; i++)
		assert_int_equal(mgw_upstream_state(&a->servers[i], 0),
		                 MGW_UPSTREAM_S_UP);
	assert_non_null(f.ups->budget);
	assert_true(f.ups->budget->ratio == 0.2);
	destroy(&f);
}

static void test_build_tls(void **state)
{
	static const char doc[] =
		"upstreams:\n"
		"  - name: s\n"
		"    protocol: alpn\n"
		"    tls:\n"
		"      sni: mcp.example.com\n"
		"    servers:\n"
		"      - url: https://127.0.0.1:9443\n"
		"      - url: https://[::1]\n"
		"  - name: t\n"
		"    servers:\n"
		"      - url: https://127.0.0.1:9444\n"
		"      - url: http://127.0.0.1:9445\n";
	struct fx f;
	struct mgw_client_origin_cfg oc;
	struct mgw_upstream_group *s, *t;

	(void)state;
	build(&f, doc);
	s = mgw_upstreams_find(f.ups, "s");
	t = mgw_upstreams_find(f.ups, "t");
	assert_non_null(s->tls);
	assert_int_equal(s->proto, MGW_CLIENT_AUTO);
	assert_int_equal(s->servers[1].port, 443);
	mgw_upstream_origin_cfg(&s->servers[0], &oc);
	assert_ptr_equal(oc.tls, s->tls);
	assert_string_equal(oc.sni, "mcp.example.com");
	assert_int_equal(oc.proto, MGW_CLIENT_AUTO);
	/* HTTP/1.1 over TLS for the https server, plain for the other */
	assert_non_null(t->tls);
	mgw_upstream_origin_cfg(&t->servers[0], &oc);
	assert_ptr_equal(oc.tls, t->tls);
	assert_int_equal(oc.proto, MGW_CLIENT_H1);
	mgw_upstream_origin_cfg(&t->servers[1], &oc);
	assert_null(oc.tls);
	destroy(&f);
}

static void test_build_without_groups(void **state)
{
	struct mgw_config *c = mgw_config_defaults();
	struct mgw_upstreams *ups;
	struct mgw_upstream_picker *pk;

	(void)state;
	ups = mgw_upstreams_new(&c->serve, err, sizeof(err));
	assert_non_null(ups);
	assert_int_equal(ups->n_groups, 0);
	assert_null(mgw_upstreams_find(ups, "x"));
	pk = mgw_upstream_picker_new(ups, 0);
	assert_non_null(pk);
	assert_true(pk->rng != 0);
	mgw_upstream_picker_free(pk);
	mgw_upstream_picker_free(NULL);
	mgw_upstreams_free(ups);
	mgw_upstreams_free(NULL);
	mgw_config_free(c);
}

/* ---- the next attempt of one request ---- */

/* ---- passive outlier ejection ---- */

static void test_connect_failures_eject(void **state)
{
	struct fx f;
	struct mgw_upstream_server *s;
	uint64_t t = 100000;

	(void)state;
	build(&f, three_servers);
	s = &f.ups->groups[0].servers[0];
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t), 0);
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t), 0);
	assert_true(mgw_upstream_available(s, t));
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t), 1);
	assert_false(mgw_upstream_available(s, t));
	assert_int_equal(mgw_upstream_state(s, t), MGW_UPSTREAM_S_EJECTED);
	assert_string_equal(mgw_upstream_state_name(MGW_UPSTREAM_S_EJECTED),
	                    "ejected");
	/* failures of attempts that were already running do not extend it */
	for (int i = 0; i < 5; i++)
		assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE,
		                                     0, t + 10), 0);
	assert_int_equal(atomic_load(&s->n_ejections), 1);
	assert_false(mgw_upstream_available(s, t + 4999));
	assert_true(mgw_upstream_available(s, t + 5000));
	assert_int_equal(mgw_upstream_state(s, t + 5000), MGW_UPSTREAM_S_UP);
	assert_int_equal(atomic_load(&s->ejected_until), 0);
	/* ... nor count towards the next one: back in, it takes the full
	 * threshold again */
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0,
	                                     t + 5001), 0);
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0,
	                                     t + 5001), 0);
	assert_true(mgw_upstream_available(s, t + 5001));
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0,
	                                     t + 5001), 1);
	destroy(&f);
}

static void test_success_resets_counters(void **state)
{
	struct fx f;
	struct mgw_upstream_server *s;
	uint64_t t = 100000;

	(void)state;
	build(&f, three_servers);
	s = &f.ups->groups[0].servers[1];
	for (int round = 0; round < 10; round++) {
		mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t);
		mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t);
		mgw_upstream_report(s, MGW_UPSTREAM_OK, 200, t);
		for (int i = 0; i < 4; i++)
			mgw_upstream_report(s, MGW_UPSTREAM_HTTP_5XX, 503, t);
		/* a 4xx is the server working correctly */
		mgw_upstream_report(s, MGW_UPSTREAM_HTTP_5XX, 404, t);
	}
	assert_true(mgw_upstream_available(s, t));
	assert_int_equal(atomic_load(&s->n_ejections), 0);
	/* a 5xx proves the server reachable: connect failures restart */
	mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t);
	mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t);
	mgw_upstream_report(s, MGW_UPSTREAM_HTTP_5XX, 500, t);
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t), 0);
	assert_true(mgw_upstream_available(s, t));
	destroy(&f);
}

static void test_5xx_and_failures_eject(void **state)
{
	struct fx f;
	struct mgw_upstream_server *s;
	uint64_t t = 100000;

	(void)state;
	build(&f, three_servers);
	s = &f.ups->groups[0].servers[2];
	mgw_upstream_report(s, MGW_UPSTREAM_HTTP_5XX, 502, t);
	mgw_upstream_report(s, MGW_UPSTREAM_FAILURE, 0, t);
	mgw_upstream_report(s, MGW_UPSTREAM_HTTP_5XX, 503, t);
	mgw_upstream_report(s, MGW_UPSTREAM_FAILURE, 0, t);
	assert_true(mgw_upstream_available(s, t));
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_HTTP_5XX, 500, t), 1);
	assert_false(mgw_upstream_available(s, t));
	destroy(&f);
}

static void test_disabled_thresholds(void **state)
{
	static const char doc[] =
		"upstreams:\n"
		"  - name: g\n"
		"    servers:\n"
		"      - url: http://127.0.0.1:9001\n"
		"      - url: http://127.0.0.1:9002\n"
		"    outlier:\n"
		"      consecutive_connect_failures: 0\n"
		"      consecutive_5xx: 0\n";
	struct fx f;
	struct mgw_upstream_server *s;

	(void)state;
	build(&f, doc);
	s = &f.ups->groups[0].servers[0];
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, 1), 0);
		assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_HTTP_5XX, 500, 1), 0);
	}
	assert_true(mgw_upstream_available(s, 1));
	destroy(&f);
}

/* Ejects s at t with three connect failures; returns the deadline. */
static uint64_t eject_at(struct mgw_upstream_server *s, uint64_t t)
{
	for (int i = 0; i < 2; i++)
		assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE,
		                                     0, t), 0);
	assert_int_equal(mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, t),
	                 1);
	return atomic_load(&s->ejected_until);
}

static void test_backoff_doubles_and_caps(void **state)
{
	static const uint64_t expect[] = {5000, 10000, 20000, 40000, 60000,
	                                  60000, 60000};
	struct fx f;
	struct mgw_upstream_server *s;
	uint64_t t = 1000000;

	(void)state;
	build(&f, three_servers);
	s = &f.ups->groups[0].servers[0];
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		uint64_t until = eject_at(s, t);

		assert_int_equal(until - t, expect[i]);
		assert_false(mgw_upstream_available(s, until - 1));
		/* re-admitted, then failing again right away */
		t = until;
		assert_true(mgw_upstream_available(s, t));
		t += 100;
	}
	assert_int_equal(atomic_load(&s->n_ejections), 7);
	/* good for longer than max_ejection: the backoff starts over */
	t += 60001;
	assert_int_equal(eject_at(s, t) - t, 5000);
	destroy(&f);
}

/* The deadline passing does not need anybody to look in between: the
 * next ejection still sees how long ago the previous one ended. */
static void test_backoff_without_observer(void **state)
{
	struct fx f;
	struct mgw_upstream_server *s;
	uint64_t t = 1000000, until;

	(void)state;
	build(&f, three_servers);
	s = &f.ups->groups[0].servers[0];
	until = eject_at(s, t);
	assert_int_equal(until - t, 5000);
	/* nobody calls available(); failures resume after the deadline */
	until = eject_at(s, until + 10);
	assert_int_equal(until - (t + 5010), 10000);
	destroy(&f);
}

static void test_readmission_waits_for_active_check(void **state)
{
	struct fx f;
	struct mgw_upstream_server *s;
	uint64_t t = 100000, until;

	(void)state;
	build(&f, three_servers);
	s = &f.ups->groups[0].servers[1];
	until = eject_at(s, t);
	mgw_upstream_set_health(s, 0); /* the health checker agrees: dead */
	assert_int_equal(mgw_upstream_state(s, until + 1000), MGW_UPSTREAM_S_DOWN);
	assert_false(mgw_upstream_available(s, until + 1000));
	mgw_upstream_set_health(s, 1); /* it came back (rise probes passed) */
	assert_true(mgw_upstream_available(s, until + 1000));
	destroy(&f);
}

static void test_never_ejects_last_server(void **state)
{
	struct fx f;
	struct mgw_upstream_group *g;
	uint64_t t = 100000;

	(void)state;
	build(&f, three_servers);
	g = &f.ups->groups[0];
	eject_at(&g->servers[0], t);
	mgw_upstream_set_health(&g->servers[1], 0);
	/* server 2 is the only one left: failures do not take it out */
	for (int i = 0; i < 10; i++)
		assert_int_equal(mgw_upstream_report(&g->servers[2],
		                                     MGW_UPSTREAM_CONNECT_FAILURE, 0,
		                                     t), 0);
	assert_true(mgw_upstream_available(&g->servers[2], t));
	/* once another server is back, the next failure ejects it */
	mgw_upstream_set_health(&g->servers[1], 1);
	assert_int_equal(mgw_upstream_report(&g->servers[2],
	                                     MGW_UPSTREAM_CONNECT_FAILURE, 0, t),
	                 1);
	destroy(&f);
}

static void test_draining_and_inflight(void **state)
{
	struct fx f;
	struct mgw_upstream_server *s;

	(void)state;
	build(&f, three_servers);
	s = &f.ups->groups[0].servers[0];
	mgw_upstream_set_draining(s, 1);
	assert_false(mgw_upstream_available(s, 1));
	assert_int_equal(mgw_upstream_state(s, 1), MGW_UPSTREAM_S_DRAINING);
	mgw_upstream_set_draining(s, 0);
	assert_true(mgw_upstream_available(s, 1));
	mgw_upstream_acquire(s);
	mgw_upstream_acquire(s);
	assert_int_equal(atomic_load(&s->in_flight), 2);
	mgw_upstream_release(s);
	mgw_upstream_release(s);
	assert_int_equal(atomic_load(&s->in_flight), 0);
	destroy(&f);
}

/* ---- several workers at once ---- */

#define NTHREADS 4
#define ROUNDS 20000

struct worker_arg {
	struct mgw_upstreams *ups;
	int id;
	size_t picked;
};

static void *worker(void *p)
{
	struct worker_arg *w = p;
	struct mgw_upstream_group *g = &w->ups->groups[0];
	struct mgw_upstream_picker *pk = mgw_upstream_picker_new(w->ups,
	                                                         (uint64_t)w->id + 1);

	for (int i = 0; i < ROUNDS; i++) {
		struct mgw_upstream_server *s =
			mgw_upstream_group_pick(pk, g, NULL, 0, NULL, 0, 1000);
		if (!s)
			continue;
		w->picked++;
		mgw_upstream_acquire(s);
		/* server 0 always fails, the others always succeed */
		if (s->index == 0)
			mgw_upstream_report(s, MGW_UPSTREAM_CONNECT_FAILURE, 0, 1000);
		else
			mgw_upstream_report(s, MGW_UPSTREAM_OK, 200, 1000);
		mgw_upstream_release(s);
	}
	mgw_upstream_picker_free(pk);
	return NULL;
}

static void test_threads_share_state(void **state)
{
	struct fx f;
	pthread_t th[NTHREADS];
	struct worker_arg args[NTHREADS];
	struct mgw_upstream_group *g;
	uint64_t picked = 0;

	(void)state;
	build(&f, three_servers);
	g = &f.ups->groups[0];
	for (int i = 0; i < NTHREADS; i++) {
		args[i] = (struct worker_arg){.ups = f.ups, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].picked, ROUNDS);
	}
	for (size_t i = 0; i < g->n_servers; i++) {
		assert_int_equal(atomic_load(&g->servers[i].in_flight), 0);
		picked += atomic_load(&g->servers[i].n_picked);
	}
	assert_int_equal(picked, (uint64_t)NTHREADS * ROUNDS);
	/* the failing server was ejected exactly once (the clock stands
	 * still) and took only a few attempts before every worker saw it */
	assert_int_equal(atomic_load(&g->servers[0].n_ejections), 1);
	assert_false(mgw_upstream_available(&g->servers[0], 1000));
	assert_true(atomic_load(&g->servers[0].n_picked) < 1000);
	destroy(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adopt),
		cmocka_unit_test(test_build_servers),
		cmocka_unit_test(test_build_tls),
		cmocka_unit_test(test_build_without_groups),
		cmocka_unit_test(test_connect_failures_eject),
		cmocka_unit_test(test_success_resets_counters),
		cmocka_unit_test(test_5xx_and_failures_eject),
		cmocka_unit_test(test_disabled_thresholds),
		cmocka_unit_test(test_backoff_doubles_and_caps),
		cmocka_unit_test(test_backoff_without_observer),
		cmocka_unit_test(test_readmission_waits_for_active_check),
		cmocka_unit_test(test_never_ejects_last_server),
		cmocka_unit_test(test_draining_and_inflight),
		cmocka_unit_test(test_threads_share_state),
	};

	mgw_log_set_level(MGW_LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
