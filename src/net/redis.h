/* redis.h - one asynchronous Redis connection on one event loop, shared
 * by everything in mcpgw that talks to Redis (the backend's counter
 * handles, modules/redis_store).
 *
 * The socket is a libevent bufferevent of ours (OpenSSL over it for
 * rediss://); hiredis only encodes commands and decodes replies.  Nothing
 * blocks the loop: host names are resolved with evdns (net/resolve.h),
 * connecting (TLS handshake included) is bounded by the command timeout,
 * and every command carries its own timer.  A connection that
 * fails, drops, or leaves a command unanswered past its timeout is torn
 * down and re-established with exponential backoff; meanwhile new
 * commands are refused at once (nothing is queued while the server is
 * known to be unreachable). */
#ifndef MGW_NET_REDIS_H
#define MGW_NET_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <openssl/ssl.h>

#include "util/redis_url.h"

struct mgw_redis;

enum mgw_redis_state {
	MGW_REDIS_CONNECTING,   /* first attempt in progress: commands are
	                         * accepted (once the host is resolved; a
	                         * numeric host or a socket path at once) and
	                         * sent when connected */
	MGW_REDIS_UP,
	MGW_REDIS_DOWN,         /* failed or lost; reconnecting with backoff:
	                         * commands are refused */
};

/* The answer to one command: status 0 with reply (borrowed for the
 * duration of the callback; it may be an error reply, type
 * REDIS_REPLY_ERROR), or MGW_EIO (the connection failed or was closed
 * before an answer) or MGW_ETIMEDOUT (no answer within the timeout) with
 * reply NULL. */
typedef void (*mgw_redis_reply_cb)(void *arg, int status, redisReply *reply);

/* A change of the connection's state.  why: a short reason for DOWN (the
 * socket's error, OpenSSL's reason for a TLS failure, the server's answer
 * to the setup, "protocol error: ..."; NULL otherwise).  Runs from the
 * loop, possibly from inside a reply's handling: it must not free the
 * connection.  Never runs
 * inside mgw_redis_new (a first attempt that fails at once leaves the
 * state DOWN, which the caller reads with mgw_redis_state). */
typedef void (*mgw_redis_state_cb)(void *arg, enum mgw_redis_state state,
                                   const char *why);

struct mgw_redis_opts {
	const char *url;        /* "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]",
	                         * "rediss://..." (TLS) or "unix:PATH"; with
	                         * USER, AUTH USER PASSWORD (a Redis 6 ACL
	                         * user) */
	const struct mgw_redis_tls_conf *tls; /* rediss:// only; NULL: the
	                         * system store, verification on */
	double timeout;         /* per command, and for connecting (s); 0 =
	                         * 2 s */
	double backoff_min;     /* first reconnect delay (s); 0 = 0.1 s */
	double backoff_max;     /* cap of the doubling delay (s); 0 = 2 s */
	mgw_redis_state_cb on_state; /* optional */
	void *state_arg;
	/* Redis Sentinel: with master_name set, the server is not url's
	 * host but the master the sentinels ("HOST:PORT", n_sentinels >= 1)
	 * name: asked (SENTINEL get-master-addr-by-name, one after the other
	 * until one answers) before every connection attempt, so a failover
	 * is followed by the next reconnect; a server whose ROLE is not
	 * master is a failed attempt, and a READONLY error reply (the master
	 * was demoted) drops the connection.  url still gives the password
	 * and database.  With rediss:// the sentinels are reached over TLS
	 * too, with the same options; without tls->server_name the
	 * certificates must name the addresses (the sentinel's, and the
	 * master's it named). */
	const char *const *sentinels;
	size_t n_sentinels;
	const char *master_name;
};

/* Counters of one connection (this loop's thread only). */
struct mgw_redis_stats {
	uint64_t connects;      /* connections established */
	uint64_t failures;      /* connection attempts that failed */
	uint64_t commands;      /* commands sent */
	uint64_t errors;        /* error replies */
	uint64_t timeouts;      /* commands unanswered within the timeout */
};

/* mgw_redis_url_check (util/redis_url.h) checks the URL of
 * struct mgw_redis_opts. */

/* The TLS client context of a rediss:// connection: CA file (or the
 * system store), verification, client certificate and key.  NULL with a
 * message naming the file in err when one does not load (check-config
 * calls this too). */
SSL_CTX *mgw_redis_tls_ctx(const struct mgw_redis_tls_conf *t, char *err,
                           size_t errlen);

/* A connection to o->url on base; the first attempt starts at once.
 * Returns NULL with a message in err only for a malformed URL, TLS files
 * that do not load, or no memory: an unreachable server is not an error
 * (the connection keeps retrying), nor is a failed TLS handshake.  o is
 * copied (url and tls included). */
struct mgw_redis *mgw_redis_new(struct event_base *base,
                                const struct mgw_redis_opts *o, char *err,
                                size_t errlen);

/* Closes the connection and frees it.  Commands still pending are
 * answered MGW_EIO first, from inside this call; the state callback does
 * not run.  NULL allowed.  Not from inside a callback of r. */
void mgw_redis_free(struct mgw_redis *r);

enum mgw_redis_state mgw_redis_state(const struct mgw_redis *r);

/* The URL without its password, for logs and stats. */
const char *mgw_redis_display(const struct mgw_redis *r);

void mgw_redis_get_stats(const struct mgw_redis *r, struct mgw_redis_stats *out);

/* Sends one command (binary-safe arguments, copied).  Returns 0 and then
 * cb runs exactly once, later, from the loop (never inside this call);
 * or MGW_EIO (state DOWN: nothing was queued) / MGW_ENOMEM, and cb never
 * runs. */
int mgw_redis_command_argv(struct mgw_redis *r, int argc, const char **argv,
                           const size_t *argvlen, mgw_redis_reply_cb cb,
                           void *arg);

/* The same with a hiredis format string ("%s" strings, "%b" binary with
 * a size_t length, "%lld" ...). */
int mgw_redis_command(struct mgw_redis *r, mgw_redis_reply_cb cb, void *arg,
                      const char *fmt, ...);

#endif
