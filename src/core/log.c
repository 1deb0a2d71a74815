/* log.c - stderr logger with levels, context and secret redaction. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/errors.h"
#include "core/log.h"

static _Atomic(enum mgw_log_level) g_level = MGW_LOG_INFO; /* a reload sets it */
static const char *const level_names[] = {"error", "warn", "info", "debug"};

static _Atomic int g_access;

void mgw_log_set_level(enum mgw_log_level level) { g_level = level; }
void mgw_log_set_access(int on) { g_access = on; }
static _Atomic int g_access_fd = -1; /* -1: stderr */
int mgw_log_access_enabled(void)
{
	return g_access && (g_level >= MGW_LOG_INFO ||
	                    atomic_load_explicit(&g_access_fd,
	                                         memory_order_relaxed) >= 0);
}
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

/* Appends s to out[*n..cap) with every control byte as \xHH: a line
 * always is one line, and values from requests (a JSON-RPC method may
 * decode to LF or ESC) can neither forge lines nor drive the terminal.
 * Stops when the next character does not fit. */
static void put_escaped(char *out, size_t cap, size_t *n, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			if (*n + 4 > cap)
				return;
			out[(*n)++] = '\\';
			out[(*n)++] = 'x';
			out[(*n)++] = hex[*p >> 4];
			out[(*n)++] = hex[*p & 15];
		} else {
			if (*n + 1 > cap)
				return;
			out[(*n)++] = (char)*p;
		}
	}
}

void mgw_log_timestamp(char out[32])
{
	/* the date and time of day are formatted once a second per thread */
	static _Thread_local time_t cached = -1;
	static _Thread_local char sec[24];
	struct timespec now;
	unsigned ms;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec != cached) {
		struct tm tm;

		gmtime_r(&now.tv_sec, &tm);
		if (strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
			sec[0] = '\0';
		cached = now.tv_sec;
	}
	n = strlen(sec);
	memcpy(out, sec, n);
	ms = (unsigned)(now.tv_nsec / 1000000L) % 1000u;
	out[n++] = '.';
	out[n++] = (char)('0' + ms / 100);
	out[n++] = (char)('0' + ms / 10 % 10);
	out[n++] = (char)('0' + ms % 10);
	out[n++] = 'Z';
	out[n] = '\0';
}

/* A message longer than MSG_MAX bytes is cut: values from requests (up
 * to a whole body) must not make megabyte log lines.  A line holds the
 * prefix, the message escaped (at most 4 bytes a byte) and the cut
 * notice. */
enum { MSG_MAX = 2048, LOG_LINE_MAX = 160 + 4 * MSG_MAX + 32 };

/* Formats "TIME LEVEL [ctx] message\n" into line (LOG_LINE_MAX bytes);
 * returns its length, 0 when vsnprintf failed. */
static size_t format_line(char *line, enum mgw_log_level level,
                          const struct mgw_log_ctx *ctx, const char *fmt,
                          va_list ap)
{
	char ts[32], ctxbuf[96] = "", sess[48], msg[MSG_MAX];
	int len, k;
	size_t n;

	mgw_log_timestamp(ts);
	if (ctx) {
		size_t c = 0;
		if (ctx->conn_id)
			c += (size_t)snprintf(ctxbuf + c, sizeof(ctxbuf) - c, " c%llu",
			                      (unsigned long long)ctx->conn_id);
		if (ctx->stream_id > 0 && c < sizeof(ctxbuf))
			c += (size_t)snprintf(ctxbuf + c, sizeof(ctxbuf) - c, " s%d",
			                      (int)ctx->stream_id);
		if (ctx->session && c < sizeof(ctxbuf))
			snprintf(ctxbuf + c, sizeof(ctxbuf) - c, " sess=%s",
			         mgw_log_redact("mcp-session-id", ctx->session, sess,
			                        sizeof(sess)));
	}
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (len < 0)
		return 0;
	k = snprintf(line, LOG_LINE_MAX, "%s %-5s%s ", ts, level_names[level],
	             ctxbuf);
	n = k < 0 ? 0 : (size_t)k >= LOG_LINE_MAX ? LOG_LINE_MAX - 1 : (size_t)k;
	put_escaped(line, LOG_LINE_MAX - 32, &n, msg);
	if ((size_t)len >= sizeof(msg))
		n += (size_t)snprintf(line + n, LOG_LINE_MAX - n, "...(%d bytes)", len);
	line[n++] = '\n';
	return n;
}

/* One write(2) for the whole line, so that lines from several threads
 * never interleave (O_APPEND files; pipes up to PIPE_BUF). */
static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

void mgw_log(enum mgw_log_level level, const struct mgw_log_ctx *ctx,
             const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	size_t n;
	va_list ap;

	if (level > g_level)
		return;
	va_start(ap, fmt);
	n = format_line(line, level, ctx, fmt, ap);
	va_end(ap);
	write_all(STDERR_FILENO, line, n);
}

/* ---- the access log ---------------------------------------------------- */

static char *g_access_path;
static _Atomic(enum mgw_access_format) g_access_format;

void mgw_log_set_access_format(enum mgw_access_format f) { g_access_format = f; }
enum mgw_access_format mgw_log_access_format(void) { return g_access_format; }

static int access_fd(void)
{
	int fd = atomic_load_explicit(&g_access_fd, memory_order_relaxed);

	return fd >= 0 ? fd : STDERR_FILENO;
}

static int open_file(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

int mgw_log_access_open(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return MGW_ENOMEM;
	fd = open_file(path);
	if (fd < 0) {
		int saved = errno;
		free(copy);
		errno = saved;
		return MGW_EIO;
	}
	if (atomic_load(&g_access_fd) >= 0) {
		/* a file in use (a reload): the new one takes its descriptor
		 * number, so that no writer ever sees a closed one */
		if (dup2(fd, atomic_load(&g_access_fd)) < 0) {
			int saved = errno;
			close(fd);
			free(copy);
			errno = saved;
			return MGW_EIO;
		}
		close(fd);
		free(g_access_path);
		g_access_path = copy;
		return 0;
	}
	g_access_path = copy;
	atomic_store(&g_access_fd, fd);
	return 0;
}

const char *mgw_log_access_path(void)
{
	return g_access_path;
}

int mgw_log_access_reopen(void)
{
	int fd, old = atomic_load(&g_access_fd), saved;

	if (old < 0 || !g_access_path)
		return 0;
	fd = open_file(g_access_path);
	if (fd < 0)
		return MGW_EIO;
	/* the descriptor number writers use now names the new file */
	if (dup2(fd, old) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return MGW_EIO;
	}
	close(fd);
	return 0;
}

void mgw_log_access_close(void)
{
	int fd = atomic_exchange(&g_access_fd, -1);

	if (fd >= 0)
		close(fd);
	free(g_access_path);
	g_access_path = NULL;
}

void mgw_log_access(const struct mgw_log_ctx *ctx, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	n = format_line(line, MGW_LOG_INFO, ctx, fmt, ap);
	va_end(ap);
	write_all(access_fd(), line, n);
}

void mgw_log_access_line(const char *line, size_t len)
{
	struct iovec iov[2] = {
		{.iov_base = (void *)line, .iov_len = len},
		{.iov_base = "\n", .iov_len = 1},
	};
	ssize_t w;

	do
		w = writev(access_fd(), iov, 2);
	while (w < 0 && errno == EINTR);
}

/* ---- rate-limited lines ------------------------------------------------ */

void mgw_log_limit_init(struct mgw_log_limit *l, const char *what,
                        unsigned per_s, enum mgw_log_level level)
{
	l->what = what;
	l->per_s = per_s;
	l->level = level;
	atomic_init(&l->state, 0);
	atomic_init(&l->dropped, 0);
}

int mgw_log_limit_ok(struct mgw_log_limit *l)
{
	uint64_t now = (uint64_t)time(NULL) & 0xffffffffu;
	uint64_t st = atomic_load(&l->state);

	for (;;) {
		uint64_t sec = st >> 32, lines = st & 0xffffffffu;

		if (sec != now) {
			if (!atomic_compare_exchange_weak(&l->state, &st,
			                                  now << 32 | 1))
				continue;
			uint64_t d = atomic_exchange(&l->dropped, 0);
			if (d)
				mgw_log(l->level, NULL, "%llu %s lines left out in "
				        "the last second(s)", (unsigned long long)d,
				        l->what);
			return 1;
		}
		if (lines >= l->per_s)
			break;
		if (atomic_compare_exchange_weak(&l->state, &st, st + 1))
			return 1;
	}
	atomic_fetch_add(&l->dropped, 1);
	return 0;
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
