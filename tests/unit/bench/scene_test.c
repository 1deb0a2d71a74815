/* scene_test.c - unit tests for bench/src/scene.c: each scene's cells
 * are the study's (counts, replicas, eras, connection modes, designs,
 * victims), defaults and overrides of rate, duration and kill time, the
 * external path only when asked for and under its given name, names and
 * slugs unique within a scene, and --cell filtering. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "bench/src/scene.h"

static struct mgw_bench_cell cells[MGW_BENCH_MAX_CELLS];

static int build(enum mgw_bench_scene s, const struct mgw_bench_opts *o)
{
	int n = mgw_bench_scene_cells(s, o, cells, MGW_BENCH_MAX_CELLS);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			assert_string_not_equal(cells[i].name, cells[j].name);
			assert_string_not_equal(cells[i].slug, cells[j].slug);
		}
	return n;
}

static int count(int n, enum mgw_bench_path p, enum mgw_bench_era e)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += cells[i].path == p && cells[i].era == e;
	return k;
}

static void test_names(void **state)
{
	enum mgw_bench_scene s;

	(void)state;
	for (int i = 0; i < MGW_BENCH_SCENE_N; i++) {
		assert_int_equal(mgw_bench_scene_parse(
			mgw_bench_scene_name((enum mgw_bench_scene)i), &s), 0);
		assert_int_equal((int)s, i);
	}
	assert_int_equal(mgw_bench_scene_parse("all", &s), MGW_EINVAL);
	assert_int_equal(mgw_bench_scene_parse("podkill", &s), MGW_EINVAL);
	assert_string_equal(mgw_bench_path_name(MGW_BENCH_GATEWAY_HA), "gateway-ha");
	assert_null(mgw_bench_state_name(MGW_BENCH_STATE_NONE));
	assert_string_equal(mgw_bench_state_name(MGW_BENCH_STATE_HMAC), "hmac");
	assert_string_equal(mgw_bench_store_name(MGW_BENCH_STORE_SEALED), "sealed");
}

static void test_scale_out(void **state)
{
	struct mgw_bench_opts o;
	int n, seen[5] = { 0 };

	(void)state;
	memset(&o, 0, sizeof(o));
	n = build(MGW_BENCH_SCALE_OUT, &o);
	/* 3 replica counts x 2 connection modes x 2 eras direct, plus the
	 * gateway at 4 replicas in both modes and eras */
	assert_int_equal(n, 16);
	assert_int_equal(count(n, MGW_BENCH_DIRECT, MGW_BENCH_LEGACY), 6);
	assert_int_equal(count(n, MGW_BENCH_DIRECT, MGW_BENCH_MODERN), 6);
	assert_int_equal(count(n, MGW_BENCH_GATEWAY, MGW_BENCH_LEGACY), 2);
	assert_int_equal(count(n, MGW_BENCH_EXTERNAL, MGW_BENCH_LEGACY), 0);
	for (int i = 0; i < n; i++) {
		assert_true(cells[i].offered_rps == 200.0);
		assert_true(cells[i].duration_s == 30.0);
		assert_int_equal(cells[i].victim, MGW_BENCH_VICTIM_NONE);
		if (cells[i].path == MGW_BENCH_DIRECT)
			seen[cells[i].replicas]++;
		if (cells[i].path == MGW_BENCH_GATEWAY)
			assert_int_equal(cells[i].store, cells[i].era == MGW_BENCH_LEGACY
			                 ? MGW_BENCH_STORE_MEMORY : MGW_BENCH_STORE_NONE);
	}
	assert_int_equal(seen[1], 4);
	assert_int_equal(seen[2], 4);
	assert_int_equal(seen[4], 4);
	assert_string_equal(cells[0].name, "legacy direct 1 replica, new conn");
	assert_string_equal(cells[0].slug, "legacy-direct-1-replica-new-conn");

	o.external = "proxy {listen} {ports}";
	o.external_name = "haproxy-sticky";
	o.quick = 1;
	n = build(MGW_BENCH_SCALE_OUT, &o);
	assert_int_equal(n, 18);
	assert_int_equal(count(n, MGW_BENCH_EXTERNAL, MGW_BENCH_LEGACY), 2);
	assert_string_equal(cells[n - 1].name, "legacy haproxy-sticky 4 replicas, reuse");
	assert_true(cells[0].duration_s == 4.0);
}

static void test_handles(void **state)
{
	struct mgw_bench_opts o;
	int n, designs[4] = { 0 };

	(void)state;
	memset(&o, 0, sizeof(o));
	n = build(MGW_BENCH_HANDLES, &o);
	assert_int_equal(n, 6);
	for (int i = 0; i < n; i++) {
		assert_int_equal(cells[i].era, MGW_BENCH_MODERN);
		assert_int_equal(cells[i].conn, MGW_BENCH_CONN_NEW);
		assert_int_equal(cells[i].replicas, 2);
		assert_true(cells[i].offered_rps == 100.0);
		designs[cells[i].state]++;
	}
	assert_int_equal(designs[MGW_BENCH_STATE_NONE], 0);
	assert_int_equal(designs[MGW_BENCH_STATE_MEMORY], 2);
	assert_int_equal(designs[MGW_BENCH_STATE_HMAC], 2);
	assert_int_equal(designs[MGW_BENCH_STATE_REDIS], 2);
	assert_string_equal(cells[0].name, "modern direct 2 replicas, memory handles");
}

static void test_kills(void **state)
{
	struct mgw_bench_opts o;
	int n;

	(void)state;
	memset(&o, 0, sizeof(o));
	n = build(MGW_BENCH_POD_KILL, &o);
	assert_int_equal(n, 8);
	for (int i = 0; i < n; i++) {
		assert_int_equal(cells[i].victim, MGW_BENCH_VICTIM_REPLICA);
		assert_int_equal(cells[i].replicas, 2);
		assert_true(cells[i].duration_s == 60.0);
		assert_true(cells[i].kill_at_s == 20.0);
		assert_true(cells[i].offered_rps == 100.0);
	}
	assert_string_equal(cells[0].name, "legacy direct 2 replicas");
	assert_string_equal(cells[1].name, "legacy gateway 2 replicas");
	/* the modern gateway with and without the tools' annotations */
	assert_string_equal(cells[3].name, "modern gateway 2 replicas");
	assert_int_equal(cells[3].learn_tools, 0);
	assert_string_equal(cells[4].name, "modern gateway 2 replicas, tools learned");
	assert_int_equal(cells[4].learn_tools, 1);
	assert_string_equal(cells[4].slug, "modern-gateway-2-replicas-tools-learned");

	o.quick = 1;
	o.kill_at_s = 3;
	o.rate = 50;
	o.external = "x {listen}";
	n = build(MGW_BENCH_DEMO, &o);
	assert_int_equal(n, 3);
	assert_string_equal(cells[2].name, "legacy external 2 replicas");
	assert_true(cells[0].kill_at_s == 3.0);
	assert_true(cells[0].duration_s == 6.0);
	assert_true(cells[0].offered_rps == 50.0);

	memset(&o, 0, sizeof(o));
	n = build(MGW_BENCH_GATEWAY_KILL, &o);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++) {
		assert_int_equal(cells[i].path, MGW_BENCH_GATEWAY_HA);
		assert_int_equal(cells[i].victim, MGW_BENCH_VICTIM_GATEWAY);
	}
	assert_string_equal(cells[1].name, "legacy gateway-ha (sealed) 2 replicas");
	assert_string_equal(cells[3].name, "modern gateway-ha 2 replicas");

	assert_int_equal(cells[0].users, 0); /* --users 0: none */
	o.users = -1; /* the scene's default: many users in the kill scenes */
	n = build(MGW_BENCH_GATEWAY_KILL, &o);
	for (int i = 0; i < n; i++)
		assert_int_equal(cells[i].users, MGW_BENCH_KILL_USERS);
	assert_true(build(MGW_BENCH_SCALE_OUT, &o) > 0);
	assert_int_equal(cells[0].users, 0);
	o.users = 7;
	n = build(MGW_BENCH_GATEWAY_KILL, &o);
	assert_int_equal(cells[0].users, 7);
	o.users = 0;
	n = build(MGW_BENCH_GATEWAY_KILL, &o);
	/* the sealed cell checks that DELETEs hold across the gateways */
	for (int i = 0; i < n; i++)
		assert_int_equal(cells[i].delete_after,
		                 cells[i].store == MGW_BENCH_STORE_SEALED
		                         ? MGW_BENCH_DELETE_AFTER : 0);

	n = build(MGW_BENCH_REDIS_OUTAGE, &o);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++)
		assert_int_equal(cells[i].victim, MGW_BENCH_VICTIM_REDIS);
	assert_int_equal(cells[0].state, MGW_BENCH_STATE_REDIS);
	assert_int_equal(cells[1].store, MGW_BENCH_STORE_REDIS);
	assert_int_equal(cells[1].sentinel, 0);
	assert_int_equal(cells[2].store, MGW_BENCH_STORE_REDIS);
	assert_int_equal(cells[2].sentinel, 1);
	assert_string_equal(cells[2].name,
	                    "legacy gateway-ha (redis, sentinel) 2 replicas");
	assert_string_equal(cells[2].slug,
	                    "legacy-gateway-ha-redis-sentinel-2-replicas");
}

static void test_filters(void **state)
{
	struct mgw_bench_opts o;
	int n;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.filters[o.n_filters++] = "legacy-direct-2-*";
	o.filters[o.n_filters++] = "modern gateway 4 replicas, reuse";
	n = build(MGW_BENCH_SCALE_OUT, &o);
	assert_int_equal(n, 3);
	assert_string_equal(cells[0].slug, "legacy-direct-2-replicas-new-conn");
	assert_string_equal(cells[1].slug, "legacy-direct-2-replicas-reuse");
	assert_string_equal(cells[2].name, "modern gateway 4 replicas, reuse");
	o.n_filters = 1;
	o.filters[0] = "nothing*";
	assert_int_equal(mgw_bench_scene_cells(MGW_BENCH_SCALE_OUT, &o, cells,
	                                       MGW_BENCH_MAX_CELLS), 0);
	/* too small an array is an error, not a silent cut */
	o.n_filters = 0;
	assert_int_equal(mgw_bench_scene_cells(MGW_BENCH_SCALE_OUT, &o, cells, 3),
	                 MGW_ELIMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_scale_out),
		cmocka_unit_test(test_handles),
		cmocka_unit_test(test_kills),
		cmocka_unit_test(test_filters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
