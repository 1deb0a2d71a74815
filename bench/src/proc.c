/* proc.c - child processes of the bench.  fork()+exec rather than
 * posix_spawn because the child must ask the kernel to kill it when the
 * bench dies (PR_SET_PDEATHSIG): a bench killed by its CI job's timeout
 * must not leave replicas listening behind it.  The bench is single
 * threaded, so fork() is safe here.
 *
 * A process is only ever signalled through the PID fork() returned, and
 * only while waitpid() has not reaped it: until then the PID cannot be
 * reused, so a signal can never reach a stranger. */
#include "autoconf.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/errors.h"
#include "util/time.h"
#include "bench/src/proc.h"

volatile sig_atomic_t mgw_bench_interrupted;

#define REGISTRY_MAX 256
static struct mgw_bench_proc *registry[REGISTRY_MAX];

static void reg_add(struct mgw_bench_proc *p)
{
	for (size_t i = 0; i < REGISTRY_MAX; i++)
		if (!registry[i]) {
			registry[i] = p;
			p->registered = 1;
			return;
		}
	/* Full: the process still dies with the bench (PDEATHSIG); it only
	 * misses the graceful emergency stop. */
}

void mgw_bench_proc_unregister(struct mgw_bench_proc *p)
{
	if (!p || !p->registered)
		return;
	for (size_t i = 0; i < REGISTRY_MAX; i++)
		if (registry[i] == p)
			registry[i] = NULL;
	p->registered = 0;
}

int mgw_bench_sleep(double s)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(s > 0 ? s * 1e9 : 0);

	for (;;) {
		uint64_t now = mgw_now_ns(), left;
		struct timespec ts;

		if (mgw_bench_interrupted)
			return 1;
		if (now >= end)
			return 0;
		left = end - now;
		if (left > 50000000ull)
			left = 50000000ull;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		nanosleep(&ts, NULL);
	}
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_setup(pid_t parent, int group, int in_fd, int out_fd,
                        int err_fd)
{
	sigset_t none;
	struct sigaction dfl;

	if (group)
		setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* the bench died before prctl() */
		_exit(127);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	/* An ignored disposition survives exec: the bench ignores SIGPIPE
	 * and catches INT/TERM, its children must not inherit either. */
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(127);
}

static int open_out(const char *path)
{
	return open(path ? path : "/dev/null",
	            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int mgw_bench_proc_spawn(struct mgw_bench_proc *p, const char *role,
                         char *const argv[], const char *out_path,
                         const char *err_path, int group)
{
	int in_fd = -1, out_fd = -1, err_fd = -1, rc = MGW_EIO;
	pid_t parent = getpid(), pid;

	/* a struct reused for a new process must not stay in the registry
	 * twice (callers hand in zeroed or reaped structs) */
	mgw_bench_proc_unregister(p);
	memset(p, 0, sizeof(*p));
	snprintf(p->role, sizeof(p->role), "%s", role);
	if (out_path)
		snprintf(p->out_path, sizeof(p->out_path), "%s", out_path);
	if (err_path)
		snprintf(p->err_path, sizeof(p->err_path), "%s", err_path);
	p->group = group;
	in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	out_fd = open_out(out_path);
	err_fd = open_out(err_path);
	if (in_fd < 0 || out_fd < 0 || err_fd < 0)
		goto fail;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		child_setup(parent, group, in_fd, out_fd, err_fd);
		execvp(argv[0], argv);
		dprintf(2, "mcpgw-bench: cannot run %s: %s\n", argv[0],
		        strerror(errno));
		_exit(127);
	}
	/* Also from the parent: a signal sent to the group right after fork
	 * must not find the group missing. */
	if (group)
		setpgid(pid, pid);
	p->pid = pid;
	p->started_ns = mgw_now_ns();
	reg_add(p);
	rc = 0;
fail:
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	return rc;
}

int mgw_bench_proc_running(struct mgw_bench_proc *p)
{
	pid_t r;
	int st;

	if (p->pid <= 0 || p->reaped)
		return 0;
	do
		r = waitpid(p->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 1;
	p->reaped = 1;
	/* r < 0 (ECHILD) cannot happen for our own unreaped child; record it
	 * as an unknown exit rather than signalling a PID we no longer own. */
	p->status = r == p->pid ? st : 0x7f00;
	mgw_bench_proc_unregister(p);
	return 0;
}

int mgw_bench_proc_wait(struct mgw_bench_proc *p, double timeout_s)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(timeout_s * 1e9);
	struct timespec ts = { 0, 5000000 };

	for (;;) {
		if (!mgw_bench_proc_running(p))
			return 0;
		if (mgw_now_ns() >= end)
			return MGW_ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
}

int mgw_bench_proc_signal(struct mgw_bench_proc *p, int sig)
{
	if (p->pid <= 0 || p->reaped)
		return MGW_ECLOSED;
	if (kill(p->group ? -p->pid : p->pid, sig) != 0) {
		/* The group may be gone while the leader is a zombie. */
		if (p->group && kill(p->pid, sig) == 0)
			return 0;
		return MGW_EIO;
	}
	return 0;
}

int mgw_bench_proc_stop(struct mgw_bench_proc *p, int sig, double grace_s)
{
	if (p->pid <= 0 || !mgw_bench_proc_running(p))
		return 0;
	mgw_bench_proc_signal(p, sig);
	if (mgw_bench_proc_wait(p, grace_s) == 0) {
		/* the leader is gone: whatever it left in its group goes too */
		if (p->group)
			kill(-p->pid, SIGKILL);
		return 0;
	}
	mgw_bench_proc_signal(p, SIGKILL);
	mgw_bench_proc_wait(p, 5.0);
	return MGW_ETIMEDOUT;
}

void mgw_bench_proc_move(struct mgw_bench_proc *dst, struct mgw_bench_proc *src)
{
	int was_registered = src->registered;

	mgw_bench_proc_unregister(dst);
	mgw_bench_proc_unregister(src);
	*dst = *src;
	dst->registered = 0;
	if (was_registered)
		reg_add(dst);
	memset(src, 0, sizeof(*src));
}

long long mgw_bench_status_rss_kib(const char *text)
{
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, "VmRSS:", 6) == 0) {
			char *end;
			long long v = strtoll(p + 6, &end, 10);

			return end != p + 6 && v >= 0 ? v : -1;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

long long mgw_bench_proc_rss_kib(pid_t pid)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return mgw_bench_status_rss_kib(buf);
}

long long mgw_bench_proc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *de;
	long long n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

void mgw_bench_proc_kill_all(void)
{
	uint64_t end;
	struct timespec ts = { 0, 20000000 };

	for (size_t i = 0; i < REGISTRY_MAX; i++)
		if (registry[i] && mgw_bench_proc_running(registry[i]))
			mgw_bench_proc_signal(registry[i], SIGTERM);
	end = mgw_now_ns() + 2000000000ull;
	for (;;) {
		int left = 0;

		for (size_t i = 0; i < REGISTRY_MAX; i++)
			if (registry[i] && mgw_bench_proc_running(registry[i]))
				left++;
		if (!left || mgw_now_ns() >= end)
			break;
		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < REGISTRY_MAX; i++) {
		struct mgw_bench_proc *p = registry[i];

		if (p && mgw_bench_proc_running(p)) {
			mgw_bench_proc_signal(p, SIGKILL);
			mgw_bench_proc_wait(p, 5.0);
		}
		if (registry[i])
			mgw_bench_proc_unregister(registry[i]);
	}
}

int mgw_bench_proc_wait_listening(struct mgw_bench_proc *p, double timeout_s)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(timeout_s * 1e9);
	struct timespec ts = { 0, 10000000 };
	char buf[256];

	for (;;) {
		int fd = open(p->out_path, O_RDONLY | O_CLOEXEC);
		ssize_t n = 0;
		char *nl;

		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		if (n > 0) {
			buf[n] = '\0';
			nl = strchr(buf, '\n');
			if (nl) {
				char *colon;
				long port;

				*nl = '\0';
				if (strncmp(buf, "listening on ", 13) != 0)
					return MGW_EPROTO;
				colon = strrchr(buf, ':');
				port = colon ? strtol(colon + 1, NULL, 10) : 0;
				if (port <= 0 || port > 65535)
					return MGW_EPROTO;
				p->port = (int)port;
				return 0;
			}
		}
		if (!mgw_bench_proc_running(p))
			return MGW_ECLOSED;
		if (mgw_now_ns() >= end || mgw_bench_interrupted)
			return MGW_ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
}

const char *mgw_bench_status_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by SIG%s", sigabbrev_np(WTERMSIG(status))
		         ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, len, "status 0x%x", (unsigned)status);
	return buf;
}

int mgw_bench_capture_line(char *const argv[], double timeout_s, char *buf,
                           size_t len)
{
	int fds[2], in_fd;
	size_t got = 0;
	uint64_t end = mgw_now_ns() + (uint64_t)(timeout_s * 1e9);
	pid_t parent = getpid(), pid;
	struct mgw_bench_proc p;

	buf[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) != 0)
		return MGW_EIO;
	in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid = in_fd < 0 ? -1 : fork();
	if (pid == 0) {
		child_setup(parent, 1, in_fd, fds[1], fds[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	if (in_fd >= 0)
		close(in_fd);
	if (pid < 0) {
		close(fds[0]);
		return MGW_EIO;
	}
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.group = 1;
	setpgid(pid, pid);
	while (got + 1 < len) {
		struct pollfd pf = { fds[0], POLLIN, 0 };
		uint64_t now = mgw_now_ns();
		ssize_t n;

		if (now >= end)
			break;
		if (poll(&pf, 1, (int)((end - now) / 1000000 + 1)) <= 0)
			break;
		n = read(fds[0], buf + got, len - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(buf, '\n', got))
			break;
	}
	close(fds[0]);
	mgw_bench_proc_stop(&p, SIGKILL, 2.0);
	buf[got] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 127)
		buf[0] = '\0';
	return buf[0] ? 0 : MGW_EIO;
}
