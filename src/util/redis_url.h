/* redis_url.h - the Redis URLs of configurations and flags:
 * "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]" or "unix:PATH".  The
 * userinfo ends at the last '@' (a password may hold '/' and '@') and
 * its %XX escapes are decoded; messages never show it.  Used by the
 * connection (net/redis.c) and by configuration checks (core), which
 * must agree on what is valid. */
#ifndef MGW_UTIL_REDIS_URL_H
#define MGW_UTIL_REDIS_URL_H

#include <stddef.h>
#include <stdint.h>

struct mgw_redis_url {
	char host[256];     /* a name or an address literal, no brackets */
	uint16_t port;      /* 6379 when absent */
	char *user;         /* ACL user, decoded; NULL when none (AUTH with
	                     * the password alone: the default user) */
	char *password;     /* decoded; NULL when none */
	char *unix_path;    /* "unix:PATH" URLs; NULL otherwise */
	int db;             /* /DB, 0 when absent */
	char display[300];  /* the URL without its password, for logs */
};

/* Parses url into *out (free with mgw_redis_url_free).  Returns 0, or
 * MGW_EINVAL / MGW_ENOMEM with a message in err and nothing to free. */
int mgw_redis_url_parse(const char *url, struct mgw_redis_url *out,
                        char *err, size_t errlen);
void mgw_redis_url_free(struct mgw_redis_url *u);

/* Checks url.  Returns 0 and, when display is not NULL, the URL without
 * its password there; or MGW_EINVAL / MGW_ENOMEM with a message in err. */
int mgw_redis_url_check(const char *url, char *display, size_t displen,
                        char *err, size_t errlen);

#endif
