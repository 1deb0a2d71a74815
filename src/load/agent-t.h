/* agent-t.h - types at the boundary between the load engine (scheduler,
 * statistics, report: src/load/engine.c and friends) and the protocol side
 * (src/load/agent.c: a virtual user speaking one MCP dialect over one
 * transport).  The engine decides *when* a call starts and what it counts;
 * the agent decides *how* the call goes on the wire and classifies how it
 * ended.  See agent.h for the functions and the callback rules. */
#ifndef MGW_LOAD_AGENT_T_H
#define MGW_LOAD_AGENT_T_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/ssl.h>

#include "http/headers-t.h"

struct mgw_load_agent;

/* How a virtual user uses HTTP connections.  REUSE: keep-alive (HTTP/1.1)
 * or one multiplexed connection (HTTP/2) for the agent's life, with one
 * target chosen at random when the agent connects (again when it has to
 * reconnect).  NEW: every request goes out on a fresh connection to a
 * target chosen at random for that request, which is what spreads one
 * client's requests over replicas behind a per-connection balancer (and
 * what makes a legacy session land on a replica that never saw it). */
enum mgw_load_conn {
	MGW_LOAD_CONN_REUSE = 0,
	MGW_LOAD_CONN_NEW,
};

/* The MCP dialect an agent speaks.  LEGACY: initialize ->
 * notifications/initialized -> calls carrying Mcp-Session-Id and
 * MCP-Protocol-Version; DELETE at close.  MODERN: no handshake, every
 * request carries MCP-Protocol-Version / Mcp-Method / Mcp-Name and the
 * params._meta fields.  AUTO: probe the era as the spec's
 * backward-compatibility section says, then behave as the era found. */
enum mgw_load_dialect {
	MGW_LOAD_LEGACY = 1,
	MGW_LOAD_MODERN,
	MGW_LOAD_AUTO,
};

/* What one logical call needs beyond a single tools/call. */
enum mgw_load_flow {
	/* One tools/call of `tool` with `arguments`. */
	MGW_LOAD_FLOW_CALL = 0,
	/* A handle flow (SEP-2567 style): while the agent holds no handle for
	 * this spec it first calls `create_tool` (arguments {}) and keeps the
	 * handle from the result (structuredContent.handle, else the text);
	 * the logical call is then `tool` with `arguments` plus
	 * {handle_arg: handle}.  A successor handle in the result
	 * (structuredContent.handle) replaces the held one.  A tool error
	 * naming an unknown handle is MGW_LOAD_HANDLE_LOST and drops the
	 * handle, so the next call of the spec creates a new one. */
	MGW_LOAD_FLOW_COUNTER,
	/* A multi round-trip dialogue (SEP-2322, MRTR): `tool` with
	 * `arguments`; while the result has resultType "input_required" the
	 * agent sends the same request again (a new id) with inputResponses -
	 * for each key of inputRequests the entry of `answers` of that name,
	 * else the entry "*" - and the requestState echoed, at most
	 * max_rounds times.  The whole dialogue is one logical call; a
	 * JSON-RPC error saying the server does not have the state it was
	 * given back is MGW_LOAD_STATE_LOST.  Modern requests declare the
	 * elicitation capability. */
	MGW_LOAD_FLOW_MRTR,
	/* A task (tasks utility of 2025-11-25, SEP-2663 extension of
	 * 2026-07-28): the tools/call asks for a task (legacy: params.task;
	 * modern: the request declares io.modelcontextprotocol/tasks); a
	 * CreateTaskResult is followed by tasks/get every pollInterval the
	 * server suggests (Mcp-Name: taskId on the modern era) until the task
	 * is terminal, within the call's timeout; legacy then fetches the
	 * result with tasks/result.  A server that answers with a plain
	 * result instead is an ordinary call.  -32602 to a tasks/get or
	 * tasks/result (the replica does not know the task) is
	 * MGW_LOAD_TASK_LOST. */
	MGW_LOAD_FLOW_TASK,
};

/* Where the load goes.  Built once by the command (or a test) and shared,
 * read-only, by every agent; it must outlive them.  Exactly one of urls
 * (HTTP) or stdio_cmd (stdio) is set. */
struct mgw_load_target {
	/* http:// or https:// URLs of MCP endpoints ("http://h:p/mcp"), all
	 * speaking the same dialect; choice among them per connection as
	 * described for enum mgw_load_conn. */
	char **urls;
	size_t n_urls;
	enum mgw_load_conn conn;
	/* MGW_LOAD_CONN_REUSE: after this many requests on one connection the
	 * agent closes it and opens the next one to a target chosen again, as
	 * clients do that cap requests per connection or get idle connections
	 * closed; each such switch re-rolls the replica behind a
	 * per-connection balancer.  0: keep the connection while it works. */
	unsigned long reconnect_after;
	/* 1: HTTP/2 - prior knowledge (h2c) on http:// URLs, ALPN "h2" on
	 * https:// ones.  0: HTTP/1.1 (ALPN "http/1.1" over TLS). */
	int http2;
	/* Client TLS context for https:// URLs, built by the command with
	 * mgw_tls_client_ctx(ca_file, verify = 1): certificates are always
	 * verified (against ca_file, or the system store when it is NULL).
	 * NULL when no URL is https.  Agents pass it to their origins, which
	 * take their own references. */
	SSL_CTX *tls;
	const char *ca_file;       /* for messages only */
	/* stdio transport: a shell command line (run with /bin/sh -c) that
	 * starts an MCP server speaking newline-delimited JSON-RPC on its
	 * stdin/stdout.  Each agent runs its own server process (ids are
	 * still distinct per message, matched by id). */
	const char *stdio_cmd;
};

/* One entry of the weighted call mix.  Shared read-only by all agents. */
struct mgw_load_call_spec {
	/* Label used in statistics (the per_tool key of the report): the tool
	 * name, or e.g. "counter" for a handle flow. */
	const char *name;
	enum mgw_load_flow flow;
	const char *tool;          /* tools/call name ("echo",
	                            * "counter_increment") */
	json_t *arguments;         /* a JSON object template, never modified
	                            * by agents (they copy before adding a
	                            * handle); owned by whoever built the spec */
	double weight;             /* > 0; relative share of the mix */
	const char *create_tool;   /* FLOW_COUNTER: "counter_create" */
	const char *handle_arg;    /* FLOW_COUNTER: "handle" */
	/* FLOW_MRTR: input request name -> the response to send (an object,
	 * e.g. {"action": "accept", "content": {...}}); "*" for any other
	 * name.  Borrowed like arguments. */
	json_t *answers;
	long max_rounds;           /* FLOW_MRTR: input rounds at most (> 0) */
	/* FLOW_MRTR, the time-travel case of SEP-2322: after every
	 * fork_every-th dialogue of an agent that ended with a final result,
	 * the agent sends retry number fork_round of that dialogue again (0:
	 * its last retry), with the requestState and inputResponses it
	 * carried then, follows any input rounds, and counts the answer:
	 * a final result that is not a tool error is `forked` (the server
	 * acted on the old state twice: a second booking), a JSON-RPC error,
	 * a 4xx or a tool error is `refused`.  0: never. */
	long fork_every;
	long fork_round;
};

/* Behaviour shared by all agents of a run.  Read-only; must outlive the
 * agents. */
struct mgw_load_agent_opts {
	enum mgw_load_dialect dialect;
	/* Bound on one logical call, in seconds, from mgw_load_agent_call()
	 * (a handshake or handle creation it needs included); on expiry
	 * whatever is in flight is cancelled and the call ends with
	 * MGW_LOAD_TIMEOUT.  <= 0: no bound. */
	double timeout;
	/* Static end-to-end header fields added to every HTTP request
	 * (Authorization...), values already resolved (the command expands
	 * "env:VAR" values).  NULL: none. */
	const struct mgw_headers *auth_headers;
	/* A shell command (sh -c) whose stdout is one or more "Name: value"
	 * header lines that replace auth_headers; run before the first
	 * request and again when a request is answered 401 (credential
	 * expiry), after which that request is sent once more.  Must not block
	 * the loop.  NULL: none. */
	const char *auth_command;
	/* Protocol version to request; NULL: the newest of the dialect
	 * (MGW_MCP_LEGACY_LATEST, MGW_MCP_MODERN_VERSION). */
	const char *protocol_version;
	const char *client_name;   /* clientInfo.name; NULL: "mcpgw-load" */
	const char *client_version;/* clientInfo.version; NULL: PACKAGE_VERSION */
	/* 1: send tools/list once after each (re-)initialization (legacy) or
	 * before the first call (modern), like a real client does. */
	int list_tools;
	/* Legacy: how a 400 answer to a request carrying Mcp-Session-Id is
	 * told apart from other 400s.  It means a lost session when its body
	 * is not a JSON-RPC error, or is one whose error.message contains
	 * this text (case-insensitive).  NULL: "session"; "": any 400.  A 404
	 * is always a lost session (the spec's answer to an unknown id). */
	const char *lost_session_match;
	/* Legacy HTTP: after this many tools/call requests on one session,
	 * the agent's next call first ends the session: DELETE on its own
	 * connection, then a ping with the deleted id through another target
	 * (the next URL of the list, a connection of its own), which must be
	 * refused as a lost session (404); a 2xx ends the call as
	 * MGW_LOAD_DELETED_SERVED.  Then a new session, not counted as a
	 * reinitialization.  0: sessions last until the agent closes. */
	unsigned long delete_after;
};

/* How one logical call ended.  Exactly one per call; the engine counts
 * them separately.  Order matters only for the report's key order. */
enum mgw_load_outcome {
	MGW_LOAD_OK = 0,
	/* Legacy: the server did not know the session (404, or a 400 whose
	 * body is not another JSON-RPC error; see lost_session_match).  The
	 * agent re-initializes before its next request.  A 5xx on a call
	 * that carried a session is counted as MGW_LOAD_HTTP_5XX (it proves
	 * nothing about the session) but the agent re-initializes after it
	 * too. */
	MGW_LOAD_SESSION_LOST,
	/* Modern handle flow: the tool error "unknown handle". */
	MGW_LOAD_HANDLE_LOST,
	MGW_LOAD_HTTP_4XX,         /* other 4xx answers */
	MGW_LOAD_HTTP_5XX,         /* other 5xx answers */
	MGW_LOAD_RPC_ERROR,        /* a JSON-RPC error object in the answer */
	MGW_LOAD_TOOL_ERROR,       /* result.isError true (not a handle loss) */
	MGW_LOAD_TIMEOUT,          /* opts.timeout or a transport timeout */
	/* No answer: connect/TLS failure, connection closed or reset, a
	 * malformed response, a stdio server that died. */
	MGW_LOAD_CONNECT_ERROR,
	/* Task flow: the replica polled did not know the task (-32602 to
	 * tasks/get or tasks/result): its record lives on another one. */
	MGW_LOAD_TASK_LOST,
	/* MRTR dialogue: the server answered a retry carrying requestState
	 * with a JSON-RPC error meaning it does not have that state (the
	 * mcpgw backend's -32040 "unknown": another replica's memory state,
	 * and -32041 "invalid": sealed with a key it does not hold). */
	MGW_LOAD_STATE_LOST,
	/* Legacy, delete_after: the session this call ended with DELETE was
	 * served again (a 2xx) when its id was presented through another
	 * target: a DELETE that did not hold (a sealed token opened by a
	 * gateway that never saw the DELETE).  The call's tool is not run. */
	MGW_LOAD_DELETED_SERVED,
	MGW_LOAD_OUTCOME_N,
};

/* What on_done receives; valid during the callback only. */
struct mgw_load_result {
	enum mgw_load_outcome outcome;
	int status;                /* HTTP status of the call's last answer;
	                            * 0 when there was none (stdio, or no
	                            * response) */
	uint64_t bytes;            /* response body bytes received by the
	                            * call, handshake included */
	/* initialize handshakes this call performed (the first one of the
	 * agent's life included): a legacy recovery shows up here.  The
	 * engine reports only those beyond each agent's first. */
	unsigned reinitialized;
	/* Transport re-establishments this call needed after a previous
	 * connection (or stdio server) was lost - not the routine fresh
	 * connections of MGW_LOAD_CONN_NEW. */
	unsigned reconnected;
	/* mgw_now_ns() when the call's tools/call request was handed to the
	 * transport (after any handshake or handle creation it needed), for
	 * the service time; 0 when it was never sent. */
	uint64_t sent_ns;
	/* FLOW_MRTR: dialogue is 1, rounds the input_required answers the
	 * agent followed (retries sent) before the dialogue ended. */
	unsigned dialogue;
	unsigned rounds;
	/* FLOW_MRTR with fork_every: 1 when the call re-presented an old
	 * state after its dialogue; then one of forked / refused is 1, or
	 * neither when the re-presentation got no answer (the call's outcome
	 * says why). */
	unsigned represented;
	unsigned forked;
	unsigned refused;
	/* Task flow: 1 when the server answered with a task; the tasks/get
	 * requests the call sent. */
	unsigned tasks;
	unsigned polls;
	/* delete_after: the sessions this call ended with DELETE and then
	 * checked through another target (any verdict). */
	unsigned deletes;
	/* Short reason for a failure, for logs ("HTTP 404", "unknown
	 * handle", "connect: refused"); NULL for MGW_LOAD_OK. */
	const char *detail;
};

/* A logical call has ended.  Runs from the event loop, never from inside
 * mgw_load_agent_call().  The agent may be given its next call (or be
 * freed) from inside the callback. */
typedef void (*mgw_load_done_cb)(struct mgw_load_agent *a,
                                 const struct mgw_load_result *r, void *arg);

/* mgw_load_agent_close() has finished (session deleted, or gave up). */
typedef void (*mgw_load_closed_cb)(struct mgw_load_agent *a, void *arg);

#endif
