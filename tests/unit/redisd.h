/* redisd.h - a private redis-server for unit tests: started on 127.0.0.1
 * on a free ephemeral port (no persistence), killed by PID, restarted on
 * the same port, and queried with synchronous hiredis (test side only;
 * the code under test stays asynchronous). */
#ifndef MGW_TEST_REDISD_H
#define MGW_TEST_REDISD_H

#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

struct redisd {
	pid_t pid;              /* 0 while not running */
	uint16_t port;
	char url[64];           /* redis://127.0.0.1:PORT */
};

/* 1 when a redis-server binary is on PATH. */
int redisd_available(void);

/* Starts redis-server on a free port (port 0) or on d->port, and waits
 * (5 s at most) until it answers PING.  Returns 0 or -1. */
int redisd_start(struct redisd *d, uint16_t port);

/* SIGKILLs the server and reaps it (bounded). */
void redisd_kill(struct redisd *d);

/* Runs one command on a fresh synchronous connection (2 s timeouts).
 * Returns the reply (free with freeReplyObject) or NULL. */
redisReply *redisd_cmd(const struct redisd *d, const char *fmt, ...);

/* An integer reply of a command, or -1000000 on failure. */
long long redisd_int(const struct redisd *d, const char *fmt, ...);

/* calls of one command in INFO commandstats ("eval", "del"); -1 on
 * failure. */
long long redisd_calls(const struct redisd *d, const char *command);

#endif
