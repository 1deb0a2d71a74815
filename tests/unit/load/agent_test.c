/* agent_test.c - the load agent (src/load/agent.c with its dialects and
 * transports) against a scripted MCP server running in the test process
 * (the project's own HTTP server layer, on 127.0.0.1), and against the
 * test binary itself acting as a stdio MCP server (--stdio-server).
 *
 * What is checked is what goes on the wire and how each answer is
 * classified: the legacy handshake and session fields, session loss and
 * re-initialization (404, 400 by message, 400 with another error, 5xx),
 * modern headers validated by the project's SEP-2243 validator, Mcp-Name
 * sentinels and Mcp-Param-* mirroring, JSON and SSE answers (including a
 * stream left open after the response), handle loss and recreation,
 * successor handles, the auto probe both ways, timeouts, connect errors
 * and reconnects, reuse vs new connections, several targets, HTTP/2,
 * 401 with an auth command, DELETE at close, and stdio servers that
 * answer, die and are relaunched. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/errors.h"
#include "http/client.h"
#include "http/headers.h"
#include "http/server.h"
#include "load/agent.h"
#include "load/agent_impl.h"
#include "mcp/jsonrpc.h"
#include "mcp/sep2243.h"
#include "util/time.h"

#define WAIT_MS 5000
#define MAX_SEEN 128

/* ---- the scripted MCP server ---- */

enum srv_mode { SRV_LEGACY = 1, SRV_MODERN };

struct seen {
	char method[8];
	struct mgw_headers h;
	char *body;
	uint64_t conn;
	int version;
	char rpc[64];           /* JSON-RPC method, "" for none */
};

struct srv {
	struct event_base *base;
	struct mgw_http_server *s;
	char addr[64];
	char url[128];
	enum srv_mode mode;
	int sse;                /* answer requests as SSE */
	int sse_linger;         /* keep the stream open after the response */
	int sessions;           /* sessions minted */
	char session[32];       /* the one this server knows ("" none) */
	int lost_status;        /* answer for an unknown session (404) */
	const char *lost_msg;   /* its JSON-RPC message; NULL: empty body */
	const char *raw_call;   /* answer the next tools/call with this body
	                         * (a format: %lld is the request's id) */
	int fail_status;        /* answer the next tools/call with this */
	const char *fail_msg;
	int hold;               /* keep requests unanswered */
	int hold_calls;         /* keep tools/call requests unanswered */
	struct mgw_http_exchange *held[8];
	int nheld;
	int aborted;
	int successor;          /* counter_increment returns a new handle */
	int handles;            /* handles minted */
	char valid[8][24];      /* handles this server knows */
	int nvalid;
	int value;
	const char *token;      /* required Authorization value, or NULL */
	int legacy_probe_status;/* legacy answer to a request with no session */
	int deletes;
	int mrtr_forget;        /* "ask": every requestState is unknown */
	const char *tag;        /* makes session ids unique across servers */
	int nseen;
	struct seen seen[MAX_SEEN];
};

static void reply_json(struct mgw_http_exchange *x, int status,
                       const struct mgw_headers *h, char *body, size_t len)
{
	mgw_http_respond(x, status, h, "application/json", body, len);
	free(body);
}

static void reply_error(struct mgw_http_exchange *x, int status, json_t *id,
                        int code, const char *msg)
{
	size_t len;
	char *b = mgw_jrpc_error_body(id, code, msg, NULL, &len);

	reply_json(x, status, NULL, b, len);
}

static void on_held_abort(struct mgw_http_exchange *x, void *arg)
{
	struct srv *s = arg;

	for (int i = 0; i < s->nheld; i++)
		if (s->held[i] == x)
			s->held[i] = NULL;
	s->aborted++;
}

static void hold(struct srv *s, struct mgw_http_exchange *x)
{
	assert_true(s->nheld < 8);
	s->held[s->nheld++] = x;
	mgw_http_set_callbacks(x, on_held_abort, NULL, s);
}

/* Sends result for id as JSON or as an SSE stream (a progress
 * notification first, then the response). */
static void reply_result(struct srv *s, struct mgw_http_exchange *x, json_t *id,
                         json_t *result, const struct mgw_headers *h)
{
	size_t len;
	char *b = mgw_jrpc_result_body(id, result, &len);
	char *n;
	size_t nlen;

	assert_non_null(b);
	if (!s->sse) {
		reply_json(x, 200, h, b, len);
		return;
	}
	n = mgw_jrpc_notification_body("notifications/progress",
	                               json_pack("{s:s, s:i}", "progressToken",
	                                         "t", "progress", 1), &nlen);
	assert_int_equal(mgw_http_stream_start(x, 200, h, "text/event-stream"), 0);
	mgw_http_stream_write(x, ": keep-alive\n\n", 14);
	mgw_http_stream_write(x, "event: message\ndata: ", 21);
	mgw_http_stream_write(x, n, nlen);
	mgw_http_stream_write(x, "\n\n", 2);
	/* the response split across two writes, with CRLF line ends */
	mgw_http_stream_write(x, "event: message\r\ndata: ", 22);
	mgw_http_stream_write(x, b, len / 2);
	mgw_http_stream_write(x, b + len / 2, len - len / 2);
	mgw_http_stream_write(x, "\r\n\r\n", 4);
	free(n);
	free(b);
	if (s->sse_linger)
		hold(s, x);
	else
		mgw_http_stream_end(x);
}

static json_t *tool_text(const char *text, int is_error, json_t *sc)
{
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
	                      "text", text, "isError", is_error);
	if (sc)
		json_object_set_new(r, "structuredContent", sc);
	return r;
}

static int handle_valid(struct srv *s, const char *h)
{
	for (int i = 0; i < s->nvalid; i++)
		if (strcmp(s->valid[i], h) == 0)
			return 1;
	return 0;
}

static json_t *new_handle(struct srv *s)
{
	char h[24];

	snprintf(h, sizeof(h), "h%d", ++s->handles);
	if (s->nvalid < 8)
		snprintf(s->valid[s->nvalid++], sizeof(s->valid[0]), "%s", h);
	return json_string(h);
}

static json_t *run_tool(struct srv *s, const char *name, json_t *args)
{
	if (strcmp(name, "counter_create") == 0) {
		json_t *h = new_handle(s);
		json_t *r = tool_text(json_string_value(h), 0,
		                      json_pack("{s:O}", "handle", h));
		json_decref(h);
		return r;
	}
	if (strcmp(name, "counter_increment") == 0) {
		const char *h = json_string_value(json_object_get(args, "handle"));
		json_t *sc;

		if (!h || !handle_valid(s, h))
			return tool_text("unknown handle", 1, NULL);
		sc = json_pack("{s:i}", "value", ++s->value);
		if (s->successor)
			json_object_set_new(sc, "handle", new_handle(s));
		return tool_text("counted", 0, sc);
	}
	if (strcmp(name, "fail") == 0)
		return tool_text("it failed", 1, NULL);
	{
		json_t *t = json_object_get(args, "text");
		return tool_text(json_is_string(t) ? json_string_value(t) : "ok", 0,
		                 NULL);
	}
}

static void record(struct srv *s, struct mgw_http_exchange *x,
                   const struct mgw_jrpc_msg *m)
{
	const struct mgw_headers *h = mgw_http_req_headers(x);
	struct seen *e;
	size_t len;
	const unsigned char *b = mgw_http_req_body(x, &len);

	assert_true(s->nseen < MAX_SEEN);
	e = &s->seen[s->nseen++];
	snprintf(e->method, sizeof(e->method), "%s", mgw_http_method(x));
	mgw_headers_init(&e->h);
	for (size_t i = 0; i < h->n; i++)
		mgw_headers_adds(&e->h, h->v[i].name, h->v[i].value);
	/* the body is not NUL-terminated: copy exactly len bytes */
	e->body = malloc(len + 1);
	assert_non_null(e->body);
	memcpy(e->body, b, len);
	e->body[len] = '\0';
	e->conn = mgw_http_conn_id(x);
	e->version = mgw_http_version(x);
	snprintf(e->rpc, sizeof(e->rpc), "%s", m && m->method ? m->method : "");
}

static void legacy_post(struct srv *s, struct mgw_http_exchange *x,
                        struct mgw_jrpc_msg *m)
{
	const char *sid = mgw_http_req_header(x, "mcp-session-id");

	if (m->kind == MGW_JRPC_REQUEST && strcmp(m->method, "initialize") == 0) {
		struct mgw_headers h;

		snprintf(s->session, sizeof(s->session), "sess-%s%d",
		         s->tag ? s->tag : "", ++s->sessions);
		mgw_headers_init(&h);
		mgw_headers_adds(&h, "Mcp-Session-Id", s->session);
		reply_result(s, x, mgw_jrpc_id(m),
		             json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
		                       "2025-11-25", "capabilities", "serverInfo",
		                       "name", "scripted", "version", "1"), &h);
		mgw_headers_deinit(&h);
		return;
	}
	if (!sid) {
		reply_error(x, s->legacy_probe_status ? s->legacy_probe_status : 400,
		            mgw_jrpc_id(m), MGW_JRPC_INVALID_REQUEST,
		            "Bad Request: Mcp-Session-Id header is required");
		return;
	}
	if (!s->session[0] || strcmp(sid, s->session) != 0) {
		if (s->lost_msg)
			reply_error(x, s->lost_status, mgw_jrpc_id(m), -32001, s->lost_msg);
		else
			mgw_http_respond(x, s->lost_status, NULL, NULL, NULL, 0);
		return;
	}
	if (m->kind == MGW_JRPC_NOTIFICATION) {
		mgw_http_respond(x, 202, NULL, NULL, NULL, 0);
		return;
	}
	if (strcmp(m->method, "tools/call") == 0 && s->fail_status) {
		int st = s->fail_status;

		s->fail_status = 0;
		if (s->fail_msg)
			reply_error(x, st, mgw_jrpc_id(m), MGW_JRPC_INVALID_PARAMS, s->fail_msg);
		else
			mgw_http_respond(x, st, NULL, "text/plain", "oops", 4);
		return;
	}
	if (strcmp(m->method, "tools/list") == 0) {
		reply_result(s, x, mgw_jrpc_id(m), json_pack("{s:[]}", "tools"), NULL);
		return;
	}
	reply_result(s, x, mgw_jrpc_id(m),
	             run_tool(s, m->name ? m->name : "",
	                      json_object_get(mgw_jrpc_params(m), "arguments")), NULL);
}

/* The "ask" tool, an MRTR dialogue of two input rounds: no state asks
 * "q1" (state "s1"), "s1" answered asks "q2" (state "s2"), "s2" answered
 * completes; any other state, or every state with mrtr_forget, is the
 * JSON-RPC error -32040.  A round whose answer is missing asks again.
 * With the argument "wait": a round with no inputRequests (state "w1"
 * only), retried at once, completes. */
static void run_ask(struct srv *s, struct mgw_http_exchange *x,
                    struct mgw_jrpc_msg *m)
{
	const char *rs = json_string_value(json_object_get(mgw_jrpc_params(m), "requestState"));
	json_t *resp = json_object_get(mgw_jrpc_params(m), "inputResponses");
	json_t *caps = json_object_get(mgw_jrpc_meta(m),
	                               "io.modelcontextprotocol/clientCapabilities");
	const char *next_key, *next_state;

	if (!json_is_object(json_object_get(caps, "elicitation"))) {
		reply_result(s, x, mgw_jrpc_id(m), tool_text("no elicitation", 1, NULL), NULL);
		return;
	}
	if (json_object_get(json_object_get(mgw_jrpc_params(m), "arguments"), "wait")) {
		reply_result(s, x, mgw_jrpc_id(m), !rs
		             ? json_pack("{s:s, s:s}", "resultType", "input_required",
		                         "requestState", "w1")
		             : tool_text(strcmp(rs, "w1") == 0 && !resp ? "done"
		                                                        : "bad retry",
		                         strcmp(rs, "w1") != 0 || resp != NULL, NULL),
		             NULL);
		return;
	}
	if (rs && (s->mrtr_forget || (strcmp(rs, "s1") != 0 && strcmp(rs, "s2") != 0))) {
		reply_error(x, 200, mgw_jrpc_id(m), -32040, "requestState unknown");
		return;
	}
	if (!rs || !json_object_get(resp, strcmp(rs, "s1") == 0 ? "q1" : "q2")) {
		next_key = rs && strcmp(rs, "s2") == 0 ? "q2" : "q1";
		next_state = rs && strcmp(rs, "s2") == 0 ? "s2" : "s1";
	} else if (strcmp(rs, "s1") == 0) {
		next_key = "q2", next_state = "s2";
	} else {
		reply_result(s, x, mgw_jrpc_id(m), tool_text("done", 0, NULL), NULL);
		return;
	}
	reply_result(s, x, mgw_jrpc_id(m),
	             json_pack("{s:s, s:{s:{s:s}}, s:s}", "resultType",
	                       "input_required", "inputRequests", next_key,
	                       "method", "elicitation/create", "requestState",
	                       next_state), NULL);
}

static void modern_post(struct srv *s, struct mgw_http_exchange *x,
                        struct mgw_jrpc_msg *m)
{
	static const struct mgw_sep2243_param region = {"Region", "region"};
	struct mgw_sep2243_verdict v;
	int with_region = m->name && strcmp(m->name, "echo_region") == 0;

	if (m->kind != MGW_JRPC_REQUEST) {
		reply_error(x, 400, NULL, MGW_JRPC_INVALID_REQUEST, "no notifications");
		return;
	}
	assert_int_equal(mgw_sep2243_validate(mgw_http_req_headers(x), m, NULL,
	                                      with_region ? &region : NULL,
	                                      with_region ? 1 : 0, &v), 0);
	if (!v.ok) {
		reply_error(x, v.status, mgw_jrpc_id(m), v.code, v.message);
		return;
	}
	if (!json_is_object(json_object_get(mgw_jrpc_meta(m),
	                    "io.modelcontextprotocol/clientCapabilities"))) {
		reply_error(x, 400, mgw_jrpc_id(m), MGW_JRPC_INVALID_PARAMS, "no capabilities");
		return;
	}
	if (s->raw_call && strcmp(m->method, "tools/call") == 0) {
		char *b = malloc(1024);
		int n;

		assert_non_null(b);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		n = snprintf(b, 1024, s->raw_call,
		             (long long)json_integer_value(mgw_jrpc_id(m)));
#pragma GCC diagnostic pop
		s->raw_call = NULL;
		reply_json(x, 200, NULL, b, (size_t)n);
		return;
	}
	if (s->fail_status && strcmp(m->method, "tools/call") == 0) {
		int st = s->fail_status;

		s->fail_status = 0;
		reply_error(x, st, mgw_jrpc_id(m), MGW_JRPC_INVALID_PARAMS,
		            s->fail_msg ? s->fail_msg : "refused");
		return;
	}
	if (strcmp(m->method, "server/discover") == 0) {
		reply_result(s, x, mgw_jrpc_id(m),
		             json_pack("{s:[s]}", "supportedVersions", "2026-07-28"),
		             NULL);
		return;
	}
	if (strcmp(m->method, "tools/list") == 0) {
		json_t *tools = json_pack(
		    "{s:[{s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s}}}}]}", "tools",
		    "name", "echo_region", "inputSchema", "type", "object",
		    "properties", "region", "type", "string", "x-mcp-header",
		    "Region", "text", "type", "string");
		reply_result(s, x, mgw_jrpc_id(m), tools, NULL);
		return;
	}
	if (strcmp(m->method, "tools/call") == 0 && strcmp(m->name, "ask") == 0) {
		run_ask(s, x, m);
		return;
	}
	if (strcmp(m->method, "tools/call") == 0) {
		reply_result(s, x, mgw_jrpc_id(m),
		             run_tool(s, m->name, json_object_get(mgw_jrpc_params(m),
		                                                  "arguments")), NULL);
		return;
	}
	reply_error(x, 404, mgw_jrpc_id(m), MGW_JRPC_METHOD_NOT_FOUND, "Method not found");
}

static void srv_handler(struct mgw_http_exchange *x, void *arg)
{
	struct srv *s = arg;
	struct mgw_jrpc_msg m;
	size_t len;
	const unsigned char *b = mgw_http_req_body(x, &len);
	const char *auth = mgw_http_req_header(x, "authorization");

	memset(&m, 0, sizeof(m));
	if (strcmp(mgw_http_method(x), "POST") == 0)
		assert_int_equal(mgw_jrpc_classify(b, len, 0, &m), 0);
	record(s, x, m.kind ? &m : NULL);
	if (s->token && (!auth || strcmp(auth, s->token) != 0)) {
		mgw_http_respond(x, 401, NULL, NULL, NULL, 0);
	} else if (s->hold || (s->hold_calls && m.method &&
	                       strcmp(m.method, "tools/call") == 0)) {
		hold(s, x);
	} else if (strcmp(mgw_http_method(x), "DELETE") == 0) {
		const char *sid = mgw_http_req_header(x, "mcp-session-id");

		if (sid && strcmp(sid, s->session) == 0) {
			s->deletes++;
			s->session[0] = '\0';
			mgw_http_respond(x, 200, NULL, NULL, NULL, 0);
		} else {
			mgw_http_respond(x, 404, NULL, NULL, NULL, 0);
		}
	} else if (s->mode == SRV_LEGACY) {
		legacy_post(s, x, &m);
	} else {
		modern_post(s, x, &m);
	}
	mgw_jrpc_msg_deinit(&m);
}

static void srv_start_at(struct srv *s, struct event_base *base,
                         enum srv_mode mode, const char *at)
{
	struct mgw_http_limits lim;

	memset(s, 0, sizeof(*s));
	s->base = base;
	s->mode = mode;
	s->lost_status = 404;
	mgw_http_limits_default(&lim);
	s->s = mgw_http_server_new(base, &lim, srv_handler, s);
	assert_non_null(s->s);
	assert_int_equal(mgw_http_server_listen(s->s, at, NULL, s->addr,
	                                        sizeof(s->addr)), 0);
	snprintf(s->url, sizeof(s->url), "http://%s/mcp", s->addr);
}

static void srv_start(struct srv *s, struct event_base *base, enum srv_mode mode)
{
	srv_start_at(s, base, mode, "127.0.0.1:0");
}

static void srv_stop(struct srv *s)
{
	for (int i = 0; i < s->nheld; i++)
		if (s->held[i]) {
			struct mgw_http_exchange *x = s->held[i];
			s->held[i] = NULL;
			mgw_http_set_callbacks(x, NULL, NULL, NULL);
		}
	mgw_http_server_free(s->s);
	s->s = NULL;
	for (int i = 0; i < s->nseen; i++) {
		mgw_headers_deinit(&s->seen[i].h);
		free(s->seen[i].body);
	}
	s->nseen = 0;
}

static const struct seen *seen_rpc(const struct srv *s, int i)
{
	assert_true(i < s->nseen);
	return &s->seen[i];
}

/* ---- the fixture ---- */

struct fx {
	struct event_base *base;
	struct mgw_client *cl;
	struct srv srv;
	struct mgw_load_target target;
	char *urls[4];
	struct mgw_load_agent_opts opts;
	struct mgw_load_agent *a;
	struct mgw_load_call_spec echo, counter;
	json_t *echo_args;
	/* the last call */
	int done;
	struct mgw_load_result res;
	char detail[LD_DETAIL_MAX];
	int ncalls;
	int closed;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->base = event_base_new();
	f->cl = mgw_client_new(f->base, NULL);
	assert_non_null(f->cl);
	f->opts.dialect = MGW_LOAD_LEGACY;
	f->opts.timeout = 5;
	f->echo_args = json_pack("{s:s}", "text", "hello");
	f->echo.name = "echo";
	f->echo.tool = "echo";
	f->echo.arguments = f->echo_args;
	f->echo.weight = 1;
	f->counter.name = "counter";
	f->counter.flow = MGW_LOAD_FLOW_COUNTER;
	f->counter.tool = "counter_increment";
	f->counter.create_tool = "counter_create";
	f->counter.handle_arg = "handle";
	f->counter.weight = 1;
	f->target.conn = MGW_LOAD_CONN_REUSE;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	mgw_load_agent_free(f->a);
	mgw_client_free(f->cl);
	if (f->srv.s)
		srv_stop(&f->srv);
	for (int i = 0; i < 4; i++)
		free(f->urls[i]);
	json_decref(f->echo_args);
	event_base_free(f->base);
	free(f);
	return 0;
}

static void pump_ms(struct event_base *b, int ms)
{
	struct timeval tv = {0, ms * 1000};

	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
}

static int pump_until(struct event_base *b, const int *flag)
{
	uint64_t end = mgw_now_ms() + WAIT_MS;

	while (!*flag && mgw_now_ms() < end)
		pump_ms(b, 5);
	return *flag;
}

/* Points the agent at urls (NULL-terminated) and creates it. */
static void fx_agent(struct fx *f, ...)
{
	va_list ap;
	const char *u;
	size_t n = 0;

	va_start(ap, f);
	while ((u = va_arg(ap, const char *)) != NULL && n < 4)
		f->urls[n++] = strdup(u);
	va_end(ap);
	f->target.urls = f->urls;
	f->target.n_urls = n;
	f->a = mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts);
	assert_non_null(f->a);
}

static void on_done(struct mgw_load_agent *a, const struct mgw_load_result *r,
                    void *arg)
{
	struct fx *f = arg;

	assert_ptr_equal(a, f->a);
	f->res = *r;
	snprintf(f->detail, sizeof(f->detail), "%s", r->detail ? r->detail : "");
	f->res.detail = f->detail;
	f->done = 1;
	f->ncalls++;
}

/* Runs one logical call to its end. */
static enum mgw_load_outcome call(struct fx *f,
                                  const struct mgw_load_call_spec *spec)
{
	f->done = 0;
	assert_int_equal(mgw_load_agent_call(f->a, spec, on_done, f), 0);
	/* never inside the call */
	assert_int_equal(f->done, 0);
	assert_true(pump_until(f->base, &f->done));
	return f->res.outcome;
}

static const char *hdr(const struct seen *e, const char *name)
{
	return mgw_headers_get(&e->h, name);
}

/* ---- legacy ---- */

static void test_legacy_handshake_and_call(void **state)
{
	struct fx *f = *state;
	const struct seen *e;
	json_t *b;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(mgw_load_agent_era(f->a), MGW_ERA_IS_LEGACY);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.status, 200);
	assert_int_equal(f->res.reinitialized, 1);
	assert_int_equal(f->res.reconnected, 0);
	assert_true(f->res.sent_ns > 0);
	assert_true(f->res.bytes > 0);
	assert_null(f->res.detail[0] ? f->res.detail : NULL);
	assert_int_equal(f->srv.nseen, 3);

	e = seen_rpc(&f->srv, 0);
	assert_string_equal(e->rpc, "initialize");
	assert_null(hdr(e, "Mcp-Session-Id"));
	assert_null(hdr(e, "MCP-Protocol-Version"));
	assert_string_equal(hdr(e, "Content-Type"), "application/json");
	assert_string_equal(hdr(e, "Accept"), "application/json, text/event-stream");
	b = json_loads(e->body, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(b, "params"), "protocolVersion")), "2025-11-25");
	assert_true(json_is_object(json_object_get(json_object_get(b, "params"),
	                                           "capabilities")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(b, "params"), "clientInfo"), "name")), "mcpgw-load");
	json_decref(b);

	e = seen_rpc(&f->srv, 1);
	assert_string_equal(e->rpc, "notifications/initialized");
	assert_string_equal(hdr(e, "Mcp-Session-Id"), "sess-1");
	assert_string_equal(hdr(e, "MCP-Protocol-Version"), "2025-11-25");

	e = seen_rpc(&f->srv, 2);
	assert_string_equal(e->rpc, "tools/call");
	assert_string_equal(hdr(e, "Mcp-Session-Id"), "sess-1");
	assert_string_equal(hdr(e, "MCP-Protocol-Version"), "2025-11-25");
	assert_null(hdr(e, "Mcp-Method")); /* legacy sends no SEP-2243 fields */
	b = json_loads(e->body, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(b, "params"), "arguments"), "text")), "hello");
	assert_null(json_object_get(json_object_get(b, "params"), "_meta"));
	json_decref(b);

	/* the next call runs on the same session, no handshake */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 0);
	assert_int_equal(f->srv.nseen, 4);
	assert_string_equal(hdr(seen_rpc(&f->srv, 3), "Mcp-Session-Id"), "sess-1");
	/* reuse mode: one connection for all of it */
	for (int i = 1; i < 4; i++)
		assert_int_equal(f->srv.seen[i].conn, f->srv.seen[0].conn);
}

static void test_legacy_session_lost_404(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	/* the server forgets the session (a replica restart) */
	f->srv.session[0] = '\0';
	assert_int_equal(call(f, &f->echo), MGW_LOAD_SESSION_LOST);
	assert_int_equal(f->res.status, 404);
	assert_int_equal(f->res.reinitialized, 0);
	/* the next call starts over with initialize and works */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 1);
	assert_int_equal(f->srv.sessions, 2);
	assert_string_equal(seen_rpc(&f->srv, 4)->rpc, "initialize");
	assert_string_equal(hdr(seen_rpc(&f->srv, 6), "Mcp-Session-Id"), "sess-2");
}

static void test_legacy_session_lost_400_by_message(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	f->srv.lost_status = 400;
	f->srv.lost_msg = "Bad Request: No valid SESSION ID provided";
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	f->srv.session[0] = '\0';
	assert_int_equal(call(f, &f->echo), MGW_LOAD_SESSION_LOST);
	assert_int_equal(f->res.status, 400);
	assert_non_null(strstr(f->res.detail, "SESSION ID"));
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 1);

	/* an empty 400 body can only be the session layer refusing */
	f->srv.lost_msg = NULL;
	f->srv.session[0] = '\0';
	assert_int_equal(call(f, &f->echo), MGW_LOAD_SESSION_LOST);
}

static void test_legacy_other_400_is_not_a_loss(void **state)
{
	struct fx *f = *state;
	int sessions;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	sessions = f->srv.sessions;
	f->srv.fail_status = 400;
	f->srv.fail_msg = "Invalid params: text must be a string";
	assert_int_equal(call(f, &f->echo), MGW_LOAD_HTTP_4XX);
	assert_int_equal(f->res.status, 400);
	assert_non_null(strstr(f->res.detail, "Invalid params"));
	/* the session is kept: no new handshake */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 0);
	assert_int_equal(f->srv.sessions, sessions);
}

static void test_legacy_matcher_is_configurable(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	f->srv.lost_status = 400;
	f->srv.lost_msg = "Unknown conversation";
	f->opts.lost_session_match = "conversation";
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	f->srv.session[0] = '\0';
	assert_int_equal(call(f, &f->echo), MGW_LOAD_SESSION_LOST);
}

static void test_legacy_5xx_reinitializes(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	f->srv.fail_status = 502;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_HTTP_5XX);
	assert_int_equal(f->res.status, 502);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 1);
	assert_int_equal(f->srv.sessions, 2);
}

static void test_session_lost_rule(void **state)
{
	json_t *sess = json_pack("{s:i, s:s}", "code", -32001, "message",
	                         "Session not found");
	json_t *other = json_pack("{s:i, s:s}", "code", -32602, "message",
	                          "Invalid params");
	json_t *nomsg = json_pack("{s:i}", "code", -32600);

	(void)state;
	assert_int_equal(mgw_load_session_lost(404, NULL, NULL), 1);
	assert_int_equal(mgw_load_session_lost(404, other, NULL), 1);
	assert_int_equal(mgw_load_session_lost(400, NULL, NULL), 1);
	assert_int_equal(mgw_load_session_lost(400, sess, NULL), 1);
	assert_int_equal(mgw_load_session_lost(400, other, NULL), 0);
	assert_int_equal(mgw_load_session_lost(400, nomsg, NULL), 0);
	assert_int_equal(mgw_load_session_lost(400, other, "params"), 1);
	assert_int_equal(mgw_load_session_lost(400, sess, "conversation"), 0);
	assert_int_equal(mgw_load_session_lost(400, other, ""), 1);
	assert_int_equal(mgw_load_session_lost(401, NULL, NULL), 0);
	assert_int_equal(mgw_load_session_lost(500, NULL, NULL), 0);
	assert_int_equal(mgw_load_session_lost(200, NULL, NULL), 0);
	json_decref(sess);
	json_decref(other);
	json_decref(nomsg);
}

static void on_closed(struct mgw_load_agent *a, void *arg)
{
	struct fx *f = arg;

	(void)a;
	f->closed = 1;
}

static void test_legacy_delete_at_close(void **state)
{
	struct fx *f = *state;
	const struct seen *e;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(mgw_load_agent_close(f->a, on_closed, f), 0);
	assert_int_equal(f->closed, 0);
	assert_int_equal(mgw_load_agent_close(f->a, on_closed, f), MGW_ECLOSED);
	assert_int_equal(mgw_load_agent_call(f->a, &f->echo, on_done, f),
	                 MGW_ECLOSED);
	assert_true(pump_until(f->base, &f->closed));
	assert_int_equal(f->srv.deletes, 1);
	e = seen_rpc(&f->srv, f->srv.nseen - 1);
	assert_string_equal(e->method, "DELETE");
	assert_string_equal(hdr(e, "Mcp-Session-Id"), "sess-1");
	assert_string_equal(hdr(e, "MCP-Protocol-Version"), "2025-11-25");
}

static void test_close_bounded_by_timeout(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	f->opts.timeout = 0.2;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	/* a server that never answers the DELETE does not keep the close */
	f->srv.hold = 1;
	assert_int_equal(mgw_load_agent_close(f->a, on_closed, f), 0);
	assert_true(pump_until(f->base, &f->closed));
	assert_string_equal(seen_rpc(&f->srv, f->srv.nseen - 1)->method, "DELETE");
	assert_int_equal(f->ncalls, 1);
	/* modern agents have nothing to end */
	mgw_load_agent_free(f->a);
	f->closed = 0;
	f->opts.dialect = MGW_LOAD_MODERN;
	f->a = mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts);
	assert_int_equal(mgw_load_agent_close(f->a, on_closed, f), 0);
	assert_int_equal(f->closed, 0); /* from the loop */
	assert_true(pump_until(f->base, &f->closed));
}

/* ---- modern ---- */

static void test_modern_headers_and_meta(void **state)
{
	struct fx *f = *state;
	struct mgw_load_call_spec odd = f->echo;
	const struct seen *e;
	json_t *b, *meta;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	f->opts.client_name = "bench";
	f->opts.client_version = "9";
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(mgw_load_agent_era(f->a), MGW_ERA_IS_MODERN);
	/* the scripted server runs mgw_sep2243_validate on every request */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 0);
	assert_int_equal(f->srv.nseen, 1); /* no handshake */
	e = seen_rpc(&f->srv, 0);
	assert_string_equal(e->rpc, "tools/call");
	assert_string_equal(hdr(e, "MCP-Protocol-Version"), "2026-07-28");
	assert_string_equal(hdr(e, "Mcp-Method"), "tools/call");
	assert_string_equal(hdr(e, "Mcp-Name"), "echo");
	assert_null(hdr(e, "Mcp-Session-Id"));
	b = json_loads(e->body, 0, NULL);
	meta = json_object_get(json_object_get(b, "params"), "_meta");
	assert_string_equal(json_string_value(json_object_get(meta,
	    "io.modelcontextprotocol/protocolVersion")), "2026-07-28");
	assert_true(json_is_object(json_object_get(meta,
	    "io.modelcontextprotocol/clientCapabilities")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(meta,
	    "io.modelcontextprotocol/clientInfo"), "name")), "bench");
	assert_string_equal(json_string_value(json_object_get(json_object_get(meta,
	    "io.modelcontextprotocol/clientInfo"), "version")), "9");
	json_decref(b);

	/* a name that is not plain ASCII goes as the base64 sentinel, and
	 * the server's validator decodes it back */
	odd.tool = "écho tool ";
	assert_int_equal(call(f, &odd), MGW_LOAD_OK);
	e = seen_rpc(&f->srv, 1);
	assert_non_null(strstr(hdr(e, "Mcp-Name"), "=?base64?"));
	{
		size_t n;
		char *d = mgw_sep2243_decode(hdr(e, "Mcp-Name"),
		                             strlen(hdr(e, "Mcp-Name")), &n);
		assert_non_null(d);
		assert_string_equal(d, "écho tool ");
		free(d);
	}
}

static void test_modern_param_headers_after_list(void **state)
{
	struct fx *f = *state;
	struct mgw_load_call_spec region = f->echo;
	json_t *args = json_pack("{s:s, s:s}", "region", "eu-west 1 ", "text", "x");
	const struct seen *e;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	f->opts.list_tools = 1;
	region.tool = "echo_region";
	region.arguments = args;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &region), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 2);
	assert_string_equal(seen_rpc(&f->srv, 0)->rpc, "tools/list");
	assert_string_equal(hdr(seen_rpc(&f->srv, 0), "Mcp-Method"), "tools/list");
	e = seen_rpc(&f->srv, 1);
	/* trailing space: sentinel-encoded; the server validated it */
	assert_non_null(hdr(e, "Mcp-Param-Region"));
	assert_non_null(strstr(hdr(e, "Mcp-Param-Region"), "=?base64?"));
	/* listed once, not per call */
	assert_int_equal(call(f, &region), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 3);
	json_decref(args);
}

/* Without tools/list the agent cannot know a tool's x-mcp-header
 * parameters; the HeaderMismatch it then gets makes it fetch the schemas
 * before its next call, as the spec advises. */
static void test_modern_header_mismatch_fetches_schemas(void **state)
{
	struct fx *f = *state;
	struct mgw_load_call_spec region = f->echo;
	json_t *args = json_pack("{s:s, s:s}", "region", "eu", "text", "x");

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	region.tool = "echo_region";
	region.arguments = args;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &region), MGW_LOAD_HTTP_4XX);
	assert_int_equal(f->res.status, 400);
	assert_non_null(strstr(f->res.detail, "Mcp-Param-Region"));
	assert_int_equal(call(f, &region), MGW_LOAD_OK);
	assert_string_equal(seen_rpc(&f->srv, 1)->rpc, "tools/list");
	assert_string_equal(hdr(seen_rpc(&f->srv, 2), "Mcp-Param-Region"), "eu");
	/* once */
	assert_int_equal(call(f, &region), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 4);
	json_decref(args);
}

static void test_modern_errors(void **state)
{
	struct fx *f = *state;
	struct mgw_load_call_spec bad = f->echo;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	fx_agent(f, f->srv.url, NULL);
	bad.tool = "fail";
	assert_int_equal(call(f, &bad), MGW_LOAD_TOOL_ERROR);
	assert_string_equal(f->res.detail, "it failed");
	f->srv.fail_status = 400;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_HTTP_4XX);
	f->srv.fail_status = 503;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_HTTP_5XX);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
}

/* A plain call's answer is read by the skim when it is a plain success
 * (transport_http.c quick_success) and classified in full otherwise:
 * either way each answer gets the verdict the full reading gives. */
static void test_plain_answers_either_reading(void **state)
{
	static const struct {
		const char *body;
		enum mgw_load_outcome want;
	} cases[] = {
		/* plain successes: the skim's */
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"content\":[]}}",
		 MGW_LOAD_OK},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"isError\":false,"
		 "\"resultType\":\"complete\"}}", MGW_LOAD_OK},
		{" {\"result\":{},\"id\":%lld,\"jsonrpc\":\"2.0\"} ", MGW_LOAD_OK},
		/* what the skim leaves to the full reading, same verdicts */
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"isError\":true,"
		 "\"content\":[{\"type\":\"text\",\"text\":\"no\"}]}}",
		 MGW_LOAD_TOOL_ERROR},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"is\\u0045rror\":true}}",
		 MGW_LOAD_TOOL_ERROR},
		{"{\"jsonrpc\":\"\\u0032.0\",\"id\":%lld,\"result\":{}}", MGW_LOAD_OK},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{},\"x\":1}", MGW_LOAD_OK},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":5}", MGW_LOAD_RPC_ERROR},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"isError\":1}}", MGW_LOAD_OK},
		/* not our answer: no response for the call */
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld0,\"result\":{}}", MGW_LOAD_CONNECT_ERROR},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld.0,\"result\":{}}", MGW_LOAD_CONNECT_ERROR},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}", MGW_LOAD_CONNECT_ERROR},
		{"{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"isError\":false,"
		 "\"isError\":true}}", MGW_LOAD_CONNECT_ERROR},
		{"{\"jsonrpc\":\"1.0\",\"id\":%lld,\"result\":{}}", MGW_LOAD_CONNECT_ERROR},
	};
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	fx_agent(f, f->srv.url, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f->srv.raw_call = cases[i].body;
		if (call(f, &f->echo) != cases[i].want)
			fail_msg("case %zu (%s): outcome %d, want %d", i, cases[i].body,
			         (int)f->res.outcome, (int)cases[i].want);
	}
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
}

static void test_sse_answers(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	f->srv.sse = 1;
	fx_agent(f, f->srv.url, NULL);
	/* initialize and the call both answered as streams, with a comment
	 * and a notification before the response */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 1);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);

	/* a stream that stays open after its response: the call still ends
	 * at the response, and the next ones go on */
	f->srv.sse_linger = 1;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
}

static void test_handle_lost_and_recreated(void **state)
{
	struct fx *f = *state;
	json_t *b;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	fx_agent(f, f->srv.url, NULL);
	/* first call: create, then increment with the new handle */
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 2);
	assert_string_equal(hdr(seen_rpc(&f->srv, 0), "Mcp-Name"), "counter_create");
	assert_string_equal(hdr(seen_rpc(&f->srv, 1), "Mcp-Name"), "counter_increment");
	b = json_loads(seen_rpc(&f->srv, 1)->body, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(b, "params"), "arguments"), "handle")), "h1");
	json_decref(b);
	/* second call: no create */
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 3);
	/* the replica forgets its handles */
	f->srv.nvalid = 0;
	assert_int_equal(call(f, &f->counter), MGW_LOAD_HANDLE_LOST);
	assert_string_equal(f->res.detail, "unknown handle");
	assert_int_equal(f->srv.nseen, 4);
	/* recreated on the next call */
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 6);
	b = json_loads(seen_rpc(&f->srv, 5)->body, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(b, "params"), "arguments"), "handle")), "h2");
	json_decref(b);
}

/* MRTR: the rounds are followed with the answers and the state echoed
 * (new ids, the same arguments), counted, and the dialogue is one call. */
static void test_mrtr_dialogue(void **state)
{
	struct fx *f = *state;
	json_t *answers = json_pack("{s:{s:s}, s:{s:s, s:{s:b}}}", "q1", "action",
	                            "accept", "*", "action", "accept", "content",
	                            "ok", 1);
	struct mgw_load_call_spec ask = {
		.name = "ask", .flow = MGW_LOAD_FLOW_MRTR, .tool = "ask",
		.arguments = f->echo_args, .weight = 1, .answers = answers,
		.max_rounds = 5,
	};
	json_t *b, *p, *wait;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &ask), MGW_LOAD_OK);
	assert_int_equal(f->res.dialogue, 1);
	assert_int_equal(f->res.rounds, 2);
	assert_int_equal(f->srv.nseen, 3);
	b = json_loads(seen_rpc(&f->srv, 2)->body, 0, NULL);
	p = json_object_get(b, "params");
	assert_string_equal(json_string_value(json_object_get(p, "requestState")), "s2");
	assert_true(json_is_true(json_object_get(json_object_get(json_object_get(
	    json_object_get(p, "inputResponses"), "q2"), "content"), "ok")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    p, "arguments"), "text")), "hello");
	assert_int_equal(json_integer_value(json_object_get(b, "id")), 3);
	json_decref(b);
	b = json_loads(seen_rpc(&f->srv, 0)->body, 0, NULL);
	assert_null(json_object_get(json_object_get(b, "params"), "requestState"));
	json_decref(b);

	/* the server forgets the state: a state loss after the first round */
	f->srv.mrtr_forget = 1;
	assert_int_equal(call(f, &ask), MGW_LOAD_STATE_LOST);
	assert_int_equal(f->res.rounds, 1);
	assert_non_null(strstr(f->res.detail, "-32040"));

	/* answers with nothing for q1 (no entry of its name, no "*"): the
	 * dialogue ends as a tool error before any round */
	f->srv.mrtr_forget = 0;
	json_object_del(answers, "q1");
	json_object_del(answers, "*");
	json_object_set_new(answers, "other", json_pack("{s:s}", "action", "accept"));
	assert_int_equal(call(f, &ask), MGW_LOAD_TOOL_ERROR);
	assert_non_null(strstr(f->res.detail, "no answer for input request 'q1'"));
	assert_int_equal(f->res.rounds, 0);

	/* still input_required after max_rounds rounds: a tool error */
	json_object_set_new(answers, "*", json_pack("{s:s}", "action", "accept"));
	json_object_del(answers, "other");
	f->srv.mrtr_forget = 0;
	ask.max_rounds = 1;
	assert_int_equal(call(f, &ask), MGW_LOAD_TOOL_ERROR);
	assert_non_null(strstr(f->res.detail, "after 1 rounds"));

	/* no inputRequests: retried at once, the state echoed, no
	 * inputResponses (the scripted server checks both) */
	wait = json_pack("{s:b}", "wait", 1);
	ask.arguments = wait;
	assert_int_equal(call(f, &ask), MGW_LOAD_OK);
	assert_int_equal(f->res.rounds, 1);
	json_decref(wait);
	json_decref(answers);
}

static void test_successor_handle_replaces(void **state)
{
	struct fx *f = *state;
	json_t *b;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->srv.successor = 1;
	f->opts.dialect = MGW_LOAD_MODERN;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK); /* h1 -> h2 */
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK); /* uses h2 */
	b = json_loads(seen_rpc(&f->srv, 2)->body, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(b, "params"), "arguments"), "handle")), "h2");
	json_decref(b);
}

static void test_legacy_counter_handles_die_with_session(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK);
	f->srv.session[0] = '\0';
	assert_int_equal(call(f, &f->counter), MGW_LOAD_SESSION_LOST);
	/* new session, new handle: initialize, initialized, create, call */
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK);
	assert_string_equal(seen_rpc(&f->srv, 5)->rpc, "initialize");
	assert_string_equal(seen_rpc(&f->srv, 7)->rpc, "tools/call");
	assert_non_null(strstr(seen_rpc(&f->srv, 7)->body, "counter_create"));
}

/* ---- auto ---- */

static void test_auto_finds_modern(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_AUTO;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(mgw_load_agent_era(f->a), MGW_ERA_UNKNOWN);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(mgw_load_agent_era(f->a), MGW_ERA_IS_MODERN);
	assert_string_equal(seen_rpc(&f->srv, 0)->rpc, "server/discover");
	assert_string_equal(hdr(seen_rpc(&f->srv, 0), "Mcp-Method"), "server/discover");
	assert_string_equal(seen_rpc(&f->srv, 1)->rpc, "tools/call");
	/* probed once */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 3);
}

static void test_auto_falls_back_to_legacy(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	f->opts.dialect = MGW_LOAD_AUTO;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(mgw_load_agent_era(f->a), MGW_ERA_IS_LEGACY);
	assert_int_equal(f->res.reinitialized, 1);
	assert_string_equal(seen_rpc(&f->srv, 0)->rpc, "server/discover");
	assert_string_equal(seen_rpc(&f->srv, 1)->rpc, "initialize");
	assert_string_equal(seen_rpc(&f->srv, 2)->rpc, "notifications/initialized");
	assert_string_equal(seen_rpc(&f->srv, 3)->rpc, "tools/call");
	assert_string_equal(hdr(seen_rpc(&f->srv, 3), "MCP-Protocol-Version"),
	                    "2025-11-25");
}

static void test_auto_verdicts(void **state)
{
	struct ld_answer ans;
	json_t *r;

	(void)state;
	memset(&ans, 0, sizeof(ans));
	ans.kind = LD_ANS_FAILED;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_UNKNOWN);
	ans.kind = LD_ANS_TIMEOUT;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_UNKNOWN);
	ans.kind = LD_ANS_STATUS;
	ans.status = 404; /* no body at all */
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_LEGACY);
	/* failing, shedding or asking for credentials: no verdict yet, even
	 * with a JSON-RPC error body (a gateway's -32001 no upstream) */
	r = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	              "error", "code", -32001, "message", "no healthy upstream");
	ans.resp = r;
	for (int i = 0; i < 7; i++) {
		static const int st[] = { 500, 502, 503, 504, 401, 429, 408 };
		ans.status = st[i];
		assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_UNKNOWN);
	}
	ans.resp = NULL;
	json_decref(r);
	ans.status = 400;
	r = json_pack("{s:s, s:i, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", 1,
	              "error", "code", -32020, "message", "mismatch");
	ans.resp = r;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_MODERN);
	json_decref(r);
	r = json_pack("{s:s, s:i, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", 1,
	              "error", "code", -32021, "message", "caps");
	ans.resp = r;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_MODERN);
	json_decref(r);
	r = json_pack("{s:s, s:i, s:{s:i, s:s, s:{s:[s], s:s}}}", "jsonrpc", "2.0",
	              "id", 1, "error", "code", -32022, "message", "unsupported",
	              "data", "supported", "2026-07-28", "requested", "x");
	ans.resp = r;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_MODERN);
	json_decref(r);
	/* a -32022 that lists legacy versions only asks for initialize */
	r = json_pack("{s:s, s:i, s:{s:i, s:s, s:{s:[s, s]}}}", "jsonrpc", "2.0",
	              "id", 1, "error", "code", -32022, "message", "unsupported",
	              "data", "supported", "2025-11-25", "2025-06-18");
	ans.resp = r;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_LEGACY);
	json_decref(r);
	/* method not found (a legacy server that has no server/discover) */
	r = json_pack("{s:s, s:i, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", 1,
	              "error", "code", -32601, "message", "Method not found");
	ans.resp = r;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_LEGACY);
	ans.kind = LD_ANS_RESPONSE; /* the same inside a 200 */
	ans.status = 200;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_LEGACY);
	json_decref(r);
	r = json_pack("{s:s, s:i, s:{s:[s]}}", "jsonrpc", "2.0", "id", 1, "result",
	              "supportedVersions", "2026-07-28");
	ans.resp = r;
	assert_int_equal(ld_auto_verdict(&ans), MGW_ERA_IS_MODERN);
	json_decref(r);
}

/* ---- transport behaviour ---- */

static void test_timeout(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	f->opts.timeout = 0.2;
	fx_agent(f, f->srv.url, NULL);
	f->srv.hold = 1;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_TIMEOUT);
	assert_true(f->res.sent_ns > 0);
	assert_non_null(strstr(f->res.detail, "no answer within"));
	/* the request was cancelled: the server sees the client go */
	for (int i = 0; i < 200 && !f->srv.aborted; i++)
		pump_ms(f->base, 5);
	assert_int_equal(f->srv.aborted, 1);
	/* and the agent works on */
	f->srv.hold = 0;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
}

/* A legacy call whose handshake was answered 200 and whose tools/call
 * then timed out reports no status (not the handshake's 200). */
static void test_failed_call_reports_its_own_status(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_LEGACY);
	f->opts.dialect = MGW_LOAD_LEGACY;
	f->opts.timeout = 0.2;
	fx_agent(f, f->srv.url, NULL);
	f->srv.hold_calls = 1;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_TIMEOUT);
	assert_int_equal(f->srv.sessions, 1); /* the handshake went through */
	assert_int_equal(f->res.status, 0);
}

static uint16_t free_port(void)
{
	struct mgw_http_server *s;
	struct mgw_http_limits lim;
	struct event_base *b = event_base_new();
	char addr[64];
	const char *colon;
	uint16_t port;

	mgw_http_limits_default(&lim);
	s = mgw_http_server_new(b, &lim, srv_handler, NULL);
	assert_int_equal(mgw_http_server_listen(s, "127.0.0.1:0", NULL, addr,
	                                        sizeof(addr)), 0);
	mgw_http_server_free(s);
	event_base_free(b);
	colon = strrchr(addr, ':');
	port = (uint16_t)atoi(colon + 1);
	return port;
}

static void test_connect_error_then_reconnect(void **state)
{
	struct fx *f = *state;
	uint16_t port = free_port();
	char url[64], at[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/mcp", port);
	snprintf(at, sizeof(at), "127.0.0.1:%u", port);
	f->opts.dialect = MGW_LOAD_LEGACY;
	fx_agent(f, url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_CONNECT_ERROR);
	assert_int_equal(f->res.sent_ns, 0);
	assert_non_null(strstr(f->res.detail, "connect"));
	assert_int_equal(call(f, &f->echo), MGW_LOAD_CONNECT_ERROR);
	/* the server comes up */
	srv_start_at(&f->srv, f->base, SRV_LEGACY, at);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reconnected, 1);
	assert_int_equal(f->res.reinitialized, 1);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reconnected, 0);
}

static void test_connection_new_vs_reuse(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	f->target.conn = MGW_LOAD_CONN_NEW;
	fx_agent(f, f->srv.url, NULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	for (int i = 1; i < 4; i++)
		for (int k = 0; k < i; k++)
			assert_true(f->srv.seen[i].conn != f->srv.seen[k].conn);

	mgw_load_agent_free(f->a);
	f->target.conn = MGW_LOAD_CONN_REUSE;
	f->a = mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts);
	for (int i = 0; i < 4; i++)
		assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	for (int i = 5; i < 8; i++)
		assert_int_equal(f->srv.seen[i].conn, f->srv.seen[4].conn);
}

static void test_several_targets(void **state)
{
	struct fx *f = *state;
	struct srv *two = calloc(1, sizeof(*two));

	srv_start(&f->srv, f->base, SRV_MODERN);
	srv_start(two, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	f->target.conn = MGW_LOAD_CONN_NEW;
	fx_agent(f, f->srv.url, two->url, NULL);
	for (int i = 0; i < 40; i++)
		assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	/* per-connection random choice: both get some (all 40 on one has
	 * probability 2^-39) */
	assert_int_equal(f->srv.nseen + two->nseen, 40);
	assert_true(f->srv.nseen > 0);
	assert_true(two->nseen > 0);
	mgw_load_agent_free(f->a);
	f->a = NULL;
	mgw_client_free(f->cl);
	f->cl = NULL;
	srv_stop(two);
	free(two);
}

static void test_legacy_sessions_lost_across_targets(void **state)
{
	struct fx *f = *state;
	struct srv *two = calloc(1, sizeof(*two));
	int lost = 0, ok = 0;

	/* two replicas, a new connection per request: what the bench's
	 * session-loss scenario does */
	srv_start(&f->srv, f->base, SRV_LEGACY);
	srv_start(two, f->base, SRV_LEGACY);
	two->tag = "b";
	f->target.conn = MGW_LOAD_CONN_NEW;
	fx_agent(f, f->srv.url, two->url, NULL);
	for (int i = 0; i < 40; i++) {
		enum mgw_load_outcome o = call(f, &f->echo);
		lost += o == MGW_LOAD_SESSION_LOST;
		ok += o == MGW_LOAD_OK;
		/* the handshake itself may lose its session too */
		assert_true(o == MGW_LOAD_OK || o == MGW_LOAD_SESSION_LOST);
	}
	assert_true(lost > 0);
	assert_true(ok > 0);
	mgw_load_agent_free(f->a);
	f->a = NULL;
	mgw_client_free(f->cl);
	f->cl = NULL;
	srv_stop(two);
	free(two);
}

static void test_http2(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	f->target.http2 = 1;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	f->srv.sse = 1;
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->srv.seen[0].version, 20);
	assert_int_equal(f->srv.seen[1].conn, f->srv.seen[0].conn);
	assert_string_equal(hdr(seen_rpc(&f->srv, 1), "mcp-method"), "tools/call");

	/* a new connection per request works on HTTP/2 too */
	mgw_load_agent_free(f->a);
	f->target.conn = MGW_LOAD_CONN_NEW;
	f->a = mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_true(f->srv.seen[3].conn != f->srv.seen[2].conn);
	assert_int_equal(f->srv.seen[3].version, 20);
}

static void test_static_auth_and_401_command(void **state)
{
	struct fx *f = *state;
	struct mgw_headers st;
	char dir[] = "/tmp/ld-auth-XXXXXX";
	char cmd[512];

	assert_non_null(mkdtemp(dir));
	/* static fields go on every request */
	mgw_headers_init(&st);
	mgw_headers_adds(&st, "Authorization", "Bearer static");
	srv_start(&f->srv, f->base, SRV_MODERN);
	f->srv.token = "Bearer static";
	f->opts.dialect = MGW_LOAD_MODERN;
	f->opts.auth_headers = &st;
	fx_agent(f, f->srv.url, NULL);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_string_equal(hdr(seen_rpc(&f->srv, 0), "Authorization"), "Bearer static");
	/* a 401 with no command to renew is just a 4xx */
	f->srv.token = "Bearer other";
	assert_int_equal(call(f, &f->echo), MGW_LOAD_HTTP_4XX);
	assert_int_equal(f->res.status, 401);
	mgw_load_agent_free(f->a);

	/* the command prints tok1, then tok2 on its next run; the server
	 * wants tok2: the first request is refused, the command runs again
	 * and the same message is sent once more */
	snprintf(cmd, sizeof(cmd),
	         "n=$(cat %s/n 2>/dev/null || echo 0); n=$((n+1)); "
	         "echo $n > %s/n; printf 'X-Run: %%s\\nAuthorization: Bearer tok%%s\\n' $n $n",
	         dir, dir);
	f->opts.auth_command = cmd;
	f->srv.token = "Bearer tok2";
	f->a = mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts);
	assert_non_null(f->a);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->srv.nseen, 4);
	assert_string_equal(hdr(seen_rpc(&f->srv, 2), "Authorization"), "Bearer tok1");
	assert_string_equal(hdr(seen_rpc(&f->srv, 3), "Authorization"), "Bearer tok2");
	assert_string_equal(hdr(seen_rpc(&f->srv, 3), "X-Run"), "2");
	/* the command output replaced the static field */
	assert_int_equal(mgw_headers_count(&seen_rpc(&f->srv, 3)->h, "Authorization"), 1);
	/* no new run while the fields work */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_string_equal(hdr(seen_rpc(&f->srv, 4), "X-Run"), "2");
	mgw_headers_deinit(&st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_auth_parse(void **state)
{
	struct mgw_headers h;
	static const char two[] = "Authorization: Bearer a\r\n\nX-Tenant:  t1 \n";

	(void)state;
	mgw_headers_init(&h);
	assert_int_equal(ld_auth_parse(two, sizeof(two) - 1, &h), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(mgw_headers_get(&h, "authorization"), "Bearer a");
	assert_string_equal(mgw_headers_get(&h, "x-tenant"), "t1");
	mgw_headers_deinit(&h);
	mgw_headers_init(&h);
	assert_int_equal(ld_auth_parse("Bearer xyz\n", 11, &h), 0);
	assert_string_equal(mgw_headers_get(&h, "Authorization"), "Bearer xyz");
	mgw_headers_deinit(&h);
	mgw_headers_init(&h);
	assert_int_equal(ld_auth_parse("", 0, &h), MGW_EINVAL);
	assert_int_equal(ld_auth_parse("\n\n", 2, &h), MGW_EINVAL);
	assert_int_equal(ld_auth_parse("a b\nc d\n", 8, &h), MGW_EINVAL);
	assert_int_equal(ld_auth_parse("X: a\x01" "b\n", 7, &h), MGW_EINVAL);
	mgw_headers_deinit(&h);
}

static void test_bad_targets(void **state)
{
	struct fx *f = *state;
	char *bad[] = {"ftp://x/mcp"};
	char *tls[] = {"https://127.0.0.1:1/mcp"};

	f->target.urls = bad;
	f->target.n_urls = 1;
	assert_null(mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts));
	f->target.urls = tls; /* https without a TLS context */
	assert_null(mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts));
	f->target.urls = NULL;
	f->target.n_urls = 0;
	assert_null(mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts));
	f->target.urls = bad;
	f->target.n_urls = 1;
	f->target.stdio_cmd = "cat"; /* both */
	assert_null(mgw_load_agent_new(f->base, f->cl, &f->target, &f->opts));
	f->target.stdio_cmd = NULL;
}

static void test_one_call_at_a_time(void **state)
{
	struct fx *f = *state;

	srv_start(&f->srv, f->base, SRV_MODERN);
	f->opts.dialect = MGW_LOAD_MODERN;
	fx_agent(f, f->srv.url, NULL);
	f->done = 0;
	assert_int_equal(mgw_load_agent_call(f->a, &f->echo, on_done, f), 0);
	assert_int_equal(mgw_load_agent_call(f->a, &f->echo, on_done, f),
	                 MGW_ELIMIT);
	assert_true(pump_until(f->base, &f->done));
	assert_int_equal(f->ncalls, 1);
	/* closing with a call in flight cancels it without its on_done */
	f->done = 0;
	f->srv.hold = 1;
	assert_int_equal(mgw_load_agent_call(f->a, &f->echo, on_done, f), 0);
	pump_ms(f->base, 20);
	assert_int_equal(mgw_load_agent_close(f->a, on_closed, f), 0);
	assert_true(pump_until(f->base, &f->closed));
	pump_ms(f->base, 20);
	assert_int_equal(f->ncalls, 1);
}

/* ---- stdio ---- */

static char self_exe[1024];

static void stdio_target(struct fx *f, const char *args)
{
	static char cmd[1200];

	snprintf(cmd, sizeof(cmd), "exec '%s' --stdio-server %s", self_exe, args);
	f->target.stdio_cmd = cmd;
	f->a = mgw_load_agent_new(f->base, NULL, &f->target, &f->opts);
	assert_non_null(f->a);
}

static void test_stdio_legacy(void **state)
{
	struct fx *f = *state;

	f->opts.dialect = MGW_LOAD_LEGACY;
	stdio_target(f, "legacy 0");
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 1);
	assert_int_equal(f->res.status, 0);
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 0);
	assert_int_equal(call(f, &f->counter), MGW_LOAD_OK);
}

static void test_stdio_modern_and_auto(void **state)
{
	struct fx *f = *state;

	f->opts.dialect = MGW_LOAD_MODERN;
	stdio_target(f, "modern 0");
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 0);
	mgw_load_agent_free(f->a);
	/* auto against a legacy stdio server falls back */
	f->opts.dialect = MGW_LOAD_AUTO;
	stdio_target(f, "legacy 0");
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(mgw_load_agent_era(f->a), MGW_ERA_IS_LEGACY);
	assert_int_equal(f->res.reinitialized, 1);
	mgw_load_agent_free(f->a);
	f->opts.dialect = MGW_LOAD_AUTO;
	stdio_target(f, "modern 0");
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(mgw_load_agent_era(f->a), MGW_ERA_IS_MODERN);
}

static void test_stdio_server_dies_and_is_relaunched(void **state)
{
	struct fx *f = *state;

	/* the server exits after reading its 4th request line */
	f->opts.dialect = MGW_LOAD_LEGACY;
	stdio_target(f, "legacy 4");
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK); /* 3 lines */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_CONNECT_ERROR);
	assert_non_null(strstr(f->res.detail, "stdio server"));
	/* relaunched (after the backoff), re-initialized, counted */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
	assert_int_equal(f->res.reinitialized, 1);
	assert_int_equal(f->res.reconnected, 1);
}

static void test_stdio_timeout(void **state)
{
	struct fx *f = *state;

	f->opts.dialect = MGW_LOAD_MODERN;
	f->opts.timeout = 0.2;
	stdio_target(f, "modern 0");
	{
		struct mgw_load_call_spec slow = f->echo;
		slow.tool = "silent";
		assert_int_equal(call(f, &slow), MGW_LOAD_TIMEOUT);
	}
	/* a late answer to the old id does not confuse the next call */
	assert_int_equal(call(f, &f->echo), MGW_LOAD_OK);
}

/* The test binary as a stdio MCP server: legacy|modern, and after how
 * many request lines to exit (0: never).  Tool "silent" is never
 * answered; every line is checked to be one JSON-RPC message. */
static int stdio_server(const char *mode, int exit_after)
{
	char line[65536];
	int n = 0, legacy = strcmp(mode, "legacy") == 0, inited = 0;

	while (fgets(line, sizeof(line), stdin)) {
		struct mgw_jrpc_msg m;
		size_t len;
		char *out = NULL;

		if (mgw_jrpc_classify(line, strlen(line), 0, &m) != 0)
			return 2;
		if (m.kind == MGW_JRPC_INVALID)
			return 3;
		/* our answers to its pings do not count */
		if (exit_after && m.kind != MGW_JRPC_RESPONSE && ++n >= exit_after)
			return 0;
		if (m.kind == MGW_JRPC_REQUEST) {
			if (legacy && strcmp(m.method, "initialize") == 0) {
				out = mgw_jrpc_result_body(mgw_jrpc_id(&m), json_pack(
				    "{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
				    "2025-11-25", "capabilities", "serverInfo", "name",
				    "stdio", "version", "1"), &len);
			} else if (legacy && !inited) {
				out = mgw_jrpc_error_body(mgw_jrpc_id(&m), MGW_JRPC_INVALID_REQUEST,
				                          "not initialized", NULL, &len);
			} else if (!legacy && !m.meta_protocol_version) {
				out = mgw_jrpc_error_body(mgw_jrpc_id(&m), MGW_JRPC_INVALID_PARAMS,
				                          "no _meta", NULL, &len);
			} else if (strcmp(m.method, "server/discover") == 0) {
				out = mgw_jrpc_result_body(mgw_jrpc_id(&m), json_pack("{s:[s]}",
				    "supportedVersions", "2026-07-28"), &len);
			} else if (m.name && strcmp(m.name, "silent") == 0) {
				out = NULL;
			} else if (m.name && strcmp(m.name, "counter_create") == 0) {
				out = mgw_jrpc_result_body(mgw_jrpc_id(&m), json_pack(
				    "{s:[{s:s, s:s}], s:{s:s}}", "content", "type", "text",
				    "text", "c1", "structuredContent", "handle", "c1"), &len);
			} else {
				/* a notification and a server ping first: the
				 * client must skip one and answer the other */
				printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
				       "\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n");
				printf("{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n");
				out = mgw_jrpc_result_body(mgw_jrpc_id(&m), json_pack(
				    "{s:[{s:s, s:s}]}", "content", "type", "text", "text",
				    "ok"), &len);
			}
		} else if (m.kind == MGW_JRPC_NOTIFICATION &&
		           strcmp(m.method, "notifications/initialized") == 0) {
			inited = 1;
		}
		if (out) {
			fputs(out, stdout);
			fputc('\n', stdout);
			free(out);
		}
		fflush(stdout);
		mgw_jrpc_msg_deinit(&m);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_legacy_handshake_and_call, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_session_lost_404, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_session_lost_400_by_message, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_other_400_is_not_a_loss, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_matcher_is_configurable, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_5xx_reinitializes, fx_setup, fx_teardown),
	    cmocka_unit_test(test_session_lost_rule),
	    cmocka_unit_test_setup_teardown(test_legacy_delete_at_close, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_close_bounded_by_timeout, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_modern_headers_and_meta, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_modern_param_headers_after_list, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_modern_header_mismatch_fetches_schemas, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_modern_errors, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_plain_answers_either_reading, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sse_answers, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_handle_lost_and_recreated, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_mrtr_dialogue, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_successor_handle_replaces, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_counter_handles_die_with_session, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_auto_finds_modern, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_auto_falls_back_to_legacy, fx_setup, fx_teardown),
	    cmocka_unit_test(test_auto_verdicts),
	    cmocka_unit_test_setup_teardown(test_timeout, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_failed_call_reports_its_own_status, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_connect_error_then_reconnect, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_connection_new_vs_reuse, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_several_targets, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_sessions_lost_across_targets, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_http2, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_static_auth_and_401_command, fx_setup, fx_teardown),
	    cmocka_unit_test(test_auth_parse),
	    cmocka_unit_test_setup_teardown(test_bad_targets, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_one_call_at_a_time, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_stdio_legacy, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_stdio_modern_and_auto, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_stdio_server_dies_and_is_relaunched, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_stdio_timeout, fx_setup, fx_teardown),
	};
	ssize_t n;

	if (argc >= 4 && strcmp(argv[1], "--stdio-server") == 0)
		return stdio_server(argv[2], atoi(argv[3]));
	signal(SIGPIPE, SIG_IGN);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	assert_true(n > 0);
	self_exe[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
