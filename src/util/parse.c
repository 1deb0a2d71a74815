/* parse.c - strict value parsers for flags and configuration. */
#include "autoconf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "util/parse.h"

/* Only plain decimal numbers: strtod alone would also take leading
 * blanks, signs, hex ("0x10"), exponents and "inf". */
int mgw_parse_duration(const char *s, double *out)
{
	char *end;
	double v, mul = 1.0;
	size_t n;

	if (!s)
		return MGW_EINVAL;
	n = strspn(s, "0123456789.");
	if (n == 0)
		return MGW_EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end != s + n || errno || !isfinite(v))
		return MGW_EINVAL;
	if (strcmp(end, "ms") == 0)
		mul = 0.001;
	else if (strcmp(end, "s") == 0 || *end == '\0')
		mul = 1.0;
	else if (strcmp(end, "m") == 0)
		mul = 60.0;
	else if (strcmp(end, "h") == 0)
		mul = 3600.0;
	else
		return MGW_EINVAL;
	if (!isfinite(v * mul))
		return MGW_EINVAL;
	*out = v * mul;
	return 0;
}

int mgw_parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *sfx; unsigned shift; } units[] = {
		{"", 0}, {"k", 10}, {"K", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20},
		{"G", 30}, {"GiB", 30},
	};
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return MGW_EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return MGW_EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].sfx) == 0) {
			if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
				return MGW_EINVAL;
			*out = (uint64_t)v << units[i].shift;
			return 0;
		}
	}
	return MGW_EINVAL;
}

int mgw_parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	/* strtoll would also skip blanks and take a '+' sign */
	if (!s || (*s != '-' && (*s < '0' || *s > '9')))
		return MGW_EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return MGW_EINVAL;
	*out = v;
	return 0;
}

/* Blanks, control bytes and stray brackets cannot be part of a name or an
 * address; refusing them here gives a clear error instead of a failed
 * lookup later. */
static int host_chars_ok(const char *h, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)h[i];
		if (c <= 0x20 || c >= 0x7f || c == '[' || c == ']' || c == '/')
			return 0;
	}
	return 1;
}

int mgw_parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon, *hs = s;
	size_t hl;
	long long p;

	if (!s || !*s)
		return MGW_EINVAL;
	if (*s == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return MGW_EINVAL;
		hs = s + 1;
		hl = (size_t)(rb - hs);
		colon = rb + 1;
		if (hl == 0) /* "[]:80" names no address at all */
			return MGW_EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return MGW_EINVAL;
		hl = (size_t)(colon - s);
	}
	if (colon[1] < '0' || colon[1] > '9' ||
	    mgw_parse_int(colon + 1, 0, 65535, &p) != 0)
		return MGW_EINVAL;
	if (hl == 0) {
		hs = "0.0.0.0";
		hl = strlen(hs);
	}
	if (hl + 1 > hostlen || !host_chars_ok(hs, hl))
		return MGW_EINVAL;
	memcpy(host, hs, hl);
	host[hl] = '\0';
	*port = (uint16_t)p;
	return 0;
}
