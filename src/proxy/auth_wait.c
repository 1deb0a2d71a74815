/* auth_wait.c - one worker's side of the auth check (auth_wait.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/bearer.h"
#include "auth/jwt.h"
#include "auth/principal.h"
#include "core/errors.h"
#include "proxy/auth_wait.h"
#include "proxy/pipeline-t.h"
#include "proxy/txn-t.h"
#include "util/hash.h"
#include "util/rand.h"

struct waiter {
	struct mgw_txn *t;
	struct waiter *prev, *next;
};

/* One slot of the verified-token cache. */
struct cached {
	char *tok;                     /* a copy of the token */
	size_t n;
	struct mgw_principal *p;       /* NULL: empty */
	int64_t until;
	uint64_t ver;                  /* the key set's version */
};

struct mgw_auth_wait {
	struct mgw_keyring *k;
	struct mgw_keyring_watch *watch;
	struct mgw_jwks *keys;          /* a reference, of version ver */
	uint64_t ver;
	struct waiter *head;
	size_t n;
	char *url;                      /* the metadata URL */
	const char *path;               /* its path, inside url */
	struct cached cache[MGW_AUTH_CACHE_SLOTS];
	uint64_t seed;                  /* of the slot hash */
	unsigned char (*digests)[MGW_TOKEN_DIGEST_LEN]; /* static tokens' */
};

/* A fetch ended: every waiting request is judged again, once. */
static void on_fetched(void *arg)
{
	struct mgw_auth_wait *w = arg;
	struct waiter *l = w->head;

	w->head = NULL;
	w->n = 0;
	while (l) {
		struct waiter *next = l->next;
		struct mgw_txn *t = l->t;

		free(l);
		t->pending_cancel = NULL;
		t->pending_arg = NULL;
		mgw_check_auth_resume(t);
		l = next;
	}
}

struct mgw_auth_wait *mgw_auth_wait_new(struct event_base *base,
                                        const struct mgw_auth_conf *a,
                                        struct mgw_keyring *keys)
{
	struct mgw_auth_wait *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->k = keys;
	if (mgw_random_bytes(&w->seed, sizeof(w->seed)) != 0)
		w->seed = (uint64_t)(uintptr_t)w;
	w->digests = calloc(a->n_static_tokens ? a->n_static_tokens : 1,
	                    sizeof(*w->digests));
	for (size_t i = 0; w->digests && i < a->n_static_tokens; i++)
		if (mgw_token_digest_parse(a->static_tokens[i].digest,
		                           w->digests[i]) != 0)
			goto fail;      /* check-config refused it already */
	w->url = mgw_prm_url(a->resource, &w->path);
	w->watch = mgw_keyring_watch(keys, base, on_fetched, w);
	if (!w->digests || !w->url || !w->watch)
		goto fail;
	return w;
fail:
	mgw_auth_wait_free(w);
	return NULL;
}

void mgw_auth_wait_free(struct mgw_auth_wait *w)
{
	if (!w)
		return;
	mgw_keyring_unwatch(w->watch);
	while (w->head) {              /* none: the pipeline is idle */
		struct waiter *n = w->head->next;

		w->head->t->pending_cancel = NULL;
		free(w->head);
		w->head = n;
	}
	for (size_t i = 0; i < MGW_AUTH_CACHE_SLOTS; i++) {
		mgw_principal_free(w->cache[i].p);
		free(w->cache[i].tok);
	}
	free(w->digests);
	mgw_jwks_unref(w->keys);
	free(w->url);
	free(w);
}

/* The token's slot: its last 16 bytes (a signature's, effectively
 * random) and its length, hashed with the worker's seed. */
static struct cached *slot(struct mgw_auth_wait *w, const char *tok, size_t n)
{
	size_t k = n < 16 ? n : 16;
	uint64_t h = w->seed ^ n;

	for (size_t i = n - k; i < n; i++)
		h = (h ^ (unsigned char)tok[i]) * MGW_FNV1A_PRIME;
	return &w->cache[(h ^ (h >> 29)) % MGW_AUTH_CACHE_SLOTS];
}

struct mgw_principal *mgw_auth_wait_cached(struct mgw_auth_wait *w,
                                           const char *token, size_t n,
                                           int64_t now)
{
	struct cached *c = slot(w, token, n);

	mgw_auth_wait_keys(w);          /* w->ver: the current set's */
	if (!c->p || c->n != n || c->until <= now || c->ver != w->ver ||
	    memcmp(c->tok, token, n) != 0)
		return NULL;
	return mgw_principal_ref(c->p);
}

void mgw_auth_wait_remember(struct mgw_auth_wait *w, const char *token,
                            size_t n, struct mgw_principal *p, int64_t until)
{
	struct cached *c = slot(w, token, n);
	char *copy = malloc(n ? n : 1);

	if (!copy)
		return;                 /* not remembered: verified again */
	memcpy(copy, token, n);
	mgw_principal_free(c->p);
	free(c->tok);
	c->tok = copy;
	c->n = n;
	c->p = mgw_principal_ref(p);
	c->until = until;
	c->ver = w->ver;
}

const unsigned char *mgw_auth_wait_static_digest(const struct mgw_auth_wait *w,
                                                 size_t i)
{
	return w->digests[i];
}

struct mgw_keyring *mgw_auth_wait_keyring(const struct mgw_auth_wait *w)
{
	return w->k;
}

struct mgw_jwks *mgw_auth_wait_keys(struct mgw_auth_wait *w)
{
	if (!w->keys || mgw_keyring_version(w->k) != w->ver) {
		mgw_jwks_unref(w->keys);
		w->keys = mgw_keyring_get(w->k, &w->ver);
	}
	return w->keys;
}

/* t left (the client went away) while it waited. */
static void cancel(struct mgw_txn *t)
{
	struct waiter *l = t->pending_arg;
	struct mgw_auth_wait *w = t->pl->auth;

	if (l->prev)
		l->prev->next = l->next;
	else
		w->head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	w->n--;
	free(l);
	t->pending_cancel = NULL;
	t->pending_arg = NULL;
}

int mgw_auth_wait_add(struct mgw_auth_wait *w, struct mgw_txn *t)
{
	struct waiter *l = calloc(1, sizeof(*l));

	if (!l)
		return MGW_ENOMEM;
	l->t = t;
	l->next = w->head;
	if (w->head)
		w->head->prev = l;
	w->head = l;
	w->n++;
	t->pending_cancel = cancel;
	t->pending_arg = l;
	return 0;
}

size_t mgw_auth_wait_size(const struct mgw_auth_wait *w)
{
	return w->n;
}

const char *mgw_auth_wait_metadata_url(const struct mgw_auth_wait *w)
{
	return w->url;
}

const char *mgw_auth_wait_metadata_path(const struct mgw_auth_wait *w)
{
	return w->path;
}
