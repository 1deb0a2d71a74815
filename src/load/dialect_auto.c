/* dialect_auto.c - era detection for the "auto" dialect, as the
 * 2026-07-28 backward-compatibility rules describe it for a dual-era
 * client: try a modern request first (server/discover, which every modern
 * server implements); a result, or a recognized modern JSON-RPC error
 * (HeaderMismatch, MissingRequiredClientCapability,
 * UnsupportedProtocolVersion), means a modern server; anything else that
 * comes back - a 400 without such a body, a legacy "no session" refusal,
 * a method-not-found error - means a legacy server, and the agent falls
 * back to initialize.  No answer at all decides nothing: the call fails
 * and the next one probes again. */
#include "autoconf.h"

#include <string.h>

#include "load/agent_impl.h"
#include "mcp/jsonrpc.h"

struct ld_msg *ld_auto_probe(struct mgw_load_agent *a)
{
	return ld_modern_request(a, "server/discover", NULL, json_object());
}

/* 1 when a -32022 lists a modern version or no list at all: a server
 * that names only legacy versions asks for the legacy handshake. */
static int unsupported_is_modern(const json_t *err)
{
	json_t *sup = json_object_get(json_object_get(err, "data"), "supported");
	size_t i;
	json_t *v;
	int legacy = 0;

	if (!json_is_array(sup) || json_array_size(sup) == 0)
		return 1;
	json_array_foreach(sup, i, v) {
		const char *s = json_string_value(v);

		if (!s)
			continue;
		if (mgw_mcp_version_in(s, mgw_mcp_modern_versions))
			return 1;
		if (mgw_mcp_version_in(s, mgw_mcp_legacy_versions))
			legacy = 1;
	}
	return !legacy;
}

enum mgw_era ld_auto_verdict(const struct ld_answer *ans)
{
	json_t *err;
	json_int_t code;

	switch (ans->kind) {
	case LD_ANS_FAILED:
	case LD_ANS_TIMEOUT:
		return MGW_ERA_UNKNOWN;
	case LD_ANS_ACCEPTED:
		return MGW_ERA_IS_LEGACY;
	case LD_ANS_RESPONSE:
	case LD_ANS_STATUS:
		break;
	}
	if (ans->kind == LD_ANS_RESPONSE &&
	    json_is_object(json_object_get(ans->resp, "result")))
		return MGW_ERA_IS_MODERN;
	/* A server (or a gateway in front of it) failing, shedding load or
	 * asking for credentials says nothing about its era: the call fails
	 * with its status and the next one asks again.  Deciding legacy here
	 * would make a brief outage permanent for this user. */
	if (ans->kind == LD_ANS_STATUS &&
	    (ans->status >= 500 || ans->status == 401 || ans->status == 403 ||
	     ans->status == 408 || ans->status == 429))
		return MGW_ERA_UNKNOWN;
	err = json_object_get(ans->resp, "error");
	if (!json_is_object(err) || !json_is_integer(json_object_get(err, "code")))
		return MGW_ERA_IS_LEGACY;
	code = json_integer_value(json_object_get(err, "code"));
	if (code == MGW_MCP_HEADER_MISMATCH ||
	    code == MGW_MCP_MISSING_CLIENT_CAPABILITY)
		return MGW_ERA_IS_MODERN;
	if (code == MGW_MCP_UNSUPPORTED_VERSION)
		return unsupported_is_modern(err) ? MGW_ERA_IS_MODERN
		                                  : MGW_ERA_IS_LEGACY;
	return MGW_ERA_IS_LEGACY;
}
