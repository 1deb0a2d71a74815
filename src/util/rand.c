/* rand.c - CSPRNG wrappers (OpenSSL) and a per-thread fast generator. */
#include "autoconf.h"

#include <openssl/rand.h>

#include "core/errors.h"
#include "util/rand.h"

int mgw_random_bytes(void *buf, size_t len)
{
	return RAND_bytes(buf, (int)len) == 1 ? 0 : MGW_EIO;
}

int mgw_random_hex(char *out, size_t nbytes)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[64];

	if (nbytes > sizeof(raw) || mgw_random_bytes(raw, nbytes) != 0)
		return MGW_EIO;
	for (size_t i = 0; i < nbytes; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[2 * nbytes] = '\0';
	return 0;
}

uint64_t mgw_random_below(uint64_t n)
{
	static _Thread_local uint64_t s;

	if (n == 0)
		return 0;
	while (s == 0)
		mgw_random_bytes(&s, sizeof(s));
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s % n;
}
