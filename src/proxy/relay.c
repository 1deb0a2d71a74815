/* relay.c - collect or stream an upstream answer to the client (relay.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "mcp/jsonrpc.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/metrics.h"
#include "proxy/pipeline.h"
#include "proxy/policy.h"
#include "proxy/policy_filter.h"
#include "proxy/relay.h"
#include "proxy/txn.h"
#include "proxy/upstream.h"
#include "util/time.h"

/* Largest piece handed to the server layer at once when held data is
 * flushed: keeps each write well under its 4x-watermark refusal. */
#define FLUSH_PIECE (32 * 1024)

void mgw_relay_init(struct mgw_relay *rl)
{
	memset(rl, 0, sizeof(*rl));
	mgw_headers_init(&rl->hdrs);
}

void mgw_relay_deinit(struct mgw_relay *rl)
{
	mgw_headers_deinit(&rl->hdrs);
	if (rl->sse_mx)
		mgw_metrics_sse_close(rl->sse_mx);
	if (rl->buf)
		evbuffer_free(rl->buf);
	if (rl->cap)
		evbuffer_free(rl->cap);
	mgw_relay_init(rl);
}

int mgw_relay_small_length(const char *v, size_t max, size_t *out)
{
	size_t n = 0;

	if (!v || !*v)
		return 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return 0;
		n = n * 10 + (size_t)(*v - '0');
		if (n > max)
			return 0;
	}
	*out = n;
	return 1;
}

int mgw_relay_is_event_stream(const char *ctype)
{
	while (ctype && (*ctype == ' ' || *ctype == '\t'))
		ctype++;
	return ctype && strncasecmp(ctype, "text/event-stream", 17) == 0;
}

int mgw_relay_collects(const char *method, int status,
                       const struct mgw_headers *h, size_t *len)
{
	int head = strcmp(method, "HEAD") == 0;

	*len = 0;
	if (mgw_headers_count(h, "content-length") > 1 ||
	    mgw_relay_is_event_stream(mgw_headers_get(h, "content-type")))
		return 0;
	if (head || status == 204 || status == 304)
		return 1; /* no body to expect */
	return mgw_relay_small_length(mgw_headers_get(h, "content-length"),
	                              MGW_RELAY_COLLECT_MAX, len);
}

/* ---- ends --------------------------------------------------------------- */

void mgw_relay_abort(struct mgw_txn *t, const char *why)
{
	t->pl->st.stream_aborts++;
	t->note = why;
	mgw_txn_access_log(t, t->status);
	mgw_txn_cancel_attempt(t);
	mgw_http_stream_abort(t->x);
	t->x = NULL;
	mgw_txn_free(t);
}

/* The handler learns the complete body (collected or captured). */
static void completed(struct mgw_txn *t, struct evbuffer *b)
{
	size_t n = b ? evbuffer_get_length(b) : 0;

	if (t->h->on_complete)
		t->h->on_complete(t, n ? evbuffer_pullup(b, -1) : NULL, n);
}

static void end_stream(struct mgw_txn *t)
{
	completed(t, t->rl.cap);
	mgw_txn_access_log(t, t->status);
	mgw_http_stream_end(t->x);
	t->x = NULL;
	mgw_txn_free(t);
}

static void end_collect(struct mgw_txn *t)
{
	struct mgw_relay *rl = &t->rl;
	size_t n = evbuffer_get_length(rl->buf);
	unsigned char *body = n ? evbuffer_pullup(rl->buf, -1) : NULL;
	char *filtered = NULL;

	completed(t, rl->buf);
	/* filter_tools_list: the one rewritten body (policy_filter.h); the
	 * layer sets the new Content-Length */
	if (t->status == 200 && n && mgw_policy_filter_wanted(t) &&
	    mgw_policy_filter_tools(mgw_policy_select(t->route->conf,
	                                              t->principal),
	                            body, n, &filtered, &n) == 1)
		body = (unsigned char *)filtered;
	rl->bytes = n;
	mgw_txn_access_log(t, t->status);
	mgw_http_respond(t->x, t->status, &rl->hdrs, NULL, body, n);
	free(filtered);
	t->x = NULL;
	mgw_txn_free(t);
}

/* ---- streaming ------------------------------------------------------------ */

/* The client cannot take more now: stop the upstream until drain. */
static void pause_up(struct mgw_txn *t)
{
	if (!t->rl.paused && t->up) {
		t->rl.paused = 1;
		mgw_client_pause(t->up);
	}
}

/* Writes held data while the client takes it.  Returns 0, or -1 after t
 * was freed. */
static int flush_held(struct mgw_txn *t)
{
	struct mgw_relay *rl = &t->rl;

	while (evbuffer_get_length(rl->buf) > 0) {
		size_t n = evbuffer_get_length(rl->buf);
		unsigned char *p;
		int rc;

		if (!mgw_http_stream_writable(t->x))
			break;
		if (n > FLUSH_PIECE)
			n = FLUSH_PIECE;
		p = evbuffer_pullup(rl->buf, (ssize_t)n);
		if (!p) {
			mgw_relay_abort(t, "out of memory");
			return -1;
		}
		rc = mgw_http_stream_write(t->x, p, n);
		if (rc == MGW_ELIMIT)
			break; /* drain comes */
		if (rc != 0) {
			mgw_relay_abort(t, "client write failed");
			return -1;
		}
		evbuffer_drain(rl->buf, n);
		rl->bytes += n;
	}
	if (evbuffer_get_length(rl->buf) > 0 || !mgw_http_stream_writable(t->x))
		pause_up(t);
	return 0;
}

/* Straight to the client when nothing is held (the common case), else
 * behind what is.  Returns 0, or -1 after t was freed. */
static int write_plain(struct mgw_txn *t, const unsigned char *d, size_t n)
{
	struct mgw_relay *rl = &t->rl;
	int rc;

	if (evbuffer_get_length(rl->buf) == 0) {
		rc = mgw_http_stream_write(t->x, d, n);
		if (rc == 0) {
			rl->bytes += n;
			if (!mgw_http_stream_writable(t->x))
				pause_up(t);
			return 0;
		}
		if (rc != MGW_ELIMIT) {
			mgw_relay_abort(t, "client write failed");
			return -1;
		}
	}
	if (evbuffer_add(rl->buf, d, n) != 0) {
		mgw_relay_abort(t, "out of memory");
		return -1;
	}
	pause_up(t);
	return 0;
}

static int stream_data(struct mgw_txn *t, const unsigned char *d, size_t n)
{
	struct mgw_relay *rl = &t->rl;

	if (rl->cap) {
		if (evbuffer_get_length(rl->cap) + n > MGW_RELAY_CAPTURE_MAX) {
			evbuffer_free(rl->cap);   /* too big to keep */
			rl->cap = NULL;
		} else if (evbuffer_add(rl->cap, d, n) != 0) {
			mgw_relay_abort(t, "out of memory");
			return -1;
		}
	}
	if (!rl->stamping)
		return write_plain(t, d, n);
	if (mgw_sse_stamp(&rl->stamp, d, n, rl->buf) != 0) {
		mgw_relay_abort(t, "out of memory");
		return -1;
	}
	return flush_held(t);
}

static int begin_stream(struct mgw_txn *t, const struct mgw_headers *h,
                        unsigned flags, uint32_t tag);

/* An unsized answer collected for the tools/list filter outgrew the
 * bound: it streams unfiltered after all, what was collected first. */
static int collect_to_stream(struct mgw_txn *t)
{
	struct mgw_relay *rl = &t->rl;
	struct evbuffer *got = rl->buf;
	struct mgw_headers h = rl->hdrs;
	int rc;

	mgw_headers_init(&rl->hdrs);
	if (!(rl->buf = evbuffer_new())) {
		rl->buf = got;
		mgw_headers_deinit(&h);
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return -1;
	}
	rc = begin_stream(t, &h, rl->flags, rl->tag);
	mgw_headers_deinit(&h);
	if (rc == 0)
		rc = stream_data(t, evbuffer_pullup(got, -1),
		                 evbuffer_get_length(got));
	evbuffer_free(got);
	return rc;
}

static int collect_data(struct mgw_txn *t, const unsigned char *d, size_t n)
{
	struct mgw_relay *rl = &t->rl;

	if (rl->unsized && evbuffer_get_length(rl->buf) + n > rl->expect_len) {
		if (collect_to_stream(t) != 0)
			return -1;
		return stream_data(t, d, n);
	}
	if (evbuffer_get_length(rl->buf) + n > rl->expect_len) {
		/* more than announced: the client layer frames by
		 * Content-Length, so this is a broken upstream */
		if (t->srv)
			mgw_upstream_report(t->srv, MGW_UPSTREAM_FAILURE, 0, mgw_now_ms());
		mgw_txn_fail(t, MGW_PERR_UPSTREAM,
		             "upstream sent more than its Content-Length");
		return -1;
	}
	if (evbuffer_add(rl->buf, d, n) != 0) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return -1;
	}
	return 0;
}

int mgw_relay_data(struct mgw_txn *t, const unsigned char *d, size_t n)
{
	if (t->rl.mode == MGW_RELAY_COLLECT)
		return collect_data(t, d, n);
	return stream_data(t, d, n);
}

void mgw_relay_end(struct mgw_txn *t)
{
	struct mgw_relay *rl = &t->rl;

	if (rl->mode == MGW_RELAY_COLLECT) {
		end_collect(t);
		return;
	}
	if (rl->stamping && mgw_sse_stamp_flush(&rl->stamp, rl->buf) != 0) {
		mgw_relay_abort(t, "out of memory");
		return;
	}
	rl->up_ended = 1;
	if (flush_held(t) != 0)
		return;
	if (evbuffer_get_length(rl->buf) == 0)
		end_stream(t);
	/* else the drain that takes the rest ends it */
}

void mgw_relay_drain(struct mgw_txn *t)
{
	struct mgw_relay *rl = &t->rl;

	if (rl->mode != MGW_RELAY_STREAM)
		return;
	if (flush_held(t) != 0)
		return;
	if (evbuffer_get_length(rl->buf) > 0)
		return; /* still not all out: the next drain continues */
	if (rl->up_ended) {
		end_stream(t);
		return;
	}
	if (rl->paused && mgw_http_stream_writable(t->x)) {
		rl->paused = 0;
		mgw_client_resume(t->up);
	}
}

/* ---- the head ------------------------------------------------------------- */

static int begin_stream(struct mgw_txn *t, const struct mgw_headers *h,
                        unsigned flags, uint32_t tag)
{
	struct mgw_relay *rl = &t->rl;
	int rc;

	rl->mode = MGW_RELAY_STREAM;
	rl->stamping = rl->sse && (flags & MGW_RELAY_F_STAMP);
	if (rl->stamping && (flags & MGW_RELAY_F_STAMP_REQ) && t->have_msg &&
	    t->msg.kind == MGW_JRPC_REQUEST)
		mgw_sse_stamper_init_req(&rl->stamp, tag, mgw_jrpc_id(&t->msg));
	else if (rl->stamping)
		mgw_sse_stamper_init(&rl->stamp, tag);
	if ((flags & MGW_RELAY_F_CAPTURE) && !(rl->cap = evbuffer_new())) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return -1;
	}
	rc = mgw_http_stream_start(t->x, t->status, h, NULL);
	if (rc != 0) {
		/* the layer finished (and may have freed) the exchange:
		 * nothing more can be sent, and x must not be touched */
		mgw_info(NULL, "response head to the client failed: %s",
		         mgw_strerror(rc));
		t->x = NULL;
		mgw_txn_free(t);
		return -1;
	}
	if (rl->sse && t->pl->mx) {
		rl->sse_mx = t->pl->mx;
		mgw_metrics_sse_open(rl->sse_mx);
	}
	if (t->h->on_stream)
		t->h->on_stream(t);
	return 0;
}

/* A tools/list answer to filter (policy_filter.h) is collected up to the
 * capture bound, sized or not (the stateful handler passes no
 * Content-Length on); past the bound it streams unfiltered.  Returns 1
 * with *len (the bound) and rl->unsized set, or 0. */
static int collects_to_filter(struct mgw_txn *t, const struct mgw_headers *h,
                              size_t *len)
{
	size_t ncl = mgw_headers_count(h, "content-length");

	if (t->rl.sse || t->status != 200 || ncl > 1 ||
	    !mgw_policy_filter_wanted(t))
		return 0;
	if (ncl == 1)
		return mgw_relay_small_length(mgw_headers_get(h, "content-length"),
		                              MGW_RELAY_CAPTURE_MAX, len);
	t->rl.unsized = 1;
	*len = MGW_RELAY_CAPTURE_MAX;
	return 1;
}

int mgw_relay_begin(struct mgw_txn *t, const struct mgw_headers *h,
                    unsigned flags, uint32_t tag)
{
	struct mgw_relay *rl = &t->rl;
	size_t len = 0;

	rl->sse = mgw_relay_is_event_stream(mgw_headers_get(h, "content-type"));
	if (!rl->buf && !(rl->buf = evbuffer_new()))
		goto nomem;
	if (mgw_relay_collects(mgw_http_method(t->x), t->status, h, &len) ||
	    collects_to_filter(t, h, &len)) {
		rl->mode = MGW_RELAY_COLLECT;
		rl->expect_len = len;
		rl->flags = flags;
		rl->tag = tag;
		mgw_headers_deinit(&rl->hdrs);
		mgw_headers_init(&rl->hdrs);
		if (h == &t->up_head) {
			/* the upstream's head, which nothing else keeps */
			rl->hdrs = t->up_head;
			mgw_headers_init(&t->up_head);
		} else if (mgw_headers_clone(&rl->hdrs, h) != 0) {
			goto nomem;
		}
		return 0;
	}
	return begin_stream(t, h, flags, tag);
nomem:
	mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
	return -1;
}
