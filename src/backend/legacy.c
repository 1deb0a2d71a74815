/* legacy.c - the 2025-era protocol (2025-03-26 .. 2025-11-25): initialize
 * and version negotiation, sessions held in this process's memory only,
 * the standalone GET stream, DELETE, and idle expiry.  Losing a session
 * when a request reaches another replica is the behaviour under test, so
 * nothing here is shared or persisted. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/state.h"
#include "backend/strmap.h"
#include "backend/tasks.h"
#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "mcp/era.h"
#include "util/rand.h"
#include "util/time.h"

#define SESSION_HEADER "Mcp-Session-Id"
/* The code widely deployed servers use for "Session not found". */
#define SESSION_NOT_FOUND_CODE (-32001)

/* ---- session table ---------------------------------------------------- */

static int free_counter(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 1;
}

static void session_free(struct mgw_backend *be, struct mgw_be_session *s)
{
	mgw_be_streams_close_session(be, s);
	if (s->counters) {
		be->n_counters -= mgw_strmap_count(s->counters);
		mgw_strmap_foreach(s->counters, free_counter, NULL);
		mgw_strmap_free(s->counters);
	}
	free(s);
}

static uint64_t idle_ms(const struct mgw_backend *be)
{
	return (uint64_t)(be->conf.session_idle_timeout * 1000.0);
}

struct sweep_ctx {
	struct mgw_backend *be;
	uint64_t now;
};

static int sweep_one(const char *key, void *value, void *arg)
{
	struct sweep_ctx *sc = arg;
	struct mgw_be_session *s = value;
	struct mgw_log_ctx ctx = {0, -1, s->id};

	(void)key;
	/* A client listening on a GET stream is using its session. */
	if (s->n_streams > 0)
		s->last_used_ms = sc->now;
	if (sc->now - s->last_used_ms <= idle_ms(sc->be))
		return 0;
	mgw_info(&ctx, "session expired after %.1fs idle",
	         (double)(sc->now - s->last_used_ms) / 1000.0);
	sc->be->stats.sessions_expired++;
	session_free(sc->be, s);
	return 1;
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct sweep_ctx sc = {arg, mgw_now_ms()};

	(void)fd;
	(void)what;
	mgw_strmap_foreach(sc.be->sessions, sweep_one, &sc);
	if (sc.be->store && sc.be->store->ops->sweep)
		sc.be->store->ops->sweep(sc.be->store, sc.now);
	mgw_be_tasks_sweep(sc.be, sc.now);
}

int mgw_be_sessions_init(struct mgw_backend *be)
{
	double every = be->conf.session_idle_timeout / 4.0;
	struct timeval tv;

	/* Sweep often enough that expiry is seen within about a quarter of
	 * the idle timeout, but never busier than 20 times a second. */
	if (every > 1.0)
		every = 1.0;
	if (every < 0.05)
		every = 0.05;
	tv = mgw_tv(every);
	be->sessions = mgw_strmap_new();
	be->sweep = event_new(be->base, -1, EV_PERSIST, on_sweep, be);
	if (!be->sessions || !be->sweep)
		return MGW_ENOMEM;
	event_add(be->sweep, &tv);
	return 0;
}

static int free_session_entry(const char *key, void *value, void *arg)
{
	(void)key;
	session_free(arg, value);
	return 1;
}

void mgw_be_sessions_deinit(struct mgw_backend *be)
{
	if (be->sweep)
		event_free(be->sweep);
	be->sweep = NULL;
	if (be->sessions) {
		mgw_strmap_foreach(be->sessions, free_session_entry, be);
		mgw_strmap_free(be->sessions);
	}
	be->sessions = NULL;
}

/* ---- session counters ------------------------------------------------- */

int mgw_be_session_counter_new(struct mgw_backend *be,
                               struct mgw_be_session *sess, char *handle)
{
	struct mgw_be_counter *c;

	/* per session, and for the whole server as many as memory handles
	 * (max_sessions): sessions alone would allow 1024 times that */
	if (mgw_strmap_count(sess->counters) >= MGW_BE_MAX_COUNTERS_PER_SESSION ||
	    be->n_counters >= be->conf.max_sessions)
		return MGW_ELIMIT;
	memcpy(handle, "s_", 2);
	if (mgw_random_hex(handle + 2, 16) != 0)
		return MGW_EIO;
	c = calloc(1, sizeof(*c));
	if (!c || mgw_strmap_put(sess->counters, handle, c) != 0) {
		free(c);
		return MGW_ENOMEM;
	}
	c->last_used_ms = mgw_now_ms();
	be->n_counters++;
	return 0;
}

int mgw_be_session_counter_incr(struct mgw_be_session *sess,
                                const char *handle, int64_t *value)
{
	struct mgw_be_counter *c = mgw_strmap_get(sess->counters, handle);

	if (!c)
		return MGW_ENOTFOUND;
	c->last_used_ms = mgw_now_ms();
	*value = ++c->value;
	return 0;
}

int mgw_be_session_push(struct mgw_backend *be, struct mgw_be_session *sess,
                        const char *json, size_t len)
{
	struct mgw_be_stream *st;
	size_t i = 0, pick;

	if (sess->n_streams == 0)
		return 0;
	/* One stream per message (no broadcast); rotate between streams. */
	pick = sess->push_rr++ % sess->n_streams;
	for (st = be->streams; st; st = st->next) {
		if (st->session != sess)
			continue;
		if (i++ == pick)
			return mgw_be_stream_send(st, json, len) == 0;
	}
	return 0;
}

/* ---- request checks -------------------------------------------------------- */

/* Looks up the session a request names and answers the request itself when
 * it cannot be served: missing header (400), unknown or expired session
 * (404, or 400 with --lost-session-status 400), protocol version header
 * different from the negotiated one (400).  Returns the session or NULL
 * (x answered). */
static struct mgw_be_session *require_session(struct mgw_backend *be,
                                              struct mgw_http_exchange *x,
                                              json_t *id)
{
	const char *sid = mgw_http_req_header(x, SESSION_HEADER);
	const char *pv = mgw_http_req_header(x, "MCP-Protocol-Version");
	struct mgw_log_ctx ctx = mgw_be_ctx(x, sid);
	struct mgw_be_session *s;
	char msg[160];

	if (!sid || !sid[0]) {
		be->stats.missing_session_rejections++;
		mgw_info(&ctx, "%s %s without " SESSION_HEADER " (400)",
		         mgw_http_method(x), mgw_http_path(x));
		mgw_be_reply_error(x, 400, id, MGW_JRPC_INVALID_REQUEST,
		                   "Bad Request: Mcp-Session-Id header is required",
		                   NULL, NULL);
		return NULL;
	}
	s = mgw_strmap_get(be->sessions, sid);
	if (!s) {
		be->stats.lost_session_rejections++;
		mgw_info(&ctx, "%s for an unknown or expired session (%d)",
		         mgw_http_method(x), be->conf.lost_session_status);
		mgw_be_reply_error(x, be->conf.lost_session_status, id,
		                   SESSION_NOT_FOUND_CODE, "Session not found", NULL,
		                   NULL);
		return NULL;
	}
	if (pv && strcmp(pv, s->version) != 0) {
		mgw_info(&ctx, "MCP-Protocol-Version '%s' but session negotiated %s (400)",
		         pv, s->version);
		snprintf(msg, sizeof(msg),
		         "Bad Request: MCP-Protocol-Version %.32s does not match the "
		         "negotiated version %s", pv, s->version);
		mgw_be_reply_error(x, 400, id, MGW_JRPC_INVALID_REQUEST, msg, NULL,
		                   NULL);
		return NULL;
	}
	s->last_used_ms = mgw_now_ms();
	return s;
}

/* ---- initialize -------------------------------------------------------------- */

static const char *negotiate(const struct mgw_jrpc_msg *m)
{
	const char *want = json_string_value(json_object_get(mgw_jrpc_params(m), "protocolVersion"));

	/* The client's version when we speak it, else our latest legacy one
	 * (lifecycle spec: version negotiation).  A modern version asked for
	 * in initialize gets the latest legacy version too: initialize always
	 * means the legacy handshake. */
	if (want && mgw_mcp_version_in(want, mgw_mcp_legacy_versions))
		return want;
	return MGW_MCP_LEGACY_LATEST;
}

static void do_initialize(struct mgw_backend *be, struct mgw_http_exchange *x,
                          struct mgw_jrpc_msg *msg)
{
	struct mgw_log_ctx ctx = mgw_be_ctx(x, NULL);
	struct mgw_be_session *s = NULL;
	struct mgw_be_call *c;
	json_t *res;
	char instructions[400];

	be->stats.initialize_count++;
	if (!json_is_object(mgw_jrpc_params(msg)) ||
	    !json_is_string(json_object_get(mgw_jrpc_params(msg), "protocolVersion"))) {
		mgw_info(&ctx, "initialize without params.protocolVersion (400)");
		mgw_be_reply_error(x, 400, mgw_jrpc_id(msg), MGW_JRPC_INVALID_PARAMS,
		                   "Invalid params: protocolVersion is required",
		                   NULL, NULL);
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	if (mgw_strmap_count(be->sessions) >= be->conf.max_sessions) {
		mgw_warn(&ctx, "session table full (%zu sessions): initialize refused (503)",
		         be->conf.max_sessions);
		mgw_be_reply_error(x, 503, mgw_jrpc_id(msg), MGW_JRPC_INTERNAL_ERROR,
		                   "Server busy: too many sessions", NULL, NULL);
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->counters = mgw_strmap_new()))
		goto oom;
	/* 128 random bits; a collision is astronomically unlikely, but a
	 * duplicate id would hand one client another's session. */
	for (int tries = 0; tries < 4; tries++) {
		if (mgw_random_hex(s->id, 16) != 0)
			goto oom;
		if (!mgw_strmap_get(be->sessions, s->id))
			break;
		s->id[0] = '\0';
	}
	if (!s->id[0] || mgw_strmap_put(be->sessions, s->id, s) != 0)
		goto oom;
	snprintf(s->version, sizeof(s->version), "%s", negotiate(msg));
	s->last_used_ms = mgw_now_ms();
	be->stats.sessions_created++;
	ctx.session = s->id;
	mgw_info(&ctx, "session created (protocol %s)", s->version);

	c = mgw_be_call_new(be, x, msg, MGW_BE_LEGACY);
	if (!c)
		return;
	snprintf(c->session_id, sizeof(c->session_id), "%s", s->id);
	mgw_headers_adds(&c->resp_headers, SESSION_HEADER, s->id);
	mgw_be_call_start(c, 0);
	snprintf(instructions, sizeof(instructions),
	         "Reference MCP server of mcpgw, replica %s. Counters created in "
	         "this session live in this session only.",
	         be->conf.id ? be->conf.id : "");
	res = json_pack("{sss{s{sb}s{}}soss}", "protocolVersion", s->version,
	                "capabilities", "tools", "listChanged", 1, "logging",
	                "serverInfo", mgw_be_server_info(be), "instructions",
	                instructions);
	/* Experimental tasks exist from 2025-11-25 on; no tasks/list, as
	 * tasks are not bound to a requestor here (tasks spec, security). */
	if (strcmp(s->version, "2025-11-25") >= 0)
		json_object_set_new(json_object_get(res, "capabilities"), "tasks",
		                    json_pack("{s{}s{s{s{}}}}", "cancel", "requests",
		                              "tools", "call"));
	mgw_be_call_result(c, res);
	mgw_be_call_unref(c);
	return;
oom:
	if (s) {
		if (s->counters)
			mgw_strmap_free(s->counters);
		free(s);
	}
	mgw_be_reply_error(x, 500, mgw_jrpc_id(msg), MGW_JRPC_INTERNAL_ERROR,
	                   "Out of memory", NULL, NULL);
	mgw_jrpc_msg_deinit(msg);
}

/* ---- POST / GET / DELETE -------------------------------------------------- */

/* The task methods of 2025-11-25 (no tasks/list: see do_initialize). */
static int is_task_method(const char *m)
{
	return !strcmp(m, "tasks/get") || !strcmp(m, "tasks/result") ||
	       !strcmp(m, "tasks/cancel");
}

void mgw_be_legacy_post(struct mgw_backend *be, struct mgw_http_exchange *x,
                        struct mgw_jrpc_msg *msg)
{
	struct mgw_be_session *s;
	struct mgw_be_call *c;
	const char *method = msg->method;

	if (msg->kind == MGW_JRPC_REQUEST && strcmp(method, "initialize") == 0) {
		do_initialize(be, x, msg);
		return;
	}
	s = require_session(be, x, msg->kind == MGW_JRPC_REQUEST ? mgw_jrpc_id(msg) : NULL);
	if (!s) {
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	if (msg->kind != MGW_JRPC_REQUEST) {
		/* Notifications and the client's answers to server requests are
		 * accepted without a body (transport spec). */
		if (msg->kind == MGW_JRPC_NOTIFICATION &&
		    strcmp(method, "notifications/initialized") == 0)
			s->initialized = 1;
		mgw_jrpc_msg_deinit(msg);
		mgw_be_reply_empty(x, 202);
		return;
	}
	c = mgw_be_call_new(be, x, msg, MGW_BE_LEGACY);
	if (!c)
		return;
	snprintf(c->session_id, sizeof(c->session_id), "%s", s->id);
	method = c->msg.method;
	if (strcmp(method, "ping") == 0) {
		mgw_be_call_start(c, 0);
		mgw_be_call_result(c, json_object());
	} else if (strcmp(method, "tools/list") == 0) {
		mgw_be_call_start(c, 0);
		mgw_be_call_result(c, json_pack("{so}", "tools",
		                                mgw_be_tools_list(be, MGW_BE_LEGACY)));
	} else if (strcmp(method, "tools/call") == 0) {
		mgw_be_call_start(c, 0);
		mgw_be_tools_call(c, s);
	} else if (is_task_method(method) && mgw_be_tasks_speaks(c, s)) {
		mgw_be_call_start(c, 0);
		mgw_be_tasks_method(c);
	} else if (strcmp(method, "logging/setLevel") == 0) {
		mgw_be_call_start(c, 0);
		mgw_be_call_result(c, json_object());
	} else {
		struct mgw_log_ctx ctx = mgw_be_ctx(x, s->id);
		mgw_info(&ctx, "unknown method '%.64s'", method);
		mgw_be_call_error(c, 200, MGW_JRPC_METHOD_NOT_FOUND,
		                  "Method not found", NULL);
	}
	mgw_be_call_unref(c);
}

void mgw_be_legacy_get(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	struct mgw_be_session *s;
	struct mgw_log_ctx ctx;

	if (!mgw_be_accepts(x, "text/event-stream")) {
		ctx = mgw_be_ctx(x, NULL);
		mgw_info(&ctx, "GET without Accept: text/event-stream (406)");
		mgw_be_reply_error(x, 406, NULL, MGW_JRPC_INVALID_REQUEST,
		                   "Not Acceptable: Accept must list text/event-stream",
		                   NULL, NULL);
		return;
	}
	s = require_session(be, x, NULL);
	if (!s)
		return;
	ctx = mgw_be_ctx(x, s->id);
	if (s->n_streams >= MGW_BE_MAX_STREAMS_PER_SESSION) {
		mgw_info(&ctx, "GET stream refused: %zu already open (409)",
		         s->n_streams);
		mgw_be_reply_error(x, 409, NULL, MGW_JRPC_INVALID_REQUEST,
		                   "Conflict: too many open streams for this session",
		                   NULL, NULL);
		return;
	}
	if (mgw_be_stream_open(be, x, MGW_BE_STREAM_GET, s, NULL))
		mgw_debug(&ctx, "GET stream opened");
}

void mgw_be_legacy_delete(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	struct mgw_be_session *s = require_session(be, x, NULL);
	struct mgw_log_ctx ctx;

	if (!s)
		return;
	ctx = mgw_be_ctx(x, s->id);
	mgw_info(&ctx, "session deleted by the client");
	mgw_strmap_del(be->sessions, s->id);
	session_free(be, s);
	be->stats.sessions_deleted++;
	mgw_be_reply_empty(x, 200);
}
