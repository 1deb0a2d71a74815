/* forward.c - the stateless request path: MCP look (classification, era,
 * SEP-2243 validation) without touching the bytes, routing, server
 * choice, forwarding through the client layer, streaming the answer back
 * with backpressure, retries that are provably safe, and one access log
 * line per request.  See forward.h for the contract and doc/serve.md for
 * the behaviour as users see it.  In modes stateful and auto the requests
 * mgw_sf_claims are handed to the stateful path (stateful.c) right after
 * classification; GET /mcpgw/stats is answered here (admin.c).
 *
 * One struct fwd_req lives exactly as long as its client exchange: it is
 * freed when the answer is complete (respond / stream_end / stream_abort)
 * or when the client goes away (on_abort).  An upstream attempt lives
 * inside it and is always ended (its own end or error, or a cancel) before
 * the fwd_req goes. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "mcp/era.h"
#include "mcp/jsonrpc.h"
#include "mcp/sep2243.h"
#include "proxy/admin.h"
#include "proxy/errors.h"
#include "proxy/forward.h"
#include "proxy/retry.h"
#include "proxy/route.h"
#include "proxy/stateful.h"
#include "proxy/upstream.h"
#include "util/time.h"

/* Largest piece handed to the server layer at once when held data is
 * flushed after a drain: keeps each write well under its 4x-watermark
 * refusal. */
#define FLUSH_PIECE (32 * 1024)

enum resp_mode {
	RESP_NONE = 0,   /* no response head from the upstream yet */
	RESP_COLLECT,    /* head kept, body collected, answered at the end */
	RESP_STREAM,     /* head sent to the client, body streamed */
};

struct fwd_req {
	struct mgw_fwd *f;
	struct mgw_http_exchange *x;      /* NULL once the client side ended */
	const struct mgw_route *route;
	struct mgw_jrpc_msg msg;
	int have_msg;
	int as_json;                      /* gateway errors as JSON-RPC */
	struct mgw_headers hdrs;          /* what goes upstream */
	uint64_t t0;                      /* monotonic ms at arrival */
	/* the current attempt */
	struct mgw_client_req *up;
	struct mgw_upstream_server *srv;  /* acquired while up is live */
	struct mgw_upstream_tried tried;
	unsigned attempts;
	const char *last_server;          /* for the access log */
	/* the response */
	enum resp_mode mode;
	int status;
	struct mgw_headers resp_hdrs;     /* RESP_COLLECT only */
	size_t expect_len;                /* RESP_COLLECT: Content-Length */
	struct evbuffer *buf;             /* collected body / held stream data */
	int paused;                       /* upstream delivery paused */
	int up_ended;                     /* upstream done, held data pending */
	uint64_t bytes;                   /* response body bytes to the client */
	const char *note;                 /* why it ended, for the log */
};

/* ---- small helpers ---------------------------------------------------- */

static void req_logctx(const struct fwd_req *q, struct mgw_log_ctx *ctx)
{
	ctx->conn_id = q->x ? mgw_http_conn_id(q->x) : 0;
	ctx->stream_id = q->x ? mgw_http_stream_id(q->x) : -1;
	ctx->session = NULL;
}

/* The Mcp-Method for the log: the body's method when it was classified,
 * else the header, else "-". */
static const char *log_mcp_method(const struct fwd_req *q)
{
	const char *m = NULL;

	if (q->have_msg && q->msg.method)
		m = q->msg.method;
	else if (q->x)
		m = mgw_http_req_header(q->x, "mcp-method");
	return m ? m : "-";
}

/* One line per request at info when access logging is on (log.access,
 * --access-log): method, path, Mcp-Method, upstream
 * server, status, duration, attempts and why it ended when not plainly.
 * Only called while q->x is still valid. */
static void access_log(struct fwd_req *q, int status)
{
	struct mgw_log_ctx ctx;
	double ms;

	if (!mgw_log_access_enabled())
		return;
	ms = (double)(mgw_now_ms() - q->t0);
	req_logctx(q, &ctx);
	mgw_log(MGW_LOG_INFO, &ctx, "%s %s mcp=%s upstream=%s status=%d %.0fms%s%s%s",
	        mgw_http_method(q->x), mgw_http_path(q->x), log_mcp_method(q),
	        q->last_server ? q->last_server : "-", status, ms,
	        q->attempts > 1 ? " retried" : "", q->note ? " " : "",
	        q->note ? q->note : "");
}

static void release_server(struct fwd_req *q)
{
	if (q->srv) {
		mgw_upstream_release(q->srv);
		q->srv = NULL;
	}
}

/* Frees q; the exchange must already be finished or gone, and the
 * upstream attempt ended. */
static void req_free(struct fwd_req *q)
{
	if (q->up) {
		mgw_client_cancel(q->up);
		q->up = NULL;
	}
	release_server(q);
	if (q->have_msg)
		mgw_jrpc_msg_deinit(&q->msg);
	mgw_headers_deinit(&q->hdrs);
	mgw_headers_deinit(&q->resp_hdrs);
	if (q->buf)
		evbuffer_free(q->buf);
	mgw_upstream_tried_free(&q->tried);
	q->f->live--;
	free(q);
}

/* Answers with a prepared reply, logs, and frees q. */
static void finish_reply(struct fwd_req *q, struct mgw_proxy_reply *r,
                         const struct mgw_headers *extra)
{
	access_log(q, r->status);
	mgw_http_respond(q->x, r->status, extra, r->content_type, r->body, r->len);
	q->x = NULL;
	mgw_proxy_reply_deinit(r);
	req_free(q);
}

/* Answers one of the gateway's own errors (JSON-RPC body with the request
 * id when the request was JSON-RPC), logs, and frees q.  The upstream
 * attempt, if any, must have ended. */
static void fail_req(struct fwd_req *q, enum mgw_proxy_error e,
                     const char *detail)
{
	struct mgw_proxy_reply r;

	q->f->st.errors[e < MGW_PERR_N ? e : MGW_PERR_INTERNAL]++;
	if (!q->note)
		q->note = mgw_proxy_error_info(e)->name;
	if (mgw_proxy_reply_error(&r, e, detail, q->as_json,
	                          mgw_proxy_reply_id(q->have_msg ? &q->msg : NULL)) != 0) {
		/* no memory for a body: the status alone still tells */
		access_log(q, mgw_proxy_error_info(e)->status);
		mgw_http_respond(q->x, mgw_proxy_error_info(e)->status, NULL, NULL,
		                 NULL, 0);
		q->x = NULL;
		req_free(q);
		return;
	}
	finish_reply(q, &r, NULL);
}

/* ---- headers to the upstream ------------------------------------------ */

/* Client-supplied forwarding fields, dropped unless trusted: they would
 * let a client pose as someone else to the upstream. */
static int is_forwarding_field(const struct mgw_header *f)
{
	return MGW_HEADER_IS(f, "forwarded") ||
	       MGW_HEADER_IS(f, "x-forwarded-for") ||
	       MGW_HEADER_IS(f, "x-forwarded-host") ||
	       MGW_HEADER_IS(f, "x-forwarded-proto") ||
	       MGW_HEADER_IS(f, "x-real-ip");
}

/* The address part of "IP:PORT" / "[V6]:PORT" into buf (brackets kept
 * for IPv6, as Forwarded wants them). */
static const char *peer_ip(const char *peer, char *buf, size_t len, int *v6)
{
	const char *colon;
	size_t n;

	*v6 = peer[0] == '[';
	if (*v6) {
		const char *e = strchr(peer, ']');
		n = e ? (size_t)(e - peer) + 1 : strlen(peer);
	} else {
		colon = strrchr(peer, ':');
		n = colon ? (size_t)(colon - peer) : strlen(peer);
	}
	if (n >= len)
		n = len - 1;
	memcpy(buf, peer, n);
	buf[n] = '\0';
	return buf;
}

/* Appends value as an RFC 9110 quoted-string to dst (capacity cap). */
static void quoted(char *dst, size_t cap, const char *value)
{
	size_t n = strlen(dst);

	if (n + 1 < cap)
		dst[n++] = '"';
	for (; *value && n + 3 < cap; value++) {
		if (*value == '"' || *value == '\\')
			dst[n++] = '\\';
		dst[n++] = *value;
	}
	if (n + 1 < cap)
		dst[n++] = '"';
	dst[n] = '\0';
}

/* RFC 9113 8.2.3: an HTTP/2 client may split Cookie into crumbs; they go
 * upstream as one field, joined with "; ", in one copy (joining crumb by
 * crumb would copy the value once per crumb).  first is the index in in
 * of the first crumb. */
static int join_cookies(struct mgw_headers *out, const struct mgw_headers *in,
                        size_t first)
{
	const struct mgw_header *f = &in->v[first];
	size_t len = 0, n = 0;
	char *v;
	int rc;

	for (size_t i = first; i < in->n; i++)
		if (MGW_HEADER_IS(&in->v[i], "cookie")) {
			len += in->v[i].value_len + (n ? 2 : 0);
			n++;
		}
	if (n == 1)
		return mgw_headers_add(out, f->name, f->name_len, f->value,
		                       f->value_len);
	if (!(v = malloc(len + 1)))
		return MGW_ENOMEM;
	len = 0;
	for (size_t i = first; i < in->n; i++)
		if (MGW_HEADER_IS(&in->v[i], "cookie")) {
			if (len) {
				memcpy(v + len, "; ", 2);
				len += 2;
			}
			memcpy(v + len, in->v[i].value, in->v[i].value_len);
			len += in->v[i].value_len;
		}
	rc = mgw_headers_add(out, f->name, f->name_len, v, len);
	free(v);
	return rc;
}

int mgw_fwd_build_headers(struct mgw_headers *out,
                          const struct mgw_headers *in,
                          const struct mgw_serve_conf *conf,
                          const char *peer, int tls, const char *authority,
                          int h2)
{
	size_t last_xff = (size_t)-1;    /* index in out of the last XFF kept */
	int cookies_joined = 0;
	char ip[80];
	int v6 = 0;

	for (size_t i = 0; in && i < in->n; i++) {
		const struct mgw_header *f = &in->v[i];

		if (mgw_header_is_hop_by_hop(f->name) ||
		    mgw_headers_connection_lists(in, f->name) ||
		    MGW_HEADER_IS(f, "host") || MGW_HEADER_IS(f, "content-length") ||
		    MGW_HEADER_IS(f, "expect"))
			continue;
		if (is_forwarding_field(f) && !conf->trust_forwarded)
			continue;
		if (h2 && MGW_HEADER_IS(f, "cookie")) {
			if (!cookies_joined && join_cookies(out, in, i) != 0)
				return MGW_ENOMEM;
			cookies_joined = 1;
			continue;
		}
		if (MGW_HEADER_IS(f, "x-forwarded-for"))
			last_xff = out->n;
		if (mgw_headers_add(out, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	if (!conf->add_forwarded)
		return 0;
	peer_ip(peer ? peer : "", ip, sizeof(ip), &v6);
	{
		char fwd[512] = "for=";

		if (v6)
			quoted(fwd, sizeof(fwd), ip);
		else
			strncat(fwd, ip, sizeof(fwd) - strlen(fwd) - 1);
		strncat(fwd, tls ? ";proto=https" : ";proto=http",
		        sizeof(fwd) - strlen(fwd) - 1);
		if (authority && *authority) {
			strncat(fwd, ";host=", sizeof(fwd) - strlen(fwd) - 1);
			quoted(fwd, sizeof(fwd), authority);
		}
		if (mgw_headers_adds(out, "Forwarded", fwd) != 0)
			return MGW_ENOMEM;
	}
	{
		/* X-Forwarded-For carries IPv6 without brackets */
		const char *bare = ip;
		char tmp[80];

		if (v6) {
			size_t n = strlen(ip);
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(n > 2 ? n - 2 : 0), ip + 1);
			bare = tmp;
		}
		if (last_xff != (size_t)-1) {
			/* trusted chain: extend the last field, keep its place */
			if (mgw_headers_append_value(out, last_xff, ", ", bare,
			                             strlen(bare)) != 0)
				return MGW_ENOMEM;
		} else if (mgw_headers_adds(out, "X-Forwarded-For", bare) != 0) {
			return MGW_ENOMEM;
		}
	}
	return 0;
}

/* ---- MCP endpoint ------------------------------------------------------ */

int mgw_fwd_is_mcp_endpoint(const char *method, const char *path,
                            const struct mgw_headers *h)
{
	const char *accept;

	if (strcmp(method, "GET") != 0 && strcmp(method, "DELETE") != 0)
		return 0;
	if (path && strcmp(path, "/mcp") == 0)
		return 1;
	if (h && (mgw_headers_get(h, "mcp-session-id") ||
	          mgw_headers_get(h, "mcp-protocol-version") ||
	          mgw_headers_get(h, "last-event-id")))
		return 1;
	if (strcmp(method, "GET") != 0 || !h)
		return 0;
	for (size_t i = 0; i < h->n; i++) {
		if (!MGW_HEADER_IS(&h->v[i], "accept"))
			continue;
		/* any mention, with or without parameters or q-values */
		accept = h->v[i].value;
		if (strstr(accept, "text/event-stream"))
			return 1;
	}
	return 0;
}

/* ---- upstream attempts ------------------------------------------------- */

static void on_up_head(struct mgw_client_req *r, int status,
                       const struct mgw_headers *headers, void *arg);
static void on_up_data(struct mgw_client_req *r, const unsigned char *data,
                       size_t len, void *arg);
static void on_up_end(struct mgw_client_req *r, void *arg);
static void on_up_error(struct mgw_client_req *r,
                        const struct mgw_client_error *e, void *arg);

/* The value of the group's hash_header in the request, for the hash
 * balancer (NULL when absent: the balancer falls back). */
static const char *hash_key(const struct fwd_req *q, size_t *len)
{
	const struct mgw_upstream_group *g = q->route->group;
	const char *v;

	*len = 0;
	if (g->balancer != MGW_BAL_HASH || !g->conf->hash_header)
		return NULL;
	v = mgw_http_req_header(q->x, g->conf->hash_header);
	if (v)
		*len = strlen(v);
	return v;
}

char *mgw_fwd_upstream_target(const struct mgw_upstream_server *s,
                              const char *target)
{
	size_t pl = strlen(s->path_prefix), tl = strlen(target);
	char *t;

	if (target[0] != '/')
		pl = 0; /* "*" (OPTIONS) and the like are sent as they are */
	t = malloc(pl + tl + 1);
	if (!t)
		return NULL;
	memcpy(t, s->path_prefix, pl);
	memcpy(t + pl, target, tl + 1);
	return t;
}

/* Starts the next attempt on a server not tried yet.  is_retry asks the
 * retry budget first.  why_last / detail are what to answer when no
 * further attempt can be made after an earlier one failed (with no
 * attempt at all the answer is -32001).  On failure q is answered and
 * freed; returns 0 if an attempt is running, -1 if q is gone. */
static int start_attempt(struct fwd_req *q, int is_retry,
                         enum mgw_proxy_error why_last, const char *detail)
{
	struct mgw_fwd *f = q->f;
	const struct mgw_upstream_group *g = q->route->group;
	struct mgw_client_reqspec spec;
	struct mgw_client_timeouts tmo = q->route->tmo;
	struct mgw_upstream_server *s;
	enum mgw_upstream_next v;
	const char *key;
	size_t keylen;
	char *target;
	char msg[200];
	uint64_t now;
	int rc;

	for (;;) {
		now = mgw_now_ms();
		key = hash_key(q, &keylen);
		v = mgw_upstream_next(f->picker, f->ups, g, key, keylen, &q->tried,
		                      is_retry, now, &s);
		if (v != MGW_NEXT_OK) {
			enum mgw_proxy_error kind =
				mgw_proxy_next_error(v, g->name, why_last, &detail, msg,
				                     sizeof(msg), &q->note);

			fail_req(q, kind, detail);
			return -1;
		}
		if (tmo.total > 0) {
			double left = q->route->tmo.total - (double)(now - q->t0) / 1000.0;

			if (left <= 0) {
				fail_req(q, MGW_PERR_TIMEOUT, "upstream timeout (total)");
				return -1;
			}
			tmo.total = left;
		}
		q->attempts++;
		q->last_server = s->name;
		target = mgw_fwd_upstream_target(s, mgw_http_target(q->x));
		if (!target) {
			fail_req(q, MGW_PERR_INTERNAL, NULL);
			return -1;
		}
		memset(&spec, 0, sizeof(spec));
		spec.method = mgw_http_method(q->x);
		spec.target = target;
		spec.authority = mgw_http_authority(q->x);
		spec.headers = &q->hdrs;
		spec.body = mgw_http_req_body(q->x, &spec.body_len);
		spec.tmo = &tmo;
		spec.on_head = on_up_head;
		spec.on_data = on_up_data;
		spec.on_end = on_up_end;
		spec.on_error = on_up_error;
		spec.arg = q;
		rc = mgw_client_request(f->origins[g->index][s->index], &spec, &q->up);
		free(target);
		if (rc == 0) {
			mgw_upstream_acquire(s);
			q->srv = s;
			if (is_retry)
				f->st.retries++;
			return 0;
		}
		if (rc == MGW_ELIMIT) {
			/* this server's queue is full: another one may take it,
			 * as a first attempt still (nothing was sent) */
			why_last = MGW_PERR_OVERLOADED;
			detail = NULL;
			if (q->attempts <= q->route->conf->retries)
				continue;
			fail_req(q, MGW_PERR_OVERLOADED, NULL);
			return -1;
		}
		{
			struct mgw_log_ctx ctx;
			req_logctx(q, &ctx);
			mgw_warn(&ctx, "cannot forward to %s: %s", s->name,
			         mgw_strerror(rc));
		}
		fail_req(q, MGW_PERR_INTERNAL, NULL);
		return -1;
	}
}

int mgw_fwd_small_length(const char *v, size_t max, size_t *out)
{
	size_t n = 0;

	if (!v || !*v)
		return 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return 0;
		n = n * 10 + (size_t)(*v - '0');
		if (n > max)
			return 0;
	}
	*out = n;
	return 1;
}

int mgw_fwd_is_event_stream(const char *ctype)
{
	while (ctype && (*ctype == ' ' || *ctype == '\t'))
		ctype++;
	return ctype && strncasecmp(ctype, "text/event-stream", 17) == 0;
}

/* The client cannot take more now: stop the upstream until on_drain. */
static void pause_up(struct fwd_req *q)
{
	if (!q->paused && q->up) {
		q->paused = 1;
		mgw_client_pause(q->up);
	}
}

/* Cuts a started response (upstream failure mid-body or a write that
 * cannot be queued) and frees q. */
static void abort_stream(struct fwd_req *q, const char *why)
{
	q->f->st.stream_aborts++;
	q->note = why;
	access_log(q, q->status);
	if (q->up) {
		mgw_client_cancel(q->up);
		q->up = NULL;
	}
	mgw_http_stream_abort(q->x);
	q->x = NULL;
	req_free(q);
}

/* Ends a complete streamed response and frees q. */
static void end_stream(struct fwd_req *q)
{
	access_log(q, q->status);
	mgw_http_stream_end(q->x);
	q->x = NULL;
	req_free(q);
}

/* Writes held data while the client takes it.  Returns 0, or -1 after q
 * was freed (client gone or a write failed). */
static int flush_held(struct fwd_req *q)
{
	while (q->buf && evbuffer_get_length(q->buf) > 0) {
		size_t n = evbuffer_get_length(q->buf);
		unsigned char *p;
		int rc;

		if (!mgw_http_stream_writable(q->x))
			return 0;
		if (n > FLUSH_PIECE)
			n = FLUSH_PIECE;
		p = evbuffer_pullup(q->buf, (ssize_t)n);
		if (!p) {
			abort_stream(q, "out of memory");
			return -1;
		}
		rc = mgw_http_stream_write(q->x, p, n);
		if (rc == MGW_ELIMIT)
			return 0; /* on_drain comes */
		if (rc != 0) {
			abort_stream(q, "client write failed");
			return -1;
		}
		evbuffer_drain(q->buf, n);
	}
	return 0;
}

static void on_client_drain(struct mgw_http_exchange *x, void *arg)
{
	struct fwd_req *q = arg;

	if (q->mode != RESP_STREAM)
		return;
	if (flush_held(q) != 0)
		return;
	if (q->buf && evbuffer_get_length(q->buf) > 0)
		return; /* still not all out: the next drain continues */
	if (q->up_ended) {
		end_stream(q);
		return;
	}
	if (q->paused && mgw_http_stream_writable(q->x)) {
		q->paused = 0;
		mgw_client_resume(q->up);
	}
}

static void on_client_abort(struct mgw_http_exchange *x, void *arg)
{
	struct fwd_req *q = arg;

	q->f->st.client_aborts++;
	q->note = "client closed";
	access_log(q, q->mode == RESP_NONE ? 0 : q->status);
	if (q->up) {
		/* cancel promptly: HTTP/2 RST_STREAM, HTTP/1.1 close; no
		 * outcome is reported, the upstream did nothing wrong */
		mgw_client_cancel(q->up);
		q->up = NULL;
	}
	q->x = NULL;
	req_free(q);
}

static void on_up_head(struct mgw_client_req *r, int status,
                       const struct mgw_headers *headers, void *arg)
{
	struct fwd_req *q = arg;
	const char *method = mgw_http_method(q->x);
	size_t len = 0;
	int rc;

	mgw_upstream_report(q->srv, status >= 500 ? MGW_UPSTREAM_HTTP_5XX
	                                          : MGW_UPSTREAM_OK,
	                    status, mgw_now_ms());
	q->status = status;
	q->f->st.forwarded++;
	if (mgw_headers_count(headers, "content-length") <= 1 &&
	    !mgw_fwd_is_event_stream(mgw_headers_get(headers, "content-type")) &&
	    (strcmp(method, "HEAD") == 0 || status == 204 || status == 304 ||
	     mgw_fwd_small_length(mgw_headers_get(headers, "content-length"),
	                  MGW_FWD_COLLECT_MAX, &len))) {
		/* small and sized: one write with a Content-Length, and a
		 * failure before its end can still become a clean 502 */
		q->mode = RESP_COLLECT;
		q->expect_len = strcmp(method, "HEAD") == 0 ? 0 : len;
		for (size_t i = 0; i < headers->n; i++)
			if (mgw_headers_add(&q->resp_hdrs, headers->v[i].name,
			                    headers->v[i].name_len, headers->v[i].value,
			                    headers->v[i].value_len) != 0)
				goto nomem;
		if (!(q->buf = evbuffer_new()))
			goto nomem;
		return;
	}
	q->mode = RESP_STREAM;
	if (!(q->buf = evbuffer_new()))
		goto nomem;
	rc = mgw_http_stream_start(q->x, status, headers, NULL);
	if (rc != 0) {
		/* the layer finished (and may have freed) the exchange:
		 * nothing more can be sent, and x must not be touched */
		mgw_info(NULL, "response head to the client failed: %s",
		         mgw_strerror(rc));
		q->x = NULL;
		mgw_client_cancel(q->up);
		q->up = NULL;
		req_free(q);
	}
	return;
nomem:
	mgw_client_cancel(q->up);
	q->up = NULL;
	release_server(q);
	q->mode = RESP_NONE;
	fail_req(q, MGW_PERR_INTERNAL, NULL);
}

static void on_up_data(struct mgw_client_req *r, const unsigned char *data,
                       size_t len, void *arg)
{
	struct fwd_req *q = arg;
	int rc;

	if (q->mode == RESP_COLLECT) {
		if (evbuffer_get_length(q->buf) + len > q->expect_len) {
			/* more than announced: the client layer frames by
			 * Content-Length, so this is a broken upstream */
			mgw_client_cancel(q->up);
			q->up = NULL;
			mgw_upstream_report(q->srv, MGW_UPSTREAM_FAILURE, 0, mgw_now_ms());
			release_server(q);
			fail_req(q, MGW_PERR_UPSTREAM, "upstream sent more than its Content-Length");
			return;
		}
		if (evbuffer_add(q->buf, data, len) != 0) {
			mgw_client_cancel(q->up);
			q->up = NULL;
			release_server(q);
			fail_req(q, MGW_PERR_INTERNAL, NULL);
		}
		return;
	}
	q->bytes += len;
	if (evbuffer_get_length(q->buf) > 0) {
		/* keep order behind what is already held */
		if (evbuffer_add(q->buf, data, len) != 0)
			abort_stream(q, "out of memory");
		else
			pause_up(q);
		return;
	}
	rc = mgw_http_stream_write(q->x, data, len);
	if (rc == MGW_ELIMIT) {
		if (evbuffer_add(q->buf, data, len) != 0) {
			abort_stream(q, "out of memory");
			return;
		}
		pause_up(q);
		return;
	}
	if (rc != 0) {
		abort_stream(q, "client write failed");
		return;
	}
	if (!mgw_http_stream_writable(q->x))
		pause_up(q);
}

static void on_up_end(struct mgw_client_req *r, void *arg)
{
	struct fwd_req *q = arg;

	q->up = NULL; /* freed by the client layer after this returns */
	release_server(q);
	if (q->mode == RESP_COLLECT) {
		size_t n = evbuffer_get_length(q->buf);
		unsigned char *body = n ? evbuffer_pullup(q->buf, -1) : NULL;

		q->bytes = n;
		access_log(q, q->status);
		mgw_http_respond(q->x, q->status, &q->resp_hdrs, NULL, body, n);
		q->x = NULL;
		req_free(q);
		return;
	}
	if (q->buf && evbuffer_get_length(q->buf) > 0) {
		q->up_ended = 1; /* ends from on_client_drain */
		return;
	}
	end_stream(q);
}

enum mgw_proxy_error mgw_fwd_error_kind(const struct mgw_client_error *e)
{
	switch (e->cls) {
	case MGW_CLIENT_E_TIMEOUT:
		return MGW_PERR_TIMEOUT;
	case MGW_CLIENT_E_DNS:
	case MGW_CLIENT_E_CONNECT:
	case MGW_CLIENT_E_TLS:
		return MGW_PERR_CONNECT;
	default:
		return (e->flags & MGW_CLIENT_F_CONNECT) ? MGW_PERR_CONNECT
		                                         : MGW_PERR_UPSTREAM;
	}
}

void mgw_fwd_describe_error(const struct mgw_client_error *e,
                            enum mgw_proxy_error kind, char *buf, size_t len)
{
	const char *what;

	switch (e->cls) {
	case MGW_CLIENT_E_TIMEOUT:
		snprintf(buf, len, "upstream server timed out (%s)",
		         e->msg ? e->msg : "timeout");
		return;
	case MGW_CLIENT_E_DNS: what = "upstream name did not resolve"; break;
	case MGW_CLIENT_E_CONNECT: what = "could not connect to an upstream server"; break;
	case MGW_CLIENT_E_TLS: what = "TLS with the upstream server failed"; break;
	case MGW_CLIENT_E_PROTO: what = "invalid response from the upstream server"; break;
	case MGW_CLIENT_E_REFUSED: what = "upstream server refused the request"; break;
	case MGW_CLIENT_E_RESET: what = "upstream server reset the request"; break;
	case MGW_CLIENT_E_CLOSED: what = "upstream server closed the connection"; break;
	default: what = mgw_proxy_error_info(kind)->message; break;
	}
	snprintf(buf, len, "%s", what);
}

static void on_up_error(struct mgw_client_req *r,
                        const struct mgw_client_error *e, void *arg)
{
	struct fwd_req *q = arg;
	struct mgw_upstream_server *s = q->srv;
	enum mgw_proxy_error kind = mgw_fwd_error_kind(e);
	char detail[200];
	struct mgw_log_ctx ctx;
	uint64_t now = mgw_now_ms();

	q->up = NULL; /* freed by the client layer after this returns */
	req_logctx(q, &ctx);
	/* A head already reported OK/5xx stays counted; a later break
	 * counts once more as a failure. */
	mgw_upstream_report_error(s, e, now);
	release_server(q);
	mgw_info(&ctx, "upstream %s: %s (%s)%s", s ? s->name : "-",
	         e->msg ? e->msg : mgw_strerror(e->code),
	         mgw_client_err_class_name(e->cls),
	         (e->flags & MGW_CLIENT_F_NOT_SENT) ? ", not sent" : "");
	if (q->mode == RESP_STREAM) {
		abort_stream(q, kind == MGW_PERR_TIMEOUT ? "upstream timeout mid-response"
		                                         : "upstream failed mid-response");
		return;
	}
	mgw_fwd_describe_error(e, kind, detail, sizeof(detail));
	if (q->mode == RESP_NONE && (e->flags & MGW_CLIENT_F_NOT_SENT) &&
	    !(e->flags & MGW_CLIENT_F_RESP_BYTES) &&
	    q->attempts <= q->route->conf->retries) {
		start_attempt(q, 1, kind, detail);
		return;
	}
	q->mode = RESP_NONE;
	fail_req(q, kind, detail);
}

/* ---- the handler -------------------------------------------------------- */

/* Answers a SEP-2243 validation failure (400, -32020 or -32022). */
static void reject_headers(struct fwd_req *q, const struct mgw_sep2243_verdict *v)
{
	struct mgw_proxy_reply r;
	json_t *data = NULL;

	q->f->st.rejected_headers++;
	q->note = "header validation failed";
	if (v->code == MGW_MCP_UNSUPPORTED_VERSION)
		data = mgw_sep2243_unsupported_data(NULL, v->requested);
	if (mgw_proxy_reply_build(&r, v->status ? v->status : 400, v->code,
	                          v->message, data, 1,
	                          mgw_proxy_reply_id(&q->msg)) != 0) {
		fail_req(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	finish_reply(q, &r, NULL);
}

/* Answers a JSON body that is not valid JSON-RPC on a modern request
 * (400 with the parse / invalid-request code). */
static void reject_body(struct fwd_req *q)
{
	struct mgw_proxy_reply r;

	q->f->st.rejected_headers++;
	q->note = "invalid JSON-RPC";
	if (mgw_proxy_reply_build(&r, 400, q->msg.error_code, q->msg.error_msg,
	                          NULL, 1, mgw_proxy_reply_id(&q->msg)) != 0) {
		fail_req(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	finish_reply(q, &r, NULL);
}

/* admin.stats: who may read GET /mcpgw/stats.  For everyone else the
 * path is not special and goes upstream like any other. */
static int stats_allowed(enum mgw_stats_access who,
                         const struct mgw_http_exchange *x)
{
	return who == MGW_STATS_ANY ||
	       (who == MGW_STATS_LOOPBACK && mgw_http_peer_is_loopback(x));
}

/* Answers GET /mcpgw/stats (upstream states, and in stateful or auto
 * mode the session counters) and frees q. */
static void serve_stats(struct fwd_req *q)
{
	struct mgw_fwd *f = q->f;
	struct mgw_proxy_reply r = {0};

	if (mgw_admin_stats_body(f->ups, f->sf ? f->sf->sh : NULL, f->conf->mode,
	                         &r.body, &r.len) != 0) {
		fail_req(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	r.status = 200;
	r.content_type = "application/json";
	q->note = "stats";
	finish_reply(q, &r, NULL);
}

/* Gives a request that belongs to the stateful path to it: its route is
 * matched here (legacy requests match on their path only), then q goes
 * and the stateful path owns the exchange and the classification. */
static void hand_over(struct fwd_req *q, enum mgw_era era)
{
	struct mgw_fwd *f = q->f;
	struct mgw_http_exchange *x = q->x;
	const struct mgw_route *route;
	struct mgw_jrpc_msg m;
	int have = q->have_msg, as_json = q->as_json;

	route = mgw_routes_match(f->routes, mgw_http_path(x),
	                         mgw_http_req_headers(x), era == MGW_ERA_IS_MODERN);
	if (!route) {
		fail_req(q, MGW_PERR_NO_ROUTE, NULL);
		return;
	}
	memset(&m, 0, sizeof(m));
	if (have) {
		m = q->msg;   /* moved: q no longer owns it */
		q->have_msg = 0;
	}
	q->x = NULL;
	req_free(q);
	mgw_sf_handle(f->sf, x, route, &m, have, as_json);
}

/* 1 if q's body is JSON: it parsed, or its Content-Type says so (a body
 * the reader refused: a syntax error, a duplicate member, nesting past
 * the limit, a number out of range). */
static int json_body(const struct fwd_req *q)
{
	return q->have_msg &&
	       (q->msg.root ||
	        mgw_proxy_is_json_type(mgw_http_req_header(q->x, "content-type")));
}

/* 1 if the stateful path would have to guess at q: a sessionless POST of
 * a legacy (or unknown) era in stateful or auto mode whose JSON body the
 * gateway could not read.  It may be an initialize the replica accepts,
 * whose session the gateway would then not know (every later request of
 * it a 404), so it is refused rather than forwarded. */
static int unreadable_sessionless(const struct fwd_req *q, enum mgw_era era)
{
	return q->f->conf->mode != MGW_MODE_STATELESS &&
	       era != MGW_ERA_IS_MODERN && json_body(q) && !q->msg.root &&
	       !mgw_http_req_header(q->x, "mcp-session-id");
}

void mgw_fwd_on_request(struct mgw_http_exchange *x, void *arg)
{
	struct mgw_fwd *f = arg;
	struct fwd_req *q = calloc(1, sizeof(*q));
	const struct mgw_headers *h = mgw_http_req_headers(x);
	const char *method = mgw_http_method(x);
	const unsigned char *body;
	size_t body_len;
	enum mgw_era era;

	if (!q) {
		mgw_http_respond(x, 500, NULL, NULL, NULL, 0);
		return;
	}
	f->live++;
	f->st.requests++;
	q->f = f;
	q->x = x;
	q->t0 = mgw_now_ms();
	mgw_headers_init(&q->hdrs);
	mgw_headers_init(&q->resp_hdrs);
	body = mgw_http_req_body(x, &body_len);

	/* Look at the body as MCP, never changing it: the bytes forwarded
	 * are the bytes received. */
	if (strcmp(method, "POST") == 0) {
		if (mgw_jrpc_classify(body, body_len, f->conf->max_json_depth,
		                      &q->msg) != 0) {
			fail_req(q, MGW_PERR_INTERNAL, NULL);
			return;
		}
		q->have_msg = 1;
	}
	q->as_json = mgw_proxy_wants_jsonrpc(q->have_msg ? &q->msg : NULL,
	                                     mgw_http_req_header(x, "content-type"),
	                                     mgw_http_req_header(x, "accept"),
	                                     body_len);

	if (strcmp(method, "GET") == 0 &&
	    strcmp(mgw_http_path(x), MGW_FWD_STATS_PATH) == 0 &&
	    stats_allowed(f->conf->stats, x)) {
		serve_stats(q);
		return;
	}
	era = mgw_mcp_detect_era(h, q->have_msg ? &q->msg : NULL);
	if (unreadable_sessionless(q, era)) {
		reject_body(q);
		return;
	}
	if (f->sf && mgw_sf_claims(f->conf->mode, method, mgw_http_path(x), h,
	                           q->have_msg ? &q->msg : NULL, era)) {
		hand_over(q, era);
		return;
	}

	if (mgw_fwd_is_mcp_endpoint(method, mgw_http_path(x), h)) {
		struct mgw_headers allow;
		struct mgw_proxy_reply r;

		f->st.errors[MGW_PERR_METHOD]++;
		q->note = "no GET/DELETE in stateless mode";
		mgw_headers_init(&allow);
		if (mgw_headers_adds(&allow, "Allow", "POST") != 0 ||
		    mgw_proxy_reply_error(&r, MGW_PERR_METHOD,
		                          "stateless MCP endpoint: only POST is served",
		                          q->as_json, NULL) != 0) {
			mgw_headers_deinit(&allow);
			fail_req(q, MGW_PERR_INTERNAL, NULL);
			return;
		}
		finish_reply(q, &r, &allow);
		mgw_headers_deinit(&allow);
		return;
	}

	/* Mcp-Method / Mcp-Name are trusted for routing only on requests of a
	 * header-validating version (streamable-http "Server Validation"). */
	q->route = mgw_routes_match(f->routes, mgw_http_path(x), h,
	                            era == MGW_ERA_IS_MODERN);
	if (!q->route) {
		fail_req(q, MGW_PERR_NO_ROUTE, NULL);
		return;
	}
	/* Validate only JSON bodies: a modern-looking header on some other
	 * POST (an OAuth form, say) is not an MCP message to check.  A JSON
	 * body the reader refused is answered here too: routing has trusted
	 * its Mcp-Method / Mcp-Name, which nothing could check. */
	if (q->route->conf->validate_headers && era == MGW_ERA_IS_MODERN &&
	    json_body(q)) {
		struct mgw_sep2243_verdict v;

		if (q->msg.kind == MGW_JRPC_INVALID) {
			reject_body(q);
			return;
		}
		mgw_sep2243_validate(h, &q->msg, NULL, NULL, 0, &v);
		if (!v.ok) {
			reject_headers(q, &v);
			return;
		}
	}
	if (mgw_fwd_build_headers(&q->hdrs, h, f->conf, mgw_http_peer(x),
	                          mgw_http_is_tls(x), mgw_http_authority(x),
	                          mgw_http_version(x) == 20) != 0) {
		fail_req(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	mgw_http_set_callbacks(x, on_client_abort, on_client_drain, q);
	/* the budget's base: every client request that goes upstream */
	mgw_retry_budget_request(f->ups->budget, q->t0);
	start_attempt(q, 0, MGW_PERR_NO_UPSTREAM, NULL);
}

int mgw_fwd_refusal_body(int status, const struct mgw_headers *req,
                         const char **ctype, char **body, size_t *len,
                         void *arg)
{
	struct mgw_proxy_reply r;

	(void)arg;
	if (status != 413 || !req ||
	    !mgw_proxy_wants_jsonrpc(NULL, mgw_headers_get(req, "content-type"),
	                             mgw_headers_get(req, "accept"), 0))
		return -1;
	if (mgw_proxy_reply_error(&r, MGW_PERR_TOO_LARGE,
	                          "request too large (limits.max_body_bytes)", 1,
	                          NULL) != 0)
		return -1;
	*ctype = r.content_type;
	*body = r.body; /* ownership moves to the server layer */
	*len = r.len;
	return 0;
}

/* ---- per-worker setup ------------------------------------------------- */

static uint32_t share(uint32_t total, unsigned n)
{
	uint32_t v = n ? (total + n - 1) / n : total;

	return v ? v : 1;
}

struct mgw_fwd *mgw_fwd_new(struct event_base *base,
                            const struct mgw_serve_conf *conf,
                            const struct mgw_routes *routes,
                            struct mgw_upstreams *ups, unsigned n_workers,
                            uint64_t seed, char *err, size_t errlen)
{
	struct mgw_fwd *f = calloc(1, sizeof(*f));

	if (!f)
		goto nomem;
	f->base = base;
	f->conf = conf;
	f->routes = routes;
	f->ups = ups;
	f->picker = mgw_upstream_picker_new(ups, seed);
	f->n_groups = ups->n_groups;
	f->clients = calloc(f->n_groups ? f->n_groups : 1, sizeof(*f->clients));
	f->origins = calloc(f->n_groups ? f->n_groups : 1, sizeof(*f->origins));
	if (!f->picker || !f->clients || !f->origins)
		goto nomem;
	for (size_t gi = 0; gi < ups->n_groups; gi++) {
		const struct mgw_upstream_group *g = &ups->groups[gi];
		struct mgw_client_limits lim;

		mgw_client_limits_default(&lim);
		lim.max_conns_per_origin = share(g->conf->max_connections, n_workers);
		/* max_idle: 0 means no idle pool, not one per worker */
		lim.max_idle_per_origin = g->conf->max_idle
		                          ? share(g->conf->max_idle, n_workers) : 0;
		if (lim.max_idle_per_origin > lim.max_conns_per_origin)
			lim.max_idle_per_origin = lim.max_conns_per_origin;
		f->clients[gi] = mgw_client_new(base, &lim);
		f->origins[gi] = calloc(g->n_servers, sizeof(**f->origins));
		if (!f->clients[gi] || !f->origins[gi])
			goto nomem;
		for (size_t si = 0; si < g->n_servers; si++) {
			struct mgw_client_origin_cfg oc;
			int rc;

			mgw_upstream_origin_cfg(&g->servers[si], &oc);
			rc = mgw_client_origin_new(f->clients[gi], &oc,
			                           &f->origins[gi][si]);
			if (rc == MGW_ENOMEM)
				goto nomem;
			if (rc != 0) {
				snprintf(err, errlen, "upstream %s: %s",
				         g->servers[si].name, mgw_strerror(rc));
				goto fail;
			}
		}
	}
	return f;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	mgw_fwd_free(f);
	return NULL;
}

int mgw_fwd_enable_stateful(struct mgw_fwd *f, struct mgw_sf_shared *sh,
                            char *err, size_t errlen)
{
	if (f->sf)
		return MGW_EINVAL;
	f->sf = mgw_sf_new(sh, f, err, errlen);
	return f->sf ? 0 : MGW_ENOMEM;
}

void mgw_fwd_free(struct mgw_fwd *f)
{
	if (!f)
		return;
	if (f->live)
		mgw_warn(NULL, "forwarder freed with %zu requests in progress", f->live);
	/* before the clients: it cancels upstream requests of its own */
	mgw_sf_free(f->sf);
	f->sf = NULL;
	for (size_t gi = 0; gi < f->n_groups; gi++) {
		/* mgw_client_free frees the origins along with the client */
		mgw_client_free(f->clients ? f->clients[gi] : NULL);
		if (f->origins)
			free(f->origins[gi]);
	}
	free(f->clients);
	free(f->origins);
	mgw_upstream_picker_free(f->picker);
	free(f);
}
