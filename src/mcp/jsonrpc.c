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
#include <stdint.h>
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
	m->params_ = params;
	meta = json_object_get(params, "_meta");
	if (json_is_object(meta)) {
		json_t *pv = json_object_get(meta,
		        "io.modelcontextprotocol/protocolVersion");

		m->meta_ = meta;
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
			m->id_ = id;
		} else {
			m->kind = MGW_JRPC_NOTIFICATION;
		}
		m->method = json_string_value(method);
		if (extract_params(m, params) < 0) {
			m->method = NULL;
			m->params_ = NULL;
			m->meta_ = NULL;
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
	m->id_ = json_is_null(id) ? NULL : id;
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
	m->root_ = mgw_json_parse_flags(body, len, max_depth,
	                               MGW_JSON_WIDE_NUMBERS, &jerr);
	if (!m->root_) {
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
	if (json_is_array(m->root_)) {
		if (json_array_size(m->root_) == 0)
			set_invalid(m, MGW_JRPC_INVALID_REQUEST,
			            "empty batch");
		else
			m->kind = MGW_JRPC_BATCH;
		return 0;
	}
	if (!json_is_object(m->root_)) {
		set_invalid(m, MGW_JRPC_INVALID_REQUEST,
		            "a JSON-RPC message must be an object");
		return 0;
	}
	classify_object(m, m->root_);
	if (m->kind == MGW_JRPC_INVALID) {
		/* Keep a usable id so the error answer can name the request. */
		json_t *id = json_object_get(m->root_, "id");

		m->id_ = id_valid(id) ? id : NULL;
	}
	return 0;
}

void mgw_jrpc_msg_deinit(struct mgw_jrpc_msg *m)
{
	if (!m)
		return;
	json_decref(m->root_);
	free(m->text);
	memset(m, 0, sizeof(*m));
}

/* ---- the lazy classification (jsonrpc.h) -------------------------------- */

static const char *const skim_path[] = {"params", "_meta"};

/* A string member's bytes without its quotes. */
#define INNER(mb) ((mb)->val + 1)
#define INNER_LEN(mb) ((mb)->vlen - 2)

static int plain_member(const struct mgw_json_member *mb)
{
	return mb && mb->type == 's' && !mb->esc;
}

/* What id_valid says, of a member: an integer of any size, or a string
 * (an escaped one is left to the full classification). */
static int skim_id_valid(const struct mgw_json_member *id)
{
	return (id->type == 'n' && id->integer) || plain_member(id);
}

static int inner_is(const struct mgw_json_member *mb, const char *s)
{
	size_t n = strlen(s);

	return INNER_LEN(mb) == n && memcmp(INNER(mb), s, n) == 0;
}

struct lazy_strings {
	const struct mgw_json_member *method, *name, *task_id, *pv;
};

/* The members a request's params hold for the classification: name (or
 * uri) and taskId as extract_params reads them.  -1 when one is a string
 * with escapes (the full classification reads it). */
static int lazy_request_names(const struct mgw_json_skim *s,
                              struct lazy_strings *ls)
{
	const struct mgw_json_member *method = ls->method, *name = NULL;

	if (inner_is(method, "tools/call") || inner_is(method, "prompts/get"))
		name = mgw_json_skim_get(s, 1, "name");
	else if (inner_is(method, "resources/read"))
		name = mgw_json_skim_get(s, 1, "uri");
	if (name && name->type == 's' && name->esc)
		return -1;
	ls->name = plain_member(name) ? name : NULL;
	if (INNER_LEN(method) >= 6 && memcmp(INNER(method), "tasks/", 6) == 0) {
		const struct mgw_json_member *tid = mgw_json_skim_get(s, 1, "taskId");

		if (tid && tid->type == 's' && tid->esc)
			return -1;
		ls->task_id = plain_member(tid) ? tid : NULL;
	}
	return 0;
}

/* classify_object's decisions for a message it would find valid, read
 * from the skim; -1 for anything else. */
static int lazy_kind(const struct mgw_json_skim *s, const unsigned char *b,
                     struct mgw_jrpc_msg *m, struct lazy_strings *ls)
{
#define NAME(lit) {lit, sizeof(lit) - 1}
	static const struct {
		const char *s;
		size_t n;
	} names[] = {NAME("jsonrpc"), NAME("method"), NAME("id"),
	             NAME("params"), NAME("result"), NAME("error")};
#undef NAME
	const struct mgw_json_member *mb[6] = {0}, *meta;
	const struct mgw_json_member *ver, *method, *id, *params, *result, *error;

	/* one pass over the envelope's members */
	for (unsigned i = 0; i < s->n[0]; i++) {
		const struct mgw_json_member *x = &s->level[0][i];

		for (unsigned k = 0; k < 6; k++)
			if (x->klen == names[k].n &&
			    memcmp(x->key, names[k].s, x->klen) == 0) {
				mb[k] = x;
				break;
			}
	}
	ver = mb[0], method = mb[1], id = mb[2], params = mb[3];
	result = mb[4], error = mb[5];
	if (!plain_member(ver) || !inner_is(ver, "2.0"))
		return -1;
	if (!method) {
		/* a result response; an error response's members are checked
		 * by the full classification */
		if (error || !result || !id || !skim_id_valid(id))
			return -1;
		m->kind = MGW_JRPC_RESPONSE;
		return 0;
	}
	if (result || error || !plain_member(method) || INNER_LEN(method) == 0 ||
	    (params && params->type != 'o' && params->type != 'a') ||
	    (id && !skim_id_valid(id)))
		return -1;
	m->kind = id ? MGW_JRPC_REQUEST : MGW_JRPC_NOTIFICATION;
	ls->method = method;
	if (!params || params->type != 'o')
		return 0;
	meta = mgw_json_skim_get(s, 1, "_meta");
	if (meta && meta->type == 'o') {
		m->has_meta = 1;
		ls->pv = mgw_json_skim_get(s, 2,
		        "io.modelcontextprotocol/protocolVersion");
		if (ls->pv && !plain_member(ls->pv))
			return -1;
	}
	for (unsigned i = 0; i < s->n[1]; i++) {
		m->pkey[i].off = (size_t)(s->level[1][i].key - b);
		m->pkey[i].len = s->level[1][i].klen;
	}
	m->n_pkeys = s->n[1];
	return m->kind == MGW_JRPC_REQUEST ? lazy_request_names(s, ls) : 0;
}

/* One copy: the body, then each string NUL-terminated. */
static int lazy_copy(struct mgw_jrpc_msg *m, const unsigned char *body,
                     size_t len, const struct lazy_strings *ls)
{
	const struct mgw_json_member *mb[4] = {ls->method, ls->name, ls->task_id,
	                                       ls->pv};
	const char **dst[4] = {&m->method, &m->name, &m->task_id,
	                       &m->meta_protocol_version};
	size_t total = len;
	char *w;

	for (int i = 0; i < 4; i++)
		if (mb[i])
			total += INNER_LEN(mb[i]) + 1;
	if (!(m->text = malloc(total ? total : 1)))
		return MGW_ENOMEM;
	memcpy(m->text, body, len);
	m->text_len = len;
	w = m->text + len;
	for (int i = 0; i < 4; i++) {
		if (!mb[i])
			continue;
		memcpy(w, INNER(mb[i]), INNER_LEN(mb[i]));
		w[INNER_LEN(mb[i])] = '\0';
		*dst[i] = w;
		w += INNER_LEN(mb[i]) + 1;
	}
	return 0;
}

int mgw_jrpc_classify_lazy(const void *body, size_t len, size_t max_depth,
                           struct mgw_jrpc_msg *m)
{
	const unsigned char *b = body;
	struct mgw_json_skim s;
	struct lazy_strings ls = {0};

	memset(m, 0, sizeof(*m));
	if (len >= 3 && memcmp(b, "\xEF\xBB\xBF", 3) == 0) {
		b += 3;
		len -= 3;
	}
	if (mgw_json_skim(b, len, max_depth ? max_depth : DEFAULT_MAX_DEPTH,
	                  skim_path, 2, &s) != 0 ||
	    s.top != 'o' || s.n[0] == 0 || lazy_kind(&s, b, m, &ls) != 0) {
		memset(m, 0, sizeof(*m));
		return mgw_jrpc_classify(body, len + (size_t)(b - (const unsigned char *)body),
		                         max_depth, m);
	}
	m->lazy = 1;
	if (lazy_copy(m, b, len, &ls) != 0) {
		memset(m, 0, sizeof(*m));
		return MGW_ENOMEM;
	}
	return 0;
}

/* Builds the tree of a lazy message and its views, as classify_object
 * sets them. */
static void build_tree(struct mgw_jrpc_msg *m)
{
	struct mgw_json_error jerr;
	json_t *params, *meta, *id;

	if (!m->lazy || m->root_ || m->lazy_failed)
		return;
	m->root_ = mgw_json_parse_flags(m->text, m->text_len, SIZE_MAX,
	                                MGW_JSON_WIDE_NUMBERS, &jerr);
	if (!m->root_) {
		m->lazy_failed = 1; /* the skim read it whole: no memory */
		return;
	}
	id = json_object_get(m->root_, "id");
	if (m->kind != MGW_JRPC_NOTIFICATION)
		m->id_ = id;
	if (m->kind == MGW_JRPC_RESPONSE)
		return;
	params = json_object_get(m->root_, "params");
	if (!json_is_object(params))
		return;
	m->params_ = params;
	meta = json_object_get(params, "_meta");
	m->meta_ = json_is_object(meta) ? meta : NULL;
}

#define VIEW(field)                                                         \
	do {                                                                \
		struct mgw_jrpc_msg *w = (struct mgw_jrpc_msg *)m;          \
		build_tree(w);                                              \
		return w->field;                                            \
	} while (0)

json_t *mgw_jrpc_root(const struct mgw_jrpc_msg *m) { VIEW(root_); }
json_t *mgw_jrpc_params(const struct mgw_jrpc_msg *m) { VIEW(params_); }
json_t *mgw_jrpc_meta(const struct mgw_jrpc_msg *m) { VIEW(meta_); }
json_t *mgw_jrpc_id(const struct mgw_jrpc_msg *m) { VIEW(id_); }

int mgw_jrpc_tree_failed(const struct mgw_jrpc_msg *m)
{
	return m->lazy_failed;
}

int mgw_jrpc_parsed(const struct mgw_jrpc_msg *m)
{
	return m->lazy || m->root_ != NULL;
}

int mgw_jrpc_params_has(const struct mgw_jrpc_msg *m, const char *key)
{
	size_t n = strlen(key);

	if (!m->lazy)
		return json_object_get(m->params_, key) != NULL;
	for (unsigned i = 0; i < m->n_pkeys; i++)
		if (m->pkey[i].len == n &&
		    memcmp(m->text + m->pkey[i].off, key, n) == 0)
			return 1;
	return 0;
}

int mgw_jrpc_has_meta(const struct mgw_jrpc_msg *m)
{
	return m->lazy ? m->has_meta : m->meta_ != NULL;
}

/* Serializes o compactly (a wide id as its exact text: mcp/json.h) and
 * releases it.  NULL on no memory. */
static char *dump_and_free(json_t *o, size_t *len)
{
	char *s;

	if (!o)
		return NULL;
	s = mgw_json_dump(o, len);
	json_decref(o);
	return s;
}

/* {"jsonrpc":"2.0","id":id,key:v}, v stolen; the id copied so the
 * caller's document can be freed independently, JSON null when there is
 * none. */
static json_t *envelope(json_t *id, const char *key, json_t *v)
{
	return json_pack("{s:s,s:o,s:o}", "jsonrpc", "2.0", "id",
	                 id ? json_deep_copy(id) : json_null(), key, v);
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
	return dump_and_free(o, len);
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
	return dump_and_free(o, len);
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
	return dump_and_free(o, len);
fail:
	json_decref(params);
	json_decref(o);
	return NULL;
}
