/* log.h - leveled logging with request context and redaction.
 *
 * All diagnostics go to stderr (stdout is reserved for machine-readable
 * lines such as "listening on HOST:PORT").  One function, mgw_log(), with
 * printf format checking; the context names the connection, HTTP/2 stream
 * and MCP session (the session id is always shown redacted). */
#ifndef MGW_CORE_LOG_H
#define MGW_CORE_LOG_H

#include <stdatomic.h>
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
 * gateway's throughput (measured with perf on the serve path).  They go
 * to stderr as info lines (so --log-level warn drops them), or to the
 * file of mgw_log_access_open whatever the level. */
void mgw_log_set_access(int on);
int mgw_log_access_enabled(void);

/* log.access_format: the text line (mgw_log_access) or one JSON object
 * per line (mgw_log_access_line). */
enum mgw_access_format { MGW_ACCESS_TEXT = 0, MGW_ACCESS_JSON };
void mgw_log_set_access_format(enum mgw_access_format f);
enum mgw_access_format mgw_log_access_format(void);

/* log.access_file: access lines go to path (opened O_APPEND|O_CREAT,
 * mode 0640), each line with one write(2), so that lines from several
 * threads never interleave.  Called again (a reload), the new file
 * takes the old one's place at once, as in mgw_log_access_reopen.  From
 * one thread at a time.  Returns 0, MGW_ENOMEM or MGW_EIO (errno kept;
 * the file in use, if any, stays). */
int mgw_log_access_open(const char *path);
/* Opens the file's path again (logrotate moved it away) and puts the new
 * file in the old one's place at once (dup2): a line is written whole to
 * the old file or to the new one.  Any thread.  Returns 0 (also when no
 * file is in use) or MGW_EIO (errno kept; the old file stays in use). */
/* The access log file's name, or NULL (stderr).  Main thread. */
const char *mgw_log_access_path(void);
int mgw_log_access_reopen(void);
/* Back to stderr; the file is closed.  Only when no thread writes access
 * lines any more (at exit). */
void mgw_log_access_close(void);

/* One text access line, laid out as mgw_log's at info ("TIME info  [ctx]
 * message", control bytes escaped), to the access log's destination. */
void mgw_log_access(const struct mgw_log_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Writes line (len bytes, one line, no newline) and a newline to the
 * access log's destination, with one write(2). */
void mgw_log_access_line(const char *line, size_t len);

/* Parses "error", "warn", "info" or "debug".  Returns 0 or MGW_EINVAL. */
int mgw_log_parse_level(const char *s, enum mgw_log_level *out);

/* The current UTC time as logged: "2026-12-01T10:00:00.123Z". */
void mgw_log_timestamp(char out[32]);

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

/* ---- rate-limited lines ---------------------------------------------- */

/* A budget of lines per second, shared by every thread that logs through
 * it (lock-free).  The lines over it are counted, not written; the first
 * line allowed in a later second is preceded by "N WHAT lines left out
 * in the last second(s)" at the limit's level.  For lines anyone can
 * provoke (client faults) and for operator events (mgw_event). */
struct mgw_log_limit {
	const char *what;
	unsigned per_s;
	enum mgw_log_level level;
	_Atomic uint64_t state;   /* second << 32 | lines written in it */
	_Atomic uint64_t dropped; /* lines left out since the last summary */
};
#define MGW_LOG_LIMIT_INIT(what_, per_s_, level_) \
	{.what = (what_), .per_s = (per_s_), .level = (level_)}
void mgw_log_limit_init(struct mgw_log_limit *l, const char *what,
                        unsigned per_s, enum mgw_log_level level);
/* 1 when a line may be written now (and counts it), 0 when it is over
 * the budget (counted as left out). */
int mgw_log_limit_ok(struct mgw_log_limit *l);

/* Operator events: what an operator must see at the default level and at
 * --log-level warn (re-pins, ejections, health transitions, session-store
 * outages and recoveries).  One warn line "event=NAME key=value ...",
 * NAME a literal; at most MGW_EVENT_LOGS_PER_S a second per call site.
 * doc/serve.md lists them. */
#define MGW_EVENT_LOGS_PER_S 20
#define mgw_event(ctx, name, fmt, ...)                                    \
	do {                                                              \
		static struct mgw_log_limit mgw_event_lim_ =              \
			MGW_LOG_LIMIT_INIT("event=" name,                 \
			                   MGW_EVENT_LOGS_PER_S, MGW_LOG_WARN); \
		if (mgw_log_get_level() >= MGW_LOG_WARN &&                \
		    mgw_log_limit_ok(&mgw_event_lim_))                    \
			mgw_log(MGW_LOG_WARN, ctx, "event=" name " " fmt, \
			        __VA_ARGS__);                             \
	} while (0)

#define mgw_err(ctx, ...) mgw_log(MGW_LOG_ERROR, ctx, __VA_ARGS__)
#define mgw_warn(ctx, ...) mgw_log(MGW_LOG_WARN, ctx, __VA_ARGS__)
#define mgw_info(ctx, ...) mgw_log(MGW_LOG_INFO, ctx, __VA_ARGS__)
#define mgw_debug(ctx, ...)                                             \
	do {                                                            \
		if (mgw_log_get_level() >= MGW_LOG_DEBUG)               \
			mgw_log(MGW_LOG_DEBUG, ctx, __VA_ARGS__);       \
	} while (0)

#endif
