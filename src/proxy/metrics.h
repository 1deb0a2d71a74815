/* metrics.h - the counters behind GET /metrics (metrics-t.h tells the
 * threading) and the hooks that feed them.  metrics_page.c writes the
 * exposition; check_metrics.c answers the path. */
#ifndef MGW_PROXY_METRICS_H
#define MGW_PROXY_METRICS_H

#include <stddef.h>

#include "proxy/metrics-t.h"
#include "proxy/route-t.h"
#include "proxy/stateful-t.h"
#include "proxy/txn-t.h"
#include "proxy/upstream-t.h"

/* The MCP methods counted under their own name (the 2025-11-25 and
 * 2026-07-28 schemas' methods, sorted); every other method counts as
 * "other", a request without a method (GET, DELETE, a JSON-RPC response
 * or an unreadable body) as "none". */
extern const char *const mgw_metrics_methods[];
extern const size_t mgw_metrics_n_methods;
#define MGW_METRICS_METHOD_OTHER mgw_metrics_n_methods
#define MGW_METRICS_METHOD_NONE (mgw_metrics_n_methods + 1)

/* The label value of method index i (a name, "other" or "none"). */
const char *mgw_metrics_method_label(size_t i);
/* The method index of m (NULL: none). */
size_t mgw_metrics_method_index(const char *m);

/* Blocks for n_workers, n_routes routes and n_groups upstream groups;
 * tool_cap > 0 counts tools/call under that many tool names.  NULL on no
 * memory. */
/* Route and group slots mgw_serve allocates beyond the first
 * configuration's, for what later reloads add. */
#define MGW_METRICS_RELOAD_ROOM 16

struct mgw_metrics *mgw_metrics_new(unsigned n_workers, size_t n_routes,
                                    size_t n_groups, size_t tool_cap);
void mgw_metrics_free(struct mgw_metrics *m);     /* NULL allowed */

/* A transaction ended with status (0: no answer; the client left): the
 * request counters and the duration histogram.  Called where the access
 * line is written; t->pl->mx NULL (no metrics) does nothing. */
void mgw_metrics_txn_done(const struct mgw_txn *t, int status);

/* A streamed text/event-stream response began / ended on this worker. */
void mgw_metrics_sse_open(struct mgw_metrics_worker *w);
void mgw_metrics_sse_close(struct mgw_metrics_worker *w);

/* One outcome of the auth check on this worker (w NULL: nothing). */
void mgw_metrics_auth(struct mgw_metrics_worker *w, enum mgw_metrics_auth o);

/* A configuration reload ended (ok: applied).  Process-wide; any thread. */
void mgw_metrics_reload_done(int ok);
/* Reloads that succeeded / failed, and the wall-clock second of the last
 * one (0: none yet). */
void mgw_metrics_reloads(uint64_t *ok, uint64_t *failed, double *last);

/* The exposition text (util/prom.h) of m and of what rt, ups and sh
 * (NULL: stateless) count: *body (malloc'd) and *len.  Reads only
 * atomics and thread-safe store statistics (and the auth keyring's,
 * keys not NULL): any worker may call it.
 * Returns 0 or MGW_ENOMEM. */
struct mgw_keyring;
int mgw_metrics_page(const struct mgw_metrics *m, const struct mgw_routes *rt,
                     const struct mgw_upstreams *ups, struct mgw_sf_shared *sh,
                     const struct mgw_keyring *keys, char **body, size_t *len);

/* The slot of a tool name: 0 .. tl->size - 1, or tl->size when it
 * counts as "other" (no slot left, or a name over 128 bytes). */
size_t mgw_metrics_tool_slot(struct mgw_metrics_tools *tl, const char *name);

#endif
