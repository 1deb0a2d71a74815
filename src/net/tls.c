/* tls.c - OpenSSL server contexts for the TLS listeners: TLS 1.2+, a PEM
 * certificate chain and key, and ALPN that prefers h2 over http/1.1.
 * Failures are reported as text naming the file, because a wrong path or
 * a key that does not match is the common operator mistake. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "net/tls.h"
#include "net/tls_common.h"

/* Our ALPN preference, in wire format (length-prefixed strings). */
static const unsigned char alpn_server[] = "\x02h2\x08http/1.1";

/* Walks the server preference list and returns the first protocol the
 * client also offered.  Written out instead of SSL_select_next_proto()
 * because that function falls back to a protocol the client did not ask
 * for when there is no overlap; we prefer to send no ALPN at all then. */
static int on_alpn_select(SSL *ssl, const unsigned char **out,
                          unsigned char *outlen, const unsigned char *in,
                          unsigned int inlen, void *arg)
{
	size_t s = 0;
	const size_t slen = sizeof(alpn_server) - 1;

	while (s < slen) {
		unsigned int sl = alpn_server[s];
		unsigned int c = 0;
		while (c < inlen) {
			unsigned int cl = in[c];
			if (c + 1 + cl > inlen)
				break; /* malformed client list: stop looking */
			if (cl == sl && memcmp(in + c + 1, alpn_server + s + 1, sl) == 0) {
				*out = alpn_server + s + 1;
				*outlen = (unsigned char)sl;
				return SSL_TLSEXT_ERR_OK;
			}
			c += 1 + cl;
		}
		s += 1 + sl;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

/* Builds a TLS server context from PEM certificate chain and key files,
 * TLS 1.2+, ALPN selecting "h2" then "http/1.1".  The cipher list for
 * TLS 1.2 is limited to ECDHE with AEAD, as HTTP/2 (RFC 9113 §9.2.2)
 * requires; TLS 1.3 suites are OpenSSL's defaults.  On failure returns
 * NULL and writes a message naming the file and OpenSSL's reason to err. */
SSL_CTX *mgw_tls_server_ctx(const char *cert_file, const char *key_file,
                            char *err, size_t errlen)
{
	SSL_CTX *ctx = NULL;

	ERR_clear_error();
	if (!cert_file || !key_file) {
		if (err && errlen)
			snprintf(err, errlen, "TLS needs both a certificate and a key file");
		goto fail;
	}
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		mgw_tls_error(err, errlen, "creating TLS context for", cert_file);
		goto fail;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		mgw_tls_error(err, errlen, "setting TLS 1.2 minimum for", cert_file);
		goto fail;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
	                             SSL_OP_CIPHER_SERVER_PREFERENCE);
	if (SSL_CTX_set_cipher_list(ctx,
	                            "ECDHE-ECDSA-AES128-GCM-SHA256:"
	                            "ECDHE-RSA-AES128-GCM-SHA256:"
	                            "ECDHE-ECDSA-AES256-GCM-SHA384:"
	                            "ECDHE-RSA-AES256-GCM-SHA384:"
	                            "ECDHE-ECDSA-CHACHA20-POLY1305:"
	                            "ECDHE-RSA-CHACHA20-POLY1305") != 1) {
		mgw_tls_error(err, errlen, "setting ciphers for", cert_file);
		goto fail;
	}
	if (mgw_tls_use_cert_key(ctx, cert_file, key_file, err, errlen) != 0)
		goto fail;
	SSL_CTX_set_alpn_select_cb(ctx, on_alpn_select, NULL);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}
