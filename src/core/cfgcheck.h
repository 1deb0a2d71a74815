/* cfgcheck.h - string checks (mgw_cfg_string_check) that sections of
 * several modules share.  Each returns 0, or -1 with a short reason in why
 * (the engine prefixes the position and key path). */
#ifndef MGW_CORE_CFGCHECK_H
#define MGW_CORE_CFGCHECK_H

#include <stddef.h>

/* Not the empty string. */
int mgw_cfg_check_nonempty(const char *s, char *why, size_t whylen);

/* One visible word of 1 to 128 bytes (ids and key prefixes end up in logs,
 * tool results and Redis keys). */
int mgw_cfg_check_word(const char *s, char *why, size_t whylen);

/* A request path: starts with '/', at most 1024 bytes, visible ASCII
 * without '?', '#' or spaces. */
int mgw_cfg_check_path(const char *s, char *why, size_t whylen);

/* "HOST:PORT", "[IPV6]:PORT" or ":PORT" (util/parse.h). */
int mgw_cfg_check_hostport(const char *s, char *why, size_t whylen);

/* An http:// or https:// URL as util/url.h parses it. */
int mgw_cfg_check_url(const char *s, char *why, size_t whylen);

/* A redis:// URL as the connection parses it (util/redis_url.h); the
 * reason never shows a password. */
int mgw_cfg_check_redis_url(const char *s, char *why, size_t whylen);

/* A Redis Sentinel's "IP:PORT" (a numeric address: the connection
 * never resolves it with a blocking call). */
int mgw_cfg_check_sentinel(const char *s, char *why, size_t whylen);

/* A regular file that can be opened for reading now (key files, CA
 * files): a typo fails check-config rather than the first request. */
int mgw_cfg_check_file(const char *s, char *why, size_t whylen);

/* Most keys a key file may hold (the sealed session store and the
 * backend's HMAC handles read at most this many). */
#define MGW_CFG_KEYFILE_MAX 16

/* mgw_cfg_check_file, and the file reads as a key file (util/keyfile.h:
 * "KID HEX64" lines, 1 to MGW_CFG_KEYFILE_MAX keys): a bad line fails
 * check-config and the configuration load, not the store's start. */
int mgw_cfg_check_keyfile(const char *s, char *why, size_t whylen);

/* A file a log can be appended to: an existing writable file, or a name
 * in an existing writable folder (it is not created here). */
int mgw_cfg_check_log_file(const char *s, char *why, size_t whylen);

#endif
