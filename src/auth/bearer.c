/* bearer.c - bearer credentials and the metadata URL (bearer.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/bearer.h"

#define WELL_KNOWN "/.well-known/oauth-protected-resource"

static int b64token_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~' || c == '+' || c == '/';
}

enum mgw_bearer mgw_bearer_parse(const char *v, const char **tok, size_t *n)
{
	size_t i = 0, len, j;

	while (v[i] == ' ' || v[i] == '\t')
		i++;
	if (strncasecmp(v + i, "Bearer", 6) != 0 ||
	    (v[i + 6] != ' ' && v[i + 6] != '\t' && v[i + 6] != '\0'))
		return MGW_BEARER_NONE;
	i += 6;
	while (v[i] == ' ' || v[i] == '\t')
		i++;
	len = strcspn(v + i, " \t");
	for (j = i + len; v[j]; j++)
		if (v[j] != ' ' && v[j] != '\t')
			return MGW_BEARER_MALFORMED;   /* "Bearer a b" */
	if (len == 0)
		return MGW_BEARER_MALFORMED;
	/* 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
	for (j = 0; j < len && b64token_char((unsigned char)v[i + j]); j++)
		;
	if (j == 0)
		return MGW_BEARER_MALFORMED;
	for (; j < len; j++)
		if (v[i + j] != '=')
			return MGW_BEARER_MALFORMED;
	*tok = v + i;
	*n = len;
	return MGW_BEARER_OK;
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
