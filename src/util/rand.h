/* rand.h - cryptographically secure random bytes and identifiers. */
#ifndef MGW_UTIL_RAND_H
#define MGW_UTIL_RAND_H

#include <stddef.h>
#include <stdint.h>

/* Fills buf with len CSPRNG bytes (OpenSSL RAND_bytes). Returns 0 or
 * MGW_EIO; callers treat failure as fatal for anything security relevant. */
int mgw_random_bytes(void *buf, size_t len);

/* Writes a fresh identifier of nbytes random bytes (>= 16 for session ids)
 * as lowercase hex into out (needs 2*nbytes+1). Returns 0 or MGW_EIO. */
int mgw_random_hex(char *out, size_t nbytes);

/* Uniform random integer in [0, n) from a fast non-crypto generator
 * (xorshift, seeded from the CSPRNG), for load balancing and jitter. */
uint64_t mgw_random_below(uint64_t n);

#endif
