/* tls_test.c - TLS listeners (src/net/tls.c with src/http/server.c): the
 * context builder's errors, and ALPN choosing h2 or http/1.1 with a real
 * handshake against a throwaway certificate made in-process. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "core/log.h"
#include "http/server.h"
#include "net/tls.h"
#include "util/time.h"
#include "testsrv.h"

struct fixture {
	char dir[64];
	char cert[128];
	char key[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	const char *tmp = getenv("TMPDIR");

	snprintf(f->dir, sizeof(f->dir), "%s/mgw-tls-XXXXXX",
	         tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	ts_make_cert(f->dir, f->cert, sizeof(f->cert), f->key, sizeof(f->key));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char other[160];

	unlink(f->cert);
	unlink(f->key);
	snprintf(other, sizeof(other), "%s/other.pem", f->dir);
	unlink(other);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void test_ctx_errors(void **state)
{
	struct fixture *f = *state;
	char err[512], other[160];
	SSL_CTX *ctx;
	EVP_PKEY *pk;
	FILE *fp;

	ctx = mgw_tls_server_ctx(f->cert, f->key, err, sizeof(err));
	assert_non_null(ctx);
	SSL_CTX_free(ctx);

	err[0] = '\0';
	assert_null(mgw_tls_server_ctx("/nonexistent/cert.pem", f->key, err,
	                               sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/cert.pem"));

	err[0] = '\0';
	assert_null(mgw_tls_server_ctx(f->cert, "/nonexistent/key.pem", err,
	                               sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/key.pem"));

	/* a key that does not belong to the certificate */
	snprintf(other, sizeof(other), "%s/other.pem", f->dir);
	pk = EVP_RSA_gen(2048);
	fp = fopen(other, "w");
	assert_non_null(fp);
	PEM_write_PrivateKey(fp, pk, NULL, NULL, 0, NULL, NULL);
	fclose(fp);
	EVP_PKEY_free(pk);
	err[0] = '\0';
	assert_null(mgw_tls_server_ctx(f->cert, other, err, sizeof(err)));
	assert_non_null(strstr(err, other));
	assert_non_null(strstr(err, "does not match"));

	/* a certificate file that is not PEM */
	err[0] = '\0';
	assert_null(mgw_tls_server_ctx(other, f->key, err, sizeof(err)));
	assert_non_null(strstr(err, other));

	/* the right key, encrypted: refused with a message, no prompt on
	 * the terminal */
	fp = fopen(f->key, "r");
	assert_non_null(fp);
	pk = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	assert_non_null(pk);
	snprintf(other, sizeof(other), "%s/encrypted.pem", f->dir);
	fp = fopen(other, "w");
	assert_non_null(fp);
	assert_int_equal(PEM_write_PrivateKey(fp, pk, EVP_aes_256_cbc(),
	                                      (unsigned char *)"pw", 2, NULL,
	                                      NULL), 1);
	fclose(fp);
	EVP_PKEY_free(pk);
	err[0] = '\0';
	assert_null(mgw_tls_server_ctx(f->cert, other, err, sizeof(err)));
	assert_non_null(strstr(err, "encrypted private keys are not supported"));
	assert_non_null(strstr(err, other));
}

/* Client side: a TLS connection over a non-blocking socket, handshaking
 * while the server loop is pumped. */
struct tlsc {
	struct ts *t;
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
};

static void tlsc_open(struct ts *t, struct tlsc *c, const unsigned char *alpn,
                      unsigned alen)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;
	int r;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->ctx = SSL_CTX_new(TLS_client_method());
	assert_non_null(c->ctx);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_NONE, NULL); /* self-signed */
	if (alpn)
		assert_int_equal(SSL_CTX_set_alpn_protos(c->ctx, alpn, alen), 0);
	c->fd = ts_connect_addr(t->addr);
	assert_true(c->fd >= 0);
	c->ssl = SSL_new(c->ctx);
	SSL_set_fd(c->ssl, c->fd);
	SSL_set_tlsext_host_name(c->ssl, "localhost");
	while ((r = SSL_connect(c->ssl)) != 1 && mgw_now_ms() < end) {
		int e = SSL_get_error(c->ssl, r);
		assert_true(e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE);
		ts_pump(t, 1);
	}
	assert_int_equal(r, 1);
}

static void tlsc_close(struct tlsc *c)
{
	SSL_free(c->ssl);
	SSL_CTX_free(c->ctx);
	close(c->fd);
	ts_pump(c->t, 2);
}

static const char *tlsc_alpn(struct tlsc *c, char *buf, size_t len)
{
	const unsigned char *p = NULL;
	unsigned int n = 0;

	SSL_get0_alpn_selected(c->ssl, &p, &n);
	snprintf(buf, len, "%.*s", (int)n, p ? (const char *)p : "");
	return buf;
}

static void tlsc_write(struct tlsc *c, const void *p, size_t n)
{
	uint64_t end = mgw_now_ms() + TS_WAIT_MS;
	int r;

	while ((r = SSL_write(c->ssl, p, (int)n)) <= 0 && mgw_now_ms() < end) {
		int e = SSL_get_error(c->ssl, r);
		assert_true(e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE);
		ts_pump(c->t, 1);
	}
	assert_int_equal(r, (int)n);
}

/* Reads what is available now: >0 bytes, 0 none yet, -1 closed. */
static int tlsc_read(struct tlsc *c, void *buf, size_t len)
{
	int r = SSL_read(c->ssl, buf, (int)len);

	if (r > 0)
		return r;
	int e = SSL_get_error(c->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	return -1;
}

static void test_alpn_http11(void **state)
{
	struct fixture *f = *state;
	struct ts t;
	struct tlsc c;
	char err[256], alpn[32], got[4096] = "";
	size_t n = 0;
	SSL_CTX *ctx = mgw_tls_server_ctx(f->cert, f->key, err, sizeof(err));
	uint64_t end;

	assert_non_null(ctx);
	ts_start(&t, NULL, ctx);
	SSL_CTX_free(ctx); /* the server holds its own reference */

	for (int pass = 0; pass < 2; pass++) {
		/* pass 0: ALPN offers only http/1.1; pass 1: no ALPN at all */
		if (pass == 0)
			tlsc_open(&t, &c, (const unsigned char *)"\x08http/1.1", 9);
		else
			tlsc_open(&t, &c, NULL, 0);
		assert_string_equal(tlsc_alpn(&c, alpn, sizeof(alpn)),
		                    pass == 0 ? "http/1.1" : "");
		tlsc_write(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n", 31);
		n = 0;
		end = mgw_now_ms() + TS_WAIT_MS;
		while (!strstr(got, "GET /echo\n") && mgw_now_ms() < end) {
			int r = tlsc_read(&c, got + n, sizeof(got) - n - 1);
			assert_true(r >= 0);
			n += (size_t)r;
			got[n] = '\0';
			if (r == 0)
				ts_pump(&t, 1);
		}
		assert_int_equal(strncmp(got, "HTTP/1.1 200 OK\r\n", 17), 0);
		assert_non_null(strstr(got, "\r\n\r\nGET /echo\n"));
		assert_int_equal(t.last_version, 11);
		got[0] = '\0';
		tlsc_close(&c);
	}
	ts_stop(&t);
}

/* "Connection: close" ends with close_notify, so the client can tell the
 * response was complete. */
static void test_close_notify(void **state)
{
	struct fixture *f = *state;
	struct ts t;
	struct tlsc c;
	char err[256], buf[4096];
	SSL_CTX *ctx = mgw_tls_server_ctx(f->cert, f->key, err, sizeof(err));
	uint64_t end;
	int r = 0, e = 0;

	assert_non_null(ctx);
	ts_start(&t, NULL, ctx);
	SSL_CTX_free(ctx);
	tlsc_open(&t, &c, (const unsigned char *)"\x08http/1.1", 9);
	tlsc_write(&c, "GET /echo HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", 50);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (mgw_now_ms() < end) {
		r = SSL_read(c.ssl, buf, sizeof(buf));
		if (r > 0)
			continue;
		e = SSL_get_error(c.ssl, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			break;
		ts_pump(&t, 1);
	}
	assert_int_equal(e, SSL_ERROR_ZERO_RETURN);
	ERR_clear_error();
	tlsc_close(&c);
	ts_stop(&t);
}

/* nghttp2 client over the TLS connection */
static ssize_t h2_send(nghttp2_session *ng, const uint8_t *data, size_t len,
                       int flags, void *arg)
{
	tlsc_write(arg, data, len);
	return (ssize_t)len;
}

struct h2res {
	int status;
	char body[256];
	size_t blen;
	int closed;
};

static int h2_header(nghttp2_session *ng, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *arg)
{
	struct h2res *r = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);

	if (r && namelen == 7 && memcmp(name, ":status", 7) == 0)
		r->status = atoi((const char *)value);
	return 0;
}

static int h2_data(nghttp2_session *ng, uint8_t flags, int32_t id,
                   const uint8_t *data, size_t len, void *arg)
{
	struct h2res *r = nghttp2_session_get_stream_user_data(ng, id);

	if (r && r->blen + len < sizeof(r->body)) {
		memcpy(r->body + r->blen, data, len);
		r->blen += len;
	}
	return 0;
}

static int h2_close(nghttp2_session *ng, int32_t id, uint32_t err, void *arg)
{
	struct h2res *r = nghttp2_session_get_stream_user_data(ng, id);

	if (r)
		r->closed = 1;
	return 0;
}

static void test_alpn_h2(void **state)
{
	struct fixture *f = *state;
	struct ts t;
	struct tlsc c;
	char err[256], alpn[32];
	SSL_CTX *ctx = mgw_tls_server_ctx(f->cert, f->key, err, sizeof(err));
	nghttp2_session_callbacks *cbs;
	nghttp2_session *ng;
	struct h2res res;
	uint64_t end;

	assert_non_null(ctx);
	ts_start(&t, NULL, ctx);
	SSL_CTX_free(ctx);
	tlsc_open(&t, &c, (const unsigned char *)"\x02h2\x08http/1.1", 12);
	assert_string_equal(tlsc_alpn(&c, alpn, sizeof(alpn)), "h2");

	assert_int_equal(nghttp2_session_callbacks_new(&cbs), 0);
	nghttp2_session_callbacks_set_send_callback(cbs, h2_send);
	nghttp2_session_callbacks_set_on_header_callback(cbs, h2_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, h2_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, h2_close);
	assert_int_equal(nghttp2_session_client_new(&ng, cbs, &c), 0);
	nghttp2_session_callbacks_del(cbs);
	nghttp2_submit_settings(ng, NGHTTP2_FLAG_NONE, NULL, 0);
	memset(&res, 0, sizeof(res));
	nghttp2_nv nva[] = {
		{(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
		{(uint8_t *)":path", (uint8_t *)"/echo", 5, 5, 0},
		{(uint8_t *)":scheme", (uint8_t *)"https", 7, 5, 0},
		{(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0},
	};
	assert_true(nghttp2_submit_request(ng, NULL, nva, 4, NULL, &res) > 0);
	end = mgw_now_ms() + TS_WAIT_MS;
	while (!res.closed && mgw_now_ms() < end) {
		unsigned char buf[16384];
		int r;
		assert_int_equal(nghttp2_session_send(ng), 0);
		ts_pump(&t, 1);
		while ((r = tlsc_read(&c, buf, sizeof(buf))) > 0)
			assert_int_equal(nghttp2_session_mem_recv(ng, buf, (size_t)r), r);
		assert_true(r == 0);
	}
	assert_true(res.closed);
	assert_int_equal(res.status, 200);
	assert_int_equal(res.blen, 10);
	assert_memory_equal(res.body, "GET /echo\n", 10);
	assert_int_equal(t.last_version, 20);
	nghttp2_session_del(ng);
	tlsc_close(&c);
	ts_stop(&t);
}

int main(void)
{
	mgw_log_set_level(MGW_LOG_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctx_errors),
		cmocka_unit_test(test_alpn_http11),
		cmocka_unit_test(test_alpn_h2),
		cmocka_unit_test(test_close_notify),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
