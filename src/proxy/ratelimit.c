/* ratelimit.c - the routes' token buckets by key (ratelimit.h).
 *
 * Stripes: a keyed hash of (limit id, key) picks one of NSTRIPES, each
 * with its own mutex, chained hash slots and a least-recently-used list.
 * A request holds one stripe's mutex for one lookup and a few float
 * operations. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/ratelimit.h"
#include "util/hash.h"
#include "util/tbucket.h"

#define NSTRIPES 32
/* Keys longer than this keep their first KEEP bytes and a hash of the
 * rest of the key (KEY_MAX - KEEP bytes). */
#define KEY_MAX 192
#define KEEP (KEY_MAX - 17)

struct entry {
	struct entry *hnext;            /* hash chain */
	struct entry *prev, *next;      /* LRU list: head is the most recent */
	uint64_t hash, id;
	struct mgw_tbucket b;
	size_t len;
	char key[];
};

struct stripe {
	pthread_mutex_t mu;
	struct entry **slot;
	size_t nslots;                  /* a power of two */
	struct entry *head, *tail;
	size_t n, cap;
	uint64_t evictions;
	char pad[64];                   /* keep stripes off each other's line */
};

struct mgw_rl_table {
	struct stripe s[NSTRIPES];
	uint64_t seed;
	atomic_uint_fast64_t limited[MGW_RL_COUNTED_ROUTES + 1][MGW_RL_N_KEYS];
	atomic_uint_fast64_t fallbacks;
};

const char *mgw_rl_key_name(enum mgw_rl_key_conf k)
{
	switch (k) {
	case MGW_RL_KEY_PRINCIPAL: return "principal";
	case MGW_RL_KEY_CLIENT: return "client";
	case MGW_RL_KEY_METHOD: return "method";
	case MGW_RL_KEY_TOOL: return "tool";
	}
	return "unknown";
}

struct mgw_rl_table *mgw_rl_table_new(size_t max_keys, uint64_t seed)
{
	struct mgw_rl_table *t = calloc(1, sizeof(*t));
	size_t per;

	if (!t)
		return NULL;
	t->seed = seed;
	per = (max_keys + NSTRIPES - 1) / NSTRIPES;
	if (per < 1)
		per = 1;
	for (size_t i = 0; i < NSTRIPES; i++) {
		struct stripe *s = &t->s[i];
		size_t ns = 8;

		while (ns < per && ns < ((size_t)1 << 24))
			ns <<= 1;
		pthread_mutex_init(&s->mu, NULL);
		s->cap = per;
		s->nslots = ns;
		s->slot = calloc(ns, sizeof(*s->slot));
		if (!s->slot) {
			for (size_t j = 0; j <= i; j++)
				pthread_mutex_destroy(&t->s[j].mu);
			for (size_t j = 0; j < i; j++)
				free(t->s[j].slot);
			free(t);
			return NULL;
		}
	}
	return t;
}

void mgw_rl_table_free(struct mgw_rl_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < NSTRIPES; i++) {
		struct entry *e = t->s[i].head;

		while (e) {
			struct entry *n = e->next;

			free(e);
			e = n;
		}
		free(t->s[i].slot);
		pthread_mutex_destroy(&t->s[i].mu);
	}
	free(t);
}

/* The seeded FNV-1a of (id, key): the seed keeps clients from choosing
 * keys that crowd one stripe or chain. */
static uint64_t key_hash(uint64_t seed, uint64_t id, const char *k, size_t n)
{
	uint64_t h = MGW_FNV1A_BASIS ^ seed;
	unsigned char ib[8];

	memcpy(ib, &id, 8);
	for (size_t i = 0; i < 8; i++)
		h = (h ^ ib[i]) * MGW_FNV1A_PRIME;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * MGW_FNV1A_PRIME;
	h ^= h >> 31;
	h *= 0x7fb5d329728ea185ULL;
	h ^= h >> 27;
	return h;
}

static void lru_unlink(struct stripe *s, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		s->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		s->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push(struct stripe *s, struct entry *e)
{
	e->prev = NULL;
	e->next = s->head;
	if (s->head)
		s->head->prev = e;
	s->head = e;
	if (!s->tail)
		s->tail = e;
}

static void evict_tail(struct stripe *s)
{
	struct entry *e = s->tail, **pp;

	if (!e)
		return;
	lru_unlink(s, e);
	for (pp = &s->slot[e->hash & (s->nslots - 1)]; *pp; pp = &(*pp)->hnext)
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	s->n--;
	__atomic_store_n(&s->evictions, s->evictions + 1, __ATOMIC_RELAXED);
	free(e);
}

int mgw_rl_take(struct mgw_rl_table *t, uint64_t id, const char *key,
                size_t len, double rate, double burst, uint64_t now_ns,
                double *wait_s)
{
	char kbuf[KEY_MAX];
	uint64_t h;
	struct stripe *s;
	struct entry *e;
	int ok;

	if (len > KEY_MAX) {
		/* the head as written, the whole key's hash after it */
		uint64_t kh = key_hash(t->seed, id, key, len);
		static const char hex[] = "0123456789abcdef";

		memcpy(kbuf, key, KEEP);
		kbuf[KEEP] = '#';
		for (int i = 0; i < 16; i++)
			kbuf[KEEP + 1 + i] = hex[(kh >> (60 - 4 * i)) & 15];
		key = kbuf;
		len = KEY_MAX;
	}
	h = key_hash(t->seed, id, key, len);
	s = &t->s[(h >> 56) % NSTRIPES];
	pthread_mutex_lock(&s->mu);
	for (e = s->slot[h & (s->nslots - 1)]; e; e = e->hnext)
		if (e->hash == h && e->id == id && e->len == len &&
		    memcmp(e->key, key, len) == 0)
			break;
	if (e) {
		lru_unlink(s, e);
	} else {
		if (s->n >= s->cap)
			evict_tail(s);
		e = malloc(sizeof(*e) + len);
		if (!e) {
			pthread_mutex_unlock(&s->mu);
			return 1;
		}
		e->hash = h;
		e->id = id;
		e->len = len;
		memcpy(e->key, key, len);
		mgw_tbucket_init(&e->b, burst, now_ns);
		e->hnext = s->slot[h & (s->nslots - 1)];
		s->slot[h & (s->nslots - 1)] = e;
		s->n++;
	}
	lru_push(s, e);
	ok = mgw_tbucket_take(&e->b, rate, burst, now_ns, wait_s);
	pthread_mutex_unlock(&s->mu);
	return ok;
}

static uint64_t str_mix(uint64_t h, const char *s)
{
	/* a string and its end, so that ("ab", "c") and ("a", "bc") differ */
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * MGW_FNV1A_PRIME;
	return (h ^ (s ? 0xffu : 0xfeu)) * MGW_FNV1A_PRIME;
}

uint64_t mgw_rl_limit_id(const struct mgw_route_conf *rc)
{
	const struct mgw_rate_limit_conf *l = &rc->rate_limit;
	uint64_t h = MGW_FNV1A_BASIS;
	unsigned char b[8];

	h = str_mix(h, rc->match_path);
	h = str_mix(h, rc->match_mcp_method);
	h = str_mix(h, rc->match_mcp_name);
	h = str_mix(h, rc->upstream);
	memcpy(b, &l->rate, 8);
	for (int i = 0; i < 8; i++)
		h = (h ^ b[i]) * MGW_FNV1A_PRIME;
	h = (h ^ l->burst) * MGW_FNV1A_PRIME;
	h = (h ^ (unsigned)l->key) * MGW_FNV1A_PRIME;
	h = (h ^ (unsigned)l->shared) * MGW_FNV1A_PRIME;
	return h;
}

size_t mgw_rl_table_size(struct mgw_rl_table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < NSTRIPES; i++) {
		pthread_mutex_lock(&t->s[i].mu);
		n += t->s[i].n;
		pthread_mutex_unlock(&t->s[i].mu);
	}
	return n;
}

uint64_t mgw_rl_table_evictions(const struct mgw_rl_table *t)
{
	uint64_t n = 0;

	/* read without the locks: a scrape may be one eviction behind */
	for (size_t i = 0; i < NSTRIPES; i++)
		n += __atomic_load_n(&t->s[i].evictions, __ATOMIC_RELAXED);
	return n;
}

void mgw_rl_count_limited(struct mgw_rl_table *t, size_t r,
                          enum mgw_rl_key_conf k)
{
	if (r > MGW_RL_COUNTED_ROUTES)
		r = MGW_RL_COUNTED_ROUTES;
	if ((unsigned)k < MGW_RL_N_KEYS)
		atomic_fetch_add_explicit(&t->limited[r][k], 1,
		                          memory_order_relaxed);
}

void mgw_rl_count_fallback(struct mgw_rl_table *t)
{
	atomic_fetch_add_explicit(&t->fallbacks, 1, memory_order_relaxed);
}

uint64_t mgw_rl_limited(const struct mgw_rl_table *t, size_t r,
                        enum mgw_rl_key_conf k)
{
	if (r > MGW_RL_COUNTED_ROUTES || (unsigned)k >= MGW_RL_N_KEYS)
		return 0;
	return atomic_load_explicit(&t->limited[r][k], memory_order_relaxed);
}

uint64_t mgw_rl_fallbacks(const struct mgw_rl_table *t)
{
	return atomic_load_explicit(&t->fallbacks, memory_order_relaxed);
}
