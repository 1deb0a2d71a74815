/* tls_client.h - OpenSSL contexts and connections for upstream TLS:
 * certificate verification against a CA file or the system store, the
 * peer name checked against the certificate, SNI, and ALPN offers. */
#ifndef MGW_NET_TLS_CLIENT_H
#define MGW_NET_TLS_CLIENT_H

#include <stddef.h>

#include <openssl/ssl.h>

/* Builds a client context: TLS 1.2+, compression and renegotiation off.
 * With verify != 0 the server's chain must verify against ca_file (PEM;
 * NULL = the system store) and connections made with mgw_tls_client_ssl()
 * also check the certificate's name.  verify == 0 turns every check off
 * and exists only for explicitly configured test setups.  On failure
 * returns NULL and writes a message naming the file to err. */
SSL_CTX *mgw_tls_client_ctx(const char *ca_file, int verify, char *err,
                            size_t errlen);

/* Adds a client certificate (PEM chain in cert_file) and its private
 * key (key_file) to ctx, for servers that ask for one.  Returns 0, or -1
 * with a message naming the file in err (one of the two missing, a file
 * that does not load, a key that does not match). */
int mgw_tls_client_cert(SSL_CTX *ctx, const char *cert_file,
                        const char *key_file, char *err, size_t errlen);

/* New SSL for one connection to name (a DNS name or an address literal):
 * SNI is sent for DNS names (RFC 6066 forbids it for addresses), and the
 * certificate must match name (SAN dNSName, or iPAddress for a literal)
 * when the context verifies.  alpn is a wire-format protocol list
 * ("\x02h2\x08http/1.1"), NULL for none.  Returns NULL on no memory or an
 * invalid name. */
SSL *mgw_tls_client_ssl(SSL_CTX *ctx, const char *name,
                        const unsigned char *alpn, size_t alpnlen);

/* After a failed handshake: the certificate verification failure as text,
 * or NULL when verification was not the cause. */
const char *mgw_tls_client_verify_error(const SSL *ssl);

/* Why a TLS connection failed, in buf: "TLS certificate verification
 * failed: REASON", else OpenSSL's error e ("TLS handshake failed: ..."
 * before the handshake completed, "TLS error: ..." after), else the
 * connection closed during the handshake. */
void mgw_tls_client_why(const SSL *ssl, unsigned long e, int established,
                        char *buf, size_t len);

#endif
