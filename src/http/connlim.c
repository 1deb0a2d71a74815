/* connlim.c - connections per client address (connlim.h): stripes of
 * chained hash slots, each stripe with its mutex and least-recently-seen
 * list. */
#include "autoconf.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "http/connlim.h"
#include "util/hash.h"
#include "util/tbucket.h"

#define NSTRIPES 16
#define PER_STRIPE (MGW_CONNLIM_MAX_CLIENTS / NSTRIPES)
#define NSLOTS 4096

struct client {
	struct client *hnext, *prev, *next;
	uint64_t hash;
	unsigned char addr[16];
	unsigned char len;
	uint32_t open;
	struct mgw_tbucket b;
};

struct stripe {
	pthread_mutex_t mu;
	struct client *slot[NSLOTS];
	struct client *head, *tail;
	size_t n;
};

struct mgw_http_connlim {
	uint32_t max_concurrent, per_second;
	uint64_t seed;
	struct stripe s[NSTRIPES];
};

struct mgw_http_connlim *mgw_http_connlim_new(uint32_t max_concurrent,
                                              uint32_t per_second,
                                              uint64_t seed)
{
	struct mgw_http_connlim *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->max_concurrent = max_concurrent;
	cl->per_second = per_second;
	cl->seed = seed;
	for (size_t i = 0; i < NSTRIPES; i++)
		pthread_mutex_init(&cl->s[i].mu, NULL);
	return cl;
}

void mgw_http_connlim_free(struct mgw_http_connlim *cl)
{
	if (!cl)
		return;
	for (size_t i = 0; i < NSTRIPES; i++) {
		struct client *c = cl->s[i].head;

		while (c) {
			struct client *n = c->next;

			free(c);
			c = n;
		}
		pthread_mutex_destroy(&cl->s[i].mu);
	}
	free(cl);
}

/* The address bytes of sa into a (4 or 16 of them; an IPv4-mapped IPv6
 * address counts as its IPv4 one); 0 for another family. */
static unsigned char addr_of(const struct sockaddr *sa, unsigned char *a)
{
	if (sa->sa_family == AF_INET) {
		memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 4;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(x)) {
			memcpy(a, x->s6_addr + 12, 4);
			return 4;
		}
		memcpy(a, x->s6_addr, 16);
		return 16;
	}
	return 0;
}

static uint64_t hash_of(uint64_t seed, const unsigned char *a, size_t n)
{
	uint64_t h = MGW_FNV1A_BASIS ^ seed;

	for (size_t i = 0; i < n; i++)
		h = (h ^ a[i]) * MGW_FNV1A_PRIME;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

static void unlink_lru(struct stripe *s, struct client *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		s->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->tail = c->prev;
	c->prev = c->next = NULL;
}

static void push_lru(struct stripe *s, struct client *c)
{
	c->next = s->head;
	if (s->head)
		s->head->prev = c;
	s->head = c;
	if (!s->tail)
		s->tail = c;
}

static void drop(struct stripe *s, struct client *c)
{
	struct client **pp = &s->slot[c->hash % NSLOTS];

	unlink_lru(s, c);
	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == c) {
			*pp = c->hnext;
			break;
		}
	s->n--;
	free(c);
}

static struct client *find(struct stripe *s, uint64_t h,
                           const unsigned char *a, unsigned char n)
{
	for (struct client *c = s->slot[h % NSLOTS]; c; c = c->hnext)
		if (c->hash == h && c->len == n && memcmp(c->addr, a, n) == 0)
			return c;
	return NULL;
}

enum mgw_connlim_verdict mgw_http_connlim_enter(struct mgw_http_connlim *cl,
                                                const struct sockaddr *sa,
                                                uint64_t now_ns,
                                                struct mgw_connlim_ticket *tk)
{
	unsigned char a[16];
	unsigned char n = addr_of(sa, a);
	enum mgw_connlim_verdict v = MGW_CONNLIM_OK;
	struct stripe *s;
	struct client *c;
	uint64_t h;

	tk->len = 0;
	if (!n)
		return MGW_CONNLIM_OK;
	h = hash_of(cl->seed, a, n);
	s = &cl->s[(h >> 59) % NSTRIPES];
	pthread_mutex_lock(&s->mu);
	c = find(s, h, a, n);
	if (c) {
		unlink_lru(s, c);
	} else {
		if (s->n >= PER_STRIPE) {
			if (!s->tail || s->tail->open) {
				/* every address known here has connections open:
				 * this one goes untracked */
				pthread_mutex_unlock(&s->mu);
				return MGW_CONNLIM_OK;
			}
			drop(s, s->tail);
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&s->mu);
			return MGW_CONNLIM_OK;
		}
		c->hash = h;
		c->len = n;
		memcpy(c->addr, a, n);
		mgw_tbucket_init(&c->b, cl->per_second, now_ns);
		c->hnext = s->slot[h % NSLOTS];
		s->slot[h % NSLOTS] = c;
		s->n++;
	}
	push_lru(s, c);
	if (cl->max_concurrent && c->open >= cl->max_concurrent)
		v = MGW_CONNLIM_CONCURRENT;
	else if (cl->per_second &&
	         !mgw_tbucket_take(&c->b, cl->per_second, cl->per_second, now_ns,
	                           NULL))
		v = MGW_CONNLIM_RATE;
	if (v == MGW_CONNLIM_OK) {
		c->open++;
		memcpy(tk->addr, a, n);
		tk->len = n;
	} else if (!c->open && !cl->per_second) {
		drop(s, c);
	}
	pthread_mutex_unlock(&s->mu);
	return v;
}

void mgw_http_connlim_leave(struct mgw_http_connlim *cl,
                            struct mgw_connlim_ticket *tk)
{
	uint64_t h;
	struct stripe *s;
	struct client *c;

	if (!cl || !tk->len)
		return;
	h = hash_of(cl->seed, tk->addr, tk->len);
	s = &cl->s[(h >> 59) % NSTRIPES];
	pthread_mutex_lock(&s->mu);
	c = find(s, h, tk->addr, tk->len);
	if (c && c->open) {
		c->open--;
		/* without a rate to remember, an idle address is forgotten */
		if (!c->open && !cl->per_second)
			drop(s, c);
	}
	pthread_mutex_unlock(&s->mu);
	tk->len = 0;
}

uint32_t mgw_http_connlim_open(struct mgw_http_connlim *cl,
                               const struct sockaddr *sa)
{
	unsigned char a[16];
	unsigned char n = addr_of(sa, a);
	struct stripe *s;
	struct client *c;
	uint32_t open = 0;
	uint64_t h;

	if (!n)
		return 0;
	h = hash_of(cl->seed, a, n);
	s = &cl->s[(h >> 59) % NSTRIPES];
	pthread_mutex_lock(&s->mu);
	c = find(s, h, a, n);
	if (c)
		open = c->open;
	pthread_mutex_unlock(&s->mu);
	return open;
}
