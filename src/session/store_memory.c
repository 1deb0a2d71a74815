/* store_memory.c - the default session store: sessions live in this
 * gateway process, in one table shared by every worker thread (a client
 * that opens a new connection per request reaches any worker).
 *
 * Limits: idle_timeout (idle sessions expire; the periodic sweep and every
 * operation drop them, oldest first), max_lifetime (checked on lookup),
 * max_sessions and max_memory (bodies included).  A full store refuses new
 * sessions (MGW_ELIMIT, which the proxy answers 503) rather than dropping
 * live ones: a silently dropped session would surface as a 404 to a client
 * that did nothing wrong.  Every operation completes inside its start
 * function; the generic layer defers the callbacks to the loop. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "session/session.h"
#include "session/store.h"
#include "session/table.h"

struct memory_store {
	struct mgw_session_store base;  /* first: the generic part */
	struct mgw_session_table *table;
};

static struct memory_store *mem_of(struct mgw_session_store *st)
{
	return (struct memory_store *)st;
}

static uint64_t now_ms(struct mgw_session_view *v)
{
	return mgw_session_store_mono_ms(v->store);
}

/* Tries a few fresh ids: a collision of 128 random bits means a broken
 * random generator, not bad luck, but costs nothing to handle. */
static int mem_create(struct mgw_session_view *v, struct mgw_session *draft,
                      struct mgw_session_op *op)
{
	struct mgw_session_store *st = v->store;
	struct memory_store *m = mem_of(st);
	char id[2 * MGW_SESSION_ID_HEX_BYTES + 1];
	int64_t wall = mgw_session_store_wall_s(st);
	int rc = MGW_ECONFLICT;

	if (draft->init_len > st->max_init) {
		mgw_session_unref(draft);
		mgw_session_op_complete(op, MGW_ELIMIT, NULL);
		return 0;
	}
	draft->version = 0;
	draft->created_s = wall;
	draft->expires_s = wall + (int64_t)st->conf->max_lifetime;
	for (int tries = 0; tries < 4 && rc == MGW_ECONFLICT; tries++) {
		if (mgw_session_mint_id(id) != 0) {
			rc = MGW_EIO;
			break;
		}
		rc = mgw_session_set_id(draft, id, strlen(id));
		if (rc != 0)
			break;
		rc = mgw_session_table_insert(m->table, draft->id, draft->id_len,
		                              draft, now_ms(v));
	}
	if (rc != 0) {
		mgw_session_unref(draft);
		mgw_session_op_complete(op, rc, NULL);
		return 0;
	}
	/* The table holds the draft's reference; the caller gets its own. */
	mgw_session_op_complete(op, 0, mgw_session_ref(draft));
	return 0;
}

static int mem_lookup(struct mgw_session_view *v, const char *id, size_t len,
                      const unsigned char *principal,
                      struct mgw_session_op *op)
{
	struct mgw_session_store *st = v->store;
	struct memory_store *m = mem_of(st);
	struct mgw_session *rec = NULL;
	int rc = mgw_session_table_get(m->table, id, len, now_ms(v), &rec);

	if (rc == 0 && rec->expires_s <= mgw_session_store_wall_s(st)) {
		/* Past its lifetime: gone for everyone, not just this caller. */
		mgw_session_unref(rec);
		rec = NULL;
		if (mgw_session_table_remove(m->table, id, len) == 0)
			atomic_fetch_add_explicit(&st->cnt.expired, 1,
			                          memory_order_relaxed);
		rc = MGW_ENOTFOUND;
	}
	if (rc == 0 && st->conf->bind_principal &&
	    !mgw_session_principal_matches(rec, principal)) {
		atomic_fetch_add_explicit(&st->cnt.rejected_principal, 1,
		                          memory_order_relaxed);
		mgw_session_unref(rec);
		rec = NULL;
		rc = MGW_ENOTFOUND;
	}
	if (rc != 0)
		rc = MGW_ENOTFOUND;
	mgw_session_op_complete(op, rc, rec);
	return 0;
}

static int mem_update(struct mgw_session_view *v, struct mgw_session *rec,
                      uint64_t expect_version, struct mgw_session_op *op)
{
	struct memory_store *m = mem_of(v->store);
	struct mgw_session *current = NULL;
	int rc = mgw_session_table_replace(m->table, rec->id, rec->id_len, rec,
	                                   expect_version, now_ms(v), &current);

	if (rc == 0) {
		mgw_session_op_complete(op, 0, mgw_session_ref(rec));
		return 0;
	}
	mgw_session_unref(rec);
	mgw_session_op_complete(op, rc, current);
	return 0;
}

static int mem_remove(struct mgw_session_view *v, const char *id, size_t len,
                      struct mgw_session_op *op)
{
	struct memory_store *m = mem_of(v->store);
	int rc = mgw_session_table_remove(m->table, id, len);

	mgw_session_op_complete(op, rc == 0 ? 0 : MGW_ENOTFOUND, NULL);
	return 0;
}

static size_t mem_sweep(struct mgw_session_store *st, size_t max)
{
	return mgw_session_table_sweep(mem_of(st)->table,
	                               mgw_session_store_mono_ms(st), max);
}

static void mem_stats(struct mgw_session_store *st,
                      struct mgw_session_stats *out)
{
	struct mgw_session_table_stats ts;

	mgw_session_table_stats(mem_of(st)->table, &ts);
	out->active = ts.count;
	out->memory_bytes = ts.bytes;
	out->expired += ts.expired;
	out->evicted += ts.evicted;
}

static void mem_destroy(struct mgw_session_store *st)
{
	struct memory_store *m = mem_of(st);

	mgw_session_store_deinit(st);
	mgw_session_table_free(m->table);
	free(m);
}

static const struct mgw_session_store_ops memory_ops = {
	.name = "memory",
	.create = mem_create,
	.lookup = mem_lookup,
	.update = mem_update,
	.remove = mem_remove,
	.sweep = mem_sweep,
	.stats = mem_stats,
	.destroy = mem_destroy,
};

struct mgw_session_store *mgw_session_store_memory_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen)
{
	struct memory_store *m = calloc(1, sizeof(*m));
	struct mgw_session_table_limits lim = {
		.max_count = conf->max_sessions,
		.max_bytes = conf->max_memory,
		.idle_ms = (uint64_t)(conf->idle_timeout * 1000.0),
		.evict = 0,
	};

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->table = mgw_session_table_new(&lim, err, errlen);
	if (!m->table)
		goto fail;
	if (mgw_session_store_init(&m->base, &memory_ops, conf, env) != 0) {
		snprintf(err, errlen, "cannot set up the session sweep timer");
		goto fail;
	}
	m->base.max_id = 2 * MGW_SESSION_ID_HEX_BYTES;
	m->base.max_init = conf->max_initialize_bytes;
	return &m->base;
fail:
	mgw_session_table_free(m->table);
	free(m);
	return NULL;
}
