/* redisd.c - a private redis-server for unit tests (redisd.h). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redisd.h"

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int redisd_available(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		return 0;
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n > 0 && n < sizeof(buf) - 16) {
			snprintf(buf, sizeof(buf), "%.*s/redis-server", (int)n,
			         path);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return 0;
}

/* Asks the kernel for a free port (redis-server cannot bind port 0 and
 * report it); another process may take it before redis does, hence the
 * retries in redisd_start. */
static uint16_t free_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	if (fd < 0)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static int pinged(uint16_t port)
{
	struct timeval tv = {0, 200000};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
	redisReply *r;
	int ok = 0;

	if (!c)
		return 0;
	if (!c->err) {
		redisSetTimeout(c, tv);
		r = redisCommand(c, "PING");
		ok = r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG");
		if (r)
			freeReplyObject(r);
	}
	redisFree(c);
	return ok;
}

/* fork + exec rather than posix_spawn: the child asks to be killed when
 * the test dies (an abort under a sanitizer skips every teardown), so no
 * redis-server outlives its test. */
static pid_t spawn(uint16_t port)
{
	char p[16];
	char *argv[] = {"redis-server", "--port", p, "--bind", "127.0.0.1",
	                "--save", "", "--appendonly", "no", "--daemonize", "no",
	                "--protected-mode", "yes", "--loglevel", "warning",
	                NULL};
	pid_t parent = getpid();
	pid_t pid;
	int fd;

	snprintf(p, sizeof(p), "%u", (unsigned)port);
	pid = fork();
	if (pid != 0)
		return pid > 0 ? pid : 0;
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(127);
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	execvp("redis-server", argv);
	_exit(127);
}

int redisd_start(struct redisd *d, uint16_t port)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		uint16_t p = port ? port : free_port();
		int status;

		if (!p)
			continue;
		d->pid = spawn(p);
		if (!d->pid)
			return -1;
		for (int i = 0; i < 100; i++) {
			if (pinged(p)) {
				d->port = p;
				snprintf(d->url, sizeof(d->url),
				         "redis://127.0.0.1:%u", (unsigned)p);
				return 0;
			}
			if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
				d->pid = 0;
				break;
			}
			nap_ms(50);
		}
		redisd_kill(d);
		/* The same port again (a restart) may need a moment. */
		if (port)
			nap_ms(200);
	}
	return -1;
}

void redisd_kill(struct redisd *d)
{
	int status;

	if (!d->pid)
		return;
	kill(d->pid, SIGKILL);
	for (int i = 0; i < 200; i++) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid)
			break;
		nap_ms(10);
	}
	d->pid = 0;
}

static redisReply *vcmd(const struct redisd *d, const char *fmt, va_list ap)
{
	struct timeval tv = {2, 0};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", d->port, tv);
	redisReply *r = NULL;

	if (!c)
		return NULL;
	if (!c->err) {
		redisSetTimeout(c, tv);
		r = redisvCommand(c, fmt, ap);
	}
	redisFree(c);
	return r;
}

redisReply *redisd_cmd(const struct redisd *d, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;

	va_start(ap, fmt);
	r = vcmd(d, fmt, ap);
	va_end(ap);
	return r;
}

long long redisd_int(const struct redisd *d, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;
	long long v = -1000000;

	va_start(ap, fmt);
	r = vcmd(d, fmt, ap);
	va_end(ap);
	if (r && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	if (r)
		freeReplyObject(r);
	return v;
}

long long redisd_calls(const struct redisd *d, const char *command)
{
	redisReply *r = redisd_cmd(d, "INFO commandstats");
	char needle[64];
	const char *p;
	long long v = -1;

	if (!r)
		return -1;
	snprintf(needle, sizeof(needle), "cmdstat_%s:calls=", command);
	if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) {
		p = strstr(r->str, needle);
		v = p ? strtoll(p + strlen(needle), NULL, 10) : 0;
	}
	freeReplyObject(r);
	return v;
}
