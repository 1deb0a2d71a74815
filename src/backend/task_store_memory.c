/* task_store_memory.c - the "memory" task design: records in a map inside
 * this replica.  A tasks/get that reaches another replica finds nothing:
 * the "task loss" a gateway without task affinity causes. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/strmap.h"
#include "backend/tasks.h"
#include "core/errors.h"

struct memory_tasks {
	struct mgw_be_task_store base;
	struct mgw_strmap *map;   /* id -> struct mgw_be_task */
	size_t max;
	uint64_t expired;
};

static int expired(const struct mgw_be_task *t, uint64_t now)
{
	return now - t->created_ms > t->ttl_ms;
}

static void mem_create(struct mgw_be_task_store *s, const struct mgw_be_task *t,
                       mgw_be_task_cb cb, void *arg)
{
	struct memory_tasks *m = (struct memory_tasks *)s;
	struct mgw_be_task *c;

	if (mgw_strmap_count(m->map) >= m->max) {
		cb(MGW_ELIMIT, NULL, arg);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		cb(MGW_ENOMEM, NULL, arg);
		return;
	}
	mgw_be_task_copy(c, t);
	if (mgw_strmap_put(m->map, c->id, c) != 0) {
		mgw_be_task_deinit(c);
		free(c);
		cb(MGW_ENOMEM, NULL, arg);
		return;
	}
	cb(0, c, arg);
}

/* The live record, or NULL when unknown or past its ttl. */
static struct mgw_be_task *lookup(struct memory_tasks *m, const char *id)
{
	struct mgw_be_task *t = mgw_strmap_get(m->map, id);

	return t && !expired(t, mgw_be_wall_ms()) ? t : NULL;
}

static void mem_get(struct mgw_be_task_store *s, const char *id,
                    mgw_be_task_cb cb, void *arg)
{
	struct mgw_be_task *t = lookup((struct memory_tasks *)s, id);

	cb(t ? 0 : MGW_ENOTFOUND, t, arg);
}

static void mem_finish(struct mgw_be_task_store *s, const char *id,
                       enum mgw_be_task_status status, const char *message,
                       const json_t *outcome, uint64_t now_ms,
                       mgw_be_task_cb cb, void *arg)
{
	struct mgw_be_task *t = lookup((struct memory_tasks *)s, id);

	if (!t) {
		cb(MGW_ENOTFOUND, NULL, arg);
		return;
	}
	if (mgw_be_task_effective(t, now_ms) != MGW_TASK_WORKING) {
		cb(MGW_ECONFLICT, t, arg);
		return;
	}
	t->status = status;
	t->updated_ms = now_ms;
	snprintf(t->message, sizeof(t->message), "%s", message ? message : "");
	json_decref(t->outcome);
	t->outcome = outcome ? json_deep_copy(outcome) : NULL;
	cb(0, t, arg);
}

struct sweep_ctx {
	struct memory_tasks *m;
	uint64_t now;
};

static int sweep_one(const char *key, void *value, void *arg)
{
	struct sweep_ctx *sc = arg;

	(void)key;
	if (!expired(value, sc->now))
		return 0;
	mgw_be_task_deinit(value);
	free(value);
	sc->m->expired++;
	return 1;
}

/* Expiry is by the wall clock, which the records carry; the monotonic
 * time the caller passes is not used. */
static void mem_sweep(struct mgw_be_task_store *s, uint64_t now_ms)
{
	struct sweep_ctx sc = {(struct memory_tasks *)s, mgw_be_wall_ms()};

	(void)now_ms;
	mgw_strmap_foreach(sc.m->map, sweep_one, &sc);
}

static size_t mem_held(const struct mgw_be_task_store *s)
{
	return mgw_strmap_count(((const struct memory_tasks *)s)->map);
}

static void mem_describe(const struct mgw_be_task_store *s, json_t *obj)
{
	const struct memory_tasks *m = (const struct memory_tasks *)s;

	json_object_set_new(obj, "tasks_expired", json_integer((json_int_t)m->expired));
}

static int free_one(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	mgw_be_task_deinit(value);
	free(value);
	return 1;
}

static void mem_free(struct mgw_be_task_store *s)
{
	struct memory_tasks *m = (struct memory_tasks *)s;

	mgw_strmap_foreach(m->map, free_one, NULL);
	mgw_strmap_free(m->map);
	free(m);
}

static const struct mgw_be_task_store_ops memory_ops = {
	.name = "memory",
	.create = mem_create,
	.get = mem_get,
	.finish = mem_finish,
	.sweep = mem_sweep,
	.held = mem_held,
	.describe = mem_describe,
	.free = mem_free,
};

struct mgw_be_task_store *mgw_be_task_store_memory_new(size_t max)
{
	struct memory_tasks *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->base.ops = &memory_ops;
	m->max = max ? max : 1;
	m->map = mgw_strmap_new();
	if (!m->map) {
		free(m);
		return NULL;
	}
	return &m->base;
}

void mgw_be_task_store_free(struct mgw_be_task_store *s)
{
	if (s)
		s->ops->free(s);
}
