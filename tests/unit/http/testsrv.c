/* testsrv.c - in-process test server and raw HTTP/1 client; see testsrv.h. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "util/parse.h"
#include "util/time.h"
#include "testsrv.h"

/* ---- test handler ---- */

static void on_abort(struct mgw_http_exchange *x, void *arg)
{
	struct ts *t = arg;

	t->aborts++;
	for (int i = 0; i < t->nheld; i++)
		if (t->held[i] == x)
			t->held[i] = NULL;
}

static void on_drain(struct mgw_http_exchange *x, void *arg)
{
	struct ts *t = arg;
	t->drains++;
}

struct sse {
	struct ts *t;
	struct mgw_http_exchange *x;
	struct event *ev;
	int n;
};

static void sse_abort(struct mgw_http_exchange *x, void *arg)
{
	struct sse *s = arg;

	s->t->aborts++;
	event_free(s->ev);
	free(s);
}

static void sse_tick(evutil_socket_t fd, short what, void *arg)
{
	struct sse *s = arg;
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "id: %d\ndata: event %d\n\n", s->n + 1,
	                 s->n + 1);
	struct timeval tv = {0, 5000};

	assert_int_equal(mgw_http_stream_write(s->x, buf, (size_t)n), 0);
	s->t->sse_written++;
	if (++s->n == 3) {
		s->t->sse_done++;
		assert_int_equal(mgw_http_stream_end(s->x), 0);
		event_free(s->ev);
		free(s);
		return;
	}
	evtimer_add(s->ev, &tv);
}

/* /tools?n=N: a tools/list answer (id 7) of N tools "t0".."tN-1", each
 * padded to about 1 KiB, streamed (chunked, no Content-Length) a few
 * tools per timer tick, so a large one never meets the write bound. */
struct tools {
	struct ts *t;
	struct mgw_http_exchange *x;
	struct event *ev;
	int i, n;
};

static void tools_abort(struct mgw_http_exchange *x, void *arg)
{
	struct tools *s = arg;

	(void)x;
	s->t->aborts++;
	event_free(s->ev);
	free(s);
}

static void tools_tick(evutil_socket_t fd, short what, void *arg)
{
	struct tools *s = arg;
	static char pad[1001];
	char buf[8 * 1100];
	size_t len = 0;
	struct timeval tv = {0, 1000};

	(void)fd;
	(void)what;
	memset(pad, 'p', sizeof(pad) - 1);
	if (s->i == 0)
		len += (size_t)snprintf(buf, sizeof(buf),
		                        "{\"jsonrpc\":\"2.0\",\"id\":7,"
		                        "\"result\":{\"tools\":[");
	for (int k = 0; k < 8 && s->i < s->n; k++, s->i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
		                        "%s{\"name\":\"t%d\",\"description\":\"%s\"}",
		                        s->i ? "," : "", s->i, pad);
	if (s->i == s->n)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "]}}");
	if (len && mgw_http_stream_write(s->x, buf, len) != 0)
		fail_msg("/tools: write refused");
	if (s->i == s->n) {
		assert_int_equal(mgw_http_stream_end(s->x), 0);
		event_free(s->ev);
		free(s);
		return;
	}
	evtimer_add(s->ev, &tv);
}

static void hold(struct ts *t, struct mgw_http_exchange *x)
{
	assert_true(t->nheld < TS_MAX_HELD);
	t->held[t->nheld++] = x;
	mgw_http_set_callbacks(x, on_abort, on_drain, t);
}

static void handler(struct mgw_http_exchange *x, void *arg)
{
	struct ts *t = arg;
	const char *path = mgw_http_path(x);

	t->handled++;
	snprintf(t->last_method, sizeof(t->last_method), "%s", mgw_http_method(x));
	snprintf(t->last_path, sizeof(t->last_path), "%s", path);
	snprintf(t->last_target, sizeof(t->last_target), "%s", mgw_http_target(x));
	snprintf(t->last_authority, sizeof(t->last_authority), "%s",
	         mgw_http_authority(x) ? mgw_http_authority(x) : "");
	t->last_version = mgw_http_version(x);
	if (strcmp(path, "/echo") == 0) {
		struct mgw_headers h;
		size_t blen;
		const unsigned char *b = mgw_http_req_body(x, &blen);
		size_t hl = strlen(mgw_http_method(x)) + strlen(path) + 2;
		char *out = malloc(hl + blen + 1);
		assert_non_null(out);
		snprintf(out, hl + 1, "%s %s\n", mgw_http_method(x), path);
		memcpy(out + hl, b, blen);
		mgw_headers_init(&h);
		mgw_headers_adds(&h, "X-Kept", "yes");
		mgw_headers_adds(&h, "Connection", "x-secret");
		mgw_headers_adds(&h, "X-Secret", "1");
		mgw_headers_adds(&h, "Keep-Alive", "timeout=5");
		mgw_headers_adds(&h, "Transfer-Encoding", "chunked");
		mgw_headers_adds(&h, "Content-Length", "999");
		assert_int_equal(mgw_http_respond(x, 200, &h, "text/plain", out,
		                                  hl + blen), 0);
		mgw_headers_deinit(&h);
		free(out);
		return;
	}
	if (strcmp(path, "/sse") == 0) {
		struct sse *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		s->t = t;
		s->x = x;
		s->ev = evtimer_new(t->base, sse_tick, s);
		assert_int_equal(mgw_http_stream_start(x, 200, NULL,
		                                       "text/event-stream"), 0);
		mgw_http_set_callbacks(x, sse_abort, NULL, s);
		sse_tick(-1, 0, s);
		return;
	}
	if (strcmp(path, "/big") == 0) {
		char *out = malloc(TS_BIG_BODY);
		assert_non_null(out);
		memset(out, 'b', TS_BIG_BODY);
		assert_int_equal(mgw_http_respond(x, 200, NULL, "text/plain", out,
		                                  TS_BIG_BODY), 0);
		free(out);
		return;
	}
	if (strcmp(path, "/tools") == 0) {
		const char *q = strchr(mgw_http_target(x), '=');
		struct tools *s = calloc(1, sizeof(*s));

		assert_non_null(s);
		s->t = t;
		s->x = x;
		s->n = q ? atoi(q + 1) : 3;
		s->ev = evtimer_new(t->base, tools_tick, s);
		assert_int_equal(mgw_http_stream_start(x, 200, NULL,
		                                       "application/json"), 0);
		mgw_http_set_callbacks(x, tools_abort, NULL, s);
		tools_tick(-1, 0, s);
		return;
	}
	if (strcmp(path, "/hold") == 0) {
		hold(t, x);
		return;
	}
	if (strcmp(path, "/stream-hold") == 0) {
		assert_int_equal(mgw_http_stream_start(x, 200, NULL,
		                                       "text/event-stream"), 0);
		hold(t, x);
		return;
	}
	assert_int_equal(mgw_http_respond(x, 404, NULL, "text/plain", "nope\n", 5), 0);
}

/* ---- server ---- */

void ts_done_cb(void *arg)
{
	struct ts *t = arg;
	t->done_calls++;
}

void ts_start(struct ts *t, const struct mgw_http_limits *lim, SSL_CTX *tls)
{
	memset(t, 0, sizeof(*t));
	if (lim)
		t->lim = *lim;
	else
		mgw_http_limits_default(&t->lim);
	t->base = event_base_new();
	assert_non_null(t->base);
	t->srv = mgw_http_server_new(t->base, &t->lim, handler, t);
	assert_non_null(t->srv);
	assert_int_equal(mgw_http_server_listen(t->srv, "127.0.0.1:0", tls, t->addr,
	                                        sizeof(t->addr)), 0);
	assert_int_equal(strncmp(t->addr, "127.0.0.1:", 10), 0);
	assert_true(atoi(t->addr + 10) > 0);
}

void ts_stop(struct ts *t)
{
	mgw_http_server_free(t->srv);
	t->srv = NULL;
	event_base_free(t->base);
	t->base = NULL;
}

void ts_pump(struct ts *t, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	event_base_loopexit(t->base, &tv);
	event_base_dispatch(t->base);
}

int ts_wait(struct ts *t, const int *flag)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (!*flag && mgw_now_ms() < end)
		ts_pump(t, 1);
	return *flag;
}

int ts_wait_ge(struct ts *t, const int *v, int n)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (*v < n && mgw_now_ms() < end)
		ts_pump(t, 1);
	return *v >= n;
}

struct mgw_http_exchange *ts_wait_held(struct ts *t, int i)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (t->nheld <= i && mgw_now_ms() < end)
		ts_pump(t, 1);
	assert_true(t->nheld > i);
	return t->held[i];
}

int ts_connect_addr(const char *addr)
{
	char host[128];
	uint16_t port;
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd;

	if (mgw_parse_hostport(addr, host, sizeof(host), &port))
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, host, &s6->sin6_addr);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, host, &s4->sin_addr);
		sl = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	/* loopback: the kernel completes the handshake from the backlog */
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* ---- client ---- */

void resp_free(struct resp *r)
{
	mgw_headers_deinit(&r->h);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

const char *resp_header(const struct resp *r, const char *name)
{
	return mgw_headers_get(&r->h, name);
}

static int cl_header_field(http_parser *p, const char *at, size_t n)
{
	struct tc *c = p->data;
	size_t l = c->last_was_value ? 0 : strlen(c->hname);

	if (l + n >= sizeof(c->hname))
		return -1;
	memcpy(c->hname + l, at, n);
	c->hname[l + n] = '\0';
	c->last_was_value = 0;
	return 0;
}

static int cl_header_value(http_parser *p, const char *at, size_t n)
{
	struct tc *c = p->data;
	struct mgw_headers *h = &c->cur->h;

	if (!c->last_was_value) {
		c->last_was_value = 1;
		return mgw_headers_add(h, c->hname, strlen(c->hname), at, n) ? -1 : 0;
	}
	struct mgw_header *f = &h->v[h->n - 1];
	char *nv = realloc(f->value, f->value_len + n + 1);
	if (!nv)
		return -1;
	memcpy(nv + f->value_len, at, n);
	f->value = nv;
	f->value_len += n;
	nv[f->value_len] = '\0';
	return 0;
}

static int cl_headers_complete(http_parser *p)
{
	struct tc *c = p->data;

	c->cur->status = p->status_code;
	c->cur->chunked = (p->flags & F_CHUNKED) != 0;
	c->last_was_value = 0;
	c->hname[0] = '\0';
	return c->head ? 1 : 0;
}

static int cl_body(http_parser *p, const char *at, size_t n)
{
	struct tc *c = p->data;
	struct resp *r = c->cur;
	char *nb = realloc(r->body, r->blen + n + 1);

	if (!nb)
		return -1;
	memcpy(nb + r->blen, at, n);
	r->body = nb;
	r->blen += n;
	nb[r->blen] = '\0';
	return 0;
}

static int cl_message_complete(http_parser *p)
{
	struct tc *c = p->data;

	c->cur->complete = 1;
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings cl_settings = {
	.on_header_field = cl_header_field,
	.on_header_value = cl_header_value,
	.on_headers_complete = cl_headers_complete,
	.on_body = cl_body,
	.on_message_complete = cl_message_complete,
};

void tc_open(struct ts *t, struct tc *c)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->fd = ts_connect_addr(t->addr);
	assert_true(c->fd >= 0);
	http_parser_init(&c->p, HTTP_RESPONSE);
	c->p.data = c;
}

void tc_close(struct tc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->pend);
	free(c->raw);
	c->pend = c->raw = NULL;
	/* let the server notice */
	ts_pump(c->t, 2);
}

static int grow(char **b, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 4096;
	while (nc < need)
		nc *= 2;
	char *nb = realloc(*b, nc);
	if (!nb)
		return -1;
	*b = nb;
	*cap = nc;
	return 0;
}

/* Pumps once and reads what arrived.  Returns bytes read, 0 if none. */
static size_t tc_poll(struct tc *c)
{
	char buf[16384];
	ssize_t n;
	size_t total = 0;

	ts_pump(c->t, 1);
	while (!c->eof) {
		n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			assert_int_equal(grow(&c->pend, &c->cap, c->npend + (size_t)n), 0);
			memcpy(c->pend + c->npend, buf, (size_t)n);
			c->npend += (size_t)n;
			assert_int_equal(grow(&c->raw, &c->rawcap, c->nraw + (size_t)n + 1), 0);
			memcpy(c->raw + c->nraw, buf, (size_t)n);
			c->nraw += (size_t)n;
			c->raw[c->nraw] = '\0';
			total += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			c->eof = 1;
		break;
	}
	return total;
}

int tc_send(struct tc *c, const void *p, size_t n)
{
	const char *b = p;
	size_t off = 0;
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (off < n && mgw_now_ms() < end) {
		ssize_t w = send(c->fd, b + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		tc_poll(c);
	}
	ts_pump(c->t, 1);
	return off == n ? 0 : -1;
}

int tc_sends(struct tc *c, const char *s) { return tc_send(c, s, strlen(s)); }

int tc_response(struct tc *c, struct resp *r)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	memset(r, 0, sizeof(*r));
	mgw_headers_init(&r->h);
	c->cur = r;
	c->last_was_value = 0;
	c->hname[0] = '\0';
	for (;;) {
		if (c->npend) {
			if (HTTP_PARSER_ERRNO(&c->p) == HPE_PAUSED)
				http_parser_pause(&c->p, 0);
			size_t n = http_parser_execute(&c->p, &cl_settings, c->pend, c->npend);
			enum http_errno e = HTTP_PARSER_ERRNO(&c->p);
			memmove(c->pend, c->pend + n, c->npend - n);
			c->npend -= n;
			if (e != HPE_OK && e != HPE_PAUSED)
				return -1;
			if (r->complete)
				return 0;
		}
		if (c->eof) {
			if (HTTP_PARSER_ERRNO(&c->p) == HPE_PAUSED)
				http_parser_pause(&c->p, 0);
			http_parser_execute(&c->p, &cl_settings, NULL, 0);
			return r->complete ? 0 : -1;
		}
		if (mgw_now_ms() >= end)
			return -1;
		tc_poll(c);
	}
}

int tc_closed(struct tc *c)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (!c->eof && mgw_now_ms() < end)
		tc_poll(c);
	return c->eof;
}

int tc_wait_raw(struct tc *c, const char *s)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (mgw_now_ms() < end) {
		if (c->raw && memmem(c->raw, c->nraw, s, strlen(s)))
			return 1;
		if (c->eof)
			return 0;
		tc_poll(c);
	}
	return 0;
}

int tc_wait_bytes(struct tc *c, const void *p, size_t n)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;

	while (mgw_now_ms() < end) {
		if (c->raw && memmem(c->raw, c->nraw, p, n))
			return 1;
		if (c->eof)
			return 0;
		tc_poll(c);
	}
	return 0;
}

void tc_expect_refused(struct ts *t, const char *request, size_t len,
                       int status)
{
	struct tc c;
	struct resp r;

	tc_open(t, &c);
	tc_send(&c, request, len); /* the server may close before all is sent */
	assert_int_equal(tc_response(&c, &r), 0);
	if (r.status != status)
		print_error("request %.*s: got %d, want %d\n", (int)len, request,
		            r.status, status);
	assert_int_equal(r.status, status);
	assert_non_null(resp_header(&r, "connection"));
	assert_string_equal(resp_header(&r, "connection"), "close");
	assert_true(tc_closed(&c));
	resp_free(&r);
	tc_close(&c);
}

/* ---- certificates ---- */

void ts_make_cert(const char *dir, char *cert, size_t certlen, char *key,
                  size_t keylen)
{
	EVP_PKEY *pk = EVP_RSA_gen(2048);
	X509 *x = X509_new();
	X509_NAME *name;
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	FILE *f;

	assert_non_null(pk);
	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, pk);
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                           (const unsigned char *)"localhost", -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name,
	                          "DNS:localhost,IP:127.0.0.1");
	assert_non_null(ext);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, pk, EVP_sha256()) > 0);

	snprintf(cert, certlen, "%s/cert.pem", dir);
	snprintf(key, keylen, "%s/key.pem", dir);
	f = fopen(cert, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_X509(f, x), 1);
	fclose(f);
	f = fopen(key, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(pk);
}
