/* bearer.c - bearer credentials and the metadata URL (bearer.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/bearer.h"

#define WELL_KNOWN "/.well-known/oauth-protected-resource"

/* b64token's characters (RFC 6750 section 2.1) but '=': 1; '=': 2;
 * space and tab: 3. */
static const unsigned char cls[256] = {
	['\t'] = 3, [' '] = 3, ['='] = 2,
	['-'] = 1, ['.'] = 1, ['_'] = 1, ['~'] = 1, ['+'] = 1, ['/'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

enum mgw_bearer mgw_bearer_parse(const char *v, const char **tok, size_t *n)
{
	const unsigned char *p = (const unsigned char *)v, *t;

	while (cls[*p] == 3)
		p++;
	if (strncasecmp((const char *)p, "Bearer", 6) != 0 ||
	    (p[6] != '\0' && cls[p[6]] != 3))
		return MGW_BEARER_NONE;
	p += 6;
	while (cls[*p] == 3)
		p++;
	/* 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
	t = p;
	while (cls[*p] == 1)
		p++;
	if (p == t)
		return MGW_BEARER_MALFORMED;
	while (cls[*p] == 2)
		p++;
	*tok = (const char *)t;
	*n = (size_t)(p - t);
	while (cls[*p] == 3)
		p++;
	return *p ? MGW_BEARER_MALFORMED : MGW_BEARER_OK;
}

char *mgw_prm_url(const char *resource, const char **path)
{
	const char *s = strstr(resource, "://");
	const char *p = s ? strchr(s + 3, '/') : NULL;
	size_t olen = p ? (size_t)(p - resource) : strlen(resource);
	size_t plen = p ? strlen(p) : 0;
	char *u;

	while (plen && p[plen - 1] == '/')
		plen--;
	u = malloc(olen + sizeof(WELL_KNOWN) + plen);
	if (!u)
		return NULL;
	memcpy(u, resource, olen);
	memcpy(u + olen, WELL_KNOWN, sizeof(WELL_KNOWN) - 1);
	memcpy(u + olen + sizeof(WELL_KNOWN) - 1, p ? p : "", plen);
	u[olen + sizeof(WELL_KNOWN) - 1 + plen] = '\0';
	*path = u + olen;
	return u;
}
