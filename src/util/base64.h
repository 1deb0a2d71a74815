/* base64.h - standard (RFC 4648 §4) and URL-safe (§5, unpadded) base64. */
#ifndef MGW_UTIL_BASE64_H
#define MGW_UTIL_BASE64_H

#include <stddef.h>

/* Encodes len bytes; returns a malloc'd NUL-terminated string (caller frees)
 * or NULL on allocation failure.  url != 0 selects base64url without '='. */
char *mgw_base64_encode(const void *data, size_t len, int url);

/* Decodes a base64 (url == 0: standard alphabet, padding required when the
 * length is not a multiple of 4 is tolerated only if url) string of slen
 * bytes.  Rejects any byte outside the alphabet, misplaced padding and
 * non-zero trailing bits.  Returns a malloc'd buffer (NUL-terminated for
 * convenience, *outlen excludes it) or NULL on invalid input / no memory. */
unsigned char *mgw_base64_decode(const char *s, size_t slen, int url,
                                 size_t *outlen);

#endif
