/* store_sealed_test.c - unit tests for src/session/store_sealed.c.  Two
 * store instances stand for two gateways: "a" seals, a fresh "b" (empty
 * cache) must open the token by itself.  Covered: round trip, every byte
 * tampered, truncation, expiry, wrong key, unknown key id, rotation (old
 * key still opens, new key seals), principal binding (cache hit and
 * miss), a bind_principal mismatch between gateways, the initialize size
 * cap, re-pins kept in the local cache with the id unchanged, DELETE
 * tombstones and updates after the cache forgot the session. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/config.h"
#include "core/errors.h"
#include "session/session.h"
#include "session/store.h"
#include "util/base64.h"
#include "harness.h"

static const char body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	"{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

struct fx {
	struct th_clock clock;
	struct mgw_config *cfg;
	struct mgw_sessions_conf *conf;
	struct event_base *base;
	struct mgw_session_store *a, *b;
	struct mgw_session_view *va, *vb;
};

static struct mgw_key256 key(const char *kid, unsigned char fill)
{
	struct mgw_key256 k;

	memset(&k, 0, sizeof(k));
	strcpy(k.kid, kid);
	memset(k.key, fill, sizeof(k.key));
	return k;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	th_clock_init(&f->clock);
	f->cfg = th_config();
	f->conf = &f->cfg->serve.sessions;
	f->conf->store = MGW_SESSION_STORE_SEALED;
	f->conf->max_initialize_bytes = 8192;
	f->base = event_base_new();
	*state = f;
	return f->base ? 0 : -1;
}

static struct mgw_session_store *make(struct fx *f,
                                      const struct mgw_key256 *keys,
                                      size_t n, struct mgw_session_view **v)
{
	struct mgw_session_env env = th_env(&f->clock);
	struct mgw_session_store *st;
	char err[256];

	st = mgw_session_store_sealed_new(f->conf, &env, keys, n, err,
	                                  sizeof(err));
	if (!st)
		fail_msg("store: %s", err);
	*v = mgw_session_view_new(st, f->base, err, sizeof(err));
	assert_non_null(*v);
	return st;
}

/* Gateways a and b sharing keys. */
static void pair(struct fx *f, const struct mgw_key256 *ka, size_t na,
                 const struct mgw_key256 *kb, size_t nb)
{
	f->a = make(f, ka, na, &f->va);
	f->b = make(f, kb, nb, &f->vb);
}

static void pair_same(struct fx *f)
{
	struct mgw_key256 k = key("k1", 0x11);

	pair(f, &k, 1, &k, 1);
}

/* Replaces gateway b by a fresh one (empty cache). */
static void renew_b(struct fx *f, const struct mgw_key256 *kb, size_t nb)
{
	mgw_session_view_free(f->vb);
	mgw_session_store_free(f->b);
	f->b = make(f, kb, nb, &f->vb);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mgw_session_view_free(f->va);
	mgw_session_view_free(f->vb);
	mgw_session_store_free(f->a);
	mgw_session_store_free(f->b);
	event_base_free(f->base);
	mgw_config_free(f->cfg);
	free(f);
	return 0;
}

static struct mgw_session *create_on(struct mgw_session_view *v,
                                     const unsigned char *principal)
{
	struct mgw_session *d = th_draft(body, "http://127.0.0.1:9001/p",
	                                 "upstream-session-1"), *s = NULL;

	if (principal)
		mgw_session_set_principal(d, principal);
	assert_int_equal(th_create(v, d, &s), 0);
	return s;
}

static void test_round_trip_other_gateway(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s, *got = NULL;
	struct mgw_session_stats st;

	pair_same(f);
	s = create_on(f->va, NULL);
	/* Visible ASCII, base64url, within the advertised bound. */
	for (size_t i = 0; i < s->id_len; i++)
		assert_non_null(strchr(b64url, s->id[i]));
	assert_true(s->id_len <= mgw_session_store_max_id(f->a));
	/* The body does not show through. */
	assert_null(strstr(s->id, "initialize"));

	assert_int_equal(th_lookup(f->vb, s->id, NULL, &got), 0);
	assert_string_equal(got->id, s->id);
	assert_int_equal(got->init_len, strlen(body));
	assert_memory_equal(got->init_body, body, strlen(body));
	assert_string_equal(got->pin_url, "http://127.0.0.1:9001/p");
	assert_string_equal(got->upstream_sid, "upstream-session-1");
	assert_string_equal(got->protocol_version, "2025-11-25");
	assert_int_equal(got->n_init_headers, 1);
	assert_string_equal(got->init_headers[0].name, "MCP-Protocol-Version");
	assert_int_equal(got->created_s, s->created_s);
	assert_int_equal(got->expires_s, s->expires_s);
	assert_int_equal(got->pin_gen, 0);
	mgw_session_unref(got);

	/* The second lookup on b is served by its cache. */
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), 0);
	mgw_session_store_stats(f->b, &st);
	assert_string_equal(st.store, "sealed");
	assert_int_equal(st.cache_misses, 1);
	assert_int_equal(st.cache_hits, 1);
	assert_int_equal(st.active, 1);
	mgw_session_unref(s);
}

static void test_two_seals_differ(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s1, *s2;

	pair_same(f);
	s1 = create_on(f->va, NULL);
	s2 = create_on(f->va, NULL);
	/* Same content, fresh nonce: unrelated tokens. */
	assert_string_not_equal(s1->id, s2->id);
	mgw_session_unref(s1);
	mgw_session_unref(s2);
}

static void test_tamper_every_byte(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s;
	struct mgw_session_stats st;
	char *t;
	size_t n;

	pair_same(f);
	s = create_on(f->va, NULL);
	n = s->id_len;
	t = strdup(s->id);
	for (size_t i = 0; i < n; i++) {
		const char *p = strchr(b64url, t[i]);
		char orig = t[i];

		/* Another character of the alphabet, so that only the
		 * cryptography (not the decoder) can tell. */
		t[i] = b64url[((size_t)(p - b64url) + 1) % 64];
		if (th_lookup(f->vb, t, NULL, NULL) != MGW_ENOTFOUND)
			fail_msg("token with byte %zu changed was accepted", i);
		t[i] = orig;
	}
	/* Truncated and extended tokens. */
	t[n - 1] = '\0';
	assert_int_equal(th_lookup(f->vb, t, NULL, NULL), MGW_ENOTFOUND);
	t[n / 2] = '\0';
	assert_int_equal(th_lookup(f->vb, t, NULL, NULL), MGW_ENOTFOUND);
	free(t);
	t = malloc(n + 3);
	memcpy(t, s->id, n);
	memcpy(t + n, "AA", 3);
	assert_int_equal(th_lookup(f->vb, t, NULL, NULL), MGW_ENOTFOUND);
	free(t);
	/* Plain junk of plausible shape. */
	assert_int_equal(th_lookup(f->vb, "AQJrMQ", NULL, NULL), MGW_ENOTFOUND);
	/* The untouched token still opens. */
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), 0);
	mgw_session_store_stats(f->b, &st);
	assert_true(st.rejected_token >= n);
	mgw_session_unref(s);
}

/* A well-formed token whose payload was re-encrypted by someone without
 * the key cannot exist; but a token built under the right key id with a
 * wrong key is the closest forgery: it must not open. */
static void test_wrong_key_and_unknown_kid(void **state)
{
	struct fx *f = *state;
	struct mgw_key256 k1 = key("k1", 0x11), forged = key("k1", 0x22),
	                  other = key("k2", 0x11);
	struct mgw_session *s;
	struct mgw_session_stats st;

	pair(f, &k1, 1, &forged, 1);
	s = create_on(f->va, NULL);
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), MGW_ENOTFOUND);
	/* Same key bytes under another id: the id is authenticated too. */
	renew_b(f, &other, 1);
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_store_stats(f->b, &st);
	assert_int_equal(st.rejected_token, 1);
	mgw_session_unref(s);
}

static void test_rotation(void **state)
{
	struct fx *f = *state;
	struct mgw_key256 old = key("old", 0x33), fresh = key("new", 0x44);
	struct mgw_key256 rotated[2] = {fresh, old};
	struct mgw_session *s_old, *s_new;
	unsigned char *raw;
	size_t rawlen;

	pair(f, &old, 1, rotated, 2);
	s_old = create_on(f->va, NULL);
	/* b seals with "new" but still opens what "old" sealed. */
	assert_int_equal(th_lookup(f->vb, s_old->id, NULL, NULL), 0);
	s_new = create_on(f->vb, NULL);
	raw = mgw_base64_decode(s_new->id, s_new->id_len, 1, &rawlen);
	assert_non_null(raw);
	assert_int_equal(raw[1], 3);
	assert_memory_equal(raw + 2, "new", 3);
	free(raw);
	/* A gateway that only has the old key cannot open the new token. */
	assert_int_equal(th_lookup(f->va, s_new->id, NULL, NULL), MGW_ENOTFOUND);
	/* After the old key is dropped, old tokens stop opening. */
	renew_b(f, &fresh, 1);
	assert_int_equal(th_lookup(f->vb, s_old->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->vb, s_new->id, NULL, NULL), 0);
	mgw_session_unref(s_old);
	mgw_session_unref(s_new);
}

static void test_expired(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s;
	struct mgw_session_stats st;

	f->conf->max_lifetime = 600;
	pair_same(f);
	s = create_on(f->va, NULL);
	f->clock.wall_s += 599;
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), 0);
	renew_b(f, (struct mgw_key256[]){key("k1", 0x11)}, 1);
	f->clock.wall_s += 1;
	/* Expired on a gateway that opens the token... */
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), MGW_ENOTFOUND);
	/* ...and on the one that has it cached. */
	assert_int_equal(th_lookup(f->va, s->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_store_stats(f->b, &st);
	assert_int_equal(st.expired, 1);
	assert_int_equal(st.rejected_token, 0);
	mgw_session_store_stats(f->a, &st);
	assert_int_equal(st.expired, 1);
	mgw_session_unref(s);
}

static void test_principal(void **state)
{
	struct fx *f = *state;
	unsigned char alice[32], bob[32];
	struct mgw_session *s, *got = NULL;
	struct mgw_session_stats st;

	f->conf->bind_principal = 1;
	pair_same(f);
	mgw_session_principal_digest("Bearer alice", 12, alice);
	mgw_session_principal_digest("Bearer bob", 10, bob);
	s = create_on(f->va, alice);
	/* Opening on another gateway: only alice's digest opens it. */
	assert_int_equal(th_lookup(f->vb, s->id, bob, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->vb, s->id, alice, &got), 0);
	assert_true(got->bound);
	assert_memory_equal(got->principal, alice, 32);
	mgw_session_unref(got);
	/* Cache hits check it too. */
	assert_int_equal(th_lookup(f->vb, s->id, bob, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->va, s->id, bob, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->va, s->id, alice, NULL), 0);
	mgw_session_store_stats(f->b, &st);
	assert_int_equal(st.rejected_principal, 1);
	mgw_session_unref(s);

	/* A session made without credentials belongs to "no credentials". */
	s = create_on(f->va, NULL);
	renew_b(f, (struct mgw_key256[]){key("k1", 0x11)}, 1);
	assert_int_equal(th_lookup(f->vb, s->id, alice, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), 0);
	mgw_session_unref(s);
}

static void test_bind_mismatch(void **state)
{
	struct fx *f = *state;
	struct mgw_key256 k = key("k1", 0x11);
	struct mgw_sessions_conf unbound;
	struct mgw_session_env env = th_env(&f->clock);
	struct mgw_session_store *c;
	struct mgw_session_view *vc;
	struct mgw_session *s;
	char err[128];

	f->conf->bind_principal = 1;
	pair(f, &k, 1, &k, 1);
	s = create_on(f->va, NULL);
	/* A gateway configured without binding must not open a bound token
	 * (that would drop the principal check silently). */
	unbound = *f->conf;
	unbound.bind_principal = 0;
	c = mgw_session_store_sealed_new(&unbound, &env, &k, 1, err,
	                                 sizeof(err));
	assert_non_null(c);
	vc = mgw_session_view_new(c, f->base, err, sizeof(err));
	assert_int_equal(th_lookup(vc, s->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_view_free(vc);
	mgw_session_store_free(c);
	mgw_session_unref(s);
}

static void test_initialize_cap(void **state)
{
	struct fx *f = *state;
	char *big = malloc(8194);
	struct mgw_session *s = NULL;

	f->conf->max_initialize_bytes = 8192;
	pair_same(f);
	assert_int_equal(mgw_session_store_max_initialize(f->a), 8192);
	memset(big, ' ', 8193);
	big[0] = '{';
	big[8192] = '}';
	big[8193] = '\0';
	assert_int_equal(th_create(f->va, th_draft(big, NULL, NULL), &s),
	                 MGW_ELIMIT);
	assert_null(s);
	/* Exactly at the limit: sealed, opens elsewhere, and the token stays
	 * within the advertised bound. */
	big[8191] = '}';
	big[8192] = '\0';
	assert_int_equal(th_create(f->va, th_draft(big, NULL, NULL), &s), 0);
	assert_true(s->id_len <= mgw_session_store_max_id(f->a));
	assert_true(s->id_len < 11500);
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), 0);
	mgw_session_unref(s);
	free(big);
}

static void test_cap_is_bounded(void **state)
{
	struct fx *f = *state;
	struct mgw_session_view *v;
	struct mgw_session_store *st;
	struct mgw_key256 k = key("k1", 0x11);

	/* A configured 1 MiB is clamped: 16 KiB when sealed is the default
	 * store, 8 KiB when a route picks it over another default. */
	f->conf->max_initialize_bytes = 1 << 20;
	st = make(f, &k, 1, &v);
	assert_int_equal(mgw_session_store_max_initialize(st), 16384);
	mgw_session_view_free(v);
	mgw_session_store_free(st);
	f->conf->store = MGW_SESSION_STORE_MEMORY;
	st = make(f, &k, 1, &v);
	assert_int_equal(mgw_session_store_max_initialize(st), 8192);
	mgw_session_view_free(v);
	mgw_session_store_free(st);
}

static void test_repin_keeps_id(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s, *d, *res = NULL, *got = NULL;

	pair_same(f);
	s = create_on(f->va, NULL);
	d = mgw_session_dup(s);
	assert_int_equal(mgw_session_repin(d, "http://127.0.0.1:9002/p",
	                                   "upstream-session-2"), 0);
	assert_int_equal(mgw_session_set_initialized(d, "{\"x\":1}", 7), 0);
	assert_int_equal(th_update(f->va, d, 0, &res), 0);
	assert_string_equal(res->id, s->id);   /* the client's id stays */
	assert_int_equal(res->version, 1);
	mgw_session_unref(res);
	assert_int_equal(th_lookup(f->va, s->id, NULL, &got), 0);
	assert_string_equal(got->upstream_sid, "upstream-session-2");
	assert_int_equal(got->pin_gen, 1);
	assert_int_equal(got->initialized_len, 7);
	mgw_session_unref(got);
	/* Another gateway starts from the pin in the token (and re-pins by
	 * itself if that replica no longer knows the session). */
	assert_int_equal(th_lookup(f->vb, s->id, NULL, &got), 0);
	assert_string_equal(got->upstream_sid, "upstream-session-1");
	assert_int_equal(got->pin_gen, 0);
	assert_null(got->initialized_body);
	mgw_session_unref(got);
	/* A stale update loses. */
	d = mgw_session_dup(s);
	assert_int_equal(th_update(f->va, d, 0, &res), MGW_ECONFLICT);
	assert_string_equal(res->upstream_sid, "upstream-session-2");
	mgw_session_unref(res);
	mgw_session_unref(s);
}

static void test_update_after_eviction(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s1, *s2, *d, *res = NULL, *got = NULL;

	f->conf->max_sessions = 1;      /* a cache of one */
	pair_same(f);
	s1 = create_on(f->va, NULL);
	s2 = create_on(f->va, NULL);    /* evicts s1 from a's cache */
	d = mgw_session_dup(s1);
	assert_int_equal(mgw_session_repin(d, "http://127.0.0.1:9003/p",
	                                   "upstream-session-3"), 0);
	assert_int_equal(th_update(f->va, d, 0, &res), 0);
	mgw_session_unref(res);
	assert_int_equal(th_lookup(f->va, s1->id, NULL, &got), 0);
	assert_string_equal(got->upstream_sid, "upstream-session-3");
	mgw_session_unref(got);
	mgw_session_unref(s1);
	mgw_session_unref(s2);
}

static void test_delete_tombstone(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s, *res = NULL;
	struct mgw_session_stats st;

	pair_same(f);
	s = create_on(f->va, NULL);
	assert_int_equal(th_remove(f->va, s->id), 0);
	/* This gateway answers 404 from now on, and refuses updates. */
	assert_int_equal(th_lookup(f->va, s->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(th_remove(f->va, s->id), MGW_ENOTFOUND);
	assert_int_equal(th_update(f->va, mgw_session_dup(s), 0, &res),
	                 MGW_ENOTFOUND);
	assert_null(res);
	mgw_session_store_stats(f->a, &st);
	assert_int_equal(st.deleted, 1);
	/* Documented limit: a gateway that never saw the DELETE still opens
	 * the token until its lifetime ends. */
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), 0);
	mgw_session_unref(s);
}

/* Shared tombstones (sessions.sealed.tombstones: redis) with the Redis
 * unreachable (a socket path that does not exist: the connection is down
 * at once).  on_redis_error: serve serves a token it could not check and
 * counts the error, and a DELETE is still honoured here; refuse answers
 * MGW_EIO for both, and a refused DELETE leaves no local tombstone (the
 * client may send it again).  A session this gateway created needs no
 * check. */
static void test_tombstones_redis_down(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s, *got = NULL;
	struct mgw_session_stats st;
	char *url = f->conf->redis.url;     /* the snapshot's, freed with it */
	char sock[] = "unix:/nonexistent/mcpgw-sealed-test.sock";

	f->conf->sealed.tombstones = MGW_TOMBSTONES_REDIS;
	f->conf->redis.url = sock;
	pair_same(f);
	s = create_on(f->va, NULL);
	assert_int_equal(th_lookup(f->va, s->id, NULL, &got), 0);
	mgw_session_unref(got);
	mgw_session_store_stats(f->a, &st);
	assert_int_equal(st.errors, 0);     /* its own session: no check */
	assert_int_equal(st.unreachable, 1);
	assert_int_equal(st.outages, 1);
	/* b never saw it: unchecked, served, counted */
	assert_int_equal(th_lookup(f->vb, s->id, NULL, &got), 0);
	mgw_session_unref(got);
	mgw_session_store_stats(f->b, &st);
	assert_int_equal(st.errors, 1);
	/* ... and checked again on the next lookup (not stamped) */
	assert_int_equal(th_lookup(f->vb, s->id, NULL, &got), 0);
	mgw_session_unref(got);
	mgw_session_store_stats(f->b, &st);
	assert_int_equal(st.errors, 2);
	/* a DELETE on a: not shared, honoured here */
	assert_int_equal(th_remove(f->va, s->id), 0);
	assert_int_equal(th_lookup(f->va, s->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_unref(s);

	f->conf->sealed.on_redis_error = MGW_TOMBSTONE_REFUSE;
	s = create_on(f->va, NULL);
	assert_int_equal(th_lookup(f->vb, s->id, NULL, NULL), MGW_EIO);
	assert_int_equal(th_remove(f->va, s->id), MGW_EIO);
	/* no local tombstone: a still serves it (and a retry can delete) */
	assert_int_equal(th_lookup(f->va, s->id, NULL, &got), 0);
	mgw_session_unref(got);
	mgw_session_unref(s);
	f->conf->sealed.tombstones = MGW_TOMBSTONES_LOCAL;
	f->conf->sealed.on_redis_error = MGW_TOMBSTONE_SERVE;
	f->conf->redis.url = url;
}

static void test_bad_keys_refused(void **state)
{
	struct fx *f = *state;
	struct mgw_session_env env = th_env(&f->clock);
	struct mgw_key256 bad = key("k1", 0x11);
	char err[128];

	strcpy(bad.kid, "bad kid");
	assert_null(mgw_session_store_sealed_new(f->conf, &env, &bad, 1, err,
	                                         sizeof(err)));
	assert_null(mgw_session_store_sealed_new(f->conf, &env, &bad, 0, err,
	                                         sizeof(err)));
	assert_non_null(strstr(err, "key"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_round_trip_other_gateway),
		T(test_two_seals_differ),
		T(test_tamper_every_byte),
		T(test_wrong_key_and_unknown_kid),
		T(test_rotation),
		T(test_expired),
		T(test_principal),
		T(test_bind_mismatch),
		T(test_initialize_cap),
		T(test_cap_is_bounded),
		T(test_repin_keeps_id),
		T(test_update_after_eviction),
		T(test_delete_tombstone),
		T(test_tombstones_redis_down),
		T(test_bad_keys_refused),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
