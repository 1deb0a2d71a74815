/* state_memory.c - the "memory" handle design: counters in a map inside
 * this replica.  It is what a naive stateless server does, and exactly what
 * breaks when a request lands on another replica (a "handle loss"). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend-t.h"
#include "backend/state.h"
#include "backend/strmap.h"
#include "core/errors.h"
#include "util/rand.h"
#include "util/time.h"

struct memory_store {
	struct mgw_be_store base;
	struct mgw_strmap *map;   /* handle -> struct mgw_be_counter */
	uint64_t ttl_ms;
	size_t max_handles;
	uint64_t expired;
};

static void mem_create(struct mgw_be_store *s, mgw_be_store_cb cb, void *arg)
{
	struct memory_store *m = (struct memory_store *)s;
	struct mgw_be_counter *c;
	char handle[2 + 32 + 1];

	if (mgw_strmap_count(m->map) >= m->max_handles) {
		cb(MGW_ELIMIT, 0, NULL, arg);
		return;
	}
	memcpy(handle, "m_", 2);
	if (mgw_random_hex(handle + 2, 16) != 0) {
		cb(MGW_EIO, 0, NULL, arg);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || mgw_strmap_put(m->map, handle, c) != 0) {
		free(c);
		cb(MGW_ENOMEM, 0, NULL, arg);
		return;
	}
	c->last_used_ms = mgw_now_ms();
	cb(0, 0, handle, arg);
}

static void mem_increment(struct mgw_be_store *s, const char *handle,
                          mgw_be_store_cb cb, void *arg)
{
	struct memory_store *m = (struct memory_store *)s;
	struct mgw_be_counter *c = mgw_strmap_get(m->map, handle);
	uint64_t now = mgw_now_ms();

	if (!c || now - c->last_used_ms > m->ttl_ms) {
		cb(MGW_ENOTFOUND, 0, NULL, arg);
		return;
	}
	c->last_used_ms = now;
	c->value++;
	cb(0, c->value, NULL, arg);
}

struct sweep_ctx {
	struct memory_store *m;
	uint64_t now;
};

static int sweep_one(const char *key, void *value, void *arg)
{
	struct sweep_ctx *sc = arg;
	struct mgw_be_counter *c = value;

	(void)key;
	if (sc->now - c->last_used_ms <= sc->m->ttl_ms)
		return 0;
	free(c);
	sc->m->expired++;
	return 1;
}

static void mem_sweep(struct mgw_be_store *s, uint64_t now_ms)
{
	struct sweep_ctx sc = {(struct memory_store *)s, now_ms};

	mgw_strmap_foreach(sc.m->map, sweep_one, &sc);
}

static void mem_describe(const struct mgw_be_store *s, json_t *obj)
{
	const struct memory_store *m = (const struct memory_store *)s;

	json_object_set_new(obj, "handles", json_integer((json_int_t)mgw_strmap_count(m->map)));
	json_object_set_new(obj, "handles_expired", json_integer((json_int_t)m->expired));
}

static int free_one(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 1;
}

static void mem_free(struct mgw_be_store *s)
{
	struct memory_store *m = (struct memory_store *)s;

	mgw_strmap_foreach(m->map, free_one, NULL);
	mgw_strmap_free(m->map);
	free(m);
}

static const struct mgw_be_store_ops memory_ops = {
	.name = "memory",
	.create = mem_create,
	.increment = mem_increment,
	.sweep = mem_sweep,
	.describe = mem_describe,
	.free = mem_free,
};

struct mgw_be_store *mgw_be_store_memory_new(double ttl, size_t max_handles)
{
	struct memory_store *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->base.ops = &memory_ops;
	m->ttl_ms = (uint64_t)(ttl * 1000.0);
	m->max_handles = max_handles ? max_handles : 1;
	m->map = mgw_strmap_new();
	if (!m->map) {
		free(m);
		return NULL;
	}
	return &m->base;
}

void mgw_be_store_free(struct mgw_be_store *s)
{
	if (s)
		s->ops->free(s);
}
