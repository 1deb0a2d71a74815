/* conf_auth.c - the "auth:" section of `mcpgw serve` (conf_auth-t.h):
 * its table and the checks that tie its keys together. */
#include "autoconf.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/conf_auth.h"
#include "auth/jwt.h"
#include "auth/keyring.h"
#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "core/errors.h"
#include "util/url.h"

/* ---- string checks ---- */

static int check_https_url(const char *s, char *why, size_t whylen)
{
	struct mgw_url u;

	if (mgw_url_parse(s, &u, why, whylen) != 0)
		return -1;
	if (!u.tls) {
		snprintf(why, whylen, "must be an https:// URL");
		return -1;
	}
	return 0;
}

static int check_digest(const char *s, char *why, size_t whylen)
{
	unsigned char d[MGW_TOKEN_DIGEST_LEN];

	if (mgw_token_digest_parse(s, d) == 0)
		return 0;
	snprintf(why, whylen, "must be \"sha256:\" and 64 hex digits "
	         "(printf %%s TOKEN | sha256sum)");
	return -1;
}

/* A scope token (RFC 6749 section 3.3: %x21 / %x23-5B / %x5D-7E). */
static int check_scope(const char *s, char *why, size_t whylen)
{
	if (!*s) {
		snprintf(why, whylen, "must not be empty");
		return -1;
	}
	for (const char *p = s; *p; p++)
		if (*p < 0x21 || *p > 0x7e || *p == '"' || *p == '\\') {
			snprintf(why, whylen, "a scope is visible ASCII without "
			         "spaces, '\"' or '\\'");
			return -1;
		}
	return 0;
}

/* The JWKS file exists and holds at least one usable key, so that a bad
 * file fails check-config rather than every request. */
static int check_jwks_file(const char *s, char *why, size_t whylen)
{
	struct mgw_jwks *k;

	if (mgw_cfg_check_file(s, why, whylen) != 0)
		return -1;
	k = mgw_jwks_load_file(s, why, whylen);
	if (!k)
		return -1;
	mgw_jwks_unref(k);
	return 0;
}

/* ---- sections ---- */

#define T(member) MGW_CFG_AT(struct mgw_static_token_conf, member)
static const struct mgw_cfg_field token_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING, T(name),
	 .flags = MGW_CFG_REQUIRED, .check = check_scope},
	{.key = "digest", .type = MGW_CFG_STRING, T(digest),
	 .flags = MGW_CFG_REQUIRED, .check = check_digest},
	{.key = "scopes", .type = MGW_CFG_STRLIST,
	 .off = offsetof(struct mgw_static_token_conf, scopes),
	 .aux = offsetof(struct mgw_static_token_conf, n_scopes),
	 .check = check_scope},
};
#undef T
static const struct mgw_cfg_section token_section = {
	.size = sizeof(struct mgw_static_token_conf),
	.fields = token_fields, .nfields = MGW_CFG_COUNT(token_fields),
};

static int check_auth(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                      void *obj);

#define A(member) MGW_CFG_AT(struct mgw_auth_conf, member)
#define AL(member)                                            \
	.off = offsetof(struct mgw_auth_conf, member),        \
	.aux = offsetof(struct mgw_auth_conf, n_##member)
static const struct mgw_cfg_field auth_fields[] = {
	{.key = "issuer", .type = MGW_CFG_STRING, A(issuer),
	 .check = mgw_cfg_check_nonempty},
	{.key = "audience", .type = MGW_CFG_STRING, A(audience),
	 .check = mgw_cfg_check_nonempty},
	{.key = "jwks_file", .type = MGW_CFG_STRING, A(jwks_file),
	 .flags = MGW_CFG_FILE, .check = check_jwks_file},
	{.key = "jwks_url", .type = MGW_CFG_STRING, A(jwks_url),
	 .check = check_https_url},
	{.key = "jwks_ca_file", .type = MGW_CFG_STRING, A(jwks_ca_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_file},
	{.key = "jwks_refresh", .type = MGW_CFG_DURATION, A(jwks_refresh),
	 .dmin = 1, .dmax = 7 * 86400, .def = "15m"},
	{.key = "jwks_min_interval", .type = MGW_CFG_DURATION,
	 A(jwks_min_interval), .dmin = 0.1, .dmax = 86400, .def = "10s"},
	{.key = "jwks_timeout", .type = MGW_CFG_DURATION, A(jwks_timeout),
	 .dmin = 0.1, .dmax = 300, .def = "5s"},
	{.key = "jwks_max_bytes", .type = MGW_CFG_SIZE, A(jwks_max_bytes),
	 .min = 1024, .max = 64 * MGW_CFG_MiB, .def = "1MiB"},
	{.key = "resource", .type = MGW_CFG_STRING, A(resource),
	 .flags = MGW_CFG_REQUIRED, .check = mgw_cfg_check_url},
	{.key = "authorization_servers", .type = MGW_CFG_STRLIST,
	 AL(authorization_servers), .check = mgw_cfg_check_url},
	{.key = "required_scopes", .type = MGW_CFG_STRLIST,
	 AL(required_scopes), .check = check_scope},
	{.key = "scopes_supported", .type = MGW_CFG_STRLIST,
	 AL(scopes_supported), .check = check_scope},
	{.key = "clock_skew", .type = MGW_CFG_DURATION, A(clock_skew),
	 .dmin = 0, .dmax = 3600, .def = "60s"},
	{.key = "max_token_bytes", .type = MGW_CFG_SIZE, A(max_token_bytes),
	 .min = 256, .max = MGW_CFG_MiB, .def = "16KiB"},
	{.key = "static_tokens", .type = MGW_CFG_LIST, AL(static_tokens),
	 .sub = &token_section},
};
#undef A
#undef AL
const struct mgw_cfg_section mgw_auth_conf_section = {
	.size = sizeof(struct mgw_auth_conf),
	.fields = auth_fields, .nfields = MGW_CFG_COUNT(auth_fields),
	.check = check_auth,
};

const char *mgw_auth_audience(const struct mgw_auth_conf *a)
{
	return a->audience ? a->audience : a->resource;
}

static int check_auth(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                      void *obj)
{
	const struct mgw_auth_conf *a = obj;
	int jwt = a->jwks_file || a->jwks_url;

	if (!jwt && a->n_static_tokens == 0)
		return mgw_cfg_fail(c, sc->map, NULL, "needs jwks_file, "
		                    "jwks_url or static_tokens: there is no "
		                    "way to verify a token");
	if (jwt && !a->issuer)
		return mgw_cfg_fail(c, sc->map, "issuer", "is required "
		                    "with jwks_file or jwks_url (RFC 9068: a "
		                    "token's iss must be checked)");
	if (a->jwks_ca_file && !a->jwks_url)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "jwks_ca_file"),
		                    "jwks_ca_file", "is only used with "
		                    "jwks_url");
	for (size_t i = 0; i < a->n_static_tokens; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(a->static_tokens[i].name,
			           a->static_tokens[j].name) == 0)
				return mgw_cfg_fail(c, mgw_cfg_scope_value(
				                    sc, "static_tokens"),
				                    "static_tokens", "'%s' is "
				                    "named twice",
				                    a->static_tokens[i].name);
	return 0;
}
