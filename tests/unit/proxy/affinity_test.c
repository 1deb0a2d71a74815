/* affinity_test.c - a group's task map (src/proxy/affinity.c): learned,
 * found, replaced, expiring at the task's ttl within the map's bound,
 * evicted oldest-first when full, carried over a reload, shared by
 * threads; and the reading of a CreateTaskResult as a table. */
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
#include <jansson.h>

#include "core/errors.h"
#include "proxy/affinity.h"

#define OWNER_A 0xa1
#define OWNER_B 0xb2

static int put(struct mgw_task_map *m, const char *id, uint64_t owner,
               uint64_t ttl, uint64_t now)
{
	return mgw_task_map_put(m, id, strlen(id), owner, ttl, now);
}

/* The owner of id at now, or 0 when not known. */
static uint64_t get(struct mgw_task_map *m, const char *id, uint64_t now)
{
	uint64_t owner = 0;

	if (!mgw_task_map_get(m, id, strlen(id), now, &owner, NULL))
		return 0;
	return owner;
}

static void test_put_get(void **state)
{
	struct mgw_task_map m;
	uint64_t owner = 0, left = 0;

	(void)state;
	assert_int_equal(mgw_task_map_init(&m, 100, 60000), 0);
	assert_int_equal(put(&m, "t-1", OWNER_A, 5000, 1000), 0);
	assert_int_equal(put(&m, "t-2", OWNER_B, 5000, 1000), 0);
	assert_int_equal(get(&m, "t-1", 1000), OWNER_A);
	assert_int_equal(get(&m, "t-2", 2000), OWNER_B);
	assert_int_equal(get(&m, "t-3", 2000), 0);
	/* a prefix, or a longer id, is another task */
	assert_int_equal(get(&m, "t-", 2000), 0);
	assert_int_equal(get(&m, "t-10", 2000), 0);
	assert_int_equal(mgw_task_map_get(&m, "t-1", 3, 2500, &owner, &left), 1);
	assert_int_equal(left, 3500);
	/* learned again: the new owner */
	assert_int_equal(put(&m, "t-1", OWNER_B, 5000, 3000), 0);
	assert_int_equal(get(&m, "t-1", 3000), OWNER_B);
	assert_int_equal(mgw_task_map_size(&m), 2);
	mgw_task_map_deinit(&m);
}

static void test_refused(void **state)
{
	struct mgw_task_map m;
	char id[MGW_TASK_ID_MAX + 2];

	(void)state;
	assert_int_equal(mgw_task_map_init(&m, 10, 60000), 0);
	assert_int_equal(mgw_task_map_put(&m, "", 0, OWNER_A, 10, 0), MGW_EINVAL);
	assert_int_equal(put(&m, "t", OWNER_A, 0, 0), MGW_EINVAL);
	memset(id, 'x', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	assert_int_equal(put(&m, id, OWNER_A, 10, 0), MGW_EINVAL);
	id[MGW_TASK_ID_MAX] = '\0';     /* exactly the bound: kept */
	assert_int_equal(put(&m, id, OWNER_A, 10, 0), 0);
	assert_int_equal(get(&m, id, 0), OWNER_A);
	assert_int_equal(mgw_task_map_size(&m), 1);
	mgw_task_map_deinit(&m);
}

static void test_expiry(void **state)
{
	struct mgw_task_map m;

	(void)state;
	assert_int_equal(mgw_task_map_init(&m, 10, 60000), 0);
	assert_int_equal(put(&m, "short", OWNER_A, 1000, 1000), 0);
	assert_int_equal(put(&m, "long", OWNER_A, 10 * 60000, 1000), 0);
	assert_int_equal(put(&m, "unlimited", OWNER_A, UINT64_MAX, 1000), 0);
	assert_int_equal(get(&m, "short", 1999), OWNER_A);
	assert_int_equal(get(&m, "short", 2000), 0);     /* its ttl */
	assert_int_equal(mgw_task_map_size(&m), 2);      /* dropped on sight */
	/* beyond the map's max_ttl: the bound decides */
	assert_int_equal(get(&m, "long", 60999), OWNER_A);
	assert_int_equal(get(&m, "long", 61000), 0);
	assert_int_equal(get(&m, "unlimited", 60999), OWNER_A);
	assert_int_equal(get(&m, "unlimited", 61000), 0);
	/* a reader whose clock was read before the learn still finds it */
	assert_int_equal(put(&m, "late", OWNER_B, 1000, 5000), 0);
	assert_int_equal(get(&m, "late", 4999), OWNER_B);
	mgw_task_map_deinit(&m);
}

static void test_eviction_oldest_first(void **state)
{
	struct mgw_task_map m;
	char id[16];

	(void)state;
	assert_int_equal(mgw_task_map_init(&m, 3, 60000), 0);
	assert_int_equal(put(&m, "a", OWNER_A, 50000, 0), 0);
	assert_int_equal(put(&m, "b", OWNER_A, 50000, 1), 0);
	assert_int_equal(put(&m, "c", OWNER_A, 50000, 2), 0);
	/* learned again: newest again, so b is now the oldest */
	assert_int_equal(put(&m, "a", OWNER_B, 50000, 3), 0);
	assert_int_equal(put(&m, "d", OWNER_A, 50000, 4), 0);
	assert_int_equal(mgw_task_map_size(&m), 3);
	assert_int_equal(get(&m, "b", 5), 0);
	assert_int_equal(get(&m, "a", 5), OWNER_B);
	assert_int_equal(get(&m, "c", 5), OWNER_A);
	assert_int_equal(get(&m, "d", 5), OWNER_A);
	assert_int_equal(atomic_load(&m.evicted), 1);
	/* many more: never above the bound, the last three kept */
	for (int i = 0; i < 1000; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		assert_int_equal(put(&m, id, OWNER_A, 50000, 10), 0);
	}
	assert_int_equal(mgw_task_map_size(&m), 3);
	assert_int_equal(get(&m, "n999", 11), OWNER_A);
	assert_int_equal(get(&m, "n997", 11), OWNER_A);
	assert_int_equal(get(&m, "n996", 11), 0);
	assert_int_equal(atomic_load(&m.evicted), 1001);
	mgw_task_map_deinit(&m);
}

static void test_carry(void **state)
{
	struct mgw_task_map from, to;

	(void)state;
	assert_int_equal(mgw_task_map_init(&from, 10, 60000), 0);
	assert_int_equal(mgw_task_map_init(&to, 2, 60000), 0);
	assert_int_equal(put(&from, "gone", OWNER_A, 100, 0), 0);
	assert_int_equal(put(&from, "x", OWNER_A, 5000, 0), 0);
	assert_int_equal(put(&from, "y", OWNER_B, 5000, 1), 0);
	assert_int_equal(put(&from, "z", OWNER_B, 5000, 2), 0);
	atomic_store(&from.routed, 7);
	mgw_task_map_carry(&to, &from, 1000);
	/* the expired one stays behind; the new bound keeps the newest */
	assert_int_equal(mgw_task_map_size(&to), 2);
	assert_int_equal(get(&to, "gone", 1000), 0);
	assert_int_equal(get(&to, "x", 1000), 0);
	assert_int_equal(get(&to, "y", 1000), OWNER_B);
	assert_int_equal(get(&to, "z", 1000), OWNER_B);
	/* expiries are kept, not renewed */
	assert_int_equal(get(&to, "z", 5002), 0);
	assert_int_equal(atomic_load(&to.routed), 7);
	mgw_task_map_deinit(&from);
	mgw_task_map_deinit(&to);
}

static void test_owner_key(void **state)
{
	(void)state;
	assert_true(mgw_task_owner_key("http://127.0.0.1:1") ==
	            mgw_task_owner_key("http://127.0.0.1:1"));
	assert_true(mgw_task_owner_key("http://127.0.0.1:1") !=
	            mgw_task_owner_key("http://127.0.0.1:2"));
}

/* ---- many threads ------------------------------------------------------- */

struct worker {
	struct mgw_task_map *m;
	int base;
	int found;
};

static void *hammer(void *arg)
{
	struct worker *w = arg;
	char id[32];

	for (int i = 0; i < 2000; i++) {
		snprintf(id, sizeof(id), "w%d-%d", w->base, i);
		if (put(w->m, id, (uint64_t)w->base + 1, 60000, 1) != 0)
			return NULL;
		if (get(w->m, id, 2) == (uint64_t)w->base + 1)
			w->found++;
		/* another worker's, learned or evicted by now */
		snprintf(id, sizeof(id), "w%d-%d", (w->base + 1) % 4, i);
		(void)get(w->m, id, 2);
	}
	return NULL;
}

/* Four threads learning 2000 tasks each into a map of max entries. */
static void run_threads(struct mgw_task_map *m, size_t max, struct worker *w)
{
	pthread_t th[4];

	assert_int_equal(mgw_task_map_init(m, max, 60000), 0);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){m, i, 0};
		assert_int_equal(pthread_create(&th[i], NULL, hammer, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
}

static void test_threads(void **state)
{
	struct mgw_task_map m;
	struct worker w[4];

	(void)state;
	/* room for all: each thread finds every task it learned */
	run_threads(&m, 10000, w);
	assert_int_equal(mgw_task_map_size(&m), 8000);
	for (int i = 0; i < 4; i++)
		assert_int_equal(w[i].found, 2000);
	assert_int_equal(atomic_load(&m.evicted), 0);
	mgw_task_map_deinit(&m);
	/* a small bound: whatever the interleaving, full and exact */
	run_threads(&m, 1000, w);
	assert_int_equal(mgw_task_map_size(&m), 1000);
	assert_int_equal(atomic_load(&m.evicted), 8000 - 1000);
	mgw_task_map_deinit(&m);
}

/* ---- CreateTaskResult ----------------------------------------------------- */

struct crow {
	const char *what;
	const char *resp;
	int created;
	const char *id;
	uint64_t ttl;
};

#define R(result) "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" result "}"

static const struct crow crows[] = {
	{"the spec's example",
	 R("{\"resultType\":\"task\",\"taskId\":\"786512e2\",\"status\":"
	   "\"working\",\"ttlMs\":60000,\"pollIntervalMs\":5000}"),
	 1, "786512e2", 60000},
	{"ttlMs null: unlimited",
	 R("{\"resultType\":\"task\",\"taskId\":\"t\",\"ttlMs\":null}"),
	 1, "t", UINT64_MAX},
	{"ttlMs absent: unlimited",
	 R("{\"resultType\":\"task\",\"taskId\":\"t\"}"), 1, "t", UINT64_MAX},
	{"ttlMs negative: the bound decides",
	 R("{\"resultType\":\"task\",\"taskId\":\"t\",\"ttlMs\":-5}"),
	 1, "t", UINT64_MAX},
	{"ttlMs a string: the bound decides",
	 R("{\"resultType\":\"task\",\"taskId\":\"t\",\"ttlMs\":\"9\"}"),
	 1, "t", UINT64_MAX},
	{"ttlMs a fraction: rounded up",
	 R("{\"resultType\":\"task\",\"taskId\":\"t\",\"ttlMs\":1.2}"),
	 1, "t", 2},
	{"ttlMs 0",
	 R("{\"resultType\":\"task\",\"taskId\":\"t\",\"ttlMs\":0}"), 1, "t", 0},
	{"a complete result", R("{\"resultType\":\"complete\",\"taskId\":\"t\"}"),
	 0, NULL, 0},
	{"no resultType (an older server's result)", R("{\"taskId\":\"t\"}"),
	 0, NULL, 0},
	{"resultType not a string", R("{\"resultType\":1,\"taskId\":\"t\"}"),
	 0, NULL, 0},
	{"taskId not a string", R("{\"resultType\":\"task\",\"taskId\":1}"),
	 0, NULL, 0},
	{"taskId empty", R("{\"resultType\":\"task\",\"taskId\":\"\"}"),
	 0, NULL, 0},
	{"taskId with NUL", R("{\"resultType\":\"task\",\"taskId\":\"a\\u0000b\"}"),
	 0, NULL, 0},
	{"the 2025-11-25 shape (result.task.taskId)",
	 R("{\"task\":{\"taskId\":\"t\",\"ttl\":5}}"), 0, NULL, 0},
	{"an error", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1,"
	 "\"message\":\"m\"}}", 0, NULL, 0},
	{"result not an object", R("[1]"), 0, NULL, 0},
};

static void test_created(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(crows) / sizeof(crows[0]); i++) {
		const struct crow *c = &crows[i];
		json_error_t je;
		json_t *v = json_loads(c->resp, JSON_ALLOW_NUL, &je);
		const char *id = NULL;
		size_t len = 0;
		uint64_t ttl = 12345;
		int got;

		if (!v)
			fail_msg("%s: bad fixture: %s", c->what, je.text);
		got = mgw_task_created(v, &id, &len, &ttl);
		if (got != c->created)
			fail_msg("%s: got %d, want %d", c->what, got, c->created);
		if (got) {
			assert_int_equal(len, strlen(c->id));
			assert_memory_equal(id, c->id, len);
			if (ttl != c->ttl)
				fail_msg("%s: ttl %llu, want %llu", c->what,
				         (unsigned long long)ttl,
				         (unsigned long long)c->ttl);
		}
		json_decref(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_eviction_oldest_first),
		cmocka_unit_test(test_carry),
		cmocka_unit_test(test_owner_key),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_created),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
