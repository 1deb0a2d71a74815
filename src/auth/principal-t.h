/* principal-t.h - who sent a request, once the auth check verified its
 * bearer token (auth/jwt.h, or a static token).  Policies, rate limits,
 * the access log and the sealed store's bind_principal read it. */
#ifndef MGW_AUTH_PRINCIPAL_T_H
#define MGW_AUTH_PRINCIPAL_T_H

#include <stddef.h>

#include <jansson.h>

enum mgw_principal_kind {
	MGW_PRINCIPAL_JWT = 1,    /* a verified JWT access token */
	MGW_PRINCIPAL_STATIC,     /* one of auth.static_tokens */
};

/* Held by the transaction (and the worker's verified-token cache):
 * counted references, on one worker's thread only (mgw_principal_ref,
 * mgw_principal_free). */
struct mgw_principal {
	unsigned refs;
	enum mgw_principal_kind kind;
	char *sub;                /* the "sub" claim, or the static token's
	                           * name; never NULL */
	char *client_id;          /* "client_id", else "azp"; NULL if neither */
	char **scopes;            /* "scope" (space-separated) or "scp" (array
	                           * or string); static tokens: configured */
	size_t n_scopes;
	json_t *claims;           /* JWT: the verified payload (a reference is
	                           * held); static: NULL */
};

#endif
