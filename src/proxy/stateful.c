/* stateful.c - the stateful path: legacy sessions terminated by the
 * gateway (see stateful.h for the behaviour, repin.h for re-pins).
 *
 * One struct mgw_sf_req lives exactly as long as its client exchange: it
 * is freed when the answer is complete or cut, or when the client goes
 * away.  While it lives it waits for at most one thing at a time: a store
 * operation (lookup, create, remove), a re-pin run (as a waiter), or an
 * upstream attempt; each is cleared at the top of its own callback, so
 * that freeing the request cancels exactly what is in flight.
 *
 * Answers from the upstream go through one of these modes:
 *   HOLD     the status says "maybe a lost session": head kept, up to
 *            LOST_BODY_MAX bytes of body held until decided; lost means
 *            re-pin (nothing reached the client), else it is released
 *            into COLLECT or STREAM;
 *   INIT     a 2xx to initialize: collected whole, then the session is
 *            created and the answer sent with the minted id;
 *   COLLECT  small and sized (as on the stateless path): sent whole;
 *   STREAM   everything else: head sent, body relayed with backpressure,
 *            SSE event ids stamped with the pin tag;
 *   DRAIN    the answer to a DELETE: ignored.
 * Record changes the answers call for (notifications/initialized kept,
 * tools/list annotations) go to the store in the background (struct
 * mgw_sf_bg) so that they never delay the client. */
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
#include "mcp/jsonrpc.h"
#include "proxy/errors.h"
#include "proxy/forward.h"
#include "proxy/repin.h"
#include "proxy/retry.h"
#include "proxy/sse.h"
#include "proxy/stateful.h"
#include "proxy/upstream.h"
#include "session/session.h"
#include "session/store.h"
#include "util/time.h"

#define LOST_BODY_MAX 4096          /* body held to decide a lost session */
#define CAPTURE_MAX (1024 * 1024)   /* tools/list answer read for hints */
#define FLUSH_PIECE (32 * 1024)     /* see forward.c */
#define BG_TRIES 4                  /* compare-and-set rounds of an update */
/* A route choosing the sealed store over another default store keeps its
 * tokens header-sized (doc/sessions.md). */
#define SEALED_ROUTE_INIT_MAX (8 * 1024)

enum sf_kind {
	K_INIT = 0,     /* POST initialize */
	K_POST,         /* any other POST of a session */
	K_GET,          /* the standalone SSE stream */
	K_DELETE,       /* end of the session */
	K_NOSESSION,    /* GET/DELETE without a session (stateful mode) */
};

enum sf_mode {
	M_NONE = 0, M_HOLD, M_INIT, M_COLLECT, M_STREAM, M_DRAIN,
};

struct mgw_sf_req {
	struct mgw_sf *sf;
	struct mgw_http_exchange *x;      /* NULL once the client side ended */
	const struct mgw_route *route;
	struct mgw_session_view *view;    /* the route's store */
	enum sf_kind kind;
	struct mgw_jrpc_msg msg;
	int have_msg;
	int as_json;
	struct mgw_headers hdrs;          /* to the upstream, without
	                                   * Mcp-Session-Id and Last-Event-ID */
	struct mgw_headers creds;         /* Authorization and Cookie, for
	                                   * replays */
	char *cid;                        /* the client's session id */
	const char *lei;                  /* the client's Last-Event-ID */
	unsigned char principal[MGW_SESSION_DIGEST_LEN];
	int bound;                        /* principal is meaningful */
	struct mgw_session *rec;          /* the session (ref) */
	uint32_t tag;                     /* pin tag of rec */
	struct mgw_session_op *op;
	struct mgw_repin_waiter waiter;
	uint64_t t0;
	/* the current attempt */
	struct mgw_client_req *up;
	struct mgw_upstream_server *srv;  /* acquired while up is live */
	struct mgw_upstream_server *pin;  /* server of the last attempt */
	struct mgw_upstream_tried tried;    /* initialize: servers tried */
	unsigned attempts;
	unsigned repins;                  /* re-pin runs this request needed */
	unsigned replays;                 /* sent again after a loss */
	const struct mgw_upstream_server *lost_on; /* server of the last
	                                  * loss in flight */
	/* the answer */
	enum sf_mode mode;
	int status;
	enum mgw_lost_verdict lost;
	struct mgw_headers resp_hdrs;     /* HOLD, INIT, COLLECT */
	size_t expect_len;                /* COLLECT */
	struct evbuffer *buf;             /* held, collected or to write */
	struct evbuffer *cap;             /* tools/list answer, STREAM */
	int sse;
	struct mgw_sse_stamper stamp;
	int paused, up_ended;
	uint64_t bytes;
	const char *note;
	char why[64];                     /* re-pin note for the log */
	struct mgw_sf_req *sprev, *snext; /* sf->streams (GET, STREAM) */
	int listed;
};

/* A record update in the background. */
enum bg_what { BG_INITIALIZED, BG_TOOLS };

struct mgw_sf_bg {
	struct mgw_sf *sf;
	struct mgw_sf_bg *prev, *next;
	struct mgw_session_view *view;
	struct mgw_session_op *op;
	enum bg_what what;
	unsigned tries;
	unsigned char *body;              /* BG_INITIALIZED */
	size_t len;
	char **names;                     /* BG_TOOLS */
	size_t n;
	int merge;                        /* a later page: add to the set */
};

static const struct mgw_sessions_conf *sconf(const struct mgw_sf_req *q)
{
	return &q->sf->sh->conf->sessions;
}

/* ---- bookkeeping ---------------------------------------------------------- */

static void req_logctx(const struct mgw_sf_req *q, struct mgw_log_ctx *ctx)
{
	ctx->conn_id = q->x ? mgw_http_conn_id(q->x) : 0;
	ctx->stream_id = q->x ? mgw_http_stream_id(q->x) : -1;
	ctx->session = q->cid;
}

static const char *log_method(const struct mgw_sf_req *q)
{
	if (q->have_msg && q->msg.method)
		return q->msg.method;
	if (q->have_msg && q->msg.kind == MGW_JRPC_RESPONSE)
		return "response";
	return "-";
}

/* One access line per request at info when access logging is on
 * (log.access, --access-log), as on the stateless path, with the session
 * in the context and what the stateful path did. */
static void access_log(struct mgw_sf_req *q, int status)
{
	struct mgw_log_ctx ctx;

	if (!mgw_log_access_enabled() || !q->x)
		return;
	req_logctx(q, &ctx);
	mgw_log(MGW_LOG_INFO, &ctx, "%s %s mcp=%s upstream=%s status=%d %.0fms%s%s%s%s",
	        mgw_http_method(q->x), mgw_http_path(q->x), log_method(q),
	        q->pin ? q->pin->name : "-", status,
	        (double)(mgw_now_ms() - q->t0), q->why[0] ? " " : "", q->why,
	        q->note ? " " : "", q->note ? q->note : "");
}

static void note_why(struct mgw_sf_req *q, const char *what)
{
	size_t n = strlen(q->why);

	snprintf(q->why + n, sizeof(q->why) - n, "%s%s", n ? "," : "", what);
}

static void release_server(struct mgw_sf_req *q)
{
	if (q->srv) {
		mgw_upstream_release(q->srv);
		q->srv = NULL;
	}
}

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

/* Frees q; the exchange must be finished or gone.  Whatever q waits for
 * is cancelled. */
static void req_free(struct mgw_sf_req *q)
{
	if (q->op)
		mgw_session_op_cancel(q->op);
	mgw_repin_leave(&q->waiter);
	if (q->up)
		mgw_client_cancel(q->up);
	release_server(q);
	unlist(q);
	mgw_session_unref(q->rec);
	if (q->have_msg)
		mgw_jrpc_msg_deinit(&q->msg);
	mgw_headers_deinit(&q->hdrs);
	mgw_headers_deinit(&q->creds);
	mgw_headers_deinit(&q->resp_hdrs);
	if (q->buf)
		evbuffer_free(q->buf);
	if (q->cap)
		evbuffer_free(q->cap);
	mgw_upstream_tried_free(&q->tried);
	free(q->cid);
	q->sf->live--;
	free(q);
}

static void finish_reply(struct mgw_sf_req *q, struct mgw_proxy_reply *r)
{
	access_log(q, r->status);
	mgw_http_respond(q->x, r->status, NULL, r->content_type, r->body, r->len);
	q->x = NULL;
	mgw_proxy_reply_deinit(r);
	req_free(q);
}

/* Answers one of the gateway's own errors and frees q; nothing may be in
 * flight upstream. */
static void fail(struct mgw_sf_req *q, enum mgw_proxy_error e,
                 const char *detail)
{
	struct mgw_proxy_reply r;
	const struct mgw_proxy_error_info *in = mgw_proxy_error_info(e);

	q->sf->f->st.errors[e < MGW_PERR_N ? e : MGW_PERR_INTERNAL]++;
	if (!q->note)
		q->note = in->name;
	if (q->up) {
		mgw_client_cancel(q->up);
		q->up = NULL;
	}
	release_server(q);
	if (mgw_proxy_reply_error(&r, e, detail, q->as_json,
	                          mgw_proxy_reply_id(q->have_msg ? &q->msg : NULL)) != 0) {
		access_log(q, in->status);
		mgw_http_respond(q->x, in->status, NULL, NULL, NULL, 0);
		q->x = NULL;
		req_free(q);
		return;
	}
	finish_reply(q, &r);
}

/* The answer to a session the gateway does not know (or no longer). */
static void not_found(struct mgw_sf_req *q)
{
	atomic_fetch_add(&q->sf->sh->cnt.not_found, 1);
	fail(q, MGW_PERR_SESSION_NOT_FOUND,
	     "session not found: start a new session (initialize)");
}

/* The answer to a session that could not be re-pinned: 404, so that a
 * client following the spec starts a new session (a 503 would make it
 * retry a session that cannot come back). */
static void unrecoverable(struct mgw_sf_req *q)
{
	atomic_fetch_add(&q->sf->sh->cnt.unrecoverable, 1);
	fail(q, MGW_PERR_SESSION_LOST, NULL);
}

/* ---- record updates in the background ------------------------------------ */

static void bg_free(struct mgw_sf_bg *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		b->sf->bg = b->next;
	if (b->next)
		b->next->prev = b->prev;
	if (b->op)
		mgw_session_op_cancel(b->op);
	free(b->body);
	for (size_t i = 0; i < b->n; i++)
		free(b->names[i]);
	free(b->names);
	free(b);
}

/* Applies b to the private copy s.  Returns 1 if s changed, 0 if nothing
 * is left to do, or MGW_E*. */
static int bg_apply(struct mgw_sf_bg *b, struct mgw_session *s)
{
	if (b->what == BG_INITIALIZED) {
		if (s->initialized_body)
			return 0;
		return mgw_session_set_initialized(s, b->body, b->len) == 0 ? 1
		                                                            : MGW_EINVAL;
	}
	if (b->merge && s->tools_known) {
		size_t n = s->n_safe_tools + b->n;
		const char **all = calloc(n ? n : 1, sizeof(*all));
		int rc;

		if (!all)
			return MGW_ENOMEM;
		for (size_t i = 0; i < s->n_safe_tools; i++)
			all[i] = s->safe_tools[i];
		for (size_t i = 0; i < b->n; i++)
			all[s->n_safe_tools + i] = b->names[i];
		/* the setter copies before it frees the old names */
		rc = mgw_session_set_safe_tools(s, all, n);
		free(all);
		return rc == 0 ? 1 : rc;
	}
	return mgw_session_set_safe_tools(s, (const char *const *)b->names, b->n) == 0
	       ? 1 : MGW_ELIMIT;
}

/* 1 when the tool sets of a and b are the same (both sorted, unique). */
static int same_tools(const struct mgw_session *a, const struct mgw_session *b)
{
	if (a->tools_known != b->tools_known || a->n_safe_tools != b->n_safe_tools)
		return 0;
	for (size_t i = 0; i < a->n_safe_tools; i++)
		if (strcmp(a->safe_tools[i], b->safe_tools[i]) != 0)
			return 0;
	return 1;
}

static void on_bg_done(void *arg, int status, struct mgw_session *rec);

/* Applies b on top of base and stores it; frees b when nothing is left
 * to do or it cannot be started. */
static void bg_start(struct mgw_sf_bg *b, const struct mgw_session *base)
{
	struct mgw_session *s = mgw_session_dup(base);
	int rc = s ? bg_apply(b, s) : MGW_ENOMEM;

	if (rc == 1 && b->what == BG_TOOLS && same_tools(s, base))
		rc = 0;
	if (rc != 1) {
		if (rc < 0)
			atomic_fetch_add(&b->sf->sh->cnt.record_updates_failed, 1);
		mgw_session_unref(s);
		bg_free(b);
		return;
	}
	b->tries++;
	if (mgw_session_update(b->view, s, base->version, on_bg_done, b,
	                       &b->op) != 0) {
		b->op = NULL;
		atomic_fetch_add(&b->sf->sh->cnt.record_updates_failed, 1);
		bg_free(b);
	}
}

static void on_bg_done(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_sf_bg *b = arg;

	b->op = NULL;
	if (status == MGW_ECONFLICT && rec && b->tries < BG_TRIES) {
		/* someone else changed it: ours on top of theirs */
		bg_start(b, rec);
		mgw_session_unref(rec);
		return;
	}
	if (status == 0 && b->what == BG_TOOLS)
		atomic_fetch_add(&b->sf->sh->cnt.tools_recorded, 1);
	else if (status != 0)
		atomic_fetch_add(&b->sf->sh->cnt.record_updates_failed, 1);
	mgw_session_unref(rec);
	bg_free(b);
}

static struct mgw_sf_bg *bg_new(struct mgw_sf_req *q, enum bg_what what)
{
	struct mgw_sf_bg *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->sf = q->sf;
	b->view = q->view;
	b->what = what;
	b->next = q->sf->bg;
	if (b->next)
		b->next->prev = b;
	q->sf->bg = b;
	return b;
}

/* Keeps the client's notifications/initialized in the record (once). */
static void record_initialized(struct mgw_sf_req *q)
{
	const unsigned char *body;
	size_t len;
	struct mgw_sf_bg *b;

	if (!q->rec || q->rec->initialized_body)
		return;
	body = mgw_http_req_body(q->x, &len);
	if (len == 0 || len > MGW_SESSION_INITIALIZED_MAX)
		return; /* a replay then sends the canonical body */
	b = bg_new(q, BG_INITIALIZED);
	if (!b || !(b->body = malloc(len))) {
		if (b)
			bg_free(b);
		atomic_fetch_add(&q->sf->sh->cnt.record_updates_failed, 1);
		return;
	}
	memcpy(b->body, body, len);
	b->len = len;
	bg_start(b, q->rec);
}

/* Records the replay-safe tools of a tools/list answer (body/len, JSON or
 * SSE). */
static void record_tools(struct mgw_sf_req *q, const void *body, size_t len,
                         int is_sse)
{
	json_t *resp = mgw_sse_body_response(body, len, is_sse,
	                                     q->sf->sh->conf->max_json_depth);
	json_t *res = resp ? json_object_get(resp, "result") : NULL;
	const char **names = NULL;
	struct mgw_sf_bg *b = NULL;
	size_t n = 0;

	if (!json_is_object(res) || mgw_repin_safe_tools(res, &names, &n) != 0)
		goto out;
	if (n > MGW_SESSION_MAX_SAFE_TOOLS)
		n = MGW_SESSION_MAX_SAFE_TOOLS; /* the rest: not replay-safe */
	b = bg_new(q, BG_TOOLS);
	if (!b || !(b->names = calloc(n ? n : 1, sizeof(*b->names))))
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		if (!(b->names[i] = strdup(names[i])))
			goto nomem;
		b->n++;
	}
	/* a later page (with a cursor) adds to what the first one said */
	b->merge = json_object_get(q->msg.params, "cursor") != NULL;
	bg_start(b, q->rec);
	goto out;
nomem:
	if (b)
		bg_free(b);
	atomic_fetch_add(&q->sf->sh->cnt.record_updates_failed, 1);
out:
	free(names);
	json_decref(resp);
}

/* What a complete 2xx answer teaches the record. */
static void after_answer(struct mgw_sf_req *q, const void *body, size_t len)
{
	if (!q->have_msg || !q->rec || q->status < 200 || q->status > 299)
		return;
	if (q->msg.kind == MGW_JRPC_NOTIFICATION &&
	    strcmp(q->msg.method, "notifications/initialized") == 0)
		record_initialized(q);
	else if (q->msg.kind == MGW_JRPC_REQUEST &&
	         strcmp(q->msg.method, "tools/list") == 0 && body)
		record_tools(q, body, len, q->sse);
}

/* ---- answers to the client ------------------------------------------------ */

/* out = in with every Mcp-Session-Id replaced by sid (or dropped when sid
 * is NULL), and Content-Length dropped (the server layer sets it). */
static int client_headers(struct mgw_headers *out, const struct mgw_headers *in,
                          const char *sid)
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

static void abort_stream(struct mgw_sf_req *q, const char *why)
{
	q->sf->f->st.stream_aborts++;
	q->note = why;
	access_log(q, q->status);
	if (q->up) {
		mgw_client_cancel(q->up);
		q->up = NULL;
	}
	release_server(q);
	mgw_http_stream_abort(q->x);
	q->x = NULL;
	req_free(q);
}

static void end_stream(struct mgw_sf_req *q)
{
	if (q->cap) {
		size_t n = evbuffer_get_length(q->cap);

		after_answer(q, n ? evbuffer_pullup(q->cap, -1) : NULL, n);
	} else {
		after_answer(q, NULL, 0);
	}
	access_log(q, q->status);
	mgw_http_stream_end(q->x);
	q->x = NULL;
	req_free(q);
}

static void pause_up(struct mgw_sf_req *q)
{
	if (!q->paused && q->up) {
		q->paused = 1;
		mgw_client_pause(q->up);
	}
}

/* Writes what is queued for the client while it takes it.  Returns 0, or
 * -1 after q was freed. */
static int flush_out(struct mgw_sf_req *q)
{
	while (evbuffer_get_length(q->buf) > 0) {
		size_t n = evbuffer_get_length(q->buf);
		unsigned char *p;
		int rc;

		if (!mgw_http_stream_writable(q->x))
			break;
		if (n > FLUSH_PIECE)
			n = FLUSH_PIECE;
		p = evbuffer_pullup(q->buf, (ssize_t)n);
		if (!p) {
			abort_stream(q, "out of memory");
			return -1;
		}
		rc = mgw_http_stream_write(q->x, p, n);
		if (rc == MGW_ELIMIT)
			break;
		if (rc != 0) {
			abort_stream(q, "client write failed");
			return -1;
		}
		evbuffer_drain(q->buf, n);
		q->bytes += n;
	}
	if (evbuffer_get_length(q->buf) > 0 || !mgw_http_stream_writable(q->x))
		pause_up(q);
	return 0;
}

/* Relays body bytes of a STREAM answer.  Returns 0, or -1 after q was
 * freed. */
static int relay(struct mgw_sf_req *q, const unsigned char *data, size_t len)
{
	int rc;

	if (q->cap) {
		if (evbuffer_get_length(q->cap) + len > CAPTURE_MAX) {
			evbuffer_free(q->cap);   /* too big to read for hints */
			q->cap = NULL;
		} else if (evbuffer_add(q->cap, data, len) != 0) {
			abort_stream(q, "out of memory");
			return -1;
		}
	}
	rc = q->sse ? mgw_sse_stamp(&q->stamp, data, len, q->buf)
	            : (evbuffer_add(q->buf, data, len) == 0 ? 0 : MGW_ENOMEM);
	if (rc != 0) {
		abort_stream(q, "out of memory");
		return -1;
	}
	return flush_out(q);
}

/* Starts relaying an upstream answer with head in (status q->status):
 * collected when small and sized, streamed otherwise.  Returns 0, or -1
 * after q was freed. */
static int begin_answer(struct mgw_sf_req *q, const struct mgw_headers *in)
{
	struct mgw_headers out;
	const char *method = mgw_http_method(q->x);
	size_t len = 0;
	int rc;

	mgw_headers_init(&out);
	if (client_headers(&out, in, q->cid) != 0)
		goto nomem;
	q->sse = mgw_fwd_is_event_stream(mgw_headers_get(in, "content-type"));
	if (!q->buf && !(q->buf = evbuffer_new()))
		goto nomem;
	if (mgw_headers_count(in, "content-length") <= 1 && !q->sse &&
	    (strcmp(method, "HEAD") == 0 || q->status == 204 || q->status == 304 ||
	     mgw_fwd_small_length(mgw_headers_get(in, "content-length"),
	                          MGW_FWD_COLLECT_MAX, &len))) {
		q->mode = M_COLLECT;
		q->expect_len = strcmp(method, "HEAD") == 0 ? 0 : len;
		mgw_headers_deinit(&q->resp_hdrs);
		q->resp_hdrs = out;   /* moved */
		return 0;
	}
	q->mode = M_STREAM;
	if (q->sse)
		mgw_sse_stamper_init(&q->stamp, q->tag);
	if (q->have_msg && q->msg.kind == MGW_JRPC_REQUEST &&
	    strcmp(q->msg.method, "tools/list") == 0 && q->status >= 200 &&
	    q->status <= 299 && !(q->cap = evbuffer_new()))
		goto nomem;
	rc = mgw_http_stream_start(q->x, q->status, &out, NULL);
	mgw_headers_deinit(&out);
	if (rc != 0) {
		/* the layer finished the exchange: x must not be touched */
		mgw_info(NULL, "response head to the client failed: %s",
		         mgw_strerror(rc));
		q->x = NULL;
		req_free(q);
		return -1;
	}
	if (q->kind == K_GET && q->status >= 200 && q->status <= 299) {
		atomic_fetch_add(&q->sf->sh->cnt.streams, 1);
		q->snext = q->sf->streams;
		if (q->snext)
			q->snext->sprev = q;
		q->sf->streams = q;
		q->listed = 1;
	}
	return 0;
nomem:
	mgw_headers_deinit(&out);
	fail(q, MGW_PERR_INTERNAL, NULL);
	return -1;
}

/* The upstream ended its answer (COLLECT or STREAM). */
static void upstream_done(struct mgw_sf_req *q)
{
	if (q->mode == M_COLLECT) {
		size_t n = evbuffer_get_length(q->buf);
		unsigned char *body = n ? evbuffer_pullup(q->buf, -1) : NULL;

		q->bytes = n;
		after_answer(q, body, n);
		access_log(q, q->status);
		mgw_http_respond(q->x, q->status, &q->resp_hdrs, NULL, body, n);
		q->x = NULL;
		req_free(q);
		return;
	}
	if (q->sse && mgw_sse_stamp_flush(&q->stamp, q->buf) != 0) {
		abort_stream(q, "out of memory");
		return;
	}
	q->up_ended = 1;
	if (flush_out(q) != 0)
		return;
	if (evbuffer_get_length(q->buf) == 0)
		end_stream(q);
	/* else on_client_drain ends it */
}

/* Releases a held answer that was not a lost session: relays head and
 * held body.  Returns 0, or -1 after q was freed. */
static int release_held(struct mgw_sf_req *q)
{
	struct evbuffer *held = q->buf;
	struct mgw_headers hh = q->resp_hdrs;
	size_t n = evbuffer_get_length(held);
	int rc;

	mgw_headers_init(&q->resp_hdrs);
	q->buf = NULL;
	rc = begin_answer(q, &hh);
	mgw_headers_deinit(&hh);
	if (rc != 0) {
		evbuffer_free(held);
		return -1;
	}
	if (q->mode == M_COLLECT) {
		if (n > q->expect_len) {
			evbuffer_free(held);
			fail(q, MGW_PERR_UPSTREAM,
			     "upstream sent more than its Content-Length");
			return -1;
		}
		evbuffer_add_buffer(q->buf, held);
		evbuffer_free(held);
		return 0;
	}
	rc = n ? relay(q, evbuffer_pullup(held, -1), n) : 0;
	evbuffer_free(held);
	return rc;
}

/* ---- the client side ------------------------------------------------------ */

static void on_client_drain(struct mgw_http_exchange *x, void *arg)
{
	struct mgw_sf_req *q = arg;

	(void)x;
	if (q->mode != M_STREAM)
		return;
	if (flush_out(q) != 0)
		return;
	if (evbuffer_get_length(q->buf) > 0)
		return;
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
	struct mgw_sf_req *q = arg;

	(void)x;
	q->sf->f->st.client_aborts++;
	q->note = "client closed";
	access_log(q, q->mode == M_STREAM ? q->status : 0);
	/* req_free cancels the store operation, the wait for a re-pin or
	 * the upstream request, whichever is running */
	q->x = NULL;
	req_free(q);
}

/* ---- upstream attempts ---------------------------------------------------- */

static void on_up_head(struct mgw_client_req *r, int status,
                       const struct mgw_headers *headers, void *arg);
static void on_up_data(struct mgw_client_req *r, const unsigned char *data,
                       size_t len, void *arg);
static void on_up_end(struct mgw_client_req *r, void *arg);
static void on_up_error(struct mgw_client_req *r,
                        const struct mgw_client_error *e, void *arg);

static void reset_answer(struct mgw_sf_req *q)
{
	q->mode = M_NONE;
	q->status = 0;
	q->lost = MGW_LOST_NO;
	q->sse = 0;
	q->paused = 0;
	q->up_ended = 0;
	mgw_headers_deinit(&q->resp_hdrs);
	if (q->buf)
		evbuffer_drain(q->buf, evbuffer_get_length(q->buf));
	if (q->cap) {
		evbuffer_free(q->cap);
		q->cap = NULL;
	}
}

/* Sends the client's request to srv: the upstream session id in place of
 * the client's, a Last-Event-ID only if it was issued under the current
 * pin.  Returns 0 (attempt running), or -1 after q was answered. */
static int send_to(struct mgw_sf_req *q, struct mgw_upstream_server *srv)
{
	struct mgw_fwd *f = q->sf->f;
	struct mgw_client_timeouts tmo = q->route->tmo;
	struct mgw_client_reqspec spec;
	struct mgw_headers h;
	char *target = NULL;
	int rc = MGW_ENOMEM;

	reset_answer(q);
	mgw_headers_init(&h);
	if (q->rec)
		q->tag = mgw_session_pin_tag(q->rec);
	for (size_t i = 0; i < q->hdrs.n; i++)
		if (mgw_headers_add(&h, q->hdrs.v[i].name, q->hdrs.v[i].name_len,
		                    q->hdrs.v[i].value, q->hdrs.v[i].value_len) != 0)
			goto out;
	if (q->rec && q->rec->upstream_sid &&
	    mgw_headers_adds(&h, "Mcp-Session-Id", q->rec->upstream_sid) != 0)
		goto out;
	if (q->lei && q->rec) {
		const char *rest;
		size_t rl;

		if (mgw_sse_unstamp(q->lei, strlen(q->lei), q->tag, &rest, &rl)) {
			if (mgw_headers_add(&h, "Last-Event-ID", 13, rest, rl) != 0)
				goto out;
			atomic_fetch_add(&q->sf->sh->cnt.last_event_passed, 1);
		} else {
			atomic_fetch_add(&q->sf->sh->cnt.last_event_dropped, 1);
		}
	}
	if (tmo.total > 0) {
		double left = tmo.total - (double)(mgw_now_ms() - q->t0) / 1000.0;

		if (left <= 0) {
			mgw_headers_deinit(&h);
			fail(q, MGW_PERR_TIMEOUT, "upstream timeout (total)");
			return -1;
		}
		tmo.total = left;
	}
	target = mgw_fwd_upstream_target(srv, mgw_http_target(q->x));
	if (!target)
		goto out;
	memset(&spec, 0, sizeof(spec));
	spec.method = mgw_http_method(q->x);
	spec.target = target;
	spec.authority = mgw_http_authority(q->x);
	spec.headers = &h;
	spec.body = mgw_http_req_body(q->x, &spec.body_len);
	spec.tmo = &tmo;
	spec.on_head = on_up_head;
	spec.on_data = on_up_data;
	spec.on_end = on_up_end;
	spec.on_error = on_up_error;
	spec.arg = q;
	rc = mgw_client_request(f->origins[q->route->group->index][srv->index],
	                        &spec, &q->up);
out:
	free(target);
	mgw_headers_deinit(&h);
	if (rc == 0) {
		mgw_upstream_acquire(srv);
		q->srv = srv;
		q->pin = srv;
		q->attempts++;
		return 0;
	}
	q->up = NULL;
	fail(q, rc == MGW_ELIMIT ? MGW_PERR_OVERLOADED : MGW_PERR_INTERNAL, NULL);
	return -1;
}

static void on_repin_done(void *arg, int status, struct mgw_session *rec,
                          struct mgw_upstream_server *srv);

/* The session must move away from failed (NULL: it is not pinned to any
 * usable server) for reason: wait for this worker's run for the session,
 * or start one. */
static void repin(struct mgw_sf_req *q, struct mgw_upstream_server *failed,
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
	p.route = q->route;
	p.rec = q->rec;
	p.principal = q->bound ? q->principal : NULL;
	p.failed = failed;
	p.reason = reason;
	p.target = mgw_http_target(q->x);
	p.authority = mgw_http_authority(q->x);
	p.creds = &q->creds;
	p.max_attempts = max;
	q->waiter.cb = on_repin_done;
	q->waiter.arg = q;
	rc = mgw_repin_join(&q->sf->map, &p, &q->waiter, &joined);
	if (rc != 0) {
		fail(q, rc == MGW_ELIMIT ? MGW_PERR_OVERLOADED : MGW_PERR_INTERNAL,
		     NULL);
		return;
	}
	if (joined)
		note_why(q, "waited-for-repin");
	else {
		char w[40];

		snprintf(w, sizeof(w), "repin(%s)", mgw_repin_reason_name(reason));
		note_why(q, w);
	}
}

/* Sends q to its session's pin, or re-pins first when the pinned server
 * cannot take it. */
static void go_pinned(struct mgw_sf_req *q)
{
	struct mgw_upstream_server *srv =
		mgw_repin_server_by_url(q->route->group, q->rec->pin_url);
	int reason = mgw_repin_pin_check(srv, mgw_now_ms());

	if (reason >= 0) {
		repin(q, srv, (enum mgw_repin_reason)reason);
		return;
	}
	send_to(q, srv);
}

static void on_repin_done(void *arg, int status, struct mgw_session *rec,
                          struct mgw_upstream_server *srv)
{
	struct mgw_sf_req *q = arg;

	if (status == 0) {
		mgw_session_unref(q->rec);
		q->rec = rec;
		send_to(q, srv);
		return;
	}
	mgw_session_unref(rec);
	if (status == MGW_ENOTFOUND)
		not_found(q);
	else if (status == MGW_EPROTO)
		unrecoverable(q);
	else
		fail(q, MGW_PERR_INTERNAL, NULL);
}

/* initialize: the next server by the balancer, as on the stateless path
 * (a retry asks the retry budget first).  Returns 0 or -1 after q was
 * answered. */
static int start_init(struct mgw_sf_req *q, int is_retry,
                      enum mgw_proxy_error why_last, const char *detail)
{
	struct mgw_fwd *f = q->sf->f;
	const struct mgw_upstream_group *g = q->route->group;
	struct mgw_upstream_server *s;
	enum mgw_upstream_next v;
	char msg[160];

	v = mgw_upstream_next(f->picker, f->ups, g, NULL, 0, &q->tried, is_retry,
	                      mgw_now_ms(), &s);
	if (v != MGW_NEXT_OK) {
		enum mgw_proxy_error kind =
			mgw_proxy_next_error(v, g->name, why_last, &detail, msg,
			                     sizeof(msg), &q->note);

		fail(q, kind, detail);
		return -1;
	}
	if (send_to(q, s) != 0)
		return -1;
	if (is_retry)
		f->st.retries++;
	return 0;
}

/* ---- sessions: create, lookup, remove -------------------------------------- */

static void on_created(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_sf_req *q = arg;
	struct mgw_headers out;
	struct evbuffer *stamped = NULL;
	size_t n = evbuffer_get_length(q->buf);
	unsigned char *body = n ? evbuffer_pullup(q->buf, -1) : NULL;
	int had_sid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id") != NULL;

	q->op = NULL;
	if (status != 0 || !rec) {
		const char *usid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id");

		mgw_session_unref(rec);
		atomic_fetch_add(&q->sf->sh->cnt.create_failed, 1);
		/* the replica's session is of no use to anyone now */
		if (usid && q->pin)
			mgw_repin_end_upstream(&q->sf->map, q->pin, q->route,
			                       mgw_http_target(q->x),
			                       mgw_http_authority(q->x), &q->creds, usid);
		fail(q, MGW_PERR_SESSION_STORE,
		     status == MGW_ELIMIT ? "session store full (sessions.max_sessions "
		                            "or max_memory)"
		                          : "session store unavailable");
		return;
	}
	q->rec = rec;
	q->tag = mgw_session_pin_tag(rec);
	q->cid = strdup(rec->id);
	atomic_fetch_add(&q->sf->sh->cnt.created, 1);
	mgw_headers_init(&out);
	if (!q->cid || client_headers(&out, &q->resp_hdrs, rec->id) != 0 ||
	    (!had_sid && mgw_headers_adds(&out, "Mcp-Session-Id", rec->id) != 0))
		goto nomem;
	if (q->sse) {
		/* the answer's event ids carry the pin tag like any other */
		struct mgw_sse_stamper st;

		mgw_sse_stamper_init(&st, q->tag);
		stamped = evbuffer_new();
		if (!stamped || mgw_sse_stamp(&st, body, n, stamped) != 0 ||
		    mgw_sse_stamp_flush(&st, stamped) != 0)
			goto nomem;
		n = evbuffer_get_length(stamped);
		body = n ? evbuffer_pullup(stamped, -1) : NULL;
	}
	q->bytes = n;
	access_log(q, q->status);
	mgw_http_respond(q->x, q->status, &out, NULL, body, n);
	q->x = NULL;
	mgw_headers_deinit(&out);
	if (stamped)
		evbuffer_free(stamped);
	req_free(q);
	return;
nomem:
	mgw_headers_deinit(&out);
	if (stamped)
		evbuffer_free(stamped);
	fail(q, MGW_PERR_INTERNAL, NULL);
}

/* A complete 2xx answer to initialize: an InitializeResult makes a
 * session; anything else (a JSON-RPC error) goes back as it is. */
static void init_answered(struct mgw_sf_req *q)
{
	size_t n = evbuffer_get_length(q->buf);
	unsigned char *body = n ? evbuffer_pullup(q->buf, -1) : NULL;
	const char *usid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id");
	const char *pv = mgw_http_req_header(q->x, "mcp-protocol-version");
	json_t *resp, *res;
	const char *version = NULL;
	struct mgw_session *d = NULL;
	struct mgw_headers out;
	const unsigned char *ib;
	size_t il;
	int rc;

	resp = mgw_sse_body_response(body, n, q->sse,
	                             q->sf->sh->conf->max_json_depth);
	res = resp ? json_object_get(resp, "result") : NULL;
	if (!json_is_object(res)) {
		/* no session: relay it, without any upstream session id */
		json_decref(resp);
		mgw_headers_init(&out);
		if (client_headers(&out, &q->resp_hdrs, NULL) != 0) {
			mgw_headers_deinit(&out);
			fail(q, MGW_PERR_INTERNAL, NULL);
			return;
		}
		q->note = "initialize not accepted";
		access_log(q, q->status);
		mgw_http_respond(q->x, q->status, &out, NULL, body, n);
		q->x = NULL;
		mgw_headers_deinit(&out);
		req_free(q);
		return;
	}
	if (usid && !mgw_session_id_valid(usid, strlen(usid),
	                                  MGW_SESSION_UPSTREAM_ID_MAX)) {
		json_decref(resp);
		fail(q, MGW_PERR_UPSTREAM, "upstream session id is not usable");
		return;
	}
	version = json_string_value(json_object_get(res, "protocolVersion"));
	ib = mgw_http_req_body(q->x, &il);
	d = mgw_session_new();
	rc = d ? mgw_session_set_init(d, ib, il) : MGW_ENOMEM;
	if (rc == 0)
		rc = mgw_session_set_pin(d, q->pin->conf->url, usid);
	/* a version or header we cannot keep only costs the replays that
	 * header: not a reason to refuse the session */
	if (rc == 0 && version)
		(void)mgw_session_set_protocol_version(d, version);
	if (rc == 0 && pv)
		(void)mgw_session_add_init_header(d, "MCP-Protocol-Version", pv);
	if (rc == 0 && q->bound)
		mgw_session_set_principal(d, q->principal);
	json_decref(resp);
	if (rc != 0) {
		mgw_session_unref(d);
		fail(q, MGW_PERR_INTERNAL, NULL);
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
		not_found(q);
		return;
	}
	if (status != 0) {
		atomic_fetch_add(&q->sf->sh->cnt.store_errors, 1);
		fail(q, MGW_PERR_SESSION_STORE, NULL);
		return;
	}
	atomic_fetch_add(&q->sf->sh->cnt.deleted, 1);
	q->note = "session ended";
	access_log(q, 200);
	mgw_http_respond(q->x, 200, NULL, NULL, NULL, 0);
	q->x = NULL;
	req_free(q);
}

/* DELETE, after the best-effort DELETE upstream: forget the mapping. */
static void remove_session(struct mgw_sf_req *q)
{
	int rc;

	reset_answer(q);
	rc = mgw_session_remove(q->view, q->cid, strlen(q->cid), on_removed, q,
	                        &q->op);
	if (rc != 0) {
		q->op = NULL;
		on_removed(q, rc, NULL);
	}
}

static void on_lookup(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_sf_req *q = arg;
	struct mgw_upstream_server *srv;

	q->op = NULL;
	if (status == MGW_ENOTFOUND) {
		not_found(q);
		return;
	}
	if (status != 0 || !rec) {
		mgw_session_unref(rec);
		atomic_fetch_add(&q->sf->sh->cnt.store_errors, 1);
		fail(q, MGW_PERR_SESSION_STORE, NULL);
		return;
	}
	q->rec = rec;
	if (q->kind == K_DELETE) {
		/* end the replica's session if it can be reached; the mapping
		 * goes whatever it answers */
		srv = mgw_repin_server_by_url(q->route->group, rec->pin_url);
		if (srv && rec->upstream_sid &&
		    mgw_repin_pin_check(srv, mgw_now_ms()) < 0) {
			if (send_to(q, srv) == 0)
				q->mode = M_DRAIN;
			return;
		}
		remove_session(q);
		return;
	}
	/* a re-pin of this session runs on this worker: wait for it rather
	 * than try the replica it is leaving */
	if (mgw_repin_in_progress(&q->sf->map, q->view, q->cid)) {
		repin(q, NULL, MGW_REPIN_UNPINNED);
		return;
	}
	go_pinned(q);
}

/* ---- upstream callbacks ----------------------------------------------------- */

static int copy_headers(struct mgw_headers *dst, const struct mgw_headers *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (mgw_headers_add(dst, src->v[i].name, src->v[i].name_len,
		                    src->v[i].value, src->v[i].value_len) != 0)
			return MGW_ENOMEM;
	return 0;
}

static void on_up_head(struct mgw_client_req *r, int status,
                       const struct mgw_headers *headers, void *arg)
{
	struct mgw_sf_req *q = arg;

	(void)r;
	mgw_upstream_report(q->srv, status >= 500 ? MGW_UPSTREAM_HTTP_5XX
	                                          : MGW_UPSTREAM_OK,
	                    status, mgw_now_ms());
	q->status = status;
	q->sf->f->st.forwarded++;
	if (q->mode == M_DRAIN)
		return;
	if (!q->buf && !(q->buf = evbuffer_new()))
		goto nomem;
	if (q->kind == K_INIT && status >= 200 && status <= 299) {
		q->mode = M_INIT;
		q->sse = mgw_fwd_is_event_stream(mgw_headers_get(headers, "content-type"));
		if (copy_headers(&q->resp_hdrs, headers) != 0)
			goto nomem;
		return;
	}
	if (q->kind != K_INIT) {
		q->lost = mgw_repin_lost_status(&sconf(q)->lost_session, status);
		if (q->lost != MGW_LOST_NO) {
			/* not a word to the client until decided */
			q->mode = M_HOLD;
			if (copy_headers(&q->resp_hdrs, headers) != 0)
				goto nomem;
			return;
		}
	}
	begin_answer(q, headers);
	return;
nomem:
	fail(q, MGW_PERR_INTERNAL, NULL);
}

/* The held answer says the replica does not know the session: re-pin.
 * The upstream request must have ended or been cancelled. */
static void lost_session(struct mgw_sf_req *q)
{
	struct mgw_upstream_server *s = q->pin;
	int status = q->status;

	release_server(q);
	reset_answer(q);
	repin(q, s, mgw_repin_lost_reason(status));
}

static void on_up_data(struct mgw_client_req *r, const unsigned char *data,
                       size_t len, void *arg)
{
	struct mgw_sf_req *q = arg;
	size_t n;

	switch (q->mode) {
	case M_DRAIN:
		return;
	case M_HOLD:
		if (evbuffer_add(q->buf, data, len) != 0)
			break;
		n = evbuffer_get_length(q->buf);
		if (n <= LOST_BODY_MAX)
			return;
		/* too long for the answer of a server that lost the session,
		 * unless it said so in what we hold */
		if (q->lost == MGW_LOST_YES ||
		    mgw_repin_lost_body(&sconf(q)->lost_session,
		                        evbuffer_pullup(q->buf, -1), n)) {
			mgw_client_cancel(r);
			q->up = NULL;
			lost_session(q);
			return;
		}
		release_held(q);
		return;
	case M_INIT:
		if (evbuffer_get_length(q->buf) + len > MGW_REPIN_INIT_BODY_MAX) {
			mgw_client_cancel(r);
			q->up = NULL;
			fail(q, MGW_PERR_UPSTREAM, "initialize answer too large");
			return;
		}
		if (evbuffer_add(q->buf, data, len) != 0)
			break;
		return;
	case M_COLLECT:
		if (evbuffer_get_length(q->buf) + len > q->expect_len) {
			mgw_client_cancel(r);
			q->up = NULL;
			mgw_upstream_report(q->srv, MGW_UPSTREAM_FAILURE, 0, mgw_now_ms());
			fail(q, MGW_PERR_UPSTREAM,
			     "upstream sent more than its Content-Length");
			return;
		}
		if (evbuffer_add(q->buf, data, len) != 0)
			break;
		return;
	case M_STREAM:
		relay(q, data, len);
		return;
	default:
		return;
	}
	mgw_client_cancel(r);
	q->up = NULL;
	if (q->mode == M_STREAM)
		abort_stream(q, "out of memory");
	else
		fail(q, MGW_PERR_INTERNAL, NULL);
}

static void on_up_end(struct mgw_client_req *r, void *arg)
{
	struct mgw_sf_req *q = arg;

	(void)r;
	q->up = NULL; /* freed by the client layer after this returns */
	release_server(q);
	switch (q->mode) {
	case M_DRAIN:
		remove_session(q);
		return;
	case M_INIT:
		init_answered(q);
		return;
	case M_HOLD: {
		size_t n = evbuffer_get_length(q->buf);

		if (q->lost == MGW_LOST_YES ||
		    mgw_repin_lost_body(&sconf(q)->lost_session,
		                        n ? evbuffer_pullup(q->buf, -1) : NULL, n)) {
			lost_session(q);
			return;
		}
		if (release_held(q) != 0)
			return;
		upstream_done(q);
		return;
	}
	case M_COLLECT:
	case M_STREAM:
		upstream_done(q);
		return;
	default:
		fail(q, MGW_PERR_UPSTREAM, NULL);
		return;
	}
}

static void on_up_error(struct mgw_client_req *r,
                        const struct mgw_client_error *e, void *arg)
{
	struct mgw_sf_req *q = arg;
	struct mgw_upstream_server *s = q->srv;
	enum mgw_proxy_error kind = mgw_fwd_error_kind(e);
	int not_sent = (e->flags & MGW_CLIENT_F_NOT_SENT) &&
	               !(e->flags & MGW_CLIENT_F_RESP_BYTES);
	const struct mgw_sessions_conf *c = sconf(q);
	unsigned max = c->max_repin_attempts ? c->max_repin_attempts : 1;
	enum mgw_replay_verdict v;
	struct mgw_log_ctx ctx;
	char detail[200];

	(void)r;
	q->up = NULL; /* freed by the client layer after this returns */
	req_logctx(q, &ctx);
	mgw_upstream_report_error(s, e, mgw_now_ms());
	release_server(q);
	mgw_info(&ctx, "upstream %s: %s (%s)%s", s ? s->name : "-",
	         e->msg ? e->msg : mgw_strerror(e->code),
	         mgw_client_err_class_name(e->cls), not_sent ? ", not sent" : "");
	if (q->mode == M_STREAM) {
		/* A GET stream whose replica failed is closed so that the
		 * client reconnects; the reconnect is re-pinned. */
		if (q->kind == K_GET)
			atomic_fetch_add(&q->sf->sh->cnt.streams_closed, 1);
		abort_stream(q, kind == MGW_PERR_TIMEOUT ? "upstream timeout mid-response"
		                                         : "upstream failed mid-response");
		return;
	}
	if (q->mode == M_DRAIN) {
		remove_session(q);   /* best effort: the mapping goes anyway */
		return;
	}
	if (q->kind == K_INIT && s) {
		/* an initialize whose answer broke after its head: the session
		 * the replica opened is no use (the client gets another, or
		 * none), so it is ended, not left behind */
		const char *usid = mgw_headers_get(&q->resp_hdrs, "mcp-session-id");

		if (usid)
			mgw_repin_end_upstream(&q->sf->map, s, q->route,
			                       mgw_http_target(q->x),
			                       mgw_http_authority(q->x), &q->creds,
			                       usid);
	}
	reset_answer(q);
	mgw_fwd_describe_error(e, kind, detail, sizeof(detail));
	if (q->kind == K_INIT) {
		/* no session exists yet: an initialize that did not reach a
		 * replica, or that lost its replica before the answer, goes
		 * to another one (the client sees one initialize) */
		if ((not_sent || e->cls == MGW_CLIENT_E_CLOSED ||
		     e->cls == MGW_CLIENT_E_RESET) &&
		    q->attempts <= q->route->conf->retries) {
			start_init(q, 1, kind, detail);
			return;
		}
		fail(q, kind, detail);
		return;
	}
	if (e->flags & MGW_CLIENT_F_QUEUED) {
		/* every connection to the pinned replica busy: the gateway's
		 * limit, not a lost replica; moving the session would not
		 * help it */
		fail(q, kind, detail);
		return;
	}
	if (not_sent) {
		repin(q, s, MGW_REPIN_REFUSED);
		return;
	}
	if (e->cls == MGW_CLIENT_E_TIMEOUT) {
		/* a slow replica is not a lost one: the request may still be
		 * running there */
		fail(q, kind, detail);
		return;
	}
	/* Sent, then the replica went away before a complete answer. */
	v = mgw_repin_replay_safe(q->have_msg ? &q->msg : NULL, q->rec,
	                          q->route->conf->replay);
	if (v >= MGW_REPLAY_NO_TOOL) {
		char msg[320];

		atomic_fetch_add(&q->sf->sh->cnt.inflight_refused, 1);
		if (v == MGW_REPLAY_NO_TOOL)
			snprintf(msg, sizeof(msg), "upstream lost mid-request; not "
			         "replayed: tool '%.200s' is not idempotent",
			         q->msg.name ? q->msg.name : "");
		else if (v == MGW_REPLAY_NO_BATCH)
			snprintf(msg, sizeof(msg), "upstream lost mid-request; not "
			         "replayed: a batch may hold calls that are not "
			         "idempotent");
		else
			snprintf(msg, sizeof(msg), "upstream lost mid-request; not "
			         "replayed: the body was not read as a JSON-RPC "
			         "message (%.160s), and may be a call that is not "
			         "idempotent", q->msg.error_msg);
		fail(q, MGW_PERR_NOT_REPLAYED, msg);
		return;
	}
	if (q->replays >= max) {
		fail(q, kind, detail);
		return;
	}
	/* counted once per request, however many sends it took */
	if (q->replays++ == 0)
		atomic_fetch_add(&q->sf->sh->cnt.inflight_replayed, 1);
	note_why(q, "replayed-after-loss");
	if (s && q->lost_on == s) {
		/* Lost on this replica twice in a row: it is going away, even
		 * if nothing says so yet (a dying process closes its
		 * connections one at a time, and its listen queue still
		 * completes handshakes until it is closed too). */
		repin(q, s, MGW_REPIN_LOST_INFLIGHT);
		return;
	}
	q->lost_on = s;
	/* Through the pin check again: a replica that is down, ejected or
	 * refusing by now moves the session; one that still answers gets
	 * the request again (it is safe to). */
	go_pinned(q);
}

/* ---- GET streams and re-pins ------------------------------------------------ */

/* A run moved session rec to srv: this worker's GET streams of the
 * session still relayed from another replica are closed, so that their
 * clients reconnect to the new pin (server-to-client messages of the old
 * upstream session would otherwise keep arriving from a session nobody
 * uses). */
static void on_repinned(void *arg, const struct mgw_session *rec,
                        const struct mgw_upstream_server *srv)
{
	struct mgw_sf *sf = arg;
	struct mgw_sf_req *q = sf->streams, *next;

	for (; q; q = next) {
		next = q->snext;
		if (q->cid && strcmp(q->cid, rec->id) == 0 && q->pin != srv) {
			atomic_fetch_add(&sf->sh->cnt.streams_closed, 1);
			abort_stream(q, "session re-pinned");
		}
	}
}

/* ---- the entry points ------------------------------------------------------- */

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
	return mode == MGW_MODE_STATEFUL && mgw_fwd_is_mcp_endpoint(method, path, h);
}

/* Copies the credentials a replay carries (Authorization, Cookie). */
static int keep_creds(struct mgw_sf_req *q)
{
	for (size_t i = 0; i < q->hdrs.n; i++) {
		const struct mgw_header *f = &q->hdrs.v[i];

		if ((strcasecmp(f->name, "authorization") == 0 ||
		     strcasecmp(f->name, "cookie") == 0) &&
		    mgw_headers_add(&q->creds, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	return 0;
}

void mgw_sf_handle(struct mgw_sf *sf, struct mgw_http_exchange *x,
                   const struct mgw_route *route, struct mgw_jrpc_msg *m,
                   int have_msg, int as_json)
{
	struct mgw_sf_req *q = calloc(1, sizeof(*q));
	struct mgw_sf_shared *sh = sf->sh;
	const char *method = mgw_http_method(x);
	const char *sid = mgw_http_req_header(x, "mcp-session-id");
	int kind = sh->route_store[route->index];
	int rc;

	if (!q) {
		if (have_msg)
			mgw_jrpc_msg_deinit(m);
		mgw_http_respond(x, 500, NULL, NULL, NULL, 0);
		return;
	}
	sf->live++;
	atomic_fetch_add(&sh->cnt.requests, 1);
	q->sf = sf;
	q->x = x;
	q->route = route;
	q->view = sf->views[kind];
	q->t0 = mgw_now_ms();
	q->as_json = as_json;
	if (have_msg) {
		q->msg = *m;   /* moved */
		q->have_msg = 1;
		memset(m, 0, sizeof(*m));
	}
	mgw_headers_init(&q->hdrs);
	mgw_headers_init(&q->creds);
	mgw_headers_init(&q->resp_hdrs);
	if (strcmp(method, "POST") == 0)
		q->kind = (q->have_msg && q->msg.kind == MGW_JRPC_REQUEST &&
		           q->msg.method && strcmp(q->msg.method, "initialize") == 0)
		          ? K_INIT : K_POST;
	else if (!sid)
		q->kind = K_NOSESSION;
	else
		q->kind = strcmp(method, "GET") == 0 ? K_GET : K_DELETE;
	if (sid && q->kind != K_INIT && !(q->cid = strdup(sid))) {
		fail(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	if (q->kind == K_NOSESSION) {
		atomic_fetch_add(&sh->cnt.missing_session, 1);
		fail(q, MGW_PERR_SESSION_REQUIRED, NULL);
		return;
	}
	if (sconf(q)->bind_principal) {
		const char *auth = mgw_http_req_header(x, "authorization");

		mgw_session_principal_digest(auth, auth ? strlen(auth) : 0,
		                             q->principal);
		q->bound = 1;
	}
	q->lei = mgw_http_req_header(x, "last-event-id");
	rc = mgw_fwd_build_headers(&q->hdrs, mgw_http_req_headers(x), sh->conf,
	                           mgw_http_peer(x), mgw_http_is_tls(x),
	                           mgw_http_authority(x), mgw_http_version(x) == 20);
	if (rc == 0) {
		/* put back per attempt: the upstream's id, a checked event id */
		mgw_headers_remove(&q->hdrs, "mcp-session-id");
		mgw_headers_remove(&q->hdrs, "last-event-id");
		rc = keep_creds(q);
	}
	if (rc != 0) {
		fail(q, MGW_PERR_INTERNAL, NULL);
		return;
	}
	mgw_http_set_callbacks(x, on_client_abort, on_client_drain, q);
	if (q->kind == K_INIT) {
		size_t len;
		size_t max = mgw_session_store_max_initialize(
			sh->stores[kind].st);

		(void)mgw_http_req_body(x, &len);
		if (len > max) {
			char msg[160];

			snprintf(msg, sizeof(msg), "initialize too large for the "
			         "session store (%zu bytes; sessions."
			         "max_initialize_bytes is %zu)", len, max);
			fail(q, MGW_PERR_TOO_LARGE, msg);
			return;
		}
		atomic_fetch_add(&sh->cnt.initializes, 1);
		mgw_retry_budget_request(sf->f->ups->budget, q->t0);
		start_init(q, 0, MGW_PERR_NO_UPSTREAM, NULL);
		return;
	}
	rc = mgw_session_lookup(q->view, q->cid, strlen(q->cid),
	                        q->bound ? q->principal : NULL, on_lookup, q,
	                        &q->op);
	if (rc != 0) {
		q->op = NULL;
		fail(q, MGW_PERR_INTERNAL, NULL);
	}
}

/* ---- setup ------------------------------------------------------------------ */

static int route_kind(const struct mgw_serve_conf *conf,
                      const struct mgw_route_conf *r)
{
	int k = r->session_store;

	if (k == MGW_SESSION_STORE_DEFAULT || k < 0 || k >= MGW_SF_STORE_KINDS)
		k = conf->sessions.store;
	return k;
}

struct mgw_sf_shared *mgw_sf_shared_new(const struct mgw_serve_conf *conf,
                                        const struct mgw_routes *routes,
                                        struct event_base *house, char *err,
                                        size_t errlen)
{
	struct mgw_sf_shared *sh = calloc(1, sizeof(*sh));
	struct mgw_session_env env;
	int used[MGW_SF_STORE_KINDS] = {0};

	if (!sh)
		goto nomem;
	sh->conf = conf;
	sh->n_routes = routes->n;
	sh->route_store = calloc(routes->n ? routes->n : 1, sizeof(*sh->route_store));
	if (!sh->route_store)
		goto nomem;
	used[conf->sessions.store] = 1;
	for (size_t i = 0; i < routes->n; i++) {
		sh->route_store[i] = route_kind(conf, routes->v[i].conf);
		used[sh->route_store[i]] = 1;
	}
	memset(&env, 0, sizeof(env));
	env.house_base = house;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		struct mgw_sf_store *s = &sh->stores[k];

		if (!used[k])
			continue;
		s->conf = conf->sessions;
		s->conf.store = (enum mgw_session_store_conf)k;
		if (k == MGW_SESSION_STORE_SEALED &&
		    conf->sessions.store != MGW_SESSION_STORE_SEALED &&
		    s->conf.max_initialize_bytes > SEALED_ROUTE_INIT_MAX)
			s->conf.max_initialize_bytes = SEALED_ROUTE_INIT_MAX;
		s->st = mgw_session_store_new(&s->conf, &env, err, errlen);
		if (!s->st)
			goto fail;
	}
	return sh;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	mgw_sf_shared_free(sh);
	return NULL;
}

void mgw_sf_shared_free(struct mgw_sf_shared *sh)
{
	if (!sh)
		return;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		mgw_session_store_free(sh->stores[k].st);
	free(sh->route_store);
	free(sh);
}

struct mgw_sf *mgw_sf_new(struct mgw_sf_shared *sh, struct mgw_fwd *f,
                          char *err, size_t errlen)
{
	struct mgw_sf *sf = calloc(1, sizeof(*sf));
	struct mgw_repin_env env;

	if (!sf) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sf->sh = sh;
	sf->f = f;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		if (!sh->stores[k].st)
			continue;
		sf->views[k] = mgw_session_view_new(sh->stores[k].st, f->base, err,
		                                    errlen);
		if (!sf->views[k])
			goto fail;
	}
	memset(&env, 0, sizeof(env));
	env.picker = f->picker;
	env.origins = f->origins;
	env.sconf = &sh->conf->sessions;
	env.max_depth = sh->conf->max_json_depth;
	env.cnt = &sh->cnt.repin;
	env.on_repinned = on_repinned;
	env.hook_arg = sf;
	if (mgw_repin_map_init(&sf->map, &env) != 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return sf;
fail:
	mgw_sf_free(sf);
	return NULL;
}

void mgw_sf_free(struct mgw_sf *sf)
{
	if (!sf)
		return;
	if (sf->live)
		mgw_warn(NULL, "stateful path freed with %zu requests in progress",
		         sf->live);
	while (sf->bg)
		bg_free(sf->bg);
	mgw_repin_map_deinit(&sf->map);
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++)
		mgw_session_view_free(sf->views[k]);
	free(sf);
}

/* ---- statistics ------------------------------------------------------------- */

static json_t *store_json(struct mgw_session_store *st)
{
	struct mgw_session_stats s;

	mgw_session_store_stats(st, &s);
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	                 "s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	                 "store", s.store ? s.store : "?",
	                 "active", (json_int_t)s.active,
	                 "memory_bytes", (json_int_t)s.memory_bytes,
	                 "created", (json_int_t)s.created,
	                 "expired", (json_int_t)s.expired,
	                 "deleted", (json_int_t)s.deleted,
	                 "evicted", (json_int_t)s.evicted,
	                 "refused", (json_int_t)s.refused,
	                 "lookups", (json_int_t)s.lookups,
	                 "not_found", (json_int_t)s.not_found,
	                 "rejected_token", (json_int_t)s.rejected_token,
	                 "rejected_principal", (json_int_t)s.rejected_principal,
	                 "conflicts", (json_int_t)s.conflicts,
	                 "cache_hits", (json_int_t)s.cache_hits,
	                 "cache_misses", (json_int_t)s.cache_misses,
	                 "errors", (json_int_t)s.errors,
	                 "unreachable", (json_int_t)s.unreachable,
	                 "outages", (json_int_t)s.outages);
}

/* Sets name: v in o; returns 0 or MGW_ENOMEM. */
static int put(json_t *o, const char *name, uint64_t v)
{
	return json_object_set_new(o, name, json_integer((json_int_t)v)) == 0
	       ? 0 : MGW_ENOMEM;
}

int mgw_sf_stats_json(struct mgw_sf_shared *sh, json_t *out)
{
	const struct mgw_sf_counters *c = &sh->cnt;
	const struct mgw_repin_counters *rc = &c->repin;
	json_t *o = json_object(), *stores = json_array(), *by = json_object();
	json_t *def = NULL;
	uint64_t active = 0, expired = 0, errors = 0, total = 0;
	const struct {
		const char *name;
		const atomic_uint_fast64_t *v;
	} counters[] = {
		{"created", &c->created},
		{"deleted", &c->deleted},
		{"unrecoverable", &c->unrecoverable},
		{"not_found", &c->not_found},
		{"requests", &c->requests},
		{"initializes", &c->initializes},
		{"create_failed", &c->create_failed},
		{"store_errors", &c->store_errors},
		{"missing_session", &c->missing_session},
		{"inflight_replayed", &c->inflight_replayed},
		{"replays_refused", &c->inflight_refused},
		{"streams", &c->streams},
		{"streams_closed", &c->streams_closed},
		{"last_event_passed", &c->last_event_passed},
		{"last_event_dropped", &c->last_event_dropped},
		{"tools_recorded", &c->tools_recorded},
		{"record_updates_failed", &c->record_updates_failed},
		{"repinned", &rc->repinned},
		{"adopted", &rc->adopted},
		{"repin_failed", &rc->failed},
		{"repin_gone", &rc->gone},
		{"replays", &rc->replays},
		{"replay_failures", &rc->replay_failures},
		{"waited", &rc->waited},
		{"store_unsaved", &rc->store_unsaved},
		{"upstream_deletes", &rc->upstream_deletes},
	};
	int rc_ = MGW_ENOMEM;

	if (!o || !stores || !by)
		goto out;
	for (int k = 0; k < MGW_SF_STORE_KINDS; k++) {
		struct mgw_session_stats st;
		json_t *j;

		if (!sh->stores[k].st)
			continue;
		mgw_session_store_stats(sh->stores[k].st, &st);
		active += st.active;
		expired += st.expired;
		errors += st.errors;
		j = store_json(sh->stores[k].st);
		if (!j)
			goto out;
		if (k == (int)sh->conf->sessions.store)
			def = json_incref(j);
		if (json_array_append_new(stores, j) != 0)
			goto out;
	}
	/* by reason only: readers sum the members */
	for (int r = 0; r < MGW_REPIN_REASON_N; r++) {
		uint64_t v = atomic_load(&rc->started[r]);

		total += v;
		if (put(by, mgw_repin_reason_name(r), v) != 0)
			goto out;
	}
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (put(o, counters[i].name, atomic_load(counters[i].v)) != 0)
			goto out;
	if (put(o, "active", active) != 0 || put(o, "expired", expired) != 0 ||
	    put(o, "errors", errors) != 0 || put(o, "repins_total", total) != 0)
		goto out;
	/* set_new takes the value in every case */
	if (json_object_set_new(o, "repins", json_incref(by)) != 0 ||
	    json_object_set_new(o, "stores", json_incref(stores)) != 0 ||
	    (def && json_object_set_new(o, "store", json_incref(def)) != 0) ||
	    json_object_set_new(out, "sessions", json_incref(o)) != 0)
		goto out;
	rc_ = 0;
out:
	json_decref(def);
	json_decref(by);
	json_decref(stores);
	json_decref(o);
	return rc_;
}
