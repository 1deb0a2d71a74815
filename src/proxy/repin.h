/* repin.h - moving a legacy session to another replica ("re-pin").
 *
 * A session is pinned to one replica, which holds the upstream session.
 * When that replica is dead, ejected or draining, refuses the request, or
 * answers that it does not know the session, the stateful path re-pins:
 *
 *   REFRESH  look the record up again: if someone (another worker,
 *            another gateway sharing the store) re-pinned it meanwhile to
 *            a usable replica, take that pin and stop;
 *   INIT     pick a healthy replica with the group's balancer (not the
 *            one that failed, nor one that failed a replay of this run),
 *            replay the client's stored `initialize` there, byte for
 *            byte, with the stored replay headers and the triggering
 *            request's Authorization and Cookie; a 2xx whose body is an
 *            InitializeResult gives the new upstream session;
 *   NOTIFY   send `notifications/initialized` (the client's stored body,
 *            or the canonical one) in that session;
 *   UPDATE   store the new pin with compare-and-set; on a conflict, adopt
 *            the winner's pin when the winner re-pinned (our fresh upstream
 *            session is ended with a best-effort DELETE), else apply ours
 *            to the winner's version and try again.
 * A failed replay moves to the next replica; at most max_attempts replays
 * per run.  No replica left: the session cannot be recovered (the stateful
 * path answers 404 so that the client starts a new session).
 *
 * Requests of the same session that need the re-pin while a run is in
 * progress on this worker wait for it (mgw_repin_join): one replay, not
 * one per request.  Across workers and gateways the store's
 * compare-and-set settles it.  A run whose waiters all left is cancelled.
 *
 * The pure decisions (lost-session answers, replay safety, conflicts,
 * tools/list annotations) are exposed for the stateful path and tests.
 * Everything runs on one worker's loop. */
#ifndef MGW_PROXY_REPIN_H
#define MGW_PROXY_REPIN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "session/conf_sessions-t.h"
#include "mcp/jsonrpc.h"
#include "proxy/repin-t.h"
#include "proxy/upstream-t.h"
#include "session/session-t.h"

/* Most requests one run keeps waiting; more get MGW_ELIMIT. */
#define MGW_REPIN_MAX_WAITERS 1024
/* Largest answer to a replayed `initialize` the run reads. */
#define MGW_REPIN_INIT_BODY_MAX (1024 * 1024)

/* ---- decisions ---- */

/* "dead", "ejected", ... (see repin-t.h). */
const char *mgw_repin_reason_name(enum mgw_repin_reason r);

/* Whether the pinned server can take the session's next request: -1 when
 * it can (srv available at now), else the reason to re-pin
 * (MGW_REPIN_UNPINNED when srv is NULL).  May end an ejection whose
 * deadline passed, like mgw_upstream_available. */
int mgw_repin_pin_check(struct mgw_upstream_server *srv, uint64_t now);

/* The server of group g whose configured URL is url, or NULL (url NULL,
 * or no longer in the group). */
struct mgw_upstream_server *mgw_repin_server_by_url(
	const struct mgw_upstream_group *g, const char *url);

/* What an upstream status means for a session request, per
 * sessions.lost_session: MGW_LOST_NO for statuses not listed; for a
 * listed status, MGW_LOST_YES when it is 404 or body_contains is empty,
 * else MGW_LOST_MAYBE (the body decides). */
enum mgw_lost_verdict mgw_repin_lost_status(
	const struct mgw_lost_session_conf *c, int status);

/* 1 if body/len contains c->body_contains, ASCII case-insensitively (an
 * empty needle matches everything). */
int mgw_repin_lost_body(const struct mgw_lost_session_conf *c,
                        const void *body, size_t len);

/* The reason a lost-session answer with this status gives. */
enum mgw_repin_reason mgw_repin_lost_reason(int status);

/* Whether request m (NULL for GET/DELETE) of session rec may be replayed
 * after it was lost in flight; replay is the route's MGW_REPLAY_* value:
 * mgw_replay_judge (replay.h) with the tools rec's tools/list answers
 * annotated.  Values below MGW_REPLAY_NO_TOOL allow it. */
enum mgw_replay_verdict mgw_repin_replay_safe(const struct mgw_jrpc_msg *m,
                                              const struct mgw_session *rec,
                                              int replay);

/* How to settle a compare-and-set our re-pin lost: base_gen is the pin
 * generation of the record our update was made from, winner the record
 * the store holds now. */
enum mgw_repin_conflict mgw_repin_on_conflict(uint32_t base_gen,
                                              const struct mgw_session *winner);

/* The tools a tools/list result annotates readOnlyHint: true or
 * idempotentHint: true: *names gets a malloc'd array of *n pointers into
 * result (valid while result lives; free only the array).  result is the
 * response's "result" member.  Returns 0, MGW_EINVAL (no tools array) or
 * MGW_ENOMEM. */
int mgw_repin_safe_tools(const json_t *result, const char ***names, size_t *n);

/* ---- the per-worker map of runs ---- */

/* Initializes m with env (copied).  Returns 0 or MGW_ENOMEM. */
int mgw_repin_map_init(struct mgw_repin_map *m,
                       const struct mgw_repin_env *env);

/* Ends what is left (runs whose waiters are gone already, background
 * DELETEs) without callbacks.  Call before the worker's HTTP clients are
 * freed. */
void mgw_repin_map_deinit(struct mgw_repin_map *m);

/* Makes w wait for the re-pin of p->rec's session on this worker: joins
 * the run in progress for (p->view, session id), or starts one from p.
 * w->cb / w->arg must be set; the callback runs later from the loop,
 * never inside this call.  *joined tells which (1: a run was already in
 * progress; p->failed and p->reason were then ignored).  Returns 0,
 * MGW_ELIMIT (too many waiters) or MGW_ENOMEM; w is not waiting then. */
int mgw_repin_join(struct mgw_repin_map *m, const struct mgw_repin_params *p,
                   struct mgw_repin_waiter *w, int *joined);

/* 1 if a run for session id of view is in progress on this worker. */
int mgw_repin_in_progress(const struct mgw_repin_map *m,
                          const struct mgw_session_view *view,
                          const char *id);

/* Stops waiting (the request went away); its callback never runs.  The
 * run is cancelled when its last waiter leaves.  No-op when w is not
 * waiting. */
void mgw_repin_leave(struct mgw_repin_waiter *w);

/* Ends the upstream session sid on srv with a best-effort DELETE (nothing
 * waits for it; the answer is ignored).  target, authority and creds as
 * in mgw_repin_params.  Returns 0 or MGW_E* (nothing sent). */
int mgw_repin_end_upstream(struct mgw_repin_map *m,
                           struct mgw_upstream_server *srv,
                           const struct mgw_route *route, const char *target,
                           const char *authority,
                           const struct mgw_headers *creds, const char *sid);

#endif
