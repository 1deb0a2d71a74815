/* net.h - the bench's own small, blocking network probes on 127.0.0.1:
 * free ports, "is this port refused", an HTTP GET (health checks and the
 * gateway's counters), a Redis PING, and the TIME_WAIT census that paces
 * the cooldown between cells.  All of them are bounded in time. */
#ifndef MGW_BENCH_NET_H
#define MGW_BENCH_NET_H

#include <stddef.h>
#include <stdint.h>

/* A port the kernel considers free on 127.0.0.1 right now (bound to port
 * 0, read back, closed).  For programs that cannot bind port 0 and report
 * it (redis-server, an external proxy).  Returns the port or MGW_EIO. */
int mgw_bench_free_port(void);

/* One TCP connect to 127.0.0.1:port, at most timeout_s.  Returns 0 when it
 * was accepted, or the errno of the failure (ECONNREFUSED, ETIMEDOUT...). */
int mgw_bench_connect_errno(int port, double timeout_s);

/* GET path from 127.0.0.1:port over HTTP/1.1 (Connection: close), the
 * whole exchange within timeout_s; the response is parsed with
 * http-parser (chunked bodies decoded).  *status gets the status code;
 * the body goes to *body (malloc'ed, NUL-terminated, at most 1 MiB; the
 * caller frees it) when body is not NULL.  Returns 0, MGW_EIO (connect or
 * I/O failure), MGW_ETIMEDOUT, MGW_EPROTO (not an HTTP response) or
 * MGW_ELIMIT (body too big). */
int mgw_bench_http_get(int port, const char *path, double timeout_s,
                       int *status, char **body);

/* Polls GET path on port until it answers 200 or timeout_s passes (every
 * 50 ms).  Returns 0 when it did. */
int mgw_bench_wait_http_ok(int port, const char *path, double timeout_s);

/* Sends PING to a Redis server on port.  Returns 0 when it answered
 * +PONG within timeout_s. */
int mgw_bench_redis_ping(int port, double timeout_s);

/* Sends one inline Redis command (words separated by spaces, no quoting)
 * to 127.0.0.1:port and reads its reply into buf (NUL-terminated, raw
 * RESP) until it is complete: a simple string, error, integer, bulk
 * string, or an array of those one level deep.  Returns 0, MGW_EIO (no
 * connection, closed, too long for buf) or MGW_ETIMEDOUT. */
int mgw_bench_redis_query(int port, const char *cmd, char *buf, size_t len,
                          double timeout_s);

/* Counts the lines of a /proc/net/tcp or /proc/net/tcp6 text in state 06
 * (TIME_WAIT) whose local or remote port is one of ports[0..n). */
size_t mgw_bench_timewait_count_text(const char *text, const uint16_t *ports,
                                     size_t n);

/* The same over /proc/net/tcp and /proc/net/tcp6 (a file that cannot be
 * read counts 0). */
size_t mgw_bench_timewait_count(const uint16_t *ports, size_t n);

#endif
