/* tls_common.c - OpenSSL error text and certificate loading shared by
 * the server and the client contexts (see tls_common.h). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "net/tls_common.h"

void mgw_tls_error(char *err, size_t errlen, const char *what,
                   const char *file)
{
	unsigned long e = ERR_get_error();
	char reason[256] = "unknown error";

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	if (err && errlen)
		snprintf(err, errlen, "%s %s: %s", what, file ? file : "", reason);
}

static int no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)arg;
	return 0;
}

/* 1 when the PEM file holds an encrypted private key. */
static int key_is_encrypted(const char *path)
{
	char line[256];
	int enc = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (!enc && fgets(line, sizeof(line), f))
		enc = strstr(line, "ENCRYPTED") != NULL;
	fclose(f);
	return enc;
}

/* The key does not belong to the certificate: says so, naming both. */
static void key_mismatch(char *err, size_t errlen, const char *cert_file,
                         const char *key_file)
{
	char what[512];

	snprintf(what, sizeof(what),
	         "private key does not match certificate %s; key", cert_file);
	mgw_tls_error(err, errlen, what, key_file);
}

int mgw_tls_use_cert_key(SSL_CTX *ctx, const char *cert_file,
                         const char *key_file, char *err, size_t errlen)
{
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		mgw_tls_error(err, errlen, "loading certificate chain", cert_file);
		return -1;
	}
	/* No passphrase prompt on the terminal (a daemon would block there
	 * before its loop runs): an encrypted key fails to load. */
	SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
		/* OpenSSL compares the key with the certificate while loading */
		if (key_is_encrypted(key_file)) {
			mgw_tls_error(err, errlen, "encrypted private keys are not "
			              "supported (decrypt it, e.g. openssl pkey -in KEY "
			              "-out KEY.plain); key", key_file);
		} else if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
			key_mismatch(err, errlen, cert_file, key_file);
		} else {
			mgw_tls_error(err, errlen, "loading private key", key_file);
		}
		return -1;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		key_mismatch(err, errlen, cert_file, key_file);
		return -1;
	}
	return 0;
}
