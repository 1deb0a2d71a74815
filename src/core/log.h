/* log.h - leveled logging with request context and redaction.
 *
 * All diagnostics go to stderr (stdout is reserved for machine-readable
 * lines such as "listening on HOST:PORT").  One function, mgw_log(), with
 * printf format checking; the context names the connection, HTTP/2 stream
 * and MCP session (the session id is always shown redacted). */
#ifndef MGW_CORE_LOG_H
#define MGW_CORE_LOG_H

#include <stddef.h>
#include <stdint.h>

enum mgw_log_level {
	MGW_LOG_ERROR = 0,
	MGW_LOG_WARN = 1,
	MGW_LOG_INFO = 2,
	MGW_LOG_DEBUG = 3,
};

/* A message longer than 2048 bytes is cut (its length is shown), and
 * control bytes in it are written as \xHH: request-derived values in
 * messages cannot forge log lines, drive terminals or flood the log. */

/* Request context printed in front of a message; every field optional
 * (0 / -1 / NULL mean absent). */
struct mgw_log_ctx {
	uint64_t conn_id;    /* 0 = none */
	int32_t stream_id;   /* -1 = none (HTTP/1.1 requests use 0 or -1) */
	const char *session; /* MCP session id, printed redacted */
};

/* Sets the global threshold; messages above it are dropped. */
void mgw_log_set_level(enum mgw_log_level level);
enum mgw_log_level mgw_log_get_level(void);

/* Access lines (one per proxied request) are opt-in: at thousands of
 * requests per second an unbuffered stderr write each costs ~10% of the
 * gateway's throughput (measured with perf on the serve path). */
void mgw_log_set_access(int on);
int mgw_log_access_enabled(void);

/* Parses "error", "warn", "info" or "debug".  Returns 0 or MGW_EINVAL. */
int mgw_log_parse_level(const char *s, enum mgw_log_level *out);

/* Writes one line "TIME LEVEL [ctx] message" to stderr.  ctx may be NULL. */
void mgw_log(enum mgw_log_level level, const struct mgw_log_ctx *ctx,
             const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Returns 1 when a header's value must never be logged in clear
 * (Authorization, Proxy-Authorization, Cookie, Set-Cookie, Mcp-Session-Id). */
int mgw_log_header_is_secret(const char *name);

/* Writes into buf a loggable form of a header value: secrets become
 * "[redacted]" (session ids keep their first 4 characters and the length).
 * Returns buf. */
const char *mgw_log_redact(const char *name, const char *value,
                           char *buf, size_t buflen);

#define mgw_err(ctx, ...) mgw_log(MGW_LOG_ERROR, ctx, __VA_ARGS__)
#define mgw_warn(ctx, ...) mgw_log(MGW_LOG_WARN, ctx, __VA_ARGS__)
#define mgw_info(ctx, ...) mgw_log(MGW_LOG_INFO, ctx, __VA_ARGS__)
#define mgw_debug(ctx, ...)                                             \
	do {                                                            \
		if (mgw_log_get_level() >= MGW_LOG_DEBUG)               \
			mgw_log(MGW_LOG_DEBUG, ctx, __VA_ARGS__);       \
	} while (0)

#endif
