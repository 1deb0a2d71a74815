/* replay.h - whether a request lost in flight (sent, then the upstream
 * went away before a complete answer) may be sent again: one judgement
 * for both handlers, which mgw_failover_decide (failover.h) acts on.
 *
 *   the route says replay: always             yes (OK_ROUTE)
 *   GET, DELETE (HTTP safe / idempotent)      yes
 *   a batch, a body not read as JSON-RPC      no
 *   params carry requestState/inputResponses  no (SEP-2322 rounds)
 *   a notification or a JSON-RPC response     yes
 *   a request of a method safe by the spec    yes (mgw_replay_method_safe)
 *   tools/call of a tool annotated readOnlyHint or idempotentHint in
 *     the latest tools/list seen              yes (OK_TOOL)
 *   any other request                         no
 *
 * Where a tool's annotations come from is the caller's: a legacy
 * session's record (session.h), or the route's group (struct
 * mgw_replay_tools, learned from every tools/list answer that passes
 * through either handler).  doc/serve.md ("Requests lost in flight")
 * tells it as users see it. */
#ifndef MGW_PROXY_REPLAY_H
#define MGW_PROXY_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "mcp/jsonrpc.h"
#include "proxy/repin-t.h"
#include "proxy/replay-t.h"

struct mgw_txn;

/* 1 when a request of method may be sent twice by the specification's
 * own words: ping, the list methods, server/discover, resources/read,
 * prompts/get, tasks/get (doc/serve.md cites the text). */
int mgw_replay_method_safe(const char *method);

/* 1 when m's params carry requestState or inputResponses (SEP-2322). */
int mgw_replay_carries_state(const struct mgw_jrpc_msg *m);

/* Is the tool name/len known replay-safe (arg: the caller's source)? */
typedef int (*mgw_replay_tool_fn)(const void *arg, const char *name,
                                  size_t len);

/* The verdict for request m (NULL for GET/DELETE) on a route whose
 * replay key is route_replay (MGW_REPLAY_SAFE/ALWAYS); tool_safe(arg,..)
 * answers for tools/call (NULL: no tool is known).  Values below
 * MGW_REPLAY_NO_TOOL allow a replay. */
enum mgw_replay_verdict mgw_replay_judge(const struct mgw_jrpc_msg *m,
                                         int route_replay,
                                         mgw_replay_tool_fn tool_safe,
                                         const void *arg);

/* A mgw_replay_tool_fn over the upstream group arg (its learned tools,
 * at the current time). */
int mgw_replay_group_tool_safe(const void *arg, const char *name, size_t len);

/* The -32010 message for a refused verdict v of m, into buf. */
void mgw_replay_refusal_msg(enum mgw_replay_verdict v,
                            const struct mgw_jrpc_msg *m, char *buf,
                            size_t n);

/* "replayed" / "refused" results, counted for t's route and group (the
 * group's atomics for /mcpgw/stats, the worker's block for /metrics). */
void mgw_replay_count(struct mgw_txn *t, int replayed);

/* ---- a group's replay-safe tools ---- */

/* Returns 0 or MGW_ENOMEM. */
int mgw_replay_group_init(struct mgw_replay_group *g);
void mgw_replay_group_deinit(struct mgw_replay_group *g);
/* Carries what from knew (counters, tools) into to (a reload). */
void mgw_replay_group_carry(struct mgw_replay_group *to,
                            struct mgw_replay_group *from);

/* Learns from a tools/list result (its "result" member): replaces the
 * set (merge: a later page, adds to it) with the tools it annotates
 * readOnlyHint: true or idempotentHint: true, within the bounds (names
 * beyond them are simply not replay-safe).  Returns 0, MGW_EINVAL (no
 * tools array) or MGW_ENOMEM (set unchanged). */
int mgw_replay_tools_learn(struct mgw_replay_tools *tt, const json_t *result,
                           int merge, uint64_t now_ms);

/* The same from a whole answer body (JSON, or SSE when is_sse), within
 * max_depth of JSON nesting. */
int mgw_replay_tools_learn_body(struct mgw_replay_tools *tt, const void *body,
                                size_t len, int is_sse, size_t max_depth,
                                int merge, uint64_t now_ms);

/* 1 if name/len is in tt's set and the set has not expired at now_ms. */
int mgw_replay_tools_safe(struct mgw_replay_tools *tt, const char *name,
                          size_t len, uint64_t now_ms);

/* Names in the set now (0 once expired). */
size_t mgw_replay_tools_count(struct mgw_replay_tools *tt, uint64_t now_ms);
/* When tt was last learned (monotonic ms; 0: never). */
uint64_t mgw_replay_tools_learned_ms(struct mgw_replay_tools *tt);

#endif
