/* txn-t.h - one client exchange going through the gateway (types only;
 * see txn.h, relay.h and handler.h). */
#ifndef MGW_PROXY_TXN_T_H
#define MGW_PROXY_TXN_T_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "http/client-t.h"
#include "http/headers-t.h"
#include "http/server.h"
#include "mcp/era.h"
#include "mcp/jsonrpc.h"
#include "proxy/route-t.h"
#include "proxy/sse.h"
#include "proxy/upstream-t.h"

struct mgw_pipeline;
struct mgw_handler;
struct mgw_metrics_worker;
struct mgw_principal;

/* Who answers the client: nobody yet (the handler decides, or holds the
 * answer itself), the relay collecting a small sized answer, or the relay
 * streaming one. */
enum mgw_relay_mode {
	MGW_RELAY_NONE = 0,
	MGW_RELAY_COLLECT,   /* head kept, body collected, sent whole */
	MGW_RELAY_STREAM,    /* head sent, body relayed with backpressure */
};

/* The response relay's state (relay.c). */
struct mgw_relay {
	enum mgw_relay_mode mode;
	struct mgw_headers hdrs;      /* COLLECT: the head to send */
	size_t expect_len;            /* COLLECT: Content-Length */
	struct evbuffer *buf;         /* collected body / data held back */
	struct evbuffer *cap;         /* STREAM: copy of the body for the
	                               * handler's on_complete (or NULL) */
	int sse;                      /* the answer is text/event-stream */
	int stamping;                 /* SSE event ids get the stamp */
	struct mgw_sse_stamper stamp;
	int paused;                   /* upstream delivery paused */
	int up_ended;                 /* upstream done, held data pending */
	uint64_t bytes;               /* body bytes given to the client */
	struct mgw_metrics_worker *sse_mx; /* an SSE stream counted open
	                               * there (closed at deinit), or NULL */
	/* COLLECT of an answer without Content-Length (a tools/list to
	 * filter, policy_filter.h): streams after all past expect_len */
	int unsized;
	unsigned flags;               /* mgw_relay_begin's, for that stream */
	uint32_t tag;
};

/* One transaction per client exchange: it owns the classification, the
 * route, the upstream attempts and the relay; the handler chosen at
 * dispatch keeps its own state in hd.  It lives exactly as long as its
 * exchange: freed when the answer is complete or cut, or when the client
 * goes away; the upstream attempt is always ended before it goes. */
struct mgw_txn {
	struct mgw_pipeline *pl;
	struct mgw_http_exchange *x;      /* NULL once the client side ended */
	const struct mgw_handler *h;
	void *hd;                         /* the handler's state */
	const struct mgw_route *route;
	enum mgw_era era;
	struct mgw_jrpc_msg msg;
	int have_msg;                     /* POST: msg holds its classification */
	int as_json;                      /* gateway errors as JSON-RPC */
	struct mgw_headers hdrs;          /* what goes upstream */
	struct mgw_headers up_head;       /* the current attempt's answer
	                                   * head, taken from the client layer
	                                   * (the relay may take it on) */
	uint64_t t0;                      /* monotonic ms at arrival */
	/* the current attempt */
	struct mgw_client_req *up;
	struct mgw_upstream_server *srv;  /* acquired while up is live */
	struct mgw_upstream_server *last; /* server of the last attempt */
	struct mgw_upstream_tried tried;
	struct mgw_upstream_server *owner; /* affinity: task: the server
	                                   * holding the task a tasks/...
	                                   * request names; every attempt
	                                   * goes there (check_affinity.c) */
	unsigned attempts;                /* attempts sent */
	unsigned retries;                 /* of them, budgeted retries */
	unsigned replays;                 /* of them, replays of a request
	                                   * lost in flight (stateless) */
	int status;                       /* the upstream's, once known */
	struct mgw_relay rl;
	/* for the access log */
	const char *session;              /* the client's session id */
	const char *note;                 /* why it ended */
	char why[64];                     /* what the handler did */
	const char *repin;                /* re-pin reason (a static name),
	                                   * when the session moved for it */
	uint64_t t0_ns;                   /* monotonic ns at arrival */
	struct mgw_principal *principal;  /* owned: who sent it, once the
	                                   * auth check verified a token;
	                                   * NULL without auth: */
	/* a check that went MGW_CHECK_PENDING (checks.h) */
	unsigned check_next;              /* where mgw_pipeline_resume goes on */
	void (*pending_cancel)(struct mgw_txn *t); /* called once if t ends
	                                   * while the check waits (the client
	                                   * left); the check clears it when
	                                   * it resumes or answers */
	void *pending_arg;                /* the waiting check's */
};

#endif
