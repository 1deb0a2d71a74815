/* stream.c - long-lived SSE responses (legacy GET streams, modern
 * subscriptions/listen streams): keep-alive comments so intermediaries do
 * not time them out, and one registry so sessions and shutdown can end
 * them. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "util/time.h"

void mgw_be_sse_headers(struct mgw_headers *h)
{
	mgw_headers_set(h, "Cache-Control", "no-cache");
	/* Tells nginx-like proxies not to buffer the stream (transport spec). */
	mgw_headers_set(h, "X-Accel-Buffering", "no");
}

int mgw_be_sse_write_event(struct mgw_http_exchange *x, unsigned long id,
                           const char *json, size_t len)
{
	static const char head[] = "event: message\ndata: ";
	char *frame = malloc(32 + sizeof(head) - 1 + len + 2);
	size_t n = 0;
	int rc;

	if (!frame)
		return MGW_ENOMEM;
	if (id)
		n = (size_t)sprintf(frame, "id: %lu\n", id);
	memcpy(frame + n, head, sizeof(head) - 1);
	n += sizeof(head) - 1;
	memcpy(frame + n, json, len);
	n += len;
	memcpy(frame + n, "\n\n", 2);
	n += 2;
	rc = mgw_http_stream_write(x, frame, n);
	free(frame);
	return rc;
}

static void stream_unlink_free(struct mgw_be_stream *st)
{
	struct mgw_backend *be = st->be;

	if (st->prev)
		st->prev->next = st->next;
	else
		be->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	be->n_streams--;
	if (st->session)
		st->session->n_streams--;
	if (st->keepalive)
		event_free(st->keepalive);
	json_decref(st->sub_id);
	free(st);
}

static void on_stream_abort(struct mgw_http_exchange *x, void *arg)
{
	struct mgw_be_stream *st = arg;
	struct mgw_log_ctx ctx = mgw_be_ctx(x, st->session ? st->session->id : NULL);

	mgw_debug(&ctx, "%s stream closed by the client",
	          st->kind == MGW_BE_STREAM_GET ? "GET" : "listen");
	st->x = NULL;
	stream_unlink_free(st);
}

static void on_keepalive(evutil_socket_t fd, short what, void *arg)
{
	static const char ka[] = ": keepalive\n\n";
	struct mgw_be_stream *st = arg;

	(void)fd;
	(void)what;
	if (!st->x)
		return;
	/* A slow reader just misses a keep-alive (MGW_ELIMIT); a closed one
	 * is reported through on_stream_abort. */
	if (mgw_http_stream_write(st->x, ka, sizeof(ka) - 1) == 0 && st->session)
		st->session->last_used_ms = mgw_now_ms();
}

struct mgw_be_stream *mgw_be_stream_open(struct mgw_backend *be,
                                         struct mgw_http_exchange *x,
                                         enum mgw_be_stream_kind kind,
                                         struct mgw_be_session *sess,
                                         const struct mgw_headers *hdrs)
{
	struct mgw_be_stream *st = calloc(1, sizeof(*st));
	struct mgw_headers h;
	struct timeval tv = mgw_tv(be->conf.keepalive_interval > 0
	                                   ? be->conf.keepalive_interval
	                                   : 15.0);
	int rc;

	mgw_headers_init(&h);
	if (be->stopping) {
		/* Shutdown already ended the streams; a new one would only hold
		 * the stop until its deadline. */
		mgw_be_reply_error(x, 503, NULL, MGW_JRPC_INTERNAL_ERROR,
		                   "Server shutting down", NULL, NULL);
		free(st);
		mgw_headers_deinit(&h);
		return NULL;
	}
	if (be->n_streams >= be->conf.max_sessions) {
		/* Long-lived streams are bounded like sessions are. */
		struct mgw_log_ctx ctx = mgw_be_ctx(x, sess ? sess->id : NULL);
		mgw_warn(&ctx, "stream refused: %zu long-lived streams open (503)",
		         be->n_streams);
		mgw_be_reply_error(x, 503, NULL, MGW_JRPC_INTERNAL_ERROR,
		                   "Server busy: too many open streams", NULL, NULL);
		free(st);
		mgw_headers_deinit(&h);
		return NULL;
	}
	(void)mgw_headers_add_all(&h, hdrs); /* best effort, as before */
	mgw_be_sse_headers(&h);
	if (!st || !(st->keepalive = event_new(be->base, -1, EV_PERSIST,
	                                       on_keepalive, st))) {
		mgw_be_reply_error(x, 500, NULL, MGW_JRPC_INTERNAL_ERROR,
		                   "Out of memory", NULL, NULL);
		goto fail;
	}
	rc = mgw_http_stream_start(x, 200, &h, "text/event-stream");
	if (rc != 0)
		goto fail; /* client already gone; the layer frees x */
	st->be = be;
	st->x = x;
	st->kind = kind;
	st->session = sess;
	st->next = be->streams;
	if (be->streams)
		be->streams->prev = st;
	be->streams = st;
	be->n_streams++;
	if (sess)
		sess->n_streams++;
	be->stats.sse_streams_total++;
	mgw_http_set_callbacks(x, on_stream_abort, NULL, st);
	event_add(st->keepalive, &tv);
	mgw_headers_deinit(&h);
	return st;
fail:
	if (st && st->keepalive)
		event_free(st->keepalive);
	free(st);
	mgw_headers_deinit(&h);
	return NULL;
}

int mgw_be_stream_send(struct mgw_be_stream *st, const char *json, size_t len)
{
	int rc;

	if (!st->x)
		return MGW_ECLOSED;
	rc = mgw_be_sse_write_event(st->x, st->kind == MGW_BE_STREAM_GET
	                            ? ++st->events : 0, json, len);
	if (rc == 0)
		st->be->stats.notifications_pushed++;
	return rc;
}

void mgw_be_stream_close(struct mgw_be_stream *st)
{
	struct mgw_http_exchange *x = st->x;

	if (x) {
		mgw_http_set_callbacks(x, NULL, NULL, NULL);
		st->x = NULL;
		mgw_http_stream_end(x);
	}
	stream_unlink_free(st);
}

void mgw_be_streams_close_session(struct mgw_backend *be,
                                  struct mgw_be_session *sess)
{
	struct mgw_be_stream *st = be->streams, *next;

	for (; st; st = next) {
		next = st->next;
		if (st->session == sess)
			mgw_be_stream_close(st);
	}
}

/* The graceful end of a subscription: a complete result for the listen
 * request, carrying its subscription id (subscriptions spec, "Graceful
 * Closure"), so the client can tell it from a dropped connection. */
static void send_listen_completion(struct mgw_be_stream *st)
{
	json_t *res = json_pack("{sss{sO}}", "resultType", "complete", "_meta",
	                        "io.modelcontextprotocol/subscriptionId",
	                        st->sub_id ? st->sub_id : json_null());
	char *body;
	size_t len;

	if (!res)
		return;
	json_object_set_new(json_object_get(res, "_meta"),
	                    "io.modelcontextprotocol/serverInfo",
	                    mgw_be_server_info(st->be));
	body = mgw_jrpc_result_body(st->sub_id, res, &len);
	if (body) {
		mgw_be_stream_send(st, body, len);
		free(body);
	}
}

void mgw_be_streams_close_all(struct mgw_backend *be)
{
	while (be->streams) {
		struct mgw_be_stream *st = be->streams;
		if (st->kind == MGW_BE_STREAM_LISTEN && st->x)
			send_listen_completion(st);
		mgw_be_stream_close(st);
	}
}
