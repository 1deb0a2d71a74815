/* stateless.c - the stateless handler: balance each request over the
 * route's group, forward it, relay the answer, and retry on another
 * server when the client layer reports that the request provably did
 * not reach the upstream, or when it was lost in flight (no response
 * head, or a collected answer cut short) and is safe to send again
 * (replay.h), within the route's retries and the retry budget, and never
 * after the answer's head went to the client (failover.h).  tools/list
 * answers teach the route's group which tools are safe to repeat; with
 * affinity: task, task-creating tools/call answers teach it which server
 * holds which task, and a tasks/... request pinned to its owner
 * (t->owner, check_affinity.c) is only ever sent there.
 * doc/serve.md tells the behaviour as users see it. */
#include "autoconf.h"

#include <string.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/server.h"
#include "proxy/affinity.h"
#include "proxy/errors.h"
#include "proxy/failover.h"
#include "proxy/handler.h"
#include "proxy/headers_up.h"
#include "proxy/pipeline.h"
#include "proxy/pool.h"
#include "proxy/relay.h"
#include "proxy/replay.h"
#include "proxy/retry.h"
#include "proxy/txn.h"
#include "util/time.h"

/* Starts the next attempt on a server not tried yet.  why_last / detail
 * are what to answer when no further attempt can be made after an earlier
 * one failed (with no attempt at all the answer is -32001).  On failure t
 * is answered and freed. */
static void attempt(struct mgw_txn *t, enum mgw_upool_budget budget,
                    enum mgw_proxy_error why_last, const char *detail,
                    int replay)
{
	struct mgw_upstream_server *s;
	const char *key;
	size_t keylen;
	int rc;

	for (;;) {
		key = mgw_txn_hash_key(t, &keylen);
		s = mgw_txn_next_server(t, key, keylen, budget, why_last, detail);
		if (!s)
			return;
		rc = mgw_txn_send(t, s, &t->hdrs);
		if (rc == 0) {
			if (budget == MGW_UPOOL_RETRY)
				mgw_txn_count_retry(t);
			/* counted once per request, however many sends */
			if (replay && t->replays++ == 0) {
				mgw_replay_count(t, 1);
				mgw_txn_note_why(t, "replayed-after-loss");
			}
			return;
		}
		if (rc == MGW_ETIMEDOUT) {
			mgw_txn_fail(t, MGW_PERR_TIMEOUT, "upstream timeout (total)");
			return;
		}
		if (rc != MGW_ELIMIT) {
			struct mgw_log_ctx ctx;

			mgw_txn_logctx(t, &ctx);
			mgw_warn(&ctx, "cannot forward to %s: %s", s->name,
			         mgw_strerror(rc));
			mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
			return;
		}
		/* this server's queue is full: another one may take it, as a
		 * first attempt still (nothing was sent); a task's owner is
		 * the only one that can */
		why_last = MGW_PERR_OVERLOADED;
		detail = NULL;
		if (t->owner || t->attempts > t->route->conf->retries) {
			mgw_txn_fail(t, MGW_PERR_OVERLOADED, NULL);
			return;
		}
	}
}

static void start(struct mgw_txn *t)
{
	struct mgw_http_exchange *x = t->x;

	if (mgw_proxy_build_headers(&t->hdrs, mgw_http_req_headers(x),
	                            t->pl->conf, mgw_http_peer(x),
	                            mgw_http_is_tls(x), mgw_http_authority(x),
	                            mgw_http_version(x) == 20) != 0) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return;
	}
	mgw_txn_watch_client(t);
	/* the budget's base: every client request that goes upstream */
	mgw_retry_budget_request(t->pl->ups->budget, t->t0);
	attempt(t, MGW_UPOOL_FIRST, MGW_PERR_NO_UPSTREAM, NULL, 0);
}

/* 1 for a tools/list request: its answer teaches the group its tools. */
static int lists_tools(const struct mgw_txn *t)
{
	return t->have_msg && t->msg.kind == MGW_JRPC_REQUEST && t->msg.method &&
	       strcmp(t->msg.method, "tools/list") == 0;
}

static void on_head(struct mgw_txn *t, int status, const struct mgw_headers *h)
{
	unsigned flags = 0;

	if (status >= 200 && status <= 299 &&
	    (lists_tools(t) || mgw_affinity_wants(t)))
		flags |= MGW_RELAY_F_CAPTURE;
	mgw_relay_begin(t, h, flags, 0);
}

/* A complete tools/list answer (JSON or SSE): its annotations become the
 * group's replay-safe tools (a later page, with a cursor, adds).  A
 * tools/call answer may create a task (affinity: task). */
static void on_complete(struct mgw_txn *t, const void *body, size_t len)
{
	struct mgw_replay_group *g = t->route->group->replay;

	mgw_affinity_learn(t, body, len);
	if (!g || !body || t->status < 200 || t->status > 299 || !lists_tools(t))
		return;
	if (mgw_replay_tools_learn_body(&g->tools, body, len, t->rl.sse,
	                                t->pl->conf->max_json_depth,
	                                mgw_jrpc_params_has(&t->msg, "cursor"),
	                                mgw_now_ms()) == 0)
		atomic_fetch_add(&g->learned, 1);
}

static void on_error(struct mgw_txn *t, const struct mgw_client_error *e)
{
	enum mgw_proxy_error kind = mgw_proxy_error_kind(e);
	struct mgw_fo_in in = {0};
	struct mgw_fo_out d;
	char detail[200];

	in.req = MGW_FO_STATELESS;
	in.streaming = t->rl.mode == MGW_RELAY_STREAM;
	in.cls = e->cls;
	in.flags = e->flags;
	in.attempts = t->attempts;
	in.retries = t->route->conf->retries;
	in.replay = mgw_replay_judge(t->have_msg ? &t->msg : NULL,
	                             t->route->conf->replay,
	                             mgw_replay_group_tool_safe, t->route->group);
	in.pinned = t->owner != NULL;
	d = mgw_failover_decide(&in);
	if (d.action == MGW_FO_ABORT) {
		mgw_relay_abort(t, kind == MGW_PERR_TIMEOUT
		                   ? "upstream timeout mid-response"
		                   : "upstream failed mid-response");
		return;
	}
	mgw_proxy_describe_error(e, kind, detail, sizeof(detail));
	switch (d.action) {
	case MGW_FO_GONE:
		mgw_affinity_gone(t);
		return;
	case MGW_FO_RETRY:
		attempt(t, MGW_UPOOL_RETRY, kind, detail, 0);
		return;
	case MGW_FO_REPLAY:
		/* nothing went to the client: what was collected goes */
		mgw_relay_deinit(&t->rl);
		attempt(t, MGW_UPOOL_RETRY, kind, detail, 1);
		return;
	case MGW_FO_REFUSE: {
		char msg[320];

		mgw_replay_count(t, 0);
		mgw_txn_note_why(t, "not-replayed");
		mgw_replay_refusal_msg(in.replay, t->have_msg ? &t->msg : NULL,
		                       msg, sizeof(msg));
		mgw_txn_fail(t, MGW_PERR_NOT_REPLAYED, msg);
		return;
	}
	default:
		mgw_txn_fail(t, kind, detail);
		return;
	}
}

const struct mgw_handler mgw_stateless_handler = {
	.name = "stateless",
	.bit = MGW_H_STATELESS,
	.start = start,
	.on_head = on_head,
	.on_error = on_error,
	.on_complete = on_complete,
};
