/* redis_test.c - unit tests for src/net/redis.c: URL checks, commands
 * against a real redis-server on an ephemeral loopback port (binary-safe
 * arguments, never answered inside the call), state transitions when the
 * server is killed and restarted, refusal while down, a per-command
 * timeout against a server that stops answering, never up (and backing
 * off) against servers that accept but close, stay silent or refuse the
 * password, and commands still out at free.  Every wait is bounded. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"
#include "../redisd.h"

#define WAIT_S 10.0

static struct redisd rd;

struct answer {
	int calls;
	int status;
	int type;               /* reply type, -1 without a reply */
	long long integer;
	char str[64];
	size_t len;
	int *in_call;
};

struct states {
	int n;
	enum mgw_redis_state last;
	int ups, downs;
	char why[160];          /* of the last DOWN */
};

static void on_answer(void *arg, int status, redisReply *rep)
{
	struct answer *a = arg;

	if (a->in_call && *a->in_call)
		fail_msg("answered inside the call");
	a->calls++;
	a->status = status;
	a->type = rep ? rep->type : -1;
	if (rep && rep->type == REDIS_REPLY_INTEGER)
		a->integer = rep->integer;
	if (rep && (rep->type == REDIS_REPLY_STRING ||
	            rep->type == REDIS_REPLY_STATUS ||
	            rep->type == REDIS_REPLY_ERROR)) {
		a->len = rep->len < sizeof(a->str) ? rep->len : sizeof(a->str);
		memcpy(a->str, rep->str, a->len);
	}
}

static void on_state(void *arg, enum mgw_redis_state st, const char *why)
{
	struct states *s = arg;

	if (why)
		snprintf(s->why, sizeof(s->why), "%s", why);
	s->n++;
	s->last = st;
	if (st == MGW_REDIS_UP)
		s->ups++;
	if (st == MGW_REDIS_DOWN)
		s->downs++;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* A loop whose EVLOOP_ONCE never blocks long. */
static struct event_base *base_new(struct event **tick)
{
	struct event_base *b = event_base_new();
	struct timeval tv = {0, 5000};

	assert_non_null(b);
	*tick = event_new(b, -1, EV_PERSIST, on_tick, NULL);
	event_add(*tick, &tv);
	return b;
}

static void pump_until(struct event_base *b, const int *flag)
{
	for (double end = now_s() + WAIT_S; !*flag && now_s() < end;)
		event_base_loop(b, EVLOOP_ONCE);
	assert_true(*flag);
}

static void pump_state(struct event_base *b, struct mgw_redis *r,
                       enum mgw_redis_state want)
{
	for (double end = now_s() + WAIT_S;
	     mgw_redis_state(r) != want && now_s() < end;)
		event_base_loop(b, EVLOOP_ONCE);
	assert_int_equal(mgw_redis_state(r), want);
}

static int group_setup(void **state)
{
	(void)state;
	mgw_log_set_level(MGW_LOG_ERROR);
	return redisd_start(&rd, 0) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	redisd_kill(&rd);
	return 0;
}

static void test_urls(void **state)
{
	static const char *const bad[] = {
		"http://127.0.0.1:6379", "redis://", "redis:///0",
		"redis://127.0.0.1:notaport", "redis://127.0.0.1:70000",
		"redis://127.0.0.1:6379/x", "127.0.0.1:6379", "unix:",
	};
	char err[256], disp[300];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(mgw_redis_url_check(bad[i], NULL, 0, err,
		                                     sizeof(err)), MGW_EINVAL);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(mgw_redis_url_check("redis://:s3cret@db.example:7000/3",
	                                     disp, sizeof(disp), err,
	                                     sizeof(err)), 0);
	assert_string_equal(disp, "redis://db.example:7000/3");
	assert_int_equal(mgw_redis_url_check("redis://[::1]", disp, sizeof(disp),
	                                     err, sizeof(err)), 0);
	assert_string_equal(disp, "redis://[::1]:6379");
	assert_int_equal(mgw_redis_url_check("unix:/run/redis.sock", disp,
	                                     sizeof(disp), err, sizeof(err)), 0);
	assert_string_equal(disp, "unix:/run/redis.sock");
	/* a password holding '/' and '@' (the userinfo ends at the last '@') */
	assert_int_equal(mgw_redis_url_check("redis://:ab/cd@e@db.example:7000/3",
	                                     disp, sizeof(disp), err,
	                                     sizeof(err)), 0);
	assert_string_equal(disp, "redis://db.example:7000/3");
	/* errors never show the password */
	assert_int_equal(mgw_redis_url_check("redis://:s3cret@db.example:99999",
	                                     NULL, 0, err, sizeof(err)),
	                 MGW_EINVAL);
	assert_null(strstr(err, "s3cret"));
	assert_non_null(strstr(err, "redis://***@db.example:99999"));
	assert_int_equal(mgw_redis_url_check("redis://:s3cret%zz@h", NULL, 0,
	                                     err, sizeof(err)), MGW_EINVAL);
	assert_null(strstr(err, "s3cret"));
	assert_int_equal(mgw_redis_url_check("http://:s3cret@h", NULL, 0,
	                                     err, sizeof(err)), MGW_EINVAL);
	assert_null(strstr(err, "s3cret"));
}

/* rediss:// parses as redis:// with the TLS flag; the display form and
 * the messages keep the scheme. */
static void test_rediss_urls(void **state)
{
	struct mgw_redis_url u;
	char err[256];

	(void)state;
	assert_int_equal(mgw_redis_url_parse("rediss://alice:pw@db.example/2",
	                                     &u, err, sizeof(err)), 0);
	assert_int_equal(u.tls, 1);
	assert_int_equal(u.port, 6379);
	assert_string_equal(u.host, "db.example");
	assert_string_equal(u.user, "alice");
	assert_string_equal(u.password, "pw");
	assert_int_equal(u.db, 2);
	assert_string_equal(u.display, "rediss://db.example:6379/2");
	mgw_redis_url_free(&u);
	assert_int_equal(mgw_redis_url_parse("redis://h:7000", &u, err,
	                                     sizeof(err)), 0);
	assert_int_equal(u.tls, 0);
	assert_string_equal(u.display, "redis://h:7000");
	mgw_redis_url_free(&u);
	assert_int_equal(mgw_redis_url_parse("rediss://[::1]:7001", &u, err,
	                                     sizeof(err)), 0);
	assert_int_equal(u.tls, 1);
	assert_int_equal(u.port, 7001);
	mgw_redis_url_free(&u);
	assert_int_equal(mgw_redis_url_check("rediss://", NULL, 0, err,
	                                     sizeof(err)), MGW_EINVAL);
	assert_int_equal(mgw_redis_url_check("redisss://h", NULL, 0, err,
	                                     sizeof(err)), MGW_EINVAL);
	assert_non_null(strstr(err, "rediss://"));
	assert_int_equal(mgw_redis_url_check("rediss://:s3cret@h:99999", NULL, 0,
	                                     err, sizeof(err)), MGW_EINVAL);
	assert_null(strstr(err, "s3cret"));
	assert_non_null(strstr(err, "rediss://***@h:99999"));
}

/* A rediss:// connection whose CA file does not load is refused at
 * creation with the file named (not a connection that never comes up);
 * a client certificate without its key too. */
static void test_rediss_bad_files(void **state)
{
	struct event_base *base = event_base_new();
	struct mgw_redis_tls_conf t = {.ca_file = "/nonexistent/ca.pem",
	                               .verify = 1};
	struct mgw_redis_opts o = {.url = "rediss://127.0.0.1:1", .tls = &t};
	char err[256] = "";

	(void)state;
	assert_null(mgw_redis_new(base, &o, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/ca.pem"));
	t.ca_file = NULL;
	t.cert_file = "/nonexistent/client.pem";
	err[0] = '\0';
	assert_null(mgw_redis_new(base, &o, err, sizeof(err)));
	assert_non_null(strstr(err, "key_file"));
	event_base_free(base);
}

/* Commands with binary arguments round-trip; answers come from the loop,
 * never inside the call; the first connection reports UP once. */
static void test_commands(void **state)
{
	struct event *tick;
	struct event_base *b = base_new(&tick);
	struct states ss = {0};
	struct mgw_redis_opts o = {.url = rd.url, .timeout = 2,
	                           .on_state = on_state, .state_arg = &ss};
	struct mgw_redis *r;
	struct mgw_redis_stats st;
	struct answer a = {0}, g = {0};
	const char *argv[] = {"SET", "bin\x01key", "v\x00\xffx"};
	const size_t lens[] = {3, 7, 4};
	const char *gargv[] = {"GET", "bin\x01key"};
	const size_t glens[] = {3, 7};
	char err[256];
	int in_call = 0;

	(void)state;
	r = mgw_redis_new(b, &o, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(mgw_redis_state(r), MGW_REDIS_CONNECTING);
	/* Accepted while connecting: sent once connected. */
	a.in_call = g.in_call = &in_call;
	in_call = 1;
	assert_int_equal(mgw_redis_command_argv(r, 3, argv, lens, on_answer, &a),
	                 0);
	assert_int_equal(mgw_redis_command_argv(r, 2, gargv, glens, on_answer,
	                                        &g), 0);
	in_call = 0;
	pump_until(b, &g.calls);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.type, REDIS_REPLY_STATUS);
	assert_int_equal(g.type, REDIS_REPLY_STRING);
	assert_int_equal(g.len, 4);
	assert_memory_equal(g.str, "v\x00\xffx", 4);
	assert_int_equal(ss.ups, 1);
	assert_int_equal(ss.downs, 0);
	assert_int_equal(mgw_redis_state(r), MGW_REDIS_UP);

	/* The format variant, and an error reply (counted, not a failure). */
	memset(&a, 0, sizeof(a));
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "INCRBY %s %lld",
	                                   "ctr", 41LL), 0);
	pump_until(b, &a.calls);
	assert_int_equal(a.integer, 41);
	memset(&a, 0, sizeof(a));
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "NOSUCHCOMMAND"), 0);
	pump_until(b, &a.calls);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.type, REDIS_REPLY_ERROR);
	mgw_redis_get_stats(r, &st);
	assert_int_equal(st.connects, 1);
	assert_int_equal(st.commands, 4);
	assert_int_equal(st.errors, 1);
	mgw_redis_free(r);
	event_free(tick);
	event_base_free(b);
}

/* Killed: commands out are answered MGW_EIO, the state goes DOWN once,
 * new commands are refused at once; restarted on the same port: UP again
 * by itself. */
static void test_down_and_back(void **state)
{
	struct event *tick;
	struct event_base *b = base_new(&tick);
	struct states ss = {0};
	struct mgw_redis_opts o = {.url = rd.url, .timeout = 2,
	                           .backoff_min = 0.05, .backoff_max = 0.2,
	                           .on_state = on_state, .state_arg = &ss};
	struct mgw_redis *r;
	struct answer a = {0};
	char err[256];
	uint16_t port = rd.port;

	(void)state;
	r = mgw_redis_new(b, &o, err, sizeof(err));
	assert_non_null(r);
	pump_state(b, r, MGW_REDIS_UP);
	/* A command that blocks on the server, out when the server dies. */
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "BLPOP nolist 5"),
	                 0);
	for (int i = 0; i < 5; i++)
		event_base_loop(b, EVLOOP_NONBLOCK);
	redisd_kill(&rd);
	pump_until(b, &a.calls);
	assert_int_equal(a.status, MGW_EIO);
	pump_state(b, r, MGW_REDIS_DOWN);
	memset(&a, 0, sizeof(a));
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "PING"), MGW_EIO);
	/* Attempts keep failing: still one DOWN transition. */
	for (double end = now_s() + 0.6; now_s() < end;)
		event_base_loop(b, EVLOOP_ONCE);
	assert_int_equal(ss.downs, 1);
	assert_int_equal(a.calls, 0);

	assert_int_equal(redisd_start(&rd, port), 0);
	pump_state(b, r, MGW_REDIS_UP);
	assert_int_equal(ss.ups, 2);
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "PING"), 0);
	pump_until(b, &a.calls);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.type, REDIS_REPLY_STATUS);
	mgw_redis_free(r);
	event_free(tick);
	event_base_free(b);
}

/* A server that accepts and never answers: the command times out, the
 * connection is torn down (DOWN) and tried again. */
/* A scripted server on loopback: a listening socket the test accepts
 * on while it pumps the client's loop. */
struct fake {
	int lfd;
	char url[96];
	int accepted;
};

static void fake_start(struct fake *f, const char *userinfo)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	memset(f, 0, sizeof(*f));
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(f->lfd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&sa, &len), 0);
	snprintf(f->url, sizeof(f->url), "redis://%s127.0.0.1:%u",
	         userinfo ? userinfo : "", (unsigned)ntohs(sa.sin_port));
}

/* Pumps the loop until a connection arrives (bounded); -1 if none. */
static int fake_accept(struct fake *f, struct event_base *b, double secs)
{
	for (double end = now_s() + secs; now_s() < end;) {
		int fd = accept(f->lfd, NULL, NULL);

		if (fd >= 0) {
			f->accepted++;
			return fd;
		}
		event_base_loop(b, EVLOOP_ONCE);
	}
	return -1;
}

/* A server that takes the connection and its setup PING, then answers
 * nothing: each command times out on its own clock, and the connection
 * goes down with it. */
static void test_timeout(void **state)
{
	struct event *tick;
	struct event_base *b = base_new(&tick);
	struct states ss = {0};
	struct fake f;
	char err[256];
	struct mgw_redis_opts o = {.timeout = 0.2, .on_state = on_state,
	                           .state_arg = &ss};
	struct mgw_redis *r;
	struct mgw_redis_stats st;
	struct answer a = {0}, a2 = {0};
	int fd;

	(void)state;
	fake_start(&f, NULL);
	o.url = f.url;
	r = mgw_redis_new(b, &o, err, sizeof(err));
	assert_non_null(r);
	fd = fake_accept(&f, b, WAIT_S);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "+PONG\r\n", 7), 7);
	pump_state(b, r, MGW_REDIS_UP);
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "PING"), 0);
	/* The second one's deadline later than the first's. */
	for (double end = now_s() + 0.05; now_s() < end;)
		event_base_loop(b, EVLOOP_ONCE);
	assert_int_equal(mgw_redis_command(r, on_answer, &a2, "PING"), 0);
	pump_until(b, &a2.calls);
	assert_int_equal(a.status, MGW_ETIMEDOUT);
	assert_int_equal(a2.status, MGW_EIO); /* behind it: dropped with it */
	assert_int_equal(a.calls, 1);
	assert_int_equal(a2.calls, 1);
	assert_int_equal(mgw_redis_state(r), MGW_REDIS_DOWN);
	mgw_redis_get_stats(r, &st);
	assert_int_equal(st.timeouts, 1);
	mgw_redis_free(r);
	close(fd);
	close(f.lfd);
	event_free(tick);
	event_base_free(b);
}

/* The password goes to AUTH decoded: "%25" is '%', and '/' and '@'
 * may stand in it as they are. */
static void test_auth_password_decoded(void **state)
{
	static const char want[] = "*2\r\n$4\r\nAUTH\r\n$9\r\nab/cd@e%f\r\n";
	struct event *tick;
	struct event_base *b = base_new(&tick);
	struct fake f;
	char err[256], got[128] = "";
	struct mgw_redis_opts o = {.timeout = 1};
	struct mgw_redis *r;
	size_t have = 0;
	int fd;

	(void)state;
	fake_start(&f, ":ab/cd@e%25f@");
	o.url = f.url;
	r = mgw_redis_new(b, &o, err, sizeof(err));
	assert_non_null(r);
	fd = fake_accept(&f, b, WAIT_S);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	for (double end = now_s() + WAIT_S;
	     now_s() < end && have < sizeof(want) - 1;) {
		ssize_t k = read(fd, got + have, sizeof(want) - 1 - have);

		if (k > 0)
			have += (size_t)k;
		else
			event_base_loop(b, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	}
	assert_string_equal(got, want);
	mgw_redis_free(r);
	close(fd);
	close(f.lfd);
	event_free(tick);
	event_base_free(b);
}

/* An ACL user: AUTH USER PASSWORD, both decoded. */
static void test_auth_acl_user(void **state)
{
	static const char want[] =
		"*3\r\n$4\r\nAUTH\r\n$7\r\nal:ic@e\r\n$3\r\np:w\r\n";
	struct event *tick;
	struct event_base *b = base_new(&tick);
	struct fake f;
	char err[256], got[128] = "";
	struct mgw_redis_opts o = {.timeout = 1};
	struct mgw_redis *r;
	size_t have = 0;
	int fd;

	(void)state;
	fake_start(&f, "al%3aic%40e:p:w@");
	o.url = f.url;
	r = mgw_redis_new(b, &o, err, sizeof(err));
	assert_non_null(r);
	fd = fake_accept(&f, b, WAIT_S);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	for (double end = now_s() + WAIT_S;
	     now_s() < end && have < sizeof(want) - 1;) {
		ssize_t k = read(fd, got + have, sizeof(want) - 1 - have);

		if (k > 0)
			have += (size_t)k;
		else
			event_base_loop(b, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	}
	assert_string_equal(got, want);
	mgw_redis_free(r);
	close(fd);
	close(f.lfd);
	event_free(tick);
	event_base_free(b);
}

/* Servers that take the TCP connection but are not a usable Redis: one
 * that closes at once (a full maxclients, a proxy in front of a dead
 * Redis), one that never answers, one that refuses the password.  None
 * makes the client report up, and the retries back off instead of
 * coming every backoff_min. */
static void test_not_ready(void **state)
{
	static const char *const kinds[] = { "close", "silent", "auth" };

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		struct event *tick;
		struct event_base *b = base_new(&tick);
		struct states ss = {0};
		struct fake f;
		char err[256];
		struct mgw_redis_opts o = {.timeout = 0.2, .backoff_min = 0.05,
		                           .backoff_max = 10, .on_state = on_state,
		                           .state_arg = &ss};
		struct mgw_redis *r;
		int fds[16], nfd = 0;
		double start = now_s();

		fake_start(&f, k == 2 ? ":wrong@" : NULL);
		o.url = f.url;
		r = mgw_redis_new(b, &o, err, sizeof(err));
		assert_non_null(r);
		/* 1.5 s: at 50 ms a retry without backoff would be 30 attempts;
		 * doubling from 50 ms (plus the 200 ms timeouts) gives few */
		while (now_s() < start + 1.5 && nfd < 16) {
			int fd = fake_accept(&f, b, start + 1.5 - now_s());

			if (fd < 0)
				break;
			if (k == 0)
				close(fd);
			else if (k == 2)
				assert_int_equal(write(fd, "-WRONGPASS invalid password\r\n"
				                       "+PONG\r\n", 36), 36);
			if (k != 0)
				fds[nfd++] = fd;
		}
		if (k == 2)
			assert_true(f.accepted >= 1);
		assert_int_equal(ss.ups, 0);
		assert_true(f.accepted <= 6);
		assert_true(mgw_redis_state(r) != MGW_REDIS_UP);
		mgw_redis_free(r);
		for (int i = 0; i < nfd; i++)
			close(fds[i]);
		close(f.lfd);
		event_free(tick);
		event_base_free(b);
		print_message("%s: %d attempts in 1.5 s\n", kinds[k], f.accepted);
	}
}

/* Nothing listens: the first attempt fails (DOWN, reported after
 * mgw_redis_new returned), commands are refused. */
/* A reply nothing asked for (after the setup's PING was answered), or
 * bytes that are not RESP: the connection is dropped as lost (a protocol
 * error, never an abort), DOWN with the reason. */
static void test_protocol_error(void **state)
{
	static const char *const sent[] = { "+PONG\r\n+EXTRA\r\n",
	                                    "+PONG\r\n!garbage\r\n" };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		struct event *tick;
		struct event_base *b = base_new(&tick);
		struct states ss = {0};
		struct fake f;
		char err[256];
		struct mgw_redis_opts o = {.timeout = 1, .backoff_min = 5,
		                           .on_state = on_state, .state_arg = &ss};
		struct mgw_redis *r;
		int fd;
		size_t n = strlen(sent[k]);

		fake_start(&f, NULL);
		o.url = f.url;
		r = mgw_redis_new(b, &o, err, sizeof(err));
		assert_non_null(r);
		fd = fake_accept(&f, b, 2);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, sent[k], n), (ssize_t)n);
		for (double end = now_s() + 2; now_s() < end && ss.downs == 0;)
			event_base_loop(b, EVLOOP_ONCE);
		assert_int_equal(ss.downs, 1);
		assert_int_equal(mgw_redis_state(r), MGW_REDIS_DOWN);
		assert_non_null(strstr(ss.why, "protocol error"));
		mgw_redis_free(r);
		close(fd);
		close(f.lfd);
		event_free(tick);
		event_base_free(b);
	}
}

static void test_unreachable(void **state)
{
	struct event *tick;
	struct event_base *b = base_new(&tick);
	struct states ss = {0};
	struct mgw_redis_opts o = {.url = "unix:/nonexistent/mgw.sock",
	                           .on_state = on_state, .state_arg = &ss};
	struct mgw_redis *r;
	struct answer a = {0};
	char err[256];

	(void)state;
	r = mgw_redis_new(b, &o, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ss.n, 0);          /* never inside mgw_redis_new */
	assert_int_equal(mgw_redis_state(r), MGW_REDIS_DOWN);
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "PING"), MGW_EIO);
	for (int i = 0; i < 5; i++)
		event_base_loop(b, EVLOOP_NONBLOCK);
	assert_int_equal(a.calls, 0);
	mgw_redis_free(r);
	event_free(tick);
	event_base_free(b);
}

/* Commands still out at free are answered MGW_EIO, from inside free. */
static void test_free_with_pending(void **state)
{
	struct event *tick;
	struct event_base *b = base_new(&tick);
	struct mgw_redis_opts o = {.url = rd.url};
	struct mgw_redis *r;
	struct answer a = {0};
	char err[256];

	(void)state;
	r = mgw_redis_new(b, &o, err, sizeof(err));
	assert_non_null(r);
	pump_state(b, r, MGW_REDIS_UP);
	assert_int_equal(mgw_redis_command(r, on_answer, &a, "BLPOP nolist 5"),
	                 0);
	mgw_redis_free(r);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.status, MGW_EIO);
	event_free(tick);
	event_base_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_rediss_urls),
		cmocka_unit_test(test_rediss_bad_files),
		cmocka_unit_test(test_auth_password_decoded),
		cmocka_unit_test(test_auth_acl_user),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_not_ready),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_protocol_error),
		cmocka_unit_test(test_free_with_pending),
		cmocka_unit_test(test_down_and_back),
	};

	if (!redisd_available()) {
		printf("redis-server not found: skipped\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
