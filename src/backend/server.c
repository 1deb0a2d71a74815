/* server.c - the HTTP face of the reference server: routes each request by
 * path and method, applies the transport checks common to both eras
 * (Origin, Content-Type, Accept, JSON-RPC shape), and hands the message to
 * the legacy or modern handler according to --era and, in dual mode, the
 * request itself (versioning spec, backward compatibility). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/backend.h"
#include "backend/checks.h"
#include "backend/record.h"
#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "mcp/era.h"

struct mgw_log_ctx mgw_be_ctx(struct mgw_http_exchange *x, const char *session)
{
	struct mgw_log_ctx ctx = {0, -1, session};

	if (x) {
		ctx.conn_id = mgw_http_conn_id(x);
		ctx.stream_id = mgw_http_stream_id(x);
	}
	return ctx;
}

json_t *mgw_be_server_info(const struct mgw_backend *be)
{
	(void)be;
	return json_pack("{ssssss}", "name", MGW_BE_SERVER_NAME, "version",
	                 PACKAGE_VERSION, "title", "mcpgw reference MCP server");
}

void mgw_be_respond_json(struct mgw_http_exchange *x, int status,
                         const struct mgw_headers *hdrs, const char *json,
                         size_t len)
{
	char *buf = malloc(len + 1);

	if (!buf) {
		mgw_http_respond(x, 500, NULL, NULL, NULL, 0);
		return;
	}
	memcpy(buf, json, len);
	buf[len] = '\n';
	mgw_http_respond(x, status, hdrs, "application/json", buf, len + 1);
	free(buf);
}

void mgw_be_reply_error(struct mgw_http_exchange *x, int status, json_t *id,
                        int code, const char *message, json_t *data,
                        const struct mgw_headers *hdrs)
{
	size_t len = 0;
	char *body = mgw_jrpc_error_body(id, code, message, data, &len);

	if (!body) {
		mgw_http_respond(x, status, hdrs, NULL, NULL, 0);
		return;
	}
	mgw_be_respond_json(x, status, hdrs, body, len);
	free(body);
}

void mgw_be_reply_empty(struct mgw_http_exchange *x, int status)
{
	mgw_http_respond(x, status, NULL, NULL, NULL, 0);
}

static void reply_text(struct mgw_http_exchange *x, int status,
                       const struct mgw_headers *hdrs, const char *text)
{
	mgw_http_respond(x, status, hdrs, "text/plain; charset=utf-8", text,
	                 strlen(text));
}

static const char *or_none(const char *s) { return s ? s : "(none)"; }

/* ---- header checks (parsing in checks.c) --------------------------------- */

int mgw_be_accepts(struct mgw_http_exchange *x, const char *type)
{
	const struct mgw_headers *h = mgw_http_req_headers(x);

	/* Accept may arrive as several fields; any admitting one counts. */
	for (size_t i = 0; i < h->n; i++)
		if (strcasecmp(h->v[i].name, "accept") == 0 &&
		    mgw_be_accept_admits(h->v[i].value, type))
			return 1;
	return 0;
}

static int content_type_is_json(struct mgw_http_exchange *x)
{
	const char *ct = mgw_http_req_header(x, "content-type");

	return ct && mgw_be_media_type_is(ct, "application/json");
}

/* ---- the MCP endpoint ----------------------------------------------------- */

static const char *allow_methods(const struct mgw_backend *be)
{
	return be->conf.era == MGW_ERA_MODERN ? "POST" : "GET, POST, DELETE";
}

static void reply_405(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	struct mgw_headers h;

	mgw_headers_init(&h);
	mgw_headers_adds(&h, "Allow", allow_methods(be));
	mgw_be_reply_error(x, 405, NULL, MGW_JRPC_INVALID_REQUEST,
	                   "Method not allowed", NULL, &h);
	mgw_headers_deinit(&h);
}

/* In dual mode GET and DELETE belong to the legacy era when the request
 * names a legacy session or version; otherwise they get the modern 405. */
static int bodyless_is_legacy(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	if (be->conf.era == MGW_ERA_LEGACY)
		return 1;
	if (be->conf.era == MGW_ERA_MODERN)
		return 0;
	return mgw_mcp_detect_era(mgw_http_req_headers(x), NULL) == MGW_ERA_IS_LEGACY;
}

static void mcp_post(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	struct mgw_log_ctx ctx = mgw_be_ctx(x, NULL);
	struct mgw_jrpc_msg msg;
	const unsigned char *body;
	size_t len;
	enum mgw_era era;

	if (!content_type_is_json(x)) {
		mgw_info(&ctx, "POST with Content-Type '%s' (415)",
		         or_none(mgw_http_req_header(x, "content-type")));
		mgw_be_reply_error(x, 415, NULL, MGW_JRPC_INVALID_REQUEST,
		                   "Unsupported Media Type: Content-Type must be application/json",
		                   NULL, NULL);
		return;
	}
	if (!mgw_be_accepts(x, "application/json") ||
	    !mgw_be_accepts(x, "text/event-stream")) {
		mgw_info(&ctx, "POST with Accept '%s' (406)",
		         or_none(mgw_http_req_header(x, "accept")));
		mgw_be_reply_error(x, 406, NULL, MGW_JRPC_INVALID_REQUEST,
		                   "Not Acceptable: Accept must list application/json and text/event-stream",
		                   NULL, NULL);
		return;
	}
	body = mgw_http_req_body(x, &len);
	if (mgw_jrpc_classify(body, len, 0, &msg) != 0) {
		mgw_be_reply_error(x, 500, NULL, MGW_JRPC_INTERNAL_ERROR,
		                   "Out of memory", NULL, NULL);
		return;
	}
	if (msg.kind == MGW_JRPC_INVALID || msg.kind == MGW_JRPC_BATCH) {
		int code = msg.kind == MGW_JRPC_BATCH ? MGW_JRPC_INVALID_REQUEST
		                                      : msg.error_code;
		const char *why = msg.kind == MGW_JRPC_BATCH
		                          ? "Invalid Request: batches are not supported"
		                          : msg.error_msg;
		char text[200];

		if (code == 0)
			code = MGW_JRPC_INVALID_REQUEST;
		if (!why || !why[0])
			why = code == MGW_JRPC_PARSE_ERROR ? "Parse error" : "Invalid Request";
		snprintf(text, sizeof(text), "%s", why);
		mgw_info(&ctx, "rejected body (%d): %s", code, text);
		/* the request's id when it could be read (JSON-RPC 2.0 5.1) */
		mgw_be_reply_error(x, 400, mgw_jrpc_id(&msg), code, text, NULL, NULL);
		mgw_jrpc_msg_deinit(&msg);
		return;
	}
	be->stats.requests++;
	mgw_be_stats_method(&be->stats, msg.method);

	switch (be->conf.era) {
	case MGW_ERA_LEGACY:
		mgw_be_legacy_post(be, x, &msg);
		return;
	case MGW_ERA_MODERN:
		mgw_be_modern_post(be, x, &msg);
		return;
	case MGW_ERA_DUAL:
		break;
	}
	era = mgw_mcp_detect_era(mgw_http_req_headers(x), &msg);
	/* Undecided requests go to the modern side, whose 400 carries a
	 * recognized modern error a dual-era client can act on; undecided
	 * notifications and responses can only mean a legacy session. */
	if (era == MGW_ERA_IS_LEGACY ||
	    (era == MGW_ERA_UNKNOWN && msg.kind != MGW_JRPC_REQUEST))
		mgw_be_legacy_post(be, x, &msg);
	else
		mgw_be_modern_post(be, x, &msg);
}

static void mcp_endpoint(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	const char *method = mgw_http_method(x);
	const char *origin = mgw_http_req_header(x, "origin");

	if (origin && !mgw_be_origin_allowed(origin)) {
		struct mgw_log_ctx ctx = mgw_be_ctx(x, NULL);
		mgw_info(&ctx, "rejected Origin '%s' (403)", origin);
		mgw_be_reply_error(x, 403, NULL, MGW_JRPC_INVALID_REQUEST,
		                   "Forbidden: Origin not allowed", NULL, NULL);
		return;
	}
	if (strcmp(method, "POST") == 0) {
		mcp_post(be, x);
	} else if (strcmp(method, "GET") == 0) {
		if (bodyless_is_legacy(be, x))
			mgw_be_legacy_get(be, x);
		else
			reply_405(be, x);
	} else if (strcmp(method, "DELETE") == 0) {
		if (bodyless_is_legacy(be, x))
			mgw_be_legacy_delete(be, x);
		else
			reply_405(be, x);
	} else {
		reply_405(be, x);
	}
}

/* ---- auxiliary endpoints ---------------------------------------------------- */

static int is_get(struct mgw_http_exchange *x)
{
	const char *m = mgw_http_method(x);

	return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

static void get_only(struct mgw_http_exchange *x)
{
	struct mgw_headers h;

	mgw_headers_init(&h);
	mgw_headers_adds(&h, "Allow", "GET, HEAD");
	reply_text(x, 405, &h, "method not allowed\n");
	mgw_headers_deinit(&h);
}

/* GET /debug/requests shows the recorder, DELETE empties it.  Without
 * --record the path does not exist (404 below), so nothing about a
 * production-like replica changes. */
static void debug_requests(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	const char *m = mgw_http_method(x);
	json_t *doc;
	char *text;

	if (strcmp(m, "DELETE") == 0) {
		mgw_be_record_clear(be->record);
		mgw_be_reply_empty(x, 204);
		return;
	}
	if (!is_get(x)) {
		struct mgw_headers h;

		mgw_headers_init(&h);
		mgw_headers_adds(&h, "Allow", "GET, HEAD, DELETE");
		reply_text(x, 405, &h, "method not allowed\n");
		mgw_headers_deinit(&h);
		return;
	}
	doc = mgw_be_record_json(be->record);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text) {
		mgw_be_reply_empty(x, 500);
		return;
	}
	mgw_be_respond_json(x, 200, NULL, text, strlen(text));
	free(text);
}

/* Records x before anything answers it (the exchange may be gone after
 * dispatch).  The recorder's own endpoint is not recorded: reading it
 * must not change it. */
static void record(struct mgw_backend *be, struct mgw_http_exchange *x)
{
	struct mgw_be_record_req r;

	r.method = mgw_http_method(x);
	r.target = mgw_http_target(x);
	r.http_version = mgw_http_version(x);
	r.tls = mgw_http_is_tls(x);
	r.peer = mgw_http_peer(x);
	r.headers = mgw_http_req_headers(x);
	r.body = mgw_http_req_body(x, &r.body_len);
	if (mgw_be_record_add(be->record, &r) != 0) {
		struct mgw_log_ctx ctx = mgw_be_ctx(x, NULL);
		mgw_warn(&ctx, "request not recorded: out of memory");
	}
}

void mgw_be_on_request(struct mgw_http_exchange *x, void *arg)
{
	struct mgw_backend *be = arg;
	const char *path = mgw_http_path(x);

	be->stats.http_requests++;
	if (be->record) {
		if (strcmp(path, "/debug/requests") == 0) {
			debug_requests(be, x);
			return;
		}
		record(be, x);
	}
	if (strcmp(path, be->conf.path) == 0) {
		mcp_endpoint(be, x);
	} else if (strcmp(path, "/healthz") == 0) {
		if (is_get(x))
			reply_text(x, 200, NULL, "ok\n");
		else
			get_only(x);
	} else if (strcmp(path, "/stats") == 0) {
		json_t *st;
		char *text;

		if (!is_get(x)) {
			get_only(x);
			return;
		}
		st = mgw_be_stats_json(be);
		text = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(st);
		if (!text) {
			mgw_be_reply_empty(x, 500);
			return;
		}
		mgw_be_respond_json(x, 200, NULL, text, strlen(text));
		free(text);
	} else if (strcmp(path, "/whoami") == 0) {
		char line[300];

		if (!is_get(x)) {
			get_only(x);
			return;
		}
		snprintf(line, sizeof(line), "%s\n", be->conf.id ? be->conf.id : "");
		reply_text(x, 200, NULL, line);
	} else {
		reply_text(x, 404, NULL, "not found\n");
	}
}
