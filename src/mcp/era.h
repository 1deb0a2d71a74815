/* era.h - MCP protocol versions and era detection. */
#ifndef MGW_MCP_ERA_H
#define MGW_MCP_ERA_H

#include "http/headers-t.h"
#include "mcp/jsonrpc.h"

#define MGW_MCP_MODERN_VERSION "2026-07-28"
#define MGW_MCP_LEGACY_LATEST "2025-11-25"

enum mgw_era { MGW_ERA_UNKNOWN = 0, MGW_ERA_IS_LEGACY, MGW_ERA_IS_MODERN };

/* Legacy versions this project speaks, newest first, NULL-terminated:
 * 2025-11-25, 2025-06-18, 2025-03-26. */
extern const char *const mgw_mcp_legacy_versions[];
/* Modern versions, newest first, NULL-terminated: 2026-07-28. */
extern const char *const mgw_mcp_modern_versions[];

/* 1 if v is in the NULL-terminated list. */
int mgw_mcp_version_in(const char *v, const char *const *list);

/* Decides the era of one request (spec: versioning, backward
 * compatibility): modern when MCP-Protocol-Version or _meta protocolVersion
 * names a modern version; legacy when the method is initialize, an
 * Mcp-Session-Id is present, or the header names a legacy version;
 * unknown otherwise.  m may be NULL (GET/DELETE). */
enum mgw_era mgw_mcp_detect_era(const struct mgw_headers *h,
                                const struct mgw_jrpc_msg *m);

#endif
