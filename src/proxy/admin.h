/* admin.h - the gateway's own statistics page, GET /mcpgw/stats: a JSON
 * object with the mode, every upstream server's state (up, down, ejected,
 * draining) and counters, and in stateful or auto mode the session and
 * re-pin counters.  doc/serve.md ("Statistics") lists the members; the
 * churn bench reads them. */
#ifndef MGW_PROXY_ADMIN_H
#define MGW_PROXY_ADMIN_H

#include <stddef.h>

#include "proxy/conf_serve-t.h"
#include "proxy/mrtr_set.h"
#include "proxy/stateful-t.h"
#include "proxy/upstream-t.h"

/* Builds the page: *body (malloc'd, compact JSON with a final newline)
 * and *len.  sh may be NULL (stateless mode); mrtr (the requestState
 * guard's set, "mrtr_guard") may be NULL.  Reads only atomics and
 * thread-safe store statistics, so any worker may call it.  Returns 0 or
 * MGW_ENOMEM. */
int mgw_admin_stats_body(const struct mgw_upstreams *ups,
                         struct mgw_sf_shared *sh, struct mgw_mrtr_set *mrtr,
                         enum mgw_mode_conf mode, char **body, size_t *len);

#endif
