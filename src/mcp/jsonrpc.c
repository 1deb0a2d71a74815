/* jsonrpc.c - classifies one HTTP body as a JSON-RPC 2.0 request,
 * notification, response or batch, and builds JSON-RPC bodies.
 *
 * The gateway forwards the bytes it received; this parse only reads them to
 * decide where they go.  Two choices keep the parse from becoming an attack
 * surface or a source of disagreement with the upstream:
 *
 * - The reader is our own strict one (mcp/json.c), which builds jansson
 *   values; depth is bounded by it (configurable, small, not jansson's
 *   compiled-in 2048), so a deep body is refused before it costs more
 *   than its first levels.  It refuses the one leniency of json_loadb, a
 *   NUL byte skipped after a number or literal, which an upstream's parser
 *   could read differently.
 * - Duplicate object names are rejected everywhere in the document.  Parsers disagree on duplicates (first wins vs
 *   last wins), and the values the gateway routes on live at many depths:
 *   method, params.name / params.uri, params._meta and, through
 *   x-mcp-header, any argument on a chain of properties.  A body with two
 *   "name" members could be routed on one and executed on the other, which
 *   is exactly the spoofing SEP-2243 forbids.  SDK serializers never emit
 *   duplicates, so the cost in compatibility is nil in practice.
 *
 * Strings may contain U+0000 (it is valid JSON and a backend would accept
 * it); every string this module hands out as a C string is
 * checked to have no embedded NUL, so a C comparison cannot be fooled by
 * "tools/call\u0000x". */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "mcp/json.h"
#include "mcp/jsonrpc.h"

#define DEFAULT_MAX_DEPTH 64

static void set_invalid(struct mgw_jrpc_msg *m, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_invalid(struct mgw_jrpc_msg *m, int code, const char *fmt, ...)
{
	va_list ap;
	char *p;

	m->kind = MGW_JRPC_INVALID;
	m->error_code = code;
	va_start(ap, fmt);
	vsnprintf(m->error_msg, sizeof(m->error_msg), fmt, ap);
	va_end(ap);
	/* jansson quotes input bytes in its messages; the message goes into a
	 * JSON body and a log line, so keep it printable ASCII. */
	for (p = m->error_msg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7E)
			*p = '?';
}

/* A C string view of a JSON string, or NULL when v is not a string or
 * carries an embedded NUL (which would make the view lie). */
static const char *plain_string(json_t *v)
{
	const char *s;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v))
		return NULL;
	return s;
}

/* An integer of any size (RFC 8259 has no bound): one past json_int_t
 * is a wide number (mcp/json.h) whose text has no fraction or
 * exponent. */
static int wide_integer(json_t *v)
{
	const char *t;
	size_t n;

	if (!mgw_json_wide_number(v, &t, &n))
		return 0;
	return !memchr(t, '.', n) && !memchr(t, 'e', n) && !memchr(t, 'E', n);
}

static int id_valid(json_t *id)
{
	if (json_is_integer(id) || wide_integer(id))
		return 1;
	return plain_string(id) != NULL;
}

/* Fills the MCP-specific views of a request: params, _meta, protocol
 * version and the name Mcp-Name mirrors.  Values of the wrong type are left
 * NULL: the classification is about the JSON-RPC envelope, and the method
 * handler reports bad params with -32602 itself. */
static int extract_params(struct mgw_jrpc_msg *m, json_t *params)
{
	json_t *meta, *name = NULL;

	if (!json_is_object(params))
		return 0;
	m->params = params;
	meta = json_object_get(params, "_meta");
	if (json_is_object(meta)) {
		json_t *pv = json_object_get(meta,
		        "io.modelcontextprotocol/protocolVersion");

		m->meta = meta;
		if (pv && !plain_string(pv)) {
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "_meta protocolVersion must be a string");
			return -1;
		}
		m->meta_protocol_version = plain_string(pv);
	}
	if (m->kind != MGW_JRPC_REQUEST)
		return 0;
	if (!strcmp(m->method, "tools/call") || !strcmp(m->method, "prompts/get"))
		name = json_object_get(params, "name");
	else if (!strcmp(m->method, "resources/read"))
		name = json_object_get(params, "uri");
	if (name && json_is_string(name) && !plain_string(name)) {
		/* A name with NUL could match a header by its prefix only. */
		set_invalid(m, MGW_JRPC_INVALID_REQUEST,
		            "params name/uri contains a NUL character");
		return -1;
	}
	m->name = plain_string(name);
	if (!strncmp(m->method, "tasks/", 6)) {
		json_t *tid = json_object_get(params, "taskId");

		if (tid && json_is_string(tid) && !plain_string(tid)) {
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "params taskId contains a NUL character");
			return -1;
		}
		m->task_id = plain_string(tid);
	}
	return 0;
}

static void classify_object(struct mgw_jrpc_msg *m, json_t *o)
{
	json_t *ver = json_object_get(o, "jsonrpc");
	json_t *method = json_object_get(o, "method");
	json_t *id = json_object_get(o, "id");
	json_t *params = json_object_get(o, "params");
	json_t *result = json_object_get(o, "result");
	json_t *error = json_object_get(o, "error");

	if (!ver || !json_is_string(ver) ||
	    strcmp(json_string_value(ver), "2.0") ||
	    json_string_length(ver) != 3) {
		set_invalid(m, MGW_JRPC_INVALID_REQUEST,
		            "jsonrpc member must be \"2.0\"");
		return;
	}
	if (method) {
		if (result || error) {
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "a message with method cannot carry result or error");
			return;
		}
		if (!plain_string(method) || json_string_length(method) == 0) {
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "method must be a non-empty string");
			return;
		}
		if (params && !json_is_object(params) && !json_is_array(params)) {
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "params must be an object or an array");
			return;
		}
		if (id) {
			/* MCP forbids null ids; JSON-RPC discourages fractions. */
			if (!id_valid(id)) {
				set_invalid(m, MGW_JRPC_INVALID_REQUEST,
				            "id must be a string or an integer");
				return;
			}
			m->kind = MGW_JRPC_REQUEST;
			m->id = id;
		} else {
			m->kind = MGW_JRPC_NOTIFICATION;
		}
		m->method = json_string_value(method);
		if (extract_params(m, params) < 0) {
			m->method = NULL;
			m->params = NULL;
			m->meta = NULL;
			m->meta_protocol_version = NULL;
			m->name = NULL;
			m->task_id = NULL;
		}
		return;
	}
	if (!result == !error) {
		set_invalid(m, MGW_JRPC_INVALID_REQUEST, "%s",
		            result ? "a response cannot carry both result and error"
		                   : "message has neither method, result nor error");
		return;
	}
	if (error) {
		json_t *code = json_object_get(error, "code");
		json_t *msg = json_object_get(error, "message");

		if (!json_is_object(error) || !json_is_integer(code) ||
		    !json_is_string(msg)) {
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "error must be an object with integer code and string message");
			return;
		}
		/* An error answering an unparsable request has a null or no id. */
		if (id && !json_is_null(id) && !id_valid(id)) {
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "id must be a string, an integer or null");
			return;
		}
	} else if (!id || !id_valid(id)) {
		set_invalid(m, MGW_JRPC_INVALID_REQUEST,
		            "a result response needs a string or integer id");
		return;
	}
	m->kind = MGW_JRPC_RESPONSE;
	m->id = json_is_null(id) ? NULL : id;
}

int mgw_jrpc_classify(const void *body, size_t len, size_t max_depth,
                      struct mgw_jrpc_msg *m)
{
	struct mgw_json_error jerr;

	memset(m, 0, sizeof(*m));
	if (max_depth == 0)
		max_depth = DEFAULT_MAX_DEPTH;
	/* RFC 8259 section 8.1: a parser MAY ignore a leading byte order
	 * mark.  Refusing one would make the gateway stricter than the
	 * servers behind it; ignoring it only here (not in mcp/json.c, which
	 * matches json_loadb) keeps one reading of such a body for routing,
	 * validation and the backend alike.  Only the first BOM goes. */
	if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0) {
		body = (const unsigned char *)body + 3;
		len -= 3;
	}
	m->root = mgw_json_parse_flags(body, len, max_depth,
	                               MGW_JSON_WIDE_NUMBERS, &jerr);
	if (!m->root) {
		switch (jerr.code) {
		case MGW_JSON_NOMEM:
			return MGW_ENOMEM;
		case MGW_JSON_DEPTH:
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "JSON nesting deeper than %zu", max_depth);
			return 0;
		case MGW_JSON_LIMIT:
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "JSON body holds more than %d values",
			            MGW_JSON_MAX_VALUES);
			return 0;
		case MGW_JSON_DUPLICATE:
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "duplicate object member: %s", jerr.text);
			return 0;
		default:
			set_invalid(m, MGW_JRPC_PARSE_ERROR, "parse error: %s",
			            jerr.text);
			return 0;
		}
	}
	if (json_is_array(m->root)) {
		if (json_array_size(m->root) == 0)
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "empty batch");
		else
			m->kind = MGW_JRPC_BATCH;
		return 0;
	}
	if (!json_is_object(m->root)) {
		set_invalid(m, MGW_JRPC_INVALID_REQUEST,
		            "a JSON-RPC message must be an object");
		return 0;
	}
	classify_object(m, m->root);
	if (m->kind == MGW_JRPC_INVALID) {
		/* Keep a usable id so the error answer can name the request. */
		json_t *id = json_object_get(m->root, "id");

		m->id = id_valid(id) ? id : NULL;
	}
	return 0;
}

void mgw_jrpc_msg_deinit(struct mgw_jrpc_msg *m)
{
	if (!m)
		return;
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

/* Serializes o compactly and releases it.  NULL on no memory.  With
 * wide (an id that is a wide number, mcp/json.h) o has no id member and
 * the answer gets "id":<its text> first: jansson cannot write it. */
static char *dump_and_free(json_t *o, json_t *wide, size_t *len)
{
	const char *t;
	size_t n, sl;
	char *s, *w;

	if (!o)
		return NULL;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s && wide && mgw_json_wide_number(wide, &t, &n)) {
		/* s is "{...}" with at least the jsonrpc member */
		sl = strlen(s);
		w = malloc(sl + n + 7);
		if (!w) {
			free(s);
			return NULL;
		}
		memcpy(w, "{\"id\":", 6);
		memcpy(w + 6, t, n);
		w[6 + n] = ',';
		memcpy(w + 7 + n, s + 1, sl); /* with the NUL */
		free(s);
		s = w;
	}
	if (s && len)
		*len = strlen(s);
	return s;
}

/* The id member of an answer: a copy so the caller's document can be freed
 * independently; JSON null when there is none; NULL (no member: the
 * dump writes it) for a wide number. */
static json_t *answer_id(json_t *id)
{
	if (mgw_json_wide_number(id, NULL, NULL))
		return NULL;
	return id ? json_deep_copy(id) : json_null();
}

/* {"jsonrpc":"2.0","id":id,key:v}, v stolen; the id left out (written by
 * dump_and_free) when it is a wide number. */
static json_t *envelope(json_t *id, const char *key, json_t *v)
{
	json_t *a = answer_id(id);

	if (!a && mgw_json_wide_number(id, NULL, NULL))
		return json_pack("{s:s,s:o}", "jsonrpc", "2.0", key, v);
	return json_pack("{s:s,s:o,s:o}", "jsonrpc", "2.0", "id", a, key, v);
}

static json_t *wide_id(json_t *id)
{
	return mgw_json_wide_number(id, NULL, NULL) ? id : NULL;
}

char *mgw_jrpc_error_body(json_t *id, int code, const char *message,
                          json_t *data, size_t *len)
{
	json_t *err = NULL, *msg, *o = NULL;

	msg = json_string(message ? message : "");
	if (!msg) {
		/* Not UTF-8 (a message quoting client bytes): send it with
		 * every non-ASCII byte replaced rather than send nothing. */
		char *copy = strdup(message), *p;

		if (!copy)
			goto fail;
		for (p = copy; *p; p++)
			if ((unsigned char)*p > 0x7E)
				*p = '?';
		msg = json_string(copy);
		free(copy);
		if (!msg)
			goto fail;
	}
	err = json_pack("{s:i,s:o}", "code", code, "message", msg);
	if (!err)
		goto fail;
	if (data && json_object_set_new(err, "data", data) < 0) {
		data = NULL;
		goto fail;
	}
	data = NULL;
	o = envelope(id, "error", err);
	err = NULL;
	return dump_and_free(o, wide_id(id), len);
fail:
	json_decref(data);
	json_decref(err);
	return NULL;
}

char *mgw_jrpc_result_body(json_t *id, json_t *result, size_t *len)
{
	json_t *o;

	if (!result)
		return NULL;
	o = envelope(id, "result", result);
	return dump_and_free(o, wide_id(id), len);
}

char *mgw_jrpc_notification_body(const char *method, json_t *params,
                                 size_t *len)
{
	json_t *o = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);

	if (!o)
		goto fail;
	if (params && json_object_set_new(o, "params", params) < 0) {
		params = NULL;
		goto fail;
	}
	return dump_and_free(o, NULL, len);
fail:
	json_decref(params);
	json_decref(o);
	return NULL;
}
