/* txn.c - the transaction (txn.h): classification, answers, the access
 * log, the client's callbacks and the upstream attempt's callbacks. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/principal.h"
#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "proxy/access_json.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/metrics.h"
#include "proxy/pipeline.h"
#include "proxy/pool.h"
#include "proxy/relay.h"
#include "proxy/retry.h"
#include "proxy/txn.h"
#include "proxy/upstream.h"
#include "util/time.h"

struct mgw_txn *mgw_txn_new(struct mgw_pipeline *pl,
                            struct mgw_http_exchange *x)
{
	struct mgw_txn *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->pl = pl;
	t->x = x;
	t->t0_ns = mgw_now_ns();
	t->t0 = t->t0_ns / 1000000u;
	mgw_headers_init(&t->hdrs);
	mgw_headers_init(&t->up_head);
	mgw_relay_init(&t->rl);
	pl->live++;
	pl->st.requests++;
	return t;
}

int mgw_txn_classify(struct mgw_txn *t)
{
	const unsigned char *body;
	size_t body_len;

	body = mgw_http_req_body(t->x, &body_len);
	/* Look at the body as MCP, never changing it: the bytes forwarded
	 * are the bytes received. */
	if (strcmp(mgw_http_method(t->x), "POST") == 0) {
		if (mgw_jrpc_classify_lazy(body, body_len,
		                           t->pl->conf->max_json_depth,
		                           &t->msg) != 0) {
			return MGW_ENOMEM;
		}
		t->have_msg = 1;
	}
	t->as_json = mgw_proxy_wants_jsonrpc(t->have_msg ? &t->msg : NULL,
	                                     mgw_http_req_header(t->x, "content-type"),
	                                     mgw_http_req_header(t->x, "accept"),
	                                     body_len);
	return 0;
}

void mgw_txn_cancel_attempt(struct mgw_txn *t)
{
	if (t->up) {
		mgw_client_cancel(t->up);
		t->up = NULL;
	}
	if (t->srv) {
		mgw_upstream_release(t->srv);
		t->srv = NULL;
	}
}

void mgw_txn_free(struct mgw_txn *t)
{
	if (t->pending_cancel)
		t->pending_cancel(t);
	if (t->h && t->h->release)
		t->h->release(t);
	mgw_txn_cancel_attempt(t);
	if (t->have_msg)
		mgw_jrpc_msg_deinit(&t->msg);
	mgw_headers_deinit(&t->hdrs);
	mgw_headers_deinit(&t->up_head);
	mgw_relay_deinit(&t->rl);
	mgw_upstream_tried_free(&t->tried);
	mgw_principal_free(t->principal);
	t->pl->live--;
	free(t);
}

/* ---- the access log ----------------------------------------------------- */

void mgw_txn_logctx(const struct mgw_txn *t, struct mgw_log_ctx *ctx)
{
	ctx->conn_id = t->x ? mgw_http_conn_id(t->x) : 0;
	ctx->stream_id = t->x ? mgw_http_stream_id(t->x) : -1;
	ctx->session = t->session;
}

const char *mgw_txn_mcp_method(const struct mgw_txn *t)
{
	if (t->have_msg && t->msg.method)
		return t->msg.method;
	if (t->have_msg && t->msg.kind == MGW_JRPC_RESPONSE)
		return "response";
	return t->x ? mgw_http_req_header(t->x, "mcp-method") : NULL;
}

/* The Mcp-Method for the text line, "-" when there is none. */
static const char *log_method(const struct mgw_txn *t)
{
	const char *m = mgw_txn_mcp_method(t);

	return m ? m : "-";
}

void mgw_txn_access_log(struct mgw_txn *t, int status)
{
	struct mgw_log_ctx ctx;

	mgw_metrics_txn_done(t, status);
	if (!mgw_log_access_enabled() || !t->x)
		return;
	if (mgw_log_access_format() == MGW_ACCESS_JSON) {
		mgw_access_json(t, status);
		return;
	}
	mgw_txn_logctx(t, &ctx);
	mgw_log_access(&ctx, "%s %s mcp=%s upstream=%s status=%d %.0fms%s%s%s%s%s",
	               mgw_http_method(t->x), mgw_http_path(t->x), log_method(t),
	               t->last ? t->last->name : "-", status,
	               (double)(mgw_now_ms() - t->t0), t->retries ? " retried" : "",
	               t->why[0] ? " " : "", t->why, t->note ? " " : "",
	               t->note ? t->note : "");
}

void mgw_txn_note_why(struct mgw_txn *t, const char *what)
{
	size_t n = strlen(t->why);

	snprintf(t->why + n, sizeof(t->why) - n, "%s%s", n ? "," : "", what);
}

/* ---- answers ------------------------------------------------------------ */

void mgw_txn_respond(struct mgw_txn *t, int status,
                     const struct mgw_headers *h, const void *body, size_t n)
{
	t->rl.bytes = body ? n : 0;
	mgw_txn_access_log(t, status);
	mgw_http_respond(t->x, status, h, NULL, body, n);
	t->x = NULL;
	mgw_txn_free(t);
}

void mgw_txn_respond_typed(struct mgw_txn *t, int status, const char *ctype,
                           const void *body, size_t n)
{
	t->rl.bytes = body ? n : 0;
	mgw_txn_access_log(t, status);
	mgw_http_respond(t->x, status, NULL, ctype, body, n);
	t->x = NULL;
	mgw_txn_free(t);
}

void mgw_txn_reply(struct mgw_txn *t, struct mgw_proxy_reply *r,
                   const struct mgw_headers *extra)
{
	t->rl.bytes = r->body ? r->len : 0;
	mgw_txn_access_log(t, r->status);
	mgw_http_respond(t->x, r->status, extra, r->content_type, r->body, r->len);
	t->x = NULL;
	mgw_proxy_reply_deinit(r);
	mgw_txn_free(t);
}

void mgw_txn_fail(struct mgw_txn *t, enum mgw_proxy_error e,
                  const char *detail)
{
	const struct mgw_proxy_error_info *in = mgw_proxy_error_info(e);
	struct mgw_proxy_reply r;

	t->pl->st.errors[e < MGW_PERR_N ? e : MGW_PERR_INTERNAL]++;
	if (!t->note)
		t->note = in->name;
	mgw_txn_cancel_attempt(t);
	t->rl.mode = MGW_RELAY_NONE;
	if (mgw_proxy_reply_error(&r, e, detail, t->as_json,
	                          mgw_proxy_reply_id(t->have_msg ? &t->msg : NULL)) != 0) {
		/* no memory for a body: the status alone still tells */
		mgw_txn_respond(t, in->status, NULL, NULL, 0);
		return;
	}
	mgw_txn_reply(t, &r, NULL);
}

/* ---- the client side ---------------------------------------------------- */

static void on_client_drain(struct mgw_http_exchange *x, void *arg)
{
	(void)x;
	mgw_relay_drain(arg);
}

static void on_client_abort(struct mgw_http_exchange *x, void *arg)
{
	struct mgw_txn *t = arg;

	(void)x;
	t->pl->st.client_aborts++;
	t->note = "client closed";
	mgw_txn_access_log(t, t->rl.mode == MGW_RELAY_NONE ? 0 : t->status);
	/* freeing cancels the attempt promptly (HTTP/2 RST_STREAM, HTTP/1.1
	 * close) with no outcome reported: the upstream did nothing wrong;
	 * the handler's release cancels whatever else it waits for */
	t->x = NULL;
	mgw_txn_free(t);
}

void mgw_txn_watch_client(struct mgw_txn *t)
{
	mgw_http_set_callbacks(t->x, on_client_abort, on_client_drain, t);
}

/* ---- the upstream attempt ------------------------------------------------ */

static void on_up_head(struct mgw_client_req *r, int status,
                       const struct mgw_headers *headers, void *arg)
{
	struct mgw_txn *t = arg;

	(void)headers; /* taken whole into t->up_head */
	mgw_headers_deinit(&t->up_head);
	mgw_client_take_head(r, &t->up_head);
	mgw_upstream_report(t->srv, status >= 500 ? MGW_UPSTREAM_HTTP_5XX
	                                          : MGW_UPSTREAM_OK,
	                    status, mgw_now_ms());
	t->status = status;
	t->pl->st.forwarded++;
	if (t->h->on_head)
		t->h->on_head(t, status, &t->up_head);
	else
		mgw_relay_begin(t, &t->up_head, 0, 0);
}

static void on_up_data(struct mgw_client_req *r, const unsigned char *data,
                       size_t len, void *arg)
{
	struct mgw_txn *t = arg;

	(void)r;
	if (t->rl.mode != MGW_RELAY_NONE)
		mgw_relay_data(t, data, len);
	else if (t->h->on_data)
		t->h->on_data(t, data, len);
}

static void on_up_end(struct mgw_client_req *r, void *arg)
{
	struct mgw_txn *t = arg;

	(void)r;
	t->up = NULL; /* freed by the client layer after this returns */
	if (t->srv) {
		mgw_upstream_release(t->srv);
		t->srv = NULL;
	}
	if (t->rl.mode != MGW_RELAY_NONE)
		mgw_relay_end(t);
	else if (t->h->on_end)
		t->h->on_end(t);
	else
		mgw_txn_fail(t, MGW_PERR_UPSTREAM, NULL);
}

static void on_up_error(struct mgw_client_req *r,
                        const struct mgw_client_error *e, void *arg)
{
	struct mgw_txn *t = arg;
	struct mgw_upstream_server *s = t->srv;
	struct mgw_log_ctx ctx;

	(void)r;
	t->up = NULL; /* freed by the client layer after this returns */
	mgw_txn_logctx(t, &ctx);
	/* A head already reported OK/5xx stays counted; a later break
	 * counts once more as a failure. */
	mgw_upstream_report_error(s, e, mgw_now_ms());
	if (s) {
		mgw_upstream_release(s);
		t->srv = NULL;
	}
	mgw_info(&ctx, "upstream %s: %s (%s)%s", s ? s->name : "-",
	         e->msg ? e->msg : mgw_strerror(e->code),
	         mgw_client_err_class_name(e->cls),
	         (e->flags & MGW_CLIENT_F_NOT_SENT) ? ", not sent" : "");
	t->h->on_error(t, e);
}

const char *mgw_txn_hash_key(const struct mgw_txn *t, size_t *len)
{
	const struct mgw_upstream_group *g = t->route->group;
	const char *v;

	*len = 0;
	if (g->balancer != MGW_BAL_HASH || !g->conf->hash_header)
		return NULL;
	v = mgw_http_req_header(t->x, g->conf->hash_header);
	if (v)
		*len = strlen(v);
	return v;
}

struct mgw_upstream_server *mgw_txn_next_server(struct mgw_txn *t,
	const char *key, size_t keylen, enum mgw_upool_budget budget,
	enum mgw_proxy_error why_last, const char *detail)
{
	const struct mgw_upstream_group *g = t->route->group;
	struct mgw_upstream_server *s = NULL;
	enum mgw_upstream_next v;
	char msg[200];

	if (t->owner) {
		/* the task lives there only: no other server will do */
		if (budget != MGW_UPOOL_RETRY ||
		    mgw_retry_budget_try(t->pl->ups->budget, mgw_now_ms()))
			return t->owner;
		v = MGW_NEXT_NO_BUDGET;
	} else {
		v = mgw_upool_next(t->pl->pool, g, key, keylen, &t->tried, budget,
		                   mgw_now_ms(), &s);
	}
	if (v == MGW_NEXT_OK)
		return s;
	mgw_txn_fail(t, mgw_proxy_next_error(v, g->name, why_last, &detail, msg,
	                                     sizeof(msg), &t->note),
	             detail);
	return NULL;
}

void mgw_txn_count_retry(struct mgw_txn *t)
{
	t->retries++;
	t->pl->st.retries++;
}

int mgw_txn_send(struct mgw_txn *t, struct mgw_upstream_server *s,
                 const struct mgw_headers *h)
{
	struct mgw_client_timeouts tmo = t->route->tmo;
	struct mgw_client_reqspec spec;
	int rc;

	if (tmo.total > 0) {
		double left = tmo.total - (double)(mgw_now_ms() - t->t0) / 1000.0;

		if (left <= 0)
			return MGW_ETIMEDOUT;
		tmo.total = left;
	}
	memset(&spec, 0, sizeof(spec));
	spec.method = mgw_http_method(t->x);
	spec.target = mgw_http_target(t->x);
	spec.authority = mgw_http_authority(t->x);
	spec.headers = h; /* from the parsed request and mgw_proxy_build_headers */
	spec.headers_checked = 1;
	/* t->hdrs is mgw_proxy_build_headers' list as it made it */
	spec.headers_end_to_end = h == &t->hdrs;
	spec.body = mgw_http_req_body(t->x, &spec.body_len);
	spec.tmo = &tmo;
	spec.on_head = on_up_head;
	spec.on_data = on_up_data;
	spec.on_end = on_up_end;
	spec.on_error = on_up_error;
	spec.arg = t;
	rc = mgw_upool_send(t->pl->pool, s, &spec, &t->up);
	if (rc != 0) {
		t->up = NULL;
		return rc;
	}
	t->srv = s;
	t->last = s;
	t->attempts++;
	t->status = 0;
	return 0;
}
