/* parse.h - parsers for the value syntaxes shared by flags and config
 * files: durations, byte sizes, HOST:PORT and integers. */
#ifndef MGW_UTIL_PARSE_H
#define MGW_UTIL_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* "250ms", "10s", "2m", "1h" or a bare number of seconds ("1.5").
 * Returns 0 and *out in seconds, or MGW_EINVAL. Negative values rejected. */
int mgw_parse_duration(const char *s, double *out);

/* "4096", "64k"/"64KiB", "4M"/"4MiB", "1G"/"1GiB" (binary units).
 * Returns 0 or MGW_EINVAL (also on overflow). */
int mgw_parse_size(const char *s, uint64_t *out);

/* Whole decimal integer within [min, max]. Returns 0 or MGW_EINVAL. */
int mgw_parse_int(const char *s, long long min, long long max, long long *out);

/* Splits "HOST:PORT", "[V6]:PORT" or ":PORT" (host "0.0.0.0").
 * host receives the host without brackets. Returns 0 or MGW_EINVAL. */
int mgw_parse_hostport(const char *s, char *host, size_t hostlen,
                       uint16_t *port);

#endif
