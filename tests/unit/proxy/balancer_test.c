/* balancer_test.c - unit tests for src/proxy/balancer.c: the exact smooth
 * round-robin sequence, weighted random and P2C distributions (seeded, so
 * reproducible), consistent hashing (stability, spread, minimal movement
 * when servers come and go), and that every balancer skips down, ejected,
 * draining and excluded servers and returns NULL when nothing is left. */
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
#include "proxy/balancer.h"
#include "proxy/upstream.h"

#define NOW 1000000u

struct fixture {
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_upstream_picker *pk;
	struct mgw_upstream_group *g;
};

/* Builds one group "g" with the given balancer and servers
 * "http://127.0.0.1:(first_port+i)" of the given weights. */
static void setup_group_at(struct fixture *f, const char *balancer,
                           const uint32_t *weights, size_t n,
                           size_t first_port)
{
	char doc[8192], err[512];
	int off;

	off = snprintf(doc, sizeof(doc),
	               "upstreams:\n  - name: g\n    balancer: %s\n"
	               "    hash_header: X-Key\n    servers:\n", balancer);
	for (size_t i = 0; i < n; i++)
		off += snprintf(doc + off, sizeof(doc) - (size_t)off,
		                "      - url: http://127.0.0.1:%zu\n"
		                "        weight: %u\n", first_port + i, weights[i]);
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	if (!f->ups)
		fail_msg("upstreams: %s", err);
	f->pk = mgw_upstream_picker_new(f->ups, 12345);
	assert_non_null(f->pk);
	f->g = &f->ups->groups[0];
}

static void setup_group(struct fixture *f, const char *balancer,
                        const uint32_t *weights, size_t n)
{
	setup_group_at(f, balancer, weights, n, 9001);
}

static void teardown_group(struct fixture *f)
{
	mgw_upstream_picker_free(f->pk);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
}

static size_t pick_index(struct fixture *f, const char *key,
                         const struct mgw_upstream_server *const *ex,
                         size_t nex)
{
	struct mgw_upstream_server *s = mgw_upstream_group_pick(
		f->pk, f->g, key, key ? strlen(key) : 0, ex, nex, NOW);

	assert_non_null(s);
	assert_ptr_equal(s->group, f->g);
	return s->index;
}

static void count_picks(struct fixture *f, size_t n, size_t *counts)
{
	for (size_t i = 0; i < n; i++)
		counts[pick_index(f, NULL, NULL, 0)]++;
}

/* ---- round robin ---- */

static void test_rr_smooth_sequence(void **state)
{
	static const uint32_t w[] = {5, 1, 1};
	static const size_t expect[] = {0, 0, 1, 0, 2, 0, 0};
	struct fixture f;
	size_t counts[3] = {0};

	(void)state;
	setup_group(&f, "round_robin", w, 3);
	/* nginx's documented sequence for 5,1,1: a a b a c a a, repeating */
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < 7; i++)
			assert_int_equal(pick_index(&f, NULL, NULL, 0), expect[i]);
	count_picks(&f, 700, counts);
	assert_int_equal(counts[0], 500);
	assert_int_equal(counts[1], 100);
	assert_int_equal(counts[2], 100);
	teardown_group(&f);
}

static void test_rr_equal_weights(void **state)
{
	static const uint32_t w[] = {1, 1, 1, 1};
	struct fixture f;
	size_t counts[4] = {0};

	(void)state;
	setup_group(&f, "round_robin", w, 4);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(pick_index(&f, NULL, NULL, 0), i % 4);
	count_picks(&f, 400, counts);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(counts[i], 100);
	teardown_group(&f);
}

static void test_rr_skips_down(void **state)
{
	static const uint32_t w[] = {5, 1, 1};
	struct fixture f;
	size_t counts[3] = {0};

	(void)state;
	setup_group(&f, "round_robin", w, 3);
	mgw_upstream_set_health(&f.g->servers[1], 0);
	count_picks(&f, 600, counts);
	assert_int_equal(counts[1], 0);
	assert_int_equal(counts[0], 500);
	assert_int_equal(counts[2], 100);
	/* back up: its share returns */
	mgw_upstream_set_health(&f.g->servers[1], 1);
	memset(counts, 0, sizeof(counts));
	count_picks(&f, 7000, counts);
	assert_in_range(counts[1], 990, 1010);
	teardown_group(&f);
}

/* ---- random ---- */

static void test_random_weighted(void **state)
{
	static const uint32_t w[] = {1, 2, 7};
	struct fixture f;
	size_t counts[3] = {0};
	const size_t n = 100000;

	(void)state;
	setup_group(&f, "random", w, 3);
	count_picks(&f, n, counts);
	/* expected 10 %, 20 %, 70 %; 1.5 points is > 10 standard deviations */
	assert_in_range(counts[0], n * 85 / 1000, n * 115 / 1000);
	assert_in_range(counts[1], n * 185 / 1000, n * 215 / 1000);
	assert_in_range(counts[2], n * 685 / 1000, n * 715 / 1000);
	teardown_group(&f);
}

static void test_random_reproducible(void **state)
{
	static const uint32_t w[] = {1, 1, 1};
	struct fixture a, b;

	(void)state;
	setup_group(&a, "random", w, 3);
	setup_group(&b, "random", w, 3);
	for (int i = 0; i < 200; i++)
		assert_int_equal(pick_index(&a, NULL, NULL, 0),
		                 pick_index(&b, NULL, NULL, 0));
	teardown_group(&a);
	teardown_group(&b);
}

/* ---- least request ---- */

static void test_p2c_prefers_less_loaded(void **state)
{
	static const uint32_t w[] = {1, 1};
	struct fixture f;

	(void)state;
	setup_group(&f, "least_request", w, 2);
	for (int i = 0; i < 10; i++)
		mgw_upstream_acquire(&f.g->servers[0]);
	for (int i = 0; i < 200; i++)
		assert_int_equal(pick_index(&f, NULL, NULL, 0), 1);
	for (int i = 0; i < 10; i++)
		mgw_upstream_release(&f.g->servers[0]);
	assert_int_equal(atomic_load(&f.g->servers[0].in_flight), 0);
	teardown_group(&f);
}

static void test_p2c_never_most_loaded(void **state)
{
	static const uint32_t w[] = {1, 1, 1, 1};
	struct fixture f;
	size_t counts[4] = {0};

	(void)state;
	setup_group(&f, "least_request", w, 4);
	/* server 2 is the busiest: two distinct candidates always include
	 * a less loaded one */
	for (int i = 0; i < 5; i++)
		mgw_upstream_acquire(&f.g->servers[2]);
	mgw_upstream_acquire(&f.g->servers[0]);
	count_picks(&f, 3000, counts);
	assert_int_equal(counts[2], 0);
	assert_true(counts[1] > counts[0]);
	assert_true(counts[3] > counts[0]);
	teardown_group(&f);
}

static void test_p2c_weighted_load(void **state)
{
	static const uint32_t w[] = {3, 1};
	struct fixture f;
	size_t counts[2] = {0};

	(void)state;
	setup_group(&f, "least_request", w, 2);
	/* (2+1)/3 = 1 beats (1+1)/1 = 2: the heavier server takes more */
	mgw_upstream_acquire(&f.g->servers[0]);
	mgw_upstream_acquire(&f.g->servers[0]);
	mgw_upstream_acquire(&f.g->servers[1]);
	for (int i = 0; i < 100; i++)
		assert_int_equal(pick_index(&f, NULL, NULL, 0), 0);
	/* idle and equal weights: ties are broken at random, evenly */
	teardown_group(&f);
	setup_group(&f, "least_request", (const uint32_t[]){1, 1}, 2);
	count_picks(&f, 10000, counts);
	assert_in_range(counts[0], 4600, 5400);
	teardown_group(&f);
}

/* ---- hash ---- */

static void test_hash64_is_stable(void **state)
{
	(void)state;
	/* Pinned values (computed independently): a changed hash would move
	 * every key to another replica after an upgrade. */
	assert_true(mgw_hash64("", 0) == 0xefd01f60ba992926ULL);
	assert_true(mgw_hash64("a", 1) == 0x82a2a958a9bece5bULL);
	assert_true(mgw_hash64("user-42", 7) == 0xa39532c7ab051e8dULL);
	assert_true(mgw_hash64("http://127.0.0.1:9001#0", 23) ==
	            0x1cb47d7a1734856aULL);
}

static void key_of(size_t i, char *buf, size_t len)
{
	snprintf(buf, len, "session-%zu", i);
}

#define NKEYS 20000

static void test_hash_same_key_same_server(void **state)
{
	static const uint32_t w[] = {1, 1, 1};
	struct fixture a, b;
	size_t counts[3] = {0};
	char key[32];

	(void)state;
	setup_group(&a, "hash", w, 3);
	setup_group(&b, "hash", w, 3); /* another "process" */
	assert_int_equal(a.g->n_ring, 300);
	for (size_t i = 0; i < NKEYS; i++) {
		size_t s;

		key_of(i, key, sizeof(key));
		s = pick_index(&a, key, NULL, 0);
		assert_int_equal(pick_index(&a, key, NULL, 0), s);
		assert_int_equal(pick_index(&b, key, NULL, 0), s);
		counts[s]++;
	}
	for (size_t i = 0; i < 3; i++)
		assert_in_range(counts[i], NKEYS / 4, NKEYS * 42 / 100);
	teardown_group(&a);
	teardown_group(&b);
}

static void test_hash_weights(void **state)
{
	static const uint32_t w[] = {1, 3};
	struct fixture f;
	size_t counts[2] = {0};
	char key[32];

	(void)state;
	setup_group(&f, "hash", w, 2);
	assert_int_equal(f.g->n_ring, 400);
	for (size_t i = 0; i < NKEYS; i++) {
		key_of(i, key, sizeof(key));
		counts[pick_index(&f, key, NULL, 0)]++;
	}
	assert_in_range(counts[1], NKEYS * 65 / 100, NKEYS * 85 / 100);
	teardown_group(&f);
}

/* Adding a fourth server moves about a quarter of the keys, all of them
 * to the new server; removing it moves exactly those back. */
static void test_hash_minimal_movement(void **state)
{
	static const uint32_t w[] = {1, 1, 1, 1};
	struct fixture three, four;
	size_t moved = 0;
	char key[32];

	(void)state;
	setup_group(&three, "hash", w, 3);
	setup_group(&four, "hash", w, 4);
	for (size_t i = 0; i < NKEYS; i++) {
		size_t a, b;

		key_of(i, key, sizeof(key));
		a = pick_index(&three, key, NULL, 0);
		b = pick_index(&four, key, NULL, 0);
		if (a != b) {
			assert_int_equal(b, 3);
			moved++;
		}
	}
	assert_in_range(moved, NKEYS * 15 / 100, NKEYS * 35 / 100);
	teardown_group(&three);
	teardown_group(&four);
}

/* Removing the first server moves only its keys: points belong to URLs,
 * not to positions in the list. */
static void test_hash_remove_first(void **state)
{
	static const uint32_t w[] = {1, 1, 1, 1};
	struct fixture four, three;
	char key[32];

	(void)state;
	setup_group_at(&four, "hash", w, 4, 9001);  /* 9001..9004 */
	setup_group_at(&three, "hash", w, 3, 9002); /* 9002..9004 */
	for (size_t i = 0; i < NKEYS; i++) {
		size_t a, b;

		key_of(i, key, sizeof(key));
		a = pick_index(&four, key, NULL, 0);
		b = pick_index(&three, key, NULL, 0);
		if (a != 0)
			assert_int_equal(b, a - 1); /* same server, one slot up */
	}
	teardown_group(&four);
	teardown_group(&three);
}

/* Pinned placement (computed by an independent model of the ring): a
 * change of the layout would send every client of a running fleet to
 * another replica after an upgrade. */
static void test_hash_golden_mapping(void **state)
{
	static const uint32_t w[] = {1, 1, 1};
	static const size_t golden[10] = {1, 2, 2, 1, 1, 2, 1, 0, 0, 1};
	struct fixture f;
	char key[32];

	(void)state;
	setup_group(&f, "hash", w, 3);
	for (size_t i = 0; i < 10; i++) {
		key_of(i, key, sizeof(key));
		assert_int_equal(pick_index(&f, key, NULL, 0), golden[i]);
	}
	teardown_group(&f);
}

/* A down server's keys spread over the others; every other key stays. */
static void test_hash_skips_down(void **state)
{
	static const uint32_t w[] = {1, 1, 1, 1};
	struct fixture f;
	size_t before[NKEYS], spread[4] = {0};
	char key[32];

	(void)state;
	setup_group(&f, "hash", w, 4);
	for (size_t i = 0; i < NKEYS; i++) {
		key_of(i, key, sizeof(key));
		before[i] = pick_index(&f, key, NULL, 0);
	}
	mgw_upstream_set_health(&f.g->servers[1], 0);
	for (size_t i = 0; i < NKEYS; i++) {
		size_t now;

		key_of(i, key, sizeof(key));
		now = pick_index(&f, key, NULL, 0);
		assert_int_not_equal(now, 1);
		if (before[i] != 1)
			assert_int_equal(now, before[i]);
		else
			spread[now]++;
	}
	/* the orphaned keys did not all land on one neighbour */
	assert_true(spread[0] > 0 && spread[2] > 0 && spread[3] > 0);
	mgw_upstream_set_health(&f.g->servers[1], 1);
	for (size_t i = 0; i < NKEYS; i++) {
		key_of(i, key, sizeof(key));
		assert_int_equal(pick_index(&f, key, NULL, 0), before[i]);
	}
	teardown_group(&f);
}

static void test_hash_without_key_round_robin(void **state)
{
	static const uint32_t w[] = {1, 1, 1};
	struct fixture f;

	(void)state;
	setup_group(&f, "hash", w, 3);
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(pick_index(&f, NULL, NULL, 0), i % 3);
	teardown_group(&f);
}

static void test_hash_large_weights_bounded(void **state)
{
	uint32_t w[20];
	struct fixture f;

	(void)state;
	for (size_t i = 0; i < 20; i++)
		w[i] = 1000;
	setup_group(&f, "hash", w, 20);
	assert_true(f.g->n_ring <= MGW_HASH_RING_MAX);
	assert_true(f.g->n_ring >= MGW_HASH_RING_MAX - 20);
	for (size_t i = 1; i < f.g->n_ring; i++)
		assert_true(f.g->ring[i - 1].hash <= f.g->ring[i].hash);
	teardown_group(&f);
}

/* ---- what every balancer skips ---- */

static const char *const all_balancers[] = {"round_robin", "least_request",
                                            "random", "hash"};

static void test_exclusion(void **state)
{
	static const uint32_t w[] = {1, 1, 1};

	(void)state;
	for (size_t b = 0; b < 4; b++) {
		struct fixture f;
		const struct mgw_upstream_server *ex[3];
		char key[32];

		setup_group(&f, all_balancers[b], w, 3);
		ex[0] = &f.g->servers[0];
		ex[1] = &f.g->servers[2];
		for (size_t i = 0; i < 100; i++) {
			key_of(i, key, sizeof(key));
			assert_int_equal(pick_index(&f, key, ex, 2), 1);
			assert_int_not_equal(pick_index(&f, key, ex, 1), 0);
		}
		ex[2] = &f.g->servers[1];
		assert_null(mgw_upstream_group_pick(f.pk, f.g, "k", 1, ex, 3, NOW));
		teardown_group(&f);
	}
}

static void test_all_unavailable(void **state)
{
	static const uint32_t w[] = {2, 1, 1};

	(void)state;
	for (size_t b = 0; b < 4; b++) {
		struct fixture f;
		struct mgw_upstream_server *s;

		setup_group(&f, all_balancers[b], w, 3);
		mgw_upstream_set_health(&f.g->servers[0], 0);
		mgw_upstream_set_draining(&f.g->servers[1], 1);
		atomic_store(&f.g->servers[2].ejected_until, NOW + 1);
		for (int i = 0; i < 20; i++) {
			assert_null(mgw_upstream_group_pick(f.pk, f.g, "k", 1, NULL,
			                                    0, NOW));
			assert_null(mgw_upstream_group_pick(f.pk, f.g, NULL, 0, NULL,
			                                    0, NOW));
		}
		/* the ejection ends: only server 2 qualifies */
		for (int i = 0; i < 20; i++) {
			s = mgw_upstream_group_pick(f.pk, f.g, "k", 1, NULL, 0,
			                            NOW + 1);
			assert_non_null(s);
			assert_int_equal(s->index, 2);
		}
		assert_int_equal(atomic_load(&f.g->servers[2].n_picked), 20);
		teardown_group(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rr_smooth_sequence),
		cmocka_unit_test(test_rr_equal_weights),
		cmocka_unit_test(test_rr_skips_down),
		cmocka_unit_test(test_random_weighted),
		cmocka_unit_test(test_random_reproducible),
		cmocka_unit_test(test_p2c_prefers_less_loaded),
		cmocka_unit_test(test_p2c_never_most_loaded),
		cmocka_unit_test(test_p2c_weighted_load),
		cmocka_unit_test(test_hash64_is_stable),
		cmocka_unit_test(test_hash_same_key_same_server),
		cmocka_unit_test(test_hash_weights),
		cmocka_unit_test(test_hash_minimal_movement),
		cmocka_unit_test(test_hash_remove_first),
		cmocka_unit_test(test_hash_golden_mapping),
		cmocka_unit_test(test_hash_skips_down),
		cmocka_unit_test(test_hash_without_key_round_robin),
		cmocka_unit_test(test_hash_large_weights_bounded),
		cmocka_unit_test(test_exclusion),
		cmocka_unit_test(test_all_unavailable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
