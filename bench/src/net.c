/* net.c - blocking probes with deadlines: the bench waits on them between
 * steps of a repetition, never while the load client measures something
 * the bench itself could slow down (the bench does no I/O on the request
 * path; its probes are a handful per second at most). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <http_parser.h>

#include "core/errors.h"
#include "util/time.h"
#include "bench/src/net.h"
#include "bench/src/proc.h"

#define BODY_MAX (1u << 20)

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

int mgw_bench_free_port(void)
{
	struct sockaddr_in a = loopback(0);
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = MGW_EIO;

	if (fd < 0)
		return MGW_EIO;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int ms_left(uint64_t end)
{
	uint64_t now = mgw_now_ns();

	return now >= end ? 0 : (int)((end - now) / 1000000 + 1);
}

/* Connects a non-blocking socket by end.  Returns the fd, or -errno. */
static int connect_by(int port, uint64_t end)
{
	struct sockaddr_in a = loopback(port);
	int fd, err = 0;
	socklen_t elen = sizeof(err);
	struct pollfd pf;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		err = errno;
		close(fd);
		return -err;
	}
	pf.fd = fd;
	pf.events = POLLOUT;
	pf.revents = 0;
	if (poll(&pf, 1, ms_left(end)) <= 0) {
		close(fd);
		return -ETIMEDOUT;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
		err = errno;
	if (err) {
		close(fd);
		return -err;
	}
	return fd;
}

int mgw_bench_connect_errno(int port, double timeout_s)
{
	int fd = connect_by(port, mgw_now_ns() + (uint64_t)(timeout_s * 1e9));

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

static int send_all(int fd, const char *buf, size_t len, uint64_t end)
{
	while (len > 0) {
		struct pollfd pf = { fd, POLLOUT, 0 };
		ssize_t n;

		if (poll(&pf, 1, ms_left(end)) <= 0)
			return MGW_ETIMEDOUT;
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return MGW_EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

struct get_ctx {
	char *body;
	size_t len;
	int done;
	int too_big;
};

static int on_body(http_parser *hp, const char *at, size_t len)
{
	struct get_ctx *c = hp->data;
	char *nb;

	if (c->len + len > BODY_MAX) {
		c->too_big = 1;
		return 1;
	}
	nb = realloc(c->body, c->len + len + 1);
	if (!nb)
		return 1;
	c->body = nb;
	memcpy(c->body + c->len, at, len);
	c->len += len;
	c->body[c->len] = '\0';
	return 0;
}

static int on_complete(http_parser *hp)
{
	((struct get_ctx *)hp->data)->done = 1;
	return 0;
}

int mgw_bench_http_get(int port, const char *path, double timeout_s,
                       int *status, char **body)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(timeout_s * 1e9);
	struct get_ctx c = { NULL, 0, 0, 0 };
	http_parser_settings set;
	http_parser hp;
	char req[512], buf[8192];
	int fd, rc;

	*status = 0;
	if (body)
		*body = NULL;
	fd = connect_by(port, end);
	if (fd < 0)
		return fd == -ETIMEDOUT ? MGW_ETIMEDOUT : MGW_EIO;
	snprintf(req, sizeof(req),
	         "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
	         "User-Agent: mcpgw-bench\r\nAccept: */*\r\n"
	         "Connection: close\r\n\r\n", path, port);
	rc = send_all(fd, req, strlen(req), end);
	if (rc != 0)
		goto fail;
	http_parser_settings_init(&set);
	set.on_body = on_body;
	set.on_message_complete = on_complete;
	http_parser_init(&hp, HTTP_RESPONSE);
	hp.data = &c;
	while (!c.done) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, ms_left(end)) <= 0) {
			rc = MGW_ETIMEDOUT;
			goto fail;
		}
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			rc = MGW_EIO;
			goto fail;
		}
		/* n == 0 tells the parser the body ended (no length given) */
		if (http_parser_execute(&hp, &set, buf, (size_t)n) != (size_t)n ||
		    HTTP_PARSER_ERRNO(&hp) != HPE_OK) {
			rc = c.too_big ? MGW_ELIMIT : MGW_EPROTO;
			goto fail;
		}
		if (n == 0 && !c.done) {
			rc = MGW_EPROTO;
			goto fail;
		}
	}
	*status = (int)hp.status_code;
	if (body) {
		if (!c.body)
			c.body = calloc(1, 1);
		if (!c.body) {
			rc = MGW_ENOMEM;
			goto fail;
		}
		*body = c.body;
		c.body = NULL;
	}
	rc = 0;
fail:
	free(c.body);
	close(fd);
	return rc;
}

int mgw_bench_wait_http_ok(int port, const char *path, double timeout_s)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(timeout_s * 1e9);

	for (;;) {
		int status = 0;

		if (mgw_bench_http_get(port, path, 2.0, &status, NULL) == 0 &&
		    status == 200)
			return 0;
		if (mgw_now_ns() >= end || mgw_bench_sleep(0.05))
			return MGW_ETIMEDOUT;
	}
}

int mgw_bench_redis_ping(int port, double timeout_s)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(timeout_s * 1e9);
	char buf[64];
	size_t got = 0;
	int fd = connect_by(port, end), rc = MGW_EIO;

	if (fd < 0)
		return MGW_EIO;
	if (send_all(fd, "PING\r\n", 6, end) != 0)
		goto out;
	while (got < sizeof(buf) - 1) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, ms_left(end)) <= 0)
			break;
		n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n")) {
			rc = strncmp(buf, "+PONG\r\n", 7) == 0 ? 0 : MGW_EPROTO;
			break;
		}
	}
out:
	close(fd);
	return rc;
}

/* Length of the complete RESP value at s[0..n), 0 while incomplete,
 * -1 when it is not one this reader knows.  depth: arrays inside arrays
 * are not read (the bench asks for nothing that returns them). */
static long resp_len(const char *s, size_t n, int depth)
{
	const char *eol = memchr(s, '\n', n);
	long head, len, count, used;

	if (n == 0 || !eol)
		return 0;
	head = (long)(eol - s) + 1;
	switch (s[0]) {
	case '+': case '-': case ':':
		return head;
	case '$':
		len = strtol(s + 1, NULL, 10);
		if (len < 0)
			return head;
		return (size_t)(head + len + 2) <= n ? head + len + 2 : 0;
	case '*':
		count = strtol(s + 1, NULL, 10);
		if (depth > 0)
			return -1;
		for (used = head; count > 0; count--) {
			long l = resp_len(s + used, n - (size_t)used, depth + 1);

			if (l <= 0)
				return l;
			used += l;
		}
		return used;
	}
	return -1;
}

int mgw_bench_redis_query(int port, const char *cmd, char *buf, size_t len,
                          double timeout_s)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(timeout_s * 1e9);
	size_t got = 0;
	int fd = connect_by(port, end), rc = MGW_EIO;
	char line[512];
	int n;

	if (fd < 0 || len < 2)
		goto out;
	n = snprintf(line, sizeof(line), "%s\r\n", cmd);
	if (n < 0 || (size_t)n >= sizeof(line) ||
	    send_all(fd, line, (size_t)n, end) != 0)
		goto out;
	buf[0] = '\0';
	while (got < len - 1) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t r;
		long l;

		if (poll(&pf, 1, ms_left(end)) <= 0) {
			rc = MGW_ETIMEDOUT;
			break;
		}
		r = recv(fd, buf + got, len - 1 - got, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		buf[got] = '\0';
		l = resp_len(buf, got, 0);
		if (l != 0) {
			rc = l > 0 ? 0 : MGW_EIO;
			break;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* A bitmap of ports: a busy machine's /proc/net/tcp has tens of
 * thousands of lines, and a long run thousands of ports. */
struct portset {
	unsigned char bits[65536 / 8];
};

static int port_in(unsigned port, const struct portset *set)
{
	return port < 65536 && (set->bits[port / 8] >> (port % 8)) & 1;
}

size_t mgw_bench_timewait_count_text(const char *text, const uint16_t *ports,
                                     size_t n)
{
	static struct portset set; /* 8 KiB, single-threaded program */
	size_t count = 0;
	const char *line = text;

	memset(&set, 0, sizeof(set));
	for (size_t i = 0; i < n; i++)
		set.bits[ports[i] / 8] |= (unsigned char)(1u << (ports[i] % 8));

	/* "  sl  local_address rem_address   st ..." then one socket per
	 * line: "   0: 0100007F:1F90 0100007F:C350 06 ...", addresses in hex
	 * with the port after the colon (tcp6: 32 hex digits of address). */
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		char la[64], ra[64], st[8];
		unsigned lport = 0, rport = 0;
		const char *c;

		if (sscanf(line, " %*[0-9]: %63s %63s %7s", la, ra, st) == 3 &&
		    strcmp(st, "06") == 0) {
			c = strrchr(la, ':');
			if (c)
				lport = (unsigned)strtoul(c + 1, NULL, 16);
			c = strrchr(ra, ':');
			if (c)
				rport = (unsigned)strtoul(c + 1, NULL, 16);
			if (port_in(lport, &set) || port_in(rport, &set))
				count++;
		}
		line = nl ? nl + 1 : NULL;
	}
	return count;
}

/* Reads a whole /proc file (they report size 0, so read to EOF). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t n;

		if (cap - len < 65536) {
			char *nb;

			if (cap >= (64u << 20)) /* bounded: 64 MiB of sockets */
				break;
			nb = realloc(buf, cap ? cap * 2 : 262144);
			if (!nb)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 262144;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

size_t mgw_bench_timewait_count(const uint16_t *ports, size_t n)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	size_t count = 0;

	for (size_t i = 0; i < 2; i++) {
		char *text = slurp(files[i]);

		if (text)
			count += mgw_bench_timewait_count_text(text, ports, n);
		free(text);
	}
	return count;
}
