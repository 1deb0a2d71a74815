/* conf_redis.h - the "tls:" section of every place a Redis URL is
 * configured (sessions.redis, the proxy's redis: sections, backend
 * redis_tls:): struct mgw_redis_tls_conf (util/redis_url.h). */
#ifndef MGW_NET_CONF_REDIS_H
#define MGW_NET_CONF_REDIS_H

#include "core/cfgschema-t.h"

/* ca_file, cert_file, key_file, server_name, verify (true); the check
 * builds the TLS context, so a certificate, key or CA file that does not
 * load fails check-config. */
extern const struct mgw_cfg_section mgw_redis_tls_conf_section;

/* For the check of a section holding a Redis URL (its key url_key,
 * value url, NULL when none) and its TLS section (its key: "tls", the
 * backend's "redis_tls"): a TLS section given with a URL that is not
 * rediss:// (redis://, unix:, or none) would be silently ignored, so it
 * is an error there.  Returns 0 or mgw_cfg_fail's result. */
int mgw_redis_tls_check_url(struct mgw_cfg_ctx *c,
                            const struct mgw_cfg_scope *sc,
                            const char *key, const char *url,
                            const char *url_key);

#endif
