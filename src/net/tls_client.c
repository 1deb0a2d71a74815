/* tls_client.c - upstream TLS contexts.  Verification is on unless the
 * operator explicitly turns it off: a gateway that does not check its
 * upstreams' certificates hands every request to whoever sits on the path.
 * Names are checked by OpenSSL itself (SSL_set1_host / IP parameters), not
 * by hand-written matching. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "net/tls_client.h"
#include "net/tls_common.h"

/* Builds a client context (see tls_client.h).  The system store comes from
 * OpenSSL's default paths, which Debian points at /etc/ssl/certs. */
SSL_CTX *mgw_tls_client_ctx(const char *ca_file, int verify, char *err,
                            size_t errlen)
{
	SSL_CTX *ctx;

	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		mgw_tls_error(err, errlen, "creating TLS client context", NULL);
		goto fail;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		mgw_tls_error(err, errlen, "setting TLS 1.2 minimum", NULL);
		goto fail;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
	if (!verify) {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
		return ctx;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (ca_file) {
		if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
			mgw_tls_error(err, errlen, "loading CA file", ca_file);
			goto fail;
		}
	} else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
		mgw_tls_error(err, errlen, "loading the system CA store", NULL);
		goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

int mgw_tls_client_cert(SSL_CTX *ctx, const char *cert_file,
                        const char *key_file, char *err, size_t errlen)
{
	ERR_clear_error();
	if (!cert_file || !key_file) {
		snprintf(err, errlen, "a client certificate needs both cert_file "
		         "and key_file");
		return -1;
	}
	return mgw_tls_use_cert_key(ctx, cert_file, key_file, err, errlen);
}

static int is_ip_literal(const char *name)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, name, buf) == 1 ||
	       inet_pton(AF_INET6, name, buf) == 1;
}

/* New SSL for one upstream connection (see tls_client.h). */
SSL *mgw_tls_client_ssl(SSL_CTX *ctx, const char *name,
                        const unsigned char *alpn, size_t alpnlen)
{
	SSL *ssl;

	if (!ctx || !name || !*name)
		return NULL;
	ssl = SSL_new(ctx);
	if (!ssl)
		return NULL;
	if (is_ip_literal(name)) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) != 1)
			goto fail;
	} else {
		if (SSL_set_tlsext_host_name(ssl, name) != 1)
			goto fail;
		X509_VERIFY_PARAM_set_hostflags(SSL_get0_param(ssl),
		                                X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		if (SSL_set1_host(ssl, name) != 1)
			goto fail;
	}
	/* SSL_set_alpn_protos returns 0 on success, unlike most of OpenSSL */
	if (alpn && alpnlen && SSL_set_alpn_protos(ssl, alpn, (unsigned)alpnlen) != 0)
		goto fail;
	SSL_set_connect_state(ssl);
	return ssl;
fail:
	ERR_clear_error();
	SSL_free(ssl);
	return NULL;
}

const char *mgw_tls_client_verify_error(const SSL *ssl)
{
	long v;

	if (!ssl || SSL_get_verify_mode(ssl) == SSL_VERIFY_NONE)
		return NULL;
	v = SSL_get_verify_result(ssl);
	return v == X509_V_OK ? NULL : X509_verify_cert_error_string(v);
}

void mgw_tls_client_why(const SSL *ssl, unsigned long e, int established,
                        char *buf, size_t len)
{
	const char *v = established ? NULL : mgw_tls_client_verify_error(ssl);
	char reason[200];

	if (v) {
		snprintf(buf, len, "TLS certificate verification failed: %s", v);
	} else if (e) {
		ERR_error_string_n(e, reason, sizeof(reason));
		snprintf(buf, len, "%s: %s", established ? "TLS error"
		         : "TLS handshake failed", reason);
	} else {
		snprintf(buf, len, "TLS handshake failed: connection closed");
	}
	ERR_clear_error();
}
