/* checks.c - parsing behind the transport checks: which responses a
 * client accepts, whether a body is declared JSON, and whether a browser
 * origin is local. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/checks.h"

static int span_eq(const char *a, size_t alen, const char *b)
{
	return alen == strlen(b) && strncasecmp(a, b, alen) == 0;
}

static int is_ows(char c) { return c == ' ' || c == '\t'; }

/* Trims optional whitespace from both ends of [*p, *e). */
static void trim(const char **p, const char **e)
{
	while (*p < *e && is_ows(**p))
		(*p)++;
	while (*e > *p && is_ows((*e)[-1]))
		(*e)--;
}

/* 1 when the parameters in [p, e) (each after a ';') include q=0. */
static int has_q_zero(const char *p, const char *e)
{
	while (p && p < e) {
		const char *v = p + 1, *next = memchr(v, ';', (size_t)(e - v));
		char num[16];
		size_t n;
		char *end;

		while (v < e && is_ows(*v))
			v++;
		if (e - v > 2 && (v[0] == 'q' || v[0] == 'Q') && v[1] == '=') {
			n = (size_t)((next ? next : e) - (v + 2));
			if (n > 0 && n < sizeof(num)) {
				memcpy(num, v + 2, n);
				num[n] = '\0';
				if (strtod(num, &end) == 0.0 && end != num)
					return 1;
			}
		}
		p = next;
	}
	return 0;
}

/* One media-range [p, e) against "type/subtype". */
static int range_admits(const char *p, const char *e, const char *type)
{
	const char *semi = memchr(p, ';', (size_t)(e - p));
	const char *end = semi ? semi : e;
	const char *slash = strchr(type, '/');
	size_t tlen = slash ? (size_t)(slash - type) : strlen(type);

	if (semi && has_q_zero(semi, e))
		return 0;
	trim(&p, &end);
	if (span_eq(p, (size_t)(end - p), "*/*"))
		return 1;
	/* "type/ *": the type and the slash match, then a lone star. */
	if ((size_t)(end - p) == tlen + 2 && strncasecmp(p, type, tlen) == 0 &&
	    p[tlen] == '/' && p[tlen + 1] == '*')
		return 1;
	return span_eq(p, (size_t)(end - p), type);
}

int mgw_be_accept_admits(const char *accept, const char *type)
{
	const char *p = accept, *e;

	while (p && *p) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		if (range_admits(p, e, type))
			return 1;
		p = *e ? e + 1 : e;
	}
	return 0;
}

int mgw_be_media_type_is(const char *content_type, const char *type)
{
	const char *p = content_type, *e = strchr(p, ';');

	if (!e)
		e = p + strlen(p);
	trim(&p, &e);
	return span_eq(p, (size_t)(e - p), type);
}

/* 1 when s is empty, "/", ":PORT" or ":PORT/" (1-5 digits). */
static int rest_ok(const char *s)
{
	size_t d;

	if (*s == ':') {
		d = strspn(s + 1, "0123456789");
		if (d < 1 || d > 5)
			return 0;
		s += 1 + d;
	}
	return s[0] == '\0' || (s[0] == '/' && s[1] == '\0');
}

int mgw_be_origin_allowed(const char *origin)
{
	static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]"};
	const char *p = strstr(origin, "://");

	if (!p || (!span_eq(origin, (size_t)(p - origin), "http") &&
	           !span_eq(origin, (size_t)(p - origin), "https")))
		return 0;
	p += 3;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		size_t n = strlen(hosts[i]);
		if (strncasecmp(p, hosts[i], n) == 0 && rest_ok(p + n))
			return 1;
	}
	return 0;
}
