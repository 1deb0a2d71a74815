/* base64.c - strict base64 codec (both alphabets). Hand-written because
 * OpenSSL's EVP_DecodeBlock accepts whitespace and ignores trailing bits,
 * and strictness matters for header validation and sealed tokens. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"

static const char std_alpha[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alpha[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *mgw_base64_encode(const void *data, size_t len, int url)
{
	const unsigned char *in = data;
	const char *a = url ? url_alpha : std_alpha;
	char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*o++ = a[v >> 18];
		*o++ = a[(v >> 12) & 63];
		*o++ = a[(v >> 6) & 63];
		*o++ = a[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		*o++ = a[v >> 18];
		*o++ = a[(v >> 12) & 63];
		if (i + 1 < len)
			*o++ = a[(v >> 6) & 63];
		else if (!url)
			*o++ = '=';
		if (!url)
			*o++ = '=';
	}
	*o = '\0';
	return out;
}

static int sextet(unsigned char c, int url)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (url ? '-' : '+'))
		return 62;
	if (c == (url ? '_' : '/'))
		return 63;
	return -1;
}

unsigned char *mgw_base64_decode(const char *s, size_t slen, int url,
                                 size_t *outlen)
{
	size_t pad = 0, n, i, o = 0;
	unsigned char *out;
	uint32_t acc = 0;
	int bits = 0;

	if (!url) {
		if (slen % 4)
			return NULL;
		while (pad < 2 && slen > pad && s[slen - 1 - pad] == '=')
			pad++;
	} else if (slen % 4 == 1) {
		return NULL;
	}
	n = slen - pad;
	out = malloc(n * 3 / 4 + 2);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		int v = sextet((unsigned char)s[i], url);
		if (v < 0)
			goto fail;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (acc != 0) /* non-canonical: leftover bits must be zero */
		goto fail;
	out[o] = '\0';
	*outlen = o;
	return out;
fail:
	free(out);
	return NULL;
}
