/* sf_session.c - the stateful handler's store operations: create a
 * session from an initialize answer, look one up, remove one (DELETE). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/headers.h"
#include "proxy/errors.h"
#include "proxy/pipeline.h"
#include "proxy/repin.h"
#include "proxy/sf_req.h"
#include "proxy/sse.h"
#include "proxy/txn.h"
#include "session/session.h"
#include "session/store.h"
#include "util/time.h"

/* The answer to initialize with the minted id in Mcp-Session-Id and, for
 * SSE, the event ids stamped with the pin tag like any other. */
static void answer_created(struct mgw_sf_req *q, struct mgw_session *rec)
{
	struct mgw_txn *t = q->t;
	struct mgw_headers out;
	struct evbuffer *stamped = NULL;
	size_t n = evbuffer_get_length(q->held);
	unsigned char *body = n ? evbuffer_pullup(q->held, -1) : NULL;
	int had_sid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id") != NULL;

	mgw_headers_init(&out);
	if (!q->cid || mgw_sf_client_headers(&out, &q->resp_hdrs, rec->id) != 0 ||
	    (!had_sid && mgw_headers_adds(&out, "Mcp-Session-Id", rec->id) != 0))
		goto nomem;
	if (q->sse) {
		struct mgw_sse_stamper st;

		mgw_sse_stamper_init(&st, q->tag);
		stamped = evbuffer_new();
		if (!stamped || mgw_sse_stamp(&st, body, n, stamped) != 0 ||
		    mgw_sse_stamp_flush(&st, stamped) != 0)
			goto nomem;
		n = evbuffer_get_length(stamped);
		body = n ? evbuffer_pullup(stamped, -1) : NULL;
	}
	t->rl.bytes = n;
	mgw_txn_respond(t, t->status, &out, body, n);
	mgw_headers_deinit(&out);
	if (stamped)
		evbuffer_free(stamped);
	return;
nomem:
	mgw_headers_deinit(&out);
	if (stamped)
		evbuffer_free(stamped);
	mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
}

static void on_created(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_sf_req *q = arg;
	struct mgw_txn *t = q->t;

	q->op = NULL;
	if (status != 0 || !rec) {
		const char *usid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id");

		mgw_session_unref(rec);
		atomic_fetch_add(&q->sf->sh->core->cnt.create_failed, 1);
		/* the replica's session is of no use to anyone now */
		if (usid && t->last)
			mgw_repin_end_upstream(&q->sf->map, t->last, t->route,
			                       mgw_http_target(t->x),
			                       mgw_http_authority(t->x), &q->creds, usid);
		mgw_sf_fail(q, MGW_PERR_SESSION_STORE,
		            status == MGW_ELIMIT ? "session store full (sessions."
		                                   "max_sessions or max_memory)"
		                                 : "session store unavailable");
		return;
	}
	q->rec = rec;
	q->tag = mgw_session_pin_tag(rec);
	q->cid = strdup(rec->id);
	t->session = q->cid;
	atomic_fetch_add(&q->sf->sh->core->cnt.created, 1);
	answer_created(q, rec);
}

/* An answer that makes no session: relayed without any upstream id. */
static void answer_no_session(struct mgw_sf_req *q, const void *body, size_t n)
{
	struct mgw_headers out;

	mgw_headers_init(&out);
	if (mgw_sf_client_headers(&out, &q->resp_hdrs, NULL) != 0) {
		mgw_headers_deinit(&out);
		mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	q->t->note = "initialize not accepted";
	mgw_txn_respond(q->t, q->t->status, &out, body, n);
	mgw_headers_deinit(&out);
}

/* The draft record of a new session: the initialize verbatim, the pin,
 * the negotiated version, the replay header and the principal. */
static struct mgw_session *draft(struct mgw_sf_req *q, const json_t *res,
                                 const char *usid)
{
	struct mgw_txn *t = q->t;
	const char *pv = mgw_http_req_header(t->x, "mcp-protocol-version");
	const char *version = json_string_value(json_object_get(res,
	                                                        "protocolVersion"));
	struct mgw_session *d = mgw_session_new();
	const unsigned char *ib;
	size_t il;
	int rc;

	ib = mgw_http_req_body(t->x, &il);
	rc = d ? mgw_session_set_init(d, ib, il) : MGW_ENOMEM;
	if (rc == 0)
		rc = mgw_session_set_pin(d, t->last->conf->url, usid);
	/* a version or header we cannot keep only costs the replays that
	 * header: not a reason to refuse the session */
	if (rc == 0 && version)
		(void)mgw_session_set_protocol_version(d, version);
	if (rc == 0 && pv)
		(void)mgw_session_add_init_header(d, "MCP-Protocol-Version", pv);
	if (rc == 0 && q->bound)
		mgw_session_set_principal(d, q->principal);
	if (rc != 0) {
		mgw_session_unref(d);
		return NULL;
	}
	return d;
}

void mgw_sf_init_answered(struct mgw_sf_req *q)
{
	size_t n = evbuffer_get_length(q->held);
	unsigned char *body = n ? evbuffer_pullup(q->held, -1) : NULL;
	const char *usid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id");
	json_t *resp, *res;
	struct mgw_session *d;
	int rc;

	resp = mgw_sse_body_response(body, n, q->sse,
	                             q->sf->sh->conf->max_json_depth);
	res = resp ? json_object_get(resp, "result") : NULL;
	if (!json_is_object(res)) {
		json_decref(resp);
		answer_no_session(q, body, n);
		return;
	}
	if (usid && !mgw_session_id_valid(usid, strlen(usid),
	                                  MGW_SESSION_UPSTREAM_ID_MAX)) {
		json_decref(resp);
		mgw_sf_fail(q, MGW_PERR_UPSTREAM, "upstream session id is not usable");
		return;
	}
	d = draft(q, res, usid);
	json_decref(resp);
	if (!d) {
		mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	rc = mgw_session_create(q->view, d, on_created, q, &q->op);
	if (rc != 0) {
		q->op = NULL;
		on_created(q, rc, NULL);
	}
}

static void on_removed(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_sf_req *q = arg;

	q->op = NULL;
	mgw_session_unref(rec);
	if (status == MGW_ENOTFOUND) {
		mgw_sf_not_found(q);
		return;
	}
	if (status != 0) {
		atomic_fetch_add(&q->sf->sh->core->cnt.store_errors, 1);
		mgw_sf_fail(q, MGW_PERR_SESSION_STORE, NULL);
		return;
	}
	atomic_fetch_add(&q->sf->sh->core->cnt.deleted, 1);
	q->t->note = "session ended";
	mgw_txn_respond(q->t, 200, NULL, NULL, 0);
}

void mgw_sf_remove(struct mgw_sf_req *q)
{
	int rc;

	mgw_sf_reset_answer(q);
	rc = mgw_session_remove(q->view, q->cid, strlen(q->cid), on_removed, q,
	                        &q->op);
	if (rc != 0) {
		q->op = NULL;
		on_removed(q, rc, NULL);
	}
}

/* DELETE: end the replica's session if it can be reached; the mapping
 * goes whatever it answers. */
static void delete_session(struct mgw_sf_req *q, struct mgw_session *rec)
{
	struct mgw_upstream_server *srv =
		mgw_repin_server_by_url(q->t->route->group, rec->pin_url);

	if (srv && rec->upstream_sid && mgw_repin_pin_check(srv, mgw_now_ms()) < 0) {
		if (mgw_sf_send(q, srv) == 0)
			q->mode = M_DRAIN;
		return;
	}
	mgw_sf_remove(q);
}

static void on_lookup(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_sf_req *q = arg;

	q->op = NULL;
	if (status == MGW_ENOTFOUND) {
		mgw_sf_not_found(q);
		return;
	}
	if (status != 0 || !rec) {
		mgw_session_unref(rec);
		atomic_fetch_add(&q->sf->sh->core->cnt.store_errors, 1);
		mgw_sf_fail(q, MGW_PERR_SESSION_STORE, NULL);
		return;
	}
	q->rec = rec;
	if (q->kind == K_DELETE) {
		delete_session(q, rec);
		return;
	}
	/* a re-pin of this session runs on this worker: wait for it rather
	 * than try the replica it is leaving */
	if (mgw_repin_in_progress(&q->sf->map, q->view, q->cid)) {
		mgw_sf_repin(q, NULL, MGW_REPIN_UNPINNED);
		return;
	}
	mgw_sf_go_pinned(q);
}

void mgw_sf_lookup(struct mgw_sf_req *q)
{
	int rc = mgw_session_lookup(q->view, q->cid, strlen(q->cid),
	                            q->bound ? q->principal : NULL, on_lookup, q,
	                            &q->op);

	if (rc != 0) {
		q->op = NULL;
		mgw_sf_fail(q, MGW_PERR_INTERNAL, NULL);
	}
}
