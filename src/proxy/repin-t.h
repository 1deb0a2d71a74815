/* repin-t.h - the re-pin state machine of the stateful path (types only;
 * see repin.h for the functions and the story). */
#ifndef MGW_PROXY_REPIN_T_H
#define MGW_PROXY_REPIN_T_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "session/conf_sessions-t.h"
#include "http/client-t.h"
#include "http/headers-t.h"
#include "proxy/route-t.h"
#include "proxy/upstream-t.h"
#include "session/session-t.h"
#include "session/store-t.h"

/* Why a session left its replica.  Names (mgw_repin_reason_name) are what
 * /mcpgw/stats and the logs show. */
enum mgw_repin_reason {
	MGW_REPIN_DEAD = 0,     /* "dead": active health check says down */
	MGW_REPIN_EJECTED,      /* "ejected": passive outlier ejection */
	MGW_REPIN_DRAINING,     /* "draining" */
	MGW_REPIN_UNPINNED,     /* "unpinned": no pin, or the pinned URL is
	                         * not a server of the route's group (any
	                         * more) */
	MGW_REPIN_REFUSED,      /* "refused": the request provably did not
	                         * reach the replica (connect refused, h2
	                         * REFUSED_STREAM / GOAWAY) */
	MGW_REPIN_LOST_INFLIGHT,/* "lost_in_flight": a request safe to send
	                         * again was lost in flight on it twice in a
	                         * row (connection closed or reset after the
	                         * request was written) */
	/* from here on the replica answered: it is alive (kept as a last
	 * resort) */
	MGW_REPIN_LOST_404,     /* "lost_404": the replica answered 404 */
	MGW_REPIN_LOST_400,     /* "lost_400": 400 with a lost-session body */
	MGW_REPIN_LOST_OTHER,   /* "lost_other": another configured status */
	MGW_REPIN_REASON_N,
};

/* What an upstream answer head means for a session request. */
enum mgw_lost_verdict {
	MGW_LOST_NO = 0,        /* a normal answer: relay it */
	MGW_LOST_MAYBE,         /* a lost-session status whose body decides */
	MGW_LOST_YES,           /* the replica does not know the session */
};

/* Whether a request lost in flight (sent, then the replica failed before
 * a complete answer) may be sent again. */
enum mgw_replay_verdict {
	MGW_REPLAY_OK_METHOD = 0, /* GET, DELETE, a notification or response,
	                           * or a request of a method safe by the
	                           * specification (replay.h) */
	MGW_REPLAY_OK_TOOL,       /* tools/call of a tool annotated readOnlyHint
	                           * or idempotentHint in a tools/list result
	                           * seen for this session */
	MGW_REPLAY_OK_ROUTE,      /* the route says replay: always */
	MGW_REPLAY_NO_TOOL,       /* tools/call of a tool not known safe */
	MGW_REPLAY_NO_BATCH,      /* a JSON-RPC batch (may hold anything) */
	MGW_REPLAY_NO_UNREAD,     /* a body the gateway could not classify:
	                           * the upstream may have read a tools/call
	                           * in it */
	MGW_REPLAY_NO_METHOD,     /* a request whose method the specification
	                           * does not make safe to repeat */
	MGW_REPLAY_NO_STATE,      /* params carry requestState or
	                           * inputResponses (SEP-2322): the round it
	                           * answers may have been consumed */
};

/* How a lost compare-and-set is settled. */
enum mgw_repin_conflict {
	MGW_REPIN_ADOPT = 0,    /* the winner re-pinned: take its pin */
	MGW_REPIN_RETRY,        /* the winner changed something else: apply
	                         * our re-pin to its version and try again */
};

/* Counters of re-pin decisions, shared by every worker (atomics). */
struct mgw_repin_counters {
	atomic_uint_fast64_t started[MGW_REPIN_REASON_N]; /* re-pins begun,
	                                 * by the reason that began them */
	atomic_uint_fast64_t repinned;  /* sessions moved by a replay */
	atomic_uint_fast64_t adopted;   /* settled by a pin someone else set
	                                 * (no replay of ours needed, or ours
	                                 * lost the compare-and-set) */
	atomic_uint_fast64_t failed;    /* re-pins that found no replica to
	                                 * take the session */
	atomic_uint_fast64_t gone;      /* sessions deleted or expired while
	                                 * being re-pinned */
	atomic_uint_fast64_t replays;   /* initialize replays sent */
	atomic_uint_fast64_t replay_failures; /* replays a replica did not
	                                 * accept (error, bad answer, failed
	                                 * notifications/initialized) */
	atomic_uint_fast64_t waited;    /* requests that waited for a re-pin
	                                 * another request had begun */
	atomic_uint_fast64_t store_unsaved; /* re-pins used although the store
	                                 * could not record them */
	atomic_uint_fast64_t upstream_deletes; /* best-effort DELETEs of
	                                 * upstream sessions nobody uses */
};

/* What a run needs from its worker (borrowed, outlives the map). */
struct mgw_repin_env {
	struct mgw_upool *pool;               /* the worker's own */
	const struct mgw_sessions_conf *sconf;
	size_t max_depth;                     /* JSON nesting bound */
	struct mgw_repin_counters *cnt;
	/* Called after a run moved a session (rec: its new record, srv: the
	 * new pin), before the waiters hear of it: the stateful path closes
	 * this worker's GET streams still on the old replica.  May be NULL. */
	void (*on_repinned)(void *arg, const struct mgw_session *rec,
	                    const struct mgw_upstream_server *srv);
	void *hook_arg;
};

struct mgw_repin_run;
struct mgw_upool;

/* A run's answer to one waiter: status 0 with rec (a reference that now
 * belongs to the callback) and srv, the server to send to (available when
 * the run ended); MGW_ENOTFOUND: the session is gone (deleted, expired);
 * MGW_EPROTO: it could not be re-pinned (no replica took the replay
 * within max_repin_attempts); MGW_ENOMEM. */
typedef void (*mgw_repin_done_cb)(void *arg, int status,
                                  struct mgw_session *rec,
                                  struct mgw_upstream_server *srv);

/* One request waiting for a run; embedded in the request. */
struct mgw_repin_waiter {
	struct mgw_repin_run *run;      /* NULL when not waiting */
	struct mgw_repin_waiter *prev, *next;
	mgw_repin_done_cb cb;
	void *arg;
};

/* Best-effort upstream DELETEs in flight (owned by the map). */
struct mgw_repin_bg;

/* The runs of one worker, keyed by (view, client session id): at most
 * one run per session per worker; other requests of the session wait. */
struct mgw_repin_map {
	struct mgw_repin_env env;
	struct mgw_repin_run **buckets;
	size_t n_buckets;               /* a power of two */
	size_t n_runs;
	struct mgw_repin_bg *bg;        /* list of background requests */
	size_t n_bg;
};

/* What starts a run. */
struct mgw_repin_params {
	struct mgw_session_view *view;  /* the route's store view */
	const struct mgw_route *route;
	const struct mgw_session *rec;  /* the record the trigger saw
	                                 * (borrowed; the run takes a ref) */
	const unsigned char *principal; /* the presenter's digest, or NULL */
	struct mgw_upstream_server *failed; /* the replica that failed, or
	                                 * NULL (not pinned anywhere usable) */
	enum mgw_repin_reason reason;
	const char *target;             /* request-target of the replays: the
	                                 * client's MCP endpoint */
	const char *authority;          /* the client's Host (NULL allowed) */
	const struct mgw_headers *creds; /* the trigger's Authorization and
	                                 * Cookie fields (copied), or NULL */
	unsigned max_attempts;          /* replays allowed (>= 1) */
};

#endif
