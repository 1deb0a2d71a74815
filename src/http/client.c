/* client.c - the upstream HTTP client: the client object with its limits
 * and counters, origins, and dispatch of queued requests to connections.
 * Requests live in client_req.c, connections in client_conn.c, the wire
 * protocols in client_h1.c and client_h2.c.
 *
 * Dispatch.  Submitting only queues a request on its origin and makes the
 * origin's kick event active; the kick hands queued requests to an idle
 * HTTP/1.1 connection (most recently used first, after checking the server
 * has not closed it meanwhile), to an HTTP/2 connection with a free stream
 * slot, or to a new connection while the origin is under its limit.  A new
 * HTTP/1.1 connection is reserved for the request that caused it; if that
 * request goes away first, the connection joins the idle pool when ready. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "core/errors.h"
#include "http/client.h"
#include "http/client_conn.h"

void mgw_client_limits_default(struct mgw_client_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->tmo.connect = 5;
	lim->tmo.first_byte = 60;
	lim->tmo.idle = 300;
	lim->tmo.total = 0;
	lim->max_conns_per_origin = 64;
	lim->max_idle_per_origin = 16;
	lim->max_pending_per_origin = 1024;
	lim->keepalive_timeout = 30;
	lim->idle_peek_after = 0.02;
	lim->max_header_bytes = 64 * 1024;
	lim->max_headers = 100;
	lim->h2_max_streams = 128;
	lim->h2_stream_window = 256 * 1024;
	lim->dns_cache_ttl = 30;
}

const char *mgw_client_err_class_name(enum mgw_client_err_class c)
{
	switch (c) {
	case MGW_CLIENT_E_DNS: return "dns";
	case MGW_CLIENT_E_CONNECT: return "connect";
	case MGW_CLIENT_E_TLS: return "tls";
	case MGW_CLIENT_E_TIMEOUT: return "timeout";
	case MGW_CLIENT_E_PROTO: return "protocol";
	case MGW_CLIENT_E_CLOSED: return "closed";
	case MGW_CLIENT_E_REFUSED: return "refused";
	case MGW_CLIENT_E_RESET: return "reset";
	case MGW_CLIENT_E_N: break;
	}
	return "unknown";
}

/* ---- origins and dispatch ---- */

void mgw_origin_kick(struct mgw_client_origin *o)
{
	event_active(o->kick, 0, 0);
}

static void origin_destroy(struct mgw_client_origin *o)
{
	struct mgw_client *cl = o->cl;

	/* drop every request silently, then the connections */
	for (struct mgw_client_conn *c = o->conns; c; c = c->next) {
		if (c->req) {
			c->req->cancelled = 1;
			mgw_creq_set_done(c->req);
		}
		for (struct mgw_client_req *r = c->streams; r; r = r->next)
			if (r->state != MGW_CRQ_DONE)
				mgw_creq_set_done(r);
	}
	while (o->conns)
		mgw_cconn_close(o->conns);
	while (o->qhead) {
		struct mgw_client_req *r = o->qhead;
		mgw_creq_set_done(r);
		mgw_creq_free(r);
	}
	if (o->prev)
		o->prev->next = o->next;
	else
		cl->origins = o->next;
	if (o->next)
		o->next->prev = o->prev;
	event_free(o->kick);
	if (o->tls)
		SSL_CTX_free(o->tls);
	free(o->host);
	free(o->sni);
	free(o->name);
	free(o->authority);
	free(o);
}

/* A connection that can take r now, or NULL. */
static struct mgw_client_conn *pick_conn(struct mgw_client_origin *o)
{
	for (struct mgw_client_conn *c = o->conns; c; c = c->next)
		if (c->h2 && !c->freeing && !c->closing && mgw_ch2_has_room(c))
			return c;
	while (o->idle) {
		struct mgw_client_conn *c = o->idle;
		mgw_cconn_idle_unlink(c);
		if (mgw_cconn_alive(c))
			return c;
		mgw_cconn_close(c);
	}
	return NULL;
}

static void attach(struct mgw_client_conn *c, struct mgw_client_req *r)
{
	struct mgw_client_origin *o = r->o;

	mgw_creq_unqueue(r);
	r->state = MGW_CRQ_ACTIVE;
	r->c = c;
	o->nactive++;
	if (c->used) {
		r->reused = 1;
		MGW_CSTAT_INC(o, conns_reused);
	}
	c->used = 1;
	if (c->h2) {
		int rv = mgw_ch2_submit(c, r);
		if (rv != 0) {
			o->nactive--;
			mgw_creq_enqueue(r, 1);
			return;
		}
		if (c->state == MGW_CC_READY) {
			mgw_creq_phase(r, MGW_PH_SEND);
			mgw_cconn_schedule(c);
		}
		return;
	}
	c->req = r;
	mgw_creq_phase(r, MGW_PH_SEND);
	mgw_ch1_send(c, r);
}

static int origin_mux(const struct mgw_client_origin *o)
{
	return o->proto == MGW_CLIENT_H2 ||
	       (o->proto == MGW_CLIENT_AUTO && o->tls && o->learned == 2);
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_client_origin *o = arg;
	const struct mgw_client_limits *lim = &o->cl->lim;
	size_t guard = o->nqueued + 16;

	(void)fd;
	(void)what;
	if (o->retired) {
		struct mgw_client_conn *c, *next;
		while (o->idle)
			mgw_cconn_close(o->idle);
		for (c = o->conns; c; c = next) {
			next = c->next;
			if (c->h2 && !c->streams && c->state == MGW_CC_READY)
				mgw_cconn_close(c);
		}
		if (o->nreqs == 0) {
			origin_destroy(o);
			return;
		}
	}
	while (o->qhead && guard--) {
		struct mgw_client_req *r = o->qhead;
		struct mgw_client_conn *c = pick_conn(o);
		if (c) {
			attach(c, r);
			continue;
		}
		if (o->nconns >= lim->max_conns_per_origin)
			break;
		if (origin_mux(o)) {
			/* one HTTP/2 connection at a time is being set up */
			if (o->nconnecting > 0 && o->proto == MGW_CLIENT_AUTO)
				break;
			mgw_cconn_open(o, NULL, r->tmo.connect);
			if (o->proto == MGW_CLIENT_AUTO)
				break; /* ALPN decides; the kick comes back */
			continue;
		}
		mgw_cconn_open(o, r, r->tmo.connect);
	}
}

const char *mgw_client_origin_name(const struct mgw_client_origin *o)
{
	return o->name;
}

static int is_ipv6_literal(const char *h)
{
	return strchr(h, ':') != NULL;
}

int mgw_client_origin_new(struct mgw_client *cl,
                          const struct mgw_client_origin_cfg *cfg,
                          struct mgw_client_origin **out)
{
	struct mgw_client_origin *o = NULL;
	char buf[300];
	int v6;
	uint16_t defport;

	*out = NULL;
	if (!cfg || !cfg->host || !*cfg->host || cfg->port == 0 ||
	    strlen(cfg->host) > 255 || (cfg->proto != MGW_CLIENT_H1 &&
	                                cfg->proto != MGW_CLIENT_H2 &&
	                                cfg->proto != MGW_CLIENT_AUTO))
		return MGW_EINVAL;
	for (const char *p = cfg->host; *p; p++)
		if (*p <= ' ' || *p == '/' || *p == '[' || *p == ']' || *p == 0x7f)
			return MGW_EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return MGW_ENOMEM;
	o->cl = cl;
	o->port = cfg->port;
	o->proto = cfg->proto;
	o->one_request = cfg->one_request != 0;
	if (o->proto == MGW_CLIENT_AUTO && !cfg->tls)
		o->proto = MGW_CLIENT_H1;
	o->host = strdup(cfg->host);
	o->sni = strdup(cfg->sni ? cfg->sni : cfg->host);
	v6 = is_ipv6_literal(cfg->host);
	snprintf(buf, sizeof(buf), v6 ? "[%s]:%u" : "%s:%u", cfg->host,
	         (unsigned)cfg->port);
	o->name = strdup(cfg->name ? cfg->name : buf);
	defport = cfg->tls ? 443 : 80;
	if (cfg->port == defport)
		snprintf(buf, sizeof(buf), v6 ? "[%s]" : "%s", cfg->host);
	o->authority = strdup(buf);
	o->kick = event_new(cl->base, -1, 0, on_kick, o);
	if (!o->host || !o->sni || !o->name || !o->authority || !o->kick)
		goto fail;
	if (cfg->tls) {
		if (SSL_CTX_up_ref(cfg->tls) != 1)
			goto fail;
		o->tls = cfg->tls;
	}
	o->next = cl->origins;
	if (cl->origins)
		cl->origins->prev = o;
	cl->origins = o;
	*out = o;
	return 0;
fail:
	if (o->kick)
		event_free(o->kick);
	free(o->host);
	free(o->sni);
	free(o->name);
	free(o->authority);
	free(o);
	return MGW_ENOMEM;
}

void mgw_client_origin_free(struct mgw_client_origin *o)
{
	if (!o)
		return;
	o->retired = 1;
	mgw_origin_kick(o);
}

/* ---- client ---- */

struct mgw_client *mgw_client_new(struct event_base *base,
                                  const struct mgw_client_limits *lim)
{
	struct mgw_client *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->base = base;
	if (lim)
		cl->lim = *lim;
	else
		mgw_client_limits_default(&cl->lim);
	if (cl->lim.max_conns_per_origin == 0)
		cl->lim.max_conns_per_origin = 1;
	if (cl->lim.h2_max_streams == 0)
		cl->lim.h2_max_streams = 1;
	if (cl->lim.h2_stream_window < 65535)
		cl->lim.h2_stream_window = 65535;
	if (cl->lim.h2_stream_window > 0x7fffffff)
		cl->lim.h2_stream_window = 0x7fffffff;
	return cl;
}

void mgw_client_free(struct mgw_client *cl)
{
	if (!cl)
		return;
	while (cl->origins) {
		struct mgw_client_origin *o = cl->origins;
		for (struct mgw_client_req *r = o->qhead; r; r = r->next)
			r->cancelled = 1;
		origin_destroy(o);
	}
	mgw_resolver_free(cl->res);
	free(cl);
}

static void sum_stats(struct mgw_client_stats *st, const struct mgw_client_origin *o)
{
	st->conns_open += o->nconns - o->nconnecting;
	st->conns_idle += o->nidle;
	st->pending += o->nqueued;
	st->inflight += o->nactive;
}

void mgw_client_stats(const struct mgw_client *cl,
                      const struct mgw_client_origin *o,
                      struct mgw_client_stats *st)
{
	*st = o ? o->st : cl->st;
	st->conns_open = st->conns_idle = st->pending = st->inflight = 0;
	if (o) {
		sum_stats(st, o);
		return;
	}
	for (const struct mgw_client_origin *p = cl->origins; p; p = p->next)
		sum_stats(st, p);
}
