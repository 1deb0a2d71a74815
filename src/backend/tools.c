/* tools.c - the reference server's tools.  Small on purpose: each exists
 * to make one behaviour observable through a gateway (who served: whoami;
 * latency and cancellation: sleep; state across calls: counter_*; pushed
 * messages: notify, list_changed; Mcp-Param-* mirroring: echo_region;
 * streaming through a proxy: ticks; tasks: slow_job).
 * Bad arguments are tool errors (isError: true), not protocol errors
 * (tools spec, error handling). */
#include "autoconf.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/mrtr.h"
#include "backend/state.h"
#include "backend/tasks.h"
#include "core/errors.h"
#include "http/server.h"
#include "mcp/json.h"

struct tool {
	const char *name;
	const char *title;
	const char *description;
	const char *schema;  /* inputSchema, JSON text */
	int read_only;
	int idempotent;
	void (*run)(struct mgw_be_call *c, struct mgw_be_session *sess,
	            json_t *args);
};

/* ---- results ---------------------------------------------------------- */

static json_t *text_item(const char *text)
{
	return json_pack("{ssss}", "type", "text", "text", text);
}

/* Finishes c with a CallToolResult; structured is stolen (may be NULL). */
static void tool_result(struct mgw_be_call *c, int is_error, const char *text,
                        json_t *structured)
{
	json_t *r = json_pack("{s[o]sb}", "content", text_item(text), "isError",
	                      is_error);

	if (structured)
		json_object_set_new(r, "structuredContent", structured);
	if (is_error)
		c->be->stats.tool_errors++;
	mgw_be_call_result(c, r);
}

static void bad_args(struct mgw_be_call *c, const char *why)
{
	char text[200];
	struct mgw_log_ctx ctx = mgw_be_ctx(c->x, c->session_id[0] ? c->session_id : NULL);

	snprintf(text, sizeof(text), "invalid arguments: %s", why);
	mgw_info(&ctx, "tools/call %s: %s", c->msg.name, text);
	tool_result(c, 1, text, NULL);
}

/* ---- echo, echo_region, add, whoami ------------------------------------ */

static void run_echo(struct mgw_be_call *c, struct mgw_be_session *sess,
                     json_t *args)
{
	json_t *t = json_object_get(args, "text");

	(void)sess;
	if (!json_is_string(t)) {
		bad_args(c, "text must be a string");
		return;
	}
	tool_result(c, 0, json_string_value(t), NULL);
}

static void run_echo_region(struct mgw_be_call *c, struct mgw_be_session *sess,
                            json_t *args)
{
	json_t *r = json_object_get(args, "region");
	json_t *t = json_object_get(args, "text");
	char *text;
	size_t n;

	(void)sess;
	if (!json_is_string(r) || !json_is_string(t)) {
		bad_args(c, "region and text must be strings");
		return;
	}
	n = json_string_length(r) + json_string_length(t) + 4;
	text = malloc(n);
	if (!text) {
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
		return;
	}
	snprintf(text, n, "[%s] %s", json_string_value(r), json_string_value(t));
	tool_result(c, 0, text, json_pack("{sOsO}", "region", r, "text", t));
	free(text);
}

static void run_add(struct mgw_be_call *c, struct mgw_be_session *sess,
                    json_t *args)
{
	json_t *a = json_object_get(args, "a"), *b = json_object_get(args, "b");
	char text[64];

	(void)sess;
	if (!json_is_number(a) || !json_is_number(b)) {
		bad_args(c, "a and b must be numbers");
		return;
	}
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b), s;
		if (!__builtin_add_overflow(x, y, &s)) {
			snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, s);
			tool_result(c, 0, text, json_pack("{sI}", "sum", s));
			return;
		}
	}
	{
		double s = json_number_value(a) + json_number_value(b);
		if (!isfinite(s)) {
			bad_args(c, "the sum is not a finite number");
			return;
		}
		snprintf(text, sizeof(text), "%.17g", s);
		tool_result(c, 0, text, json_pack("{sf}", "sum", s));
	}
}

static void run_whoami(struct mgw_be_call *c, struct mgw_be_session *sess,
                       json_t *args)
{
	const struct mgw_backend *be = c->be;
	const char *id = be->conf.id ? be->conf.id : "";

	(void)args;
	tool_result(c, 0, id,
	            json_pack("{sssssssb}", "id", id, "era",
	                      c->era == MGW_BE_LEGACY ? "legacy" : "modern", "state",
	                      c->era == MGW_BE_LEGACY ? "session"
	                                              : mgw_be_state_name(be->conf.state),
	                      "session", sess != NULL));
}

/* ---- sleep ------------------------------------------------------------- */

static void on_slept(struct mgw_be_call *c)
{
	char text[64];
	json_t *ms = json_object_get(json_object_get(mgw_jrpc_params(&c->msg), "arguments"), "ms");

	snprintf(text, sizeof(text), "slept %" JSON_INTEGER_FORMAT " ms",
	         json_integer_value(ms));
	tool_result(c, 0, text, json_pack("{sO}", "ms", ms));
}

/* A timer, never a blocking wait; the client leaving cancels the timer
 * (call.c on_call_abort), which is how cancellation is honoured. */
static void run_sleep(struct mgw_be_call *c, struct mgw_be_session *sess,
                      json_t *args)
{
	json_t *ms = json_object_get(args, "ms");
	json_int_t v;

	(void)sess;
	if (!json_is_integer(ms) || (v = json_integer_value(ms)) < 0 ||
	    v > MGW_BE_MAX_SLEEP_MS) {
		bad_args(c, "ms must be an integer from 0 to 60000");
		return;
	}
	if (mgw_be_call_after(c, (uint32_t)v, on_slept) != 0)
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR,
		                  "Cannot arm a timer", NULL);
}

/* ---- slow_job (tasks, tasks.c) ------------------------------------------ */

#define SLOW_JOB_DEFAULT_MS 300

static uint32_t slow_job_ms(const struct mgw_be_call *c)
{
	json_t *ms = json_object_get(json_object_get(mgw_jrpc_params(&c->msg), "arguments"), "ms");

	return ms ? (uint32_t)json_integer_value(ms) : SLOW_JOB_DEFAULT_MS;
}

static void on_slow_job_done(struct mgw_be_call *c)
{
	mgw_be_call_result(c, mgw_be_slow_job_result(slow_job_ms(c)));
}

/* A job of ms milliseconds: a task when the request allows one (the
 * answer comes at once, the work ends on a timer of this replica), else
 * an ordinary call that answers when the work is done, like sleep. */
static void run_slow_job(struct mgw_be_call *c, struct mgw_be_session *sess,
                         json_t *args)
{
	json_t *ms = json_object_get(args, "ms");
	int want;

	if (ms && (!json_is_integer(ms) || json_integer_value(ms) < 0 ||
	           json_integer_value(ms) > MGW_BE_MAX_SLEEP_MS)) {
		bad_args(c, "ms must be an integer from 0 to 60000");
		return;
	}
	want = mgw_be_task_requested(c, sess);
	if (want < 0)
		return;
	if (want) {
		mgw_be_task_create(c, slow_job_ms(c));
		return;
	}
	if (mgw_be_call_after(c, slow_job_ms(c), on_slow_job_done) != 0)
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR,
		                  "Cannot arm a timer", NULL);
}

/* ---- ticks ---------------------------------------------------------------- */

/* Bounds that keep one call finite: the whole stream lasts at most as
 * long as the longest sleep. */
#define MAX_TICKS 1000
#define MAX_TICK_INTERVAL_MS 10000

static void ticks_args(const struct mgw_be_call *c, uint32_t *count,
                       uint32_t *interval)
{
	json_t *args = json_object_get(mgw_jrpc_params(&c->msg), "arguments");

	*count = (uint32_t)json_integer_value(json_object_get(args, "count"));
	*interval = (uint32_t)json_integer_value(json_object_get(args, "interval_ms"));
}

static void on_ticks_done(struct mgw_be_call *c)
{
	char text[64];
	uint32_t count, interval;

	ticks_args(c, &count, &interval);
	snprintf(text, sizeof(text), "ticked %u times", count);
	tool_result(c, 0, text, json_pack("{si}", "ticks", (int)count));
}

/* One tick: a notification the request asked for (progress when it
 * carries a progressToken; a log message where the era allows one), then
 * an SSE comment.  Both carry the wall-clock time at which the server
 * wrote them, so a test can compare it with when its client saw them. */
static void on_tick(struct mgw_be_call *c)
{
	json_t *meta = mgw_jrpc_meta(&c->msg), *token = NULL, *level = NULL;
	uint32_t count, interval, k = ++c->ticks_sent;
	unsigned long long now = (unsigned long long)mgw_be_wall_ms();
	char msg[96], comment[96];
	int n;

	ticks_args(c, &count, &interval);
	if (meta) {
		token = json_object_get(meta, "progressToken");
		level = json_object_get(meta, "io.modelcontextprotocol/logLevel");
	}
	snprintf(msg, sizeof(msg), "tick %u/%u sent_ms=%llu", k, count, now);
	if (token && !mgw_json_wide_number(token, NULL, NULL) &&
	    (json_is_string(token) || json_is_integer(token)))
		mgw_be_call_notify(c, "notifications/progress",
		                   json_pack("{sOsisiss}", "progressToken", token,
		                             "progress", (int)k, "total", (int)count,
		                             "message", msg));
	else if (c->era == MGW_BE_LEGACY || json_is_string(level))
		mgw_be_call_notify(c, "notifications/message",
		                   json_pack("{sssss{sisisI}}", "level",
		                             json_is_string(level) ? json_string_value(level)
		                                                   : "info",
		                             "logger", MGW_BE_SERVER_NAME, "data",
		                             "tick", (int)k, "of", (int)count,
		                             "sent_ms", (json_int_t)now));
	else
		mgw_be_call_start(c, 1); /* starts the stream with a comment */
	if (!c->x)
		return;
	n = snprintf(comment, sizeof(comment), ": tick %u/%u sent_ms=%llu\n\n", k,
	             count, now);
	/* A client too slow to take a comment loses it (like any
	 * notification); the final answer is never dropped (call.c). */
	mgw_http_stream_write(c->x, comment, (size_t)n);
	if (mgw_be_call_after(c, interval, k < count ? on_tick : on_ticks_done) != 0)
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR,
		                  "Cannot arm a timer", NULL);
}

/* Answers as an SSE stream of count ticks interval_ms apart, then the
 * result one interval after the last tick.  It exists to show whether a
 * proxy passes events as they are written or holds them back, and to be
 * cancelled mid-stream (closing the request drops the timer, call.c). */
static void run_ticks(struct mgw_be_call *c, struct mgw_be_session *sess,
                      json_t *args)
{
	json_t *n = json_object_get(args, "count");
	json_t *iv = json_object_get(args, "interval_ms");
	json_int_t count, interval;

	(void)sess;
	if (!json_is_integer(n) || (count = json_integer_value(n)) < 1 ||
	    count > MAX_TICKS || !json_is_integer(iv) ||
	    (interval = json_integer_value(iv)) < 0 ||
	    interval > MAX_TICK_INTERVAL_MS || count * interval > MGW_BE_MAX_SLEEP_MS) {
		bad_args(c, "count must be an integer from 1 to 1000 and interval_ms "
		            "from 0 to 10000, lasting at most 60000 ms in all");
		return;
	}
	c->sse = 1;
	on_tick(c);
}

/* ---- counters ------------------------------------------------------------ */

/* The one message every design uses for a handle this replica cannot
 * continue: tests and the bench count it as a handle loss. */
static void handle_lost(struct mgw_be_call *c, int err)
{
	struct mgw_log_ctx ctx = mgw_be_ctx(c->x, c->session_id[0] ? c->session_id : NULL);

	c->be->stats.handle_losses++;
	mgw_info(&ctx, "counter_increment: unknown handle (%s)", mgw_strerror(err));
	tool_result(c, 1, err == MGW_EEXPIRED ? "unknown handle (expired)"
	                                      : "unknown handle", NULL);
}

static void store_failed(struct mgw_be_call *c, int err)
{
	switch (err) {
	case MGW_ENOTFOUND:
	case MGW_EAUTH:
	case MGW_EEXPIRED:
		handle_lost(c, err);
		break;
	case MGW_ELIMIT:
		tool_result(c, 1, "state store full", NULL);
		break;
	case MGW_EIO:
		tool_result(c, 1, "state store unavailable", NULL);
		break;
	default:
		tool_result(c, 1, "internal error", NULL);
		break;
	}
}

static void on_created(int err, int64_t value, const char *handle, void *arg)
{
	struct mgw_be_call *c = arg;

	(void)value;
	if (mgw_be_call_alive(c)) {
		if (err)
			store_failed(c, err);
		else
			tool_result(c, 0, handle, json_pack("{ss}", "handle", handle));
	}
	mgw_be_call_unref(c); /* the store operation's reference */
}

static void on_incremented(int err, int64_t value, const char *handle,
                           void *arg)
{
	struct mgw_be_call *c = arg;
	char text[32];
	json_t *sc;

	if (mgw_be_call_alive(c)) {
		if (err) {
			store_failed(c, err);
		} else {
			snprintf(text, sizeof(text), "%" PRId64, value);
			sc = json_pack("{sI}", "value", (json_int_t)value);
			if (handle)
				json_object_set_new(sc, "handle", json_string(handle));
			tool_result(c, 0, text, sc);
		}
	}
	mgw_be_call_unref(c);
}

static void run_counter_create(struct mgw_be_call *c, struct mgw_be_session *sess,
                               json_t *args)
{
	char handle[40];
	int rc;

	(void)args;
	if (sess) {
		rc = mgw_be_session_counter_new(c->be, sess, handle);
		if (rc == MGW_ELIMIT)
			tool_result(c, 1, "too many counters (1024 per session, "
			            "max_sessions in all)", NULL);
		else if (rc != 0)
			tool_result(c, 1, "internal error", NULL);
		else
			tool_result(c, 0, handle, json_pack("{ss}", "handle", handle));
		return;
	}
	mgw_be_call_ref(c);
	c->be->store->ops->create(c->be->store, on_created, c);
}

static void run_counter_increment(struct mgw_be_call *c,
                                  struct mgw_be_session *sess, json_t *args)
{
	json_t *h = json_object_get(args, "handle");
	int64_t value = 0;
	int rc;

	if (!json_is_string(h)) {
		bad_args(c, "handle must be a string");
		return;
	}
	if (sess) {
		rc = mgw_be_session_counter_incr(sess, json_string_value(h), &value);
		mgw_be_call_ref(c); /* on_incremented drops it, as for stores */
		on_incremented(rc, value, NULL, c);
		return;
	}
	mgw_be_call_ref(c);
	c->be->store->ops->increment(c->be->store, json_string_value(h),
	                             on_incremented, c);
}

/* ---- book (MRTR, mrtr.c) ------------------------------------------------ */

static void run_book(struct mgw_be_call *c, struct mgw_be_session *sess,
                     json_t *args)
{
	if (sess || c->era != MGW_BE_MODERN || !c->be->mrtr) {
		tool_result(c, 1, "book needs the modern era (multi round-trip "
		            "requests, 2026-07-28)", NULL);
		return;
	}
	mgw_mrtr_run_book(c, args);
}

/* ---- notify, list_changed ------------------------------------------------- */

static void run_notify(struct mgw_be_call *c, struct mgw_be_session *sess,
                       json_t *args)
{
	json_t *t = json_object_get(args, "text"), *level;
	char *body;
	size_t len;
	int ok, rc;

	if (!json_is_string(t)) {
		bad_args(c, "text must be a string");
		return;
	}
	if (sess) {
		/* Legacy: a server-initiated message on the session's standalone
		 * GET stream (unrelated to this request, as that stream is for). */
		body = mgw_jrpc_notification_body(
			"notifications/message",
			json_pack("{sssssO}", "level", "info", "logger",
			          MGW_BE_SERVER_NAME, "data", t),
			&len);
		ok = body && mgw_be_session_push(c->be, sess, body, len);
		free(body);
		tool_result(c, 0, ok ? "delivered on the GET stream"
		                     : "not delivered: no GET stream open",
		            json_pack("{sb}", "delivered", ok));
		return;
	}
	/* Modern: request-scoped, and only when the request asked for log
	 * messages (logging spec: no notifications/message without logLevel). */
	level = mgw_jrpc_meta(&c->msg) ? json_object_get(mgw_jrpc_meta(&c->msg), "io.modelcontextprotocol/logLevel")
	                    : NULL;
	if (!json_is_string(level)) {
		tool_result(c, 0, "not delivered: the request has no "
		                  "io.modelcontextprotocol/logLevel",
		            json_pack("{sb}", "delivered", 0));
		return;
	}
	rc = mgw_be_call_notify(c, "notifications/message",
	                        json_pack("{sOsssO}", "level", level, "logger",
	                                  MGW_BE_SERVER_NAME, "data", t));
	ok = rc == 0;
	tool_result(c, 0, ok ? "delivered on the response stream"
	                : rc == MGW_ELIMIT ? "not delivered: the client reads too "
	                                     "slowly (dropped)"
	                                   : "not delivered: stream closed",
	            json_pack("{sb}", "delivered", ok));
}

static void run_list_changed(struct mgw_be_call *c, struct mgw_be_session *sess,
                             json_t *args)
{
	char text[80];
	int n;

	(void)args;
	if (sess) {
		char *body = mgw_jrpc_notification_body("notifications/tools/list_changed",
		                                        NULL, &(size_t){0});
		size_t len = body ? strlen(body) : 0;
		n = body ? mgw_be_session_push(c->be, sess, body, len) : 0;
		free(body);
	} else {
		n = mgw_be_listen_tools_changed(c->be);
	}
	snprintf(text, sizeof(text), "notified %d stream%s", n, n == 1 ? "" : "s");
	tool_result(c, 0, text, json_pack("{si}", "streams", n));
}

/* ---- the table ------------------------------------------------------------ */

static const struct tool tools[] = {
	{"echo", "Echo", "Returns its text argument unchanged.",
	 "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
	 "\"description\":\"Text to return\"}},\"required\":[\"text\"],"
	 "\"additionalProperties\":false}",
	 1, 1, run_echo},
	{"echo_region", "Echo with region",
	 "Returns \"[region] text\". The region parameter is mirrored into the "
	 "Mcp-Param-Region header (x-mcp-header), so gateways can route on it.",
	 "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
	 "\"description\":\"Region tag\",\"x-mcp-header\":\"Region\"},"
	 "\"text\":{\"type\":\"string\",\"description\":\"Text to return\"}},"
	 "\"required\":[\"region\",\"text\"],\"additionalProperties\":false}",
	 1, 1, run_echo_region},
	{"add", "Add", "Returns the sum a + b.",
	 "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
	 "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"],"
	 "\"additionalProperties\":false}",
	 1, 1, run_add},
	{"sleep", "Sleep",
	 "Waits ms milliseconds (0..60000) without blocking the server, then "
	 "answers. Closing the request cancels it.",
	 "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\","
	 "\"minimum\":0,\"maximum\":60000}},\"required\":[\"ms\"],"
	 "\"additionalProperties\":false}",
	 1, 1, run_sleep},
	{"whoami", "Who am I", "Returns the id of the replica that served the call.",
	 "{\"type\":\"object\",\"additionalProperties\":false}", 1, 1, run_whoami},
	{"counter_create", "Create counter",
	 "Creates a counter at 0 and returns its handle. Legacy sessions keep "
	 "counters in the session; modern handles follow the server's state "
	 "design (memory: this replica only; hmac: self-contained, signed, "
	 "expiring; redis: shared).",
	 "{\"type\":\"object\",\"additionalProperties\":false}", 0, 0,
	 run_counter_create},
	{"counter_increment", "Increment counter",
	 "Adds 1 to the counter named by handle and returns the new value. "
	 "With hmac handles the result also carries the successor handle. An "
	 "unusable handle is the tool error \"unknown handle\".",
	 "{\"type\":\"object\",\"properties\":{\"handle\":{\"type\":\"string\"}},"
	 "\"required\":[\"handle\"],\"additionalProperties\":false}",
	 0, 0, run_counter_increment},
	{"book", "Book",
	 "A multi round-trip tools/call (modern era): answers resultType "
	 "input_required with an elicitation (first a date, then a note per "
	 "middle round, last a confirmation) and a requestState, rounds times; "
	 "the retry with inputResponses and the echoed requestState after the "
	 "last round returns a booking id. requestState follows "
	 "--request-state (memory: this replica only; sealed: signed, "
	 "expiring, any replica with the key file).",
	 "{\"type\":\"object\",\"properties\":{\"rounds\":{\"type\":\"integer\","
	 "\"minimum\":2,\"maximum\":10},\"item\":{\"type\":\"string\"}},"
	 "\"required\":[\"rounds\"],\"additionalProperties\":false}",
	 0, 0, run_book},
	{"notify", "Notify",
	 "Sends text as a notifications/message: on the session's GET stream "
	 "(legacy) or on this request's response stream when the request sets "
	 "io.modelcontextprotocol/logLevel (modern).",
	 "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
	 "\"required\":[\"text\"],\"additionalProperties\":false}",
	 0, 0, run_notify},
	{"ticks", "Ticks",
	 "Answers as an SSE stream: count ticks interval_ms apart, each a "
	 "notifications/progress (when the request has a progressToken) or a "
	 "notifications/message (legacy, or modern with "
	 "io.modelcontextprotocol/logLevel) followed by an SSE comment, both "
	 "stamped with the server's wall-clock send time; then the result. "
	 "Closing the request cancels it.",
	 "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":\"integer\","
	 "\"minimum\":1,\"maximum\":1000},\"interval_ms\":{\"type\":\"integer\","
	 "\"minimum\":0,\"maximum\":10000}},\"required\":[\"count\","
	 "\"interval_ms\"],\"additionalProperties\":false}",
	 1, 1, run_ticks},
	{"slow_job", "Slow job",
	 "Works ms milliseconds (0..60000, default 300) on a timer. Run as a "
	 "task when the request allows one (2026-07-28: the client declares "
	 "the io.modelcontextprotocol/tasks extension; 2025-11-25: params.task): "
	 "the answer is the created task at once, then tasks/get (and "
	 "tasks/result, legacy) report it; tasks/cancel stops it. Otherwise it "
	 "answers when done.",
	 "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\","
	 "\"minimum\":0,\"maximum\":60000}},\"additionalProperties\":false}",
	 1, 0, run_slow_job},
	{"list_changed", "Signal tools list change",
	 "Sends notifications/tools/list_changed on the session's GET stream "
	 "(legacy) or on every subscriptions/listen stream that asked for it "
	 "(modern).",
	 "{\"type\":\"object\",\"additionalProperties\":false}", 0, 0,
	 run_list_changed},
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

static const struct mgw_sep2243_param echo_region_params[] = {
	{"Region", "region"},
};

const struct mgw_sep2243_param *mgw_be_tool_header_params(const char *tool,
                                                         size_t *n)
{
	if (tool && strcmp(tool, "echo_region") == 0) {
		*n = sizeof(echo_region_params) / sizeof(echo_region_params[0]);
		return echo_region_params;
	}
	*n = 0;
	return NULL;
}

json_t *mgw_be_tools_list(const struct mgw_backend *be, enum mgw_be_era era)
{
	json_t *a = json_array();

	(void)be;
	for (size_t i = 0; i < N_TOOLS; i++) {
		const struct tool *t = &tools[i];
		json_t *schema = json_loads(t->schema, 0, NULL);
		json_t *ann = json_pack("{sssbsbsbsb}", "title", t->title,
		                        "readOnlyHint", t->read_only,
		                        "idempotentHint", t->idempotent,
		                        "destructiveHint", 0, "openWorldHint", 0);

		json_t *o = json_pack("{sssssssoso}", "name", t->name, "title",
		                      t->title, "description", t->description,
		                      "inputSchema", schema, "annotations", ann);

		/* 2025-11-25 tool-level task negotiation; the modern era has
		 * none (SEP-2663: the server decides) */
		if (era == MGW_BE_LEGACY && t->run == run_slow_job)
			json_object_set_new(o, "execution",
			                    json_pack("{ss}", "taskSupport", "optional"));
		json_array_append_new(a, o);
	}
	return a;
}

void mgw_be_tools_call(struct mgw_be_call *c, struct mgw_be_session *sess)
{
	const char *name = c->msg.name;
	json_t *args = json_object_get(mgw_jrpc_params(&c->msg), "arguments");
	char msg[200];

	c->be->stats.tool_calls++;
	if (!name) {
		mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS,
		                  "Invalid params: name is required", NULL);
		return;
	}
	if (args && !json_is_object(args)) {
		mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS,
		                  "Invalid params: arguments must be an object", NULL);
		return;
	}
	for (size_t i = 0; i < N_TOOLS; i++) {
		if (strcmp(tools[i].name, name) != 0)
			continue;
		/* taskSupport absent means forbidden: -32601 (tasks spec) */
		if (tools[i].run != run_slow_job && c->era == MGW_BE_LEGACY &&
		    json_object_get(mgw_jrpc_params(&c->msg), "task") &&
		    mgw_be_tasks_speaks(c, sess)) {
			snprintf(msg, sizeof(msg), "Method not found: tool %.100s does "
			         "not support task-augmented execution", name);
			mgw_be_call_error(c, 200, MGW_JRPC_METHOD_NOT_FOUND, msg, NULL);
			return;
		}
		tools[i].run(c, sess, args);
		return;
	}
	snprintf(msg, sizeof(msg), "Unknown tool: %.100s", name);
	mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS, msg, NULL);
}
