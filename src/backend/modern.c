/* modern.c - the 2026-07-28 protocol: no handshake and no session; every
 * request carries its version and capabilities in params._meta, mirrored
 * into headers that must match the body (SEP-2243).  Also server/discover
 * and the long-lived subscriptions/listen stream. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/tasks.h"
#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "mcp/era.h"
#include "mcp/sep2243.h"

/* Caching hints (caching spec): the tool set of this server is fixed, so
 * any client or shared gateway may keep these results for a while. */
#define CACHE_TTL_MS 300000

#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SUB "io.modelcontextprotocol/subscriptionId"

static json_t *supported_versions(void)
{
	json_t *a = json_array();

	for (size_t i = 0; mgw_mcp_modern_versions[i]; i++)
		json_array_append_new(a, json_string(mgw_mcp_modern_versions[i]));
	return a;
}

/* UnsupportedProtocolVersionError (versioning spec): the data lists what
 * this server speaks so the client can retry. */
static json_t *unsupported_data(const char *requested)
{
	json_t *d = json_pack("{so}", "supported", supported_versions());

	json_object_set_new(d, "requested",
	                    requested ? json_string(requested) : json_null());
	return d;
}

static json_t *capabilities(void)
{
	return json_pack("{s{sb}s{}s{s{}}}", "tools", "listChanged", 1, "logging",
	                 "extensions", "io.modelcontextprotocol/tasks");
}

/* SEP-2663's methods (tasks/result is gone: Method not found). */
static int is_task_method(const char *m)
{
	return !strcmp(m, "tasks/get") || !strcmp(m, "tasks/update") ||
	       !strcmp(m, "tasks/cancel");
}

/* ---- subscriptions/listen -------------------------------------------- */

static void listen_open(struct mgw_backend *be, struct mgw_http_exchange *x,
                        struct mgw_jrpc_msg *msg)
{
	json_t *filter = json_object_get(mgw_jrpc_params(msg), "notifications");
	json_t *granted = json_object(), *ack;
	struct mgw_be_stream *st;
	char *body;
	size_t len;
	int tools = json_is_true(json_object_get(filter, "toolsListChanged"));

	st = mgw_be_stream_open(be, x, MGW_BE_STREAM_LISTEN, NULL, NULL);
	if (!st) {
		json_decref(granted);
		return;
	}
	st->sub_id = json_incref(mgw_jrpc_id(msg));
	st->tools_list_changed = tools;
	/* Only the types this server can emit are acknowledged; it has no
	 * prompts or resources, so those filters are left out. */
	if (tools)
		json_object_set_new(granted, "toolsListChanged", json_true());
	ack = json_pack("{s{sO}so}", "_meta", META_SUB, mgw_jrpc_id(msg), "notifications",
	                granted);
	body = mgw_jrpc_notification_body("notifications/subscriptions/acknowledged",
	                                  ack, &len);
	if (body) {
		mgw_be_stream_send(st, body, len);
		free(body);
	}
}

int mgw_be_listen_tools_changed(struct mgw_backend *be)
{
	int n = 0;

	for (struct mgw_be_stream *st = be->streams; st; st = st->next) {
		json_t *p;
		char *body;
		size_t len;

		if (st->kind != MGW_BE_STREAM_LISTEN || !st->tools_list_changed)
			continue;
		p = json_pack("{s{sO}}", "_meta", META_SUB, st->sub_id);
		body = mgw_jrpc_notification_body("notifications/tools/list_changed",
		                                  p, &len);
		if (body && mgw_be_stream_send(st, body, len) == 0)
			n++;
		free(body);
	}
	return n;
}

/* ---- POST ------------------------------------------------------------- */

void mgw_be_modern_post(struct mgw_backend *be, struct mgw_http_exchange *x,
                        struct mgw_jrpc_msg *msg)
{
	struct mgw_log_ctx ctx = mgw_be_ctx(x, NULL);
	struct mgw_sep2243_verdict v;
	const struct mgw_sep2243_param *hp = NULL;
	size_t nhp = 0;
	struct mgw_be_call *c;
	const char *method = msg->method;
	json_t *caps;

	if (msg->kind == MGW_JRPC_NOTIFICATION) {
		/* No client notifications are defined over HTTP in this
		 * revision; accepting them is what the transport asks. */
		mgw_jrpc_msg_deinit(msg);
		mgw_be_reply_empty(x, 202);
		return;
	}
	if (msg->kind == MGW_JRPC_RESPONSE) {
		mgw_info(&ctx, "JSON-RPC response POSTed in the modern era (400)");
		mgw_jrpc_msg_deinit(msg);
		mgw_be_reply_error(x, 400, NULL, MGW_JRPC_INVALID_REQUEST,
		                   "Invalid Request: clients do not send responses in "
		                   "protocol " MGW_MCP_MODERN_VERSION, NULL, NULL);
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		/* Only reached by a modern-only server: name the versions it does
		 * speak, the one diagnostic a legacy client can show (versioning
		 * spec, backward compatibility). */
		const char *want = json_string_value(json_object_get(mgw_jrpc_params(msg),
		                                                     "protocolVersion"));
		be->stats.unsupported_versions++;
		mgw_info(&ctx, "initialize sent to a modern-only server (400)");
		mgw_be_reply_error(x, 400, mgw_jrpc_id(msg), MGW_MCP_UNSUPPORTED_VERSION,
		                   "Unsupported protocol version: this server speaks "
		                   MGW_MCP_MODERN_VERSION " without initialize",
		                   unsupported_data(want), NULL);
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	if (strcmp(method, "tools/call") == 0 && msg->name)
		hp = mgw_be_tool_header_params(msg->name, &nhp);
	if (mgw_sep2243_validate(mgw_http_req_headers(x), msg, NULL, hp, nhp, &v) != 0) {
		mgw_jrpc_msg_deinit(msg);
		mgw_be_reply_error(x, 500, NULL, MGW_JRPC_INTERNAL_ERROR,
		                   "Out of memory", NULL, NULL);
		return;
	}
	if (!v.ok) {
		json_t *data = NULL;
		if (v.code == MGW_MCP_UNSUPPORTED_VERSION) {
			const char *req = mgw_http_req_header(x, "MCP-Protocol-Version");
			be->stats.unsupported_versions++;
			data = unsupported_data(req ? req : msg->meta_protocol_version);
		} else {
			be->stats.header_mismatches++;
		}
		mgw_info(&ctx, "%s rejected (%d %d): %s", method,
		         v.status ? v.status : 400, v.code, v.message);
		mgw_be_reply_error(x, v.status ? v.status : 400, mgw_jrpc_id(msg), v.code,
		                   v.message, data, NULL);
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	caps = mgw_jrpc_meta(msg) ? json_object_get(mgw_jrpc_meta(msg), META_CAPS) : NULL;
	if (!json_is_object(caps)) {
		/* A required per-request field is missing: Invalid params, 400
		 * (basic spec, _meta). */
		mgw_info(&ctx, "%s without _meta " META_CAPS " (400)", method);
		mgw_be_reply_error(x, 400, mgw_jrpc_id(msg), MGW_JRPC_INVALID_PARAMS,
		                   "Invalid params: _meta " META_CAPS " is required",
		                   NULL, NULL);
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	if (strcmp(method, "subscriptions/listen") == 0) {
		listen_open(be, x, msg);
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	if (strcmp(method, "server/discover") != 0 &&
	    strcmp(method, "tools/list") != 0 && strcmp(method, "tools/call") != 0 &&
	    !is_task_method(method)) {
		mgw_info(&ctx, "unknown method '%.64s' (404)", method);
		mgw_be_reply_error(x, 404, mgw_jrpc_id(msg), MGW_JRPC_METHOD_NOT_FOUND,
		                   "Method not found", NULL, NULL);
		mgw_jrpc_msg_deinit(msg);
		return;
	}
	c = mgw_be_call_new(be, x, msg, MGW_BE_MODERN);
	if (!c)
		return;
	method = c->msg.method;
	mgw_be_call_start(c, 0);
	if (strcmp(method, "server/discover") == 0) {
		char instructions[300];
		snprintf(instructions, sizeof(instructions),
		         "Reference MCP server of mcpgw, replica %s; counter handles "
		         "use the %s design.", be->conf.id ? be->conf.id : "",
		         mgw_be_state_name(be->conf.state));
		mgw_be_call_result(c, json_pack("{sososssIss}", "supportedVersions",
		                                supported_versions(), "capabilities",
		                                capabilities(), "instructions",
		                                instructions, "ttlMs",
		                                (json_int_t)CACHE_TTL_MS, "cacheScope",
		                                "public"));
	} else if (strcmp(method, "tools/list") == 0) {
		mgw_be_call_result(c, json_pack("{sosIss}", "tools",
		                                mgw_be_tools_list(be, MGW_BE_MODERN),
		                                "ttlMs", (json_int_t)CACHE_TTL_MS,
		                                "cacheScope", "public"));
	} else if (is_task_method(method)) {
		mgw_be_tasks_method(c);
	} else {
		mgw_be_tools_call(c, NULL);
	}
	mgw_be_call_unref(c);
}
