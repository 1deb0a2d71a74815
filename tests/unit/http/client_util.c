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
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tests/unit/http/client_util.h"
#include "util/time.h"

/* ---- scripted upstream ---- */

static void uc_free(struct up_conn *uc)
{
	if (uc->bev) {
		bufferevent_free(uc->bev);
		uc->bev = NULL;
	}
}

static void on_up_read(struct bufferevent *bev, void *arg)
{
	struct up_conn *uc = arg;
	struct up *u = uc->u;

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

	if (uc->close_when_flushed &&
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

/* ---- recorder ---- */

static void on_head(struct mgw_client_req *r, int status,
                    const struct mgw_headers *h, void *arg)
{
	struct rec *rc = arg;

	rc->req = r;
	rc->nhead++;
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
