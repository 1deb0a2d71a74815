/* affinity.h - task affinity (upstreams[].affinity: task): the map of
 * task id -> owning server that every worker of a group shares, and the
 * reading of a task-creating answer (SEP-2663 CreateTaskResult:
 * resultType "task", taskId, ttlMs).  Pure: no I/O; time is passed in.
 * check_affinity.c routes tasks/... with it and learns from the answers the
 * stateless handler relays; doc/serve.md ("Task affinity"). */
#ifndef MGW_PROXY_AFFINITY_H
#define MGW_PROXY_AFFINITY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proxy/affinity-t.h"

/* max entries (>= 1), max_ttl_ms (>= 1).  Returns 0 or MGW_ENOMEM. */
int mgw_task_map_init(struct mgw_task_map *m, size_t max, uint64_t max_ttl_ms);
void mgw_task_map_deinit(struct mgw_task_map *m);

/* Records that the task id/len lives on owner (a URL hash) for ttl_ms
 * from now_ms (bounded by the map's max_ttl_ms; UINT64_MAX: the task
 * said unlimited).  A known id gets the new owner and expiry.  When the
 * map is full the entry learned longest ago is forgotten (evicted).
 * Returns 0, MGW_EINVAL (id empty or longer than MGW_TASK_ID_MAX, or
 * ttl_ms 0: nothing kept) or MGW_ENOMEM. */
int mgw_task_map_put(struct mgw_task_map *m, const char *id, size_t len,
                     uint64_t owner, uint64_t ttl_ms, uint64_t now_ms);

/* 1 with *owner (and *left_ms, the time it has left, when not NULL) if
 * id/len is known and has not expired at now_ms; 0 otherwise (an expired
 * entry is dropped). */
int mgw_task_map_get(struct mgw_task_map *m, const char *id, size_t len,
                     uint64_t now_ms, uint64_t *owner, uint64_t *left_ms);

/* Entries held now (expired ones not yet dropped included). */
size_t mgw_task_map_size(struct mgw_task_map *m);

/* Carries what from knows (unexpired entries, oldest first, within to's
 * bounds; the counters) into to: a reload. */
void mgw_task_map_carry(struct mgw_task_map *to, struct mgw_task_map *from,
                        uint64_t now_ms);

/* The owner key of a server URL (what the map and Redis hold). */
uint64_t mgw_task_owner_key(const char *url);

/* Reads a JSON-RPC response (the whole object): 1 when its result is a
 * CreateTaskResult (resultType "task" and a string taskId without NUL),
 * with *id, *len borrowed from resp and *ttl_ms (UINT64_MAX when ttlMs
 * is null, absent, negative, not a number or beyond any bound: the
 * map's max_ttl decides then; a fraction is rounded up); else 0. */
int mgw_task_created(const json_t *resp, const char **id, size_t *len,
                     uint64_t *ttl_ms);

/* ---- on a transaction (check_affinity.c; the check itself is
 * mgw_check_affinity, checks.h) ---- */

struct mgw_txn;

/* 1 when t is a tools/call on a group with task affinity whose request
 * declares the tasks extension: its answer may create a task, so the
 * stateless handler captures it for mgw_affinity_learn. */
int mgw_affinity_wants(const struct mgw_txn *t);

/* Learns from t's complete answer body (JSON or SSE, len bytes; NULL
 * allowed) the task it created, owned by t->last. */
void mgw_affinity_learn(struct mgw_txn *t, const void *body, size_t len);

/* Answers t, a tasks/... request pinned to an owner that is gone, with the
 * tasks extension's unknown-task error (200, -32602), counted; frees t. */
void mgw_affinity_gone(struct mgw_txn *t);

#endif
