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
 * opened again here; other gateways cannot know (a sealed session is only
 * revocable by its lifetime or by retiring the key). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/errors.h"
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

struct sealed_store {
	struct mgw_session_store base;  /* first: the generic part */
	struct mgw_session_table *cache; /* SHA-256(token) -> current record;
	                                 * NULL record = deleted here */
	EVP_CIPHER *aes;                /* AES-256-GCM, fetched once */
	struct mgw_key256 *keys;        /* keys[0] seals, all open */
	size_t nkeys;
	size_t max_plain;               /* longest plaintext allowed */
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
		} else {
			mgw_session_op_complete(op, 0, rec);
			return 0;
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
	int rc;

	cache_key(id, len, key);
	rc = mgw_session_table_get(ss->cache, key, sizeof(key), mono, &rec);
	mgw_session_unref(rec);
	if (rc == MGW_ECLOSED) {
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return 0;
	}
	/* A tombstone, so that this gateway answers 404 from now on instead
	 * of opening the token again (the caller looked the id up first, so
	 * it is a real session). */
	rc = mgw_session_table_put(ss->cache, key, sizeof(key), NULL, mono);
	mgw_session_op_complete(op, rc == MGW_ENOMEM ? MGW_ENOMEM : 0, NULL);
	return 0;
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
