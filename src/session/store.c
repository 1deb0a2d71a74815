/* store.c - the generic layer of session stores: the registry of store
 * kinds, views, operations whose callbacks always run from the loop (never
 * inside the call that started them), the counters every store shares,
 * and the periodic expiry sweep.  See store.h for the contract. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "session/conf_sessions-t.h"
#include "core/errors.h"
#include "core/log.h"
#include "session/session.h"
#include "session/store.h"
#include "util/keyfile.h"
#include "util/rand.h"
#include "util/time.h"

#define MAX_TYPES 8
#define MAX_KEYS 16             /* keys one key file may hold */
#define SWEEP_INTERVAL 1.0      /* seconds between periodic sweeps */
#define SWEEP_BATCH 4096        /* records one sweep may drop (bounded
                                 * work per tick; the rest next tick) */

static const struct mgw_session_store_type *types[MAX_TYPES];
static size_t n_types;

int mgw_session_store_register(const struct mgw_session_store_type *t)
{
	for (size_t i = 0; i < n_types; i++)
		if (strcmp(types[i]->name, t->name) == 0)
			return types[i] == t ? 0 : MGW_EINVAL;
	if (!strcmp(t->name, "memory") || !strcmp(t->name, "sealed"))
		return MGW_EINVAL;
	if (n_types == MAX_TYPES)
		return MGW_ELIMIT;
	types[n_types++] = t;
	return 0;
}

static const char *store_name(enum mgw_session_store_conf s)
{
	switch (s) {
	case MGW_SESSION_STORE_MEMORY: return "memory";
	case MGW_SESSION_STORE_SEALED: return "sealed";
	case MGW_SESSION_STORE_REDIS: return "redis";
	default: return "?";
	}
}

static struct mgw_session_store *sealed_from_conf(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen)
{
	struct mgw_key256 keys[MAX_KEYS];
	struct mgw_session_store *st = NULL;
	int n;

	if (conf->key_file) {
		n = mgw_keyfile_load(conf->key_file, keys, MAX_KEYS, err, errlen);
		if (n < 0)
			return NULL;
	} else {
		if (mgw_keyfile_random(&keys[0], "r0") != 0) {
			snprintf(err, errlen, "no random bytes for a session key");
			return NULL;
		}
		n = 1;
		mgw_warn(NULL, "sessions: sealed store without key_file: a random "
		         "key was made, so sessions do not survive a restart and "
		         "other gateways cannot open them");
	}
	st = mgw_session_store_sealed_new(conf, env, keys, (size_t)n, err,
	                                  errlen);
	OPENSSL_cleanse(keys, sizeof(keys));
	return st;
}

struct mgw_session_store *mgw_session_store_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen)
{
	const char *name = store_name(conf->store);

	if (conf->store == MGW_SESSION_STORE_MEMORY)
		return mgw_session_store_memory_new(conf, env, err, errlen);
	if (conf->store == MGW_SESSION_STORE_SEALED)
		return sealed_from_conf(conf, env, err, errlen);
	for (size_t i = 0; i < n_types; i++)
		if (strcmp(types[i]->name, name) == 0)
			return types[i]->create(conf, env, err, errlen);
	snprintf(err, errlen, "session store '%s' is not available in this "
	         "build", name);
	return NULL;
}

static uint64_t default_mono(void *arg)
{
	(void)arg;
	return mgw_now_ms();
}

static int64_t default_wall(void *arg)
{
	(void)arg;
	return mgw_wall_s();
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_session_store *st = arg;

	(void)fd;
	(void)what;
	mgw_session_store_sweep(st, SWEEP_BATCH);
}

int mgw_session_store_init(struct mgw_session_store *st,
                           const struct mgw_session_store_ops *ops,
                           const struct mgw_sessions_conf *conf,
                           const struct mgw_session_env *env)
{
	struct timeval tv = mgw_tv(SWEEP_INTERVAL);

	st->ops = ops;
	st->conf = conf;
	if (env)
		st->env = *env;
	if (!st->env.mono_ms)
		st->env.mono_ms = default_mono;
	if (!st->env.wall_s)
		st->env.wall_s = default_wall;
	if (!st->env.house_base || !ops->sweep)
		return 0;
	st->sweep_ev = event_new(st->env.house_base, -1, EV_PERSIST, on_sweep,
	                         st);
	if (!st->sweep_ev || event_add(st->sweep_ev, &tv) != 0) {
		if (st->sweep_ev)
			event_free(st->sweep_ev);
		st->sweep_ev = NULL;
		return MGW_ENOMEM;
	}
	return 0;
}

void mgw_session_store_deinit(struct mgw_session_store *st)
{
	if (st->sweep_ev)
		event_free(st->sweep_ev);
	st->sweep_ev = NULL;
}

void mgw_session_store_free(struct mgw_session_store *st)
{
	if (st)
		st->ops->destroy(st);
}

uint64_t mgw_session_store_mono_ms(const struct mgw_session_store *st)
{
	return st->env.mono_ms(st->env.clock_arg);
}

int64_t mgw_session_store_wall_s(const struct mgw_session_store *st)
{
	return st->env.wall_s(st->env.clock_arg);
}

size_t mgw_session_store_max_id(const struct mgw_session_store *st)
{
	return st->max_id;
}

size_t mgw_session_store_max_initialize(const struct mgw_session_store *st)
{
	return st->max_init;
}

size_t mgw_session_store_sweep(struct mgw_session_store *st, size_t max)
{
	return st->ops->sweep ? st->ops->sweep(st, max) : 0;
}

#define LOAD(x) atomic_load_explicit(&st->cnt.x, memory_order_relaxed)

void mgw_session_store_stats(struct mgw_session_store *st,
                             struct mgw_session_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->store = st->ops->name;
	out->created = LOAD(created);
	out->expired = LOAD(expired);
	out->deleted = LOAD(deleted);
	out->evicted = LOAD(evicted);
	out->refused = LOAD(refused);
	out->lookups = LOAD(lookups);
	out->not_found = LOAD(not_found);
	out->rejected_token = LOAD(rejected_token);
	out->rejected_principal = LOAD(rejected_principal);
	out->conflicts = LOAD(conflicts);
	out->cache_hits = LOAD(cache_hits);
	out->cache_misses = LOAD(cache_misses);
	out->errors = LOAD(errors);
	if (st->ops->stats)
		st->ops->stats(st, out);
}

#undef LOAD

void mgw_session_store_op_stats(struct mgw_session_store *st,
                                struct mgw_session_op_stats *out)
{
	const struct mgw_session_op_counters *c = &st->opc;

	for (int k = 0; k < MGW_SESSION_OP_KINDS; k++) {
		for (int r = 0; r < MGW_SESSION_RES_N; r++)
			out->done[k][r] = atomic_load_explicit(&c->done[k][r],
			                                       memory_order_relaxed);
		for (int b = 0; b <= MGW_PROM_N_BUCKETS; b++)
			out->lat[k][b] = atomic_load_explicit(&c->lat[k][b],
			                                      memory_order_relaxed);
		out->lat_sum_ns[k] = atomic_load_explicit(&c->lat_sum_ns[k],
		                                          memory_order_relaxed);
	}
}

const char *mgw_session_op_kind_name(enum mgw_session_op_kind k)
{
	static const char *const n[MGW_SESSION_OP_KINDS] = {
		"create", "lookup", "update", "remove",
	};
	return (unsigned)k < MGW_SESSION_OP_KINDS ? n[k] : "?";
}

const char *mgw_session_op_result_name(enum mgw_session_op_result r)
{
	static const char *const n[MGW_SESSION_RES_N] = {
		"ok", "not_found", "conflict", "limit", "error", "other",
	};
	return (unsigned)r < MGW_SESSION_RES_N ? n[r] : "?";
}

/* ---- views ---- */

void mgw_session_view_init(struct mgw_session_view *v,
                           struct mgw_session_store *st,
                           struct event_base *base)
{
	v->store = st;
	v->base = base;
	v->ops_alive = 0;
	v->ops_cancelled = 0;
}

struct mgw_session_view *mgw_session_view_new(struct mgw_session_store *st,
                                              struct event_base *base,
                                              char *err, size_t errlen)
{
	struct mgw_session_view *v;

	if (st->ops->view_new)
		return st->ops->view_new(st, base, err, errlen);
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	mgw_session_view_init(v, st, base);
	return v;
}

void mgw_session_view_free(struct mgw_session_view *v)
{
	if (!v)
		return;
	/* An op still alive would later touch freed memory: a caller bug.
	 * Cancelled ops an async store still holds are its view_free's to
	 * complete. */
	if (v->ops_alive > v->ops_cancelled)
		mgw_err(NULL, "sessions: view freed with %zu operations alive",
		        v->ops_alive - v->ops_cancelled);
	if (v->store->ops->view_free)
		v->store->ops->view_free(v);
	else
		free(v);
}

/* ---- operations ---- */

static void op_free(struct mgw_session_op *op)
{
	op->view->ops_alive--;
	mgw_session_unref(op->rec);
	event_free(op->ev);
	free(op);
}

static void on_op_ready(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_session_op *op = arg;
	struct mgw_session *rec = op->rec;

	(void)fd;
	(void)what;
	op->rec = NULL;         /* the reference moves to the callback */
	op->delivering = 1;
	op->cb(op->arg, op->status, rec);
	op_free(op);
}

static struct mgw_session_op *op_new(struct mgw_session_view *v,
                                     enum mgw_session_op_kind kind,
                                     mgw_session_cb cb, void *arg)
{
	struct mgw_session_op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	op->ev = event_new(v->base, -1, 0, on_op_ready, op);
	if (!op->ev) {
		free(op);
		return NULL;
	}
	op->view = v;
	op->kind = kind;
	op->t0_ns = mgw_now_ns();
	op->cb = cb;
	op->arg = arg;
	v->ops_alive++;
	return op;
}

static void count(struct mgw_session_store *st, enum mgw_session_op_kind kind,
                  int status)
{
	atomic_uint_fast64_t *c = NULL;

	if (status == MGW_EIO)
		c = &st->cnt.errors;
	else if (kind == MGW_SESSION_OP_CREATE && status == 0)
		c = &st->cnt.created;
	else if (kind == MGW_SESSION_OP_CREATE && status == MGW_ELIMIT)
		c = &st->cnt.refused;
	else if (kind == MGW_SESSION_OP_LOOKUP && status == MGW_ENOTFOUND)
		c = &st->cnt.not_found;
	else if (kind == MGW_SESSION_OP_UPDATE && status == MGW_ECONFLICT)
		c = &st->cnt.conflicts;
	else if (kind == MGW_SESSION_OP_REMOVE && status == 0)
		c = &st->cnt.deleted;
	if (c)
		atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* The operation counters: by kind and result, and the latency. */
static void count_op(struct mgw_session_store *st, const struct mgw_session_op *op,
                     int status)
{
	struct mgw_session_op_counters *c = &st->opc;
	enum mgw_session_op_result r;
	uint64_t now = mgw_now_ns(), ns = now > op->t0_ns ? now - op->t0_ns : 0;
	unsigned k = (unsigned)op->kind;

	if (k >= MGW_SESSION_OP_KINDS)
		return;
	switch (status) {
	case 0: r = MGW_SESSION_RES_OK; break;
	case MGW_ENOTFOUND: r = MGW_SESSION_RES_NOT_FOUND; break;
	case MGW_ECONFLICT: r = MGW_SESSION_RES_CONFLICT; break;
	case MGW_ELIMIT: r = MGW_SESSION_RES_LIMIT; break;
	case MGW_EIO: r = MGW_SESSION_RES_ERROR; break;
	default: r = MGW_SESSION_RES_OTHER; break;
	}
	atomic_fetch_add_explicit(&c->done[k][r], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->lat[k][mgw_prom_bucket_ns(ns)], 1,
	                          memory_order_relaxed);
	atomic_fetch_add_explicit(&c->lat_sum_ns[k], ns, memory_order_relaxed);
}

void mgw_session_op_complete(struct mgw_session_op *op, int status,
                             struct mgw_session *rec)
{
	/* Completing twice would deliver twice or leak: an implementation
	 * bug, not input, hence no error path. */
	if (op->completed) {
		mgw_err(NULL, "sessions: operation completed twice");
		mgw_session_unref(rec);
		return;
	}
	op->completed = 1;
	count(op->view->store, op->kind, status);
	count_op(op->view->store, op, status);
	if (op->cancelled) {
		op->view->ops_cancelled--;
		mgw_session_unref(rec);
		op_free(op);
		return;
	}
	op->status = status;
	op->rec = rec;
	event_active(op->ev, EV_TIMEOUT, 1);
}

void mgw_session_op_cancel(struct mgw_session_op *op)
{
	if (!op || op->delivering || op->cancelled)
		return;
	if (op->completed) {
		/* The result waits in the loop's active queue: take it out. */
		event_del(op->ev);
		op_free(op);
		return;
	}
	/* Still with the implementation: it completes later, which frees. */
	op->cancelled = 1;
	op->view->ops_cancelled++;
}

/* Starts op through the implementation; on a start error the op was not
 * completed and is freed here, so the caller sees only the error. */
static int run(struct mgw_session_op *op, int rc, struct mgw_session_op **out)
{
	if (rc < 0) {
		if (op->completed) {
			/* The implementation broke the contract; keep the
			 * completion (one callback) and report success. */
			mgw_err(NULL, "sessions: store completed a failed start");
			rc = 0;
		} else {
			op_free(op);
			if (out)
				*out = NULL;
			return rc;
		}
	}
	if (out)
		*out = op;
	return 0;
}

int mgw_session_create(struct mgw_session_view *v, struct mgw_session *draft,
                       mgw_session_cb cb, void *arg,
                       struct mgw_session_op **out)
{
	struct mgw_session_op *op;

	if (out)
		*out = NULL;
	if (!draft || !draft->init_body) {
		mgw_session_unref(draft);
		return MGW_EINVAL;
	}
	op = op_new(v, MGW_SESSION_OP_CREATE, cb, arg);
	if (!op) {
		mgw_session_unref(draft);
		return MGW_ENOMEM;
	}
	return run(op, v->store->ops->create(v, draft, op), out);
}

int mgw_session_lookup(struct mgw_session_view *v, const char *id, size_t len,
                       const unsigned char *principal, mgw_session_cb cb,
                       void *arg, struct mgw_session_op **out)
{
	struct mgw_session_store *st = v->store;
	struct mgw_session_op *op;

	if (out)
		*out = NULL;
	op = op_new(v, MGW_SESSION_OP_LOOKUP, cb, arg);
	if (!op)
		return MGW_ENOMEM;
	atomic_fetch_add_explicit(&st->cnt.lookups, 1, memory_order_relaxed);
	/* Whatever a client puts in Mcp-Session-Id is answered like an
	 * unknown id, without the store ever seeing junk. */
	if (!mgw_session_id_valid(id, len, st->max_id)) {
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return run(op, 0, out);
	}
	return run(op, st->ops->lookup(v, id, len, principal, op), out);
}

int mgw_session_update(struct mgw_session_view *v, struct mgw_session *rec,
                       uint64_t expect_version, mgw_session_cb cb, void *arg,
                       struct mgw_session_op **out)
{
	struct mgw_session_op *op;

	if (out)
		*out = NULL;
	if (!rec || !rec->id) {
		mgw_session_unref(rec);
		return MGW_EINVAL;
	}
	op = op_new(v, MGW_SESSION_OP_UPDATE, cb, arg);
	if (!op) {
		mgw_session_unref(rec);
		return MGW_ENOMEM;
	}
	return run(op, v->store->ops->update(v, rec, expect_version, op), out);
}

int mgw_session_remove(struct mgw_session_view *v, const char *id, size_t len,
                       mgw_session_cb cb, void *arg,
                       struct mgw_session_op **out)
{
	struct mgw_session_store *st = v->store;
	struct mgw_session_op *op;

	if (out)
		*out = NULL;
	op = op_new(v, MGW_SESSION_OP_REMOVE, cb, arg);
	if (!op)
		return MGW_ENOMEM;
	if (!mgw_session_id_valid(id, len, st->max_id)) {
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return run(op, 0, out);
	}
	return run(op, st->ops->remove(v, id, len, op), out);
}

int mgw_session_mint_id(char *out)
{
	return mgw_random_hex(out, MGW_SESSION_ID_HEX_BYTES);
}
