/* auth_wait.c - one worker's side of the auth check (auth_wait.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/bearer.h"
#include "auth/jwt.h"
#include "core/errors.h"
#include "proxy/auth_wait.h"
#include "proxy/pipeline-t.h"
#include "proxy/txn-t.h"

struct waiter {
	struct mgw_txn *t;
	struct waiter *prev, *next;
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
	w->url = mgw_prm_url(a->resource, &w->path);
	w->watch = mgw_keyring_watch(keys, base, on_fetched, w);
	if (!w->url || !w->watch) {
		mgw_auth_wait_free(w);
		return NULL;
	}
	return w;
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
	mgw_jwks_unref(w->keys);
	free(w->url);
	free(w);
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
