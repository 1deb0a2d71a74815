/* redis_url.h - the Redis URLs of configurations and flags:
 * "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]", the same with
 * "rediss://" (TLS), or "unix:PATH"; and the TLS options that go with a
 * rediss:// URL.  The
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
	int tls;            /* rediss:// */
	char display[300];  /* the URL without its password, for logs */
};

/* The "tls:" options of a Redis connection (net/conf_redis.c), used
 * with a rediss:// URL only.  Strings NULL when absent. */
struct mgw_redis_tls_conf {
	char *ca_file;      /* ca_file: PEM CAs (none: the system store) */
	char *cert_file;    /* cert_file: client certificate chain (PEM) */
	char *key_file;     /* key_file: its private key (PEM) */
	char *server_name;  /* server_name: SNI and the name the server's
	                     * certificate must match (none: the URL's
	                     * host, or the address a sentinel named) */
	int verify;         /* verify (true) */
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
