/* log.c - stderr logger with levels, context and secret redaction. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/errors.h"
#include "core/log.h"

static enum mgw_log_level g_level = MGW_LOG_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

static int g_access;

void mgw_log_set_level(enum mgw_log_level level) { g_level = level; }
void mgw_log_set_access(int on) { g_access = on; }
int mgw_log_access_enabled(void) { return g_access && g_level >= MGW_LOG_INFO; }
enum mgw_log_level mgw_log_get_level(void) { return g_level; }

int mgw_log_parse_level(const char *s, enum mgw_log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (s && strcmp(s, level_names[i]) == 0) {
			*out = (enum mgw_log_level)i;
			return 0;
		}
	}
	return MGW_EINVAL;
}

int mgw_log_header_is_secret(const char *name)
{
	static const char *const secret[] = {"authorization", "proxy-authorization",
	                                     "cookie", "set-cookie", "mcp-session-id"};
	for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		if (name && strcasecmp(name, secret[i]) == 0)
			return 1;
	return 0;
}

const char *mgw_log_redact(const char *name, const char *value, char *buf,
                           size_t buflen)
{
	if (!buflen)
		return "";
	if (!value)
		value = "";
	if (name && strcasecmp(name, "mcp-session-id") == 0)
		snprintf(buf, buflen, "%.4s…(%zu)", value, strlen(value));
	else if (mgw_log_header_is_secret(name))
		snprintf(buf, buflen, "[redacted]");
	else
		snprintf(buf, buflen, "%s", value);
	return buf;
}

/* Writes s to stderr (locked by the caller) with every control byte as
 * \xHH: a line always is one line, and values from requests (a JSON-RPC
 * method may decode to LF or ESC) can neither forge lines nor drive the
 * terminal. */
static void put_escaped(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			putc_unlocked(*p, stderr);
	}
}

void mgw_log(enum mgw_log_level level, const struct mgw_log_ctx *ctx,
             const char *fmt, ...)
{
	/* a line's message is cut at MSG_MAX bytes: values from requests
	 * (up to a whole body) must not make megabyte log lines */
	enum { MSG_MAX = 2048 };
	char ts[32], ctxbuf[96] = "", sess[48], msg[MSG_MAX];
	int len;
	struct timespec now;
	struct tm tm;
	va_list ap;

	if (level > g_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	if (ctx) {
		size_t n = 0;
		if (ctx->conn_id)
			n += (size_t)snprintf(ctxbuf + n, sizeof(ctxbuf) - n, " c%llu",
			                      (unsigned long long)ctx->conn_id);
		if (ctx->stream_id > 0 && n < sizeof(ctxbuf))
			n += (size_t)snprintf(ctxbuf + n, sizeof(ctxbuf) - n, " s%d",
			                      (int)ctx->stream_id);
		if (ctx->session && n < sizeof(ctxbuf))
			snprintf(ctxbuf + n, sizeof(ctxbuf) - n, " sess=%s",
			         mgw_log_redact("mcp-session-id", ctx->session, sess,
			                        sizeof(sess)));
	}
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	flockfile(stderr);
	fprintf(stderr, "%s.%03ldZ %-5s%s ", ts, now.tv_nsec / 1000000L,
	        level_names[level], ctxbuf);
	put_escaped(msg);
	if ((size_t)len >= sizeof(msg))
		fprintf(stderr, "...(%d bytes)", len);
	fputc('\n', stderr);
	funlockfile(stderr);
}

const char *mgw_strerror(int err)
{
	switch (err) {
	case MGW_OK: return "success";
	case MGW_ENOMEM: return "out of memory";
	case MGW_EINVAL: return "invalid input";
	case MGW_EIO: return "I/O error";
	case MGW_ELIMIT: return "limit exceeded";
	case MGW_ECLOSED: return "closed";
	case MGW_ENOTFOUND: return "not found";
	case MGW_EPROTO: return "protocol error";
	case MGW_ETIMEDOUT: return "timed out";
	case MGW_EEXPIRED: return "expired";
	case MGW_EAUTH: return "authentication failed";
	case MGW_ECONFLICT: return "changed concurrently";
	case MGW_EAGAIN: return "busy, try again later";
	default: return "unknown error";
	}
}
