/* store_test.c - unit tests for src/session/store.c, the contract every
 * store shares: callbacks run exactly once and never inside the call that
 * started the operation (memory and sealed stores, every operation);
 * cancellation before delivery, including an operation an asynchronous
 * store completes later; delivery on the view's own loop; start errors
 * without callbacks; the registry of store kinds and the factory. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf/config.h"
#include "core/errors.h"
#include "session/session.h"
#include "session/store.h"
#include "harness.h"

static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":0,"
                           "\"method\":\"initialize\",\"params\":{}}";

struct fx {
	struct th_clock clock;
	struct mgw_config *cfg;
	struct event_base *base;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	th_clock_init(&f->clock);
	f->cfg = th_config();
	f->base = event_base_new();
	*state = f;
	return f->base ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	event_base_free(f->base);
	mgw_config_free(f->cfg);
	free(f);
	return 0;
}

static struct mgw_session_store *make(struct fx *f,
                                      enum mgw_session_store_conf kind)
{
	struct mgw_session_env env = th_env(&f->clock);
	struct mgw_key256 k;
	char err[256];
	struct mgw_session_store *st;

	f->cfg->serve.sessions.store = kind;
	if (kind == MGW_SESSION_STORE_SEALED) {
		memset(&k, 0, sizeof(k));
		strcpy(k.kid, "t");
		st = mgw_session_store_sealed_new(&f->cfg->serve.sessions, &env,
		                                  &k, 1, err, sizeof(err));
	} else {
		st = mgw_session_store_new(&f->cfg->serve.sessions, &env, err,
		                           sizeof(err));
	}
	if (!st)
		fail_msg("store: %s", err);
	return st;
}

/* Starts every kind of operation with a flag raised around the call: the
 * recording callback fails the test if it runs while the flag is up. */
static void check_never_inside(struct fx *f, enum mgw_session_store_conf kind)
{
	struct mgw_session_store *st = make(f, kind);
	struct mgw_session_view *v = mgw_session_view_new(st, f->base, NULL, 0);
	struct th_result r = {0};
	struct mgw_session *s;
	char *id;
	int in_call;

	r.in_call = &in_call;
	in_call = 1;
	assert_int_equal(mgw_session_create(v, th_draft(body, NULL, NULL),
	                                    th_record, &r, NULL), 0);
	in_call = 0;
	assert_int_equal(r.calls, 0);
	th_wait(f->base, &r);
	assert_int_equal(r.status, 0);
	s = r.rec;
	id = strdup(s->id);

	memset(&r, 0, sizeof(r));
	r.in_call = &in_call;
	in_call = 1;
	assert_int_equal(mgw_session_lookup(v, id, strlen(id), NULL, th_record,
	                                    &r, NULL), 0);
	in_call = 0;
	th_wait(f->base, &r);
	assert_int_equal(r.status, 0);
	mgw_session_unref(r.rec);

	/* Junk ids are answered through the callback too. */
	memset(&r, 0, sizeof(r));
	r.in_call = &in_call;
	in_call = 1;
	assert_int_equal(mgw_session_lookup(v, "a b", 3, NULL, th_record, &r,
	                                    NULL), 0);
	in_call = 0;
	th_wait(f->base, &r);
	assert_int_equal(r.status, MGW_ENOTFOUND);

	memset(&r, 0, sizeof(r));
	r.in_call = &in_call;
	in_call = 1;
	assert_int_equal(mgw_session_update(v, mgw_session_dup(s), 0, th_record,
	                                    &r, NULL), 0);
	in_call = 0;
	th_wait(f->base, &r);
	assert_int_equal(r.status, 0);
	mgw_session_unref(r.rec);

	memset(&r, 0, sizeof(r));
	r.in_call = &in_call;
	in_call = 1;
	assert_int_equal(mgw_session_remove(v, id, strlen(id), th_record, &r,
	                                    NULL), 0);
	in_call = 0;
	th_wait(f->base, &r);
	assert_int_equal(r.status, 0);

	/* Exactly once: more loop passes deliver nothing more. */
	for (int i = 0; i < 5; i++)
		th_spin(f->base);
	assert_int_equal(r.calls, 1);

	free(id);
	mgw_session_unref(s);
	mgw_session_view_free(v);
	mgw_session_store_free(st);
}

static void test_never_inside_memory(void **state)
{
	check_never_inside(*state, MGW_SESSION_STORE_MEMORY);
}

static void test_never_inside_sealed(void **state)
{
	check_never_inside(*state, MGW_SESSION_STORE_SEALED);
}

/* A cancelled operation never calls back; its result is dropped (ASan
 * reports a leaked reference if not). */
static void check_cancel(struct fx *f, enum mgw_session_store_conf kind)
{
	struct mgw_session_store *st = make(f, kind);
	struct mgw_session_view *v = mgw_session_view_new(st, f->base, NULL, 0);
	struct th_result r = {0};
	struct mgw_session_op *op = NULL;
	struct mgw_session *s = NULL;

	assert_int_equal(mgw_session_create(v, th_draft(body, NULL, NULL),
	                                    th_record, &r, &op), 0);
	assert_non_null(op);
	mgw_session_op_cancel(op);
	for (int i = 0; i < 5; i++)
		th_spin(f->base);
	assert_int_equal(r.calls, 0);
	assert_int_equal(v->ops_alive, 0);
	/* The store still did the work: the session exists. */
	assert_int_equal(th_create(v, th_draft(body, NULL, NULL), &s), 0);
	assert_int_equal(mgw_session_lookup(v, s->id, s->id_len, NULL,
	                                    th_record, &r, &op), 0);
	mgw_session_op_cancel(op);
	mgw_session_op_cancel(NULL);
	th_spin(f->base);
	assert_int_equal(r.calls, 0);
	mgw_session_unref(s);
	mgw_session_view_free(v);
	mgw_session_store_free(st);
}

static void test_cancel_memory(void **state)
{
	check_cancel(*state, MGW_SESSION_STORE_MEMORY);
}

static void test_cancel_sealed(void **state)
{
	check_cancel(*state, MGW_SESSION_STORE_SEALED);
}

/* Callbacks are delivered by the loop of the view that started them. */
static void test_delivery_on_own_loop(void **state)
{
	struct fx *f = *state;
	struct mgw_session_store *st = make(f, MGW_SESSION_STORE_MEMORY);
	struct event_base *other = event_base_new();
	struct mgw_session_view *v1 = mgw_session_view_new(st, f->base, NULL, 0);
	struct mgw_session_view *v2 = mgw_session_view_new(st, other, NULL, 0);
	struct th_result r = {0};
	struct mgw_session *s = NULL;

	assert_int_equal(th_create(v1, th_draft(body, NULL, NULL), &s), 0);
	assert_int_equal(mgw_session_lookup(v2, s->id, s->id_len, NULL,
	                                    th_record, &r, NULL), 0);
	for (int i = 0; i < 5; i++)
		th_spin(f->base);
	assert_int_equal(r.calls, 0);
	th_wait(other, &r);
	assert_int_equal(r.status, 0);
	/* Both views see one store. */
	assert_ptr_equal(r.rec, s);
	mgw_session_unref(r.rec);
	mgw_session_unref(s);
	mgw_session_view_free(v1);
	mgw_session_view_free(v2);
	mgw_session_store_free(st);
	event_base_free(other);
}

/* ---- an asynchronous fake store: completes when the test says so ---- */

struct fake_store {
	struct mgw_session_store base;
	struct mgw_session_op *pending;  /* one op at a time */
	struct mgw_session *held;
	int fail_start;                  /* next start returns this */
	int created;                     /* the factory ran */
};

static struct fake_store *fake_of(struct mgw_session_store *st)
{
	return (struct fake_store *)st;
}

static int fake_create(struct mgw_session_view *v, struct mgw_session *draft,
                       struct mgw_session_op *op)
{
	struct fake_store *fs = fake_of(v->store);

	if (fs->fail_start) {
		mgw_session_unref(draft);
		return fs->fail_start;
	}
	assert_int_equal(mgw_session_set_id(draft, "fake-1", 6), 0);
	fs->held = draft;
	fs->pending = op;
	return 0;
}

static int fake_lookup(struct mgw_session_view *v, const char *id, size_t len,
                       const unsigned char *principal,
                       struct mgw_session_op *op)
{
	struct fake_store *fs = fake_of(v->store);

	(void)id;
	(void)len;
	(void)principal;
	if (fs->fail_start)
		return fs->fail_start;
	fs->pending = op;
	return 0;
}

static void fake_destroy(struct mgw_session_store *st)
{
	mgw_session_store_deinit(st);
	mgw_session_unref(fake_of(st)->held);
	free(st);
}

static const struct mgw_session_store_ops fake_ops = {
	.name = "fake",
	.create = fake_create,
	.lookup = fake_lookup,
	.destroy = fake_destroy,
};

static struct fake_store *last_fake;

static struct mgw_session_store *fake_new(const struct mgw_sessions_conf *conf,
                                          const struct mgw_session_env *env,
                                          char *err, size_t errlen)
{
	struct fake_store *fs = calloc(1, sizeof(*fs));

	(void)err;
	(void)errlen;
	assert_int_equal(mgw_session_store_init(&fs->base, &fake_ops, conf, env),
	                 0);
	fs->base.max_id = 64;
	fs->created = 1;
	last_fake = fs;
	return &fs->base;
}

static const struct mgw_session_store_type fake_type = {
	.name = "redis", .create = fake_new,
};
static const struct mgw_session_store_type other_redis = {
	.name = "redis", .create = fake_new,
};
static const struct mgw_session_store_type named_memory = {
	.name = "memory", .create = fake_new,
};

static void test_registry_and_async(void **state)
{
	struct fx *f = *state;
	struct mgw_sessions_conf *conf = &f->cfg->serve.sessions;
	struct mgw_session_store *st;
	struct mgw_session_view *v;
	struct mgw_session_op *op = NULL;
	struct th_result r = {0};
	struct mgw_session_stats stats;
	char err[256];

	/* Not registered yet: a clear error. */
	conf->store = MGW_SESSION_STORE_REDIS;
	assert_null(mgw_session_store_new(conf, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "redis"));
	assert_non_null(strstr(err, "not available"));
	assert_int_equal(mgw_session_store_register(&fake_type), 0);
	assert_int_equal(mgw_session_store_register(&fake_type), 0);
	assert_int_equal(mgw_session_store_register(&other_redis), MGW_EINVAL);
	assert_int_equal(mgw_session_store_register(&named_memory), MGW_EINVAL);
	st = mgw_session_store_new(conf, NULL, err, sizeof(err));
	assert_non_null(st);
	assert_ptr_equal(st, &last_fake->base);
	v = mgw_session_view_new(st, f->base, err, sizeof(err));

	/* Completed later, from "its own I/O". */
	assert_int_equal(mgw_session_create(v, th_draft(body, NULL, NULL),
	                                    th_record, &r, &op), 0);
	assert_ptr_equal(last_fake->pending, op);
	th_spin(f->base);
	assert_int_equal(r.calls, 0);
	mgw_session_op_complete(op, 0, mgw_session_ref(last_fake->held));
	assert_int_equal(r.calls, 0);      /* still not inside */
	th_wait(f->base, &r);
	assert_string_equal(r.rec->id, "fake-1");
	mgw_session_unref(r.rec);

	/* Cancelled while the store still works on it: no callback when the
	 * answer comes, and the op is freed then. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(mgw_session_lookup(v, "x", 1, NULL, th_record, &r,
	                                    &op), 0);
	mgw_session_op_cancel(op);
	assert_int_equal(v->ops_alive, 1);
	mgw_session_op_complete(last_fake->pending,
	                        0, mgw_session_ref(last_fake->held));
	assert_int_equal(v->ops_alive, 0);
	for (int i = 0; i < 5; i++)
		th_spin(f->base);
	assert_int_equal(r.calls, 0);

	/* A start error: returned, no callback, nothing left alive; the
	 * create's draft is consumed. */
	last_fake->fail_start = MGW_ENOMEM;
	assert_int_equal(mgw_session_create(v, th_draft(body, NULL, NULL),
	                                    th_record, &r, &op), MGW_ENOMEM);
	assert_null(op);
	assert_int_equal(mgw_session_lookup(v, "x", 1, NULL, th_record, &r,
	                                    &op), MGW_ENOMEM);
	th_spin(f->base);
	assert_int_equal(r.calls, 0);
	assert_int_equal(v->ops_alive, 0);
	/* Misuse is refused up front. */
	assert_int_equal(mgw_session_create(v, mgw_session_new(), th_record,
	                                    &r, NULL), MGW_EINVAL);

	/* The generic counters do not depend on the implementation. */
	mgw_session_store_stats(st, &stats);
	assert_string_equal(stats.store, "fake");
	assert_int_equal(stats.created, 1);
	assert_int_equal(stats.lookups, 2);

	mgw_session_view_free(v);
	mgw_session_store_free(st);
}

/* The factory reads the sealed keys from key_file. */
static void test_factory_sealed_key_file(void **state)
{
	struct fx *f = *state;
	struct mgw_sessions_conf *conf = &f->cfg->serve.sessions;
	char path[] = "/tmp/mgw-session-keys-XXXXXX";
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w");
	struct mgw_session_store *a, *b;
	struct mgw_session_view *va, *vb;
	struct mgw_session *s = NULL;
	char err[256];

	fprintf(fp, "# current key first\nnew %s\nold %s\n",
	        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
	        "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100");
	fclose(fp);
	conf->store = MGW_SESSION_STORE_SEALED;
	conf->key_file = strdup(path);
	a = mgw_session_store_new(conf, NULL, err, sizeof(err));
	b = mgw_session_store_new(conf, NULL, err, sizeof(err));
	assert_non_null(a);
	assert_non_null(b);
	va = mgw_session_view_new(a, f->base, err, sizeof(err));
	vb = mgw_session_view_new(b, f->base, err, sizeof(err));
	assert_int_equal(th_create(va, th_draft(body, NULL, NULL), &s), 0);
	assert_int_equal(th_lookup(vb, s->id, NULL, NULL), 0);
	mgw_session_unref(s);
	mgw_session_view_free(va);
	mgw_session_view_free(vb);
	mgw_session_store_free(a);
	mgw_session_store_free(b);
	unlink(path);
	/* A broken file is an error naming it. */
	assert_null(mgw_session_store_new(conf, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, path));

	/* Without a key file: random key, so two stores do not share. */
	free(conf->key_file);
	conf->key_file = NULL;
	a = mgw_session_store_new(conf, NULL, err, sizeof(err));
	b = mgw_session_store_new(conf, NULL, err, sizeof(err));
	va = mgw_session_view_new(a, f->base, err, sizeof(err));
	vb = mgw_session_view_new(b, f->base, err, sizeof(err));
	assert_int_equal(th_create(va, th_draft(body, NULL, NULL), &s), 0);
	assert_int_equal(th_lookup(vb, s->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_unref(s);
	mgw_session_view_free(va);
	mgw_session_view_free(vb);
	mgw_session_store_free(a);
	mgw_session_store_free(b);
}

/* With a house loop the periodic sweep timer exists and frees cleanly. */
static void test_house_loop(void **state)
{
	struct fx *f = *state;
	struct mgw_session_env env = th_env(&f->clock);
	struct mgw_session_store *st;
	char err[256];

	env.house_base = f->base;
	st = mgw_session_store_memory_new(&f->cfg->serve.sessions, &env, err,
	                                  sizeof(err));
	assert_non_null(st);
	assert_non_null(st->sweep_ev);
	assert_true(event_pending(st->sweep_ev, EV_TIMEOUT, NULL));
	mgw_session_store_free(st);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_never_inside_memory),
		T(test_never_inside_sealed),
		T(test_cancel_memory),
		T(test_cancel_sealed),
		T(test_delivery_on_own_loop),
		T(test_registry_and_async),
		T(test_factory_sealed_key_file),
		T(test_house_loop),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
