/* errors.c - the gateway's own error answers: the table of codes (see
 * doc/errors.md) and the JSON-RPC / plain-text bodies built from it. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "proxy/errors.h"

static const struct mgw_proxy_error_info table[MGW_PERR_N] = {
	[MGW_PERR_NO_UPSTREAM] = {-32001, 503, "no_upstream",
	                          "no healthy upstream server"},
	[MGW_PERR_CONNECT] = {-32002, 502, "upstream_connect",
	                      "could not connect to an upstream server"},
	[MGW_PERR_TIMEOUT] = {-32003, 504, "upstream_timeout",
	                      "upstream server timed out"},
	[MGW_PERR_TOO_LARGE] = {-32004, 413, "too_large",
	                        "request too large"},
	[MGW_PERR_UPSTREAM] = {-32005, 502, "upstream_failed",
	                       "upstream server failed before answering"},
	[MGW_PERR_NO_ROUTE] = {-32006, 404, "no_route",
	                       "no route for this request"},
	[MGW_PERR_METHOD] = {-32007, 405, "method_not_allowed",
	                     "method not allowed on the MCP endpoint"},
	[MGW_PERR_OVERLOADED] = {-32008, 503, "overloaded",
	                         "gateway overloaded"},
	[MGW_PERR_INTERNAL] = {-32009, 500, "internal",
	                       "internal gateway error"},
	[MGW_PERR_NOT_REPLAYED] = {-32010, 502, "not_replayed",
	                           "upstream lost mid-request; not replayed"},
	[MGW_PERR_SESSION_NOT_FOUND] = {-32011, 404, "session_not_found",
	                                "session not found"},
	[MGW_PERR_SESSION_LOST] = {-32012, 404, "session_lost",
	                           "session lost: no replica could take it "
	                           "over; start a new session"},
	[MGW_PERR_SESSION_STORE] = {-32013, 503, "session_store",
	                            "session store unavailable"},
	[MGW_PERR_SESSION_REQUIRED] = {-32014, 400, "session_required",
	                               "Mcp-Session-Id header is required"},
	[MGW_PERR_ORIGIN] = {-32015, 403, "origin_not_allowed",
	                     "Origin not allowed"},
	[MGW_PERR_BAD_HEADER] = {-32016, 400, "bad_header",
	                         "invalid request header"},
	[MGW_PERR_UNAUTHORIZED] = {-32017, 401, "unauthorized",
	                           "authorization required"},
	[MGW_PERR_FORBIDDEN] = {-32018, 403, "forbidden",
	                        "request not allowed"},
	[MGW_PERR_RATE_LIMITED] = {-32019, 429, "rate_limited",
	                           "rate limit exceeded"},
	[MGW_PERR_STATE_REUSED] = {-31023, 409, "request_state_reused",
	                           "requestState already used: start the "
	                           "request over without it"},
	[MGW_PERR_STATE_STORE] = {-31024, 503, "request_state_store",
	                          "requestState could not be checked for "
	                          "single use"},
};

const struct mgw_proxy_error_info *mgw_proxy_error_info(enum mgw_proxy_error e)
{
	if ((unsigned)e >= MGW_PERR_N)
		e = MGW_PERR_INTERNAL;
	return &table[e];
}

/* Media type of a Content-Type value (or of one Accept element) without
 * parameters, compared case-insensitively: "Application/JSON;
 * charset=utf-8" is JSON, "application/json-seq" is not. */
static int is_json_type(const char *v)
{
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strcspn(v, ";, \t");
	return n == 16 && strncasecmp(v, "application/json", 16) == 0;
}

/* 1 if an Accept value lists application/json (parameters ignored). */
static int accepts_json(const char *accept)
{
	const char *p = accept;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (is_json_type(p))
			return 1;
		p = strchr(p, ',');
	}
	return 0;
}

int mgw_proxy_is_json_type(const char *content_type)
{
	return content_type && is_json_type(content_type);
}

int mgw_proxy_wants_jsonrpc(const struct mgw_jrpc_msg *m,
                            const char *content_type, const char *accept,
                            size_t body_len)
{
	if (m && mgw_jrpc_parsed(m))
		return 1;
	if (content_type && is_json_type(content_type))
		return 1;
	return body_len == 0 && accept && accepts_json(accept);
}

json_t *mgw_proxy_reply_id(const struct mgw_jrpc_msg *m)
{
	if (!m)
		return NULL;
	if (m->kind == MGW_JRPC_REQUEST || m->kind == MGW_JRPC_INVALID)
		return mgw_jrpc_id(m);
	return NULL;
}

int mgw_proxy_reply_build(struct mgw_proxy_reply *r, int status, int code,
                          const char *message, json_t *data, int as_json,
                          json_t *id)
{
	memset(r, 0, sizeof(*r));
	r->status = status;
	if (as_json) {
		/* mgw_jrpc_error_body steals data in every case */
		r->body = mgw_jrpc_error_body(id, code, message, data, &r->len);
		if (!r->body)
			goto fail;
		r->content_type = "application/json";
		return 0;
	}
	json_decref(data);
	{
		const char *reason = mgw_http_reason(status);
		int n = snprintf(NULL, 0, "%d %s: %s\n", status, reason, message);

		if (n < 0 || !(r->body = malloc((size_t)n + 1)))
			goto fail;
		snprintf(r->body, (size_t)n + 1, "%d %s: %s\n", status, reason,
		         message);
		r->len = (size_t)n;
	}
	r->content_type = "text/plain; charset=utf-8";
	return 0;
fail:
	memset(r, 0, sizeof(*r));
	return MGW_ENOMEM;
}

int mgw_proxy_reply_error(struct mgw_proxy_reply *r, enum mgw_proxy_error e,
                          const char *detail, int as_json, json_t *id)
{
	const struct mgw_proxy_error_info *in = mgw_proxy_error_info(e);

	return mgw_proxy_reply_build(r, in->status, in->code,
	                             detail ? detail : in->message, NULL,
	                             as_json, id);
}

void mgw_proxy_reply_deinit(struct mgw_proxy_reply *r)
{
	if (!r)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
}

enum mgw_proxy_error mgw_proxy_next_error(enum mgw_upstream_next v,
                                          const char *group,
                                          enum mgw_proxy_error why_last,
                                          const char **detail, char *buf,
                                          size_t len, const char **note)
{
	switch (v) {
	case MGW_NEXT_NONE_HEALTHY:
		snprintf(buf, len, "no healthy upstream server in group '%s'", group);
		*detail = buf;
		return MGW_PERR_NO_UPSTREAM;
	case MGW_NEXT_NO_BUDGET:
		*note = "retry budget exhausted";
		return why_last;
	case MGW_NEXT_ALL_TRIED:
		/* every other server was tried: answer with what happened on
		 * the last one */
		return why_last;
	case MGW_NEXT_NOMEM:
	case MGW_NEXT_OK:
		break;
	}
	*detail = NULL;
	return MGW_PERR_INTERNAL;
}

enum mgw_proxy_error mgw_proxy_error_kind(const struct mgw_client_error *e)
{
	switch (e->cls) {
	case MGW_CLIENT_E_TIMEOUT:
		return MGW_PERR_TIMEOUT;
	case MGW_CLIENT_E_DNS:
	case MGW_CLIENT_E_CONNECT:
	case MGW_CLIENT_E_TLS:
		return MGW_PERR_CONNECT;
	default:
		return (e->flags & MGW_CLIENT_F_CONNECT) ? MGW_PERR_CONNECT
		                                         : MGW_PERR_UPSTREAM;
	}
}

void mgw_proxy_describe_error(const struct mgw_client_error *e,
                            enum mgw_proxy_error kind, char *buf, size_t len)
{
	const char *what;

	switch (e->cls) {
	case MGW_CLIENT_E_TIMEOUT:
		snprintf(buf, len, "upstream server timed out (%s)",
		         e->msg ? e->msg : "timeout");
		return;
	case MGW_CLIENT_E_DNS: what = "upstream name did not resolve"; break;
	case MGW_CLIENT_E_CONNECT: what = "could not connect to an upstream server"; break;
	case MGW_CLIENT_E_TLS: what = "TLS with the upstream server failed"; break;
	case MGW_CLIENT_E_PROTO: what = "invalid response from the upstream server"; break;
	case MGW_CLIENT_E_REFUSED: what = "upstream server refused the request"; break;
	case MGW_CLIENT_E_RESET: what = "upstream server reset the request"; break;
	case MGW_CLIENT_E_CLOSED: what = "upstream server closed the connection"; break;
	default: what = mgw_proxy_error_info(kind)->message; break;
	}
	snprintf(buf, len, "%s", what);
}

int mgw_proxy_refusal_body(int status, const char *why,
                           const struct mgw_headers *req,
                           const char **ctype, char **body, size_t *len,
                           void *arg)
{
	struct mgw_proxy_reply r;
	int rc;

	(void)arg;
	if (!(status == 413 || (status == 400 && why)) || !req ||
	    !mgw_proxy_wants_jsonrpc(NULL, mgw_headers_get(req, "content-type"),
	                             mgw_headers_get(req, "accept"), 0))
		return -1;
	if (status == 413)
		rc = mgw_proxy_reply_error(&r, MGW_PERR_TOO_LARGE,
		                           "request too large "
		                           "(limits.max_body_bytes)", 1, NULL);
	else
		rc = mgw_proxy_reply_error(&r, MGW_PERR_BAD_HEADER, why, 1, NULL);
	if (rc != 0)
		return -1;
	*ctype = r.content_type;
	*body = r.body; /* ownership moves to the server layer */
	*len = r.len;
	return 0;
}
