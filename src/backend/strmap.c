/* strmap.c - chained hash map keyed by strings (FNV-1a), grown by doubling
 * so lookups stay O(1) as session and handle tables fill up. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/strmap.h"
#include "core/errors.h"
#include "util/hash.h"

struct entry {
	struct entry *next;
	void *value;
	uint64_t hash;
	char key[];
};

struct mgw_strmap {
	struct entry **buckets;
	size_t nbuckets; /* power of two */
	size_t count;
};


struct mgw_strmap *mgw_strmap_new(void)
{
	struct mgw_strmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->nbuckets = 64;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (!m->buckets) {
		free(m);
		return NULL;
	}
	return m;
}

void mgw_strmap_free(struct mgw_strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct entry *e = m->buckets[i];
		while (e) {
			struct entry *n = e->next;
			free(e);
			e = n;
		}
	}
	free(m->buckets);
	free(m);
}

size_t mgw_strmap_count(const struct mgw_strmap *m) { return m->count; }

static struct entry **find(const struct mgw_strmap *m, const char *key,
                           uint64_t h)
{
	struct entry **pp = &m->buckets[h & (m->nbuckets - 1)];

	while (*pp && ((*pp)->hash != h || strcmp((*pp)->key, key) != 0))
		pp = &(*pp)->next;
	return pp;
}

void *mgw_strmap_get(const struct mgw_strmap *m, const char *key)
{
	struct entry **pp = find(m, key, mgw_fnv1a_str(key));

	return *pp ? (*pp)->value : NULL;
}

/* Doubling keeps chains short; a failed grow is harmless (the map just
 * stays denser), so it reports nothing. */
static void grow(struct mgw_strmap *m)
{
	size_t n = m->nbuckets * 2;
	struct entry **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct entry *e = m->buckets[i];
		while (e) {
			struct entry *next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
			e = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
}

int mgw_strmap_put(struct mgw_strmap *m, const char *key, void *value)
{
	uint64_t h = mgw_fnv1a_str(key);
	struct entry **pp = find(m, key, h);
	size_t klen;
	struct entry *e;

	if (*pp) {
		(*pp)->value = value;
		return 0;
	}
	klen = strlen(key);
	e = malloc(sizeof(*e) + klen + 1);
	if (!e)
		return MGW_ENOMEM;
	memcpy(e->key, key, klen + 1);
	e->hash = h;
	e->value = value;
	e->next = NULL;
	*pp = e;
	m->count++;
	if (m->count > m->nbuckets)
		grow(m);
	return 0;
}

void *mgw_strmap_del(struct mgw_strmap *m, const char *key)
{
	struct entry **pp = find(m, key, mgw_fnv1a_str(key));
	struct entry *e = *pp;
	void *v;

	if (!e)
		return NULL;
	*pp = e->next;
	v = e->value;
	free(e);
	m->count--;
	return v;
}

void mgw_strmap_foreach(struct mgw_strmap *m, mgw_strmap_visit_cb visit,
                        void *arg)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct entry **pp = &m->buckets[i];
		while (*pp) {
			struct entry *e = *pp;
			if (visit(e->key, e->value, arg)) {
				*pp = e->next;
				free(e);
				m->count--;
			} else {
				pp = &e->next;
			}
		}
	}
}
