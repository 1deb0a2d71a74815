/* repin.c - the re-pin state machine (REFRESH, INIT, NOTIFY, UPDATE; see
 * repin.h), the per-worker map of runs with their waiters, best-effort
 * upstream DELETEs, and the pure decisions the stateful path shares.
 *
 * A run lives from mgw_repin_join until it finishes (every waiter is told,
 * then it is freed) or its last waiter leaves (it is cancelled: its store
 * operation and upstream request are dropped).  At most one store
 * operation or one upstream request of a run is in flight at a time, and
 * each is cleared at the top of its own callback, so that cancelling is
 * always safe. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "proxy/pool.h"
#include "proxy/repin.h"
#include "proxy/replay.h"
#include "proxy/sse.h"
#include "proxy/upstream.h"
#include "session/session.h"
#include "session/store.h"
#include "util/time.h"

#define N_BUCKETS 256           /* runs are few and short-lived */
#define MAX_UPDATE_TRIES 4      /* compare-and-set rounds per run */

/* ---- decisions ---------------------------------------------------------- */

static const char *const reason_names[MGW_REPIN_REASON_N] = {
	[MGW_REPIN_DEAD] = "dead",
	[MGW_REPIN_EJECTED] = "ejected",
	[MGW_REPIN_DRAINING] = "draining",
	[MGW_REPIN_UNPINNED] = "unpinned",
	[MGW_REPIN_REFUSED] = "refused",
	[MGW_REPIN_LOST_INFLIGHT] = "lost_in_flight",
	[MGW_REPIN_LOST_404] = "lost_404",
	[MGW_REPIN_LOST_400] = "lost_400",
	[MGW_REPIN_LOST_OTHER] = "lost_other",
};

const char *mgw_repin_reason_name(enum mgw_repin_reason r)
{
	return (unsigned)r < MGW_REPIN_REASON_N ? reason_names[r] : "?";
}

int mgw_repin_pin_check(struct mgw_upstream_server *srv, uint64_t now)
{
	if (!srv)
		return MGW_REPIN_UNPINNED;
	if (mgw_upstream_available(srv, now))
		return -1;
	switch (mgw_upstream_state(srv, now)) {
	case MGW_UPSTREAM_S_DRAINING: return MGW_REPIN_DRAINING;
	case MGW_UPSTREAM_S_EJECTED: return MGW_REPIN_EJECTED;
	case MGW_UPSTREAM_S_DOWN: return MGW_REPIN_DEAD;
	default:
		/* became available between the two reads */
		return -1;
	}
}

struct mgw_upstream_server *mgw_repin_server_by_url(
	const struct mgw_upstream_group *g, const char *url)
{
	if (!url)
		return NULL;
	for (size_t i = 0; i < g->n_servers; i++)
		if (strcmp(g->servers[i].conf->url, url) == 0)
			return &g->servers[i];
	return NULL;
}

enum mgw_lost_verdict mgw_repin_lost_status(
	const struct mgw_lost_session_conf *c, int status)
{
	for (size_t i = 0; i < c->n_status; i++) {
		if (c->status[i] != status)
			continue;
		if (status == 404 || !c->body_contains || !*c->body_contains)
			return MGW_LOST_YES;
		return MGW_LOST_MAYBE;
	}
	return MGW_LOST_NO;
}

int mgw_repin_lost_body(const struct mgw_lost_session_conf *c,
                        const void *body, size_t len)
{
	const char *needle = c->body_contains ? c->body_contains : "";
	const unsigned char *b = body;
	size_t nl = strlen(needle);

	if (nl == 0)
		return 1;
	for (size_t i = 0; i + nl <= len; i++) {
		size_t k = 0;

		while (k < nl) {
			unsigned char x = b[i + k], y = (unsigned char)needle[k];

			if (x >= 'A' && x <= 'Z')
				x = (unsigned char)(x - 'A' + 'a');
			if (y >= 'A' && y <= 'Z')
				y = (unsigned char)(y - 'A' + 'a');
			if (x != y)
				break;
			k++;
		}
		if (k == nl)
			return 1;
	}
	return 0;
}

enum mgw_repin_reason mgw_repin_lost_reason(int status)
{
	if (status == 404)
		return MGW_REPIN_LOST_404;
	if (status == 400)
		return MGW_REPIN_LOST_400;
	return MGW_REPIN_LOST_OTHER;
}

/* A legacy session's tools: those its own tools/list answers annotated. */
static int session_tool_safe(const void *arg, const char *name, size_t len)
{
	return arg && mgw_session_tool_replay_safe(arg, name, len);
}

enum mgw_replay_verdict mgw_repin_replay_safe(const struct mgw_jrpc_msg *m,
                                              const struct mgw_session *rec,
                                              int replay)
{
	return mgw_replay_judge(m, replay, session_tool_safe, rec);
}

enum mgw_repin_conflict mgw_repin_on_conflict(uint32_t base_gen,
                                              const struct mgw_session *winner)
{
	return winner->pin_gen != base_gen ? MGW_REPIN_ADOPT : MGW_REPIN_RETRY;
}

/* A hint is true only as the JSON literal true (the spec's booleans). */
static int hint(const json_t *ann, const char *key)
{
	return json_is_true(json_object_get(ann, key));
}

int mgw_repin_safe_tools(const json_t *result, const char ***names, size_t *n)
{
	const json_t *tools = json_object_get(result, "tools");
	const char **v;
	size_t k = 0;

	*names = NULL;
	*n = 0;
	if (!json_is_array(tools))
		return MGW_EINVAL;
	v = calloc(json_array_size(tools) + 1, sizeof(*v));
	if (!v)
		return MGW_ENOMEM;
	for (size_t i = 0; i < json_array_size(tools); i++) {
		const json_t *t = json_array_get(tools, i);
		const json_t *ann = json_object_get(t, "annotations");
		const char *name = json_string_value(json_object_get(t, "name"));

		if (!name || !json_is_object(ann))
			continue;
		if (hint(ann, "readOnlyHint") || hint(ann, "idempotentHint"))
			v[k++] = name;
	}
	*names = v;
	*n = k;
	return 0;
}

/* ---- runs ----------------------------------------------------------------- */

enum run_state {
	R_REFRESH = 0,  /* lookup in flight */
	R_INIT,         /* initialize replay in flight */
	R_NOTIFY,       /* notifications/initialized in flight */
	R_UPDATE,       /* store update in flight */
};

struct mgw_repin_run {
	struct mgw_repin_map *map;
	struct mgw_repin_run *hnext;    /* bucket chain */
	size_t bucket;
	struct mgw_session_view *view;
	const struct mgw_route *route;
	char *id;                       /* client session id */
	unsigned char principal[MGW_SESSION_DIGEST_LEN];
	int has_principal;
	struct mgw_session *base;       /* record being moved (ref) */
	enum mgw_repin_reason reason;
	const char *from;               /* old pin's server name (logs) */
	struct mgw_upstream_server *soft; /* answered but forgot: used only
	                                 * when nothing else is left */
	struct mgw_upstream_server **hard; /* failed: never used again */
	size_t n_hard;
	char *target;
	char *authority;
	struct mgw_headers creds;
	unsigned max_attempts, attempts, update_tries;
	enum run_state state;
	struct mgw_session_op *op;
	struct mgw_client_req *up;
	struct mgw_upstream_server *srv; /* replica of the current replay */
	int acquired;                   /* srv's in-flight count held */
	int status;                     /* of the current upstream answer */
	int is_sse;
	struct evbuffer *body;
	char *new_sid;                  /* the replica's Mcp-Session-Id */
	char *version;                  /* protocolVersion it negotiated */
	struct mgw_session *pending;    /* our re-pinned copy */
	struct mgw_repin_waiter *waiters;
	size_t n_waiters;
	uint64_t t0;
};

struct mgw_repin_bg {
	struct mgw_repin_map *map;
	struct mgw_repin_bg *prev, *next;
	struct mgw_client_req *up;
	struct mgw_upstream_server *srv;  /* acquired while up runs */
};

static uint64_t hash_key(const struct mgw_session_view *v, const char *id)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)v;

	for (; *id; id++) {
		h ^= (unsigned char)*id;
		h *= 1099511628211ull;
	}
	return h;
}

static struct mgw_repin_run *find(const struct mgw_repin_map *m,
                                  const struct mgw_session_view *v,
                                  const char *id)
{
	struct mgw_repin_run *r;

	if (!m->buckets)
		return NULL;
	r = m->buckets[hash_key(v, id) & (m->n_buckets - 1)];
	for (; r; r = r->hnext)
		if (r->view == v && strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

int mgw_repin_in_progress(const struct mgw_repin_map *m,
                          const struct mgw_session_view *view,
                          const char *id)
{
	return find(m, view, id) != NULL;
}

static void unlink_run(struct mgw_repin_run *r)
{
	struct mgw_repin_run **pp;

	if (!r->map)
		return;
	for (pp = &r->map->buckets[r->bucket]; *pp; pp = &(*pp)->hnext) {
		if (*pp == r) {
			*pp = r->hnext;
			r->map->n_runs--;
			break;
		}
	}
	r->hnext = NULL;
	r->map = NULL;
}

static void release_srv(struct mgw_repin_run *r)
{
	if (r->acquired) {
		mgw_upstream_release(r->srv);
		r->acquired = 0;
	}
}

/* Frees r, dropping whatever it has in flight (no callback follows). */
static void run_free(struct mgw_repin_run *r)
{
	unlink_run(r);
	if (r->op)
		mgw_session_op_cancel(r->op);
	if (r->up)
		mgw_client_cancel(r->up);
	release_srv(r);
	mgw_session_unref(r->base);
	mgw_session_unref(r->pending);
	mgw_headers_deinit(&r->creds);
	if (r->body)
		evbuffer_free(r->body);
	free(r->hard);
	free(r->id);
	free(r->target);
	free(r->authority);
	free(r->new_sid);
	free(r->version);
	free(r);
}

static void run_logctx(const struct mgw_repin_run *r, struct mgw_log_ctx *c)
{
	c->conn_id = 0;
	c->stream_id = -1;
	c->session = r->id;
}

/* Tells every waiter (status, rec, srv) and frees r.  The run leaves the
 * map first, so a waiter that needs another re-pin starts a new run. */
static void finish(struct mgw_repin_run *r, int status,
                   struct mgw_session *rec, struct mgw_upstream_server *srv)
{
	unlink_run(r);
	if (r->op) {
		mgw_session_op_cancel(r->op);
		r->op = NULL;
	}
	while (r->waiters) {
		struct mgw_repin_waiter *w = r->waiters;

		r->waiters = w->next;
		if (r->waiters)
			r->waiters->prev = NULL;
		w->run = NULL;
		w->next = w->prev = NULL;
		r->n_waiters--;
		w->cb(w->arg, status, rec ? mgw_session_ref(rec) : NULL, srv);
	}
	run_free(r);
}

/* The session moved (by us or by someone else) to srv with record rec. */
static void finish_ok(struct mgw_repin_run *r, struct mgw_session *rec,
                      struct mgw_upstream_server *srv, int replayed)
{
	struct mgw_repin_map *m = r->map;
	struct mgw_log_ctx ctx;

	run_logctx(r, &ctx);
	if (replayed)
		atomic_fetch_add(&m->env.cnt->repinned, 1);
	else
		atomic_fetch_add(&m->env.cnt->adopted, 1);
	/* adopted: another request or gateway moved it first */
	mgw_event(&ctx, "session_repinned",
	          "from=%s to=%s reason=%s how=%s replays=%u ms=%llu",
	          r->from ? r->from : "-", srv->name,
	          mgw_repin_reason_name(r->reason),
	          replayed ? "replayed" : "adopted", r->attempts,
	          (unsigned long long)(mgw_now_ms() - r->t0));
	if (m->env.on_repinned)
		m->env.on_repinned(m->env.hook_arg, rec, srv);
	finish(r, 0, rec, srv);
}

static void finish_fail(struct mgw_repin_run *r, int status, const char *why)
{
	struct mgw_log_ctx ctx;

	run_logctx(r, &ctx);
	if (status == MGW_EPROTO)
		atomic_fetch_add(&r->map->env.cnt->failed, 1);
	else if (status == MGW_ENOTFOUND)
		atomic_fetch_add(&r->map->env.cnt->gone, 1);
	mgw_event(&ctx, "session_repin_failed", "from=%s reason=%s detail=\"%s\"",
	          r->from ? r->from : "-", mgw_repin_reason_name(r->reason), why);
	finish(r, status, NULL, NULL);
}

static int is_hard(const struct mgw_repin_run *r,
                   const struct mgw_upstream_server *s)
{
	for (size_t i = 0; i < r->n_hard; i++)
		if (r->hard[i] == s)
			return 1;
	return 0;
}

static void add_hard(struct mgw_repin_run *r, struct mgw_upstream_server *s)
{
	/* hard has room for every server of the group, the one that
	 * failed first, and the soft one next_attempt puts behind them */
	if (s && !is_hard(r, s) && r->n_hard <= r->route->group->n_servers)
		r->hard[r->n_hard++] = s;
}

static void next_attempt(struct mgw_repin_run *r);

/* ---- upstream requests of a run ---------------------------------------- */

/* The headers of a replayed message: JSON in, JSON or SSE out, the
 * client's stored replay headers (initialize) or the negotiated version
 * and the new upstream session (notifications/initialized), then the
 * trigger's credentials. */
static int replay_headers(struct mgw_headers *h, const struct mgw_repin_run *r,
                          int notify)
{
	const struct mgw_session *s = r->base;
	const char *version = r->version ? r->version : s->protocol_version;

	if (mgw_headers_adds(h, "Content-Type", "application/json") != 0 ||
	    mgw_headers_adds(h, "Accept", "application/json, text/event-stream") != 0)
		return MGW_ENOMEM;
	if (!notify) {
		for (size_t i = 0; i < s->n_init_headers; i++)
			if (mgw_headers_adds(h, s->init_headers[i].name,
			                     s->init_headers[i].value) != 0)
				return MGW_ENOMEM;
	} else {
		if (version && mgw_headers_adds(h, "MCP-Protocol-Version", version) != 0)
			return MGW_ENOMEM;
		if (r->new_sid && mgw_headers_adds(h, "Mcp-Session-Id", r->new_sid) != 0)
			return MGW_ENOMEM;
	}
	return mgw_headers_add_all(h, &r->creds);
}

static void on_run_head(struct mgw_client_req *q, int status,
                        const struct mgw_headers *headers, void *arg);
static void on_run_data(struct mgw_client_req *q, const unsigned char *data,
                        size_t len, void *arg);
static void on_run_end(struct mgw_client_req *q, void *arg);
static void on_run_error(struct mgw_client_req *q,
                         const struct mgw_client_error *e, void *arg);

/* Sends the replayed initialize (notify 0) or notifications/initialized
 * (notify 1) to r->srv.  Returns 0 or MGW_E* (nothing in flight). */
static int send_replay(struct mgw_repin_run *r, int notify)
{
	struct mgw_client_reqspec spec;
	struct mgw_headers h;
	int rc;

	mgw_headers_init(&h);
	rc = replay_headers(&h, r, notify);
	if (rc == 0) {
		memset(&spec, 0, sizeof(spec));
		spec.method = "POST";
		spec.target = r->target;
		spec.authority = r->authority;
		spec.headers = &h;
		if (!notify) {
			spec.body = r->base->init_body;
			spec.body_len = r->base->init_len;
		} else if (r->base->initialized_body) {
			spec.body = r->base->initialized_body;
			spec.body_len = r->base->initialized_len;
		} else {
			spec.body = mgw_session_canonical_initialized;
			spec.body_len = strlen(mgw_session_canonical_initialized);
		}
		spec.tmo = &r->route->tmo;
		spec.on_head = on_run_head;
		spec.on_data = on_run_data;
		spec.on_end = on_run_end;
		spec.on_error = on_run_error;
		spec.arg = r;
		r->status = 0;
		r->is_sse = 0;
		evbuffer_drain(r->body, evbuffer_get_length(r->body));
		rc = mgw_upool_send(r->map->env.pool, r->srv, &spec, &r->up);
	}
	mgw_headers_deinit(&h);
	if (rc == 0) {
		r->acquired = 1;
		r->state = notify ? R_NOTIFY : R_INIT;
	}
	return rc;
}

static void end_fresh_session(struct mgw_repin_run *r);

/* The current replay did not work on r->srv: never use it again in this
 * run, and try the next replica. */
static void replay_failed(struct mgw_repin_run *r, const char *why)
{
	struct mgw_log_ctx ctx;

	run_logctx(r, &ctx);
	atomic_fetch_add(&r->map->env.cnt->replay_failures, 1);
	mgw_info(&ctx, "replay of initialize on %s failed: %s", r->srv->name, why);
	release_srv(r);
	/* a session the replica opened for this replay (its initialize was
	 * answered, then something after failed) is ended, not left behind */
	end_fresh_session(r);
	add_hard(r, r->srv);
	r->srv = NULL;
	free(r->new_sid);
	r->new_sid = NULL;
	free(r->version);
	r->version = NULL;
	next_attempt(r);
}

static void on_run_head(struct mgw_client_req *q, int status,
                        const struct mgw_headers *headers, void *arg)
{
	struct mgw_repin_run *r = arg;
	const char *ct = mgw_headers_get(headers, "content-type");
	const char *sid = mgw_headers_get(headers, "mcp-session-id");

	(void)q;
	mgw_upstream_report(r->srv, status >= 500 ? MGW_UPSTREAM_HTTP_5XX
	                                          : MGW_UPSTREAM_OK,
	                    status, mgw_now_ms());
	r->status = status;
	while (ct && (*ct == ' ' || *ct == '\t'))
		ct++;
	r->is_sse = ct && strncasecmp(ct, "text/event-stream", 17) == 0;
	if (r->state == R_INIT && sid && status >= 200 && status < 300 &&
	    mgw_session_id_valid(sid, strlen(sid), MGW_SESSION_UPSTREAM_ID_MAX)) {
		free(r->new_sid);
		r->new_sid = strdup(sid); /* NULL on no memory: checked at end */
		if (!r->new_sid)
			r->status = -1;
	}
}

static void on_run_data(struct mgw_client_req *q, const unsigned char *data,
                        size_t len, void *arg)
{
	struct mgw_repin_run *r = arg;

	/* only the initialize answer is read; a notification's is dropped */
	if (r->state != R_INIT)
		return;
	if (evbuffer_get_length(r->body) + len > MGW_REPIN_INIT_BODY_MAX ||
	    evbuffer_add(r->body, data, len) != 0) {
		mgw_client_cancel(q);
		r->up = NULL;
		replay_failed(r, "initialize answer too large");
	}
}

static void do_update(struct mgw_repin_run *r);

/* A complete answer to the replayed initialize: a 2xx carrying an
 * InitializeResult.  Returns NULL when good, else why not. */
static const char *check_init_answer(struct mgw_repin_run *r)
{
	size_t n = evbuffer_get_length(r->body);
	unsigned char *b = n ? evbuffer_pullup(r->body, -1) : NULL;
	json_t *resp, *res;
	const char *v, *why = NULL;

	if (r->status < 0)
		return "out of memory";
	if (r->status < 200 || r->status > 299)
		return "not a 2xx answer";
	resp = mgw_sse_body_response(b, n, r->is_sse, r->map->env.max_depth);
	res = resp ? json_object_get(resp, "result") : NULL;
	if (!json_is_object(res)) {
		why = "the answer is not an InitializeResult";
	} else {
		v = json_string_value(json_object_get(res, "protocolVersion"));
		if (v && mgw_session_id_valid(v, strlen(v), MGW_SESSION_VERSION_MAX)) {
			r->version = strdup(v);
			if (!r->version)
				why = "out of memory";
		}
	}
	json_decref(resp);
	return why;
}

static void on_run_end(struct mgw_client_req *q, void *arg)
{
	struct mgw_repin_run *r = arg;
	const char *why;
	int rc;

	(void)q;
	r->up = NULL;
	release_srv(r);
	if (r->state == R_INIT) {
		why = check_init_answer(r);
		if (why) {
			replay_failed(r, why);
			return;
		}
		rc = send_replay(r, 1);
		if (rc != 0)
			replay_failed(r, mgw_strerror(rc));
		return;
	}
	/* R_NOTIFY */
	if (r->status < 200 || r->status > 299) {
		replay_failed(r, "notifications/initialized not accepted");
		return;
	}
	do_update(r);
}

static void on_run_error(struct mgw_client_req *q,
                         const struct mgw_client_error *e, void *arg)
{
	struct mgw_repin_run *r = arg;
	char why[160];

	(void)q;
	r->up = NULL;
	mgw_upstream_report_error(r->srv, e, mgw_now_ms());
	snprintf(why, sizeof(why), "%s (%s)", e->msg ? e->msg : mgw_strerror(e->code),
	         mgw_client_err_class_name(e->cls));
	replay_failed(r, why);
}

/* INIT: the next replica, or the end of the run. */
static void next_attempt(struct mgw_repin_run *r)
{
	const struct mgw_upstream_group *g = r->route->group;
	struct mgw_upstream_server *s = NULL;
	enum mgw_upstream_next v;
	uint64_t now = mgw_now_ms();
	int rc;

	for (;;) {
		if (r->attempts >= r->max_attempts) {
			finish_fail(r, MGW_EPROTO, "max_repin_attempts replays failed");
			return;
		}
		/* the replica that forgot the session is still a fine home
		 * when it is the only one left (a single replica restarted) */
		if (r->soft)
			r->hard[r->n_hard] = r->soft; /* room: see add_hard */
		v = mgw_upool_choose(r->map->env.pool, g, NULL, 0, r->hard,
		                     r->n_hard + (r->soft ? 1 : 0),
		                     MGW_UPOOL_RETRY, now, &s);
		if (v == MGW_NEXT_ALL_TRIED && r->soft && !is_hard(r, r->soft))
			v = mgw_upool_choose(r->map->env.pool, g, NULL, 0, r->hard,
			                     r->n_hard, MGW_UPOOL_RETRY, now, &s);
		if (v == MGW_NEXT_NO_BUDGET) {
			/* a replay is a retry like any other: the session
			 * stays where it is, the request may come again */
			finish_fail(r, MGW_EAGAIN, "retry budget exhausted");
			return;
		}
		if (v != MGW_NEXT_OK) {
			finish_fail(r, MGW_EPROTO, "no healthy replica left");
			return;
		}
		r->srv = s;
		r->attempts++;
		atomic_fetch_add(&r->map->env.cnt->replays, 1);
		rc = send_replay(r, 0);
		if (rc == 0)
			return;
		/* could not even queue it (queue full): next one */
		atomic_fetch_add(&r->map->env.cnt->replay_failures, 1);
		add_hard(r, s);
		r->srv = NULL;
		if (rc == MGW_ENOMEM) {
			finish_fail(r, MGW_ENOMEM, "out of memory");
			return;
		}
	}
}

/* ---- UPDATE --------------------------------------------------------------- */

static void on_update(void *arg, int status, struct mgw_session *rec);

static void end_fresh_session(struct mgw_repin_run *r)
{
	if (r->srv && r->new_sid &&
	    mgw_repin_end_upstream(r->map, r->srv, r->route, r->target,
	                           r->authority, &r->creds, r->new_sid) == 0)
		atomic_fetch_add(&r->map->env.cnt->upstream_deletes, 1);
}

static void do_update(struct mgw_repin_run *r)
{
	struct mgw_session *p = mgw_session_dup(r->base);
	int rc;

	if (!p) {
		end_fresh_session(r);
		finish_fail(r, MGW_ENOMEM, "out of memory");
		return;
	}
	rc = mgw_session_repin(p, r->srv->conf->url, r->new_sid);
	if (rc != 0) {
		mgw_session_unref(p);
		end_fresh_session(r);
		finish_fail(r, MGW_ENOMEM, mgw_strerror(rc));
		return;
	}
	mgw_session_unref(r->pending);
	r->pending = p;
	r->state = R_UPDATE;
	r->update_tries++;
	rc = mgw_session_update(r->view, mgw_session_ref(p), r->base->version,
	                        on_update, r, &r->op);
	if (rc != 0) {
		/* not stored; the move itself worked: use it */
		r->op = NULL;
		on_update(r, MGW_EIO, NULL);
	}
}

static void on_update(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_repin_run *r = arg;
	struct mgw_upstream_server *s;
	struct mgw_log_ctx ctx;

	r->op = NULL;
	run_logctx(r, &ctx);
	if (status == 0 && rec) {
		finish_ok(r, rec, r->srv, 1);
		mgw_session_unref(rec);
		return;
	}
	if (status == MGW_ECONFLICT && rec) {
		if (mgw_repin_on_conflict(r->base->pin_gen, rec) == MGW_REPIN_ADOPT) {
			s = mgw_repin_server_by_url(r->route->group, rec->pin_url);
			if (s && !is_hard(r, s) &&
			    mgw_repin_pin_check(s, mgw_now_ms()) < 0) {
				end_fresh_session(r);
				finish_ok(r, rec, s, 0);
				mgw_session_unref(rec);
				return;
			}
		}
		mgw_session_unref(r->base);
		r->base = rec;
		if (r->update_tries < MAX_UPDATE_TRIES) {
			do_update(r);
			return;
		}
		status = MGW_ECONFLICT; /* use ours unsaved, below */
	} else if (status == MGW_ENOTFOUND) {
		mgw_session_unref(rec);
		end_fresh_session(r);
		finish_fail(r, MGW_ENOTFOUND, "the session was deleted meanwhile");
		return;
	} else {
		mgw_session_unref(rec);
	}
	/* The store could not record it: the session still works on the new
	 * replica for these requests; the next one re-pins again. */
	atomic_fetch_add(&r->map->env.cnt->store_unsaved, 1);
	mgw_warn(&ctx, "session store could not record the re-pin (%s)",
	         mgw_strerror(status));
	rec = mgw_session_ref(r->pending);
	finish_ok(r, rec, r->srv, 1);
	mgw_session_unref(rec);
}

/* ---- REFRESH -------------------------------------------------------------- */

static void on_refresh(void *arg, int status, struct mgw_session *rec)
{
	struct mgw_repin_run *r = arg;
	struct mgw_upstream_server *s;

	r->op = NULL;
	if (status == MGW_ENOTFOUND) {
		finish_fail(r, MGW_ENOTFOUND, "the session is gone");
		return;
	}
	if (status == 0 && rec) {
		if (rec->pin_gen != r->base->pin_gen) {
			/* moved meanwhile: take that pin if it works */
			s = mgw_repin_server_by_url(r->route->group, rec->pin_url);
			if (s && !is_hard(r, s) &&
			    mgw_repin_pin_check(s, mgw_now_ms()) < 0) {
				finish_ok(r, rec, s, 0);
				mgw_session_unref(rec);
				return;
			}
		}
		mgw_session_unref(r->base);
		r->base = rec;   /* the freshest version for compare-and-set */
	}
	/* MGW_EIO and the like: go on with the record the trigger saw */
	next_attempt(r);
}

/* ---- the map -------------------------------------------------------------- */

int mgw_repin_map_init(struct mgw_repin_map *m, const struct mgw_repin_env *env)
{
	memset(m, 0, sizeof(*m));
	m->env = *env;
	m->n_buckets = N_BUCKETS;
	m->buckets = calloc(m->n_buckets, sizeof(*m->buckets));
	return m->buckets ? 0 : MGW_ENOMEM;
}

static void bg_free(struct mgw_repin_bg *b)
{
	struct mgw_repin_map *m = b->map;

	if (b->prev)
		b->prev->next = b->next;
	else
		m->bg = b->next;
	if (b->next)
		b->next->prev = b->prev;
	m->n_bg--;
	if (b->srv)
		mgw_upstream_release(b->srv);
	free(b);
}

void mgw_repin_map_deinit(struct mgw_repin_map *m)
{
	if (!m->buckets)
		return;
	for (size_t i = 0; i < m->n_buckets; i++) {
		while (m->buckets[i]) {
			struct mgw_repin_run *r = m->buckets[i];

			/* waiters left already (their exchanges were aborted) */
			while (r->waiters) {
				struct mgw_repin_waiter *w = r->waiters;
				r->waiters = w->next;
				w->run = NULL;
				w->next = w->prev = NULL;
			}
			run_free(r);
		}
	}
	while (m->bg) {
		if (m->bg->up)
			mgw_client_cancel(m->bg->up);
		bg_free(m->bg);
	}
	free(m->buckets);
	m->buckets = NULL;
}

static void add_waiter(struct mgw_repin_run *r, struct mgw_repin_waiter *w)
{
	w->run = r;
	w->prev = NULL;
	w->next = r->waiters;
	if (r->waiters)
		r->waiters->prev = w;
	r->waiters = w;
	r->n_waiters++;
}

int mgw_repin_join(struct mgw_repin_map *m, const struct mgw_repin_params *p,
                   struct mgw_repin_waiter *w, int *joined)
{
	struct mgw_repin_run *r = find(m, p->view, p->rec->id);
	const struct mgw_upstream_group *g = p->route->group;
	int rc;

	*joined = 0;
	w->run = NULL;
	if (r) {
		if (r->n_waiters >= MGW_REPIN_MAX_WAITERS)
			return MGW_ELIMIT;
		add_waiter(r, w);
		*joined = 1;
		atomic_fetch_add(&m->env.cnt->waited, 1);
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return MGW_ENOMEM;
	mgw_headers_init(&r->creds);
	r->view = p->view;
	r->route = p->route;
	r->base = mgw_session_ref((struct mgw_session *)p->rec);
	r->reason = p->reason;
	r->max_attempts = p->max_attempts ? p->max_attempts : 1;
	r->t0 = mgw_now_ms();
	r->id = strdup(p->rec->id);
	r->target = strdup(p->target);
	r->authority = p->authority ? strdup(p->authority) : NULL;
	r->hard = calloc(g->n_servers + 2, sizeof(*r->hard));
	r->body = evbuffer_new();
	if (!r->id || !r->target || (p->authority && !r->authority) ||
	    !r->hard || !r->body || mgw_headers_add_all(&r->creds, p->creds) != 0) {
		run_free(r);
		return MGW_ENOMEM;
	}
	if (p->principal) {
		memcpy(r->principal, p->principal, sizeof(r->principal));
		r->has_principal = 1;
	}
	if (p->failed) {
		r->from = p->failed->name;
		if (p->reason >= MGW_REPIN_LOST_404)
			r->soft = p->failed;   /* it answered: alive */
		else
			add_hard(r, p->failed);
	}
	atomic_fetch_add(&m->env.cnt->started[p->reason < MGW_REPIN_REASON_N
	                                      ? p->reason : MGW_REPIN_UNPINNED], 1);
	r->state = R_REFRESH;
	rc = mgw_session_lookup(r->view, r->id, strlen(r->id),
	                        r->has_principal ? r->principal : NULL,
	                        on_refresh, r, &r->op);
	if (rc != 0) {
		run_free(r);
		return rc;
	}
	r->map = m;
	r->bucket = hash_key(r->view, r->id) & (m->n_buckets - 1);
	r->hnext = m->buckets[r->bucket];
	m->buckets[r->bucket] = r;
	m->n_runs++;
	add_waiter(r, w);
	return 0;
}

void mgw_repin_leave(struct mgw_repin_waiter *w)
{
	struct mgw_repin_run *r = w->run;

	if (!r)
		return;
	if (w->prev)
		w->prev->next = w->next;
	else
		r->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->run = NULL;
	w->next = w->prev = NULL;
	if (--r->n_waiters == 0) {
		struct mgw_log_ctx ctx;

		run_logctx(r, &ctx);
		mgw_debug(&ctx, "re-pin cancelled: every waiting request left");
		/* A fresh upstream session nobody will use.  Not once the
		 * update is out: the store may apply it all the same, and
		 * the session then lives on that upstream session. */
		if (r->state == R_NOTIFY)
			end_fresh_session(r);
		run_free(r);
	}
}

/* ---- best-effort DELETE ------------------------------------------------- */

static void on_bg_head(struct mgw_client_req *q, int status,
                       const struct mgw_headers *headers, void *arg)
{
	(void)q;
	(void)status;
	(void)headers;
	(void)arg;
}

static void on_bg_data(struct mgw_client_req *q, const unsigned char *data,
                       size_t len, void *arg)
{
	(void)q;
	(void)data;
	(void)len;
	(void)arg;
}

static void on_bg_end(struct mgw_client_req *q, void *arg)
{
	(void)q;
	bg_free(arg);
}

static void on_bg_error(struct mgw_client_req *q,
                        const struct mgw_client_error *e, void *arg)
{
	(void)q;
	(void)e;
	bg_free(arg);
}

int mgw_repin_end_upstream(struct mgw_repin_map *m,
                           struct mgw_upstream_server *srv,
                           const struct mgw_route *route, const char *target,
                           const char *authority,
                           const struct mgw_headers *creds, const char *sid)
{
	struct mgw_client_reqspec spec;
	struct mgw_repin_bg *b;
	struct mgw_headers h;
	int rc = MGW_ENOMEM;

	b = calloc(1, sizeof(*b));
	if (!b)
		return MGW_ENOMEM;
	mgw_headers_init(&h);
	if (mgw_headers_adds(&h, "Mcp-Session-Id", sid) == 0 &&
	    mgw_headers_add_all(&h, creds) == 0) {
		memset(&spec, 0, sizeof(spec));
		spec.method = "DELETE";
		spec.target = target;
		spec.authority = authority;
		spec.headers = &h;
		spec.tmo = &route->tmo;
		spec.on_head = on_bg_head;
		spec.on_data = on_bg_data;
		spec.on_end = on_bg_end;
		spec.on_error = on_bg_error;
		spec.arg = b;
		rc = mgw_upool_send(m->env.pool, srv, &spec, &b->up);
		if (rc == 0)
			b->srv = srv;
	}
	mgw_headers_deinit(&h);
	if (rc != 0) {
		free(b);
		return rc;
	}
	b->map = m;
	b->next = m->bg;
	if (m->bg)
		m->bg->prev = b;
	m->bg = b;
	m->n_bg++;
	return 0;
}
