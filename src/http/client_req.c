/* client_req.c - upstream requests: queueing on their origin, delivery of
 * head, data, end and error to the caller, the per-request timer (total
 * and phase deadlines), and the API to submit, cancel, pause and resume.
 * Connections carry them (client_conn.c); the origin's kick hands them
 * out (client.c). */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/client_conn.h"
#include "http/headers.h"
#include "util/time.h"

/* ---- queue, delivery, timer ---- */

void mgw_creq_unqueue(struct mgw_client_req *r)
{
	struct mgw_client_origin *o = r->o;

	if (r->prev)
		r->prev->next = r->next;
	else
		o->qhead = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		o->qtail = r->prev;
	r->prev = r->next = NULL;
	o->nqueued--;
}

void mgw_creq_enqueue(struct mgw_client_req *r, int front)
{
	struct mgw_client_origin *o = r->o;

	r->state = MGW_CRQ_QUEUED;
	r->c = NULL;
	if (front) {
		r->prev = NULL;
		r->next = o->qhead;
		if (o->qhead)
			o->qhead->prev = r;
		else
			o->qtail = r;
		o->qhead = r;
	} else {
		r->next = NULL;
		r->prev = o->qtail;
		if (o->qtail)
			o->qtail->next = r;
		else
			o->qhead = r;
		o->qtail = r;
	}
	o->nqueued++;
}

void mgw_creq_set_done(struct mgw_client_req *r)
{
	if (r->state == MGW_CRQ_ACTIVE)
		r->o->nactive--;
	else if (r->state == MGW_CRQ_QUEUED)
		mgw_creq_unqueue(r);
	r->state = MGW_CRQ_DONE;
	evtimer_del(r->timer);
	r->timer_armed = 0;
}

void mgw_creq_free(struct mgw_client_req *r)
{
	struct mgw_client_origin *o;

	if (!r)
		return;
	o = r->o;
	if (r->state != MGW_CRQ_DONE)
		mgw_creq_set_done(r);
	event_free(r->timer);
	free(r->method); /* target, authority and body with it */
	mgw_headers_deinit(&r->hdr);
	mgw_headers_deinit(&r->resp);
	if (r->held)
		evbuffer_free(r->held);
	free(r);
	o->nreqs--;
	if (o->retired && o->nreqs == 0)
		mgw_origin_kick(o);
}

unsigned mgw_creq_unsent(const struct mgw_client_req *r)
{
	return (!r->sent_all && !r->got_bytes) ? MGW_CLIENT_F_NOT_SENT : 0;
}

void mgw_creq_end(struct mgw_client_req *r)
{
	if (r->state == MGW_CRQ_DONE)
		return;
	mgw_creq_set_done(r);
	MGW_CSTAT_INC(r->o, responses);
	if (r->on_end) {
		r->in_cb = 1;
		r->on_end(r, r->arg);
		r->in_cb = 0;
	}
}

void mgw_creq_fail(struct mgw_client_req *r, int err,
                   enum mgw_client_err_class cls, const char *msg,
                   unsigned flags)
{
	struct mgw_client_error e;
	struct mgw_log_ctx ctx;

	if (r->state == MGW_CRQ_DONE)
		return;
	mgw_creq_set_done(r);
	if (r->got_bytes) {
		flags |= MGW_CLIENT_F_RESP_BYTES;
		flags &= ~(unsigned)MGW_CLIENT_F_NOT_SENT;
	}
	if (r->head_sent)
		flags |= MGW_CLIENT_F_HEAD_SENT;
	r->o->st.errors[cls]++;
	r->o->cl->st.errors[cls]++;
	mgw_cconn_logctx(r->c, r->h2 ? r->stream_id : -1, &ctx);
	mgw_debug(&ctx, "upstream %s: %s %s failed (%s): %s%s%s", r->o->name,
	          r->method, r->target, mgw_client_err_class_name(cls),
	          msg ? msg : mgw_strerror(err),
	          (flags & MGW_CLIENT_F_NOT_SENT) ? " [not sent]" : "",
	          (flags & MGW_CLIENT_F_RESP_BYTES) ? " [response started]" : "");
	e.code = err;
	e.flags = flags;
	e.cls = cls;
	e.msg = msg ? msg : mgw_strerror(err);
	if (r->on_error) {
		r->in_cb = 1;
		r->on_error(r, &e, r->arg);
		r->in_cb = 0;
	}
}

void mgw_creq_head(struct mgw_client_req *r)
{
	if (r->state == MGW_CRQ_DONE || r->head_sent)
		return;
	r->head_sent = 1;
	if (r->on_head)
		r->on_head(r, r->status, &r->resp, r->arg);
}

void mgw_client_take_head(struct mgw_client_req *r, struct mgw_headers *out)
{
	*out = r->resp;
	mgw_headers_init(&r->resp);
}

void mgw_creq_data(struct mgw_client_req *r, const unsigned char *p, size_t n)
{
	if (r->state == MGW_CRQ_DONE || n == 0)
		return;
	if (r->on_data)
		r->on_data(r, p, n, r->arg);
}

/* Methods whose requests carry no body as a rule: without one they go
 * out with no Content-Length either. */
static const char *const no_body_methods[] = {"GET", "HEAD", "DELETE",
                                              "OPTIONS", "TRACE", "CONNECT"};

int mgw_creq_needs_length(const struct mgw_client_req *r)
{
	if (r->body_len)
		return 1;
	for (size_t i = 0; i < sizeof(no_body_methods) / sizeof(no_body_methods[0]);
	     i++)
		if (strcmp(r->method, no_body_methods[i]) == 0)
			return 0;
	return 1;
}

/* Arms the request timer at the nearest of the total and phase deadlines
 * (the idle deadline does not count while delivery is paused). */
static void req_arm(struct mgw_client_req *r)
{
	uint64_t now, dl = r->deadline_total, ph = r->deadline_phase;

	if (r->state == MGW_CRQ_DONE)
		return;
	if (r->paused && r->phase == MGW_PH_RECV)
		ph = 0;
	if (ph && (!dl || ph < dl))
		dl = ph;
	/* a pending timer that fires no later stays (on_req_timer arms it
	 * again for what is left, or finds nothing due): moving the event at
	 * every phase and every read was a fair part of the loop's cost */
	if (!dl || (r->timer_armed && r->timer_fire <= dl))
		return;
	now = mgw_now_ms();
	struct timeval tv = mgw_tv(dl > now ? (double)(dl - now) / 1000.0 : 0);
	r->timer_fire = dl;
	r->timer_armed = 1;
	evtimer_add(r->timer, &tv);
}

static uint64_t deadline(double seconds)
{
	return seconds > 0 ? mgw_now_ms() + (uint64_t)(seconds * 1000.0) + 1 : 0;
}

void mgw_creq_phase(struct mgw_client_req *r, enum mgw_creq_phase ph)
{
	double s = 0;

	r->phase = ph;
	switch (ph) {
	case MGW_PH_CONNECT: s = r->tmo.connect; break;
	case MGW_PH_SEND: s = r->tmo.idle; break;
	case MGW_PH_FIRST: s = r->tmo.first_byte; break;
	case MGW_PH_RECV: s = r->tmo.idle; break;
	}
	r->deadline_phase = deadline(s);
	req_arm(r);
}

void mgw_creq_activity(struct mgw_client_req *r)
{
	r->got_bytes = 1;
	if (r->phase != MGW_PH_RECV) {
		mgw_creq_phase(r, MGW_PH_RECV);
		return;
	}
	if (r->tmo.idle > 0) {
		r->deadline_phase = deadline(r->tmo.idle);
		req_arm(r);
	}
}

/* A request's own timer.  Top-level libevent callback: may close the
 * HTTP/1.1 connection carrying the request. */
static void on_req_timer(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_client_req *r = arg;
	struct mgw_client_conn *c = r->c;
	uint64_t now = mgw_now_ms();
	const char *msg;
	unsigned flags = 0;

	(void)fd;
	(void)what;
	r->timer_armed = 0;
	if (r->deadline_total && now >= r->deadline_total) {
		msg = "total timeout";
	} else if (r->deadline_phase && now >= r->deadline_phase &&
	           !(r->paused && r->phase == MGW_PH_RECV)) {
		static const char *const names[] = {
		    [MGW_PH_CONNECT] = "connect timeout",
		    [MGW_PH_SEND] = "idle timeout while sending",
		    [MGW_PH_FIRST] = "first-byte timeout",
		    [MGW_PH_RECV] = "idle timeout"};
		msg = names[r->phase];
	} else {
		req_arm(r);
		return;
	}
	if (r->state == MGW_CRQ_QUEUED && r->o->nconnecting == 0 &&
	    r->o->nconns > 0) {
		/* no connect pending that could be slow: it waited for a
		 * busy pool */
		if (r->phase == MGW_PH_CONNECT)
			msg = "timed out waiting for a free connection";
		flags |= MGW_CLIENT_F_QUEUED;
	} else if (r->phase == MGW_PH_CONNECT) {
		flags |= MGW_CLIENT_F_CONNECT;
	}
	if (r->state == MGW_CRQ_QUEUED) {
		mgw_creq_fail(r, MGW_ETIMEDOUT, MGW_CLIENT_E_TIMEOUT, msg,
		              flags | MGW_CLIENT_F_NOT_SENT);
		mgw_creq_free(r);
		return;
	}
	if (r->state != MGW_CRQ_ACTIVE || !c)
		return;
	if (c->h2) {
		/* Not one byte from the peer since this stream went out: the
		 * connection itself may be dead (a peer that vanished without
		 * a FIN).  It takes no new streams; those go to a new one, and
		 * this one closes when its last stream is done. */
		if (c->read_total == r->read_mark && !c->goaway) {
			c->goaway = 1;
			mgw_info(NULL, "upstream %s: HTTP/2 connection silent "
			         "since a timed-out stream was sent: no new streams "
			         "on it", c->o->name);
		}
		mgw_creq_fail(r, MGW_ETIMEDOUT, MGW_CLIENT_E_TIMEOUT, msg,
		              flags | mgw_creq_unsent(r));
		r->want_rst = 1;
		mgw_cconn_schedule(c);
		return;
	}
	/* HTTP/1.1: the request owns the connection */
	c->req = NULL;
	mgw_creq_fail(r, MGW_ETIMEDOUT, MGW_CLIENT_E_TIMEOUT, msg,
	              flags | mgw_creq_unsent(r));
	mgw_creq_free(r);
	if (c->state == MGW_CC_READY)
		mgw_cconn_close(c); /* the response cannot be skipped safely */
	/* a connection still being set up goes on and joins the pool */
}

/* ---- submit, cancel, pause ---- */

static int token_valid(const char *s)
{
	return s && *s && mgw_header_name_valid(s, strlen(s));
}

/* Request-target and authority: visible ASCII only. */
static int visible(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

/* Copies the end-to-end fields of src into dst, in order.  Fields the
 * layer writes itself (Host, Content-Length) and hop-by-hop ones go; an
 * invalid name or value fails the request unless checked says the caller
 * vouches for them. */
static int copy_headers(struct mgw_headers *dst, const struct mgw_headers *src,
                        int checked)
{
	int conn;

	if (!src)
		return 0;
	conn = mgw_headers_get(src, "connection") != NULL;
	for (size_t i = 0; i < src->n; i++) {
		const struct mgw_header *f = &src->v[i];
		if (!checked && (!mgw_header_name_valid(f->name, f->name_len) ||
		                 !mgw_header_value_valid(f->value, f->value_len)))
			return MGW_EINVAL;
		if (mgw_header_is_hop_by_hop(f->name, f->name_len) ||
		    MGW_HEADER_IS(f, "host") || MGW_HEADER_IS(f, "content-length") ||
		    (conn && mgw_headers_connection_lists(src, f->name)))
			continue;
		if (mgw_headers_add(dst, f->name, f->name_len, f->value,
		                    f->value_len) != 0)
			return MGW_ENOMEM;
	}
	return 0;
}

/* The request line's parts and the body into one block (one allocation
 * where four were made), their lengths kept for the writers. */
static int copy_request(struct mgw_client_req *r,
                        const struct mgw_client_reqspec *spec)
{
	const char *auth = spec->authority ? spec->authority : r->o->authority;
	size_t ml = strlen(spec->method), tl = strlen(spec->target);
	size_t al = strlen(auth), n = ml + tl + al + 3;
	char *b;

	if (spec->body_len > SIZE_MAX - n || !(b = malloc(n + spec->body_len)))
		return MGW_ENOMEM;
	r->method = memcpy(b, spec->method, ml + 1);
	r->target = memcpy(b + ml + 1, spec->target, tl + 1);
	r->authority = memcpy(b + ml + tl + 2, auth, al + 1);
	r->method_len = ml;
	r->target_len = tl;
	r->authority_len = al;
	if (spec->body_len) {
		r->body = memcpy(b + n, spec->body, spec->body_len);
		r->body_len = spec->body_len;
	}
	return 0;
}

int mgw_client_request(struct mgw_client_origin *o,
                       const struct mgw_client_reqspec *spec,
                       struct mgw_client_req **out)
{
	struct mgw_client *cl;
	struct mgw_client_req *r = NULL;
	int rv = MGW_ENOMEM;

	if (out)
		*out = NULL;
	if (!o || !spec)
		return MGW_EINVAL;
	cl = o->cl;
	if (o->retired)
		return MGW_ECLOSED;
	if (!token_valid(spec->method) || !visible(spec->target) ||
	    (spec->authority && !visible(spec->authority)) ||
	    (spec->body_len && !spec->body))
		return MGW_EINVAL;
	if (o->nqueued >= cl->lim.max_pending_per_origin)
		return MGW_ELIMIT;
	r = calloc(1, sizeof(*r));
	if (!r)
		return MGW_ENOMEM;
	r->o = o;
	o->nreqs++; /* from here mgw_creq_free undoes everything */
	r->state = MGW_CRQ_DONE;
	r->id = ++cl->next_id;
	r->stream_id = -1;
	mgw_headers_init(&r->hdr);
	mgw_headers_init(&r->resp);
	r->timer = evtimer_new(cl->base, on_req_timer, r);
	if (!r->timer || copy_request(r, spec) != 0)
		goto fail;
	if (spec->headers_checked && spec->headers_end_to_end)
		rv = mgw_headers_clone(&r->hdr, spec->headers);
	else
		rv = copy_headers(&r->hdr, spec->headers, spec->headers_checked);
	if (rv != 0)
		goto fail;
	r->is_head = strcmp(r->method, "HEAD") == 0;
	r->tmo = spec->tmo ? *spec->tmo : cl->lim.tmo;
	r->on_head = spec->on_head;
	r->on_data = spec->on_data;
	r->on_end = spec->on_end;
	r->on_error = spec->on_error;
	r->arg = spec->arg;
	mgw_creq_enqueue(r, 0);
	r->deadline_total = deadline(r->tmo.total);
	mgw_creq_phase(r, MGW_PH_CONNECT);
	MGW_CSTAT_INC(o, requests);
	mgw_origin_kick(o);
	if (out)
		*out = r;
	return 0;
fail:
	mgw_creq_free(r);
	return rv;
}

void mgw_client_cancel(struct mgw_client_req *r)
{
	struct mgw_client_conn *c;

	if (!r || r->state == MGW_CRQ_DONE)
		return;
	r->cancelled = 1;
	MGW_CSTAT_INC(r->o, cancels);
	if (r->state == MGW_CRQ_QUEUED) {
		mgw_creq_set_done(r);
		mgw_creq_free(r);
		return;
	}
	c = r->c;
	mgw_creq_set_done(r);
	if (c->h2)
		r->want_rst = 1;
	/* HTTP/1.1: the work callback closes the connection (or, while it is
	 * being set up, just drops the request); a parser that is delivering
	 * to r right now sees DONE and stops. */
	mgw_cconn_schedule(c);
}

void mgw_client_pause(struct mgw_client_req *r)
{
	if (!r || r->state == MGW_CRQ_DONE || r->paused)
		return;
	r->paused = 1;
	if (r->state == MGW_CRQ_ACTIVE && !r->c->h2 &&
	    r->c->state == MGW_CC_READY && !r->c->read_off) {
		r->c->read_off = 1;
		bufferevent_disable(r->c->bev, EV_READ);
	}
	req_arm(r);
}

void mgw_client_resume(struct mgw_client_req *r)
{
	if (!r || r->state == MGW_CRQ_DONE || !r->paused)
		return;
	r->paused = 0;
	if (r->phase == MGW_PH_RECV && r->tmo.idle > 0)
		r->deadline_phase = deadline(r->tmo.idle);
	req_arm(r);
	if (r->state == MGW_CRQ_ACTIVE)
		mgw_cconn_schedule(r->c);
}

int mgw_client_req_is_h2(const struct mgw_client_req *r)
{
	return r && r->h2;
}
