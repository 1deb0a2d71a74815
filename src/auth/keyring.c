/* keyring.c - the auth check's keys: a JWKS file, a JWKS fetched over
 * HTTPS on the main loop, and the watches that tell workers a fetch
 * ended (keyring.h). */
#include "autoconf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "auth/keyring.h"
#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "net/tls_client.h"
#include "net/wake.h"
#include "util/time.h"
#include "util/url.h"

#define FILE_MAX (4u * 1024 * 1024)

struct mgw_keyring_watch {
	struct mgw_keyring *k;
	struct mgw_wake *wake;          /* on the worker's loop */
	void (*cb)(void *arg);
	void *arg;
	struct mgw_keyring_watch *next;
};

struct mgw_keyring {
	const struct mgw_auth_conf *conf;
	struct event_base *base;        /* main thread */
	pthread_mutex_t mu;             /* cur, fetched, watches, asked */
	struct mgw_jwks *file_keys;     /* jwks_file's */
	struct mgw_jwks *fetched;       /* the last good fetch */
	struct mgw_jwks *cur;           /* both merged */
	_Atomic uint64_t version;
	struct mgw_keyring_watch *watches;
	/* fetching (main thread, but asked from any) */
	struct mgw_url url;
	SSL_CTX *tls;
	struct mgw_client *cl;
	struct mgw_client_origin *origin;
	struct mgw_client_req *req;     /* the fetch in flight, or NULL */
	struct evbuffer *body;
	int status;
	int too_big;
	int in_flight;                  /* under mu: a fetch runs or is
	                                 * about to (asked) */
	uint64_t last_start_ms;         /* under mu */
	double retry_s;                 /* after a failure (doubles) */
	struct event *timer;            /* the next periodic fetch */
	struct event *kick;             /* a worker asked for one */
	_Atomic uint64_t fetch_ok, fetch_failed;
	_Atomic int64_t last_ok;
};

struct mgw_jwks *mgw_jwks_load_file(const char *path, char *err,
                                    size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	struct mgw_jwks *k = NULL;

	if (!f) {
		snprintf(err, errlen, "%s: cannot be read", path);
		return NULL;
	}
	for (;;) {
		size_t r;

		if (n == cap) {
			char *nb;

			if (cap >= FILE_MAX) {
				snprintf(err, errlen, "%s: larger than 4 MiB", path);
				goto out;
			}
			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	k = mgw_jwks_parse(buf, n, NULL, err, errlen);
out:
	fclose(f);
	free(buf);
	return k;
}

/* ---- the current set -------------------------------------------------- */

/* Under mu: cur = file_keys + fetched. */
static void rebuild(struct mgw_keyring *k)
{
	struct mgw_jwks *m = NULL;

	if (k->file_keys && k->fetched)
		m = mgw_jwks_merge(k->file_keys, k->fetched);
	if (!m && k->fetched)
		m = mgw_jwks_ref(k->fetched);
	if (!m && k->file_keys)
		m = mgw_jwks_ref(k->file_keys);
	mgw_jwks_unref(k->cur);
	k->cur = m;
}

uint64_t mgw_keyring_version(const struct mgw_keyring *k)
{
	return atomic_load_explicit(&k->version, memory_order_acquire);
}

struct mgw_jwks *mgw_keyring_get(struct mgw_keyring *k, uint64_t *version)
{
	struct mgw_jwks *s;

	pthread_mutex_lock(&k->mu);
	s = k->cur ? mgw_jwks_ref(k->cur) : NULL;
	*version = atomic_load_explicit(&k->version, memory_order_relaxed);
	pthread_mutex_unlock(&k->mu);
	return s;
}

/* Main thread: a fetch ended; every watch is told. */
static void fetch_done(struct mgw_keyring *k, struct mgw_jwks *got)
{
	pthread_mutex_lock(&k->mu);
	if (got) {
		mgw_jwks_unref(k->fetched);
		k->fetched = got;
		rebuild(k);
	}
	k->in_flight = 0;
	atomic_fetch_add_explicit(&k->version, 1, memory_order_release);
	for (struct mgw_keyring_watch *w = k->watches; w; w = w->next)
		mgw_wake_ring(w->wake);
	pthread_mutex_unlock(&k->mu);
}

/* ---- fetching --------------------------------------------------------- */

static void schedule(struct mgw_keyring *k, double s)
{
	struct timeval tv = {(time_t)s, (suseconds_t)((s - (double)(time_t)s) *
	                                               1e6)};

	evtimer_add(k->timer, &tv);
}

static void fetch_failed(struct mgw_keyring *k, const char *why)
{
	atomic_fetch_add_explicit(&k->fetch_failed, 1, memory_order_relaxed);
	mgw_event(NULL, "jwks_fetch_failed", "url=%s reason=\"%s\" keys=%zu "
	          "retry=%.0fs", k->conf->jwks_url, why,
	          k->cur ? mgw_jwks_count(k->cur) : (size_t)0, k->retry_s);
	fetch_done(k, NULL);
	schedule(k, k->retry_s);
	k->retry_s *= 2;
	if (k->retry_s > k->conf->jwks_refresh)
		k->retry_s = k->conf->jwks_refresh;
}

static void on_head(struct mgw_client_req *r, int status,
                    const struct mgw_headers *h, void *arg)
{
	struct mgw_keyring *k = arg;

	(void)r;
	(void)h;
	k->status = status;
}

static void on_data(struct mgw_client_req *r, const unsigned char *data,
                    size_t len, void *arg)
{
	struct mgw_keyring *k = arg;

	if (k->too_big)
		return;
	if (evbuffer_get_length(k->body) + len > k->conf->jwks_max_bytes) {
		k->too_big = 1;
		k->req = NULL;
		mgw_client_cancel(r);
		fetch_failed(k, "document larger than jwks_max_bytes");
		return;
	}
	evbuffer_add(k->body, data, len);
}

static void on_end(struct mgw_client_req *r, void *arg)
{
	struct mgw_keyring *k = arg;
	char why[160];
	size_t skipped = 0, n = evbuffer_get_length(k->body);
	struct mgw_jwks *got;

	(void)r;
	k->req = NULL;
	if (k->status != 200) {
		snprintf(why, sizeof(why), "status %d", k->status);
		fetch_failed(k, why);
		return;
	}
	got = mgw_jwks_parse((const char *)evbuffer_pullup(k->body, -1), n,
	                     &skipped, why, sizeof(why));
	if (!got) {
		fetch_failed(k, why);
		return;
	}
	atomic_fetch_add_explicit(&k->fetch_ok, 1, memory_order_relaxed);
	atomic_store_explicit(&k->last_ok, mgw_wall_s(), memory_order_relaxed);
	mgw_log(MGW_LOG_INFO, NULL, "auth: %zu keys from %s (%zu skipped)",
	        mgw_jwks_count(got), k->conf->jwks_url, skipped);
	k->retry_s = k->conf->jwks_min_interval;
	fetch_done(k, got);
	schedule(k, k->conf->jwks_refresh);
}

static void on_error(struct mgw_client_req *r, const struct mgw_client_error *e,
                     void *arg)
{
	struct mgw_keyring *k = arg;

	(void)r;
	k->req = NULL;
	fetch_failed(k, e->msg ? e->msg : mgw_client_err_class_name(e->cls));
}

/* Main thread: starts a fetch unless one runs. */
static void fetch_start(struct mgw_keyring *k)
{
	struct mgw_client_timeouts tmo = {0};
	struct mgw_headers h;
	struct mgw_client_reqspec spec = {0};
	int rc;

	if (k->req)
		return;
	evtimer_del(k->timer);
	pthread_mutex_lock(&k->mu);
	k->in_flight = 1;
	k->last_start_ms = mgw_now_ms();
	pthread_mutex_unlock(&k->mu);
	evbuffer_drain(k->body, evbuffer_get_length(k->body));
	k->status = 0;
	k->too_big = 0;
	tmo.connect = k->conf->jwks_timeout;
	tmo.first_byte = tmo.connect;
	tmo.idle = tmo.connect;
	tmo.total = tmo.connect;
	mgw_headers_init(&h);
	spec.method = "GET";
	spec.target = k->url.path[0] ? k->url.path : "/";
	spec.headers = &h;
	spec.tmo = &tmo;
	spec.on_head = on_head;
	spec.on_data = on_data;
	spec.on_end = on_end;
	spec.on_error = on_error;
	spec.arg = k;
	rc = mgw_headers_adds(&h, "Accept", "application/jwk-set+json, "
	                     "application/json");
	if (rc == 0)
		rc = mgw_client_request(k->origin, &spec, &k->req);
	mgw_headers_deinit(&h);
	if (rc != 0) {
		k->req = NULL;
		fetch_failed(k, mgw_strerror(rc));
	}
}

/* The refresh timer, or a worker's ask (both on the main loop). */
static void on_fetch(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	fetch_start(arg);
}

int mgw_keyring_ask(struct mgw_keyring *k)
{
	int r = 0;

	if (!k->origin)
		return 0;
	pthread_mutex_lock(&k->mu);
	if (k->in_flight) {
		r = 1;
	} else if (mgw_now_ms() - k->last_start_ms >=
	           (uint64_t)(k->conf->jwks_min_interval * 1000)) {
		k->in_flight = 1;
		event_active(k->kick, EV_READ, 0);
		r = 1;
	}
	pthread_mutex_unlock(&k->mu);
	return r;
}

/* ---- life ------------------------------------------------------------- */

static int fetcher_new(struct mgw_keyring *k, char *err, size_t errlen)
{
	struct mgw_client_origin_cfg oc = {0};
	char why[160];

	if (mgw_url_parse(k->conf->jwks_url, &k->url, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "auth.jwks_url: %s", why);
		return MGW_EINVAL;
	}
	/* path without a trailing '/' as util/url.h keeps it; a URL that
	 * ended in '/' is fetched without it, which JWKS URLs never need */
	k->tls = mgw_tls_client_ctx(k->conf->jwks_ca_file, 1, err, errlen);
	if (!k->tls)
		return MGW_EINVAL;
	k->cl = mgw_client_new(k->base, NULL);
	k->body = evbuffer_new();
	k->timer = evtimer_new(k->base, on_fetch, k);
	k->kick = event_new(k->base, -1, 0, on_fetch, k);
	if (!k->cl || !k->body || !k->timer || !k->kick) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	oc.host = k->url.host;
	oc.port = k->url.port;
	oc.proto = MGW_CLIENT_H1;
	oc.tls = k->tls;
	oc.name = "jwks";
	if (mgw_client_origin_new(k->cl, &oc, &k->origin) != 0) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	k->retry_s = k->conf->jwks_min_interval;
	pthread_mutex_lock(&k->mu);
	k->in_flight = 1;
	pthread_mutex_unlock(&k->mu);
	event_active(k->kick, EV_READ, 0);
	return 0;
}

struct mgw_keyring *mgw_keyring_new(struct event_base *base,
                                    const struct mgw_auth_conf *conf,
                                    char *err, size_t errlen)
{
	struct mgw_keyring *k = calloc(1, sizeof(*k));

	if (!k) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	k->conf = conf;
	k->base = base;
	pthread_mutex_init(&k->mu, NULL);
	if (conf->jwks_file) {
		k->file_keys = mgw_jwks_load_file(conf->jwks_file, err, errlen);
		if (!k->file_keys)
			goto fail;
	}
	if (conf->jwks_url && base && fetcher_new(k, err, errlen) != 0)
		goto fail;
	pthread_mutex_lock(&k->mu);
	rebuild(k);
	pthread_mutex_unlock(&k->mu);
	atomic_store(&k->version, 1);
	return k;
fail:
	mgw_keyring_free(k);
	return NULL;
}

void mgw_keyring_adopt(struct mgw_keyring *k, const struct mgw_keyring *old)
{
	struct mgw_keyring *o = (struct mgw_keyring *)old;

	if (!o)
		return;
	/* the counters go on (Prometheus counters never go down) */
	atomic_store(&k->fetch_ok, atomic_load(&o->fetch_ok));
	atomic_store(&k->fetch_failed, atomic_load(&o->fetch_failed));
	atomic_store(&k->last_ok, atomic_load(&o->last_ok));
	if (!k->conf->jwks_url || !o->conf->jwks_url ||
	    strcmp(k->conf->jwks_url, o->conf->jwks_url) != 0)
		return;
	pthread_mutex_lock(&o->mu);
	struct mgw_jwks *f = o->fetched ? mgw_jwks_ref(o->fetched) : NULL;
	pthread_mutex_unlock(&o->mu);
	if (!f)
		return;
	pthread_mutex_lock(&k->mu);
	mgw_jwks_unref(k->fetched);
	k->fetched = f;
	rebuild(k);
	pthread_mutex_unlock(&k->mu);
	atomic_fetch_add(&k->version, 1);
}

void mgw_keyring_free(struct mgw_keyring *k)
{
	if (!k)
		return;
	if (k->watches)
		mgw_warn(NULL, "auth keyring freed with watches left");
	if (k->req)
		mgw_client_cancel(k->req);
	mgw_client_free(k->cl);
	if (k->tls)
		SSL_CTX_free(k->tls);
	if (k->timer)
		event_free(k->timer);
	if (k->kick)
		event_free(k->kick);
	if (k->body)
		evbuffer_free(k->body);
	mgw_jwks_unref(k->file_keys);
	mgw_jwks_unref(k->fetched);
	mgw_jwks_unref(k->cur);
	pthread_mutex_destroy(&k->mu);
	free(k);
}

/* ---- watches ---------------------------------------------------------- */

static void on_watch(void *arg)
{
	struct mgw_keyring_watch *w = arg;

	w->cb(w->arg);
}

struct mgw_keyring_watch *mgw_keyring_watch(struct mgw_keyring *k,
                                            struct event_base *base,
                                            void (*cb)(void *arg),
                                            void *arg)
{
	struct mgw_keyring_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->k = k;
	w->cb = cb;
	w->arg = arg;
	w->wake = mgw_wake_new(base, on_watch, w);
	if (!w->wake) {
		free(w);
		return NULL;
	}
	pthread_mutex_lock(&k->mu);
	w->next = k->watches;
	k->watches = w;
	pthread_mutex_unlock(&k->mu);
	return w;
}

void mgw_keyring_unwatch(struct mgw_keyring_watch *w)
{
	struct mgw_keyring *k;

	if (!w)
		return;
	k = w->k;
	pthread_mutex_lock(&k->mu);
	for (struct mgw_keyring_watch **p = &k->watches; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	mgw_wake_free(w->wake);
	pthread_mutex_unlock(&k->mu);
	free(w);
}

void mgw_keyring_stats(const struct mgw_keyring *k,
                       struct mgw_keyring_stats *st)
{
	struct mgw_keyring *m = (struct mgw_keyring *)k;

	st->fetch_ok = atomic_load_explicit(&k->fetch_ok, memory_order_relaxed);
	st->fetch_failed = atomic_load_explicit(&k->fetch_failed,
	                                        memory_order_relaxed);
	st->last_ok = atomic_load_explicit(&k->last_ok, memory_order_relaxed);
	pthread_mutex_lock(&m->mu);
	st->keys = k->cur ? mgw_jwks_count(k->cur) : 0;
	pthread_mutex_unlock(&m->mu);
}
