/* tls.h - OpenSSL server/client contexts with ALPN. */
#ifndef MGW_NET_TLS_H
#define MGW_NET_TLS_H

#include <openssl/ssl.h>

/* Builds a TLS server context from PEM certificate chain and key files,
 * TLS 1.2+, ALPN selecting "h2" then "http/1.1".  On failure returns NULL
 * and writes a message (naming the file and OpenSSL's reason) to err. */
SSL_CTX *mgw_tls_server_ctx(const char *cert_file, const char *key_file,
                            char *err, size_t errlen);

#endif
