/* tbucket.c - the token bucket (tbucket.h). */
#include "autoconf.h"

#include <math.h>

#include "util/tbucket.h"

void mgw_tbucket_init(struct mgw_tbucket *b, double burst, uint64_t now_ns)
{
	b->tokens = burst;
	b->t_ns = now_ns;
}

static double refilled(const struct mgw_tbucket *b, double rate, double burst,
                       uint64_t now_ns)
{
	double tok = b->tokens;

	if (now_ns > b->t_ns)
		tok += rate * (double)(now_ns - b->t_ns) / 1e9;
	return tok > burst ? burst : tok;
}

int mgw_tbucket_take(struct mgw_tbucket *b, double rate, double burst,
                     uint64_t now_ns, double *wait_s)
{
	double tok = refilled(b, rate, burst, now_ns);

	if (now_ns > b->t_ns)
		b->t_ns = now_ns;
	if (tok >= 1.0) {
		b->tokens = tok - 1.0;
		return 1;
	}
	b->tokens = tok;
	if (wait_s)
		*wait_s = rate > 0 ? (1.0 - tok) / rate : 3600.0;
	return 0;
}

int mgw_tbucket_full(const struct mgw_tbucket *b, double rate, double burst,
                     uint64_t now_ns)
{
	return refilled(b, rate, burst, now_ns) >= burst;
}

unsigned mgw_tbucket_retry_after(double wait_s)
{
	double s;

	if (!(wait_s > 0))
		return 1;
	if (wait_s > 86400.0)
		return 86400;
	/* a hair of float noise above a whole second is not a second more */
	s = ceil(wait_s - 1e-9);
	return s < 1 ? 1 : (unsigned)s;
}
