/* net_test.c - unit tests for bench/src/net.c: the TIME_WAIT census of a
 * /proc/net/tcp(6) text counts state 06 on the bench's ports only; a
 * free port refuses connections; the HTTP GET reads a status and a body
 * (plain and chunked) from a one-shot server thread, and refuses what is
 * not HTTP; Redis PING wants +PONG. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/errors.h"
#include "bench/src/net.h"

static const char tcp4[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000 100 0 0 10 0\n"
	"   1: 0100007F:1F90 0100007F:C350 06 00000000:00000000 03:00000ABC 00000000     0        0 0 3 0000\n"
	"   2: 0100007F:C351 0100007F:1F90 06 00000000:00000000 03:00000ABC 00000000     0        0 0 3 0000\n"
	"   3: 0100007F:C352 0100007F:2328 06 00000000:00000000 03:00000ABC 00000000     0        0 0 3 0000\n"
	"   4: 0100007F:C353 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 5 1 0000\n";
static const char tcp6[] =
	"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 0000000000000000FFFF00000100007F:2328 0000000000000000FFFF00000100007F:D000 06 00000000:00000000 03:00000ABC 00000000     0        0 0 3 0000\n";

static void test_timewait(void **state)
{
	uint16_t ports[] = { 8080 };   /* 0x1F90 */
	uint16_t both[] = { 8080, 9000 }; /* 0x2328 */

	(void)state;
	/* line 1 (local 8080) and 2 (remote 8080); LISTEN and ESTABLISHED
	 * and other ports are not counted */
	assert_int_equal(mgw_bench_timewait_count_text(tcp4, ports, 1), 2);
	assert_int_equal(mgw_bench_timewait_count_text(tcp4, both, 2), 3);
	assert_int_equal(mgw_bench_timewait_count_text(tcp6, both, 2), 1);
	assert_int_equal(mgw_bench_timewait_count_text(tcp6, ports, 1), 0);
	assert_int_equal(mgw_bench_timewait_count_text("", ports, 1), 0);
	assert_int_equal(mgw_bench_timewait_count_text(tcp4, ports, 0), 0);
}

static void test_refused(void **state)
{
	int port = mgw_bench_free_port();

	(void)state;
	assert_true(port > 0);
	assert_int_equal(mgw_bench_connect_errno(port, 1.0), ECONNREFUSED);
}

/* A listener on 127.0.0.1 that answers one connection with a canned
 * response after reading the request head. */
struct srv {
	int fd, port;
	const char *answer;
	pthread_t th;
};

static void *serve_one(void *arg)
{
	struct srv *s = arg;
	char buf[2048];
	size_t got = 0;
	int c = accept(s->fd, NULL, NULL);

	if (c < 0)
		return NULL;
	while (got < sizeof(buf) - 1) {
		ssize_t n = recv(c, buf + got, sizeof(buf) - 1 - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n") || strcmp(buf, "PING\r\n") == 0)
			break;
	}
	if (send(c, s->answer, strlen(s->answer), MSG_NOSIGNAL) < 0)
		s->answer = NULL;
	close(c);
	return NULL;
}

static void srv_start(struct srv *s, const char *answer)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 4), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
	s->port = ntohs(a.sin_port);
	s->answer = answer;
	assert_int_equal(pthread_create(&s->th, NULL, serve_one, s), 0);
}

static void srv_stop(struct srv *s)
{
	pthread_join(s->th, NULL);
	close(s->fd);
}

static void test_http_get(void **state)
{
	struct srv s;
	int status = 0;
	char *body = NULL;

	(void)state;
	srv_start(&s, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"a\": 1}\r\n\r\n");
	assert_int_equal(mgw_bench_http_get(s.port, "/mcpgw/stats", 5.0, &status,
	                                    &body), 0);
	srv_stop(&s);
	assert_int_equal(status, 200);
	assert_string_equal(body, "{\"a\": 1}\r\n\r\n");
	free(body);

	srv_start(&s, "HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n"
	              "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
	assert_int_equal(mgw_bench_http_get(s.port, "/healthz", 5.0, &status,
	                                    &body), 0);
	srv_stop(&s);
	assert_int_equal(status, 503);
	assert_string_equal(body, "abcde");
	free(body);

	/* no length: the body ends with the connection */
	srv_start(&s, "HTTP/1.0 200 OK\r\n\r\nok");
	assert_int_equal(mgw_bench_http_get(s.port, "/", 5.0, &status, NULL), 0);
	srv_stop(&s);
	assert_int_equal(status, 200);

	srv_start(&s, "+PONG\r\n");
	assert_int_equal(mgw_bench_http_get(s.port, "/", 5.0, &status, NULL),
	                 MGW_EPROTO);
	srv_stop(&s);
}

static void test_redis_ping(void **state)
{
	struct srv s;

	(void)state;
	srv_start(&s, "+PONG\r\n");
	assert_int_equal(mgw_bench_redis_ping(s.port, 5.0), 0);
	srv_stop(&s);
	srv_start(&s, "-ERR no\r\n");
	assert_int_not_equal(mgw_bench_redis_ping(s.port, 5.0), 0);
	srv_stop(&s);
	assert_int_not_equal(mgw_bench_redis_ping(mgw_bench_free_port(), 1.0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timewait),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_http_get),
		cmocka_unit_test(test_redis_ping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
