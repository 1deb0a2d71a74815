/* affinity.c - a group's map of task id -> owner, and the reading of a
 * CreateTaskResult (affinity.h). */
#include "autoconf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "proxy/affinity.h"
#include "proxy/balancer.h"

int mgw_task_map_init(struct mgw_task_map *m, size_t max, uint64_t max_ttl_ms)
{
	size_t nb = 16;

	memset(m, 0, sizeof(*m));
	if (max < 1)
		max = 1;
	/* about one entry per bucket when full */
	while (nb < max)
		nb <<= 1;
	m->buckets = calloc(nb, sizeof(*m->buckets));
	if (!m->buckets)
		return MGW_ENOMEM;
	if (pthread_mutex_init(&m->mu, NULL) != 0) {
		free(m->buckets);
		m->buckets = NULL;
		return MGW_ENOMEM;
	}
	m->mask = nb - 1;
	m->max = max;
	m->max_ttl_ms = max_ttl_ms ? max_ttl_ms : 1;
	atomic_init(&m->learned, 0);
	atomic_init(&m->routed, 0);
	atomic_init(&m->owner_gone, 0);
	atomic_init(&m->misses, 0);
	atomic_init(&m->shared_hits, 0);
	atomic_init(&m->evicted, 0);
	return 0;
}

void mgw_task_map_deinit(struct mgw_task_map *m)
{
	struct mgw_task_entry *e, *next;

	if (!m->buckets)
		return;
	for (e = m->oldest; e; e = next) {
		next = e->newer;
		free(e);
	}
	free(m->buckets);
	m->buckets = NULL;
	m->oldest = m->newest = NULL;
	m->n = 0;
	pthread_mutex_destroy(&m->mu);
}

/* ---- the table (lock held) ------------------------------------------------ */

static struct mgw_task_entry **slot_of(struct mgw_task_map *m, uint64_t hash,
                                       const char *id, size_t len)
{
	struct mgw_task_entry **pp = &m->buckets[hash & m->mask];

	for (; *pp; pp = &(*pp)->chain)
		if ((*pp)->hash == hash && (*pp)->len == len &&
		    memcmp((*pp)->id, id, len) == 0)
			break;
	return pp;
}

static void unlink_order(struct mgw_task_map *m, struct mgw_task_entry *e)
{
	if (e->older)
		e->older->newer = e->newer;
	else
		m->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		m->newest = e->older;
	e->older = e->newer = NULL;
}

static void link_newest(struct mgw_task_map *m, struct mgw_task_entry *e)
{
	e->older = m->newest;
	e->newer = NULL;
	if (m->newest)
		m->newest->newer = e;
	else
		m->oldest = e;
	m->newest = e;
}

/* Removes e (its slot pp) and frees it. */
static void drop(struct mgw_task_map *m, struct mgw_task_entry **pp)
{
	struct mgw_task_entry *e = *pp;

	*pp = e->chain;
	unlink_order(m, e);
	m->n--;
	free(e);
}

/* 1 while e is good at now_ms (a worker's clock read just before
 * another's learn is not "later"). */
static int alive(const struct mgw_task_entry *e, uint64_t now_ms)
{
	return now_ms < e->expires_ms;
}

/* ---- put / get ------------------------------------------------------------ */

static uint64_t expiry(const struct mgw_task_map *m, uint64_t ttl_ms,
                       uint64_t now_ms)
{
	if (ttl_ms > m->max_ttl_ms)
		ttl_ms = m->max_ttl_ms;
	return now_ms + ttl_ms;
}

/* Lock held.  The caller made sure id/len is not in the table. */
static int insert(struct mgw_task_map *m, const char *id, size_t len,
                  uint64_t hash, uint64_t owner, uint64_t expires_ms)
{
	struct mgw_task_entry *e = malloc(sizeof(*e) + len + 1);

	if (!e)
		return MGW_ENOMEM;
	if (m->n >= m->max) {
		struct mgw_task_entry *old = m->oldest;

		drop(m, slot_of(m, old->hash, old->id, old->len));
		atomic_fetch_add(&m->evicted, 1);
	}
	e->hash = hash;
	e->owner = owner;
	e->expires_ms = expires_ms;
	e->len = len;
	memcpy(e->id, id, len);
	e->id[len] = '\0';
	e->chain = m->buckets[hash & m->mask];
	m->buckets[hash & m->mask] = e;
	link_newest(m, e);
	m->n++;
	return 0;
}

int mgw_task_map_put(struct mgw_task_map *m, const char *id, size_t len,
                     uint64_t owner, uint64_t ttl_ms, uint64_t now_ms)
{
	uint64_t hash;
	struct mgw_task_entry **pp;
	int rc = 0;

	if (len == 0 || len > MGW_TASK_ID_MAX || ttl_ms == 0)
		return MGW_EINVAL;
	hash = mgw_hash64(id, len);
	pthread_mutex_lock(&m->mu);
	pp = slot_of(m, hash, id, len);
	if (*pp) {
		/* learned again (a repeated answer): newest again */
		(*pp)->owner = owner;
		(*pp)->expires_ms = expiry(m, ttl_ms, now_ms);
		unlink_order(m, *pp);
		link_newest(m, *pp);
	} else {
		rc = insert(m, id, len, hash, owner, expiry(m, ttl_ms, now_ms));
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

int mgw_task_map_get(struct mgw_task_map *m, const char *id, size_t len,
                     uint64_t now_ms, uint64_t *owner, uint64_t *left_ms)
{
	struct mgw_task_entry **pp;
	int found = 0;

	if (len == 0 || len > MGW_TASK_ID_MAX)
		return 0;
	pthread_mutex_lock(&m->mu);
	pp = slot_of(m, mgw_hash64(id, len), id, len);
	if (*pp && !alive(*pp, now_ms)) {
		drop(m, pp);
	} else if (*pp) {
		*owner = (*pp)->owner;
		if (left_ms)
			*left_ms = (*pp)->expires_ms - now_ms;
		found = 1;
	}
	pthread_mutex_unlock(&m->mu);
	return found;
}

size_t mgw_task_map_size(struct mgw_task_map *m)
{
	size_t n;

	pthread_mutex_lock(&m->mu);
	n = m->n;
	pthread_mutex_unlock(&m->mu);
	return n;
}

/* ---- reload --------------------------------------------------------------- */

#define CARRY(f) atomic_store(&to->f, atomic_load(&from->f))

void mgw_task_map_carry(struct mgw_task_map *to, struct mgw_task_map *from,
                        uint64_t now_ms)
{
	CARRY(learned);
	CARRY(routed);
	CARRY(owner_gone);
	CARRY(misses);
	CARRY(shared_hits);
	CARRY(evicted);
	/* the old map is retired (no worker learns into it any more) but
	 * its lock is still the rule; to is not yet shared */
	pthread_mutex_lock(&from->mu);
	for (const struct mgw_task_entry *e = from->oldest; e; e = e->newer) {
		struct mgw_task_entry **pp;

		if (!alive(e, now_ms))
			continue;
		pp = slot_of(to, e->hash, e->id, e->len);
		if (*pp || insert(to, e->id, e->len, e->hash, e->owner,
		                  e->expires_ms) != 0)
			continue;
	}
	pthread_mutex_unlock(&from->mu);
}
#undef CARRY

uint64_t mgw_task_owner_key(const char *url)
{
	return mgw_hash64(url, strlen(url));
}

/* ---- CreateTaskResult ----------------------------------------------------- */

/* ttlMs: integer milliseconds or null (unlimited).  What cannot be read
 * as a duration is unlimited too: the map's own bound decides then. */
static uint64_t ttl_of(const json_t *v)
{
	double d;

	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		return i < 0 ? UINT64_MAX : (uint64_t)i;
	}
	if (!json_is_real(v))
		return UINT64_MAX;
	d = json_real_value(v);
	if (!(d >= 0) || d >= 1.8e19)
		return UINT64_MAX;
	return (uint64_t)ceil(d);
}

int mgw_task_created(const json_t *resp, const char **id, size_t *len,
                     uint64_t *ttl_ms)
{
	const json_t *res = json_object_get(resp, "result");
	const json_t *tid = json_object_get(res, "taskId");
	const char *rt = json_string_value(json_object_get(res, "resultType"));

	if (!json_is_object(res) || !rt || strcmp(rt, "task") != 0 ||
	    !json_is_string(tid))
		return 0;
	*len = json_string_length(tid);
	*id = json_string_value(tid);
	if (*len == 0 || memchr(*id, '\0', *len))
		return 0;
	*ttl_ms = ttl_of(json_object_get(res, "ttlMs"));
	return 1;
}
