/* prng.h - the fuzz harnesses' split PRNG: xorshift64*, deterministic per
 * input, so a crash replays from the input alone. */
#ifndef MGW_TESTS_FUZZ_PRNG_H
#define MGW_TESTS_FUZZ_PRNG_H

#include <stdint.h>

struct prng {
	uint64_t s;
};

static inline uint32_t rnd(struct prng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 0x2545F4914F6CDD1DULL) >> 32);
}

#endif
