/* client_tls_test.c - upstream TLS in the client layer (src/net/tls_client.c
 * and the TLS paths of src/http/client.c): certificate verification
 * against a CA file generated in-process, name checks for DNS names and
 * address literals, SNI, ALPN choice of h2 or http/1.1, and the flags of
 * handshake failures. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "core/errors.h"
#include "net/tls.h"
#include "net/tls_client.h"
#include "tests/unit/http/client_util.h"

static char dir[64];
static char ca[128], cert[128], key[128];

struct fx {
	struct event_base *base;
	struct up up;
	SSL_CTX *srv;           /* server context (ALPN h2, http/1.1) */
	SSL_CTX *cli;
	struct mgw_client *cl;
	struct mgw_client_origin *o;
	char sni_seen[256];
	int sni_calls;
};

static int on_servername(SSL *ssl, int *al, void *arg)
{
	struct fx *f = arg;
	const char *n = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);

	(void)al;
	f->sni_calls++;
	snprintf(f->sni_seen, sizeof(f->sni_seen), "%s", n ? n : "");
	return SSL_TLSEXT_ERR_OK;
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/mgw-client-tls-XXXXXX");
	assert_non_null(mkdtemp(dir));
	cu_make_pki(dir, ca, cert, key, sizeof(ca));
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(ca);
	unlink(cert);
	unlink(key);
	rmdir(dir);
	return 0;
}

/* A server context without ALPN: an HTTP/1.1-only upstream. */
static SSL_CTX *srv_ctx_no_alpn(void)
{
	SSL_CTX *c = SSL_CTX_new(TLS_server_method());

	assert_non_null(c);
	assert_int_equal(SSL_CTX_use_certificate_chain_file(c, cert), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM), 1);
	return c;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	f->base = event_base_new();
	f->srv = mgw_tls_server_ctx(cert, key, err, sizeof(err));
	assert_non_null(f->srv);
	f->cli = mgw_tls_client_ctx(ca, 1, err, sizeof(err));
	if (!f->cli)
		fail_msg("%s", err);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	mgw_client_free(f->cl);
	up_stop(&f->up);
	SSL_CTX_free(f->srv);
	SSL_CTX_free(f->cli);
	event_base_free(f->base);
	free(f);
	return 0;
}

/* Client and origin (host, sni, proto) with context cli. */
static void fx_client(struct fx *f, SSL_CTX *cli, const char *host,
                      const char *sni, enum mgw_client_proto proto)
{
	struct mgw_client_origin_cfg oc = {0};

	f->cl = mgw_client_new(f->base, NULL);
	oc.host = host;
	oc.port = f->up.port;
	oc.proto = proto;
	oc.tls = cli;
	oc.sni = sni;
	assert_int_equal(mgw_client_origin_new(f->cl, &oc, &f->o), 0);
}

static void run(struct fx *f, struct rec *rc)
{
	struct mgw_client_reqspec sp = {0};

	rec_init(rc);
	sp.method = "POST";
	sp.target = "/mcp";
	sp.body = "{}";
	sp.body_len = 2;
	rec_spec(rc, &sp);
	assert_int_equal(mgw_client_request(f->o, &sp, NULL), 0);
	assert_true(cu_wait(f->base, &rc->done));
}

static void expect_ok(struct fx *f, int h2)
{
	struct rec rc;

	run(f, &rc);
	if (!rc.ended)
		fail_msg("request failed: %s", rc.errmsg);
	assert_int_equal(rc.status, 200);
	assert_string_equal(rec_body(&rc), "ok");
	assert_int_equal(rc.h2, h2);
	rec_deinit(&rc);
}

static void expect_tls_failure(struct fx *f, int code, const char *needle)
{
	struct rec rc;

	run(f, &rc);
	assert_int_equal(rc.failed, 1);
	assert_int_equal(rc.err.cls, MGW_CLIENT_E_TLS);
	assert_int_equal(rc.err.code, code);
	assert_true(rc.err.flags & MGW_CLIENT_F_NOT_SENT);
	assert_true(rc.err.flags & MGW_CLIENT_F_CONNECT);
	if (!strstr(rc.errmsg, needle))
		fail_msg("message \"%s\" lacks \"%s\"", rc.errmsg, needle);
	rec_deinit(&rc);
}

static void test_verified_dns_name_with_sni(void **state)
{
	struct fx *f = *state;

	SSL_CTX_set_tlsext_servername_callback(f->srv, on_servername);
	SSL_CTX_set_tlsext_servername_arg(f->srv, f);
	up_start(&f->up, f->base, f->srv);
	fx_client(f, f->cli, "localhost", NULL, MGW_CLIENT_H1);
	expect_ok(f, 0);
	expect_ok(f, 0);
	assert_int_equal(f->up.naccepted, 1); /* TLS keep-alive too */
	assert_string_equal(f->sni_seen, "localhost");
}

static void test_verified_ip_literal_without_sni(void **state)
{
	struct fx *f = *state;

	SSL_CTX_set_tlsext_servername_callback(f->srv, on_servername);
	SSL_CTX_set_tlsext_servername_arg(f->srv, f);
	up_start(&f->up, f->base, f->srv);
	fx_client(f, f->cli, "127.0.0.1", NULL, MGW_CLIENT_H1);
	expect_ok(f, 0);
	/* RFC 6066: no SNI for an address */
	assert_string_equal(f->sni_seen, "");
}

static void test_wrong_name_fails_verification(void **state)
{
	struct fx *f = *state;

	up_start(&f->up, f->base, f->srv);
	fx_client(f, f->cli, "127.0.0.1", "wrong.example", MGW_CLIENT_H1);
	expect_tls_failure(f, MGW_EAUTH, "verification failed");
	/* the upstream never saw a request */
	assert_int_equal(f->up.naccepted, 1);
	assert_int_equal(evbuffer_get_length(f->up.c[0]->rx), 0);
	struct mgw_client_stats st;
	mgw_client_stats(f->cl, NULL, &st);
	assert_int_equal(st.errors[MGW_CLIENT_E_TLS], 1);
	assert_int_equal(st.conns_failed, 1);
}

static void test_untrusted_issuer_fails(void **state)
{
	struct fx *f = *state;
	char err[256];
	SSL_CTX *sys = mgw_tls_client_ctx(NULL, 1, err, sizeof(err));

	assert_non_null(sys);
	up_start(&f->up, f->base, f->srv);
	fx_client(f, sys, "localhost", NULL, MGW_CLIENT_H1);
	SSL_CTX_free(sys); /* the origin holds its own reference */
	expect_tls_failure(f, MGW_EAUTH, "verification failed");
}

static void test_verification_off_is_explicit(void **state)
{
	struct fx *f = *state;
	char err[256];
	SSL_CTX *none = mgw_tls_client_ctx(NULL, 0, err, sizeof(err));

	assert_non_null(none);
	up_start(&f->up, f->base, f->srv);
	fx_client(f, none, "127.0.0.1", "wrong.example", MGW_CLIENT_H1);
	SSL_CTX_free(none);
	expect_ok(f, 0);
}

static void test_alpn_auto_picks_h2(void **state)
{
	struct fx *f = *state;

	h2up_start(&f->up, f->base, f->srv, 0, 0);
	fx_client(f, f->cli, "localhost", NULL, MGW_CLIENT_AUTO);
	expect_ok(f, 1);
	expect_ok(f, 1);
	assert_int_equal(f->up.naccepted, 1);
	assert_string_equal(f->up.s[0]->scheme, "https");
}

static void test_alpn_auto_falls_back_to_h1(void **state)
{
	struct fx *f = *state;
	SSL_CTX *plain = srv_ctx_no_alpn();

	up_start(&f->up, f->base, plain);
	SSL_CTX_free(plain);
	fx_client(f, f->cli, "localhost", NULL, MGW_CLIENT_AUTO);
	expect_ok(f, 0);
	expect_ok(f, 0);
	assert_int_equal(f->up.naccepted, 1);
}

static void test_h2_required_but_not_offered(void **state)
{
	struct fx *f = *state;
	SSL_CTX *plain = srv_ctx_no_alpn();

	up_start(&f->up, f->base, plain);
	SSL_CTX_free(plain);
	fx_client(f, f->cli, "localhost", NULL, MGW_CLIENT_H2);
	expect_tls_failure(f, MGW_EPROTO, "ALPN");
}

static void test_h2_over_tls(void **state)
{
	struct fx *f = *state;

	h2up_start(&f->up, f->base, f->srv, 0, 0);
	fx_client(f, f->cli, "localhost", NULL, MGW_CLIENT_H2);
	expect_ok(f, 1);
}

static void test_bad_ca_file(void **state)
{
	char err[256] = "";

	(void)state;
	assert_null(mgw_tls_client_ctx("/nonexistent/ca.pem", 1, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/ca.pem"));
	/* a certificate that is not a CA file still loads, but a key does not */
	assert_null(mgw_tls_client_ctx(key, 1, err, sizeof(err)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_verified_dns_name_with_sni, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_verified_ip_literal_without_sni, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_wrong_name_fails_verification, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_untrusted_issuer_fails, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_verification_off_is_explicit, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_alpn_auto_picks_h2, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_alpn_auto_falls_back_to_h1, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_required_but_not_offered, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_h2_over_tls, fx_setup, fx_teardown),
	    cmocka_unit_test(test_bad_ca_file),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
