/* time.c - clock helpers. */
#include "autoconf.h"

#include <time.h>

#include "util/time.h"

uint64_t mgw_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t mgw_now_ms(void) { return mgw_now_ns() / 1000000ull; }

int64_t mgw_wall_s(void) { return (int64_t)time(NULL); }

uint64_t mgw_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct timeval mgw_tv(double seconds)
{
	struct timeval tv;
	if (seconds < 0)
		seconds = 0;
	tv.tv_sec = (time_t)seconds;
	tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
	return tv;
}
