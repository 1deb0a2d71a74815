/* client_h1_fuzz.c - libFuzzer target for the upstream client's HTTP/1.1
 * response handling (src/http/client.c, client_h1.c: the head reader, the
 * strict chunked decoder, the response limits): what a hostile or broken
 * replica can send the gateway.
 *
 * The input (after one byte that seeds the split PRNG) is the bytes an
 * upstream answers a GET with, after which it closes the connection.  A
 * scripted upstream on 127.0.0.1 (tests/unit/http/client_util.c) serves
 * them twice: in one write, and in PRNG-sized writes with event-loop
 * passes in between.  Besides the sanitizers, the properties are:
 *  - the request always ends, with exactly one of on_end / on_error,
 *    within the harness's bound (a response that can hang the client
 *    until a timeout, with the upstream gone, is a bug);
 *  - a response that ends has a final status 200..599 (1xx interim
 *    answers are skipped or refused, 101 is refused), delivers no
 *    hop-by-hop field, only valid field names and values, and exactly
 *    Content-Length body bytes when it declared one (none at all for 204
 *    and 304);
 *  - both deliveries agree on the verdict, the status, the fields and the
 *    body: how a response is framed cannot depend on how its bytes were
 *    split. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "core/log.h"
#include "http/headers.h"
#include "tests/unit/http/client_util.h"

#include "tests/fuzz/prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The response to serve and the connection that asked for it. */
struct script {
	struct up_conn *uc;
};

static void on_request(struct up_conn *uc)
{
	struct script *sc = uc->u->arg;
	size_t n;

	if (uc->bev && !sc->uc && up_next_request(uc, &n)) {
		uc->consumed += n;
		sc->uc = uc;
	}
}

/* What one delivery produced. */
struct outcome {
	int ended, failed, status;
	char *fields;   /* "name: value\n"... as delivered */
	char *body;
	size_t body_len;
};

static void outcome_free(struct outcome *o)
{
	free(o->fields);
	free(o->body);
}

static char *fields_str(const struct mgw_headers *h)
{
	size_t len = 1;
	char *s, *p;

	for (size_t i = 0; i < h->n; i++)
		len += h->v[i].name_len + 2 + h->v[i].value_len + 1;
	s = p = malloc(len);
	if (!s)
		abort();
	for (size_t i = 0; i < h->n; i++) {
		memcpy(p, h->v[i].name, h->v[i].name_len);
		p += h->v[i].name_len;
		*p++ = ':';
		*p++ = ' ';
		memcpy(p, h->v[i].value, h->v[i].value_len);
		p += h->v[i].value_len;
		*p++ = '\n';
	}
	*p = '\0';
	return s;
}

static void check_ended(const struct rec *rc)
{
	static const char *const hop[] = { "connection", "keep-alive",
		"transfer-encoding", "te", "trailer", "upgrade",
		"proxy-connection", NULL };
	const char *cl;

	if (rc->status < 200 || rc->status > 599)
		abort();
	for (size_t i = 0; i < rc->h.n; i++)
		if (!mgw_header_name_valid(rc->h.v[i].name, rc->h.v[i].name_len) ||
		    !mgw_header_value_valid(rc->h.v[i].value, rc->h.v[i].value_len))
			abort();
	for (int k = 0; hop[k]; k++)
		if (mgw_headers_get(&rc->h, hop[k]))
			abort();
	/* 204 and 304 have no body whatever their Content-Length says (the
	 * server layer drops the field and frames the answer itself) */
	cl = mgw_headers_get(&rc->h, "content-length");
	if (cl && rc->status != 204 && rc->status != 304 &&
	    strtoull(cl, NULL, 10) != evbuffer_get_length(rc->body))
		abort();
	if ((rc->status == 204 || rc->status == 304) &&
	    evbuffer_get_length(rc->body) != 0)
		abort();
}

/* Serves resp[0..n) to one GET, split at PRNG-chosen points when split
 * is set, then closes; fills *o. */
static void deliver(struct event_base *base, const uint8_t *resp, size_t n,
                    int split, struct prng *r, struct outcome *o)
{
	struct mgw_client_limits lim;
	struct mgw_client_origin_cfg oc = {0};
	struct mgw_client_reqspec spec;
	struct mgw_client *cl;
	struct mgw_client_origin *org;
	struct script sc = {0};
	struct up up;
	struct rec rc;
	size_t off = 0;

	memset(&up, 0, sizeof(up));
	up_start(&up, base, NULL);
	up.on_read = on_request;
	up.arg = &sc;
	mgw_client_limits_default(&lim);
	lim.max_header_bytes = 2048;
	lim.max_headers = 16;
	lim.tmo.first_byte = 10; /* s: far beyond the harness's bound */
	cl = mgw_client_new(base, &lim);
	oc.host = "127.0.0.1";
	oc.port = up.port;
	oc.proto = MGW_CLIENT_H1;
	if (!cl || mgw_client_origin_new(cl, &oc, &org) != 0)
		abort();
	rec_init(&rc);
	memset(&spec, 0, sizeof(spec));
	rec_spec(&rc, &spec);
	spec.method = "GET";
	spec.target = "/f";
	{
		int rv = mgw_client_request(org, &spec, &rc.req);

		if (rv != 0) {
			fprintf(stderr, "mgw_client_request: %d\n", rv);
			abort();
		}
	}
	for (int i = 0; i < 500 && !sc.uc && !rc.done; i++)
		cu_pump(base, 1);
	if (!sc.uc)
		abort(); /* the request never reached the upstream */
	while (off < n && sc.uc->bev) {
		size_t k = split ? 1 + rnd(r) % (n - off) : n - off;

		up_write(sc.uc, resp + off, k);
		off += k;
		if (split)
			cu_pump(base, 1);
	}
	up_close_flushed(sc.uc);
	if (!cu_wait(base, &rc.done))
		abort(); /* neither on_end nor on_error with the upstream gone */
	if (rc.ended + rc.failed != 1)
		abort();
	if (rc.ended)
		check_ended(&rc);
	o->ended = rc.ended;
	o->failed = rc.failed;
	o->status = rc.ended ? rc.status : 0;
	o->fields = fields_str(&rc.h);
	o->body_len = evbuffer_get_length(rc.body);
	o->body = malloc(o->body_len + 1);
	if (!o->body)
		abort();
	evbuffer_copyout(rc.body, o->body, o->body_len);
	rec_deinit(&rc);
	mgw_client_free(cl);
	up_stop(&up);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_base *base;
	struct outcome a = {0}, b = {0};
	struct prng r;

	if (size < 1 || size > 8192)
		return 0;
	if (!base) {
		signal(SIGPIPE, SIG_IGN);
		mgw_log_set_level(MGW_LOG_ERROR);
		base = event_base_new();
		if (!base)
			abort();
	}
	r.s = 0x9E3779B97F4A7C15ULL ^ data[0];
	deliver(base, data + 1, size - 1, 0, &r, &a);
	deliver(base, data + 1, size - 1, 1, &r, &b);
	/* a success must not depend on the split; a failure may come
	 * sooner when bytes trickle (a limit hit before the end), but then
	 * the one-piece delivery must fail too */
	if (a.ended != b.ended || a.status != b.status)
		abort();
	if (a.ended && (strcmp(a.fields, b.fields) != 0 ||
	                a.body_len != b.body_len ||
	                memcmp(a.body, b.body, a.body_len) != 0))
		abort();
	outcome_free(&a);
	outcome_free(&b);
	return 0;
}
