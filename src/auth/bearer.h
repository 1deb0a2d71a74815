/* bearer.h - the wire forms of the resource server: the bearer token of
 * an Authorization value (RFC 6750 section 2.1) and the Protected
 * Resource Metadata URL of a resource (RFC 9728 section 3.1).  Pure. */
#ifndef MGW_AUTH_BEARER_H
#define MGW_AUTH_BEARER_H

#include <stddef.h>

enum mgw_bearer {
	MGW_BEARER_OK = 0,        /* *tok, *n: the b64token */
	MGW_BEARER_NONE,          /* another scheme ("Basic ...") */
	MGW_BEARER_MALFORMED,     /* "Bearer" with no b64token, or more */
};

/* Reads "Bearer" (any case) 1*SP b64token from an Authorization value;
 * spaces and tabs around are allowed. */
enum mgw_bearer mgw_bearer_parse(const char *v, const char **tok, size_t *n);

/* "scheme://authority/.well-known/oauth-protected-resource[/path]" of a
 * resource URL (a trailing '/' of its path left out); *path points at
 * the well-known part inside the result.  malloc'd, NULL when out of
 * memory. */
char *mgw_prm_url(const char *resource, const char **path);

#endif
