/* sf_record.c - record updates the stateful handler makes in the
 * background (struct mgw_sf_bg), so that they never delay the client:
 * the client's notifications/initialized kept for replays, and the
 * replay-safe tools a tools/list answer annotates.  Each is a
 * compare-and-set on the version read; on a conflict the change goes on
 * top of the winner's version (BG_TRIES rounds at most). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/errors.h"
#include "http/server.h"
#include "mcp/jsonrpc.h"
#include "proxy/repin.h"
#include "proxy/replay.h"
#include "proxy/route-t.h"
#include "proxy/sf_req.h"
#include "proxy/sse.h"
#include "proxy/txn-t.h"
#include "session/session.h"
#include "session/store.h"
#include "util/time.h"

#define BG_TRIES 4                  /* compare-and-set rounds of an update */

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
			atomic_fetch_add(&b->sf->sh->core->cnt.record_updates_failed, 1);
		mgw_session_unref(s);
		bg_free(b);
		return;
	}
	b->tries++;
	if (mgw_session_update(b->view, s, base->version, on_bg_done, b,
	                       &b->op) != 0) {
		b->op = NULL;
		atomic_fetch_add(&b->sf->sh->core->cnt.record_updates_failed, 1);
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
		atomic_fetch_add(&b->sf->sh->core->cnt.tools_recorded, 1);
	else if (status != 0)
		atomic_fetch_add(&b->sf->sh->core->cnt.record_updates_failed, 1);
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
	body = mgw_http_req_body(q->t->x, &len);
	if (len == 0 || len > MGW_SESSION_INITIALIZED_MAX)
		return; /* a replay then sends the canonical body */
	b = bg_new(q, BG_INITIALIZED);
	if (!b || !(b->body = malloc(len))) {
		if (b)
			bg_free(b);
		atomic_fetch_add(&q->sf->sh->core->cnt.record_updates_failed, 1);
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
	/* the route's group learns too (what stateless requests go by) */
	if (q->t->route->group->replay &&
	    mgw_replay_tools_learn(&q->t->route->group->replay->tools, res,
	                           mgw_jrpc_params_has(&q->t->msg, "cursor"),
	                           mgw_now_ms()) == 0)
		atomic_fetch_add(&q->t->route->group->replay->learned, 1);
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
	b->merge = mgw_jrpc_params_has(&q->t->msg, "cursor");
	bg_start(b, q->rec);
	goto out;
nomem:
	if (b)
		bg_free(b);
	atomic_fetch_add(&q->sf->sh->core->cnt.record_updates_failed, 1);
out:
	free(names);
	json_decref(resp);
}

void mgw_sf_after_answer(struct mgw_sf_req *q, const void *body, size_t len)
{
	const struct mgw_txn *t = q->t;

	if (!t->have_msg || !q->rec || t->status < 200 || t->status > 299)
		return;
	if (t->msg.kind == MGW_JRPC_NOTIFICATION &&
	    strcmp(t->msg.method, "notifications/initialized") == 0)
		record_initialized(q);
	else if (t->msg.kind == MGW_JRPC_REQUEST &&
	         strcmp(t->msg.method, "tools/list") == 0 && body)
		record_tools(q, body, len, t->rl.sse);
}

void mgw_sf_bg_drop_all(struct mgw_sf *sf)
{
	while (sf->bg)
		bg_free(sf->bg);
}
