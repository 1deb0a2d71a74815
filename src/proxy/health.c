/* health.c - active health checks (see health.h): one probe at a time per
 * server on the checker's event loop, rise/fall hysteresis kept apart
 * from the I/O in mgw_health_sm_feed, verdicts published through the
 * servers' shared atomics. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "mcp/jsonrpc.h"
#include "mcp/sep2243.h"
#include "net/resolve.h"
#include "proxy/conf_serve.h"
#include "proxy/health.h"
#include "proxy/hints.h"
#include "proxy/tools_probe.h"
#include "proxy/upstream.h"
#include "util/rand.h"
#include "util/time.h"

/* ---- hysteresis ---- */

void mgw_health_sm_init(struct mgw_health_sm *sm)
{
	memset(sm, 0, sizeof(*sm));
	sm->up = 1;
}

enum mgw_health_change mgw_health_sm_feed(struct mgw_health_sm *sm, int ok,
                                          uint32_t rise, uint32_t fall)
{
	int was = sm->up;

	if (!sm->decided) {
		/* The first probe decides alone: waiting `fall` probes would
		 * send traffic to a replica that is dead at start. */
		sm->decided = 1;
		sm->ok_run = sm->fail_run = 0;
		sm->up = ok ? 1 : 0;
	} else if (ok) {
		sm->fail_run = 0;
		if (!sm->up && ++sm->ok_run >= (rise ? rise : 1)) {
			sm->up = 1;
			sm->ok_run = 0;
		}
	} else {
		sm->ok_run = 0;
		if (sm->up && ++sm->fail_run >= (fall ? fall : 1)) {
			sm->up = 0;
			sm->fail_run = 0;
		}
	}
	if (sm->up == was)
		return MGW_HEALTH_SAME;
	return sm->up ? MGW_HEALTH_WENT_UP : MGW_HEALTH_WENT_DOWN;
}

/* ---- answers ---- */

/* Body bytes kept from a probe answer: a JSON-RPC error fits. */
#define PROBE_BODY_MAX 4096

enum mgw_probe_answer mgw_health_classify(int status, int expect_status,
                                          const void *body, size_t len)
{
	struct mgw_jrpc_msg m;
	int jrpc_error = 0;

	if (status == expect_status)
		return MGW_PROBE_PASS;
	if (status != 400 && status != 404 && status != 405)
		return MGW_PROBE_OTHER;
	if (len && mgw_jrpc_classify(body, len, 0, &m) == 0) {
		jrpc_error = m.kind == MGW_JRPC_RESPONSE && mgw_jrpc_root(&m) &&
		             json_object_get(mgw_jrpc_root(&m), "error") != NULL;
		mgw_jrpc_msg_deinit(&m);
	}
	if (jrpc_error)
		return MGW_PROBE_LEGACY;
	return status == 404 ? MGW_PROBE_NOT_FOUND : MGW_PROBE_OTHER;
}

int mgw_health_conf_is_default(const struct mgw_health_conf *h)
{
	return h->type == MGW_PROBE_HTTP && !h->path && !h->n_headers &&
	       h->expect_status == 200 && h->method &&
	       strcmp(h->method, "POST") == 0 && h->body &&
	       strcmp(h->body, mgw_config_default_probe_body) == 0;
}

/* ---- the checker ---- */

struct probe {
	struct mgw_health *h;
	struct mgw_upstream_server *s;
	const struct mgw_health_conf *conf;
	struct mgw_health_sm sm;
	struct event *tick;               /* next probe */
	struct event *deadline;           /* TCP probe timeout */
	int running;
	/* http */
	struct mgw_client_origin *origin;
	struct mgw_client_req *req;
	struct mgw_headers hdrs;          /* built once */
	int status;
	int era_aware;                    /* the default probe: legacy passes */
	unsigned char body[PROBE_BODY_MAX]; /* the answer's first bytes */
	size_t body_len;
	/* the first round (hints) */
	int first_done;
	enum mgw_probe_answer first;      /* PASS for TCP and errors too */
	/* tcp */
	struct mgw_resolve_req *rq;
	struct bufferevent *bev;
};

struct mgw_health {
	struct event_base *base;
	struct mgw_upstreams *ups;
	struct mgw_client *client;
	struct mgw_resolver *resolver;
	struct probe *probes;
	size_t n;
	struct mgw_tools_probe **tools;   /* groups with tools_probe on/auto */
	size_t n_tools;
	struct mgw_health_stats st;
};

static void schedule(struct probe *p, double seconds)
{
	struct timeval tv = mgw_tv(seconds);

	evtimer_add(p->tick, &tv);
}

/* Probes of many servers should not run in lock step: each interval is
 * stretched or shortened by up to 10 %. */
static double jittered(double interval)
{
	double f = 0.9 + (double)mgw_random_below(2001) / 10000.0;

	return interval * f;
}

static void first_round(struct probe *p, enum mgw_probe_answer a);

static void finish(struct probe *p, int ok, const char *why)
{
	struct mgw_health *h = p->h;
	enum mgw_health_change ch;

	p->running = 0;
	if (ok)
		h->st.ok++;
	else
		h->st.failed++;
	ch = mgw_health_sm_feed(&p->sm, ok, p->conf->rise, p->conf->fall);
	if (ch == MGW_HEALTH_WENT_DOWN) {
		h->st.went_down++;
		mgw_upstream_set_health(p->s, 0);
		mgw_event(NULL, "upstream_down", "server=%s by=health detail=\"%s\"",
		          p->s->name, why);
	} else if (ch == MGW_HEALTH_WENT_UP) {
		h->st.went_up++;
		mgw_upstream_set_health(p->s, 1);
		mgw_event(NULL, "upstream_up", "server=%s by=health", p->s->name);
	} else if (!ok) {
		mgw_debug(NULL, "upstream %s probe failed: %s", p->s->name, why);
	}
}

/* -- the first round -- */

/* Every server of p's group answered its first probe in the same
 * telling way: one line at warn (health.h). */
static void group_hint(struct probe *p, enum mgw_probe_answer a)
{
	const struct mgw_upstream_group *g = p->s->group;
	const struct mgw_serve_conf *sc = g->ups->conf;
	char msg[512];

	if (a == MGW_PROBE_LEGACY && p->era_aware &&
	    sc->mode == MGW_MODE_STATELESS)
		mgw_warn(NULL, "upstream '%s': every server answers the modern "
		         "health probe as a legacy (2025-11-25) server; stateless "
		         "mode balances each request on its own, so their sessions "
		         "break across servers: use mode auto (the default) or "
		         "stateful", g->name);
	else if (a == MGW_PROBE_LEGACY && !p->era_aware)
		mgw_warn(NULL, "upstream '%s': every server answers the health "
		         "probe as a legacy server (status %d with a JSON-RPC "
		         "error: it wants a session) and is marked down; remove "
		         "health.expect_status/body/path to use the default probe, "
		         "which both eras pass", g->name, p->status);
	else if (a == MGW_PROBE_NOT_FOUND &&
	         !mgw_hint_doubled_path(sc, g->index, msg, sizeof(msg)))
		mgw_warn(NULL, "upstream '%s': every server answers the health "
		         "probe %s %s with 404 and is marked down; the gateway "
		         "appends the request path to the server URL's path: check "
		         "the URLs' paths (or health.path)", g->name,
		         p->conf->method, p->s->probe_path);
}

static void first_round(struct probe *p, enum mgw_probe_answer a)
{
	struct mgw_health *h = p->h;

	if (p->first_done)
		return;
	p->first_done = 1;
	p->first = a;
	if (a == MGW_PROBE_PASS || a == MGW_PROBE_OTHER)
		return;
	for (size_t i = 0; i < h->n; i++) {
		const struct probe *q = &h->probes[i];

		if (q->s->group != p->s->group)
			continue;
		if (!q->first_done || q->first != a)
			return;
	}
	group_hint(p, a);
}

/* -- HTTP probe -- */

static void on_head(struct mgw_client_req *r, int status,
                    const struct mgw_headers *headers, void *arg)
{
	struct probe *p = arg;

	(void)r;
	(void)headers;
	p->status = status;
}

/* The first bytes are kept: a legacy server's JSON-RPC error. */
static void on_data(struct mgw_client_req *r, const unsigned char *data,
                    size_t len, void *arg)
{
	struct probe *p = arg;
	size_t room = sizeof(p->body) - p->body_len;

	(void)r;
	if (len > room)
		len = room;
	memcpy(p->body + p->body_len, data, len);
	p->body_len += len;
}

static void on_end(struct mgw_client_req *r, void *arg)
{
	struct probe *p = arg;
	enum mgw_probe_answer a;
	char why[96];

	(void)r;
	p->req = NULL;
	a = mgw_health_classify(p->status, p->conf->expect_status, p->body,
	                        p->body_len);
	first_round(p, a);
	if (a == MGW_PROBE_PASS || (a == MGW_PROBE_LEGACY && p->era_aware)) {
		finish(p, 1, "");
		return;
	}
	snprintf(why, sizeof(why), "status %d (expected %d)%s", p->status,
	         p->conf->expect_status,
	         a == MGW_PROBE_LEGACY ? ", a legacy server's answer" : "");
	finish(p, 0, why);
}

static void on_error(struct mgw_client_req *r, const struct mgw_client_error *e,
                     void *arg)
{
	struct probe *p = arg;
	char why[160];
	const char *cls = mgw_client_err_class_name(e->cls);
	const char *msg = e->msg ? e->msg : mgw_strerror(e->code);

	/* "connect: connect failed: ..." says it twice */
	if (strncmp(msg, cls, strlen(cls)) == 0)
		snprintf(why, sizeof(why), "%s", msg);
	else
		snprintf(why, sizeof(why), "%s: %s", cls, msg);
	(void)r;
	p->req = NULL;
	first_round(p, MGW_PROBE_OTHER);
	finish(p, 0, why);
}

static void start_http(struct probe *p)
{
	const struct mgw_health_conf *hc = p->conf;
	struct mgw_client_timeouts tmo = {
		.connect = hc->timeout, .first_byte = hc->timeout,
		.idle = hc->timeout, .total = hc->timeout,
	};
	struct mgw_client_reqspec spec = {
		.method = hc->method, .target = p->s->probe_path,
		.headers = &p->hdrs, .body = hc->body,
		.body_len = hc->body ? strlen(hc->body) : 0, .tmo = &tmo,
		.on_head = on_head, .on_data = on_data, .on_end = on_end,
		.on_error = on_error, .arg = p,
	};
	char why[96];
	int rc;

	p->status = 0;
	p->body_len = 0;
	rc = mgw_client_request(p->origin, &spec, &p->req);
	if (rc != 0) {
		p->req = NULL;
		first_round(p, MGW_PROBE_OTHER);
		snprintf(why, sizeof(why), "request not sent: %s", mgw_strerror(rc));
		finish(p, 0, why);
	}
}

/* -- TCP probe -- */

static void tcp_done(struct probe *p, int ok, const char *why)
{
	if (p->rq) {
		mgw_resolve_cancel(p->rq);
		p->rq = NULL;
	}
	if (p->bev) {
		bufferevent_free(p->bev);
		p->bev = NULL;
	}
	evtimer_del(p->deadline);
	first_round(p, MGW_PROBE_OTHER);
	finish(p, ok, why);
}

static void on_tcp_event(struct bufferevent *bev, short what, void *arg)
{
	struct probe *p = arg;
	char why[160];
	int err = EVUTIL_SOCKET_ERROR();

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		tcp_done(p, 1, "");
		return;
	}
	snprintf(why, sizeof(why), "connect: %s",
	         err ? evutil_socket_error_to_string(err) : "connection failed");
	tcp_done(p, 0, why);
}

static void tcp_connect(struct probe *p, const struct mgw_addrs *a)
{
	char why[160];

	p->bev = bufferevent_socket_new(p->h->base, -1,
	                                BEV_OPT_CLOSE_ON_FREE);
	if (!p->bev) {
		tcp_done(p, 0, "out of memory");
		return;
	}
	bufferevent_setcb(p->bev, NULL, NULL, on_tcp_event, p);
	if (bufferevent_socket_connect(p->bev, (struct sockaddr *)&a->a[0],
	                               (int)a->len[0]) != 0) {
		int err = EVUTIL_SOCKET_ERROR();
		snprintf(why, sizeof(why), "connect: %s",
		         err ? evutil_socket_error_to_string(err) : "failed");
		tcp_done(p, 0, why);
	}
}

static void on_resolved(int err, const struct mgw_addrs *addrs,
                        const char *msg, void *arg)
{
	struct probe *p = arg;
	char why[160];

	p->rq = NULL;
	if (err != 0) {
		snprintf(why, sizeof(why), "dns: %s", msg ? msg : mgw_strerror(err));
		tcp_done(p, 0, why);
		return;
	}
	tcp_connect(p, addrs);
}

static void on_tcp_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct probe *p = arg;

	(void)fd;
	(void)what;
	tcp_done(p, 0, "timeout");
}

static void start_tcp(struct probe *p)
{
	struct timeval tv = mgw_tv(p->conf->timeout);
	struct mgw_addrs a;
	char why[96];
	int rc;

	evtimer_add(p->deadline, &tv);
	if (mgw_resolve_numeric(p->s->host, p->s->port, &a)) {
		tcp_connect(p, &a);
		return;
	}
	rc = mgw_resolve(p->h->resolver, p->s->host, p->s->port, on_resolved, p,
	                 &p->rq);
	if (rc != 0) {
		p->rq = NULL;
		snprintf(why, sizeof(why), "dns: %s", mgw_strerror(rc));
		tcp_done(p, 0, why);
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct probe *p = arg;

	(void)fd;
	(void)what;
	schedule(p, jittered(p->conf->interval));
	if (p->running)
		return; /* the previous probe is still within its timeout */
	p->running = 1;
	p->h->st.probes++;
	if (p->conf->type == MGW_PROBE_TCP)
		start_tcp(p);
	else
		start_http(p);
}

/* ---- construction ---- */

static int add_header(struct mgw_headers *h, const char *name,
                      const char *value)
{
	return mgw_headers_adds(h, name, value);
}

/* Content-Type / Accept for a body, the SEP-2243 headers mirrored from a
 * JSON-RPC body, the group's static upstream credential, then the
 * configured headers (which replace ours of the same name). */
static int build_headers(struct probe *p, char *err, size_t errlen)
{
	const struct mgw_health_conf *hc = p->conf;
	struct mgw_jrpc_msg m;
	size_t blen = hc->body ? strlen(hc->body) : 0;
	int rc = 0;

	if (blen) {
		rc |= add_header(&p->hdrs, "Content-Type", "application/json");
		rc |= add_header(&p->hdrs, "Accept",
		                 "application/json, text/event-stream");
		if (mgw_jrpc_classify(hc->body, blen, 0, &m) != 0)
			goto nomem;
		if (m.kind == MGW_JRPC_REQUEST || m.kind == MGW_JRPC_NOTIFICATION) {
			char *method = mgw_sep2243_encode(m.method, strlen(m.method));
			char *name = m.name ? mgw_sep2243_encode(m.name, strlen(m.name))
			                    : NULL;

			if (m.meta_protocol_version)
				rc |= add_header(&p->hdrs, "MCP-Protocol-Version",
				                 m.meta_protocol_version);
			rc |= method ? add_header(&p->hdrs, "Mcp-Method", method)
			             : MGW_ENOMEM;
			if (m.name)
				rc |= name ? add_header(&p->hdrs, "Mcp-Name", name)
				           : MGW_ENOMEM;
			free(method);
			free(name);
		}
		mgw_jrpc_msg_deinit(&m);
	}
	/* upstream_auth static: a probe is a request the gateway sends */
	if (p->s->group->credential)
		rc |= add_header(&p->hdrs, "Authorization",
		                 p->s->group->credential);
	for (size_t i = 0; i < hc->n_headers; i++)
		mgw_headers_remove(&p->hdrs, hc->headers[i].name);
	for (size_t i = 0; i < hc->n_headers; i++)
		rc |= add_header(&p->hdrs, hc->headers[i].name,
		                 hc->headers[i].value);
	if (rc == 0)
		return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return MGW_ENOMEM;
}

static int probe_init(struct mgw_health *h, struct probe *p,
                      struct mgw_upstream_server *s, char *err, size_t errlen)
{
	struct mgw_client_origin_cfg oc;
	int rc;

	p->h = h;
	p->s = s;
	p->conf = &s->group->conf->health;
	p->era_aware = mgw_health_conf_is_default(p->conf);
	mgw_health_sm_init(&p->sm);
	mgw_headers_init(&p->hdrs);
	p->tick = evtimer_new(h->base, on_tick, p);
	p->deadline = evtimer_new(h->base, on_tcp_deadline, p);
	if (!p->tick || !p->deadline)
		goto nomem;
	if (p->conf->type == MGW_PROBE_TCP)
		return 0;
	rc = build_headers(p, err, errlen);
	if (rc != 0)
		return rc;
	mgw_upstream_origin_cfg(s, &oc);
	rc = mgw_client_origin_new(h->client, &oc, &p->origin);
	if (rc != 0) {
		snprintf(err, errlen, "upstream %s: health checks: %s", s->name,
		         mgw_strerror(rc));
		return rc;
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return MGW_ENOMEM;
}

struct mgw_health *mgw_health_new(struct event_base *base,
                                  struct mgw_upstreams *ups, char *err,
                                  size_t errlen)
{
	struct mgw_client_limits lim;
	struct mgw_health *h = calloc(1, sizeof(*h));
	size_t n = 0, k = 0, nt = 0;

	if (!h)
		goto nomem;
	h->base = base;
	h->ups = ups;
	for (size_t g = 0; g < ups->n_groups; g++) {
		if (ups->groups[g].conf->health.enabled)
			n += ups->groups[g].n_servers;
		nt += ups->groups[g].conf->tools_probe != MGW_TOOLS_PROBE_OFF;
	}
	if (n == 0 && nt == 0)
		return h;
	h->probes = calloc(n ? n : 1, sizeof(*h->probes));
	h->tools = calloc(nt ? nt : 1, sizeof(*h->tools));
	/* A fresh connection per probe: a pooled one could stay up while
	 * the listener behind it is gone, or fail only because the server
	 * closed it while idle. */
	mgw_client_limits_default(&lim);
	lim.max_idle_per_origin = 0;      /* HTTP/1.1: close after each probe */
	lim.keepalive_timeout = 0.001;    /* HTTP/2: close once streamless
	                                   * (0 would mean "never" there) */
	lim.max_conns_per_origin = 2;
	lim.max_pending_per_origin = 2;
	h->client = mgw_client_new(base, &lim);
	h->resolver = mgw_resolver_new(base);
	if (!h->probes || !h->tools || !h->client || !h->resolver)
		goto nomem;
	for (size_t g = 0; g < ups->n_groups; g++) {
		if (ups->groups[g].conf->tools_probe == MGW_TOOLS_PROBE_OFF)
			continue;
		h->tools[h->n_tools] = mgw_tools_probe_new(base, h->client,
		                                           &ups->groups[g], err, errlen);
		if (!h->tools[h->n_tools])
			goto fail;
		h->n_tools++;
	}
	for (size_t g = 0; g < ups->n_groups; g++) {
		struct mgw_upstream_group *grp = &ups->groups[g];

		if (!grp->conf->health.enabled)
			continue;
		for (size_t i = 0; i < grp->n_servers; i++) {
			h->n = ++k; /* so a failure frees what exists */
			if (probe_init(h, &h->probes[k - 1], &grp->servers[i], err,
			               errlen) != 0)
				goto fail;
		}
	}
	return h;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	mgw_health_free(h);
	return NULL;
}

int mgw_health_start(struct mgw_health *h)
{
	for (size_t i = 0; i < h->n; i++)
		schedule(&h->probes[i], 0);
	for (size_t i = 0; i < h->n_tools; i++)
		mgw_tools_probe_start(h->tools[i]);
	return 0;
}

void mgw_health_free(struct mgw_health *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++) {
		struct probe *p = &h->probes[i];

		if (p->tick)
			event_free(p->tick);
		if (p->deadline)
			event_free(p->deadline);
		if (p->rq)
			mgw_resolve_cancel(p->rq);
		if (p->bev)
			bufferevent_free(p->bev);
		mgw_headers_deinit(&p->hdrs);
	}
	for (size_t i = 0; i < h->n_tools; i++)
		mgw_tools_probe_free(h->tools[i]);
	free(h->tools);
	/* drops in-flight probe requests without callbacks, and origins */
	mgw_client_free(h->client);
	mgw_resolver_free(h->resolver);
	free(h->probes);
	free(h);
}

size_t mgw_health_count(const struct mgw_health *h)
{
	return h->n;
}

void mgw_health_stats(const struct mgw_health *h, struct mgw_health_stats *st)
{
	*st = h->st;
}

void mgw_health_adopt(struct mgw_health *h, const struct mgw_health *old)
{
	h->st = old->st;
	for (size_t i = 0; i < h->n; i++) {
		struct probe *p = &h->probes[i];

		for (size_t j = 0; j < old->n; j++) {
			const struct probe *o = &old->probes[j];

			if (strcmp(o->s->group->name, p->s->group->name) == 0 &&
			    strcmp(o->s->conf->url, p->s->conf->url) == 0) {
				p->sm = o->sm;
				break;
			}
		}
	}
}
