/* token.c - static bearer tokens, kept as SHA-256 digests (auth/jwt.h):
 * the configuration holds "sha256:HEX", never the token. */
#include "autoconf.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "auth/jwt.h"
#include "core/errors.h"

#define PREFIX "sha256:"

void mgw_token_digest(const char *token, size_t len,
                      unsigned char out[MGW_TOKEN_DIGEST_LEN])
{
	unsigned int n = 0;

	/* EVP_Digest only fails on an unusable OpenSSL: an all-zero digest
	 * then matches no configured one but the all-zero digest, which
	 * mgw_token_digest_parse refuses */
	if (EVP_Digest(token ? token : "", len, out, &n, EVP_sha256(), NULL) != 1 ||
	    n != MGW_TOKEN_DIGEST_LEN)
		memset(out, 0, MGW_TOKEN_DIGEST_LEN);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mgw_token_digest_parse(const char *s,
                           unsigned char out[MGW_TOKEN_DIGEST_LEN])
{
	unsigned char d[MGW_TOKEN_DIGEST_LEN], any = 0;

	if (!s || strncmp(s, PREFIX, strlen(PREFIX)) != 0)
		return MGW_EINVAL;
	s += strlen(PREFIX);
	if (strlen(s) != 2 * MGW_TOKEN_DIGEST_LEN)
		return MGW_EINVAL;
	for (size_t i = 0; i < MGW_TOKEN_DIGEST_LEN; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return MGW_EINVAL;
		d[i] = (unsigned char)(hi << 4 | lo);
		any |= d[i];
	}
	if (!any) /* what a failed digest yields (mgw_token_digest) */
		return MGW_EINVAL;
	memcpy(out, d, sizeof(d));
	return 0;
}

int mgw_token_digest_equal(const unsigned char *a, const unsigned char *b)
{
	return CRYPTO_memcmp(a, b, MGW_TOKEN_DIGEST_LEN) == 0;
}
