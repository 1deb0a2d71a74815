/* backend-t.h - types of the reference MCP server (`mcpgw backend`):
 * the server instance, legacy sessions, in-flight JSON-RPC calls and
 * long-lived SSE streams.  Prototypes live in backend.h. */
#ifndef MGW_BACKEND_BACKEND_T_H
#define MGW_BACKEND_BACKEND_T_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "backend/conf_backend-t.h"
#include "http/headers-t.h"
#include "mcp/jsonrpc.h"

struct mgw_http_server;
struct mgw_http_exchange;
struct mgw_strmap;
struct mgw_be_store;
struct mgw_be_record;
struct mgw_mrtr;
struct mgw_be_tasks;

/* The era a request is served in (decided per request in dual mode). */
enum mgw_be_era { MGW_BE_LEGACY = 1, MGW_BE_MODERN = 2 };

/* Distinct method names counted in stats; later names fall into "other"
 * so a client cannot grow the table. */
#define MGW_BE_METHOD_SLOTS 48

struct mgw_be_method_count {
	char name[48];
	uint64_t count;
};

/* Counters exposed on GET /stats.  Everything monotonic except the
 * "open" gauges, which are computed when rendered. */
struct mgw_be_stats {
	uint64_t http_requests;          /* every HTTP request on any path */
	uint64_t requests;               /* JSON-RPC messages on the endpoint */
	uint64_t sessions_created;
	uint64_t sessions_expired;
	uint64_t sessions_deleted;
	uint64_t initialize_count;
	uint64_t lost_session_rejections; /* unknown/expired Mcp-Session-Id */
	uint64_t missing_session_rejections;
	uint64_t handle_losses;          /* counter handle not usable here */
	uint64_t header_mismatches;      /* SEP-2243 -32020 answers */
	uint64_t unsupported_versions;   /* -32022 answers */
	uint64_t tool_calls;
	uint64_t tool_errors;            /* results with isError: true */
	uint64_t cancelled;              /* calls whose client went away */
	uint64_t sse_streams_total;      /* GET + listen streams ever opened */
	uint64_t notifications_pushed;   /* messages written on long streams */
	uint64_t mrtr_states_issued;     /* requestStates handed out */
	uint64_t mrtr_state_bytes_total; /* their lengths, summed */
	uint64_t mrtr_state_bytes_max;
	uint64_t mrtr_completed;         /* dialogues that ended in a booking */
	uint64_t mrtr_refusals;          /* requestStates refused */
	struct mgw_be_method_count methods[MGW_BE_METHOD_SLOTS];
	size_t n_methods;
	uint64_t other_methods;
};

/* A legacy (2025-xx) session.  Lives only in this process's memory. */
struct mgw_be_session {
	char id[33];                 /* 32 hex chars = 128 random bits */
	char version[16];            /* negotiated protocol version */
	int initialized;             /* notifications/initialized seen */
	uint64_t last_used_ms;       /* monotonic; drives idle expiry */
	struct mgw_strmap *counters; /* handle -> struct mgw_be_counter */
	size_t n_streams;            /* open GET streams (keep it alive) */
	size_t push_rr;              /* round-robin cursor over GET streams */
};

/* One counter value (legacy session counters and memory handles). */
struct mgw_be_counter {
	int64_t value;
	uint64_t last_used_ms;
};

enum mgw_be_stream_kind { MGW_BE_STREAM_GET = 1, MGW_BE_STREAM_LISTEN = 2 };

/* A long-lived SSE response: a legacy GET stream or a modern
 * subscriptions/listen stream.  Kept on the server's list until the client
 * leaves (abort), its session ends, or the server shuts down. */
struct mgw_be_stream {
	struct mgw_backend *be;
	struct mgw_http_exchange *x;
	enum mgw_be_stream_kind kind;
	struct mgw_be_session *session; /* GET streams only */
	json_t *sub_id;                 /* listen: the request id (owned ref) */
	int tools_list_changed;         /* listen: client opted in */
	unsigned long events;           /* GET: events written (their ids) */
	struct event *keepalive;
	struct mgw_be_stream *prev, *next;
};

/* One JSON-RPC request being answered.  Reference counted: the exchange
 * holds one reference until it finishes or aborts, and every pending
 * asynchronous operation (timer, Redis command) holds one more. */
struct mgw_be_call {
	struct mgw_backend *be;
	struct mgw_http_exchange *x;    /* NULL once answered or aborted */
	int refs;
	enum mgw_be_era era;
	struct mgw_jrpc_msg msg;        /* owned: the parsed request */
	char session_id[33];            /* legacy: session (for logs) */
	struct mgw_headers resp_headers; /* extra response fields */
	int sse;                        /* answer as SSE */
	int sse_started;
	int delayed;                    /* --delay-ms already applied */
	struct event *timer;            /* sleep tool or answer delay */
	void (*timer_fn)(struct mgw_be_call *c);
	char *out;                      /* answer held back by the delay */
	size_t out_len;
	int out_status;
	char *frame;                    /* final SSE frame being written */
	size_t frame_len, frame_off;
	uint32_t ticks_sent;            /* ticks tool: events written so far */
	unsigned long events;           /* legacy SSE answer: events written
	                                 * (their ids) */
};

/* The running server. */
struct mgw_backend {
	struct event_base *base;
	struct mgw_backend_conf conf;   /* own copy: config + flag overrides */
	double shutdown_timeout;
	struct mgw_http_server *http;
	struct mgw_be_store *store;     /* modern handle design */
	struct mgw_strmap *sessions;    /* id -> struct mgw_be_session */
	size_t n_counters;              /* legacy counters of all sessions */
	struct mgw_be_stream *streams;  /* all long-lived SSE streams */
	size_t n_streams;
	struct event *sweep;            /* idle-session expiry */
	struct mgw_be_stats stats;
	uint64_t start_ms;
	int stopping;
	struct mgw_be_record *record;   /* --record N; NULL when off */
	struct mgw_mrtr *mrtr;          /* MRTR request states (mrtr.c) */
	struct mgw_be_tasks *tasks;     /* tasks and their store (tasks.c) */
};

#endif
