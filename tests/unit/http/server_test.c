/* server_test.c - server lifecycle (src/http/server.c): listeners on IPv4
 * and IPv6, bound addresses, max_connections, graceful shutdown with its
 * deadline, and freeing a busy server. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/server.h"
#include "net/listener.h"
#include "util/time.h"
#include "testsrv.h"

static void test_defaults_and_reasons(void **state)
{
	struct mgw_http_limits lim;

	mgw_http_limits_default(&lim);
	assert_true(lim.max_header_bytes >= 8192);
	assert_true(lim.max_headers >= 50);
	assert_true(lim.max_uri >= 2048);
	assert_true(lim.max_body >= 1024 * 1024);
	assert_true(lim.max_streams >= 1);
	assert_true(lim.max_connections >= 1);
	assert_true(lim.write_high_watermark > 0);
	assert_true(lim.header_timeout > 0 && lim.body_timeout > 0);
	assert_true(lim.idle_timeout > 0 && lim.write_timeout > 0);
	assert_string_equal(mgw_http_reason(404), "Not Found");
	assert_string_equal(mgw_http_reason(431), "Request Header Fields Too Large");
	assert_string_equal(mgw_http_reason(799), "Unknown");
}

static void test_listeners(void **state)
{
	struct ts t;
	char bound[80];
	struct tc c;
	struct resp r;
	int rc;

	ts_start(&t, NULL, NULL);
	assert_int_equal(mgw_http_server_listen(t.srv, "nonsense", NULL, bound,
	                                        sizeof(bound)), MGW_EINVAL);
	assert_int_equal(mgw_http_server_listen(t.srv, "127.0.0.1:99999", NULL,
	                                        bound, sizeof(bound)), MGW_EINVAL);
	/* the port of the first listener is taken */
	assert_int_equal(mgw_http_server_listen(t.srv, t.addr, NULL, bound,
	                                        sizeof(bound)), MGW_EIO);
	/* a second IPv4 listener on the same server */
	assert_int_equal(mgw_http_server_listen(t.srv, "127.0.0.1:0", NULL, bound,
	                                        sizeof(bound)), 0);
	assert_string_not_equal(bound, t.addr);
	tc_open(&t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	tc_close(&c);
	snprintf(t.addr, sizeof(t.addr), "%s", bound);
	tc_open(&t, &c);
	tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&c, &r), 0);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	tc_close(&c);
	/* IPv6, when the host has it */
	rc = mgw_http_server_listen(t.srv, "[::1]:0", NULL, bound, sizeof(bound));
	if (rc == 0) {
		assert_int_equal(strncmp(bound, "[::1]:", 6), 0);
		snprintf(t.addr, sizeof(t.addr), "%s", bound);
		tc_open(&t, &c);
		tc_sends(&c, "GET /echo HTTP/1.1\r\nHost: [::1]\r\n\r\n");
		assert_int_equal(tc_response(&c, &r), 0);
		assert_int_equal(r.status, 200);
		resp_free(&r);
		tc_close(&c);
	} else {
		print_message("IPv6 loopback unavailable here; skipped that part\n");
	}
	ts_stop(&t);
}

static void test_max_connections(void **state)
{
	struct ts t;
	struct mgw_http_limits lim;
	struct tc a, b, d;
	struct resp r;

	mgw_http_limits_default(&lim);
	lim.max_connections = 2;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &a);
	tc_open(&t, &b);
	ts_pump(&t, 5);
	assert_int_equal(mgw_http_server_connections(t.srv), 2);
	tc_open(&t, &d);
	tc_sends(&d, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_true(tc_closed(&d));
	assert_int_equal(d.nraw, 0);
	tc_close(&d);
	assert_int_equal(mgw_http_server_connections(t.srv), 2);
	tc_close(&a);
	ts_pump(&t, 5);
	tc_open(&t, &d);
	tc_sends(&d, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&d, &r), 0);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	tc_close(&d);
	tc_close(&b);
	ts_stop(&t);
}

/* Client-fault lines (here: connections refused at max_connections) are
 * rate limited: an accept storm writes at most 20 lines a second, and the
 * next one after says how many were left out. */
static size_t count_in(const char *buf, const char *needle)
{
	size_t n = 0;

	for (const char *p = buf; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_refusals_rate_limited(void **state)
{
	char path[] = "/tmp/mcpgw-server-test.XXXXXX";
	int fd = mkstemp(path), saved;
	struct mgw_http_limits lim;
	struct ts t;
	struct tc a, d;
	char buf[65536];
	ssize_t n;
	uint64_t until;

	(void)state;
	assert_true(fd >= 0);
	mgw_log_set_level(MGW_LOG_INFO);
	mgw_http_limits_default(&lim);
	lim.max_connections = 1;
	ts_start(&t, &lim, NULL);
	tc_open(&t, &a);
	ts_pump(&t, 5);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	for (int i = 0; i < 100; i++) {
		tc_open(&t, &d);
		ts_pump(&t, 1);
		tc_close(&d);
	}
	/* past the second boundary, one more refusal brings the summary */
	until = mgw_now_ms() + 1100;
	while (mgw_now_ms() < until)
		ts_pump(&t, 10);
	tc_open(&t, &d);
	ts_pump(&t, 5);
	tc_close(&d);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	close(fd);
	unlink(path);
	/* every refusal is either a line or counted in a summary, and the
	 * lines are far fewer than the refusals */
	{
		size_t lines = count_in(buf, "connection refused (max_connections)");
		unsigned long long left = 0, k;
		const char *p = buf;

		while ((p = strstr(p, " client-fault log lines left out"))) {
			const char *q = p;
			while (q > buf && q[-1] >= '0' && q[-1] <= '9')
				q--;
			assert_int_equal(sscanf(q, "%llu", &k), 1);
			left += k;
			p++;
		}
		assert_true(left > 0);
		assert_true(lines < 60);
		assert_int_equal(lines + left, 101);
	}
	tc_close(&a);
	ts_stop(&t);
}

/* Loopback addresses (admin.stats: loopback trusts them). */
static void test_loopback_addresses(void **state)
{
	static const struct { const char *ip; int v6, want; } cases[] = {
		{"127.0.0.1", 0, 1}, {"127.1.2.3", 0, 1}, {"10.0.0.1", 0, 0},
		{"128.0.0.1", 0, 0}, {"::1", 1, 1}, {"::ffff:127.0.0.1", 1, 1},
		{"::ffff:10.0.0.1", 1, 0}, {"2001:db8::1", 1, 0}, {"::", 1, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sockaddr_storage ss;

		memset(&ss, 0, sizeof(ss));
		if (cases[i].v6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
			a->sin6_family = AF_INET6;
			assert_int_equal(inet_pton(AF_INET6, cases[i].ip,
			                           &a->sin6_addr), 1);
		} else {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;
			a->sin_family = AF_INET;
			assert_int_equal(inet_pton(AF_INET, cases[i].ip,
			                           &a->sin_addr), 1);
		}
		if (mgw_sockaddr_is_loopback((struct sockaddr *)&ss) !=
		    cases[i].want)
			fail_msg("%s: expected %d", cases[i].ip, cases[i].want);
	}
}

static void test_shutdown_graceful(void **state)
{
	struct ts t;
	struct tc idle, busy;
	struct resp r;

	ts_start(&t, NULL, NULL);
	tc_open(&t, &idle);
	tc_sends(&idle, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(tc_response(&idle, &r), 0);
	resp_free(&r);
	tc_open(&t, &busy);
	tc_sends(&busy, "GET /hold HTTP/1.1\r\nHost: a\r\n\r\n");
	ts_wait_held(&t, 0);

	mgw_http_server_shutdown(t.srv, 10.0, ts_done_cb, &t);
	/* idle keep-alive connections go at once, new ones are refused */
	assert_true(tc_closed(&idle));
	assert_true(ts_connect_addr(t.addr) < 0);
	assert_int_equal(t.done_calls, 0);
	assert_int_equal(mgw_http_server_connections(t.srv), 1);
	/* the request in flight is answered, with Connection: close */
	assert_int_equal(mgw_http_respond(t.held[0], 200, NULL, NULL, "bye", 3), 0);
	t.held[0] = NULL;
	assert_int_equal(tc_response(&busy, &r), 0);
	assert_string_equal(r.body, "bye");
	assert_string_equal(resp_header(&r, "connection"), "close");
	resp_free(&r);
	assert_true(tc_closed(&busy));
	assert_true(ts_wait(&t, &t.done_calls));
	ts_pump(&t, 5);
	assert_int_equal(t.done_calls, 1);
	assert_int_equal(t.aborts, 0);
	tc_close(&idle);
	tc_close(&busy);
	ts_stop(&t);
}

static void test_shutdown_deadline(void **state)
{
	struct ts t;
	struct tc c;

	ts_start(&t, NULL, NULL);
	tc_open(&t, &c);
	tc_sends(&c, "GET /stream-hold HTTP/1.1\r\nHost: a\r\n\r\n");
	ts_wait_held(&t, 0);
	mgw_http_server_shutdown(t.srv, 0.05, ts_done_cb, &t);
	assert_true(ts_wait(&t, &t.done_calls));
	ts_pump(&t, 5);
	assert_int_equal(t.aborts, 1);
	assert_null(t.held[0]);
	assert_int_equal(t.done_calls, 1);
	assert_int_equal(mgw_http_server_connections(t.srv), 0);
	assert_true(tc_closed(&c));
	tc_close(&c);
	ts_stop(&t);

	/* nothing to wait for: done still runs, from the loop */
	ts_start(&t, NULL, NULL);
	mgw_http_server_shutdown(t.srv, 5.0, ts_done_cb, &t);
	assert_int_equal(t.done_calls, 0);
	assert_true(ts_wait(&t, &t.done_calls));
	ts_stop(&t);
}

static void test_free_busy_server(void **state)
{
	struct ts t;
	struct tc a, b;

	ts_start(&t, NULL, NULL);
	tc_open(&t, &a);
	tc_sends(&a, "GET /hold HTTP/1.1\r\nHost: a\r\n\r\n");
	/* a streamed response that never ends by itself (a timer-driven /sse
	 * stream could finish while the test waits on a loaded machine) */
	tc_open(&t, &b);
	tc_sends(&b, "GET /stream-hold HTTP/1.1\r\nHost: a\r\n\r\n");
	ts_wait_held(&t, 0);
	ts_wait_held(&t, 1);
	assert_true(tc_wait_raw(&b, "text/event-stream"));
	mgw_http_server_free(t.srv);
	t.srv = NULL;
	assert_int_equal(t.aborts, 2);
	event_base_free(t.base);
	close(a.fd);
	close(b.fd);
	free(a.pend);
	free(a.raw);
	free(b.pend);
	free(b.raw);
}

int main(void)
{
	mgw_log_set_level(MGW_LOG_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_reasons),
		cmocka_unit_test(test_listeners),
		cmocka_unit_test(test_max_connections),
		cmocka_unit_test(test_refusals_rate_limited),
		cmocka_unit_test(test_loopback_addresses),
		cmocka_unit_test(test_shutdown_graceful),
		cmocka_unit_test(test_shutdown_deadline),
		cmocka_unit_test(test_free_busy_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
