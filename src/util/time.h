/* time.h - monotonic and wall clocks in convenient units. */
#ifndef MGW_UTIL_TIME_H
#define MGW_UTIL_TIME_H

#include <stdint.h>
#include <sys/time.h>

/* Monotonic clock in nanoseconds / milliseconds (CLOCK_MONOTONIC). */
uint64_t mgw_now_ns(void);
uint64_t mgw_now_ms(void);

/* Wall clock in seconds since the epoch (for token expiry). */
int64_t mgw_wall_s(void);
/* The same in milliseconds (for expiries other processes read). */
uint64_t mgw_wall_ms(void);

/* Converts seconds to a struct timeval for libevent timers. */
struct timeval mgw_tv(double seconds);

#endif
