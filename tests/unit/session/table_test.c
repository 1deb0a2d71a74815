/* table_test.c - unit tests for src/session/table.c: insert / get /
 * replace / remove, tombstones, idle expiry in use order with bounded
 * sweeps, count and byte limits (refusing and evicting), growth, keys
 * that differ in one byte, and concurrent use from several threads. */
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

#include "core/errors.h"
#include "session/session.h"
#include "session/table.h"

#define T0 1000000ULL
#define IDLE 1000ULL

static struct mgw_session_table *table(size_t max_count, size_t max_bytes,
                                       int evict)
{
	struct mgw_session_table_limits lim = {
		.max_count = max_count, .max_bytes = max_bytes,
		.idle_ms = IDLE, .evict = evict,
	};
	char err[128];
	struct mgw_session_table *t = mgw_session_table_new(&lim, err,
	                                                    sizeof(err));

	if (!t)
		fail_msg("table: %s", err);
	return t;
}

static struct mgw_session *rec(const char *id, size_t body)
{
	struct mgw_session *s = mgw_session_new();
	char *b = malloc(body);

	memset(b, 'x', body);
	assert_int_equal(mgw_session_set_init(s, b, body), 0);
	assert_int_equal(mgw_session_set_id(s, id, strlen(id)), 0);
	free(b);
	return s;
}

static int put_new(struct mgw_session_table *t, const char *id, size_t body,
                   uint64_t now)
{
	struct mgw_session *s = rec(id, body);
	int rc = mgw_session_table_insert(t, id, strlen(id), s, now);

	if (rc != 0)
		mgw_session_unref(s);
	return rc;
}

static int has(struct mgw_session_table *t, const char *id, uint64_t now)
{
	struct mgw_session *s = NULL;
	int rc = mgw_session_table_get(t, id, strlen(id), now, &s);

	if (rc == 0) {
		assert_string_equal(s->id, id);
		mgw_session_unref(s);
	}
	return rc;
}

static void test_basic(void **state)
{
	struct mgw_session_table *t = table(100, 1 << 20, 0);
	struct mgw_session_table_stats st;

	(void)state;
	assert_int_equal(put_new(t, "a", 10, T0), 0);
	assert_int_equal(put_new(t, "b", 10, T0), 0);
	assert_int_equal(put_new(t, "a", 10, T0), MGW_ECONFLICT);
	assert_int_equal(has(t, "a", T0), 0);
	assert_int_equal(has(t, "b", T0), 0);
	assert_int_equal(has(t, "c", T0), MGW_ENOTFOUND);
	assert_int_equal(mgw_session_table_remove(t, "a", 1), 0);
	assert_int_equal(mgw_session_table_remove(t, "a", 1), MGW_ENOTFOUND);
	assert_int_equal(has(t, "a", T0), MGW_ENOTFOUND);
	mgw_session_table_stats(t, &st);
	assert_int_equal(st.count, 1);
	mgw_session_table_free(t);
	mgw_session_table_free(NULL);
}

static void test_replace_cas(void **state)
{
	struct mgw_session_table *t = table(100, 1 << 20, 0);
	struct mgw_session *v1, *stale, *cur = NULL, *got = NULL;

	(void)state;
	assert_int_equal(put_new(t, "s", 10, T0), 0);
	v1 = rec("s", 20);
	stale = rec("s", 30);
	assert_int_equal(mgw_session_table_replace(t, "s", 1, v1, 0, T0, &cur),
	                 0);
	assert_null(cur);
	assert_int_equal(v1->version, 1);
	/* Based on version 0 again: loses, and sees the winner. */
	assert_int_equal(mgw_session_table_replace(t, "s", 1, stale, 0, T0,
	                                           &cur), MGW_ECONFLICT);
	assert_ptr_equal(cur, v1);
	mgw_session_unref(cur);
	assert_int_equal(mgw_session_table_get(t, "s", 1, T0, &got), 0);
	assert_ptr_equal(got, v1);
	assert_int_equal(got->init_len, 20);
	mgw_session_unref(got);
	assert_int_equal(mgw_session_table_replace(t, "zz", 2, stale, 0, T0,
	                                           &cur), MGW_ENOTFOUND);
	mgw_session_unref(stale);
	mgw_session_table_free(t);
}

static void test_tombstone(void **state)
{
	struct mgw_session_table *t = table(100, 1 << 20, 1);
	struct mgw_session *s = NULL, *cur = NULL, *r = rec("k", 5);

	(void)state;
	assert_int_equal(mgw_session_table_put(t, "k", 1, NULL, T0), 0);
	assert_int_equal(mgw_session_table_get(t, "k", 1, T0, &s), MGW_ECLOSED);
	assert_null(s);
	/* A deleted session cannot be brought back by an update... */
	assert_int_equal(mgw_session_table_replace(t, "k", 1, r, 0, T0, &cur),
	                 MGW_ENOTFOUND);
	/* ...nor re-created under the same key. */
	assert_int_equal(mgw_session_table_insert(t, "k", 1, r, T0),
	                 MGW_ECONFLICT);
	mgw_session_unref(r);
	assert_int_equal(mgw_session_table_remove(t, "k", 1), MGW_ECLOSED);
	assert_int_equal(mgw_session_table_get(t, "k", 1, T0, &s),
	                 MGW_ENOTFOUND);
	mgw_session_table_free(t);
}

static void test_idle_expiry_in_use_order(void **state)
{
	struct mgw_session_table *t = table(100, 1 << 20, 0);
	struct mgw_session_table_stats st;
	char id[16];

	(void)state;
	for (int i = 0; i < 10; i++) {
		snprintf(id, sizeof(id), "s%d", i);
		assert_int_equal(put_new(t, id, 10, T0 + (uint64_t)i), 0);
	}
	/* s0 used again: it is now the most recent. */
	assert_int_equal(has(t, "s0", T0 + 500), 0);
	/* At T0+1003 s1..s3 are idle 1000ms or more; s0 (used at +500) not. */
	assert_int_equal(mgw_session_table_sweep(t, T0 + 1003, 100), 3);
	assert_int_equal(has(t, "s0", T0 + 1003), 0);
	assert_int_equal(has(t, "s3", T0 + 1003), MGW_ENOTFOUND);
	assert_int_equal(has(t, "s4", T0 + 1003), 0);
	/* Bounded work: at most max entries per sweep. */
	assert_int_equal(mgw_session_table_sweep(t, T0 + 5000, 2), 2);
	mgw_session_table_stats(t, &st);
	assert_int_equal(st.count, 5);
	assert_int_equal(mgw_session_table_sweep(t, T0 + 5000, 100), 5);
	mgw_session_table_stats(t, &st);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.expired, 10);

	/* get of an idle entry drops it even without a sweep. */
	assert_int_equal(put_new(t, "late", 10, T0), 0);
	assert_int_equal(has(t, "late", T0 + IDLE - 1), 0);
	assert_int_equal(has(t, "late", T0 + 2 * IDLE - 2), 0); /* kept alive */
	assert_int_equal(has(t, "late", T0 + 3 * IDLE), MGW_ENOTFOUND);
	/* An older clock reading from another thread never ages an entry. */
	assert_int_equal(put_new(t, "skew", 10, T0 + 10 * IDLE), 0);
	assert_int_equal(has(t, "skew", T0), 0);
	assert_int_equal(has(t, "skew", T0 + 10 * IDLE + 1), 0);
	mgw_session_table_free(t);
}

static void test_count_limit_refuses(void **state)
{
	struct mgw_session_table *t = table(3, 1 << 20, 0);

	(void)state;
	assert_int_equal(put_new(t, "a", 10, T0), 0);
	assert_int_equal(put_new(t, "b", 10, T0), 0);
	assert_int_equal(put_new(t, "c", 10, T0), 0);
	assert_int_equal(put_new(t, "d", 10, T0), MGW_ELIMIT);
	/* Nobody was dropped to make room. */
	assert_int_equal(has(t, "a", T0), 0);
	assert_int_equal(has(t, "c", T0), 0);
	/* Once the others idled out there is room again. */
	assert_int_equal(has(t, "b", T0 + IDLE / 2), 0);
	assert_int_equal(put_new(t, "d", 10, T0 + IDLE + 1), 0);
	assert_int_equal(has(t, "b", T0 + IDLE + 1), 0);
	assert_int_equal(has(t, "a", T0 + IDLE + 1), MGW_ENOTFOUND);
	mgw_session_table_free(t);
}

static void test_byte_limit_and_accounting(void **state)
{
	struct mgw_session_table *t = table(1000, 1 << 20, 0);
	struct mgw_session_table_stats st0, st1;
	struct mgw_session *s = rec("big", 4000), *cur = NULL;
	size_t want = mgw_session_table_entry_size(3, s);

	(void)state;
	mgw_session_table_stats(t, &st0);
	assert_int_equal(mgw_session_table_insert(t, "big", 3, s, T0), 0);
	mgw_session_table_stats(t, &st1);
	assert_int_equal(st1.bytes - st0.bytes, want);
	assert_true(want > 4000);
	/* A bigger version is accounted at its new size. */
	s = rec("big", 9000);
	assert_int_equal(mgw_session_table_replace(t, "big", 3, s, 0, T0, &cur),
	                 0);
	mgw_session_table_stats(t, &st1);
	assert_int_equal(st1.bytes - st0.bytes,
	                 mgw_session_table_entry_size(3, s));
	assert_int_equal(mgw_session_table_remove(t, "big", 3), 0);
	mgw_session_table_stats(t, &st1);
	assert_int_equal(st1.bytes, st0.bytes);
	mgw_session_table_free(t);

	/* A cap of the buckets plus ~2 records of 10 KB. */
	t = table(1000, 0, 0);
	mgw_session_table_stats(t, &st0);
	mgw_session_table_free(t);
	t = table(1000, st0.bytes + 2 * 10500, 0);
	assert_int_equal(put_new(t, "1", 10000, T0), 0);
	assert_int_equal(put_new(t, "2", 10000, T0), 0);
	assert_int_equal(put_new(t, "3", 10000, T0), MGW_ELIMIT);
	assert_int_equal(put_new(t, "4", 10, T0), 0);
	/* One record larger than the whole cap can never fit. */
	assert_int_equal(put_new(t, "5", 40000, T0 + 10 * IDLE), MGW_ELIMIT);
	mgw_session_table_free(t);
}

/* A record that fits the cap alone but not next to the bucket array
 * (which the byte count includes) is refused, never a crash: before,
 * make_room ran out of entries and dereferenced a NULL victim.  An
 * evicting cache keeps what it holds instead of dropping it all first. */
static void test_record_beside_buckets(void **state)
{
	struct mgw_session_table_stats st;
	struct mgw_session *s = rec("big", 10000);
	size_t size = mgw_session_table_entry_size(3, s);

	(void)state;
	mgw_session_unref(s);
	for (int evict = 0; evict <= 1; evict++) {
		struct mgw_session_table *t = table(1000, size + 1, evict);

		assert_int_equal(put_new(t, "big", 10000, T0), MGW_ELIMIT);
		assert_int_equal(put_new(t, "a", 10, T0), 0);
		assert_int_equal(put_new(t, "big", 10000, T0 + 1), MGW_ELIMIT);
		assert_int_equal(has(t, "a", T0 + 2), 0);
		mgw_session_table_stats(t, &st);
		assert_int_equal(st.count, 1);
		assert_int_equal(st.evicted, 0);
		mgw_session_table_free(t);
	}
}

static int keep_if_newer(const struct mgw_session *cur, void *arg)
{
	return cur->version > *(const uint64_t *)arg;
}

/* put_unless: absent or expired -> stored; a tombstone is never replaced
 * (a deleted session does not come back); a record the check wants kept
 * stays, and the caller keeps its reference. */
static void test_put_unless(void **state)
{
	struct mgw_session_table *t = table(100, 1 << 20, 0);
	struct mgw_session *s, *cur = NULL;
	uint64_t v;

	(void)state;
	s = rec("a", 10);
	v = s->version;
	assert_int_equal(mgw_session_table_put_unless(t, "a", 1, s, T0,
	                                              keep_if_newer, &v), 0);
	/* an older copy does not replace a newer one */
	s = rec("a", 20);
	assert_int_equal(mgw_session_table_replace(t, "a", 1, s, 0, T0, &cur),
	                 0); /* version 1 now */
	s = rec("a", 30);
	v = s->version; /* 0 */
	assert_int_equal(mgw_session_table_put_unless(t, "a", 1, s, T0 + 1,
	                                              keep_if_newer, &v),
	                 MGW_ECONFLICT);
	mgw_session_unref(s);
	assert_int_equal(mgw_session_table_get(t, "a", 1, T0 + 2, &cur), 0);
	assert_int_equal(cur->version, 1);
	mgw_session_unref(cur);
	/* without a check it replaces */
	s = rec("a", 40);
	assert_int_equal(mgw_session_table_put_unless(t, "a", 1, s, T0 + 3,
	                                              NULL, NULL), 0);
	/* a tombstone stays, whatever the check says */
	assert_int_equal(mgw_session_table_put(t, "a", 1, NULL, T0 + 4), 0);
	s = rec("a", 50);
	assert_int_equal(mgw_session_table_put_unless(t, "a", 1, s, T0 + 5,
	                                              NULL, NULL), MGW_ECONFLICT);
	mgw_session_unref(s);
	assert_int_equal(has(t, "a", T0 + 6), MGW_ECLOSED);
	/* once the tombstone idled out, the key is free again */
	s = rec("a", 60);
	assert_int_equal(mgw_session_table_put_unless(t, "a", 1, s,
	                                              T0 + 10 * IDLE, NULL, NULL),
	                 0);
	assert_int_equal(has(t, "a", T0 + 10 * IDLE + 1), 0);
	mgw_session_table_free(t);
}

static void test_evicting_cache(void **state)
{
	struct mgw_session_table *t = table(3, 1 << 20, 1);
	struct mgw_session_table_stats st;

	(void)state;
	assert_int_equal(put_new(t, "a", 10, T0), 0);
	assert_int_equal(put_new(t, "b", 10, T0 + 1), 0);
	assert_int_equal(put_new(t, "c", 10, T0 + 2), 0);
	assert_int_equal(has(t, "a", T0 + 3), 0);        /* a is recent now */
	assert_int_equal(put_new(t, "d", 10, T0 + 4), 0);
	assert_int_equal(has(t, "b", T0 + 5), MGW_ENOTFOUND); /* the LRU */
	assert_int_equal(has(t, "a", T0 + 5), 0);
	assert_int_equal(has(t, "c", T0 + 5), 0);
	assert_int_equal(has(t, "d", T0 + 5), 0);
	mgw_session_table_stats(t, &st);
	assert_int_equal(st.count, 3);
	assert_int_equal(st.evicted, 1);
	mgw_session_table_free(t);
}

/* Many keys that share all but one byte, and growth well past the
 * initial bucket count: every key stays its own entry. */
static void test_many_similar_keys(void **state)
{
	enum { N = 20000 };
	struct mgw_session_table *t = table(N, (size_t)1 << 30, 0);
	struct mgw_session_table_stats st;
	unsigned char key[32];

	(void)state;
	memset(key, 0, sizeof(key));
	for (unsigned i = 0; i < N; i++) {
		struct mgw_session *s = mgw_session_new();

		key[30] = (unsigned char)(i >> 8);
		key[31] = (unsigned char)i;
		assert_int_equal(mgw_session_table_insert(t, key, sizeof(key), s,
		                                          T0), 0);
	}
	mgw_session_table_stats(t, &st);
	assert_int_equal(st.count, N);
	for (unsigned i = 0; i < N; i += 7) {
		struct mgw_session *s = NULL;

		key[30] = (unsigned char)(i >> 8);
		key[31] = (unsigned char)i;
		assert_int_equal(mgw_session_table_get(t, key, sizeof(key), T0, &s),
		                 0);
		mgw_session_unref(s);
	}
	/* A key that is a prefix of stored keys is not any of them. */
	{
		struct mgw_session *s = NULL;

		assert_int_equal(mgw_session_table_get(t, key, 31, T0, &s),
		                 MGW_ENOTFOUND);
		assert_null(s);
	}
	mgw_session_table_free(t);
}

struct worker_arg {
	struct mgw_session_table *t;
	int index;
	int errors;
};

static void *worker(void *p)
{
	struct worker_arg *w = p;
	char id[32];

	for (int i = 0; i < 2000; i++) {
		struct mgw_session *s = NULL;

		snprintf(id, sizeof(id), "w%d-%d", w->index, i);
		if (put_new(w->t, id, 16, T0) != 0)
			w->errors++;
		if (mgw_session_table_get(w->t, id, strlen(id), T0, &s) != 0)
			w->errors++;
		mgw_session_unref(s);
		if (i % 2 && mgw_session_table_remove(w->t, id, strlen(id)) != 0)
			w->errors++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct mgw_session_table *t = table(100000, (size_t)1 << 30, 0);
	struct worker_arg w[4];
	pthread_t th[4];
	struct mgw_session_table_stats st;

	(void)state;
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker_arg){.t = t, .index = i};
		assert_int_equal(pthread_create(&th[i], NULL, worker, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].errors, 0);
	}
	mgw_session_table_stats(t, &st);
	assert_int_equal(st.count, 4 * 1000);
	mgw_session_table_free(t);
}

/* each: every entry not idle, oldest use first, tombstones with a NULL
 * record; stops when the callback says so. */
struct seen {
	char keys[8][4];
	int tomb[8];
	size_t n, stop_at;
};

static int see(const void *key, size_t keylen, struct mgw_session *r,
               void *arg)
{
	struct seen *v = arg;

	assert_true(keylen < 4);
	memcpy(v->keys[v->n], key, keylen);
	v->keys[v->n][keylen] = '\0';
	v->tomb[v->n] = r == NULL;
	v->n++;
	return v->n == v->stop_at;
}

static void test_each(void **state)
{
	struct mgw_session_table *t = table(100, 1 << 20, 1);
	struct seen v = {.stop_at = 0};

	(void)state;
	assert_int_equal(put_new(t, "a", 5, T0), 0);
	assert_int_equal(put_new(t, "b", 5, T0 + 1), 0);
	assert_int_equal(mgw_session_table_put(t, "c", 1, NULL, T0 + 2), 0);
	assert_int_equal(has(t, "a", T0 + 3), 0);    /* a: now the newest */
	assert_int_equal(mgw_session_table_each(t, T0 + 3, see, &v), 3);
	assert_string_equal(v.keys[0], "b");
	assert_string_equal(v.keys[1], "c");
	assert_int_equal(v.tomb[1], 1);
	assert_string_equal(v.keys[2], "a");
	assert_int_equal(v.tomb[2], 0);
	memset(&v, 0, sizeof(v));
	v.stop_at = 1;
	assert_int_equal(mgw_session_table_each(t, T0 + 3, see, &v), 1);
	/* idle entries are skipped (b and c idle, a used at T0 + 3) */
	memset(&v, 0, sizeof(v));
	assert_int_equal(mgw_session_table_each(t, T0 + 2 + IDLE, see, &v), 1);
	assert_string_equal(v.keys[0], "a");
	mgw_session_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_replace_cas),
		cmocka_unit_test(test_tombstone),
		cmocka_unit_test(test_each),
		cmocka_unit_test(test_idle_expiry_in_use_order),
		cmocka_unit_test(test_count_limit_refuses),
		cmocka_unit_test(test_byte_limit_and_accounting),
		cmocka_unit_test(test_record_beside_buckets),
		cmocka_unit_test(test_put_unless),
		cmocka_unit_test(test_evicting_cache),
		cmocka_unit_test(test_many_similar_keys),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
