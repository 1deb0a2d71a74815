/* agent_impl.h - private functions shared by the files of the load
 * client's protocol side (see agent_impl-t.h for who does what).  The
 * agent is the only caller of the dialects and transports; transports
 * report back through ld_answer(), always from the event loop. */
#ifndef MGW_LOAD_AGENT_IMPL_H
#define MGW_LOAD_AGENT_IMPL_H

#include <stddef.h>

#include <jansson.h>

#include "load/agent.h"
#include "load/agent_impl-t.h"

/* ---- agent.c ---- */

/* A transport's answer to the message in flight.  Called from the loop,
 * possibly inside an HTTP client callback; the transport must not touch
 * the message's request state after this returns (the agent may already
 * have sent the next message). */
void ld_answer(struct mgw_load_agent *a, const struct ld_answer *ans);

/* Builds a POST message {"jsonrpc":"2.0","id":N,"method":m,"params":p}
 * (no "id" when notification; params stolen, NULL = no member) with
 * Content-Type and Accept fields.  Era fields are the dialect's job.
 * Returns NULL on no memory (params released). */
struct ld_msg *ld_msg_build(struct mgw_load_agent *a, const char *method,
                            json_t *params, int notification);
void ld_msg_free(struct ld_msg *m);

/* The auth fields requests carry now (static ones, or the last output of
 * the auth command); NULL when none. */
const struct mgw_headers *ld_auth_fields(const struct mgw_load_agent *a);

/* ---- dialect_legacy.c ---- */

/* initialize (no session or version fields yet). */
struct ld_msg *ld_legacy_initialize(struct mgw_load_agent *a);
/* notifications/initialized on the new session. */
struct ld_msg *ld_legacy_initialized(struct mgw_load_agent *a);
/* A request on the session: Mcp-Session-Id (when the server minted one)
 * and MCP-Protocol-Version.  params stolen. */
struct ld_msg *ld_legacy_request(struct mgw_load_agent *a, const char *method,
                                 json_t *params);
/* DELETE of the session (no body). */
struct ld_msg *ld_legacy_delete(struct mgw_load_agent *a);
/* Takes the session id and negotiated version from an initialize answer.
 * Returns 0, or MGW_EPROTO when the result is not an InitializeResult
 * (detail written). */
int ld_legacy_take_init(struct mgw_load_agent *a, const struct ld_answer *ans,
                        char *detail, size_t dlen);
/* Forgets the session (and the handles that lived in it). */
void ld_legacy_drop_session(struct mgw_load_agent *a);

/* Whether a non-2xx answer to a request that carried a session means
 * the server does not know that session any more.  status 404 always
 * does.  A 400 does unless its body is a JSON-RPC error (err: the
 * response object, or NULL) whose message does not contain match
 * (case-insensitive; NULL = "session", "" = any JSON-RPC error): a 400
 * carrying some other JSON-RPC error is that error, not a lost session,
 * while an empty or non-JSON-RPC body can only be the session layer
 * refusing.  Other statuses never do (5xx are handled by the caller). */
int mgw_load_session_lost(int status, const json_t *err, const char *match);

/* ---- dialect_modern.c ---- */

/* A modern request: params._meta (protocolVersion, clientInfo,
 * clientCapabilities) and the SEP-2243 fields MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name (name, sentinel-encoded when needed) and
 * Mcp-Param-* for tools/call arguments the tool's schema declared (see
 * ld_modern_learn_tools).  params stolen; name may be NULL. */
struct ld_msg *ld_modern_request(struct mgw_load_agent *a, const char *method,
                                 const char *name, json_t *params);
/* Remembers the x-mcp-header declarations of a tools/list result, so
 * later calls mirror those arguments into Mcp-Param-* fields. */
void ld_modern_learn_tools(struct mgw_load_agent *a, const json_t *result);

/* ---- dialect_auto.c ---- */

/* The era probe: a modern server/discover. */
struct ld_msg *ld_auto_probe(struct mgw_load_agent *a);
/* Reads the probe's answer as the backward-compatibility rules say:
 * MGW_ERA_IS_MODERN for a result or a recognized modern error
 * (-32020/-32021/-32022, with a -32022 listing only legacy versions
 * read as legacy), MGW_ERA_IS_LEGACY for anything else that came back,
 * MGW_ERA_UNKNOWN when nothing did (FAILED / TIMEOUT). */
enum mgw_era ld_auto_verdict(const struct ld_answer *ans);

/* ---- transport_http.c ---- */

int ld_http_init(struct mgw_load_agent *a, struct mgw_client *cl);
void ld_http_deinit(struct mgw_load_agent *a);
/* Sends m to a target chosen as the connection mode says; the answer
 * comes through ld_answer().  Returns 0, or a negative MGW_E* with no
 * answer to follow. */
int ld_http_send(struct mgw_load_agent *a, const struct ld_msg *m);
/* Drops the request in flight without an answer. */
void ld_http_cancel(struct mgw_load_agent *a);
/* The connection in use is broken (a failure, or no answer in time):
 * reuse mode drops it before the next send and draws a target again. */
void ld_http_broken(struct mgw_load_agent *a);

/* ---- transport_stdio.c ---- */

int ld_stdio_init(struct mgw_load_agent *a);
void ld_stdio_deinit(struct mgw_load_agent *a);
/* Writes m to the server (launching it first, after the backoff if the
 * last one died).  Same contract as ld_http_send. */
int ld_stdio_send(struct mgw_load_agent *a, const struct ld_msg *m);
/* Forgets the request in flight (telling the server with
 * notifications/cancelled); no answer follows. */
void ld_stdio_cancel(struct mgw_load_agent *a);

/* ---- spawn.c ---- */

/* Starts "/bin/sh -c cmd" with its stdout on a pipe (ch->out_fd) and,
 * when with_stdin, its stdin on another (ch->in_fd; otherwise /dev/null).
 * stderr is inherited, or /dev/null when quiet.  Our pipe ends are
 * non-blocking and close-on-exec; SIGPIPE is default in the child, which
 * leads a new process group.
 * Returns 0, or MGW_EIO (errno kept). */
int ld_spawn(const char *cmd, int with_stdin, int quiet, struct ld_child *ch);
/* 1 when pid has exited and was reaped now (non-blocking). */
int ld_child_try_reap(pid_t pid);
/* Ends pid for good unless it has exited already: SIGTERM to its process
 * group, a short bounded wait (200 ms), then SIGKILL and a wait.  For
 * teardown, when nothing may be left behind. */
void ld_child_kill_reap(pid_t pid);

/* ---- auth.c ---- */

/* The runner of cmd on base, shared by every agent using the same
 * command (reference counted).  NULL on no memory. */
struct ld_auth *ld_auth_get(struct event_base *base, const char *cmd);
void ld_auth_put(struct ld_auth *au);
/* Header fields of the last completed run (empty before the first). */
const struct mgw_headers *ld_auth_headers(const struct ld_auth *au);
/* Completed runs so far (0: never). */
unsigned ld_auth_gen(const struct ld_auth *au);
/* Waits for fields newer than generation seen: at once (from the loop)
 * when the runner already has them, else after the run it starts (or
 * that is running).  cb(w, arg) runs once, from the loop, unless
 * cancelled.  A failed run keeps the old fields and still completes. */
void ld_auth_refresh(struct ld_auth *au, unsigned seen, struct ld_auth_wait *w,
                     ld_auth_cb cb, void *arg);
/* Leaves the queue (no callback).  Idempotent. */
void ld_auth_cancel(struct ld_auth_wait *w);
/* Parses an auth command's output into h: "Name: value" lines, or a
 * single line without a field name, which becomes Authorization.  Blank
 * lines are skipped, CR before LF dropped.  Returns 0 or MGW_EINVAL (no
 * field, an invalid name or value). */
int ld_auth_parse(const char *out, size_t len, struct mgw_headers *h);

#endif
