/* agent.h - a virtual user of `mcpgw load`: one MCP client that speaks a
 * dialect (legacy, modern, auto) over a transport (HTTP/1.1 keep-alive or
 * a new connection per request, HTTP/2 h2c or TLS, stdio), holds its
 * session and handles, recovers the way a real client does
 * (re-initialize after a lost session, recreate a lost handle, reconnect)
 * and performs one logical call at a time, reporting how it ended.
 *
 * The engine (engine.c) owns scheduling and statistics; agents own the
 * wire.  Everything runs on one event_base; nothing here is thread-safe.
 * Types are in agent-t.h. */
#ifndef MGW_LOAD_AGENT_H
#define MGW_LOAD_AGENT_H

#include <event2/event.h>

#include "http/client-t.h"
#include "load/agent-t.h"
#include "mcp/era.h"

/* Creates an agent on base.  HTTP agents submit their requests through
 * client (shared by all agents of the run; the engine sizes its
 * per-origin limits for the largest phase) and declare their own origins
 * on it (one_request origins for MGW_LOAD_CONN_NEW); client is NULL for a
 * stdio target.
 * target and opts are borrowed and must outlive the agent.  Nothing is
 * sent until the first call (the handshake, if any, is part of it).
 * Returns NULL on no memory or an unusable target (no URL and no stdio
 * command, a URL that does not parse, https without target->tls). */
struct mgw_load_agent *mgw_load_agent_new(struct event_base *base,
                                          struct mgw_client *client,
                                          const struct mgw_load_target *target,
                                          const struct mgw_load_agent_opts *opts);

/* Frees the agent at once: whatever is in flight is cancelled and no
 * callback (on_done, closed) runs afterwards.  Does not end the session
 * politely (see mgw_load_agent_close).  Safe from inside the agent's own
 * callbacks.  NULL allowed. */
void mgw_load_agent_free(struct mgw_load_agent *a);

/* Starts one logical call of spec (borrowed; must stay valid until
 * on_done): for legacy, an initialize handshake first when the agent has
 * no session; for a handle flow, handle creation first when it has none;
 * then the tools/call itself, answered as JSON or SSE (matched by id).
 * Exactly one on_done follows, from the loop, also when nothing could be
 * sent (then MGW_LOAD_CONNECT_ERROR).  Returns 0, or MGW_ELIMIT when a call
 * is already in flight (one at a time per agent) or MGW_ECLOSED after
 * mgw_load_agent_close() - with no callback in either case. */
int mgw_load_agent_call(struct mgw_load_agent *a,
                        const struct mgw_load_call_spec *spec,
                        mgw_load_done_cb on_done, void *arg);

/* Ends the agent's conversation politely: a legacy agent with a session
 * sends DELETE with its Mcp-Session-Id (bounded by opts->timeout); other
 * agents have nothing to end.  A call still in flight is cancelled
 * without its on_done.  closed runs once, from the loop, when that is
 * done (whatever the answer); afterwards only mgw_load_agent_free() may
 * be called.  Returns 0, or MGW_ECLOSED if already closing. */
int mgw_load_agent_close(struct mgw_load_agent *a, mgw_load_closed_cb closed,
                         void *arg);

/* The era this agent speaks: MGW_ERA_IS_LEGACY or MGW_ERA_IS_MODERN for
 * fixed dialects, and for MGW_LOAD_AUTO the era found by the probe, or
 * MGW_ERA_UNKNOWN before its first answer.  The report names it. */
enum mgw_era mgw_load_agent_era(const struct mgw_load_agent *a);

#endif
