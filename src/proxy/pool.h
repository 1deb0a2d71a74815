/* pool.h - the upstream pool of one worker: the picker (balancer state),
 * one HTTP client per upstream group and one client origin per server.
 * Every request the gateway sends upstream (client requests, re-pin
 * replays, best-effort DELETEs) is built and sent by mgw_upool_send, and
 * every server is chosen by mgw_upool_choose, which is told explicitly
 * whether the attempt draws on the retry budget.  Used from the worker's
 * thread only. */
#ifndef MGW_PROXY_POOL_H
#define MGW_PROXY_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "http/client.h"
#include "proxy/upstream-t.h"

struct mgw_upool {
	struct mgw_upstreams *ups;           /* borrowed */
	struct mgw_upstream_picker *picker;  /* owned */
	size_t n_groups;
	struct mgw_client **clients;         /* owned, one per group */
	struct mgw_client_origin ***origins; /* owned, [group][server] */
};

/* Builds the pool of one worker on base (seed 0 = random picks).  The
 * per-server connection limits of each group are shared out over
 * n_workers (at least one connection per worker).  ups must outlive it.
 * Returns NULL with a message in err. */
struct mgw_upool *mgw_upool_new(struct event_base *base,
                                struct mgw_upstreams *ups, unsigned n_workers,
                                uint64_t seed, char *err, size_t errlen);

/* Frees the clients (cancelling what is still in flight without
 * callbacks) and the picker.  NULL allowed. */
void mgw_upool_free(struct mgw_upool *p);

/* Whether a choice draws on the proxy-wide retry budget. */
enum mgw_upool_budget {
	MGW_UPOOL_FIRST = 0,  /* a first attempt: counted as a request by
	                       * the caller, never refused */
	MGW_UPOOL_RETRY,      /* another attempt: the budget must agree */
};

/* Chooses a server of g with its balancer (key/keylen: the hash_header
 * value, may be NULL), skipping those not available at now and the
 * n_exclude in exclude; a MGW_UPOOL_RETRY choice asks the retry budget
 * last.  Returns MGW_NEXT_OK with *out, or why not (MGW_NEXT_NONE_HEALTHY
 * when nothing was excluded, MGW_NEXT_ALL_TRIED, MGW_NEXT_NO_BUDGET). */
enum mgw_upstream_next mgw_upool_choose(struct mgw_upool *p,
	const struct mgw_upstream_group *g, const char *key, size_t keylen,
	struct mgw_upstream_server *const *exclude, size_t n_exclude,
	enum mgw_upool_budget budget, uint64_t now,
	struct mgw_upstream_server **out);

/* The next attempt of one request: mgw_upool_choose excluding the
 * servers t lists (those it tried); on MGW_NEXT_OK *out is also recorded
 * in t.  MGW_NEXT_NOMEM when t cannot grow. */
enum mgw_upstream_next mgw_upool_next(struct mgw_upool *p,
	const struct mgw_upstream_group *g, const char *key, size_t keylen,
	struct mgw_upstream_tried *t, enum mgw_upool_budget budget,
	uint64_t now, struct mgw_upstream_server **out);

/* The request-target sent to server s: the path prefix of its URL in
 * front of the client's target (a target not starting with '/', such as
 * "*", is sent as it is).  Returns a malloc'd string, NULL on no memory. */
char *mgw_upool_target(const struct mgw_upstream_server *s, const char *target);

/* Sends spec to server s: spec->target is the client's target (the
 * server's path prefix is put in front, mgw_upool_target), everything
 * else goes as it is.  On 0 the request runs (*out) and s was acquired
 * (the caller releases it when the request ends); else MGW_ELIMIT (the
 * server's queue is full) or another MGW_E*, nothing sent. */
int mgw_upool_send(struct mgw_upool *p, struct mgw_upstream_server *s,
                   const struct mgw_client_reqspec *spec,
                   struct mgw_client_req **out);

#endif
