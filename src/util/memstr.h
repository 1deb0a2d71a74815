/* memstr.h - a NUL-terminated copy of n bytes that need not be
 * NUL-terminated themselves (a span of a received buffer).  strndup
 * stops at a NUL, but may look past n for one (AddressSanitizer's
 * strict_string_checks, which the test build runs with, reads the
 * string's whole length); this copies exactly n bytes. */
#ifndef MGW_UTIL_MEMSTR_H
#define MGW_UTIL_MEMSTR_H

#include <stdlib.h>
#include <string.h>

/* A malloc'd copy of p[0..n) plus a NUL, or NULL. */
static inline char *mgw_memstr(const void *p, size_t n)
{
	char *s = n < (size_t)-1 ? malloc(n + 1) : NULL;

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

#endif
