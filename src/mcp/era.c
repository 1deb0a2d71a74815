/* era.c - MCP protocol version lists and per-request era detection.
 *
 * Spec (2026-07-28 basic/versioning, "Backward Compatibility"): a dual-era
 * server selects its behaviour from how the client opens.  A request
 * carrying modern per-request _meta is served statelessly; an initialize
 * request selects legacy semantics for the session.  Only modern clients put
 * io.modelcontextprotocol/protocolVersion into _meta, so its presence is
 * the modern cue even when it names a version nobody speaks: such a request
 * must reach the modern path to be answered UnsupportedProtocolVersion
 * (-32022) with the supported list, which is how a client negotiates. */
#include "autoconf.h"

#include <string.h>

#include "http/headers.h"
#include "mcp/era.h"

const char *const mgw_mcp_legacy_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", NULL,
};

const char *const mgw_mcp_modern_versions[] = {
	MGW_MCP_MODERN_VERSION, NULL,
};

int mgw_mcp_version_in(const char *v, const char *const *list)
{
	if (!v || !list)
		return 0;
	for (; *list; list++)
		if (!strcmp(v, *list))
			return 1;
	return 0;
}

/* The MCP-Protocol-Version header without surrounding blanks, copied into
 * buf (versions are short; a longer value cannot name any version). */
static const char *header_version(const struct mgw_headers *h, char *buf,
                                  size_t size)
{
	const char *v = h ? mgw_headers_get(h, "MCP-Protocol-Version") : NULL;
	size_t n;

	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n >= size)
		n = 0; /* too long to be a version: compare as empty */
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

enum mgw_era mgw_mcp_detect_era(const struct mgw_headers *h,
                                const struct mgw_jrpc_msg *m)
{
	char hbuf[64];
	const char *hv = header_version(h, hbuf, sizeof(hbuf));
	const char *mv = m ? m->meta_protocol_version : NULL;
	int is_request = m && (m->kind == MGW_JRPC_REQUEST ||
	                       m->kind == MGW_JRPC_NOTIFICATION);

	/* initialize exists only in the legacy era: it opens a session. */
	if (is_request && m->method && !strcmp(m->method, "initialize"))
		return MGW_ERA_IS_LEGACY;
	/* A modern version named anywhere wins over a stray session header:
	 * modern servers ignore Mcp-Session-Id, and a header/_meta mismatch
	 * is for the modern validator to reject with -32020. */
	if (mgw_mcp_version_in(mv, mgw_mcp_modern_versions) ||
	    mgw_mcp_version_in(hv, mgw_mcp_modern_versions))
		return MGW_ERA_IS_MODERN;
	if ((h && mgw_headers_get(h, "Mcp-Session-Id")) ||
	    mgw_mcp_version_in(hv, mgw_mcp_legacy_versions))
		return MGW_ERA_IS_LEGACY;
	/* Per-request _meta naming an unknown version: modern, so that the
	 * answer is -32022 listing what we speak. */
	if (mv)
		return MGW_ERA_IS_MODERN;
	return MGW_ERA_UNKNOWN;
}
