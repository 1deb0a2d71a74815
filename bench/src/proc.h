/* proc.h - the bench's child processes (replicas, gateways, redis-server,
 * the load client, an external proxy): started with their output in
 * files, each leading its own process group, signalled and reaped only by
 * the PID the bench got from fork(), and killed with the bench if it dies.
 * Every wait here is bounded. */
#ifndef MGW_BENCH_PROC_H
#define MGW_BENCH_PROC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MGW_BENCH_ROLE_MAX 32

struct mgw_bench_proc {
	pid_t pid;              /* 0: never started */
	int reaped;             /* waitpid() returned it */
	int status;             /* waitpid() status once reaped */
	int group;              /* signals go to the whole process group */
	char role[MGW_BENCH_ROLE_MAX]; /* "replica 1", "gateway 2", "redis" */
	char out_path[512];
	char err_path[512];
	int port;               /* the port it listens on, 0 if none/unknown */
	uint64_t started_ns;    /* monotonic */
	int registered;
};

/* Starts argv (argv[0] looked up in PATH) with stdin from /dev/null,
 * stdout to out_path and stderr to err_path (both truncated; NULL means
 * /dev/null).  The child leads a new process group (group = 1: stop and
 * kill signal the group, for shell commands that fork), gets the default
 * signal dispositions and an empty signal mask, and is SIGKILLed by the
 * kernel if the bench dies first.  The process is registered for
 * mgw_bench_proc_kill_all().  Returns 0, MGW_EIO (fork failed; an exec
 * failure shows as exit status 127 with a line in err_path). */
int mgw_bench_proc_spawn(struct mgw_bench_proc *p, const char *role,
                         char *const argv[], const char *out_path,
                         const char *err_path, int group);

/* Waits at most timeout_s for the first line "listening on HOST:PORT" in
 * p's stdout file and stores the port in p->port.  Returns 0, MGW_ECLOSED
 * when the process exited first (it is reaped), MGW_ETIMEDOUT, or
 * MGW_EPROTO when the first line is something else. */
int mgw_bench_proc_wait_listening(struct mgw_bench_proc *p, double timeout_s);

/* Reaps p if it has exited, without waiting.  Returns 1 while it runs, 0
 * once reaped (p->status holds the waitpid status). */
int mgw_bench_proc_running(struct mgw_bench_proc *p);

/* Waits at most timeout_s for p to exit and reaps it.  Returns 0 or
 * MGW_ETIMEDOUT. */
int mgw_bench_proc_wait(struct mgw_bench_proc *p, double timeout_s);

/* Sends sig (to the group when p->group) to a process that has not been
 * reaped.  Returns 0, MGW_ECLOSED if it was already reaped, MGW_EIO. */
int mgw_bench_proc_signal(struct mgw_bench_proc *p, int sig);

/* Stops p: sig (SIGTERM usually), then SIGKILL if it has not exited
 * within grace_s, and reaps it.  A process already reaped is left alone.
 * Returns 0 when it exited within the grace time, MGW_ETIMEDOUT when it
 * had to be killed. */
int mgw_bench_proc_stop(struct mgw_bench_proc *p, int sig, double grace_s);

/* Forgets p in the registry (after it was reaped or when its memory is
 * about to be reused). */
void mgw_bench_proc_unregister(struct mgw_bench_proc *p);

/* Moves the process of src into dst (a replacement taking its victim's
 * slot): dst, reaped or never started, is overwritten, the registry
 * follows the move, and src is left as never started. */
void mgw_bench_proc_move(struct mgw_bench_proc *dst, struct mgw_bench_proc *src);

/* The resident set size of pid in KiB: VmRSS of /proc/PID/status.
 * Returns it, or -1 when it cannot be read (the process is gone). */
long long mgw_bench_proc_rss_kib(pid_t pid);

/* The VmRSS line's value in a /proc/PID/status text, in KiB, or -1. */
long long mgw_bench_status_rss_kib(const char *status_text);

/* The number of open file descriptors of pid: the entries of
 * /proc/PID/fd.  Returns it, or -1 when the directory cannot be read. */
long long mgw_bench_proc_fd_count(pid_t pid);

/* Emergency teardown (the bench was interrupted or failed): SIGTERM to
 * every registered, unreaped process, 2 s of grace, then SIGKILL; all are
 * reaped. */
void mgw_bench_proc_kill_all(void);

/* Writes a readable form of a waitpid status ("exited 0", "killed by
 * SIGKILL") into buf. */
const char *mgw_bench_status_str(int status, char *buf, size_t len);

/* Runs argv to completion (at most timeout_s, then SIGKILL) and puts the
 * first line of its combined output into buf (empty on failure).  For
 * version strings.  Returns 0 when a line was read. */
int mgw_bench_capture_line(char *const argv[], double timeout_s, char *buf,
                           size_t len);

/* Set by the bench's SIGINT/SIGTERM handler: every wait of the bench
 * returns early once it is non-zero. */
extern volatile sig_atomic_t mgw_bench_interrupted;

/* Sleeps s seconds in slices of at most 50 ms; returns 1 early once
 * mgw_bench_interrupted is set, else 0. */
int mgw_bench_sleep(double s);

#endif
