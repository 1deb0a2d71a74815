/* serve_listeners_test.c - unit tests for src/net/serve_listeners.c: one
 * socket per worker for every listener (worker 0 picks the port, the
 * others share it with SO_REUSEPORT), TLS contexts, the messages of each
 * failure, the log lines and the "listening on" lines on stdout. */
#include "autoconf.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "../capture.h"
#include "../http/testsrv.h" /* ts_make_cert */
#include "core/errors.h"
#include "core/log.h"
#include "net/listener.h"
#include "net/serve_listeners.h"

#define MAX_SOCKS 16

/* The test's "server": real listeners on one loop, or a failure
 * injected at one call. */
struct fake {
	struct event_base *base;
	struct mgw_listener *socks[MAX_SOCKS];
	SSL_CTX *tls[MAX_SOCKS];        /* a reference per socket, as servers keep */
	unsigned worker[MAX_SOCKS];
	char address[MAX_SOCKS][MGW_BOUND_LEN]; /* what each call was asked to bind */
	int reuse[MAX_SOCKS];
	int calls;
	int fail_at;                    /* call index that fails, or -1 */
	int fail_rc, fail_errno;
};

static void on_accept(evutil_socket_t fd, const struct sockaddr *sa,
                      int salen, void *arg)
{
	(void)sa;
	(void)salen;
	(void)arg;
	close(fd);
}

static int on_bind(void *arg, unsigned worker, const char *address,
                   SSL_CTX *tls, int reuseport, char *bound, size_t boundlen)
{
	struct fake *f = arg;
	int i = f->calls++;

	assert_true(i < MAX_SOCKS);
	f->worker[i] = worker;
	f->reuse[i] = reuseport;
	snprintf(f->address[i], sizeof(f->address[i]), "%s", address);
	if (i == f->fail_at) {
		errno = f->fail_errno;
		return f->fail_rc;
	}
	if (tls) {
		SSL_CTX_up_ref(tls);
		f->tls[i] = tls;
	}
	return mgw_listener_new_opts(&f->socks[i], f->base, address,
	                             reuseport ? MGW_LISTEN_REUSEPORT : 0,
	                             on_accept, f, bound, boundlen);
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->base = event_base_new();
	assert_non_null(f->base);
	f->fail_at = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < MAX_SOCKS; i++) {
		mgw_listener_free(f->socks[i]);
		SSL_CTX_free(f->tls[i]);
	}
	event_base_free(f->base);
	free(f);
	return 0;
}

/* What the last mgw_serve_listeners_open wrote. */
static struct cap cap;

static int open_captured(struct mgw_serve_listeners *sl,
                         const struct mgw_listen_spec *ls, size_t n)
{
	int rc;

	cap_begin(&cap);
	rc = mgw_serve_listeners_open(sl, ls, n);
	cap_end(&cap);
	return rc;
}

static struct mgw_serve_listeners listeners(struct fake *f, unsigned workers,
                                            int log_workers)
{
	return (struct mgw_serve_listeners){
		.cmd = "demo", .n_workers = workers, .log_workers = log_workers,
		.bind = on_bind, .arg = f,
	};
}

/* ---- tests ---- */

static void test_one_worker(void **state)
{
	struct fake *f = *state;
	struct mgw_serve_listeners sl = listeners(f, 1, 0);
	struct mgw_listen_spec ls[] = {
		{.address = "127.0.0.1:0"}, {.address = "127.0.0.1:0"},
	};
	char want[256];

	mgw_log_set_level(MGW_LOG_INFO);
	assert_int_equal(open_captured(&sl, ls, 2), 0);
	assert_int_equal(f->calls, 2);
	assert_int_equal(f->reuse[0], 0);
	assert_string_equal(f->address[0], "127.0.0.1:0");
	assert_non_null(strstr(sl.bound[0], "127.0.0.1:"));
	assert_string_not_equal(sl.bound[0], "127.0.0.1:0");
	assert_string_not_equal(sl.bound[0], sl.bound[1]);
	snprintf(want, sizeof(want), "listening on %s\nlistening on %s\n",
	         sl.bound[0], sl.bound[1]);
	assert_string_equal(cap.out, want);
	snprintf(want, sizeof(want), "listening on %s\n", sl.bound[0]);
	assert_non_null(strstr(cap.err, want)); /* the log line, no workers */
	assert_null(strstr(cap.err, "workers"));
}

static void test_workers_share_the_port(void **state)
{
	struct fake *f = *state;
	struct mgw_serve_listeners sl = listeners(f, 3, 1);
	struct mgw_listen_spec ls[] = {{.address = "127.0.0.1:0"}};
	char want[256];

	mgw_log_set_level(MGW_LOG_INFO);
	assert_int_equal(open_captured(&sl, ls, 1), 0);
	assert_int_equal(f->calls, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(f->worker[i], (unsigned)i);
		assert_int_equal(f->reuse[i], 1);
	}
	/* worker 0 asks for port 0, the others for what it got */
	assert_string_equal(f->address[0], "127.0.0.1:0");
	assert_string_equal(f->address[1], sl.bound[0]);
	assert_string_equal(f->address[2], sl.bound[0]);
	snprintf(want, sizeof(want), "listening on %s\n", sl.bound[0]);
	assert_string_equal(cap.out, want);
	snprintf(want, sizeof(want), "listening on %s (3 workers)\n", sl.bound[0]);
	assert_non_null(strstr(cap.err, want));
}

static void test_invalid_address(void **state)
{
	struct fake *f = *state;
	struct mgw_serve_listeners sl = listeners(f, 2, 1);
	struct mgw_listen_spec ls[] = {
		{.address = "127.0.0.1:0"}, {.address = "no-such-host.invalid:1"},
	};

	f->fail_at = 2;
	f->fail_rc = MGW_EINVAL;
	assert_int_equal(open_captured(&sl, ls, 2), MGW_EINVAL);
	assert_int_equal(f->calls, 3); /* stopped at the failure */
	assert_string_equal(cap.out, "");   /* nothing announced */
	assert_non_null(strstr(cap.err, "mcpgw demo: invalid listen address "
	                       "'no-such-host.invalid:1'\n"));
}

static void test_bind_failure_names_the_address(void **state)
{
	struct fake *f = *state;
	struct mgw_serve_listeners sl = listeners(f, 2, 1);
	struct mgw_listen_spec ls[] = {{.address = "127.0.0.1:0"}};
	char want[256];

	f->fail_at = 1; /* worker 1, binding what worker 0 got */
	f->fail_rc = MGW_EIO;
	f->fail_errno = EADDRINUSE;
	assert_int_equal(open_captured(&sl, ls, 1), MGW_EIO);
	assert_string_equal(cap.out, "");
	snprintf(want, sizeof(want), "mcpgw demo: cannot listen on %s: %s\n",
	         sl.bound[0], strerror(EADDRINUSE));
	assert_string_equal(cap.err, want);
}

static void test_out_of_memory(void **state)
{
	struct fake *f = *state;
	struct mgw_serve_listeners sl = listeners(f, 1, 0);
	struct mgw_listen_spec ls[] = {{.address = "127.0.0.1:0"}};

	f->fail_at = 0;
	f->fail_rc = MGW_ENOMEM;
	f->fail_errno = 0;
	assert_int_equal(open_captured(&sl, ls, 1), MGW_ENOMEM);
	assert_string_equal(cap.err, "mcpgw demo: cannot listen on 127.0.0.1:0: "
	                    "out of memory\n");
}

static void test_tls_files_rejected(void **state)
{
	struct fake *f = *state;
	struct mgw_serve_listeners sl = listeners(f, 2, 1);
	struct mgw_listen_spec ls[] = {
		{"127.0.0.1:0", "/nonexistent/cert.pem", "/nonexistent/key.pem"},
	};

	assert_int_equal(open_captured(&sl, ls, 1), MGW_EINVAL);
	assert_int_equal(f->calls, 0); /* nothing bound */
	assert_string_equal(cap.out, "");
	assert_non_null(strstr(cap.err, "mcpgw demo: TLS for 127.0.0.1:0: "));
	assert_non_null(strstr(cap.err, "/nonexistent/cert.pem"));
}

static void test_tls_listener(void **state)
{
	struct fake *f = *state;
	struct mgw_serve_listeners sl = listeners(f, 2, 1);
	char dir[] = "/tmp/mgw-sl-test-XXXXXX", cert[128], key[128], want[256];
	struct mgw_listen_spec ls[2];

	assert_non_null(mkdtemp(dir));
	ts_make_cert(dir, cert, sizeof(cert), key, sizeof(key));
	ls[0] = (struct mgw_listen_spec){"127.0.0.1:0", NULL, NULL};
	ls[1] = (struct mgw_listen_spec){"127.0.0.1:0", cert, key};
	mgw_log_set_level(MGW_LOG_INFO);
	assert_int_equal(open_captured(&sl, ls, 2), 0);
	assert_int_equal(f->calls, 4);
	assert_null(f->tls[0]);
	assert_null(f->tls[1]);
	/* one context for every worker's socket of the TLS listener */
	assert_non_null(f->tls[2]);
	assert_ptr_equal(f->tls[2], f->tls[3]);
	snprintf(want, sizeof(want), "listening on %s (TLS) (2 workers)\n",
	         sl.bound[1]);
	assert_non_null(strstr(cap.err, want));
	snprintf(want, sizeof(want), "listening on %s\nlistening on %s\n",
	         sl.bound[0], sl.bound[1]);
	assert_string_equal(cap.out, want);
	unlink(cert);
	unlink(key);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workers_share_the_port, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_invalid_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bind_failure_names_the_address,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_files_rejected, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_tls_listener, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
