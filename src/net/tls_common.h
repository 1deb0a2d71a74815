/* tls_common.h - what the server contexts (tls.c) and the upstream client
 * contexts (tls_client.c) share; private to src/net/. */
#ifndef MGW_NET_TLS_COMMON_H
#define MGW_NET_TLS_COMMON_H

#include <stddef.h>

#include <openssl/ssl.h>

/* Writes "what FILE: reason" to err (errlen bytes, may be NULL/0), the
 * reason being the earliest error on OpenSSL's queue (usually the
 * informative one), and clears the queue.  file NULL writes nothing in
 * its place (the text then reads "what : reason"). */
void mgw_tls_error(char *err, size_t errlen, const char *what,
                   const char *file);

/* Loads a PEM certificate chain and its private key into ctx and checks
 * they belong together; an encrypted key is refused (no passphrase
 * prompt: a daemon would block there).  Returns 0, or -1 with a message
 * naming the file in err. */
int mgw_tls_use_cert_key(SSL_CTX *ctx, const char *cert_file,
                         const char *key_file, char *err, size_t errlen);

#endif
