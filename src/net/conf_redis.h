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

#endif
