/* transport_http.c - the streamable HTTP transport of a load agent, on
 * the upstream client layer (http/client.h).
 *
 * Each agent declares its own origins (one per target URL, on first use),
 * so in `reuse` mode its keep-alive connection (or HTTP/2 connection) is
 * its own, as a real client's is, and a per-connection balancer in front
 * keeps its session on one replica.  In `new` mode the origins are
 * one_request ones and each request picks a target at random.
 *
 * Answers: a JSON body is collected (bounded) and read at the end; an SSE
 * body is parsed as it arrives and the response with our id ends the
 * wait at once - the rest of the stream is drained in the background
 * (at most one such stream per agent) rather than delaying the call.
 * Non-2xx bodies are kept for the lost-session rule. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "load/agent_impl.h"
#include "load/sse_parse.h"
#include "mcp/json.h"
#include "mcp/jsonrpc.h"
#include "util/decimal.h"
#include "util/rand.h"

/* Non-2xx bodies are only read for their error message. */
#define ERR_BODY_MAX (64u * 1024)

int ld_http_init(struct mgw_load_agent *a, struct mgw_client *cl)
{
	const struct mgw_load_target *t = a->target;
	struct ld_http *h = &a->http;
	char why[128];

	h->cl = cl;
	h->n = t->n_urls;
	h->cur = h->n;
	h->urls = calloc(h->n, sizeof(*h->urls));
	h->paths = calloc(h->n, sizeof(*h->paths));
	h->origins = calloc(h->n, sizeof(*h->origins));
	if (!h->urls || !h->paths || !h->origins)
		return MGW_ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		if (!t->urls[i] ||
		    mgw_url_parse(t->urls[i], &h->urls[i], why, sizeof(why)) != 0) {
			mgw_err(NULL, "load: bad target URL '%s': %s",
			        t->urls[i] ? t->urls[i] : "", why);
			return MGW_EINVAL;
		}
		if (h->urls[i].tls && !t->tls) {
			mgw_err(NULL, "load: %s needs a TLS context", t->urls[i]);
			return MGW_EINVAL;
		}
		h->paths[i] = strdup(h->urls[i].path[0] ? h->urls[i].path : "/");
		if (!h->paths[i])
			return MGW_ENOMEM;
	}
	return 0;
}

static void hreq_free(struct ld_hreq *q)
{
	if (!q)
		return;
	mgw_sse_deinit(&q->sp);
	free(q->body);
	json_decref(q->resp);
	free(q->session_id);
	free(q);
}

/* Cancels the client request (never from its own on_end / on_error). */
static void hreq_cancel(struct ld_hreq *q)
{
	if (!q)
		return;
	if (q->r)
		mgw_client_cancel(q->r);
	hreq_free(q);
}

void ld_http_cancel(struct mgw_load_agent *a)
{
	hreq_cancel(a->http.req);
	a->http.req = NULL;
}

void ld_http_broken(struct mgw_load_agent *a)
{
	a->http.broken = 1;
}

void ld_http_deinit(struct mgw_load_agent *a)
{
	struct ld_http *h = &a->http;

	ld_http_cancel(a);
	hreq_cancel(h->drain);
	h->drain = NULL;
	for (size_t i = 0; h->origins && i < h->n; i++)
		mgw_client_origin_free(h->origins[i]);
	for (size_t i = 0; h->paths && i < h->n; i++)
		free(h->paths[i]);
	free(h->origins);
	free(h->paths);
	free(h->urls);
	memset(h, 0, sizeof(*h));
}

static struct mgw_client_origin *origin(struct mgw_load_agent *a, size_t i)
{
	struct ld_http *h = &a->http;
	struct mgw_client_origin_cfg oc = {0};
	const struct mgw_url *u = &h->urls[i];

	if (h->origins[i])
		return h->origins[i];
	oc.host = u->host;
	oc.port = u->port;
	oc.proto = a->target->http2 ? MGW_CLIENT_H2 : MGW_CLIENT_H1;
	oc.tls = u->tls ? a->target->tls : NULL;
	oc.one_request = a->target->conn == MGW_LOAD_CONN_NEW;
	if (mgw_client_origin_new(h->cl, &oc, &h->origins[i]) != 0)
		return NULL;
	return h->origins[i];
}

/* ---- answers ---- */

static int is_2xx(int status)
{
	return status >= 200 && status < 300;
}

/* The response we wait for is in. */
static int have_response(const struct ld_hreq *q)
{
	return q->resp || q->quick_ok;
}

/* A member of type t whose raw bytes are lit (a string's with its
 * quotes, and without escapes). */
static int member_is(const struct mgw_json_member *mb, char t, const char *lit)
{
	size_t n = strlen(lit);

	return mb && mb->type == t && !mb->esc && mb->vlen == n &&
	       memcmp(mb->val, lit, n) == 0;
}

/* Whether s is, by the skim, a valid JSON-RPC response to id whose
 * result says nothing but success: an object without a task member,
 * isError false or absent, resultType "complete" or absent, and no
 * envelope member beyond jsonrpc, id and result.  The skim reads every
 * byte as the full parse does (mcp/json.h); anything it is unsure of,
 * and every other answer, goes to the full classification. */
static int quick_success(const char *s, size_t len, int64_t id)
{
	static const char *const path[] = {"result"};
	struct mgw_json_skim sk;
	const struct mgw_json_member *ver, *idm, *res, *x;
	char want[MGW_DEC_BUF];
	size_t n;

	if (mgw_json_skim(s, len, 0, path, 1, &sk) != 0 || sk.top != 'o' ||
	    sk.n[0] != 3 || !sk.found[1] || sk.overflow)
		return 0;
	ver = mgw_json_skim_get(&sk, 0, "jsonrpc");
	idm = mgw_json_skim_get(&sk, 0, "id");
	res = mgw_json_skim_get(&sk, 0, "result");
	n = mgw_dec(want, (uint64_t)id);
	if (!member_is(ver, 's', "\"2.0\"") || !idm || idm->type != 'n' ||
	    !idm->integer || idm->vlen != n || memcmp(idm->val, want, n) != 0 ||
	    !res || res->type != 'o' || mgw_json_skim_get(&sk, 1, "task"))
		return 0;
	x = mgw_json_skim_get(&sk, 1, "isError");
	if (x && !member_is(x, 'l', "false"))
		return 0;
	x = mgw_json_skim_get(&sk, 1, "resultType");
	return !x || member_is(x, 's', "\"complete\"");
}

/* Classifies one JSON text; keeps it in q->resp when it is the response
 * we wait for (or, on an error status, any error response without id);
 * for a quick message, a plain success read by the skim sets quick_ok
 * instead. */
static int take_if_ours(struct ld_hreq *q, const char *s, size_t len)
{
	struct mgw_jrpc_msg m;
	int ours = 0;

	if (q->quick && is_2xx(q->status) && quick_success(s, len, q->id)) {
		q->quick_ok = 1;
		return 1;
	}
	if (mgw_jrpc_classify(s, len, 0, &m) != 0)
		return 0;
	if (m.kind == MGW_JRPC_RESPONSE) {
		if (mgw_jrpc_id(&m) && json_is_integer(mgw_jrpc_id(&m)) && q->id &&
		    json_integer_value(mgw_jrpc_id(&m)) == q->id)
			ours = 1;
		else if (!mgw_jrpc_id(&m) && !is_2xx(q->status))
			ours = 1;
	}
	if (ours) {
		json_decref(q->resp);
		q->resp = json_incref(mgw_jrpc_root(&m));
	}
	mgw_jrpc_msg_deinit(&m);
	return ours;
}

static int on_sse_event(void *arg, const struct mgw_sse_event *ev)
{
	struct ld_hreq *q = arg;

	/* notifications and other messages of the stream are skipped */
	return take_if_ours(q, ev->data, ev->data_len) ? 1 : 0;
}

/* Tells the agent; q stays owned by the caller. */
static void deliver(struct ld_hreq *q, enum ld_ans_kind kind,
                    const char *detail)
{
	struct mgw_load_agent *a = q->a;
	struct ld_answer ans;

	memset(&ans, 0, sizeof(ans));
	ans.kind = kind;
	ans.status = q->status;
	ans.resp = q->resp;
	ans.quick_ok = q->quick_ok;
	ans.body = q->body ? q->body : "";
	ans.body_len = q->body_len;
	ans.session_id = q->session_id;
	ans.detail = detail;
	ans.bytes = q->bytes;
	q->answered = 1;
	if (a->http.req == q)
		a->http.req = NULL;
	ld_answer(a, &ans);
}

/* The whole answer is in: judges it. */
static void judge(struct ld_hreq *q)
{
	char why[96];

	if (!is_2xx(q->status)) {
		if (!q->sse && q->body_len > 0)
			take_if_ours(q, q->body, q->body_len);
		deliver(q, LD_ANS_STATUS, NULL);
		return;
	}
	if (q->id == 0) {
		deliver(q, LD_ANS_ACCEPTED, NULL);
		return;
	}
	if (!have_response(q) && !q->sse && q->body_len > 0)
		take_if_ours(q, q->body, q->body_len);
	if (have_response(q)) {
		deliver(q, LD_ANS_RESPONSE, NULL);
		return;
	}
	snprintf(why, sizeof(why), "HTTP %d %s without the response to id %lld",
	         q->status, q->sse ? "stream ended" : "answer",
	         (long long)q->id);
	deliver(q, LD_ANS_FAILED, why);
}

static void on_head(struct mgw_client_req *r, int status,
                    const struct mgw_headers *hdr, void *arg)
{
	struct ld_hreq *q = arg;
	const char *ct = mgw_headers_get(hdr, "content-type");
	const char *sid = mgw_headers_get(hdr, "mcp-session-id");

	(void)r;
	q->status = status;
	if (ct && strncasecmp(ct, "text/event-stream", 17) == 0) {
		q->sse = 1;
		mgw_sse_init(&q->sp, 0, 0);
	}
	if (sid)
		q->session_id = strdup(sid);
}

static void on_data(struct mgw_client_req *r, const unsigned char *data,
                    size_t len, void *arg)
{
	struct ld_hreq *q = arg;
	struct mgw_load_agent *a = q->a;
	size_t cap;
	int rc;

	q->bytes += len;
	if (q->answered)
		return; /* draining the rest of a stream */
	if (q->sse) {
		if (have_response(q))
			return; /* an error answer's message is in; the end
			         * of the stream is all that is left */
		rc = mgw_sse_feed(&q->sp, data, len, on_sse_event, q);
		if (rc > 0 && is_2xx(q->status) && q->id) {
			/* The response is in: the call goes on now, the stream
			 * finishes in the background.  One such stream at a
			 * time; an older one that never ended is cut. */
			if (a->http.drain)
				hreq_cancel(a->http.drain);
			a->http.drain = q;
			q->draining = 1;
			deliver(q, LD_ANS_RESPONSE, NULL);
			return;
		}
		if (rc < 0) {
			mgw_client_cancel(r);
			q->r = NULL;
			deliver(q, LD_ANS_FAILED, rc == MGW_ELIMIT
			                  ? "SSE line or event over the limit"
			                  : "no memory for an SSE event");
			hreq_free(q);
		}
		return;
	}
	cap = is_2xx(q->status) ? LD_MAX_BODY : ERR_BODY_MAX;
	if (q->body_len + len > cap) {
		if (!is_2xx(q->status)) {
			len = cap - q->body_len; /* enough to judge a refusal */
			if (len == 0)
				return;
		} else {
			mgw_client_cancel(r);
			q->r = NULL;
			deliver(q, LD_ANS_FAILED, "response body over the limit");
			hreq_free(q);
			return;
		}
	}
	if (q->body_len + len + 1 > q->body_cap) {
		size_t ncap = q->body_cap ? q->body_cap : 1024;
		char *nb;

		while (ncap < q->body_len + len + 1)
			ncap *= 2;
		nb = realloc(q->body, ncap);
		if (!nb) {
			mgw_client_cancel(r);
			q->r = NULL;
			deliver(q, LD_ANS_FAILED, "no memory for a response");
			hreq_free(q);
			return;
		}
		q->body = nb;
		q->body_cap = ncap;
	}
	memcpy(q->body + q->body_len, data, len);
	q->body_len += len;
	q->body[q->body_len] = '\0';
}

static void on_end(struct mgw_client_req *r, void *arg)
{
	struct ld_hreq *q = arg;
	struct mgw_load_agent *a = q->a;

	(void)r;
	q->r = NULL; /* freed by the client after this returns */
	if (q->draining) {
		if (a->http.drain == q)
			a->http.drain = NULL;
		hreq_free(q);
		return;
	}
	if (q->sse && mgw_sse_finish(&q->sp) && !have_response(q))
		mgw_debug(NULL, "load: SSE stream ended inside an event");
	judge(q);
	hreq_free(q);
}

static void on_error(struct mgw_client_req *r, const struct mgw_client_error *e,
                     void *arg)
{
	struct ld_hreq *q = arg;
	struct mgw_load_agent *a = q->a;
	char why[200];

	(void)r;
	q->r = NULL;
	if (q->draining) {
		if (a->http.drain == q)
			a->http.drain = NULL;
		hreq_free(q);
		return;
	}
	snprintf(why, sizeof(why), "%s: %s", mgw_client_err_class_name(e->cls),
	         e->msg ? e->msg : mgw_strerror(e->code));
	/* a connection that failed (or went silent) is given up: reuse mode
	 * opens a new one before the next request, to a target drawn again,
	 * as a client reconnecting through a Service would land anywhere */
	if (!q->aside)
		a->http.broken = 1;
	deliver(q, e->cls == MGW_CLIENT_E_TIMEOUT && !(e->flags & MGW_CLIENT_F_CONNECT)
	                   ? LD_ANS_TIMEOUT : LD_ANS_FAILED, why);
	hreq_free(q);
}

/* ---- sending ---- */

int ld_http_send(struct mgw_load_agent *a, const struct ld_msg *m)
{
	struct ld_http *h = &a->http;
	const struct mgw_headers *auth = ld_auth_fields(a);
	struct mgw_client_reqspec sp = {0};
	struct mgw_client_origin *o;
	struct mgw_headers hdr;
	struct ld_hreq *q = NULL;
	size_t i;
	int rc;

	mgw_headers_init(&hdr);
	if (h->req) {
		/* never two at once: the agent answers one before the next */
		ld_http_cancel(a);
	}
	if (m->other_target) {
		/* beside the agent's connection: cur, on_conn and broken are
		 * the connection's and stay as they are */
		i = (h->last + 1) % h->n;
	} else if (a->target->conn == MGW_LOAD_CONN_NEW) {
		i = (size_t)mgw_random_below(h->n);
	} else {
		if (h->cur < h->n && (h->broken || (a->target->reconnect_after &&
		    h->on_conn >= a->target->reconnect_after))) {
			/* a planned reconnect, or one after a broken
			 * connection: this connection goes (once its requests
			 * are done) and the next target is drawn again */
			mgw_client_origin_free(h->origins[h->cur]);
			h->origins[h->cur] = NULL;
			h->cur = h->n;
		}
		h->broken = 0;
		if (h->cur >= h->n) {
			h->cur = (size_t)mgw_random_below(h->n);
			h->on_conn = 0;
		}
		i = h->cur;
		h->on_conn++;
	}
	o = origin(a, i);
	if (!o)
		return MGW_ENOMEM;
	for (size_t k = 0; k < m->hdr.n; k++)
		if (mgw_headers_add(&hdr, m->hdr.v[k].name, m->hdr.v[k].name_len,
		                    m->hdr.v[k].value, m->hdr.v[k].value_len) != 0)
			goto nomem;
	for (size_t k = 0; auth && k < auth->n; k++)
		if (mgw_headers_add(&hdr, auth->v[k].name, auth->v[k].name_len,
		                    auth->v[k].value, auth->v[k].value_len) != 0)
			goto nomem;
	q = calloc(1, sizeof(*q));
	if (!q)
		goto nomem;
	q->a = a;
	q->id = m->id;
	q->quick = m->quick ? 1 : 0;
	q->aside = m->other_target ? 1 : 0;
	sp.method = m->http_method;
	sp.target = h->paths[i];
	sp.headers = &hdr;
	sp.body = m->body;
	sp.body_len = m->body_len;
	sp.on_head = on_head;
	sp.on_data = on_data;
	sp.on_end = on_end;
	sp.on_error = on_error;
	sp.arg = q;
	rc = mgw_client_request(o, &sp, &q->r);
	mgw_headers_deinit(&hdr);
	if (rc != 0) {
		free(q);
		return rc;
	}
	h->req = q;
	h->last = i;
	return 0;
nomem:
	mgw_headers_deinit(&hdr);
	free(q);
	return MGW_ENOMEM;
}
