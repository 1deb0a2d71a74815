/* agent_impl-t.h - private types of the load client's protocol side: the
 * agent (agent.c, the per-call state machine), the dialects that build
 * and judge messages (dialect_legacy.c, dialect_modern.c, dialect_auto.c),
 * the transports that carry them (transport_http.c, transport_stdio.c),
 * and the helpers for child processes (spawn.c) and credentials (auth.c).
 * Nothing outside src/load/ (and its unit tests) includes this file. */
#ifndef MGW_LOAD_AGENT_IMPL_T_H
#define MGW_LOAD_AGENT_IMPL_T_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "http/headers-t.h"
#include "load/agent-t.h"
#include "load/sse_parse-t.h"
#include "mcp/era.h"
#include "util/url.h"

struct bufferevent;
struct event;
struct event_base;
struct mgw_client;
struct mgw_client_origin;
struct mgw_client_req;

/* Longest response body kept for a JSON answer (SSE streams are parsed
 * as they arrive and bounded by the SSE parser instead). */
#define LD_MAX_BODY (4u * 1024 * 1024)
/* Longest line a stdio server may write. */
#define LD_MAX_STDIO_LINE (4u * 1024 * 1024)
/* Longest detail text of a result. */
#define LD_DETAIL_MAX 160

/* One outgoing message.  Built by a dialect, carried by a transport. */
struct ld_msg {
	const char *http_method;    /* "POST", or "DELETE" (legacy close) */
	const char *rpc_method;     /* JSON-RPC method, NULL for DELETE */
	int64_t id;                 /* request id; 0 for a notification */
	char *body;                 /* serialized JSON-RPC message (malloc'd;
	                             * NULL for DELETE) */
	size_t body_len;
	struct mgw_headers hdr;     /* protocol fields the dialect wants on
	                             * HTTP (auth fields are added by the
	                             * transport); stdio ignores them */
	int with_session;           /* carries Mcp-Session-Id: a 400/404/5xx
	                             * answer may mean the session is lost */
	int quick;                  /* a success is all the agent reads of
	                             * the result (a plain tools/call): the
	                             * transport may report one it read with
	                             * the skim, without building the answer
	                             * (ld_answer.quick_ok) */
	int other_target;           /* HTTP: goes to the target after the one
	                             * the previous request went to, not on
	                             * the agent's connection (a deleted
	                             * session's check) */
};

/* How a message was answered. */
enum ld_ans_kind {
	LD_ANS_RESPONSE = 0, /* a JSON-RPC response with our id (2xx) */
	LD_ANS_ACCEPTED,     /* a notification or DELETE was accepted (2xx) */
	LD_ANS_STATUS,       /* a non-2xx HTTP status */
	LD_ANS_FAILED,       /* no answer: connection, process or framing */
	LD_ANS_TIMEOUT,      /* a transport timeout */
};

struct ld_answer {
	enum ld_ans_kind kind;
	int status;             /* HTTP status; 0 on stdio or without one */
	json_t *resp;           /* RESPONSE: the response object; STATUS:
	                         * a JSON-RPC error response found in the body
	                         * (our id or null), else NULL.  Borrowed. */
	const char *body;       /* STATUS: the raw body (bounded), may be "" */
	size_t body_len;
	int quick_ok;           /* RESPONSE to a quick message, resp NULL:
	                         * the skim read a valid response to our id
	                         * whose result is a plain success */
	const char *session_id; /* Mcp-Session-Id of the answer, or NULL */
	const char *detail;     /* FAILED / TIMEOUT: why */
	uint64_t bytes;         /* body bytes received */
};

/* Where a logical call stands. */
enum ld_step {
	LD_ST_IDLE = 0,
	LD_ST_PROBE,       /* auto: server/discover */
	LD_ST_INIT,        /* legacy: initialize */
	LD_ST_INITIALIZED, /* legacy: notifications/initialized */
	LD_ST_LIST,        /* tools/list */
	LD_ST_CREATE,      /* handle flow: create_tool */
	LD_ST_CALL,        /* the tools/call itself */
	LD_ST_POLL_WAIT,   /* task: waiting out the poll interval */
	LD_ST_POLL,        /* task: tasks/get */
	LD_ST_TASK_RESULT, /* task (legacy): tasks/result */
	LD_ST_AUTH,        /* waiting for the auth command */
	LD_ST_DELETE,      /* legacy close: DELETE */
	LD_ST_END_DELETE,  /* delete_after: DELETE before the call */
	LD_ST_END_CHECK,   /* ... and the deleted id through another target */
	LD_ST_CLOSED,
};

/* A handle held for one call spec of a handle flow. */
struct ld_handle {
	const struct mgw_load_call_spec *spec;
	char *handle;
};

/* ---- child processes (spawn.c) ---- */

/* A running child with pipes.  fds are -1 when not requested. */
struct ld_child {
	pid_t pid;          /* 0: none */
	int in_fd;          /* our end of its stdin */
	int out_fd;         /* our end of its stdout */
};

/* ---- credentials (auth.c) ---- */

struct ld_auth;
struct ld_auth_wait;
typedef void (*ld_auth_cb)(struct ld_auth_wait *w, void *arg);

/* A place in the queue of an auth command run (embedded in the agent). */
struct ld_auth_wait {
	struct ld_auth *auth;
	struct ld_auth_wait *prev, *next;
	ld_auth_cb cb;
	void *arg;
	unsigned seen;      /* generation of the fields the waiter had */
	int queued;
};

/* ---- transports ---- */

/* One HTTP request in flight (transport_http.c). */
struct ld_hreq {
	struct mgw_load_agent *a;
	struct mgw_client_req *r;
	int64_t id;                  /* response id we wait for; 0: none */
	int status;
	unsigned sse : 1;            /* the answer is text/event-stream */
	unsigned answered : 1;       /* the agent has been told */
	unsigned draining : 1;       /* answered, the stream still open */
	unsigned quick : 1;          /* the message was quick (ld_msg) */
	unsigned quick_ok : 1;       /* ... and a plain success came */
	unsigned aside : 1;          /* other_target: not on the agent's
	                              * connection, whose state it leaves */
	struct mgw_sse_parser sp;
	char *body;                  /* JSON (or non-2xx) body collected */
	size_t body_len, body_cap;
	json_t *resp;                /* matched response (owned) */
	char *session_id;
	uint64_t bytes;
};

struct ld_http {
	struct mgw_client *cl;
	struct mgw_url *urls;        /* parsed target URLs */
	char **paths;                /* request targets ("/mcp", "/") */
	struct mgw_client_origin **origins; /* per URL, created on first use */
	size_t n;
	size_t cur;                  /* reuse mode: URL in use; n = none */
	size_t last;                 /* URL of the last request sent */
	unsigned long on_conn;       /* reuse mode: requests sent on it */
	int broken;                  /* reuse mode: the last call on it failed
	                              * or timed out: the next send opens a
	                              * new connection, to a target drawn
	                              * again */
	struct ld_hreq *req;         /* in flight */
	struct ld_hreq *drain;       /* answered stream still open */
};

struct ld_stdio {
	struct ld_child ch;
	struct bufferevent *in;      /* writes to the server's stdin */
	struct bufferevent *out;     /* reads its stdout */
	struct event *launch_ev;     /* backoff before a relaunch */
	struct event *reap_ev;       /* a dead server not yet reaped */
	pid_t zombie;                /* that server's pid */
	unsigned reap_polls;         /* polls of the zombie so far */
	unsigned fails;              /* consecutive launch failures */
	uint64_t next_launch_ms;     /* no relaunch before this */
	int64_t want_id;             /* response id we wait for; 0: none */
	const struct ld_msg *pending; /* waiting for the server to start */
	unsigned accepted_ev : 1;    /* a notification's answer is queued */
	struct event *answer_ev;     /* delivers queued answers from the loop */
	struct ld_answer queued;     /* that answer */
	char detail[LD_DETAIL_MAX];
};

/* ---- the agent ---- */

struct mgw_load_agent {
	struct event_base *base;
	const struct mgw_load_target *target;
	const struct mgw_load_agent_opts *opts;
	int stdio;                      /* 1: stdio transport */
	struct ld_http http;
	struct ld_stdio sio;

	/* era and protocol state */
	enum mgw_era era;               /* UNKNOWN until decided (auto) */
	char legacy_version[32];        /* what initialize asks for */
	char modern_version[32];        /* what modern requests declare */
	char negotiated[32];            /* legacy: the server's answer */
	char *session_id;               /* legacy: Mcp-Session-Id, or NULL */
	int initialized;                /* legacy: handshake done */
	unsigned long session_calls;    /* legacy: tools/call sent on it */
	int planned_new;                /* legacy: the next initialize follows
	                                 * our own DELETE (not a recovery) */
	int listed;                     /* tools/list done (this session) */
	int want_list;                  /* modern: a HeaderMismatch asks for
	                                 * the tool schemas (Mcp-Param-*) */
	json_t *client_info;            /* {"name","version"} */
	json_t *modern_meta[3];         /* modern params._meta, built once:
	                                 * plain, task (the tasks extension),
	                                 * MRTR (elicitation) */
	json_t *tool_headers;           /* modern: tool name -> [[header,
	                                 * JSON Pointer], ...] from the
	                                 * x-mcp-header declarations of
	                                 * tools/list */
	struct ld_handle *handles;
	size_t n_handles;
	/* MRTR dialogue in flight: what the next retry echoes */
	char *mrtr_state;               /* requestState, or NULL */
	json_t *mrtr_responses;         /* inputResponses, or NULL */
	/* fork_every: the retry to re-present after the dialogue, and the
	 * re-presentation's own input rounds */
	char *fork_state;               /* its requestState, or NULL */
	json_t *fork_responses;         /* its inputResponses, or NULL */
	unsigned long dialogues_done;   /* dialogues ended with a result */
	unsigned fork_rounds;
	int forking;                    /* the re-presentation is in flight */
	int64_t next_id;

	/* auth */
	struct ld_auth *auth;           /* shared runner of opts->auth_command */
	struct ld_auth_wait auth_wait;
	unsigned auth_gen;              /* generation our last request used */
	int auth_retried;               /* this request was resent after 401 */

	/* the call in flight */
	enum ld_step step;
	enum ld_step after_auth;        /* step to resume after LD_ST_AUTH */
	const struct mgw_load_call_spec *spec;
	mgw_load_done_cb on_done;
	void *done_arg;
	struct ld_msg *msg;             /* message in flight (for resends) */
	struct mgw_load_result res;
	char detail[LD_DETAIL_MAX];
	int conn_broken;                /* last transport attempt failed */
	int in_call;                    /* a call is in flight */
	int done_pending;               /* on_done is scheduled */
	struct event *done_ev;          /* runs on_done / closed from the loop */
	struct event *tmo_ev;           /* opts->timeout of the call */
	char task_id[128];              /* task flow: the task being polled */
	uint32_t poll_ms;               /* its suggested poll interval */
	struct event *poll_ev;          /* the next tasks/get */

	/* closing */
	int closing;
	mgw_load_closed_cb on_closed;
	void *closed_arg;
};

#endif
