/* table.c - the locked, SipHash-keyed, LRU-ordered hash table of session
 * records shared by the stores (see table.h).
 *
 * Chained buckets (a power of two, doubled when entries outnumber them)
 * and one intrusive doubly linked list of all entries, least recently used
 * first.  One mutex guards everything: operations are a hash, a short
 * chain walk and a few pointer moves, far below what a request costs
 * elsewhere, so striping would buy little. */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "core/errors.h"
#include "session/session.h"
#include "session/table.h"
#include "util/hash.h"
#include "util/rand.h"

#define MIN_BUCKETS 64
#define MAX_BUCKETS ((size_t)1 << 27)

struct entry {
	struct entry *chain;            /* next in the bucket */
	struct entry *prev, *next;      /* use order: prev is older */
	uint64_t hash;
	uint64_t last_used;             /* ms */
	struct mgw_session *rec;        /* NULL: tombstone */
	size_t size;                    /* accounted bytes */
	size_t keylen;
	unsigned char key[];
};

struct mgw_session_table {
	pthread_mutex_t lock;
	EVP_MAC_CTX *mac;               /* SipHash-2-4 with the table's key */
	struct entry **buckets;
	size_t nbuckets;
	size_t count, bytes;
	struct entry *oldest, *newest;
	struct mgw_session_table_limits lim;
	uint64_t expired, evicted;
};

size_t mgw_session_table_entry_size(size_t keylen,
                                    const struct mgw_session *rec)
{
	return sizeof(struct entry) + keylen + (rec ? rec->mem_size : 0);
}

struct mgw_session_table *mgw_session_table_new(
	const struct mgw_session_table_limits *lim, char *err, size_t errlen)
{
	struct mgw_session_table *t = calloc(1, sizeof(*t));
	unsigned char key[16];
	size_t outlen = 8;
	OSSL_PARAM params[2];
	EVP_MAC *alg = NULL;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (pthread_mutex_init(&t->lock, NULL) != 0) {
		snprintf(err, errlen, "cannot make a mutex");
		free(t);
		return NULL;
	}
	t->lim = *lim;
	if (t->lim.max_count < 1)
		t->lim.max_count = 1;
	if (t->lim.idle_ms < 1)
		t->lim.idle_ms = 1;
	t->nbuckets = MIN_BUCKETS;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	t->bytes = t->nbuckets * sizeof(*t->buckets);
	/* A random key per table: ids cannot be chosen to share a bucket. */
	if (mgw_random_bytes(key, sizeof(key)) != 0) {
		snprintf(err, errlen, "no random bytes for the table key");
		goto fail;
	}
	params[0] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &outlen);
	params[1] = OSSL_PARAM_construct_end();
	alg = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	t->mac = alg ? EVP_MAC_CTX_new(alg) : NULL;
	EVP_MAC_free(alg);
	if (!t->mac || !EVP_MAC_init(t->mac, key, sizeof(key), params)) {
		snprintf(err, errlen, "SipHash is not available from OpenSSL");
		goto fail;
	}
	OPENSSL_cleanse(key, sizeof(key));
	return t;
fail:
	OPENSSL_cleanse(key, sizeof(key));
	EVP_MAC_CTX_free(t->mac);
	free(t->buckets);
	pthread_mutex_destroy(&t->lock);
	free(t);
	return NULL;
}

/* Under the lock.  EVP_MAC_init without a key restarts with the key
 * already set, so one context serves every call. */
static uint64_t hash_key(struct mgw_session_table *t, const void *key,
                         size_t keylen)
{
	unsigned char out[8];
	size_t n = 0;
	uint64_t h = 0;

	if (EVP_MAC_init(t->mac, NULL, 0, NULL) &&
	    EVP_MAC_update(t->mac, key, keylen) &&
	    EVP_MAC_final(t->mac, out, &n, sizeof(out)) && n == sizeof(out)) {
		for (size_t i = 0; i < 8; i++)
			h = h << 8 | out[i];
		return h;
	}
	/* Not reachable with a working OpenSSL; an unkeyed FNV-1a keeps the
	 * table correct (only slower under attack). */
	return mgw_fnv1a(key, keylen);
}

static void lru_unlink(struct mgw_session_table *t, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		t->oldest = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		t->newest = e->prev;
	e->prev = e->next = NULL;
}

static void lru_append(struct mgw_session_table *t, struct entry *e)
{
	e->prev = t->newest;
	e->next = NULL;
	if (t->newest)
		t->newest->next = e;
	else
		t->oldest = e;
	t->newest = e;
}

static void touch(struct mgw_session_table *t, struct entry *e, uint64_t now)
{
	/* Threads read the clock at slightly different moments: never move
	 * an entry's last use backwards. */
	if (now > e->last_used)
		e->last_used = now;
	lru_unlink(t, e);
	lru_append(t, e);
}

static int idle_expired(const struct mgw_session_table *t,
                        const struct entry *e, uint64_t now)
{
	return now > e->last_used && now - e->last_used >= t->lim.idle_ms;
}

static struct entry *find(struct mgw_session_table *t, uint64_t h,
                          const void *key, size_t keylen)
{
	struct entry *e = t->buckets[h & (t->nbuckets - 1)];

	for (; e; e = e->chain)
		if (e->hash == h && e->keylen == keylen &&
		    memcmp(e->key, key, keylen) == 0)
			return e;
	return NULL;
}

/* Unlinks e from everything, drops its record and frees it. */
static void drop(struct mgw_session_table *t, struct entry *e)
{
	struct entry **pp = &t->buckets[e->hash & (t->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	lru_unlink(t, e);
	t->count--;
	t->bytes -= e->size;
	mgw_session_unref(e->rec);
	free(e);
}

/* find, except that an entry idle at now is dropped (and counted) and
 * reported absent. */
static struct entry *find_live(struct mgw_session_table *t, uint64_t h,
                               const void *key, size_t keylen, uint64_t now)
{
	struct entry *e = find(t, h, key, keylen);

	if (e && idle_expired(t, e, now)) {
		drop(t, e);
		t->expired++;
		e = NULL;
	}
	return e;
}

/* Doubles the bucket array when entries outnumber buckets.  A failed
 * allocation only leaves chains longer. */
static void maybe_grow(struct mgw_session_table *t)
{
	size_t n = t->nbuckets * 2;
	struct entry **nb;

	if (t->count <= t->nbuckets || n > MAX_BUCKETS)
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct entry *e = t->buckets[i], *next;

		for (; e; e = next) {
			next = e->chain;
			e->chain = nb[e->hash & (n - 1)];
			nb[e->hash & (n - 1)] = e;
		}
	}
	free(t->buckets);
	t->bytes += (n - t->nbuckets) * sizeof(*nb);
	t->buckets = nb;
	t->nbuckets = n;
}

static size_t sweep_locked(struct mgw_session_table *t, uint64_t now,
                           size_t max)
{
	size_t n = 0;

	while (n < max && t->oldest && idle_expired(t, t->oldest, now)) {
		drop(t, t->oldest);
		t->expired++;
		n++;
	}
	return n;
}

/* How many expired entries one operation may drop while making room: the
 * periodic sweep does the bulk, this only keeps a full table honest. */
#define ROOM_SWEEP 256

/* Makes room for one more entry of need bytes (more_count 1) or for
 * need extra bytes in place (more_count 0), never dropping keep.  Returns
 * 0 or MGW_ELIMIT. */
static int make_room(struct mgw_session_table *t, size_t more_count,
                     size_t need, uint64_t now, const struct entry *keep)
{
	sweep_locked(t, now, ROOM_SWEEP);
	while (t->count + more_count > t->lim.max_count ||
	       t->bytes + need > t->lim.max_bytes) {
		struct entry *victim = t->oldest;

		/* t->bytes counts the bucket array too, so the loop can run
		 * with no entry left: victim NULL, not keep's successor. */
		if (victim && victim == keep)
			victim = victim->next;
		if (!t->lim.evict || !victim)
			return MGW_ELIMIT;
		drop(t, victim);
		t->evicted++;
	}
	return 0;
}

static int add_locked(struct mgw_session_table *t, uint64_t h, const void *key,
                      size_t keylen, struct mgw_session *rec, uint64_t now)
{
	size_t size = mgw_session_table_entry_size(keylen, rec);
	struct entry *e;
	int rc;

	/* t->bytes includes the bucket array: an entry that cannot fit
	 * next to it is refused before anything is evicted for it */
	if (size > t->lim.max_bytes ||
	    t->nbuckets * sizeof(*t->buckets) > t->lim.max_bytes - size)
		return MGW_ELIMIT;
	rc = make_room(t, 1, size, now, NULL);
	if (rc != 0)
		return rc;
	e = malloc(sizeof(*e) + keylen);
	if (!e)
		return MGW_ENOMEM;
	e->hash = h;
	e->last_used = now;
	e->rec = rec;
	e->size = size;
	e->keylen = keylen;
	memcpy(e->key, key, keylen);
	e->chain = t->buckets[h & (t->nbuckets - 1)];
	t->buckets[h & (t->nbuckets - 1)] = e;
	lru_append(t, e);
	t->count++;
	t->bytes += size;
	maybe_grow(t);
	return 0;
}

void mgw_session_table_free(struct mgw_session_table *t)
{
	if (!t)
		return;
	while (t->oldest)
		drop(t, t->oldest);
	free(t->buckets);
	EVP_MAC_CTX_free(t->mac);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

int mgw_session_table_get(struct mgw_session_table *t, const void *key,
                          size_t keylen, uint64_t now,
                          struct mgw_session **out)
{
	struct entry *e;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&t->lock);
	e = find(t, hash_key(t, key, keylen), key, keylen);
	if (!e) {
		rc = MGW_ENOTFOUND;
	} else if (idle_expired(t, e, now)) {
		drop(t, e);
		t->expired++;
		rc = MGW_ENOTFOUND;
	} else {
		touch(t, e, now);
		if (e->rec) {
			*out = mgw_session_ref(e->rec);
			rc = 0;
		} else {
			rc = MGW_ECLOSED;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int mgw_session_table_insert(struct mgw_session_table *t, const void *key,
                             size_t keylen, struct mgw_session *rec,
                             uint64_t now)
{
	uint64_t h;
	struct entry *e;
	int rc;

	pthread_mutex_lock(&t->lock);
	h = hash_key(t, key, keylen);
	e = find_live(t, h, key, keylen, now);
	rc = e ? MGW_ECONFLICT : add_locked(t, h, key, keylen, rec, now);
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int mgw_session_table_put(struct mgw_session_table *t, const void *key,
                          size_t keylen, struct mgw_session *rec,
                          uint64_t now)
{
	uint64_t h;
	struct entry *e;
	int rc;

	pthread_mutex_lock(&t->lock);
	h = hash_key(t, key, keylen);
	e = find(t, h, key, keylen);
	if (e)
		drop(t, e);
	rc = add_locked(t, h, key, keylen, rec, now);
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int mgw_session_table_put_unless(struct mgw_session_table *t, const void *key,
                                 size_t keylen, struct mgw_session *rec,
                                 uint64_t now,
                                 int (*keep)(const struct mgw_session *current,
                                             void *arg),
                                 void *arg)
{
	uint64_t h;
	struct entry *e;
	int rc;

	pthread_mutex_lock(&t->lock);
	h = hash_key(t, key, keylen);
	e = find_live(t, h, key, keylen, now);
	if (e && (!e->rec || (keep && keep(e->rec, arg)))) {
		rc = MGW_ECONFLICT;
	} else {
		if (e)
			drop(t, e);
		rc = add_locked(t, h, key, keylen, rec, now);
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int mgw_session_table_replace(struct mgw_session_table *t, const void *key,
                              size_t keylen, struct mgw_session *rec,
                              uint64_t expect_version, uint64_t now,
                              struct mgw_session **current)
{
	struct entry *e;
	size_t size;
	int rc = 0;

	*current = NULL;
	pthread_mutex_lock(&t->lock);
	e = find_live(t, hash_key(t, key, keylen), key, keylen, now);
	if (!e || !e->rec) {
		rc = MGW_ENOTFOUND;
		goto out;
	}
	if (e->rec->version != expect_version) {
		*current = mgw_session_ref(e->rec);
		rc = MGW_ECONFLICT;
		goto out;
	}
	size = mgw_session_table_entry_size(keylen, rec);
	if (size > t->lim.max_bytes) {
		rc = MGW_ELIMIT;
		goto out;
	}
	if (size > e->size) {
		rc = make_room(t, 0, size - e->size, now, e);
		if (rc != 0)
			goto out;
	}
	rec->version = expect_version + 1;
	mgw_session_unref(e->rec);
	e->rec = rec;
	t->bytes = t->bytes - e->size + size;
	e->size = size;
	touch(t, e, now);
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int mgw_session_table_remove(struct mgw_session_table *t, const void *key,
                             size_t keylen)
{
	struct entry *e;
	int rc;

	pthread_mutex_lock(&t->lock);
	e = find(t, hash_key(t, key, keylen), key, keylen);
	if (!e) {
		rc = MGW_ENOTFOUND;
	} else {
		rc = e->rec ? 0 : MGW_ECLOSED;
		drop(t, e);
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

size_t mgw_session_table_sweep(struct mgw_session_table *t, uint64_t now,
                               size_t max)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = sweep_locked(t, now, max);
	pthread_mutex_unlock(&t->lock);
	return n;
}

size_t mgw_session_table_each(struct mgw_session_table *t, uint64_t now,
                              int (*fn)(const void *key, size_t keylen,
                                        struct mgw_session *rec, void *arg),
                              void *arg)
{
	size_t n = 0;

	pthread_mutex_lock(&t->lock);
	for (struct entry *e = t->oldest; e; e = e->next) {
		if (idle_expired(t, e, now))
			continue;
		n++;
		if (fn(e->key, e->keylen, e->rec, arg))
			break;
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

void mgw_session_table_stats(struct mgw_session_table *t,
                             struct mgw_session_table_stats *out)
{
	pthread_mutex_lock(&t->lock);
	out->count = t->count;
	out->bytes = t->bytes;
	out->expired = t->expired;
	out->evicted = t->evicted;
	pthread_mutex_unlock(&t->lock);
}
