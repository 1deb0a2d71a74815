/* balancer.c - choosing a server of a group for one attempt.
 *
 * round_robin    nginx's smooth weighted round robin: every pick adds each
 *                candidate's weight to its running score, takes the
 *                highest and subtracts the candidates' total from it.
 *                Weights 5,1,1 give a a b a c a a: proportional and
 *                interleaved, never five a in a row.
 * least_request  power of two choices: two distinct candidates drawn
 *                uniformly, the one with fewer in-flight requests per
 *                unit of weight wins ((in_flight + 1) / weight).  Cheap,
 *                and it avoids the herd that "least of all" causes when
 *                many workers see the same counts.
 * random         one candidate drawn with probability weight / total.
 * hash           consistent hashing on a ring of points (see
 *                mgw_hash_ring_build): the key's hash selects the first
 *                point at or after it; unavailable or excluded servers are
 *                passed over by walking on, so their keys spread over the
 *                others while everybody else's keys stay put.
 * Candidates are the servers that are available and not excluded.  The
 * per-worker state (scores, random generator) lives in the picker. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "proxy/balancer.h"
#include "proxy/upstream.h"
#include "util/rand.h"

/* ---- stable hash ---- */

uint64_t mgw_hash64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis */

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;       /* FNV-1a 64 prime */
	}
	/* MurmurHash3 fmix64 */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* ---- hash ring ---- */

static int cmp_point(const void *a, const void *b)
{
	const struct mgw_hash_point *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	/* equal hashes (astronomically rare): keep the order deterministic */
	return x->server < y->server ? -1 : x->server > y->server;
}

/* Points of server i: proportional to its weight, scaled down for huge
 * weight sums, never zero. */
static uint64_t ring_points(const struct mgw_upstream_group *g, size_t i,
                            uint64_t total)
{
	uint64_t w = g->servers[i].weight, pts;

	if (total * MGW_HASH_POINTS_PER_WEIGHT > MGW_HASH_RING_MAX)
		pts = w * MGW_HASH_RING_MAX / total;
	else
		pts = w * MGW_HASH_POINTS_PER_WEIGHT;
	return pts ? pts : 1;
}

/* Writes "URL#j" into buf (which holds the URL in its first ulen bytes)
 * and returns its length: a point's place depends on the URL only. */
static size_t point_name(char *buf, size_t ulen, uint64_t j)
{
	char digits[24];
	size_t m = ulen;
	int nd = 0;

	buf[m++] = '#';
	do {
		digits[nd++] = (char)('0' + j % 10);
		j /= 10;
	} while (j);
	while (nd)
		buf[m++] = digits[--nd];
	return m;
}

int mgw_hash_ring_build(struct mgw_upstream_group *g)
{
	struct mgw_hash_point *ring = NULL;
	uint64_t total = 0, n = 0;
	char *buf = NULL;
	size_t k = 0;

	for (size_t i = 0; i < g->n_servers; i++)
		total += g->servers[i].weight;
	for (size_t i = 0; i < g->n_servers; i++)
		n += ring_points(g, i, total);
	ring = calloc(n ? n : 1, sizeof(*ring));
	if (!ring)
		goto fail;
	for (size_t i = 0; i < g->n_servers; i++) {
		const char *url = g->servers[i].conf->url;
		uint64_t pts = ring_points(g, i, total);
		size_t ulen = strlen(url);

		free(buf);
		buf = malloc(ulen + 24);
		if (!buf)
			goto fail;
		memcpy(buf, url, ulen);
		for (uint64_t j = 0; j < pts; j++) {
			ring[k].hash = mgw_hash64(buf, point_name(buf, ulen, j));
			ring[k].server = (uint32_t)i;
			k++;
		}
	}
	free(buf);
	qsort(ring, k, sizeof(*ring), cmp_point);
	free(g->ring);
	g->ring = ring;
	g->n_ring = k;
	return 0;
fail:
	free(buf);
	free(ring);
	return MGW_ENOMEM;
}

size_t mgw_hash_ring_find(const struct mgw_upstream_group *g, uint64_t hash)
{
	size_t lo = 0, hi = g->n_ring;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->ring[mid].hash < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == g->n_ring ? 0 : lo;
}

/* ---- picker ---- */

static uint64_t rng_next(struct mgw_upstream_picker *pk)
{
	/* xorshift64* */
	uint64_t x = pk->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	pk->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n), n > 0; the modulo bias is below 2^-40 for any
 * group size this code sees. */
static uint64_t rng_below(struct mgw_upstream_picker *pk, uint64_t n)
{
	return (rng_next(pk) >> 11) % n;
}

/* Every worker has its own smooth round-robin state; starting them all at
 * the top of the cycle sends the first request of each worker to the same
 * server, so light traffic (and the first legacy sessions) piled onto it.
 * A production picker (random seed) therefore starts each group at a
 * random point of its cycle; seeded pickers (tests) keep the exact order. */
static void stagger(struct mgw_upstream_picker *pk)
{
	for (size_t gi = 0; gi < pk->ups->n_groups; gi++) {
		const struct mgw_upstream_group *g = &pk->ups->groups[gi];
		int64_t *cur = pk->current[gi], total = 0;
		uint64_t steps;

		for (size_t i = 0; i < g->n_servers; i++)
			total += g->servers[i].weight;
		if (total <= 0)
			continue;
		steps = rng_below(pk, (uint64_t)total);
		while (steps--) {
			size_t best = 0;
			for (size_t i = 0; i < g->n_servers; i++) {
				cur[i] += g->servers[i].weight;
				if (cur[i] > cur[best])
					best = i;
			}
			cur[best] -= total;
		}
	}
}

struct mgw_upstream_picker *mgw_upstream_picker_new(
	const struct mgw_upstreams *ups, uint64_t seed)
{
	struct mgw_upstream_picker *pk = calloc(1, sizeof(*pk));

	if (!pk)
		return NULL;
	pk->ups = ups;
	if (ups->n_groups) {
		pk->current = calloc(ups->n_groups, sizeof(*pk->current));
		if (!pk->current)
			goto fail;
	}
	for (size_t i = 0; i < ups->n_groups; i++) {
		size_t n = ups->groups[i].n_servers;
		pk->current[i] = calloc(n ? n : 1, sizeof(**pk->current));
		if (!pk->current[i])
			goto fail;
	}
	if (seed == 0) {
		while (seed == 0)
			seed = mgw_random_below(UINT64_MAX);
		pk->rng = seed;
		stagger(pk);
	}
	pk->rng = seed;
	return pk;
fail:
	mgw_upstream_picker_free(pk);
	return NULL;
}

void mgw_upstream_picker_free(struct mgw_upstream_picker *pk)
{
	if (!pk)
		return;
	for (size_t i = 0; pk->current && i < pk->ups->n_groups; i++)
		free(pk->current[i]);
	free(pk->current);
	free(pk);
}

/* ---- candidates ---- */

static int excluded(const struct mgw_upstream_server *s,
                    const struct mgw_upstream_server *const *ex, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ex[i] == s)
			return 1;
	return 0;
}

struct pick_ctx {
	struct mgw_upstream_picker *pk;
	const struct mgw_upstream_group *g;
	const struct mgw_upstream_server *const *ex;
	size_t n_ex;
	uint64_t now;
};

static int candidate(const struct pick_ctx *c, size_t i)
{
	struct mgw_upstream_server *s = &c->g->servers[i];

	return !excluded(s, c->ex, c->n_ex) && mgw_upstream_available(s, c->now);
}

/* ---- the balancers ---- */

static struct mgw_upstream_server *pick_round_robin(const struct pick_ctx *c)
{
	int64_t *cur = c->pk->current[c->g->index];
	int64_t total = 0;
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < c->g->n_servers; i++) {
		if (!candidate(c, i))
			continue;
		cur[i] += c->g->servers[i].weight;
		total += c->g->servers[i].weight;
		if (best == SIZE_MAX || cur[i] > cur[best])
			best = i;
	}
	if (best == SIZE_MAX)
		return NULL;
	cur[best] -= total;
	return &c->g->servers[best];
}

static struct mgw_upstream_server *pick_random(const struct pick_ctx *c)
{
	uint64_t total = 0;
	size_t chosen = SIZE_MAX;

	/* One pass, weighted reservoir: the i-th candidate replaces the
	 * choice with probability w_i / (sum of weights so far), which
	 * leaves each with probability w / total in the end. */
	for (size_t i = 0; i < c->g->n_servers; i++) {
		uint32_t w;

		if (!candidate(c, i))
			continue;
		w = c->g->servers[i].weight;
		total += w;
		if (rng_below(c->pk, total) < w)
			chosen = i;
	}
	return chosen == SIZE_MAX ? NULL : &c->g->servers[chosen];
}

static struct mgw_upstream_server *pick_least_request(const struct pick_ctx *c)
{
	struct mgw_upstream_server *a = NULL, *b = NULL, *s;
	uint64_t k = 0;
	int64_t la, lb;

	/* Reservoir of two: a uniform pair of distinct candidates. */
	for (size_t i = 0; i < c->g->n_servers; i++) {
		if (!candidate(c, i))
			continue;
		s = &c->g->servers[i];
		k++;
		if (k == 1) {
			a = s;
		} else if (k == 2) {
			b = s;
		} else {
			uint64_t r = rng_below(c->pk, k);
			if (r == 0)
				a = s;
			else if (r == 1)
				b = s;
		}
	}
	if (!b)
		return a;
	la = atomic_load_explicit(&a->in_flight, memory_order_relaxed);
	lb = atomic_load_explicit(&b->in_flight, memory_order_relaxed);
	if (la < 0)
		la = 0;
	if (lb < 0)
		lb = 0;
	/* (la+1)/wa versus (lb+1)/wb without division */
	if ((la + 1) * (int64_t)b->weight < (lb + 1) * (int64_t)a->weight)
		return a;
	if ((la + 1) * (int64_t)b->weight > (lb + 1) * (int64_t)a->weight)
		return b;
	return rng_below(c->pk, 2) ? b : a;
}

static struct mgw_upstream_server *pick_hash(const struct pick_ctx *c,
                                             const char *key, size_t keylen)
{
	const struct mgw_upstream_group *g = c->g;
	/* Verdicts of the first 64 servers, so a long walk over the points
	 * of dead servers does not re-read their atomics each time. */
	uint64_t known = 0, good = 0;
	size_t at, n_good = 0;

	if (!key || g->n_ring == 0)
		return pick_round_robin(c);
	for (size_t i = 0; i < g->n_servers; i++) {
		if (!candidate(c, i))
			continue;
		n_good++;
		if (i < 64)
			good |= 1ULL << i;
	}
	if (n_good == 0)
		return NULL;
	known = g->n_servers >= 64 ? ~0ULL : (1ULL << g->n_servers) - 1;
	at = mgw_hash_ring_find(g, mgw_hash64(key, keylen));
	for (size_t step = 0; step < g->n_ring; step++) {
		uint32_t si = g->ring[(at + step) % g->n_ring].server;
		int ok = si < 64 && (known >> si & 1) ? (int)(good >> si & 1)
		                                      : candidate(c, si);
		if (ok)
			return &g->servers[si];
	}
	return NULL; /* every candidate vanished during the walk */
}

struct mgw_upstream_server *mgw_upstream_group_pick(
	struct mgw_upstream_picker *pk, const struct mgw_upstream_group *g,
	const char *key, size_t keylen,
	const struct mgw_upstream_server *const *exclude, size_t n_exclude,
	uint64_t now)
{
	struct pick_ctx c = {.pk = pk, .g = g, .ex = exclude, .n_ex = n_exclude,
	                     .now = now};
	struct mgw_upstream_server *s = NULL;

	switch (g->balancer) {
	case MGW_BAL_ROUND_ROBIN: s = pick_round_robin(&c); break;
	case MGW_BAL_LEAST_REQUEST: s = pick_least_request(&c); break;
	case MGW_BAL_RANDOM: s = pick_random(&c); break;
	case MGW_BAL_HASH: s = pick_hash(&c, key, keylen); break;
	}
	if (s)
		atomic_fetch_add_explicit(&s->n_picked, 1, memory_order_relaxed);
	return s;
}
