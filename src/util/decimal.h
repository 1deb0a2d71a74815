/* decimal.h - an unsigned integer written in decimal, without printf
 * (a Content-Length or a status on every proxied request: snprintf
 * costs some 800 instructions where this costs about 60). */
#ifndef MGW_UTIL_DECIMAL_H
#define MGW_UTIL_DECIMAL_H

#include <stdint.h>
#include <string.h>

/* The most digits a uint64_t has, and the buffer that holds them and a
 * NUL. */
#define MGW_DEC_MAX 20
#define MGW_DEC_BUF (MGW_DEC_MAX + 1)

/* Writes v's decimal digits to out (at least MGW_DEC_BUF bytes) and a
 * NUL after them; returns how many digits. */
static inline size_t mgw_dec(char *out, uint64_t v)
{
	char d[MGW_DEC_MAX];
	size_t i = sizeof(d), n;

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	n = sizeof(d) - i;
	memcpy(out, d + i, n);
	out[n] = '\0';
	return n;
}

#endif
