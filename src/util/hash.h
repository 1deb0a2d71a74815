/* hash.h - FNV-1a 64-bit, the one unkeyed string hash of the project (for
 * in-process tables whose keys no client chooses freely, or as a fallback
 * behind a keyed one). */
#ifndef MGW_UTIL_HASH_H
#define MGW_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define MGW_FNV1A_BASIS 14695981039346656037ULL
#define MGW_FNV1A_PRIME 1099511628211ULL

/* FNV-1a of n bytes at p. */
static inline uint64_t mgw_fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = MGW_FNV1A_BASIS;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * MGW_FNV1A_PRIME;
	return h;
}

/* FNV-1a of a NUL-terminated string (the NUL not included). */
static inline uint64_t mgw_fnv1a_str(const char *s)
{
	uint64_t h = MGW_FNV1A_BASIS;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * MGW_FNV1A_PRIME;
	return h;
}

#endif
