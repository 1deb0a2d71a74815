/* failover.h - what to do when an upstream attempt fails: one pure
 * policy for both handlers (no I/O, no clock), tested as a table
 * (tests/unit/proxy/failover_test.c).
 *
 *   the answer had started streaming           cut it (ABORT)
 *   stateless, pinned to a task's owner (affinity: task), the
 *     connection to it failed                  the task is gone (GONE)
 *   stateless: nothing was sent, retries left  another server (RETRY;
 *                                              pinned: the owner again)
 *   stateless: lost in flight (closed or reset after the request went,
 *     no response head yet or a collected answer cut short):
 *     waited for a connection, or timed out    error (FAIL)
 *     not safe to send again (replay.h)        -32010 (REFUSE)
 *     safe, retries left                       another server, a
 *                                              budgeted retry (REPLAY;
 *                                              pinned: the owner again)
 *     safe, retries used up                    error (FAIL)
 *   initialize: not sent, or the replica closed or reset it before the
 *     answer, retries left                     another server (RETRY)
 *   DELETE of a session                        forget it anyway (DROP)
 *   session request:
 *     waited for a connection (gateway limit)  error (FAIL)
 *     provably not sent                        re-pin, "refused"
 *     timed out                                error: it may still run
 *     lost in flight, not safe to send again   -32010 (REFUSE)
 *     lost in flight, replays used up          error (FAIL)
 *     lost in flight on the same replica as
 *       the previous loss                      replay after a re-pin,
 *                                              "lost_in_flight"
 *     lost in flight otherwise                 replay through the pin
 *                                              check (REPLAY)
 *   anything else                              error (FAIL)
 * Re-pins triggered before an attempt (pin check) and by a lost-session
 * answer are decided by mgw_repin_pin_check and mgw_repin_lost_status. */
#ifndef MGW_PROXY_FAILOVER_H
#define MGW_PROXY_FAILOVER_H

#include "http/client-t.h"
#include "proxy/repin-t.h"

enum mgw_fo_request {
	MGW_FO_STATELESS = 0,  /* stateless balancing */
	MGW_FO_INIT,           /* stateful: initialize (no session yet) */
	MGW_FO_SESSION,        /* stateful: a request of a session */
	MGW_FO_DELETE,         /* stateful: DELETE of a session */
};

enum mgw_fo_action {
	MGW_FO_FAIL = 0,       /* answer the failure's gateway error */
	MGW_FO_ABORT,          /* cut the started answer */
	MGW_FO_RETRY,          /* a budgeted retry on another server */
	MGW_FO_DROP,           /* DELETE: remove the mapping regardless */
	MGW_FO_REPIN,          /* move the session (reason), then send */
	MGW_FO_REFUSE,         /* lost in flight, not replayed (-32010) */
	MGW_FO_REPLAY,         /* send again: stateless, to another server
	                        * (a budgeted retry); a session request,
	                        * through the pin check */
	MGW_FO_REPLAY_REPIN,   /* send again after a re-pin (reason) */
	MGW_FO_GONE,           /* stateless, pinned: the owner of the task
	                        * cannot be reached; answer "task not
	                        * found" (check_affinity.c) */
};

/* The facts of one failed attempt. */
struct mgw_fo_in {
	enum mgw_fo_request req;
	int streaming;                 /* the answer's head went out */
	enum mgw_client_err_class cls; /* from the client layer */
	unsigned flags;                /* MGW_CLIENT_F_* */
	unsigned attempts;             /* attempts sent, this one included */
	unsigned retries;              /* the route's retries */
	enum mgw_replay_verdict replay;/* stateless and session requests:
	                                * replay safety (replay.h) */
	unsigned replays;              /* replays already made */
	unsigned max_replays;          /* sessions.max_repin_attempts */
	int same_as_last_loss;         /* the previous loss in flight was on
	                                * this attempt's server */
	int pinned;                    /* stateless: every attempt goes to
	                                * one server, the owner of a task */
};

struct mgw_fo_out {
	enum mgw_fo_action action;
	enum mgw_repin_reason reason;  /* REPIN, REPLAY_REPIN */
};

/* 1 when the request provably did not reach the upstream. */
int mgw_fo_not_sent(unsigned flags);

struct mgw_fo_out mgw_failover_decide(const struct mgw_fo_in *in);

/* "fail", "abort", ... for logs and tests. */
const char *mgw_fo_action_name(enum mgw_fo_action a);

#endif
