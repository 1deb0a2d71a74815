/* call.c - the life of one JSON-RPC request: answer as JSON or SSE, hold
 * the answer back for --delay-ms, and survive the client leaving while a
 * timer or a Redis command still refers to the call (reference counts). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "mcp/era.h"
#include "mcp/json.h"
#include "util/time.h"

static void call_free(struct mgw_be_call *c)
{
	if (c->timer)
		event_free(c->timer);
	mgw_jrpc_msg_deinit(&c->msg);
	mgw_headers_deinit(&c->resp_headers);
	free(c->out);
	free(c->frame);
	free(c);
}

void mgw_be_call_ref(struct mgw_be_call *c) { c->refs++; }

void mgw_be_call_unref(struct mgw_be_call *c)
{
	if (c && --c->refs == 0)
		call_free(c);
}

int mgw_be_call_alive(const struct mgw_be_call *c) { return c->x != NULL; }

/* The client left: nothing more may be written, and any armed timer is
 * cancelled now (that is how sleep honours cancellation).  Redis commands
 * in flight keep their reference and find the call dead on return. */
static void on_call_abort(struct mgw_http_exchange *x, void *arg)
{
	struct mgw_be_call *c = arg;
	struct mgw_log_ctx ctx = mgw_be_ctx(x, c->session_id[0] ? c->session_id : NULL);

	mgw_info(&ctx, "client went away before the answer to %s (cancelled)",
	         c->msg.method ? c->msg.method : "request");
	c->be->stats.cancelled++;
	c->x = NULL;
	mgw_be_call_ref(c);
	if (c->timer && evtimer_pending(c->timer, NULL)) {
		evtimer_del(c->timer);
		mgw_be_call_unref(c); /* the timer's reference */
	}
	mgw_be_call_unref(c);     /* the exchange's reference */
	mgw_be_call_unref(c);
}

struct mgw_be_call *mgw_be_call_new(struct mgw_backend *be,
                                    struct mgw_http_exchange *x,
                                    struct mgw_jrpc_msg *msg,
                                    enum mgw_be_era era)
{
	struct mgw_be_call *c = calloc(1, sizeof(*c));

	if (!c) {
		mgw_jrpc_msg_deinit(msg);
		mgw_be_reply_error(x, 500, NULL, MGW_JRPC_INTERNAL_ERROR,
		                   "Out of memory", NULL, NULL);
		return NULL;
	}
	c->be = be;
	c->x = x;
	c->refs = 2; /* the caller's and the exchange's */
	c->era = era;
	c->msg = *msg;
	memset(msg, 0, sizeof(*msg));
	c->sse = be->conf.sse == MGW_SSE_ALWAYS;
	mgw_headers_init(&c->resp_headers);
	mgw_http_set_callbacks(x, on_call_abort, NULL, c);
	return c;
}

struct mgw_http_exchange *mgw_be_call_detach(struct mgw_be_call *c)
{
	struct mgw_http_exchange *x = c->x;

	if (!x)
		return NULL;
	mgw_http_set_callbacks(x, NULL, NULL, NULL);
	c->x = NULL;
	mgw_be_call_unref(c);
	return x;
}

/* ---- SSE ------------------------------------------------------------- */

static int sse_begin(struct mgw_be_call *c)
{
	if (c->sse_started)
		return 0;
	mgw_be_sse_headers(&c->resp_headers);
	if (mgw_http_stream_start(c->x, 200, &c->resp_headers,
	                          "text/event-stream") != 0) {
		/* The layer finished the exchange (HTTP/1.1 freed it already)
		 * and on_call_abort will not run: forget it as that would, so
		 * nothing later writes to a freed exchange. */
		c->x = NULL;
		mgw_be_call_unref(c); /* the exchange's reference */
		return MGW_ECLOSED;
	}
	c->sse_started = 1;
	return 0;
}

int mgw_be_call_notify(struct mgw_be_call *c, const char *method,
                       json_t *params)
{
	char *body;
	size_t len;
	int rc;

	if (!c->x || sse_begin(c) != 0) {
		json_decref(params);
		return MGW_ECLOSED;
	}
	body = mgw_jrpc_notification_body(method, params, &len);
	if (!body)
		return MGW_ENOMEM;
	rc = mgw_be_sse_write_event(c->x, c->era == MGW_BE_LEGACY ? ++c->events
	                            : 0, body, len);
	free(body);
	return rc; /* MGW_ELIMIT: dropped, the reader is too slow */
}

/* The first frame of an SSE answer.  Progress needs the client's token;
 * log messages are unsolicited in the legacy era but in the modern era
 * only allowed when the request set a logLevel; otherwise an SSE comment
 * still makes the stream visibly start before the answer. */
void mgw_be_call_start(struct mgw_be_call *c, int force_sse)
{
	json_t *meta = mgw_jrpc_meta(&c->msg), *token = NULL, *level = NULL, *p;
	const char *method = c->msg.method ? c->msg.method : "request";

	if (force_sse)
		c->sse = 1;
	if (!c->sse || !c->x || c->sse_started)
		return;
	if (meta) {
		token = json_object_get(meta, "progressToken");
		level = json_object_get(meta, "io.modelcontextprotocol/logLevel");
	}
	if (token && !mgw_json_wide_number(token, NULL, NULL) &&
	    (json_is_string(token) || json_is_integer(token))) {
		p = json_pack("{sOsisiss}", "progressToken", token, "progress", 0,
		              "total", 1, "message", method);
		mgw_be_call_notify(c, "notifications/progress", p);
	} else if (c->era == MGW_BE_LEGACY || json_is_string(level)) {
		p = json_pack("{sssss{ssss}}", "level",
		              json_is_string(level) ? json_string_value(level) : "info",
		              "logger", MGW_BE_SERVER_NAME, "data", "message",
		              "handling", "method", method);
		mgw_be_call_notify(c, "notifications/message", p);
	} else if (sse_begin(c) == 0) {
		static const char comment[] = ": handling request\n\n";
		mgw_http_stream_write(c->x, comment, sizeof(comment) - 1);
	}
}

/* ---- finishing -------------------------------------------------------- */

static void send_out(struct mgw_be_call *c);

static void on_call_drain(struct mgw_http_exchange *x, void *arg)
{
	(void)x;
	send_out(arg);
}

/* Pieces small enough to always fit the layer's output bound, so even an
 * answer of several megabytes goes out (paced by on_drain). */
#define SSE_PIECE 16384

/* Writes the rest of the final SSE frame.  Returns 1 when all of it is
 * queued, 0 when waiting for drain, -1 when the client is gone. */
static int write_final_frame(struct mgw_be_call *c)
{
	if (!c->frame) {
		static const char head[] = "event: message\ndata: ";
		c->frame_len = sizeof(head) - 1 + c->out_len + 2;
		c->frame = malloc(c->frame_len);
		if (!c->frame)
			return -1;
		memcpy(c->frame, head, sizeof(head) - 1);
		memcpy(c->frame + sizeof(head) - 1, c->out, c->out_len);
		memcpy(c->frame + c->frame_len - 2, "\n\n", 2);
		c->frame_off = 0;
	}
	while (c->frame_off < c->frame_len) {
		size_t n = c->frame_len - c->frame_off;
		int rc;

		if (n > SSE_PIECE)
			n = SSE_PIECE;
		rc = mgw_http_stream_write(c->x, c->frame + c->frame_off, n);
		if (rc == MGW_ELIMIT)
			return 0;
		if (rc != 0)
			return -1;
		c->frame_off += n;
	}
	return 1;
}

static void send_out(struct mgw_be_call *c)
{
	struct mgw_http_exchange *x = c->x;

	if (!x)
		return;
	if (c->sse_started && write_final_frame(c) == 0) {
		/* The final answer must not be dropped like a notification:
		 * wait until the client has read enough, then go on. */
		mgw_http_set_callbacks(x, on_call_abort, on_call_drain, c);
		return;
	}
	mgw_http_set_callbacks(x, NULL, NULL, NULL);
	c->x = NULL;
	if (c->sse_started) {
		mgw_http_stream_end(x);
	} else {
		mgw_be_respond_json(x, c->out_status, &c->resp_headers, c->out,
		                    c->out_len);
	}
	mgw_be_call_unref(c); /* the exchange's reference */
}

static void on_delay_done(struct mgw_be_call *c) { send_out(c); }

/* Takes body (malloc'd); answers now or after the configured delay. */
static void finish(struct mgw_be_call *c, int status, char *body, size_t len)
{
	if (!c->x) {
		free(body);
		return;
	}
	if (!body) {
		body = mgw_jrpc_error_body(mgw_jrpc_id(&c->msg), MGW_JRPC_INTERNAL_ERROR,
		                           "Out of memory", NULL, &len);
		status = 500;
		if (!body) {
			struct mgw_http_exchange *x = c->x;
			mgw_http_set_callbacks(x, NULL, NULL, NULL);
			c->x = NULL;
			if (c->sse_started)
				mgw_http_stream_end(x);
			else
				mgw_http_respond(x, 500, NULL, NULL, NULL, 0);
			mgw_be_call_unref(c);
			return;
		}
	}
	free(c->out);
	c->out = body;
	c->out_len = len;
	c->out_status = status;
	if (c->be->conf.delay_ms && !c->delayed) {
		c->delayed = 1;
		if (mgw_be_call_after(c, c->be->conf.delay_ms, on_delay_done) == 0)
			return;
	}
	send_out(c);
}

/* Modern results identify the server and declare completeness on every
 * result (basic/index: per-response protocol fields). */
static void decorate_modern(const struct mgw_backend *be, json_t *result)
{
	json_t *meta;

	if (!json_is_object(result))
		return;
	if (!json_object_get(result, "resultType"))
		json_object_set_new(result, "resultType", json_string("complete"));
	meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, "io.modelcontextprotocol/serverInfo",
	                    mgw_be_server_info(be));
}

void mgw_be_call_result(struct mgw_be_call *c, json_t *result)
{
	char *body;
	size_t len = 0;

	if (!c->x) {
		json_decref(result);
		return;
	}
	if (c->era == MGW_BE_MODERN)
		decorate_modern(c->be, result);
	body = mgw_jrpc_result_body(mgw_jrpc_id(&c->msg), result, &len);
	finish(c, 200, body, len);
}

void mgw_be_call_error(struct mgw_be_call *c, int status, int code,
                       const char *message, json_t *data)
{
	char *body;
	size_t len = 0;

	if (!c->x) {
		json_decref(data);
		return;
	}
	body = mgw_jrpc_error_body(mgw_jrpc_id(&c->msg), code, message, data, &len);
	finish(c, status, body, len);
}

/* ---- timers ----------------------------------------------------------- */

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_be_call *c = arg;
	mgw_be_call_timer_cb fn = c->timer_fn;

	(void)fd;
	(void)what;
	if (c->x && fn)
		fn(c);
	mgw_be_call_unref(c); /* the timer's reference */
}

int mgw_be_call_after(struct mgw_be_call *c, uint32_t ms,
                      mgw_be_call_timer_cb fn)
{
	struct timeval tv = mgw_tv((double)ms / 1000.0);

	if (!c->timer) {
		c->timer = evtimer_new(c->be->base, on_timer, c);
		if (!c->timer)
			return MGW_ENOMEM;
	}
	if (evtimer_pending(c->timer, NULL))
		return MGW_EINVAL;
	c->timer_fn = fn;
	if (evtimer_add(c->timer, &tv) != 0)
		return MGW_EIO;
	mgw_be_call_ref(c);
	return 0;
}
