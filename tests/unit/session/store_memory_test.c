/* store_memory_test.c - unit tests for src/session/store_memory.c: create /
 * lookup / update (compare-and-set) / remove, idle expiry and lifetime
 * with an injected clock, the session count and memory caps (a full store
 * refuses), principal binding, junk ids and the counters. */
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
#include "session/session.h"
#include "session/store.h"
#include "harness.h"

static const char body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	"{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

struct fx {
	struct th_clock clock;
	struct mgw_config *cfg;
	struct mgw_sessions_conf *conf;
	struct event_base *base;
	struct mgw_session_store *st;
	struct mgw_session_view *v;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	th_clock_init(&f->clock);
	f->cfg = th_config();
	f->conf = &f->cfg->serve.sessions;
	f->base = event_base_new();
	*state = f;
	return f->base ? 0 : -1;
}

/* Makes the store after the test tweaked f->conf. */
static void open_store(struct fx *f)
{
	struct mgw_session_env env = th_env(&f->clock);
	char err[256];

	f->st = mgw_session_store_memory_new(f->conf, &env, err, sizeof(err));
	if (!f->st)
		fail_msg("store: %s", err);
	f->v = mgw_session_view_new(f->st, f->base, err, sizeof(err));
	assert_non_null(f->v);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mgw_session_view_free(f->v);
	mgw_session_store_free(f->st);
	event_base_free(f->base);
	mgw_config_free(f->cfg);
	free(f);
	return 0;
}

static struct mgw_session *create(struct fx *f)
{
	struct mgw_session *s = NULL;

	assert_int_equal(th_create(f->v, th_draft(body, "http://127.0.0.1:9001",
	                                          "up-1"), &s), 0);
	return s;
}

static void test_round_trip(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s, *got = NULL, *s2;
	struct mgw_session_stats stats;

	open_store(f);
	s = create(f);
	/* A fresh 128-bit id in lowercase hex, never the upstream's. */
	assert_int_equal(s->id_len, 32);
	for (size_t i = 0; i < s->id_len; i++)
		assert_non_null(strchr("0123456789abcdef", s->id[i]));
	assert_int_equal(s->version, 0);
	assert_int_equal(s->created_s, f->clock.wall_s);
	assert_int_equal(s->expires_s,
	                 f->clock.wall_s + (int64_t)f->conf->max_lifetime);

	assert_int_equal(th_lookup(f->v, s->id, NULL, &got), 0);
	assert_ptr_equal(got, s);       /* the stored record itself */
	assert_memory_equal(got->init_body, body, strlen(body));
	assert_string_equal(got->upstream_sid, "up-1");
	assert_string_equal(got->pin_url, "http://127.0.0.1:9001");
	mgw_session_unref(got);

	/* Two sessions never share an id. */
	s2 = create(f);
	assert_string_not_equal(s->id, s2->id);

	mgw_session_store_stats(f->st, &stats);
	assert_string_equal(stats.store, "memory");
	assert_int_equal(stats.created, 2);
	assert_int_equal(stats.active, 2);
	assert_int_equal(stats.lookups, 1);
	assert_true(stats.memory_bytes > 2 * strlen(body));
	assert_int_equal(mgw_session_store_max_id(f->st), 32);
	mgw_session_unref(s);
	mgw_session_unref(s2);
}

static void test_update_cas(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s, *a, *b, *res = NULL, *got = NULL;
	struct mgw_session_stats stats;

	open_store(f);
	s = create(f);
	/* Two workers re-pin the same session from version 0. */
	a = mgw_session_dup(s);
	b = mgw_session_dup(s);
	assert_int_equal(mgw_session_repin(a, "http://127.0.0.1:9002", "up-2"), 0);
	assert_int_equal(mgw_session_repin(b, "http://127.0.0.1:9003", "up-3"), 0);
	assert_int_equal(th_update(f->v, a, 0, &res), 0);
	assert_int_equal(res->version, 1);
	mgw_session_unref(res);
	/* The second loses and learns the winner's pin. */
	assert_int_equal(th_update(f->v, b, 0, &res), MGW_ECONFLICT);
	assert_non_null(res);
	assert_string_equal(res->upstream_sid, "up-2");
	assert_int_equal(res->pin_gen, 1);
	mgw_session_unref(res);

	assert_int_equal(th_lookup(f->v, s->id, NULL, &got), 0);
	assert_string_equal(got->pin_url, "http://127.0.0.1:9002");
	assert_int_equal(got->version, 1);
	/* The reader of version 0 still holds its unchanged copy. */
	assert_string_equal(s->upstream_sid, "up-1");
	mgw_session_unref(got);

	mgw_session_store_stats(f->st, &stats);
	assert_int_equal(stats.conflicts, 1);

	/* Updating a session that is gone. */
	assert_int_equal(th_remove(f->v, s->id), 0);
	assert_int_equal(th_update(f->v, mgw_session_dup(s), 1, &res),
	                 MGW_ENOTFOUND);
	assert_null(res);
	mgw_session_unref(s);
}

/* The generic layer counts every completed operation by kind and result,
 * and its latency in one bucket each. */
static void test_op_counters(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s, *a, *b, *res = NULL;
	struct mgw_session_op_stats os;
	uint64_t total;

	open_store(f);
	mgw_session_store_op_stats(f->st, &os);
	assert_int_equal(os.done[MGW_SESSION_OP_CREATE][MGW_SESSION_RES_OK], 0);
	s = create(f);
	assert_int_equal(th_lookup(f->v, s->id, NULL, NULL), 0);
	a = mgw_session_dup(s);
	b = mgw_session_dup(s);
	assert_int_equal(th_update(f->v, a, 0, &res), 0);
	mgw_session_unref(res);
	assert_int_equal(th_update(f->v, b, 0, &res), MGW_ECONFLICT);
	mgw_session_unref(res);
	assert_int_equal(th_remove(f->v, s->id), 0);
	assert_int_equal(th_lookup(f->v, s->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_remove(f->v, s->id), MGW_ENOTFOUND);
	mgw_session_store_op_stats(f->st, &os);
	assert_int_equal(os.done[MGW_SESSION_OP_CREATE][MGW_SESSION_RES_OK], 1);
	assert_int_equal(os.done[MGW_SESSION_OP_LOOKUP][MGW_SESSION_RES_OK], 1);
	assert_int_equal(os.done[MGW_SESSION_OP_LOOKUP][MGW_SESSION_RES_NOT_FOUND], 1);
	assert_int_equal(os.done[MGW_SESSION_OP_UPDATE][MGW_SESSION_RES_OK], 1);
	assert_int_equal(os.done[MGW_SESSION_OP_UPDATE][MGW_SESSION_RES_CONFLICT], 1);
	assert_int_equal(os.done[MGW_SESSION_OP_REMOVE][MGW_SESSION_RES_OK], 1);
	assert_int_equal(os.done[MGW_SESSION_OP_REMOVE][MGW_SESSION_RES_NOT_FOUND], 1);
	assert_int_equal(os.done[MGW_SESSION_OP_CREATE][MGW_SESSION_RES_ERROR], 0);
	for (int k = 0; k < MGW_SESSION_OP_KINDS; k++) {
		uint64_t done = 0;

		total = 0;
		for (int r = 0; r < MGW_SESSION_RES_N; r++)
			done += os.done[k][r];
		for (int i = 0; i <= MGW_PROM_N_BUCKETS; i++)
			total += os.lat[k][i];
		assert_int_equal(total, done);
	}
	/* a memory store answers within a second */
	assert_true(os.lat_sum_ns[MGW_SESSION_OP_LOOKUP] < 1000000000ULL);
	assert_string_equal(mgw_session_op_kind_name(MGW_SESSION_OP_UPDATE), "update");
	assert_string_equal(mgw_session_op_result_name(MGW_SESSION_RES_CONFLICT),
	                    "conflict");
	mgw_session_unref(s);
}

static void test_remove(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s;
	struct mgw_session_stats stats;

	open_store(f);
	s = create(f);
	assert_int_equal(th_remove(f->v, s->id), 0);
	assert_int_equal(th_lookup(f->v, s->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_remove(f->v, s->id), MGW_ENOTFOUND);
	assert_int_equal(th_remove(f->v, "nope"), MGW_ENOTFOUND);
	mgw_session_store_stats(f->st, &stats);
	assert_int_equal(stats.deleted, 1);
	assert_int_equal(stats.active, 0);
	mgw_session_unref(s);
}

static void test_idle_expiry(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a, *b;
	struct mgw_session_stats stats;
	uint64_t idle;

	f->conf->idle_timeout = 60;
	open_store(f);
	idle = 60000;
	a = create(f);
	b = create(f);
	/* a is used every 40 s for 5 minutes: it stays; b idles out. */
	for (int i = 0; i < 8; i++) {
		f->clock.mono_ms += 40000;
		assert_int_equal(th_lookup(f->v, a->id, NULL, NULL), 0);
	}
	assert_int_equal(th_lookup(f->v, b->id, NULL, NULL), MGW_ENOTFOUND);
	f->clock.mono_ms += idle;
	assert_int_equal(mgw_session_store_sweep(f->st, 100), 1); /* a */
	assert_int_equal(th_lookup(f->v, a->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_store_stats(f->st, &stats);
	assert_int_equal(stats.expired, 2);
	assert_int_equal(stats.active, 0);
	mgw_session_unref(a);
	mgw_session_unref(b);
}

static void test_lifetime(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a;
	struct mgw_session_stats stats;

	f->conf->max_lifetime = 3600;
	open_store(f);
	a = create(f);
	f->clock.wall_s += 3599;
	assert_int_equal(th_lookup(f->v, a->id, NULL, NULL), 0);
	f->clock.wall_s += 1;
	assert_int_equal(th_lookup(f->v, a->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_store_stats(f->st, &stats);
	assert_int_equal(stats.expired, 1);
	assert_int_equal(stats.active, 0);
	mgw_session_unref(a);
}

static void test_max_sessions(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s[3], *got = NULL;
	struct mgw_session_stats stats;

	f->conf->max_sessions = 3;
	open_store(f);
	for (int i = 0; i < 3; i++)
		s[i] = create(f);
	assert_int_equal(th_create(f->v, th_draft(body, NULL, NULL), &got),
	                 MGW_ELIMIT);
	assert_null(got);
	/* The full store dropped nobody. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(th_lookup(f->v, s[i]->id, NULL, NULL), 0);
	mgw_session_store_stats(f->st, &stats);
	assert_int_equal(stats.refused, 1);
	assert_int_equal(stats.created, 3);
	/* A DELETE makes room. */
	assert_int_equal(th_remove(f->v, s[1]->id), 0);
	assert_int_equal(th_create(f->v, th_draft(body, NULL, NULL), &got), 0);
	mgw_session_unref(got);
	for (int i = 0; i < 3; i++)
		mgw_session_unref(s[i]);
}

static void test_max_memory(void **state)
{
	struct fx *f = *state;
	char *big = malloc(30001);
	struct mgw_session *a = NULL, *b = NULL, *c = NULL;
	struct mgw_session_stats s0, s1;

	memset(big, ' ', 30000);
	big[0] = '{';
	big[29999] = '}';
	big[30000] = '\0';
	f->conf->max_memory = 64 * 1024;
	open_store(f);
	mgw_session_store_stats(f->st, &s0);
	assert_int_equal(th_create(f->v, th_draft(big, NULL, NULL), &a), 0);
	mgw_session_store_stats(f->st, &s1);
	/* Bodies count: the memory gauge grew by at least the body. */
	assert_true(s1.memory_bytes - s0.memory_bytes >= 30000);
	assert_int_equal(th_create(f->v, th_draft(big, NULL, NULL), &b), 0);
	/* The third 30 KB body does not fit in 64 KiB: refused. */
	assert_int_equal(th_create(f->v, th_draft(big, NULL, NULL), &c),
	                 MGW_ELIMIT);
	assert_null(c);
	mgw_session_store_stats(f->st, &s1);
	assert_int_equal(s1.refused, 1);
	assert_true(s1.memory_bytes <= 64 * 1024);
	/* Deleting gives the bytes back, and then it fits. */
	assert_int_equal(th_remove(f->v, a->id), 0);
	assert_int_equal(th_create(f->v, th_draft(big, NULL, NULL), &c), 0);
	/* An initialize body over max_initialize_bytes is refused too. */
	f->conf->max_initialize_bytes = 1024;
	mgw_session_view_free(f->v);
	mgw_session_store_free(f->st);
	open_store(f);
	mgw_session_unref(a);
	assert_int_equal(th_create(f->v, th_draft(big, NULL, NULL), &a),
	                 MGW_ELIMIT);
	assert_int_equal(mgw_session_store_max_initialize(f->st), 1024);
	free(big);
	mgw_session_unref(b);
	mgw_session_unref(c);
}

static void test_principal_binding(void **state)
{
	struct fx *f = *state;
	unsigned char alice[32], bob[32];
	struct mgw_session *d, *s = NULL;
	struct mgw_session_stats stats;

	f->conf->bind_principal = 1;
	open_store(f);
	mgw_session_principal_digest("Bearer alice", 12, alice);
	mgw_session_principal_digest("Bearer bob", 10, bob);
	d = th_draft(body, NULL, NULL);
	mgw_session_set_principal(d, alice);
	assert_int_equal(th_create(f->v, d, &s), 0);
	assert_int_equal(th_lookup(f->v, s->id, alice, NULL), 0);
	assert_int_equal(th_lookup(f->v, s->id, bob, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->v, s->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_store_stats(f->st, &stats);
	assert_int_equal(stats.rejected_principal, 2);
	assert_int_equal(stats.not_found, 2);
	mgw_session_unref(s);
}

static void test_unbound_ignores_principal(void **state)
{
	struct fx *f = *state;
	unsigned char bob[32];
	struct mgw_session *s;

	open_store(f);
	mgw_session_principal_digest("Bearer bob", 10, bob);
	s = create(f);
	assert_int_equal(th_lookup(f->v, s->id, bob, NULL), 0);
	assert_int_equal(th_lookup(f->v, s->id, NULL, NULL), 0);
	mgw_session_unref(s);
}

static void test_junk_ids(void **state)
{
	struct fx *f = *state;
	char longid[100];
	struct mgw_session_stats stats;

	open_store(f);
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_int_equal(th_lookup(f->v, "", NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->v, "has space", NULL, NULL),
	                 MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->v, "caf\xc3\xa9", NULL, NULL),
	                 MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->v, longid, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_remove(f->v, "has space"), MGW_ENOTFOUND);
	mgw_session_store_stats(f->st, &stats);
	assert_int_equal(stats.lookups, 4);
	assert_int_equal(stats.not_found, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_cas, setup, teardown),
		cmocka_unit_test_setup_teardown(test_op_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifetime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_principal_binding, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_unbound_ignores_principal,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_junk_ids, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
