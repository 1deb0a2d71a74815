/* sf_req.h - the stateful handler's per-request state and the functions
 * its files share (private to stateful.c, sf_session.c, sf_record.c and
 * sf_setup.c). */
#ifndef MGW_PROXY_SF_REQ_H
#define MGW_PROXY_SF_REQ_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "http/headers-t.h"
#include "proxy/errors-t.h"
#include "proxy/repin-t.h"
#include "proxy/stateful-t.h"
#include "proxy/txn-t.h"
#include "session/session-t.h"
#include "session/store-t.h"

enum sf_kind {
	K_INIT = 0,     /* POST initialize */
	K_POST,         /* any other POST of a session */
	K_GET,          /* the standalone SSE stream */
	K_DELETE,       /* end of the session */
	K_NOSESSION,    /* GET/DELETE without a session (stateful mode) */
};

/* What the handler does with an answer before the relay takes it. */
enum sf_mode {
	M_NONE = 0,
	M_HOLD,         /* "maybe a lost session": head kept, up to
	                 * LOST_BODY_MAX bytes of body held until decided */
	M_INIT,         /* a 2xx to initialize: collected whole, then the
	                 * session is created */
	M_DRAIN,        /* the answer to a DELETE: ignored */
};

struct mgw_sf_req {
	struct mgw_txn *t;
	struct mgw_sf *sf;
	struct mgw_session_view *view;    /* the route's store */
	enum sf_kind kind;
	struct mgw_headers creds;         /* Authorization and Cookie, for
	                                   * replays */
	char *cid;                        /* the client's session id */
	const char *lei;                  /* the client's Last-Event-ID */
	unsigned char principal[MGW_SESSION_DIGEST_LEN];
	int bound;                        /* principal is meaningful */
	struct mgw_session *rec;          /* the session (ref) */
	uint32_t tag;                     /* pin tag of rec */
	struct mgw_session_op *op;
	struct mgw_repin_waiter waiter;
	unsigned repins;                  /* re-pin runs this request needed */
	unsigned replays;                 /* sent again after a loss */
	const struct mgw_upstream_server *lost_on; /* server of the last
	                                  * loss in flight */
	enum sf_mode mode;
	enum mgw_lost_verdict lost;
	struct mgw_headers resp_hdrs;     /* HOLD, INIT */
	struct evbuffer *held;            /* HOLD, INIT: the body so far */
	int sse;                          /* INIT: the answer is SSE */
	struct mgw_sf_req *sprev, *snext; /* sf->streams (GET, streaming) */
	int listed;
};

/* stateful.c */
void mgw_sf_fail(struct mgw_sf_req *q, enum mgw_proxy_error e,
                 const char *detail);
void mgw_sf_not_found(struct mgw_sf_req *q);
void mgw_sf_go_pinned(struct mgw_sf_req *q);
void mgw_sf_repin(struct mgw_sf_req *q, struct mgw_upstream_server *failed,
                  enum mgw_repin_reason reason);
int mgw_sf_send(struct mgw_sf_req *q, struct mgw_upstream_server *srv);
void mgw_sf_reset_answer(struct mgw_sf_req *q);
/* out = in with every Mcp-Session-Id replaced by sid (or dropped when sid
 * is NULL), and Content-Length dropped (the server layer sets it). */
/* The re-pin map's hook (mgw_repin_env.on_repinned): closes this
 * worker's GET streams of the session still relayed from another
 * replica, so that their clients reconnect to the new pin, and tells the
 * other workers (sf_bus.h). */
void mgw_sf_on_repinned(void *arg, const struct mgw_session *rec,
                        const struct mgw_upstream_server *srv);
/* The bus's hook (sf_bus.h), on this worker's loop: another worker
 * re-pinned session sid to pin generation gen; closes this worker's GET
 * streams of it opened under an older generation. */
void mgw_sf_on_bus(void *arg, const char *sid, uint32_t gen);
int mgw_sf_client_headers(struct mgw_headers *out,
                          const struct mgw_headers *in, const char *sid);

/* sf_session.c: the session's store operations */
void mgw_sf_init_answered(struct mgw_sf_req *q);
void mgw_sf_lookup(struct mgw_sf_req *q);
void mgw_sf_remove(struct mgw_sf_req *q);

/* sf_record.c: what a complete 2xx answer teaches the record, stored in
 * the background; and dropping what is still in flight */
void mgw_sf_after_answer(struct mgw_sf_req *q, const void *body, size_t len);
void mgw_sf_bg_drop_all(struct mgw_sf *sf);

#endif
