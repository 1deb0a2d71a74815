/* store_sealed.c - the sealed session store: the client-facing session id
 * IS the session, sealed with AES-256-GCM, so that any gateway holding the
 * key can serve or re-pin it with no shared store.
 *
 * Token (then base64url without padding, so the id is visible ASCII):
 *   0x01 | KIDLEN (1..16) | KID | NONCE (12, random per seal) |
 *   CIPHERTEXT | TAG (16)
 * Associated data (authenticated, never sent):
 *   "mcpgw-session" | 0x01 | KIDLEN | KID | BIND (0 or 1) |
 *   [SHA-256 of the Authorization value, when BIND]
 * so the version, the key id and the principal are all bound to the
 * ciphertext: a token presented under another principal, or to a gateway
 * configured with the other bind_principal setting, does not open.
 * Plaintext: the session record in the core layout of
 * session/record_codec.h (times, pin, protocol version, replay headers,
 * initialize body).  Nothing is parsed before the tag verified, and the
 * decoder still refuses anything that is not exactly one well-formed
 * record.
 *
 * The design tension: a token is immutable, but a re-pin changes the
 * upstream session and the pinned server, and the client must keep its
 * id.  Resolution: the token carries what never changes (the client's
 * `initialize`, the principal, the lifetime) and the pin the session had
 * when it was created; the current pin lives in a local cache keyed by the
 * token (SHA-256 of it, so a cache hit is as good as opening it).  A
 * gateway that lacks the cache entry (another replica, or this one after
 * eviction or a restart) opens the token and starts from the original pin:
 * if that replica still knows the session it just works, otherwise the
 * usual re-pin replays `initialize` on a healthy replica.  Correct either
 * way, at the cost of at most one extra replay per gateway.  See
 * doc/sessions.md.
 *
 * DELETE leaves a tombstone in the local cache, so the token is not simply
 * opened again here.  Alone, other gateways cannot know (a sealed session
 * is then only revocable by its lifetime or by retiring the key); with
 * sessions.sealed.tombstones: redis the DELETE also writes a tombstone to
 * the shared Redis, key <key_prefix>"tomb:"<hex SHA-256 of the token>,
 * value "1", expiring with the token (so Redis never holds more than the
 * live sessions' worth), and a lookup asks Redis (one EXISTS) before it
 * serves a token it has not checked within sessions.redis.cache_ttl: a
 * token opened here for the first time, or a cached one whose last check
 * is older.  A check seen deleted leaves a local tombstone.  Fresh cache
 * hits never touch Redis.  Redis unreachable: on_redis_error says serve
 * (the token still authenticates the session; counted as an error) or
 * refuse (MGW_EIO: 503).  Each view has its own connection. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"
#include "session/record_codec.h"
#include "session/session.h"
#include "session/store.h"
#include "session/table.h"
#include "util/base64.h"
#include "util/rand.h"

/* The token carries the initialize body in a request header on every
 * request: whatever the configuration says, never more than this (and 8
 * KiB when the sealed store is not the configured default, whose
 * max_initialize_bytes was then sized for the memory store). */
#define INIT_CAP (16 * 1024)
#define INIT_CAP_NOT_DEFAULT (8 * 1024)
#define TOKEN_VERSION 1
#define NONCE_LEN 12
#define TAG_LEN 16
#define AD_LABEL "mcpgw-session"
#define AD_MAX (sizeof(AD_LABEL) - 1 + 2 + MGW_KID_MAX + 1 + \
                MGW_SESSION_DIGEST_LEN)
#define PLAIN MGW_RECORD_CORE   /* the plaintext's record layout */

#define TOMB_TAG "tomb:"
#define TOMB_KEY_MAX (128 + sizeof(TOMB_TAG) - 1 + 2 * MGW_SESSION_DIGEST_LEN + 1)

struct sealed_store {
	struct mgw_session_store base;  /* first: the generic part */
	struct mgw_session_table *cache; /* SHA-256(token) -> current record;
	                                 * NULL record = deleted here */
	EVP_CIPHER *aes;                /* AES-256-GCM, fetched once */
	struct mgw_key256 *keys;        /* keys[0] seals, all open */
	size_t nkeys;
	size_t max_plain;               /* longest plaintext allowed */
	/* tombstones: redis (else shared == 0) */
	int shared;
	uint64_t fresh_ms;              /* a check is good this long */
	char display[300];              /* the Redis URL without password */
	atomic_uint_fast64_t views_down, outages, round_trips;
};

/* One worker's view: with shared tombstones, its own Redis connection. */
struct sealed_view {
	struct mgw_session_view base;   /* first: the generic part */
	struct mgw_redis *conn;         /* NULL without shared tombstones */
	int down;                       /* counted in views_down */
};

/* A lookup or remove waiting for Redis (op->impl). */
struct tomb_op {
	struct mgw_session_op *op;
	struct sealed_view *v;
	struct mgw_session *rec;        /* lookup: what to serve */
	struct mgw_session *cached;     /* lookup: the cached record being
	                                 * checked again, NULL for a token
	                                 * opened now */
	unsigned char key[MGW_SESSION_DIGEST_LEN];
};

static struct sealed_store *sealed_of(struct mgw_session_store *st)
{
	return (struct sealed_store *)st;
}

/* ---- AEAD ---- */

static size_t build_ad(unsigned char *ad, const char *kid, size_t kidlen,
                       int bind, const unsigned char *principal)
{
	size_t n = sizeof(AD_LABEL) - 1;

	memcpy(ad, AD_LABEL, n);
	ad[n++] = TOKEN_VERSION;
	ad[n++] = (unsigned char)kidlen;
	memcpy(ad + n, kid, kidlen);
	n += kidlen;
	ad[n++] = bind ? 1 : 0;
	if (bind) {
		memcpy(ad + n, principal, MGW_SESSION_DIGEST_LEN);
		n += MGW_SESSION_DIGEST_LEN;
	}
	return n;
}

/* Seals s under keys[0].  Returns a malloc'd base64url token or NULL. */
static char *seal(struct sealed_store *ss, const struct mgw_session *s,
                  const unsigned char *principal)
{
	const struct mgw_key256 *k = &ss->keys[0];
	size_t kidlen = strlen(k->kid), ptlen = 0, adlen, hdr, n;
	unsigned char ad[AD_MAX], *raw = NULL, *pt;
	EVP_CIPHER_CTX *c = NULL;
	char *tok = NULL;
	int outl = 0, finl = 0;

	pt = mgw_record_encode(s, PLAIN, &ptlen);
	hdr = 2 + kidlen + NONCE_LEN;
	n = hdr + ptlen + TAG_LEN;
	raw = malloc(n);
	if (!raw || !pt)
		goto out;
	raw[0] = TOKEN_VERSION;
	raw[1] = (unsigned char)kidlen;
	memcpy(raw + 2, k->kid, kidlen);
	if (mgw_random_bytes(raw + 2 + kidlen, NONCE_LEN) != 0)
		goto out;
	adlen = build_ad(ad, k->kid, kidlen, ss->base.conf->bind_principal,
	                 principal);
	c = EVP_CIPHER_CTX_new();
	if (!c ||
	    !EVP_EncryptInit_ex2(c, ss->aes, k->key, raw + 2 + kidlen, NULL) ||
	    !EVP_EncryptUpdate(c, NULL, &outl, ad, (int)adlen) ||
	    !EVP_EncryptUpdate(c, raw + hdr, &outl, pt, (int)ptlen) ||
	    !EVP_EncryptFinal_ex(c, raw + hdr + outl, &finl) ||
	    (size_t)(outl + finl) != ptlen ||
	    !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN,
	                         raw + hdr + ptlen))
		goto out;
	tok = mgw_base64_encode(raw, n, 1);
out:
	EVP_CIPHER_CTX_free(c);
	if (pt)
		OPENSSL_cleanse(pt, ptlen);
	free(pt);
	free(raw);
	return tok;
}

/* Opens token id/len presented with principal.  Returns 0 and *out (a new
 * record with id set, bound as the store binds), or MGW_EAUTH (malformed,
 * unknown key id, wrong key, tampered, other principal), MGW_EEXPIRED or
 * MGW_ENOMEM. */
static int open_token(struct sealed_store *ss, const char *id, size_t len,
                      const unsigned char *principal, int64_t now,
                      struct mgw_session **out)
{
	size_t rawlen = 0, kidlen, hdr, ctlen, adlen;
	unsigned char ad[AD_MAX], *raw, *pt = NULL;
	const struct mgw_key256 *k = NULL;
	struct mgw_session *s = NULL;
	EVP_CIPHER_CTX *c = NULL;
	int rc = MGW_EAUTH, outl = 0, finl = 0;

	*out = NULL;
	raw = mgw_base64_decode(id, len, 1, &rawlen);
	if (!raw)
		return MGW_EAUTH;
	if (rawlen < 2 || raw[0] != TOKEN_VERSION)
		goto out;
	kidlen = raw[1];
	hdr = 2 + kidlen + NONCE_LEN;
	if (!mgw_kid_valid((const char *)raw + 2, kidlen) ||
	    rawlen < hdr + TAG_LEN + MGW_RECORD_CORE_FIXED)
		goto out;
	ctlen = rawlen - hdr - TAG_LEN;
	if (ctlen > ss->max_plain)
		goto out;
	for (size_t i = 0; i < ss->nkeys && !k; i++)
		if (strlen(ss->keys[i].kid) == kidlen &&
		    memcmp(ss->keys[i].kid, raw + 2, kidlen) == 0)
			k = &ss->keys[i];
	if (!k)
		goto out;
	adlen = build_ad(ad, k->kid, kidlen, ss->base.conf->bind_principal,
	                 principal);
	pt = malloc(ctlen);
	c = EVP_CIPHER_CTX_new();
	if (!pt || !c) {
		rc = MGW_ENOMEM;
		goto out;
	}
	if (!EVP_DecryptInit_ex2(c, ss->aes, k->key, raw + 2 + kidlen, NULL) ||
	    !EVP_DecryptUpdate(c, NULL, &outl, ad, (int)adlen) ||
	    !EVP_DecryptUpdate(c, pt, &outl, raw + hdr, (int)ctlen) ||
	    !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, TAG_LEN,
	                         raw + hdr + ctlen) ||
	    EVP_DecryptFinal_ex(c, pt + outl, &finl) <= 0 ||
	    (size_t)(outl + finl) != ctlen)
		goto out;
	s = mgw_record_decode(pt, ctlen, PLAIN);
	if (!s)
		goto out;
	if (s->expires_s <= now) {
		rc = MGW_EEXPIRED;
		goto out;
	}
	rc = mgw_session_set_id(s, id, len);
	if (rc != 0)
		goto out;
	if (ss->base.conf->bind_principal)
		mgw_session_set_principal(s, principal);
	*out = s;
	s = NULL;
out:
	mgw_session_unref(s);
	EVP_CIPHER_CTX_free(c);
	if (pt)
		OPENSSL_cleanse(pt, ctlen);
	free(pt);
	free(raw);
	return rc;
}

/* ---- store operations ---- */

static void cache_key(const char *id, size_t len,
                      unsigned char key[MGW_SESSION_DIGEST_LEN])
{
	/* Keying the cache by a collision-resistant digest of the whole
	 * token makes a hit as trustworthy as opening it: no other string
	 * reaches this entry. */
	mgw_session_principal_digest(id, len, key);
}

static void bump(atomic_uint_fast64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- shared tombstones (tombstones: redis) ---- */

/* <key_prefix>"tomb:"<hex digest>: the token itself never reaches Redis. */
static size_t tomb_key(const struct sealed_store *ss,
                       const unsigned char d[MGW_SESSION_DIGEST_LEN],
                       char out[TOMB_KEY_MAX])
{
	static const char hex[] = "0123456789abcdef";
	const char *pfx = ss->base.conf->redis.key_prefix;
	size_t n = strlen(pfx);

	memcpy(out, pfx, n);
	memcpy(out + n, TOMB_TAG, sizeof(TOMB_TAG) - 1);
	n += sizeof(TOMB_TAG) - 1;
	for (size_t i = 0; i < MGW_SESSION_DIGEST_LEN; i++) {
		out[n++] = hex[d[i] >> 4];
		out[n++] = hex[d[i] & 15];
	}
	out[n] = '\0';
	return n;
}

/* 1 if rec needs no Redis check now: no shared tombstones, or checked
 * (stamped) within fresh_ms. */
static int checked_recently(const struct sealed_store *ss,
                            const struct mgw_session *rec, uint64_t now)
{
	return !ss->shared ||
	       (rec->cached_ms != 0 && now - rec->cached_ms < ss->fresh_ms);
}

static uint64_t stamp_of(uint64_t now)
{
	return now ? now : 1;   /* 0 means "never checked" */
}

/* Called on a view's thread when its connection changes state; the
 * store-wide transitions (first view down, last one back) are events. */
static void view_set_down(struct sealed_view *v, int down, const char *why,
                          int quiet)
{
	struct sealed_store *ss = sealed_of(v->base.store);

	if (v->down == down)
		return;
	v->down = down;
	if (down) {
		if (atomic_fetch_add(&ss->views_down, 1) == 0) {
			atomic_fetch_add(&ss->outages, 1);
			if (!quiet)
				mgw_event(NULL, "store_down",
				          "store=sealed tombstones=redis url=%s "
				          "detail=\"%s\"", ss->display,
				          why ? why : "connection down");
		}
	} else if (atomic_fetch_sub(&ss->views_down, 1) == 1 && !quiet) {
		mgw_event(NULL, "store_up", "store=sealed tombstones=redis url=%s",
		          ss->display);
	}
}

static void on_conn_state(void *arg, enum mgw_redis_state state,
                          const char *why)
{
	if (state == MGW_REDIS_UP)
		view_set_down(arg, 0, NULL, 0);
	else if (state == MGW_REDIS_DOWN)
		view_set_down(arg, 1, why, 0);
}

/* Releases the per-op data and completes; rec (a reference) moves. */
static void tomb_finish(struct tomb_op *o, int status, struct mgw_session *rec)
{
	struct mgw_session_op *op = o->op;

	op->impl = NULL;
	mgw_session_unref(o->rec);
	mgw_session_unref(o->cached);
	free(o);
	mgw_session_op_complete(op, status, rec);
}

static int tomb_send(struct tomb_op *o, int argc, const char **argv,
                     const size_t *argl, mgw_redis_reply_cb cb)
{
	struct sealed_store *ss = sealed_of(o->v->base.store);

	if (mgw_redis_state(o->v->conn) == MGW_REDIS_DOWN ||
	    mgw_redis_command_argv(o->v->conn, argc, argv, argl, cb, o) != 0)
		return MGW_EIO;
	atomic_fetch_add_explicit(&ss->round_trips, 1, memory_order_relaxed);
	return 0;
}

struct still_same {
	const struct mgw_session *old;
	int live;               /* keep() ran: the key holds a record */
};

/* Under the cache's lock: the entry changed since it was read (an update
 * on another worker), so the newer record stays. */
static int changed_since(const struct mgw_session *cur, void *arg)
{
	struct still_same *k = arg;

	k->live = 1;
	return cur != k->old;
}

/* The check found no tombstone: stamp the record checked and serve it,
 * unless a DELETE here left a local tombstone meanwhile. */
static void lookup_checked(struct tomb_op *o, int stamp)
{
	struct sealed_store *ss = sealed_of(o->v->base.store);
	uint64_t now = mgw_session_store_mono_ms(&ss->base);
	struct still_same k = {.old = o->cached, .live = 0};
	struct mgw_session *rec = o->rec, *put;
	int rc;

	if (o->cached) {
		/* a shared record is never written: a stamped copy replaces
		 * it, if it is still the one that was checked */
		put = stamp ? mgw_session_dup(o->cached) : NULL;
		rc = 0;
		if (put) {
			put->cached_ms = stamp_of(now);
			rc = mgw_session_table_put_unless(ss->cache, o->key,
			                                  sizeof(o->key), put, now,
			                                  changed_since, &k);
			if (rc != 0)
				mgw_session_unref(put);
		}
	} else {
		/* a token opened now: private until it enters the cache */
		rec->cached_ms = stamp ? stamp_of(now) : 0;
		put = mgw_session_ref(rec);
		rc = mgw_session_table_put_unless(ss->cache, o->key,
		                                  sizeof(o->key), put, now, NULL,
		                                  NULL);
		if (rc != 0)
			mgw_session_unref(put);
	}
	if (rc == MGW_ECONFLICT && !k.live) {
		tomb_finish(o, MGW_ENOTFOUND, NULL);   /* deleted here meanwhile */
		return;
	}
	o->rec = NULL;
	tomb_finish(o, 0, rec);
}

/* Redis could not be asked whether the token was deleted elsewhere. */
static void lookup_unchecked(struct tomb_op *o)
{
	struct sealed_store *ss = sealed_of(o->v->base.store);

	if (ss->base.conf->sealed.on_redis_error == MGW_TOMBSTONE_REFUSE) {
		tomb_finish(o, MGW_EIO, NULL);  /* counted by the generic layer */
		return;
	}
	atomic_fetch_add_explicit(&ss->base.cnt.errors, 1, memory_order_relaxed);
	lookup_checked(o, 0);           /* served, to be checked next time */
}

static void on_exists_reply(void *arg, int status, redisReply *rep)
{
	struct tomb_op *o = arg;
	struct sealed_store *ss = sealed_of(o->v->base.store);

	if (status != 0 || !rep || rep->type != REDIS_REPLY_INTEGER) {
		lookup_unchecked(o);
		return;
	}
	if (rep->integer > 0) {
		/* deleted through another gateway: remember it here too */
		mgw_session_table_put(ss->cache, o->key, sizeof(o->key), NULL,
		                      mgw_session_store_mono_ms(&ss->base));
		tomb_finish(o, MGW_ENOTFOUND, NULL);
		return;
	}
	lookup_checked(o, 1);
}

/* Asks Redis about the token of key before serving rec (a reference that
 * moves); cached: rec is the cache's entry being checked again. */
static int lookup_remote(struct sealed_view *v, struct mgw_session_op *op,
                         const unsigned char *key, struct mgw_session *rec,
                         int cached)
{
	struct sealed_store *ss = sealed_of(v->base.store);
	struct tomb_op *o = calloc(1, sizeof(*o));
	char tk[TOMB_KEY_MAX];
	const char *argv[2] = {"EXISTS", tk};
	size_t argl[2] = {6, 0};

	if (!o) {
		mgw_session_unref(rec);
		return MGW_ENOMEM;
	}
	o->op = op;
	o->v = v;
	o->rec = rec;
	o->cached = cached ? mgw_session_ref(rec) : NULL;
	memcpy(o->key, key, sizeof(o->key));
	op->impl = o;
	argl[1] = tomb_key(ss, key, tk);
	if (tomb_send(o, 2, argv, argl, on_exists_reply) != 0)
		lookup_unchecked(o);
	return 0;
}

/* The local tombstone of a DELETE, and the op's answer. */
static void remove_local(struct sealed_store *ss, struct mgw_session_op *op,
                         const unsigned char *key)
{
	int rc = mgw_session_table_put(ss->cache, key, MGW_SESSION_DIGEST_LEN,
	                               NULL, mgw_session_store_mono_ms(&ss->base));

	mgw_session_op_complete(op, rc == MGW_ENOMEM ? MGW_ENOMEM : 0, NULL);
}

static void on_set_reply(void *arg, int status, redisReply *rep)
{
	struct tomb_op *o = arg;
	struct sealed_store *ss = sealed_of(o->v->base.store);
	struct mgw_session_op *op = o->op;
	unsigned char key[MGW_SESSION_DIGEST_LEN];

	memcpy(key, o->key, sizeof(key));
	if (status != 0 || !rep || rep->type != REDIS_REPLY_STATUS) {
		if (ss->base.conf->sealed.on_redis_error == MGW_TOMBSTONE_REFUSE) {
			/* no local tombstone either: the client may retry */
			tomb_finish(o, MGW_EIO, NULL);
			return;
		}
		atomic_fetch_add_explicit(&ss->base.cnt.errors, 1,
		                          memory_order_relaxed);
		mgw_event(NULL, "tombstone_unshared",
		          "store=sealed url=%s detail=\"%s\"", ss->display,
		          rep && rep->type == REDIS_REPLY_ERROR ? rep->str
		          : "redis unreachable: DELETE honoured by this gateway only");
	}
	op->impl = NULL;
	free(o);
	remove_local(ss, op, key);
}

/* Writes the tombstone of key to Redis, expiring when the token does
 * (expires_s), then the local one. */
static int remove_remote(struct sealed_view *v, struct mgw_session_op *op,
                         const unsigned char *key, int64_t expires_s)
{
	struct sealed_store *ss = sealed_of(v->base.store);
	int64_t left = expires_s - mgw_session_store_wall_s(&ss->base);
	struct tomb_op *o;
	char tk[TOMB_KEY_MAX], px[24];
	const char *argv[5] = {"SET", tk, "1", "PX", px};
	size_t argl[5] = {3, 0, 1, 2, 0};

	if (left <= 0) {                /* expired anyway: nothing to share */
		remove_local(ss, op, key);
		return 0;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return MGW_ENOMEM;
	o->op = op;
	o->v = v;
	memcpy(o->key, key, sizeof(o->key));
	op->impl = o;
	argl[1] = tomb_key(ss, key, tk);
	argl[4] = (size_t)snprintf(px, sizeof(px), "%lld",
	                           (long long)left * 1000);
	if (tomb_send(o, 5, argv, argl, on_set_reply) != 0)
		on_set_reply(o, MGW_EIO, NULL);
	return 0;
}

static int sealed_create(struct mgw_session_view *v, struct mgw_session *draft,
                         struct mgw_session_op *op)
{
	struct mgw_session_store *st = v->store;
	struct sealed_store *ss = sealed_of(st);
	unsigned char principal[MGW_SESSION_DIGEST_LEN], key[32];
	int64_t wall = mgw_session_store_wall_s(st);
	char *tok = NULL;
	int rc;

	memset(principal, 0, sizeof(principal));
	if (draft->init_len > st->max_init ||
	    mgw_record_size(draft, PLAIN) > ss->max_plain) {
		rc = MGW_ELIMIT;
		goto fail;
	}
	if (st->conf->bind_principal) {
		if (draft->bound)
			memcpy(principal, draft->principal, sizeof(principal));
		else
			mgw_session_principal_digest(NULL, 0, principal);
		mgw_session_set_principal(draft, principal);
	}
	draft->version = 0;
	draft->created_s = wall;
	draft->expires_s = wall + (int64_t)st->conf->max_lifetime;
	tok = seal(ss, draft, principal);
	if (!tok) {
		rc = MGW_ENOMEM;
		goto fail;
	}
	rc = mgw_session_set_id(draft, tok, strlen(tok));
	free(tok);
	if (rc != 0)
		goto fail;
	/* The cache only saves opening the token again: failing to fill it
	 * (a record larger than max_memory) loses nothing. */
	cache_key(draft->id, draft->id_len, key);
	draft->cached_ms = stamp_of(mgw_session_store_mono_ms(st));
	if (mgw_session_table_put(ss->cache, key, sizeof(key),
	                          mgw_session_ref(draft),
	                          mgw_session_store_mono_ms(st)) != 0)
		mgw_session_unref(draft);
	mgw_session_op_complete(op, 0, draft);
	return 0;
fail:
	mgw_session_unref(draft);
	mgw_session_op_complete(op, rc, NULL);
	return 0;
}

static int sealed_lookup(struct mgw_session_view *v, const char *id,
                         size_t len, const unsigned char *principal,
                         struct mgw_session_op *op)
{
	struct mgw_session_store *st = v->store;
	struct sealed_store *ss = sealed_of(st);
	unsigned char key[32], none[MGW_SESSION_DIGEST_LEN];
	uint64_t mono = mgw_session_store_mono_ms(st);
	int64_t wall = mgw_session_store_wall_s(st);
	struct mgw_session *rec = NULL;
	int rc;

	if (!principal) {
		mgw_session_principal_digest(NULL, 0, none);
		principal = none;
	}
	cache_key(id, len, key);
	rc = mgw_session_table_get(ss->cache, key, sizeof(key), mono, &rec);
	if (rc == 0) {
		bump(&st->cnt.cache_hits);
		if (rec->expires_s <= wall) {
			mgw_session_unref(rec);
			mgw_session_table_remove(ss->cache, key, sizeof(key));
			bump(&st->cnt.expired);
			rc = MGW_ENOTFOUND;
		} else if (st->conf->bind_principal &&
		           !mgw_session_principal_matches(rec, principal)) {
			mgw_session_unref(rec);
			bump(&st->cnt.rejected_principal);
			rc = MGW_ENOTFOUND;
		} else if (checked_recently(ss, rec, mono)) {
			mgw_session_op_complete(op, 0, rec);
			return 0;
		} else {
			return lookup_remote((struct sealed_view *)v, op, key,
			                     rec, 1);
		}
		mgw_session_op_complete(op, rc, NULL);
		return 0;
	}
	if (rc == MGW_ECLOSED) {        /* deleted here */
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return 0;
	}
	bump(&st->cnt.cache_misses);
	rc = open_token(ss, id, len, principal, wall, &rec);
	if (rc == MGW_ENOMEM)
		return MGW_ENOMEM;
	if (rc != 0) {
		bump(rc == MGW_EEXPIRED ? &st->cnt.expired
		                            : &st->cnt.rejected_token);
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return 0;
	}
	if (ss->shared)
		return lookup_remote((struct sealed_view *)v, op, key, rec, 0);
	if (mgw_session_table_put(ss->cache, key, sizeof(key),
	                          mgw_session_ref(rec), mono) != 0)
		mgw_session_unref(rec);
	mgw_session_op_complete(op, 0, rec);
	return 0;
}

static int sealed_update(struct mgw_session_view *v, struct mgw_session *rec,
                         uint64_t expect_version, struct mgw_session_op *op)
{
	struct mgw_session_store *st = v->store;
	struct sealed_store *ss = sealed_of(st);
	struct mgw_session *current = NULL;
	uint64_t mono = mgw_session_store_mono_ms(st);
	unsigned char key[32];
	int rc;

	cache_key(rec->id, rec->id_len, key);
	if (ss->shared &&
	    mgw_session_table_get(ss->cache, key, sizeof(key), mono,
	                          &current) == 0) {
		/* the new version keeps the old one's tombstone check (rec is
		 * still private: the stamp is set before it is shared) */
		rec->cached_ms = current->cached_ms;
	}
	mgw_session_unref(current);
	current = NULL;
	rc = mgw_session_table_replace(ss->cache, key, sizeof(key), rec,
	                               expect_version, mono, &current);
	if (rc == 0) {
		mgw_session_op_complete(op, 0, mgw_session_ref(rec));
		return 0;
	}
	if (rc == MGW_ENOTFOUND &&
	    rec->expires_s > mgw_session_store_wall_s(st)) {
		/* The cache forgot the pin (eviction, idle); the token still
		 * speaks for the session, so the newer pin is simply kept -
		 * unless a DELETE left its tombstone meanwhile (checked and
		 * stored in one step). */
		rec->version = expect_version + 1;
		rc = mgw_session_table_put_unless(ss->cache, key, sizeof(key),
		                                  rec, mono, NULL, NULL);
		if (rc == 0) {
			mgw_session_op_complete(op, 0, mgw_session_ref(rec));
			return 0;
		}
		if (rc == MGW_ECONFLICT)
			rc = MGW_ENOTFOUND; /* deleted */
	}
	mgw_session_unref(rec);
	mgw_session_op_complete(op, rc, current);
	return 0;
}

static int sealed_remove(struct mgw_session_view *v, const char *id,
                         size_t len, struct mgw_session_op *op)
{
	struct mgw_session_store *st = v->store;
	struct sealed_store *ss = sealed_of(st);
	uint64_t mono = mgw_session_store_mono_ms(st);
	struct mgw_session *rec = NULL;
	unsigned char key[32];
	int64_t expires_s;
	int rc;

	cache_key(id, len, key);
	rc = mgw_session_table_get(ss->cache, key, sizeof(key), mono, &rec);
	/* the token's end, for the shared tombstone's expiry (the caller
	 * looked the id up first, so it is cached unless evicted since:
	 * then the longest a token lives) */
	expires_s = rec ? rec->expires_s
	                : mgw_session_store_wall_s(st) +
	                  (int64_t)st->conf->max_lifetime;
	mgw_session_unref(rec);
	if (rc == MGW_ECLOSED) {
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return 0;
	}
	/* A tombstone, so that this gateway answers 404 from now on instead
	 * of opening the token again (the caller looked the id up first, so
	 * it is a real session); with shared tombstones, in Redis first. */
	if (ss->shared)
		return remove_remote((struct sealed_view *)v, op, key, expires_s);
	remove_local(ss, op, key);
	return 0;
}

static struct mgw_session_view *sealed_view_new(struct mgw_session_store *st,
                                                struct event_base *base,
                                                char *err, size_t errlen)
{
	struct sealed_store *ss = sealed_of(st);
	struct sealed_view *v = calloc(1, sizeof(*v));
	struct mgw_redis_opts o = {
		.url = st->conf->redis.url,
		.tls = &st->conf->redis.tls,
		.timeout = st->conf->redis.timeout,
		.on_state = on_conn_state,
		.sentinels = (const char *const *)st->conf->redis.sentinels,
		.n_sentinels = st->conf->redis.n_sentinels,
		.master_name = st->conf->redis.master_name,
	};

	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	mgw_session_view_init(&v->base, st, base);
	if (!ss->shared)
		return &v->base;
	o.state_arg = v;
	v->conn = mgw_redis_new(base, &o, err, errlen);
	if (!v->conn) {
		free(v);
		return NULL;
	}
	if (mgw_redis_state(v->conn) == MGW_REDIS_DOWN)
		view_set_down(v, 1, "cannot connect", 0);
	return &v->base;
}

static void sealed_view_free(struct mgw_session_view *view)
{
	struct sealed_view *v = (struct sealed_view *)view;

	/* Commands still out are answered MGW_EIO from inside, completing
	 * their ops while v is valid. */
	mgw_redis_free(v->conn);
	if (v->conn)
		view_set_down(v, 0, NULL, 1);
	free(v);
}

static size_t sealed_sweep(struct mgw_session_store *st, size_t max)
{
	return mgw_session_table_sweep(sealed_of(st)->cache,
	                               mgw_session_store_mono_ms(st), max);
}

static void sealed_stats(struct mgw_session_store *st,
                         struct mgw_session_stats *out)
{
	struct mgw_session_table_stats ts;

	mgw_session_table_stats(sealed_of(st)->cache, &ts);
	out->active = ts.count;
	out->memory_bytes = ts.bytes;
	/* Cache entries idling out are not sessions expiring: a sealed
	 * session lives until its token's lifetime ends. */
	out->evicted += ts.evicted + ts.expired;
	if (sealed_of(st)->shared) {
		struct sealed_store *ss = sealed_of(st);

		out->unreachable = atomic_load(&ss->views_down) > 0;
		out->outages = atomic_load(&ss->outages);
		out->round_trips = atomic_load(&ss->round_trips);
	}
}

static void sealed_destroy(struct mgw_session_store *st)
{
	struct sealed_store *ss = sealed_of(st);

	mgw_session_store_deinit(st);
	mgw_session_table_free(ss->cache);
	EVP_CIPHER_free(ss->aes);
	if (ss->keys)
		OPENSSL_cleanse(ss->keys, ss->nkeys * sizeof(*ss->keys));
	free(ss->keys);
	free(ss);
}

static const struct mgw_session_store_ops sealed_ops = {
	.name = "sealed",
	.view_new = sealed_view_new,
	.view_free = sealed_view_free,
	.create = sealed_create,
	.lookup = sealed_lookup,
	.update = sealed_update,
	.remove = sealed_remove,
	.sweep = sealed_sweep,
	.stats = sealed_stats,
	.destroy = sealed_destroy,
};

struct mgw_session_store *mgw_session_store_sealed_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	const struct mgw_key256 *keys, size_t nkeys, char *err, size_t errlen)
{
	struct sealed_store *ss = calloc(1, sizeof(*ss));
	struct mgw_session_table_limits lim = {
		.max_count = conf->max_sessions,
		.max_bytes = conf->max_memory,
		.idle_ms = (uint64_t)(conf->idle_timeout * 1000.0),
		.evict = 1,
	};
	size_t raw;

	if (!ss) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (nkeys == 0) {
		snprintf(err, errlen, "the sealed store needs at least one key");
		goto fail;
	}
	for (size_t i = 0; i < nkeys; i++) {
		if (!mgw_kid_valid(keys[i].kid, strlen(keys[i].kid))) {
			snprintf(err, errlen, "key %zu has an invalid key id", i);
			goto fail;
		}
	}
	ss->keys = malloc(nkeys * sizeof(*keys));
	if (!ss->keys) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	memcpy(ss->keys, keys, nkeys * sizeof(*keys));
	ss->nkeys = nkeys;
	ss->aes = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	if (!ss->aes) {
		snprintf(err, errlen, "AES-256-GCM is not available from OpenSSL");
		goto fail;
	}
	if (conf->sealed.tombstones == MGW_TOMBSTONES_REDIS) {
		const char *pfx = conf->redis.key_prefix;

		if (!conf->redis.url || !pfx || !pfx[0] || strlen(pfx) > 128) {
			snprintf(err, errlen, "sessions.sealed.tombstones: redis "
			         "needs sessions.redis.url and a key_prefix of 1 "
			         "to 128 characters");
			goto fail;
		}
		if (mgw_redis_url_check(conf->redis.url, ss->display,
		                        sizeof(ss->display), err, errlen) != 0)
			goto fail;
		ss->shared = 1;
		ss->fresh_ms = (uint64_t)(conf->redis.cache_ttl * 1000.0);
	}
	ss->cache = mgw_session_table_new(&lim, err, errlen);
	if (!ss->cache)
		goto fail;
	ss->base.max_init = conf->max_initialize_bytes;
	if (ss->base.max_init > INIT_CAP)
		ss->base.max_init = INIT_CAP;
	if (conf->store != MGW_SESSION_STORE_SEALED &&
	    ss->base.max_init > INIT_CAP_NOT_DEFAULT)
		ss->base.max_init = INIT_CAP_NOT_DEFAULT;
	ss->max_plain = mgw_record_size_max(PLAIN, ss->base.max_init);
	raw = 2 + MGW_KID_MAX + NONCE_LEN + ss->max_plain + TAG_LEN;
	ss->base.max_id = (raw * 4 + 2) / 3;
	if (mgw_session_store_init(&ss->base, &sealed_ops, conf, env) != 0) {
		snprintf(err, errlen, "cannot set up the session sweep timer");
		goto fail;
	}
	return &ss->base;
fail:
	mgw_session_table_free(ss->cache);
	EVP_CIPHER_free(ss->aes);
	if (ss->keys)
		OPENSSL_cleanse(ss->keys, nkeys * sizeof(*keys));
	free(ss->keys);
	free(ss);
	return NULL;
}
