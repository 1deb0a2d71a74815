/* spawn.c - child processes of the load client: stdio MCP servers and
 * auth commands.  Started with posix_spawn (no fork of a process that
 * holds an event loop and TLS state), connected by pipes whose ends in
 * this process are non-blocking and close-on-exec, each in its own
 * process group, and always reaped. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/errors.h"
#include "load/agent_impl.h"

extern char **environ;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

int ld_spawn(const char *cmd, int with_stdin, int quiet, struct ld_child *ch)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def, none;
	char *argv[] = {"sh", "-c", (char *)cmd, NULL};
	int fa_ok = 0, at_ok = 0, err;
	pid_t pid;

	ch->pid = 0;
	ch->in_fd = ch->out_fd = -1;
	if ((with_stdin && pipe2(in, O_CLOEXEC) != 0) || pipe2(out, O_CLOEXEC) != 0)
		goto fail;
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto fail;
	fa_ok = 1;
	if (posix_spawnattr_init(&at) != 0)
		goto fail;
	at_ok = 1;
	/* The child gets the signals a shell would: the load client ignores
	 * SIGPIPE, and an ignored disposition survives exec.  It leads its
	 * own process group, so that teardown reaches whatever "sh -c"
	 * started even when the shell did not exec it. */
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigemptyset(&none);
	if (posix_spawnattr_setsigdefault(&at, &def) != 0 ||
	    posix_spawnattr_setsigmask(&at, &none) != 0 ||
	    posix_spawnattr_setpgroup(&at, 0) != 0 ||
	    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF |
	                                  POSIX_SPAWN_SETSIGMASK |
	                                  POSIX_SPAWN_SETPGROUP) != 0)
		goto fail;
	if ((with_stdin ? posix_spawn_file_actions_adddup2(&fa, in[0], 0)
	                : posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
	                                                   O_RDONLY, 0)) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, out[1], 1) != 0 ||
	    (quiet && posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
	                                               O_WRONLY, 0) != 0))
		goto fail;
	err = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, environ);
	if (err != 0) {
		errno = err;
		goto fail;
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close_fd(&in[0]);
	close_fd(&out[1]);
	ch->pid = pid;
	ch->in_fd = in[1];
	ch->out_fd = out[0];
	if ((ch->in_fd >= 0 && nonblock(ch->in_fd) != 0) ||
	    nonblock(ch->out_fd) != 0) {
		close_fd(&ch->in_fd);
		close_fd(&ch->out_fd);
		ld_child_kill_reap(pid);
		ch->pid = 0;
		return MGW_EIO;
	}
	return 0;
fail:
	err = errno;
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (at_ok)
		posix_spawnattr_destroy(&at);
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	errno = err;
	return MGW_EIO;
}

int ld_child_try_reap(pid_t pid)
{
	int st;
	pid_t r;

	if (pid <= 0)
		return 1;
	do
		r = waitpid(pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	/* ECHILD: someone else reaped it; nothing is left either way */
	return r == pid || (r < 0 && errno == ECHILD);
}

void ld_child_kill_reap(pid_t pid)
{
	struct timespec ts = {0, 5 * 1000 * 1000};
	int st;

	if (pid <= 0 || ld_child_try_reap(pid))
		return;
	kill(-pid, SIGTERM);
	for (int i = 0; i < 40; i++) { /* 200 ms for a clean exit */
		if (ld_child_try_reap(pid))
			return;
		nanosleep(&ts, NULL);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}
