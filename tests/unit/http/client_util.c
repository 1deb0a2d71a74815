/* client_util.c - scripted upstream server, callback recorder, loop pumping
 * and throwaway PKI for the client layer tests (see client_util.h). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent_ssl.h>
#include <nghttp2/nghttp2.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tests/unit/http/client_util.h"
#include "util/time.h"

/* ---- scripted upstream ---- */

static void h2up_read(struct up_conn *uc);
static void h2up_conn_init(struct up_conn *uc);

static void uc_free(struct up_conn *uc)
{
	if (uc->ng) {
		nghttp2_session_del(uc->ng);
		uc->ng = NULL;
	}
	if (uc->bev) {
		bufferevent_free(uc->bev);
		uc->bev = NULL;
	}
}

static void on_up_read(struct bufferevent *bev, void *arg)
{
	struct up_conn *uc = arg;
	struct up *u = uc->u;

	if (u->h2) {
		h2up_read(uc);
		return;
	}
	evbuffer_add_buffer(uc->rx, bufferevent_get_input(bev));
	if (u->read_limit && evbuffer_get_length(uc->rx) >= u->read_limit) {
		up_close(uc);
		return;
	}
	if (u->on_read)
		u->on_read(uc);
	else
		up_canned(uc);
}

static void on_up_write(struct bufferevent *bev, void *arg)
{
	struct up_conn *uc = arg;

	if (uc->ng)
		h2up_flush(uc);
	if (uc->bev && uc->close_when_flushed &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		up_close(uc);
}

static void on_up_event(struct bufferevent *bev, short what, void *arg)
{
	struct up_conn *uc = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		uc->eof = 1;
		uc_free(uc);
	}
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd,
                      struct sockaddr *sa, int salen, void *arg)
{
	struct up *u = arg;
	struct up_conn *uc;

	(void)l;
	(void)sa;
	(void)salen;
	if (u->naccepted >= UP_MAX_CONNS) {
		evutil_closesocket(fd);
		return;
	}
	uc = calloc(1, sizeof(*uc));
	assert_non_null(uc);
	uc->u = u;
	uc->idx = u->naccepted;
	uc->rx = evbuffer_new();
	if (u->tls)
		uc->bev = bufferevent_openssl_socket_new(u->base, fd, SSL_new(u->tls),
		                                         BUFFEREVENT_SSL_ACCEPTING,
		                                         BEV_OPT_CLOSE_ON_FREE);
	else
		uc->bev = bufferevent_socket_new(u->base, fd, BEV_OPT_CLOSE_ON_FREE);
	assert_non_null(uc->bev);
	bufferevent_setcb(uc->bev, on_up_read, on_up_write, on_up_event, uc);
	bufferevent_enable(uc->bev, EV_READ | EV_WRITE);
	u->c[u->naccepted++] = uc;
	if (u->h2)
		h2up_conn_init(uc);
}

void up_start(struct up *u, struct event_base *base, SSL_CTX *tls)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	memset(u, 0, sizeof(*u));
	u->base = base;
	if (tls) {
		SSL_CTX_up_ref(tls);
		u->tls = tls;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	u->l = evconnlistener_new_bind(base, on_accept, u,
	                               LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64,
	                               (struct sockaddr *)&sin, sizeof(sin));
	assert_non_null(u->l);
	assert_int_equal(getsockname(evconnlistener_get_fd(u->l),
	                             (struct sockaddr *)&sin, &sl),
	                 0);
	u->port = ntohs(sin.sin_port);
}

void up_stop(struct up *u)
{
	for (int i = 0; i < u->ns; i++) {
		mgw_headers_deinit(&u->s[i]->h);
		evbuffer_free(u->s[i]->body);
		evbuffer_free(u->s[i]->out);
		free(u->s[i]);
	}
	for (int i = 0; i < u->naccepted; i++) {
		uc_free(u->c[i]);
		evbuffer_free(u->c[i]->rx);
		free(u->c[i]);
	}
	evconnlistener_free(u->l);
	if (u->tls)
		SSL_CTX_free(u->tls);
	memset(u, 0, sizeof(*u));
}

int up_next_request(struct up_conn *uc, size_t *len)
{
	size_t total = evbuffer_get_length(uc->rx) - uc->consumed;
	struct evbuffer_ptr p, e;
	char *head;
	size_t hlen, cl = 0;

	if (total == 0)
		return 0;
	evbuffer_ptr_set(uc->rx, &p, uc->consumed, EVBUFFER_PTR_SET);
	e = evbuffer_search(uc->rx, "\r\n\r\n", 4, &p);
	if (e.pos < 0)
		return 0;
	hlen = (size_t)e.pos + 4 - uc->consumed;
	head = up_rx_str(uc, uc->consumed, hlen);
	for (char *l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n"))
		if (strncasecmp(l + 2, "content-length:", 15) == 0)
			cl = strtoul(l + 17, NULL, 10);
	free(head);
	if (total < hlen + cl)
		return 0;
	*len = hlen + cl;
	return 1;
}

void up_canned(struct up_conn *uc)
{
	size_t n;

	while (uc->bev && up_next_request(uc, &n)) {
		uc->consumed += n;
		uc->nreq++;
		up_writes(uc, uc->u->resp ? uc->u->resp
		                          : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	}
}

void up_write(struct up_conn *uc, const void *p, size_t n)
{
	if (uc->bev)
		bufferevent_write(uc->bev, p, n);
}

void up_writes(struct up_conn *uc, const char *s)
{
	up_write(uc, s, strlen(s));
}

void up_close_flushed(struct up_conn *uc)
{
	if (!uc->bev)
		return;
	uc->close_when_flushed = 1;
	if (evbuffer_get_length(bufferevent_get_output(uc->bev)) == 0)
		up_close(uc);
}

void up_close(struct up_conn *uc)
{
	uc->closed = 1;
	uc_free(uc);
}

char *up_rx_str(struct up_conn *uc, size_t off, size_t len)
{
	char *s = malloc(len + 1);
	struct evbuffer_ptr p;

	assert_non_null(s);
	evbuffer_ptr_set(uc->rx, &p, off, EVBUFFER_PTR_SET);
	assert_int_equal(evbuffer_copyout_from(uc->rx, &p, s, len), (ev_ssize_t)len);
	s[len] = '\0';
	return s;
}

/* ---- HTTP/2 upstream ---- */

static ssize_t h2_send(nghttp2_session *ng, const uint8_t *data, size_t len,
                       int flags, void *arg)
{
	struct up_conn *uc = arg;

	(void)ng;
	(void)flags;
	if (!uc->bev)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	if (evbuffer_get_length(bufferevent_get_output(uc->bev)) > 256 * 1024)
		return NGHTTP2_ERR_WOULDBLOCK;
	bufferevent_write(uc->bev, data, len);
	return (ssize_t)len;
}

static int h2_begin_headers(nghttp2_session *ng, const nghttp2_frame *fr,
                            void *arg)
{
	struct up_conn *uc = arg;
	struct up *u = uc->u;
	struct h2s *s;

	if (fr->hd.type != NGHTTP2_HEADERS ||
	    fr->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	assert_true(u->ns < H2UP_MAX_STREAMS);
	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->uc = uc;
	s->id = fr->hd.stream_id;
	mgw_headers_init(&s->h);
	s->body = evbuffer_new();
	s->out = evbuffer_new();
	u->s[u->ns++] = s;
	nghttp2_session_set_stream_user_data(ng, s->id, s);
	return 0;
}

static void cpy(char *dst, size_t cap, const uint8_t *v, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = 0;
}

static int h2_header(nghttp2_session *ng, const nghttp2_frame *fr,
                     const uint8_t *name, size_t nl, const uint8_t *value,
                     size_t vl, uint8_t flags, void *arg)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(ng, fr->hd.stream_id);

	(void)flags;
	(void)arg;
	if (!s)
		return 0;
	if (nl == 7 && memcmp(name, ":method", 7) == 0)
		cpy(s->method, sizeof(s->method), value, vl);
	else if (nl == 5 && memcmp(name, ":path", 5) == 0)
		cpy(s->path, sizeof(s->path), value, vl);
	else if (nl == 10 && memcmp(name, ":authority", 10) == 0)
		cpy(s->authority, sizeof(s->authority), value, vl);
	else if (nl == 7 && memcmp(name, ":scheme", 7) == 0)
		cpy(s->scheme, sizeof(s->scheme), value, vl);
	else
		mgw_headers_add(&s->h, (const char *)name, nl, (const char *)value, vl);
	return 0;
}

static int h2_data(nghttp2_session *ng, uint8_t flags, int32_t sid,
                   const uint8_t *data, size_t len, void *arg)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(ng, sid);

	(void)flags;
	(void)arg;
	if (s)
		evbuffer_add(s->body, data, len);
	return 0;
}

static int h2_frame_recv(nghttp2_session *ng, const nghttp2_frame *fr,
                         void *arg)
{
	struct up_conn *uc = arg;
	struct h2s *s;

	if (fr->hd.type == NGHTTP2_RST_STREAM) {
		s = nghttp2_session_get_stream_user_data(ng, fr->hd.stream_id);
		if (s) {
			s->rst_received = 1;
			s->rst_code = fr->rst_stream.error_code;
		}
		return 0;
	}
	if ((fr->hd.type != NGHTTP2_HEADERS && fr->hd.type != NGHTTP2_DATA) ||
	    !(fr->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	s = nghttp2_session_get_stream_user_data(ng, fr->hd.stream_id);
	if (!s)
		return 0;
	s->complete = 1;
	uc->nreq++;
	if (uc->u->on_request)
		uc->u->on_request(s);
	else
		h2s_respond(s, 200, NULL, "ok", 2, 1);
	return 0;
}

static int h2_stream_close(nghttp2_session *ng, int32_t sid, uint32_t code,
                           void *arg)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(ng, sid);

	(void)arg;
	if (s) {
		s->closed = 1;
		s->close_code = code;
	}
	return 0;
}

static ssize_t h2_read_out(nghttp2_session *ng, int32_t sid, uint8_t *buf,
                           size_t len, uint32_t *flags,
                           nghttp2_data_source *src, void *arg)
{
	struct h2s *s = src->ptr;
	size_t n = evbuffer_get_length(s->out);

	(void)ng;
	(void)sid;
	(void)arg;
	if (n == 0) {
		if (s->out_eof) {
			*flags |= NGHTTP2_DATA_FLAG_EOF;
			return 0;
		}
		return NGHTTP2_ERR_DEFERRED;
	}
	if (n > len)
		n = len;
	evbuffer_remove(s->out, buf, n);
	if (s->out_eof && evbuffer_get_length(s->out) == 0)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static void h2up_conn_init(struct up_conn *uc)
{
	nghttp2_session_callbacks *cbs;
	struct up *u = uc->u;
	nghttp2_settings_entry iv[2] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, u->h2_max_streams},
	    {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, u->h2_window},
	};

	assert_int_equal(nghttp2_session_callbacks_new(&cbs), 0);
	nghttp2_session_callbacks_set_send_callback(cbs, h2_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs,
	                                                        h2_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, h2_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, h2_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, h2_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
	                                                       h2_stream_close);
	{
		nghttp2_option *opt;

		assert_int_equal(nghttp2_option_new(&opt), 0);
		/* a server that never opens its windows again */
		if (u->h2_no_window_update)
			nghttp2_option_set_no_auto_window_update(opt, 1);
		assert_int_equal(nghttp2_session_server_new2(&uc->ng, cbs, uc, opt),
		                 0);
		nghttp2_option_del(opt);
	}
	nghttp2_session_callbacks_del(cbs);
	assert_int_equal(nghttp2_submit_settings(uc->ng, NGHTTP2_FLAG_NONE, iv, 2),
	                 0);
	h2up_flush(uc);
}

void h2up_start(struct up *u, struct event_base *base, SSL_CTX *tls,
                uint32_t max_streams, uint32_t window)
{
	up_start(u, base, tls);
	u->h2 = 1;
	u->h2_max_streams = max_streams ? max_streams : 100;
	u->h2_window = window ? window : 65535;
}

void h2up_flush(struct up_conn *uc)
{
	if (!uc->ng || !uc->bev || uc->in_ng)
		return;
	uc->in_ng++;
	int rv = nghttp2_session_send(uc->ng);
	uc->in_ng--;
	if (rv != 0 || (!nghttp2_session_want_read(uc->ng) &&
	                !nghttp2_session_want_write(uc->ng) &&
	                evbuffer_get_length(bufferevent_get_output(uc->bev)) == 0))
		up_close(uc);
}

static void h2up_read(struct up_conn *uc)
{
	struct evbuffer *in = bufferevent_get_input(uc->bev);
	size_t n = evbuffer_get_length(in);
	unsigned char *p = evbuffer_pullup(in, -1);

	if (uc->blackhole) {
		/* a dead peer: what arrives goes nowhere, nothing comes back */
		evbuffer_drain(in, n);
		return;
	}

	evbuffer_add(uc->rx, p, n);
	uc->in_ng++;
	ssize_t rv = nghttp2_session_mem_recv(uc->ng, p, n);
	uc->in_ng--;
	if (rv < 0) {
		up_close(uc);
		return;
	}
	evbuffer_drain(in, n);
	if (uc->u->read_limit && evbuffer_get_length(uc->rx) >= uc->u->read_limit) {
		up_close(uc);
		return;
	}
	h2up_flush(uc);
}

void h2s_respond(struct h2s *s, int status, const char *const *hdrs,
                 const void *body, size_t len, int end)
{
	nghttp2_nv nva[32];
	size_t n = 0;
	char st[8];
	nghttp2_data_provider prd;

	snprintf(st, sizeof(st), "%d", status);
	nva[n++] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)st, 7, strlen(st),
	                        NGHTTP2_NV_FLAG_NONE};
	for (size_t i = 0; hdrs && hdrs[i] && n < 32; i += 2)
		nva[n++] = (nghttp2_nv){(uint8_t *)hdrs[i], (uint8_t *)hdrs[i + 1],
		                        strlen(hdrs[i]), strlen(hdrs[i + 1]),
		                        NGHTTP2_NV_FLAG_NONE};
	if (body && len)
		evbuffer_add(s->out, body, len);
	s->out_eof = end;
	s->responded = 1;
	prd.source.ptr = s;
	prd.read_callback = h2_read_out;
	assert_int_equal(nghttp2_submit_response(s->uc->ng, s->id, nva, n, &prd), 0);
	h2up_flush(s->uc);
}

void h2s_write(struct h2s *s, const void *p, size_t n)
{
	evbuffer_add(s->out, p, n);
	if (s->uc->ng && !s->closed)
		nghttp2_session_resume_data(s->uc->ng, s->id);
	h2up_flush(s->uc);
}

void h2s_end(struct h2s *s)
{
	s->out_eof = 1;
	if (s->uc->ng && !s->closed)
		nghttp2_session_resume_data(s->uc->ng, s->id);
	h2up_flush(s->uc);
}

void h2s_rst(struct h2s *s, uint32_t code)
{
	nghttp2_submit_rst_stream(s->uc->ng, NGHTTP2_FLAG_NONE, s->id, code);
	h2up_flush(s->uc);
}

void h2up_goaway(struct up_conn *uc, int32_t last_sid, uint32_t code)
{
	nghttp2_submit_goaway(uc->ng, NGHTTP2_FLAG_NONE, last_sid, code, NULL, 0);
	h2up_flush(uc);
}

struct h2s *h2up_stream(struct up *u, int idx)
{
	return idx < u->ns ? u->s[idx] : NULL;
}

/* ---- recorder ---- */

static void on_head(struct mgw_client_req *r, int status,
                    const struct mgw_headers *h, void *arg)
{
	struct rec *rc = arg;

	rc->req = r;
	rc->nhead++;
	rc->h2 = mgw_client_req_is_h2(r);
	rc->status = status;
	for (size_t i = 0; i < h->n; i++)
		mgw_headers_add(&rc->h, h->v[i].name, h->v[i].name_len, h->v[i].value,
		                h->v[i].value_len);
	if (rc->cancel_on_head)
		mgw_client_cancel(r);
}

static void on_data(struct mgw_client_req *r, const unsigned char *p, size_t n,
                    void *arg)
{
	struct rec *rc = arg;

	rc->req = r;
	rc->ndata++;
	evbuffer_add(rc->body, p, n);
	if (rc->pause_after_data == rc->ndata)
		mgw_client_pause(r);
	if (rc->cancel_after_data == rc->ndata)
		mgw_client_cancel(r);
	if (rc->on_data_hook)
		rc->on_data_hook(rc);
}

static void on_end(struct mgw_client_req *r, void *arg)
{
	struct rec *rc = arg;

	(void)r;
	rc->ended++;
	rc->done = 1;
	rc->req = NULL;
}

static void on_error(struct mgw_client_req *r, const struct mgw_client_error *e,
                     void *arg)
{
	struct rec *rc = arg;

	(void)r;
	rc->failed++;
	rc->done = 1;
	rc->err = *e;
	snprintf(rc->errmsg, sizeof(rc->errmsg), "%s", e->msg ? e->msg : "");
	rc->err.msg = rc->errmsg;
	rc->req = NULL;
}

void rec_init(struct rec *rc)
{
	memset(rc, 0, sizeof(*rc));
	mgw_headers_init(&rc->h);
	rc->body = evbuffer_new();
	assert_non_null(rc->body);
}

void rec_deinit(struct rec *rc)
{
	mgw_headers_deinit(&rc->h);
	evbuffer_free(rc->body);
	rc->body = NULL;
	free(rc->bodystr);
	rc->bodystr = NULL;
}

void rec_spec(struct rec *rc, struct mgw_client_reqspec *spec)
{
	spec->on_head = on_head;
	spec->on_data = on_data;
	spec->on_end = on_end;
	spec->on_error = on_error;
	spec->arg = rc;
}

const char *rec_body(struct rec *rc)
{
	size_t n = evbuffer_get_length(rc->body);

	free(rc->bodystr);
	rc->bodystr = malloc(n + 1);
	assert_non_null(rc->bodystr);
	evbuffer_copyout(rc->body, rc->bodystr, n);
	rc->bodystr[n] = '\0';
	return rc->bodystr;
}

/* ---- loop ---- */

int cu_wait(struct event_base *base, const int *flag)
{
	uint64_t end = mgw_now_ms() + CU_WAIT_MS;

	while (!*flag && mgw_now_ms() < end) {
		struct timeval tv = {0, 10000};
		event_base_loopexit(base, &tv);
		event_base_loop(base, EVLOOP_ONCE);
	}
	return *flag;
}

void cu_pump(struct event_base *base, int n)
{
	while (n-- > 0) {
		struct timeval tv = {0, 10000};
		event_base_loopexit(base, &tv);
		event_base_loop(base, EVLOOP_ONCE);
	}
}

uint16_t cu_dead_port(void)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

/* ---- PKI ---- */

static void add_ext(X509 *issuer, X509 *x, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	assert_non_null(ext);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
}

static X509 *mkcert(EVP_PKEY *pk, const char *cn, X509 *issuer,
                    EVP_PKEY *issuer_key, long serial)
{
	X509 *x = X509_new();

	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, pk);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
	                           (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(issuer ? issuer : x));
	if (!issuer) {
		add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE");
		add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
		add_ext(x, x, NID_subject_key_identifier, "hash");
	} else {
		add_ext(issuer, x, NID_basic_constraints, "critical,CA:FALSE");
		add_ext(issuer, x, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
		add_ext(issuer, x, NID_ext_key_usage, "serverAuth");
		add_ext(issuer, x, NID_authority_key_identifier, "keyid");
	}
	assert_true(X509_sign(x, issuer_key ? issuer_key : pk, EVP_sha256()) > 0);
	return x;
}

static void write_pem(const char *path, X509 *x, EVP_PKEY *pk)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	if (x)
		assert_int_equal(PEM_write_X509(f, x), 1);
	else
		assert_int_equal(
		    PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
}

void cu_make_pki(const char *dir, char *ca, char *cert, char *key, size_t len)
{
	EVP_PKEY *cakey = EVP_EC_gen("P-256");
	EVP_PKEY *srvkey = EVP_EC_gen("P-256");
	X509 *cax, *srvx;

	assert_non_null(cakey);
	assert_non_null(srvkey);
	cax = mkcert(cakey, "mcpgw test CA", NULL, NULL, 1);
	srvx = mkcert(srvkey, "localhost", cax, cakey, 2);
	snprintf(ca, len, "%s/ca.pem", dir);
	snprintf(cert, len, "%s/cert.pem", dir);
	snprintf(key, len, "%s/key.pem", dir);
	write_pem(ca, cax, NULL);
	write_pem(cert, srvx, NULL);
	write_pem(key, NULL, srvkey);
	X509_free(cax);
	X509_free(srvx);
	EVP_PKEY_free(cakey);
	EVP_PKEY_free(srvkey);
}
