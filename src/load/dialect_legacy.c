/* dialect_legacy.c - the legacy (2025-03-26 .. 2025-11-25) dialect of the
 * load agent: the initialize handshake, requests on the session
 * (Mcp-Session-Id, MCP-Protocol-Version), DELETE at the end, and the rule
 * that tells a lost session from other refusals. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "http/headers.h"
#include "load/agent_impl.h"

#define SESSION_HEADER "Mcp-Session-Id"

struct ld_msg *ld_legacy_initialize(struct mgw_load_agent *a)
{
	json_t *params = json_pack("{s:s, s:{}, s:O}", "protocolVersion",
	                           a->legacy_version, "capabilities",
	                           "clientInfo", a->client_info);

	if (!params)
		return NULL;
	return ld_msg_build(a, "initialize", params, 0);
}

/* Adds the session fields every message after initialize carries. */
static int session_fields(struct mgw_load_agent *a, struct ld_msg *m)
{
	if (a->session_id) {
		if (mgw_headers_adds(&m->hdr, SESSION_HEADER, a->session_id) != 0)
			return MGW_ENOMEM;
		m->with_session = 1;
	}
	if (a->negotiated[0] &&
	    mgw_headers_adds(&m->hdr, "MCP-Protocol-Version", a->negotiated) != 0)
		return MGW_ENOMEM;
	return 0;
}

struct ld_msg *ld_legacy_initialized(struct mgw_load_agent *a)
{
	struct ld_msg *m = ld_msg_build(a, "notifications/initialized", NULL, 1);

	if (m && session_fields(a, m) != 0) {
		ld_msg_free(m);
		return NULL;
	}
	return m;
}

struct ld_msg *ld_legacy_request(struct mgw_load_agent *a, const char *method,
                                 json_t *params)
{
	struct ld_msg *m = ld_msg_build(a, method, params, 0);

	if (m && session_fields(a, m) != 0) {
		ld_msg_free(m);
		return NULL;
	}
	return m;
}

struct ld_msg *ld_legacy_delete(struct mgw_load_agent *a)
{
	struct ld_msg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	mgw_headers_init(&m->hdr);
	m->http_method = "DELETE";
	if (session_fields(a, m) != 0) {
		ld_msg_free(m);
		return NULL;
	}
	return m;
}

int ld_legacy_take_init(struct mgw_load_agent *a, const struct ld_answer *ans,
                        char *detail, size_t dlen)
{
	json_t *result = json_object_get(ans->resp, "result");
	const char *v = json_string_value(json_object_get(result, "protocolVersion"));

	if (!v || !v[0] || strlen(v) >= sizeof(a->negotiated)) {
		snprintf(detail, dlen, "initialize result without a protocolVersion");
		return MGW_EPROTO;
	}
	/* The server may answer with an older version it prefers; the
	 * client goes on with it when it speaks it too. */
	if (!mgw_mcp_version_in(v, mgw_mcp_legacy_versions)) {
		snprintf(detail, dlen, "initialize answered with protocol version "
		         "%.40s, which this client does not speak", v);
		return MGW_EPROTO;
	}
	free(a->session_id);
	a->session_id = NULL;
	if (ans->session_id && ans->session_id[0]) {
		a->session_id = strdup(ans->session_id);
		if (!a->session_id) {
			snprintf(detail, dlen, "no memory");
			return MGW_ENOMEM;
		}
	}
	snprintf(a->negotiated, sizeof(a->negotiated), "%s", v);
	return 0;
}

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	if (n == 0)
		return 1;
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return 0;
}

int mgw_load_session_lost(int status, const json_t *err, const char *match)
{
	const char *msg;

	if (status == 404)
		return 1;
	if (status != 400)
		return 0;
	if (!json_is_object(err))
		return 1;
	msg = json_string_value(json_object_get(err, "message"));
	return contains_ci(msg ? msg : "", match ? match : "session");
}
