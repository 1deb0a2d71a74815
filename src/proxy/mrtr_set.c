/* mrtr_set.c - the requestState digests let through (mrtr_set.h). */
#include "autoconf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/mrtr_set.h"

/* Buckets looked at for expired entries on every claim, besides the
 * claim's own: enough to keep a set under steady load swept. */
#define SWEEP_STEP 2

struct entry {
	struct entry *next;
	uint64_t expires_ms;
	uint8_t d[MGW_MRTR_DIGEST_LEN];
};

struct mgw_mrtr_set {
	pthread_mutex_t mu;
	struct entry **b;       /* nb chains */
	size_t nb;              /* a power of two */
	size_t n, max;
	size_t cursor;          /* the next bucket the step sweeps */
	atomic_uint_fast64_t c[MGW_MRTR_C_N];
};

struct mgw_mrtr_set *mgw_mrtr_set_new(size_t max)
{
	struct mgw_mrtr_set *s = calloc(1, sizeof(*s));
	size_t nb = 16;

	if (!s || max == 0)
		goto fail;
	while (nb < max / 2 && nb < ((size_t)1 << 24))
		nb <<= 1;
	s->b = calloc(nb, sizeof(*s->b));
	if (!s->b || pthread_mutex_init(&s->mu, NULL) != 0)
		goto fail;
	s->nb = nb;
	s->max = max;
	for (int i = 0; i < MGW_MRTR_C_N; i++)
		atomic_init(&s->c[i], 0);
	return s;
fail:
	if (s)
		free(s->b);
	free(s);
	return NULL;
}

void mgw_mrtr_set_free(struct mgw_mrtr_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nb; i++) {
		struct entry *e = s->b[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(s->b);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* The bucket of d: its first bytes (a SHA-256 digest is uniform, and
 * whoever chose the state cannot aim it at one bucket). */
static size_t bucket(const struct mgw_mrtr_set *s,
                     const uint8_t d[MGW_MRTR_DIGEST_LEN])
{
	uint64_t h;

	memcpy(&h, d, sizeof(h));
	return (size_t)(h & (s->nb - 1));
}

/* Drops the expired entries of bucket i.  Lock held. */
static void sweep_bucket(struct mgw_mrtr_set *s, size_t i, uint64_t now_ms)
{
	struct entry **pp = &s->b[i], *e;

	while ((e = *pp)) {
		if (e->expires_ms <= now_ms) {
			*pp = e->next;
			free(e);
			s->n--;
			continue;
		}
		pp = &e->next;
	}
}

enum mgw_mrtr_claim mgw_mrtr_set_claim(struct mgw_mrtr_set *s,
                                       const uint8_t d[MGW_MRTR_DIGEST_LEN],
                                       uint64_t now_ms, uint64_t ttl_ms)
{
	size_t i = bucket(s, d);
	enum mgw_mrtr_claim v = MGW_MRTR_FIRST;
	struct entry *e;

	pthread_mutex_lock(&s->mu);
	sweep_bucket(s, i, now_ms);
	for (e = s->b[i]; e; e = e->next)
		if (memcmp(e->d, d, MGW_MRTR_DIGEST_LEN) == 0) {
			v = MGW_MRTR_SEEN;
			goto out;
		}
	for (int k = 0; k < SWEEP_STEP; k++) {
		sweep_bucket(s, s->cursor, now_ms);
		s->cursor = (s->cursor + 1) & (s->nb - 1);
	}
	if (s->n >= s->max)
		for (size_t k = 0; k < s->nb; k++)
			sweep_bucket(s, k, now_ms);
	if (s->n >= s->max || !(e = malloc(sizeof(*e)))) {
		v = MGW_MRTR_FULL;
		goto out;
	}
	memcpy(e->d, d, MGW_MRTR_DIGEST_LEN);
	e->expires_ms = now_ms + (ttl_ms ? ttl_ms : 1);
	e->next = s->b[i];
	s->b[i] = e;
	s->n++;
out:
	pthread_mutex_unlock(&s->mu);
	return v;
}

void mgw_mrtr_set_release(struct mgw_mrtr_set *s,
                          const uint8_t d[MGW_MRTR_DIGEST_LEN])
{
	struct entry **pp, *e;

	pthread_mutex_lock(&s->mu);
	for (pp = &s->b[bucket(s, d)]; (e = *pp); pp = &e->next) {
		if (memcmp(e->d, d, MGW_MRTR_DIGEST_LEN) == 0) {
			*pp = e->next;
			free(e);
			s->n--;
			break;
		}
	}
	pthread_mutex_unlock(&s->mu);
}

void mgw_mrtr_set_count(struct mgw_mrtr_set *s, enum mgw_mrtr_count c)
{
	if ((unsigned)c < MGW_MRTR_C_N)
		atomic_fetch_add_explicit(&s->c[c], 1, memory_order_relaxed);
}

void mgw_mrtr_set_counts(struct mgw_mrtr_set *s, struct mgw_mrtr_counts *out)
{
	out->checked = atomic_load(&s->c[MGW_MRTR_C_CHECKED]);
	out->refused = atomic_load(&s->c[MGW_MRTR_C_REFUSED]);
	out->full = atomic_load(&s->c[MGW_MRTR_C_FULL]);
	out->store_errors = atomic_load(&s->c[MGW_MRTR_C_STORE]);
	pthread_mutex_lock(&s->mu);
	out->held = s->n;
	pthread_mutex_unlock(&s->mu);
}
