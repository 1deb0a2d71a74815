/* conf_auth-t.h - the "auth:" section of `mcpgw serve`: the gateway as an
 * OAuth 2.1 resource server (bearer JWTs checked against a JWKS, static
 * bearer tokens) and its Protected Resource Metadata (RFC 9728).  Part of
 * the immutable snapshot; filled only by the table of conf_auth.c. */
#ifndef MGW_AUTH_CONF_AUTH_T_H
#define MGW_AUTH_CONF_AUTH_T_H

#include <stddef.h>
#include <stdint.h>

/* One of auth.static_tokens. */
struct mgw_static_token_conf {
	char *name;                /* name: the principal's sub (required) */
	char *digest;              /* digest: "sha256:" + 64 hex (required) */
	char **scopes;             /* scopes: what the token grants (none) */
	size_t n_scopes;
};

struct mgw_auth_conf {
	int enabled;               /* the section is present */
	char *issuer;              /* issuer: tokens' "iss" (required with a
	                            * JWKS) */
	char *audience;            /* audience: tokens' "aud" must hold it
	                            * (RFC 8707); default: resource */
	char *jwks_file;           /* jwks_file: a JWKS document */
	char *jwks_url;            /* jwks_url: https:// JWKS, fetched */
	char *jwks_ca_file;        /* jwks_ca_file: trust for jwks_url (the
	                            * system store when NULL) */
	double jwks_refresh;       /* jwks_refresh (15m): refetch period */
	double jwks_min_interval;  /* jwks_min_interval (10s): least time
	                            * between two fetches (an unknown kid asks
	                            * for one) */
	double jwks_timeout;       /* jwks_timeout (5s) */
	size_t jwks_max_bytes;     /* jwks_max_bytes (1MiB) */
	char *resource;            /* resource: the gateway's public URL
	                            * (Protected Resource Metadata, required) */
	char **authorization_servers; /* authorization_servers (metadata) */
	size_t n_authorization_servers;
	char **required_scopes;    /* required_scopes: every route's, unless
	                            * the route names its own */
	size_t n_required_scopes;
	char **scopes_supported;   /* scopes_supported (metadata; default:
	                            * required_scopes) */
	size_t n_scopes_supported;
	double clock_skew;         /* clock_skew (60s) for exp, nbf, iat */
	size_t max_token_bytes;    /* max_token_bytes (16KiB) */
	struct mgw_static_token_conf *static_tokens; /* static_tokens */
	size_t n_static_tokens;
};

#endif
