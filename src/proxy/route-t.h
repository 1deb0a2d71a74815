/* route-t.h - compiled routes of `mcpgw serve` (types only; see route.h). */
#ifndef MGW_PROXY_ROUTE_T_H
#define MGW_PROXY_ROUTE_T_H

#include <stddef.h>

#include "proxy/conf_serve-t.h"
#include "http/client-t.h"
#include "proxy/upstream-t.h"

/* One route, compiled from a struct mgw_route_conf.  Immutable once built;
 * shared read-only by every worker. */
struct mgw_route {
	const struct mgw_route_conf *conf;  /* borrowed from the snapshot */
	size_t index;                       /* position in the table (logs) */
	struct mgw_upstream_group *group;   /* conf->upstream resolved */
	/* match.path: NULL or "*" = any path; "/a*" = prefix "/a"; else exact */
	const char *path;                   /* points into conf, or NULL */
	size_t path_len;                    /* bytes to compare */
	int path_prefix;                    /* 1: compare path_len bytes only */
	const char *mcp_method;             /* conf->match_mcp_method or NULL */
	const char *mcp_name;               /* conf->match_mcp_name or NULL */
	size_t mcp_name_len;
	struct mgw_client_timeouts tmo;     /* conf timeouts for the client */
};

/* Every route of a snapshot, in configuration order. */
struct mgw_routes {
	struct mgw_route *v;
	size_t n;
	int need_name;                      /* some route matches on Mcp-Name */
};

#endif
