/* stateful.c - the stateful handler (handler.h): legacy sessions
 * terminated by the gateway (stateful.h for the behaviour, repin.h for
 * re-pins, failover.h for what a failed attempt leads to).
 *
 * While a request lives it waits for at most one thing at a time: a
 * store operation (sf_session.c), a re-pin run (as a waiter) or an
 * upstream attempt (the transaction's); each is cleared at the top of
 * its own callback, so that freeing the transaction cancels exactly what
 * is in flight.  Answers go through the relay (relay.h) with SSE event
 * ids stamped with the pin tag, except those the handler keeps first:
 * HOLD (maybe a lost session), INIT (the session is created before the
 * answer goes) and DRAIN (a DELETE's). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/principal.h"
#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "http/server.h"
#include "mcp/jsonrpc.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/failover.h"
#include "proxy/handler.h"
#include "proxy/headers_up.h"
#include "proxy/pipeline.h"
#include "proxy/pool.h"
#include "proxy/relay.h"
#include "proxy/repin.h"
#include "proxy/replay.h"
#include "proxy/retry.h"
#include "proxy/sf_bus.h"
#include "proxy/sf_req.h"
#include "proxy/sse.h"
#include "proxy/stateful.h"
#include "proxy/txn.h"
#include "session/session.h"
#include "session/store.h"
#include "util/time.h"

#define LOST_BODY_MAX 4096          /* body held to decide a lost session */

static const struct mgw_sessions_conf *sconf(const struct mgw_sf_req *q)
{
	return &q->sf->sh->conf->sessions;
}

/* ---- answers --------------------------------------------------------------- */

void mgw_sf_fail(struct mgw_sf_req *q, enum mgw_proxy_error e,
                 const char *detail)
{
	mgw_txn_fail(q->t, e, detail);
}

void mgw_sf_not_found(struct mgw_sf_req *q)
{
	atomic_fetch_add(&q->sf->sh->core->cnt.not_found, 1);
	mgw_sf_fail(q, MGW_PERR_SESSION_NOT_FOUND,
	            "session not found: start a new session (initialize)");
}

/* The answer to a session that could not be re-pinned: 404, so that a
 * client following the spec starts a new session (a 503 would make it
 * retry a session that cannot come back). */
static void unrecoverable(struct mgw_sf_req *q)
{
	atomic_fetch_add(&q->sf->sh->core->cnt.unrecoverable, 1);
	mgw_sf_fail(q, MGW_PERR_SESSION_LOST, NULL);
}

int mgw_sf_client_headers(struct mgw_headers *out,
                          const struct mgw_headers *in, const char *sid)
{
	int done = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct mgw_header *f = &in->v[i];

		if (strcasecmp(f->name, "content-length") == 0)
			continue;
		if (strcasecmp(f->name, "mcp-session-id") == 0) {
			if (!sid || done)
				continue;
			done = 1;
			if (mgw_headers_adds(out, f->name, sid) != 0)
				return MGW_ENOMEM;
			continue;
		}
		if (mgw_headers_add(out, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	return 0;
}

/* Hands an upstream head (status t->status) to the relay: the client's
 * session id in place of the upstream's, event ids stamped, a tools/list
 * answer captured for its hints.  Returns 0, or -1 after t was freed. */
static int begin_answer(struct mgw_sf_req *q, const struct mgw_headers *in)
{
	struct mgw_txn *t = q->t;
	struct mgw_headers out;
	unsigned flags = MGW_RELAY_F_STAMP;
	int rc;

	/* a POST's stream names its request in its event ids, so that a
	 * resume after a re-pin can be answered (resume_answered) */
	if (q->kind == K_POST)
		flags |= MGW_RELAY_F_STAMP_REQ;
	mgw_headers_init(&out);
	if (mgw_sf_client_headers(&out, in, q->cid) != 0) {
		mgw_headers_deinit(&out);
		mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
		return -1;
	}
	if (t->have_msg && t->msg.kind == MGW_JRPC_REQUEST &&
	    strcmp(t->msg.method, "tools/list") == 0 && t->status >= 200 &&
	    t->status <= 299)
		flags |= MGW_RELAY_F_CAPTURE;
	rc = mgw_relay_begin(t, &out, flags, q->tag);
	mgw_headers_deinit(&out);
	return rc;
}

/* A GET stream of the session went out: listed, so that a re-pin can
 * close it (on_repinned). */
static void on_stream(struct mgw_txn *t)
{
	struct mgw_sf_req *q = t->hd;

	if (q->kind != K_GET || t->status < 200 || t->status > 299)
		return;
	atomic_fetch_add(&q->sf->sh->core->cnt.streams, 1);
	q->snext = q->sf->streams;
	if (q->snext)
		q->snext->sprev = q;
	q->sf->streams = q;
	q->listed = 1;
}

static void on_complete(struct mgw_txn *t, const void *body, size_t len)
{
	mgw_sf_after_answer(t->hd, body, len);
}

/* Releases a held answer that was not a lost session to the relay, head
 * and held body.  Returns 0, or -1 after t was freed. */
static int release_held(struct mgw_sf_req *q)
{
	struct evbuffer *held = q->held;
	struct mgw_headers hh = q->resp_hdrs;
	size_t n = evbuffer_get_length(held);
	int rc;

	mgw_headers_init(&q->resp_hdrs);
	q->held = NULL;
	q->mode = M_NONE;
	rc = begin_answer(q, &hh);
	mgw_headers_deinit(&hh);
	if (rc == 0 && n)
		rc = mgw_relay_data(q->t, evbuffer_pullup(held, -1), n);
	evbuffer_free(held);
	return rc;
}

/* ---- upstream attempts ------------------------------------------------------ */

void mgw_sf_reset_answer(struct mgw_sf_req *q)
{
	q->mode = M_NONE;
	q->t->status = 0;
	q->lost = MGW_LOST_NO;
	q->sse = 0;
	mgw_headers_deinit(&q->resp_hdrs);
	if (q->held) {
		evbuffer_free(q->held);
		q->held = NULL;
	}
	mgw_relay_deinit(&q->t->rl);
}

/* The request's headers for srv: the upstream session id in place of the
 * client's, a Last-Event-ID only if it was issued under the current pin. */
static int attempt_headers(struct mgw_sf_req *q, struct mgw_headers *h)
{
	if (mgw_headers_add_all(h, &q->t->hdrs) != 0)
		return MGW_ENOMEM;
	if (q->rec && q->rec->upstream_sid &&
	    mgw_headers_adds(h, "Mcp-Session-Id", q->rec->upstream_sid) != 0)
		return MGW_ENOMEM;
	if (q->lei && q->rec) {
		const char *rest;
		size_t rl;

		if (!mgw_sse_unstamp(q->lei, strlen(q->lei), q->tag, &rest, &rl)) {
			atomic_fetch_add(&q->sf->sh->core->cnt.last_event_dropped, 1);
			return 0;
		}
		if (mgw_headers_add(h, "Last-Event-ID", 13, rest, rl) != 0)
			return MGW_ENOMEM;
		atomic_fetch_add(&q->sf->sh->core->cnt.last_event_passed, 1);
	}
	return 0;
}

/* A complete answer of the gateway's own to a GET of the session
 * (resume_answered): status, the client's session id, an SSE body or
 * none.  Frees t. */
static void answer_resume(struct mgw_sf_req *q, int status, const char *body,
                          size_t n)
{
	struct mgw_txn *t = q->t;
	struct mgw_headers h;

	mgw_headers_init(&h);
	/* without memory for the fields the status alone still tells */
	if (mgw_headers_adds(&h, "Mcp-Session-Id", q->cid) != 0 ||
	    mgw_headers_adds(&h, "Cache-Control", "no-cache") != 0)
		mgw_headers_deinit(&h);
	t->rl.bytes = n;
	mgw_txn_access_log(t, status);
	mgw_http_respond(t->x, status, &h, body ? "text/event-stream" : NULL,
	                 body, n);
	t->x = NULL;
	mgw_headers_deinit(&h);
	mgw_txn_free(t);
}

/* The lost request's outcome as the one event of a resumed stream: its
 * JSON-RPC error -32010, under an ANSWERED event id (sse.h).  Returns 0,
 * or MGW_ENOMEM with nothing sent. */
static int answer_lost_request(struct mgw_sf_req *q, json_t *id)
{
	const struct mgw_proxy_error_info *in =
		mgw_proxy_error_info(MGW_PERR_NOT_REPLAYED);
	struct mgw_proxy_reply r;
	char eid[MGW_SSE_STAMP_MAX + 2];
	size_t en = mgw_sse_answered_id(q->tag, id, eid, sizeof(eid));
	char *frame;
	int n;

	if (mgw_proxy_reply_build(&r, 200, in->code, "upstream lost mid-stream; "
	                          "not replayed: the session's replica was lost "
	                          "while this request's answer streamed, so its "
	                          "outcome is unknown", NULL, 1, id) != 0)
		return MGW_ENOMEM;
	frame = malloc(r.len + en + 40);
	if (!frame) {
		mgw_proxy_reply_deinit(&r);
		return MGW_ENOMEM;
	}
	n = sprintf(frame, "%s%.*s%sevent: message\ndata: %.*s\n\n",
	            en ? "id: " : "", (int)en, eid, en ? "\n" : "",
	            (int)r.len, r.body);
	mgw_proxy_reply_deinit(&r);
	atomic_fetch_add(&q->sf->sh->core->cnt.resumes_answered, 1);
	mgw_txn_note_why(q->t, "lost-stream-outcome");
	q->t->note = in->name;
	answer_resume(q, 200, frame, (size_t)n);
	free(frame);
	return 0;
}

/* A GET resuming the stream of a POST (its Last-Event-ID a REQUEST stamp,
 * sse.h) is never opened upstream as a standalone stream: under the
 * current pin it is passed on (the replica resumes it); under a pin that
 * is gone the request was lost with its replica (a streamed answer is
 * never replayed: failover.h), and the client gets that request's error
 * at once; resumed again after that (an ANSWERED stamp), 204.  Returns 1
 * when answered here (t freed), 0 to go upstream. */
static int resume_answered(struct mgw_sf_req *q)
{
	struct mgw_sse_stamp_view sv;
	json_t *id;
	int rc;

	if (q->kind != K_GET || !q->lei ||
	    !mgw_sse_stamp_parse(q->lei, strlen(q->lei), &sv) ||
	    sv.kind == MGW_SSE_STAMP_PLAIN ||
	    (sv.kind == MGW_SSE_STAMP_REQUEST && sv.tag == q->tag))
		return 0;
	id = sv.kind == MGW_SSE_STAMP_REQUEST ? mgw_sse_stamp_request_id(&sv)
	                                      : NULL;
	rc = id ? answer_lost_request(q, id) : MGW_ENOMEM;
	json_decref(id);
	if (rc != 0) {
		/* answered before, or an id that does not decode: nothing
		 * more will come on this stream */
		atomic_fetch_add(&q->sf->sh->core->cnt.resumes_answered, 1);
		mgw_txn_note_why(q->t, "stream-already-answered");
		answer_resume(q, 204, NULL, 0);
	}
	return 1;
}

int mgw_sf_send(struct mgw_sf_req *q, struct mgw_upstream_server *srv)
{
	struct mgw_headers h;
	int rc;

	mgw_sf_reset_answer(q);
	mgw_headers_init(&h);
	if (q->rec)
		q->tag = mgw_session_pin_tag(q->rec);
	if (resume_answered(q)) {
		mgw_headers_deinit(&h);
		return -1;
	}
	rc = attempt_headers(q, &h);
	if (rc == 0)
		rc = mgw_txn_send(q->t, srv, &h);
	mgw_headers_deinit(&h);
	if (rc == 0)
		return 0;
	if (rc == MGW_ETIMEDOUT)
		mgw_sf_fail(q, MGW_PERR_TIMEOUT, "upstream timeout (total)");
	else
		mgw_sf_fail(q, rc == MGW_ELIMIT ? MGW_PERR_OVERLOADED
		                                : MGW_PERR_INTERNAL, NULL);
	return -1;
}

static void on_repin_done(void *arg, int status, struct mgw_session *rec,
                          struct mgw_upstream_server *srv)
{
	struct mgw_sf_req *q = arg;

	if (status == 0) {
		mgw_session_unref(q->rec);
		q->rec = rec;
		mgw_sf_send(q, srv);
		return;
	}
	mgw_session_unref(rec);
	if (status == MGW_ENOTFOUND)
		mgw_sf_not_found(q);
	else if (status == MGW_EPROTO)
		unrecoverable(q);
	else if (status == MGW_EAGAIN)
		mgw_sf_fail(q, MGW_PERR_OVERLOADED,
		            "retry budget exhausted: the session was not moved");
	else
		mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
}

void mgw_sf_repin(struct mgw_sf_req *q, struct mgw_upstream_server *failed,
                  enum mgw_repin_reason reason)
{
	const struct mgw_sessions_conf *c = sconf(q);
	unsigned max = c->max_repin_attempts ? c->max_repin_attempts : 1;
	struct mgw_repin_params p;
	int joined = 0, rc;

	if (q->repins >= max) {
		unrecoverable(q);
		return;
	}
	q->repins++;
	memset(&p, 0, sizeof(p));
	p.view = q->view;
	p.route = q->t->route;
	p.rec = q->rec;
	p.principal = q->bound ? q->principal : NULL;
	p.failed = failed;
	p.reason = reason;
	p.target = mgw_http_target(q->t->x);
	p.authority = mgw_http_authority(q->t->x);
	p.creds = &q->creds;
	p.max_attempts = max;
	q->waiter.cb = on_repin_done;
	q->waiter.arg = q;
	rc = mgw_repin_join(&q->sf->map, &p, &q->waiter, &joined);
	if (rc != 0) {
		mgw_sf_fail(q, rc == MGW_ELIMIT ? MGW_PERR_OVERLOADED
		                                : MGW_PERR_INTERNAL, NULL);
		return;
	}
	q->t->repin = mgw_repin_reason_name(reason);
	if (joined) {
		mgw_txn_note_why(q->t, "waited-for-repin");
	} else {
		char w[40];

		snprintf(w, sizeof(w), "repin(%s)", mgw_repin_reason_name(reason));
		mgw_txn_note_why(q->t, w);
	}
}

void mgw_sf_go_pinned(struct mgw_sf_req *q)
{
	struct mgw_upstream_server *srv =
		mgw_repin_server_by_url(q->t->route->group, q->rec->pin_url);
	int reason = mgw_repin_pin_check(srv, mgw_now_ms());

	if (reason >= 0) {
		mgw_sf_repin(q, srv, (enum mgw_repin_reason)reason);
		return;
	}
	mgw_sf_send(q, srv);
}

/* initialize: the next server by the balancer, as on the stateless path. */
static void start_init(struct mgw_sf_req *q, enum mgw_upool_budget budget,
                       enum mgw_proxy_error why_last, const char *detail)
{
	/* no hash key: an initialize has no session to keep together yet */
	struct mgw_upstream_server *s =
		mgw_txn_next_server(q->t, NULL, 0, budget, why_last, detail);

	if (s && mgw_sf_send(q, s) == 0 && budget == MGW_UPOOL_RETRY)
		mgw_txn_count_retry(q->t);
}

/* ---- upstream events ------------------------------------------------------ */

static int keep_head(struct mgw_sf_req *q, enum sf_mode mode,
                     const struct mgw_headers *h)
{
	q->mode = mode;
	if (!(q->held = evbuffer_new()))
		return MGW_ENOMEM;
	return mgw_headers_add_all(&q->resp_hdrs, h);
}

static void on_head(struct mgw_txn *t, int status, const struct mgw_headers *h)
{
	struct mgw_sf_req *q = t->hd;

	if (q->mode == M_DRAIN)
		return;
	if (q->kind == K_INIT && status >= 200 && status <= 299) {
		q->sse = mgw_relay_is_event_stream(mgw_headers_get(h, "content-type"));
		if (keep_head(q, M_INIT, h) != 0)
			mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	if (q->kind != K_INIT) {
		q->lost = mgw_repin_lost_status(&sconf(q)->lost_session, status);
		if (q->lost != MGW_LOST_NO) {
			/* not a word to the client until decided */
			if (keep_head(q, M_HOLD, h) != 0)
				mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
			return;
		}
	}
	begin_answer(q, h);
}

/* 1 if the held answer says the replica does not know the session. */
static int held_is_lost(struct mgw_sf_req *q)
{
	size_t n = evbuffer_get_length(q->held);

	return q->lost == MGW_LOST_YES ||
	       mgw_repin_lost_body(&sconf(q)->lost_session,
	                           n ? evbuffer_pullup(q->held, -1) : NULL, n);
}

/* The held answer says the replica does not know the session: re-pin.
 * The attempt must have ended or been cancelled. */
static void lost_session(struct mgw_sf_req *q)
{
	struct mgw_upstream_server *s = q->t->last;
	int status = q->t->status;

	mgw_txn_cancel_attempt(q->t);
	mgw_sf_reset_answer(q);
	mgw_sf_repin(q, s, mgw_repin_lost_reason(status));
}

static void on_data(struct mgw_txn *t, const unsigned char *d, size_t n)
{
	struct mgw_sf_req *q = t->hd;

	if (q->mode == M_DRAIN || q->mode == M_NONE)
		return;
	if (q->mode == M_INIT &&
	    evbuffer_get_length(q->held) + n > MGW_REPIN_INIT_BODY_MAX) {
		mgw_sf_fail(q, MGW_PERR_UPSTREAM, "initialize answer too large");
		return;
	}
	if (evbuffer_add(q->held, d, n) != 0) {
		mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	if (q->mode != M_HOLD || evbuffer_get_length(q->held) <= LOST_BODY_MAX)
		return;
	/* too long for the answer of a server that lost the session,
	 * unless it said so in what we hold */
	if (held_is_lost(q))
		lost_session(q);
	else
		release_held(q);
}

static void on_end(struct mgw_txn *t)
{
	struct mgw_sf_req *q = t->hd;

	switch (q->mode) {
	case M_DRAIN:
		mgw_sf_remove(q);
		return;
	case M_INIT:
		mgw_sf_init_answered(q);
		return;
	case M_HOLD:
		if (held_is_lost(q)) {
			lost_session(q);
			return;
		}
		if (release_held(q) == 0)
			mgw_relay_end(t);
		return;
	default:
		mgw_sf_fail(q, MGW_PERR_UPSTREAM, NULL);
		return;
	}
}

/* An initialize whose answer broke after its head: the session the
 * replica opened is no use (the client gets another, or none), so it is
 * ended, not left behind. */
static void end_init_session(struct mgw_sf_req *q, struct mgw_upstream_server *s)
{
	const char *usid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id");

	if (s && usid)
		mgw_repin_end_upstream(&q->sf->map, s, q->t->route,
		                       mgw_http_target(q->t->x),
		                       mgw_http_authority(q->t->x), &q->creds, usid);
}

static void refuse_replay(struct mgw_sf_req *q, enum mgw_replay_verdict v)
{
	char msg[320];

	atomic_fetch_add(&q->sf->sh->core->cnt.inflight_refused, 1);
	mgw_replay_count(q->t, 0);
	mgw_txn_note_why(q->t, "not-replayed");
	mgw_replay_refusal_msg(v, q->t->have_msg ? &q->t->msg : NULL, msg,
	                       sizeof(msg));
	mgw_sf_fail(q, MGW_PERR_NOT_REPLAYED, msg);
}

/* The facts of a failed attempt for the policy (failover.h). */
static void failure_facts(struct mgw_sf_req *q, const struct mgw_client_error *e,
                          struct mgw_fo_in *in)
{
	struct mgw_txn *t = q->t;
	const struct mgw_sessions_conf *c = sconf(q);

	memset(in, 0, sizeof(*in));
	in->req = q->kind == K_INIT ? MGW_FO_INIT
	        : q->mode == M_DRAIN ? MGW_FO_DELETE : MGW_FO_SESSION;
	in->streaming = t->rl.mode == MGW_RELAY_STREAM;
	in->cls = e->cls;
	in->flags = e->flags;
	in->attempts = t->attempts;
	in->retries = t->route->conf->retries;
	in->replays = q->replays;
	in->max_replays = c->max_repin_attempts ? c->max_repin_attempts : 1;
	in->same_as_last_loss = t->last && q->lost_on == t->last;
	if (in->req == MGW_FO_SESSION)
		in->replay = mgw_repin_replay_safe(t->have_msg ? &t->msg : NULL,
		                                   q->rec, t->route->conf->replay);
}

static void on_error(struct mgw_txn *t, const struct mgw_client_error *e)
{
	struct mgw_sf_req *q = t->hd;
	struct mgw_upstream_server *s = t->last;
	enum mgw_proxy_error kind = mgw_proxy_error_kind(e);
	struct mgw_fo_in in;
	struct mgw_fo_out d;
	char detail[200];

	failure_facts(q, e, &in);
	d = mgw_failover_decide(&in);
	if (d.action == MGW_FO_ABORT) {
		/* A GET stream whose replica failed is closed so that the
		 * client reconnects; the reconnect is re-pinned. */
		if (q->kind == K_GET)
			atomic_fetch_add(&q->sf->sh->core->cnt.streams_closed, 1);
		mgw_relay_abort(t, kind == MGW_PERR_TIMEOUT
		                   ? "upstream timeout mid-response"
		                   : "upstream failed mid-response");
		return;
	}
	if (d.action == MGW_FO_DROP) {
		mgw_sf_remove(q);   /* best effort: the mapping goes anyway */
		return;
	}
	if (q->kind == K_INIT)
		end_init_session(q, s);
	mgw_sf_reset_answer(q);
	mgw_proxy_describe_error(e, kind, detail, sizeof(detail));
	switch (d.action) {
	case MGW_FO_RETRY:
		start_init(q, MGW_UPOOL_RETRY, kind, detail);
		return;
	case MGW_FO_REPIN:
		mgw_sf_repin(q, s, d.reason);
		return;
	case MGW_FO_REFUSE:
		refuse_replay(q, in.replay);
		return;
	case MGW_FO_REPLAY:
	case MGW_FO_REPLAY_REPIN:
		/* counted once per request, however many sends it took */
		if (q->replays++ == 0) {
			atomic_fetch_add(&q->sf->sh->core->cnt.inflight_replayed, 1);
			mgw_replay_count(t, 1);
			mgw_txn_note_why(t, "replayed-after-loss");
		}
		if (d.action == MGW_FO_REPLAY_REPIN) {
			mgw_sf_repin(q, s, d.reason);
			return;
		}
		/* Through the pin check again: a replica that is down,
		 * ejected or refusing by now moves the session; one that
		 * still answers gets the request again (it is safe to). */
		q->lost_on = s;
		mgw_sf_go_pinned(q);
		return;
	default:
		mgw_sf_fail(q, kind, detail);
		return;
	}
}

/* ---- GET streams and re-pins ------------------------------------------------ */

static void unlist(struct mgw_sf_req *q)
{
	if (!q->listed)
		return;
	if (q->sprev)
		q->sprev->snext = q->snext;
	else
		q->sf->streams = q->snext;
	if (q->snext)
		q->snext->sprev = q->sprev;
	q->sprev = q->snext = NULL;
	q->listed = 0;
}

void mgw_sf_on_repinned(void *arg, const struct mgw_session *rec,
                        const struct mgw_upstream_server *srv)
{
	struct mgw_sf *sf = arg;
	struct mgw_sf_req *q = sf->streams, *next;

	for (; q; q = next) {
		next = q->snext;
		if (q->cid && strcmp(q->cid, rec->id) == 0 && q->t->last != srv) {
			atomic_fetch_add(&sf->sh->core->cnt.streams_closed, 1);
			mgw_relay_abort(q->t, "session re-pinned");
		}
	}
	/* the other workers' streams: best effort (no memory: they end
	 * when their replica fails) */
	(void)mgw_sf_bus_publish(sf->bus, rec->id, rec->pin_gen);
}

void mgw_sf_on_bus(void *arg, const char *sid, uint32_t gen)
{
	struct mgw_sf *sf = arg;
	struct mgw_sf_req *q = sf->streams, *next;

	for (; q; q = next) {
		next = q->snext;
		if (q->cid && q->rec && strcmp(q->cid, sid) == 0 &&
		    q->rec->pin_gen < gen) {
			atomic_fetch_add(&sf->sh->core->cnt.streams_closed, 1);
			atomic_fetch_add(&sf->sh->core->cnt.streams_closed_elsewhere, 1);
			mgw_relay_abort(q->t, "session re-pinned (by another worker)");
		}
	}
}

/* ---- the handler ------------------------------------------------------------ */

int mgw_sf_claims(enum mgw_mode_conf mode, const char *method,
                  const char *path, const struct mgw_headers *h,
                  const struct mgw_jrpc_msg *m, enum mgw_era era)
{
	int has_sid = mgw_headers_get(h, "mcp-session-id") != NULL;
	int get_del = strcmp(method, "GET") == 0 || strcmp(method, "DELETE") == 0;

	if (mode == MGW_MODE_STATELESS)
		return 0;
	if (mode == MGW_MODE_AUTO && era == MGW_ERA_IS_MODERN)
		return 0;
	if (strcmp(method, "POST") == 0)
		return has_sid || (m && m->kind == MGW_JRPC_REQUEST && m->method &&
		                   strcmp(m->method, "initialize") == 0);
	if (!get_del)
		return 0;
	if (has_sid)
		return 1;
	return mode == MGW_MODE_STATEFUL && mgw_proxy_is_mcp_endpoint(method, path, h);
}

static void release(struct mgw_txn *t)
{
	struct mgw_sf_req *q = t->hd;

	if (!q)
		return;
	if (q->op)
		mgw_session_op_cancel(q->op);
	mgw_repin_leave(&q->waiter);
	unlist(q);
	mgw_session_unref(q->rec);
	mgw_headers_deinit(&q->creds);
	mgw_headers_deinit(&q->resp_hdrs);
	if (q->held)
		evbuffer_free(q->held);
	free(q->cid);
	q->sf->live--;
	free(q);
	t->hd = NULL;
}

/* Copies the credentials a replay carries (Authorization, Cookie). */
static int keep_creds(struct mgw_sf_req *q)
{
	const struct mgw_headers *h = &q->t->hdrs;

	for (size_t i = 0; i < h->n; i++) {
		const struct mgw_header *f = &h->v[i];

		if ((strcasecmp(f->name, "authorization") == 0 ||
		     strcasecmp(f->name, "cookie") == 0) &&
		    mgw_headers_add(&q->creds, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	return 0;
}

static enum sf_kind kind_of(const struct mgw_txn *t, const char *sid)
{
	const char *method = mgw_http_method(t->x);

	if (strcmp(method, "POST") == 0)
		return (t->have_msg && t->msg.kind == MGW_JRPC_REQUEST &&
		        t->msg.method && strcmp(t->msg.method, "initialize") == 0)
		       ? K_INIT : K_POST;
	if (!sid)
		return K_NOSESSION;
	return strcmp(method, "GET") == 0 ? K_GET : K_DELETE;
}

void mgw_sf_principal_digest(const struct mgw_principal *p, const char *auth,
                             unsigned char out[MGW_SESSION_DIGEST_LEN])
{
	json_t *iss = NULL;
	const char *kind, *a, *b;
	size_t ka, la, lb, n;
	char *buf;

	if (!p) {
		mgw_session_principal_digest(auth, auth ? strlen(auth) : 0, out);
		return;
	}
	/* "jwt" NUL iss NUL sub, or "static" NUL name: no Authorization
	 * value holds a NUL, so neither form is the digest of a header, and
	 * the separators keep (iss, sub) pairs apart. */
	if (p->kind == MGW_PRINCIPAL_JWT) {
		/* the claim itself, not mgw_principal_claim's bounded copy: a
		 * truncated issuer could name two */
		if (p->claims)
			iss = json_object_get(p->claims, "iss");
		kind = "jwt";
		a = json_is_string(iss) ? json_string_value(iss) : "";
		la = json_is_string(iss) ? json_string_length(iss) : 0;
		b = p->sub;
	} else {
		kind = "static";
		a = p->sub;
		la = strlen(a);
		b = NULL;
	}
	ka = strlen(kind) + 1;
	lb = b ? strlen(b) : 0;
	n = ka + la + (b ? 1 + lb : 0);
	buf = malloc(n);
	if (!buf) {
		/* all zero: never the SHA-256 of anything, so it opens no
		 * session made with a real digest */
		memset(out, 0, MGW_SESSION_DIGEST_LEN);
		return;
	}
	memcpy(buf, kind, ka);
	memcpy(buf + ka, a, la);
	if (b) {
		buf[ka + la] = '\0';
		memcpy(buf + ka + la + 1, b, lb);
	}
	mgw_session_principal_digest(buf, n, out);
	free(buf);
}

/* The request's state: kind, session id, principal, headers. */
static int prepare(struct mgw_sf_req *q)
{
	struct mgw_txn *t = q->t;
	struct mgw_http_exchange *x = t->x;
	const char *sid = mgw_http_req_header(x, "mcp-session-id");
	int rc;

	q->kind = kind_of(t, sid);
	if (sid && q->kind != K_INIT) {
		if (!(q->cid = strdup(sid)))
			return MGW_ENOMEM;
		t->session = q->cid;
	}
	if (sconf(q)->bind_principal) {
		mgw_sf_principal_digest(t->principal,
		                        mgw_http_req_header(x, "authorization"),
		                        q->principal);
		q->bound = 1;
	}
	q->lei = mgw_http_req_header(x, "last-event-id");
	rc = mgw_proxy_build_headers(&t->hdrs, mgw_http_req_headers(x),
	                             q->sf->sh->conf, mgw_http_peer(x),
	                             mgw_http_is_tls(x), mgw_http_authority(x),
	                             mgw_http_version(x) == 20);
	if (rc != 0)
		return rc;
	/* put back per attempt: the upstream's id, a checked event id */
	mgw_headers_remove(&t->hdrs, "mcp-session-id");
	mgw_headers_remove(&t->hdrs, "last-event-id");
	return keep_creds(q);
}

static void start_initialize(struct mgw_sf_req *q)
{
	struct mgw_txn *t = q->t;
	int kind = q->sf->sh->route_store[t->route->index];
	size_t len, max = mgw_session_store_max_initialize(q->sf->sh->core->stores[kind].st);

	(void)mgw_http_req_body(t->x, &len);
	if (len > max) {
		char msg[160];

		snprintf(msg, sizeof(msg), "initialize too large for the session "
		         "store (%zu bytes; sessions.max_initialize_bytes is %zu)",
		         len, max);
		mgw_sf_fail(q, MGW_PERR_TOO_LARGE, msg);
		return;
	}
	atomic_fetch_add(&q->sf->sh->core->cnt.initializes, 1);
	start_init(q, MGW_UPOOL_FIRST, MGW_PERR_NO_UPSTREAM, NULL);
}

static void start(struct mgw_txn *t)
{
	struct mgw_sf *sf = t->pl->sf;
	struct mgw_sf_req *q = calloc(1, sizeof(*q));

	if (!q) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return;
	}
	sf->live++;
	atomic_fetch_add(&sf->sh->core->cnt.requests, 1);
	q->t = t;
	q->sf = sf;
	q->view = sf->views[sf->sh->route_store[t->route->index]];
	mgw_headers_init(&q->creds);
	mgw_headers_init(&q->resp_hdrs);
	t->hd = q;
	if (prepare(q) != 0) {
		mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	if (q->kind == K_NOSESSION) {
		atomic_fetch_add(&sf->sh->core->cnt.missing_session, 1);
		mgw_sf_fail(q, MGW_PERR_SESSION_REQUIRED, NULL);
		return;
	}
	mgw_txn_watch_client(t);
	/* the budget's base: every client request that goes upstream (re-pin
	 * replays and retries draw on it) */
	mgw_retry_budget_request(t->pl->ups->budget, t->t0);
	if (q->kind == K_INIT)
		start_initialize(q);
	else
		mgw_sf_lookup(q);
}

const struct mgw_handler mgw_stateful_handler = {
	.name = "stateful",
	.bit = MGW_H_STATEFUL,
	.start = start,
	.on_head = on_head,
	.on_data = on_data,
	.on_end = on_end,
	.on_error = on_error,
	.on_complete = on_complete,
	.on_stream = on_stream,
	.release = release,
};
