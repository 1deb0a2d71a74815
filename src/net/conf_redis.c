/* conf_redis.c - the "tls:" section of a Redis connection (see
 * conf_redis.h). */
#include "autoconf.h"

#include <stddef.h>
#include <string.h>

#include <openssl/ssl.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "net/conf_redis.h"
#include "net/redis.h"
#include "util/redis_url.h"

#define T(member) MGW_CFG_AT(struct mgw_redis_tls_conf, member)
static const struct mgw_cfg_field redis_tls_fields[] = {
	{.key = "ca_file", .type = MGW_CFG_STRING, T(ca_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_file},
	{.key = "cert_file", .type = MGW_CFG_STRING, T(cert_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_file},
	{.key = "key_file", .type = MGW_CFG_STRING, T(key_file),
	 .flags = MGW_CFG_FILE, .check = mgw_cfg_check_file},
	{.key = "server_name", .type = MGW_CFG_STRING, T(server_name),
	 .check = mgw_cfg_check_nonempty},
	{.key = "verify", .type = MGW_CFG_BOOL, T(verify), .def = "true"},
};
#undef T

/* The files load and go together: the context a connection would build. */
static int check_redis_tls(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                           void *obj)
{
	char why[256];
	SSL_CTX *ctx = mgw_redis_tls_ctx(obj, why, sizeof(why));

	if (!ctx)
		return mgw_cfg_fail(c, sc->map, NULL, "%s", why);
	SSL_CTX_free(ctx);
	return 0;
}

const struct mgw_cfg_section mgw_redis_tls_conf_section = {
	.size = sizeof(struct mgw_redis_tls_conf),
	.fields = redis_tls_fields, .nfields = MGW_CFG_COUNT(redis_tls_fields),
	.check = check_redis_tls,
};

int mgw_redis_tls_check_url(struct mgw_cfg_ctx *c,
                            const struct mgw_cfg_scope *sc,
                            const char *key, const char *url,
                            const char *url_key)
{
	const struct mgw_cfg_node *at = mgw_cfg_scope_value(sc, key);
	char display[300], why[256];

	if (!at || (url && strncmp(url, "rediss://", 9) == 0))
		return 0;
	if (!url)
		return mgw_cfg_fail(c, at, key, "%s: would not be used: there is "
		                    "no %s (%s: goes with a rediss:// URL)", key,
		                    url_key, key);
	if (mgw_redis_url_check(url, display, sizeof(display), why,
	                        sizeof(why)) != 0)
		return 0;       /* the URL's own check reports it */
	return mgw_cfg_fail(c, at, key, "%s '%s' is %s, so %s: would not be "
	                    "used; use a rediss:// URL for TLS (or remove "
	                    "%s:)", url_key, display,
	                    strncmp(url, "unix:", 5) == 0 ? "a Unix socket"
	                                                  : "plain redis://",
	                    key, key);
}
