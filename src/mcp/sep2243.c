/* sep2243.c - SEP-2243 mirrored headers: the "=?base64?...?=" value
 * encoding and the header/body validation every body-processing server
 * must do (spec 2026-07-28, transports/streamable-http, "Request Metadata"
 * and "Server Validation").
 *
 * Validation exists because intermediaries route on the headers while the
 * server executes the body; any disagreement is a spoofing vector, so every
 * rule here errs toward rejecting (400, -32020) with a message that names
 * the header, which is what a client needs to fix its request. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "http/headers.h"
#include "mcp/era.h"
#include "mcp/json.h"
#include "mcp/sep2243.h"
#include "util/base64.h"

#define PREFIX "=?base64?"
#define PREFIX_LEN 9
#define SUFFIX "?="
#define SUFFIX_LEN 2

static int is_sentinel(const char *v, size_t len)
{
	return len >= PREFIX_LEN + SUFFIX_LEN &&
	       !memcmp(v, PREFIX, PREFIX_LEN) &&
	       !memcmp(v + len - SUFFIX_LEN, SUFFIX, SUFFIX_LEN);
}

/* RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above
 * U+10FFFF. */
static int utf8_valid(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n, k;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (len - i <= n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return 0;
		i += n + 1;
	}
	return 1;
}

char *mgw_sep2243_decode(const char *value, size_t vlen, size_t *len)
{
	unsigned char *out;
	size_t olen, i;

	if (is_sentinel(value, vlen)) {
		out = mgw_base64_decode(value + PREFIX_LEN,
		                        vlen - PREFIX_LEN - SUFFIX_LEN, 0, &olen);
		if (!out)
			return NULL;
		if (!utf8_valid(out, olen)) {
			free(out);
			return NULL;
		}
		if (len)
			*len = olen;
		return (char *)out;
	}
	for (i = 0; i < vlen; i++) {
		unsigned char c = (unsigned char)value[i];

		if (c != '\t' && (c < 0x20 || c > 0x7E))
			return NULL;
	}
	out = malloc(vlen + 1);
	if (!out)
		return NULL;
	memcpy(out, value, vlen);
	out[vlen] = '\0';
	if (len)
		*len = vlen;
	return (char *)out;
}

char *mgw_sep2243_encode(const char *value, size_t len)
{
	int plain = !is_sentinel(value, len);
	char *b64, *out;
	size_t i, blen;

	if (len > 0 && (value[0] == ' ' || value[0] == '\t' ||
	                value[len - 1] == ' ' || value[len - 1] == '\t'))
		plain = 0;
	for (i = 0; plain && i < len; i++)
		if ((unsigned char)value[i] < 0x20 || (unsigned char)value[i] > 0x7E)
			plain = 0;
	if (plain) {
		out = malloc(len + 1);
		if (!out)
			return NULL;
		memcpy(out, value, len);
		out[len] = '\0';
		return out;
	}
	b64 = mgw_base64_encode(value, len, 0);
	if (!b64)
		return NULL;
	blen = strlen(b64);
	out = malloc(PREFIX_LEN + blen + SUFFIX_LEN + 1);
	if (out) {
		memcpy(out, PREFIX, PREFIX_LEN);
		memcpy(out + PREFIX_LEN, b64, blen);
		memcpy(out + PREFIX_LEN + blen, SUFFIX, SUFFIX_LEN + 1);
	}
	free(b64);
	return out;
}

json_t *mgw_sep2243_unsupported_data(const char *const *supported,
                                     const char *requested)
{
	json_t *list = json_array(), *req;

	if (!supported)
		supported = mgw_mcp_modern_versions;
	if (!list)
		return NULL;
	for (; *supported; supported++) {
		if (json_array_append_new(list, json_string(*supported)) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	/* A requested value that is not UTF-8 makes json_string fail; such a
	 * value cannot be a version anyway, so it is reported as "". */
	req = json_string(requested ? requested : "");
	if (!req)
		req = json_string("");
	return json_pack("{s:o,s:o}", "supported", list, "requested", req);
}

/* Renders up to 40 bytes of a value for a message: printable ASCII as is,
 * anything else as \xNN, "..." when cut. */
static const char *show(const char *s, size_t len, char *buf, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && i < 40; i++) {
		unsigned char c = (unsigned char)s[i];

		if (o + 5 >= size)
			break;
		if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'') {
			buf[o++] = (char)c;
		} else {
			snprintf(buf + o, size - o, "\\x%02X", c);
			o += 4;
		}
	}
	if (i < len && o + 4 < size) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static void fail_v(struct mgw_sep2243_verdict *v, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_v(struct mgw_sep2243_verdict *v, int code, const char *fmt, ...)
{
	va_list ap;

	v->ok = 0;
	v->status = 400;
	v->code = code;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
}

/* Finds the single field called name and returns its value trimmed of
 * SP/HTAB.  Returns 1 when found, 0 when absent, -1 when sent twice (an
 * intermediary might route on one and the server read the other). */
static int get_one(const struct mgw_headers *h, const char *name,
                   const char **val, size_t *len)
{
	size_t i, found = 0, nlen = strlen(name);
	const char *v = NULL;
	size_t n = 0;

	for (i = 0; h && i < h->n; i++) {
		if (!mgw_header_is(&h->v[i], name, nlen))
			continue;
		if (found++)
			return -1;
		v = h->v[i].value;
		n = h->v[i].value_len;
	}
	if (!found)
		return 0;
	while (n > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	*val = v;
	*len = n;
	return 1;
}

static int bytes_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* Checks the version header against _meta and the supported list.
 * Returns 1 when fine, 0 when *v was filled with a failure. */
static int check_version(const struct mgw_headers *h,
                         const struct mgw_jrpc_msg *m,
                         const char *const *supported,
                         struct mgw_sep2243_verdict *v)
{
	char a[200], b[200];
	const char *hv;
	size_t hlen;
	int r = get_one(h, "MCP-Protocol-Version", &hv, &hlen);

	if (r < 0) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: multiple MCP-Protocol-Version headers");
		return 0;
	}
	if (r == 0) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: missing MCP-Protocol-Version header");
		return 0;
	}
	if (m->meta_protocol_version) {
		const char *mv = m->meta_protocol_version;

		if (!bytes_eq(hv, hlen, mv, strlen(mv))) {
			fail_v(v, MGW_MCP_HEADER_MISMATCH,
			       "Header mismatch: MCP-Protocol-Version header value '%s' does not match _meta protocolVersion '%s'",
			       show(hv, hlen, a, 48), show(mv, strlen(mv), b, 48));
			return 0;
		}
	} else if (m->kind == MGW_JRPC_REQUEST) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: MCP-Protocol-Version header value '%s' but params._meta has no io.modelcontextprotocol/protocolVersion",
		       show(hv, hlen, a, 48));
		return 0;
	}
	for (; *supported; supported++)
		if (bytes_eq(hv, hlen, *supported, strlen(*supported)))
			return 1;
	if (hlen >= sizeof(v->requested))
		hlen = sizeof(v->requested) - 1;
	memcpy(v->requested, hv, hlen);
	v->requested[hlen] = '\0';
	fail_v(v, MGW_MCP_UNSUPPORTED_VERSION,
	       "Unsupported protocol version '%s'", show(hv, hlen, a, 48));
	return 0;
}

static int check_method(const struct mgw_headers *h,
                        const struct mgw_jrpc_msg *m,
                        struct mgw_sep2243_verdict *v)
{
	char a[200], b[200];
	const char *hv;
	size_t hlen;
	int r = get_one(h, "Mcp-Method", &hv, &hlen);

	if (r < 0) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: multiple Mcp-Method headers");
		return 0;
	}
	if (r == 0) {
		if (m->kind == MGW_JRPC_NOTIFICATION)
			return 1;
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: missing Mcp-Method header");
		return 0;
	}
	if (!bytes_eq(hv, hlen, m->method, strlen(m->method))) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: Mcp-Method header value '%s' does not match method '%s'",
		       show(hv, hlen, a, 48),
		       show(m->method, strlen(m->method), b, 48));
		return 0;
	}
	return 1;
}

/* The methods whose Mcp-Name is params.taskId (SEP-2663, "Streamable
 * HTTP: Routing Headers"): intermediaries route them to the server that
 * holds the task. */
static int is_task_method(const char *method)
{
	return !strcmp(method, "tasks/get") || !strcmp(method, "tasks/update") ||
	       !strcmp(method, "tasks/cancel");
}

static int check_name(const struct mgw_headers *h,
                      const struct mgw_jrpc_msg *m,
                      struct mgw_sep2243_verdict *v)
{
	char a[200], b[200];
	const char *field, *hv, *name = m->name;
	size_t hlen, dlen;
	char *dec;
	int r, eq;

	if (m->kind != MGW_JRPC_REQUEST)
		return 1;
	if (!strcmp(m->method, "resources/read"))
		field = "params.uri";
	else if (!strcmp(m->method, "tools/call") ||
	         !strcmp(m->method, "prompts/get"))
		field = "params.name";
	else if (is_task_method(m->method)) {
		/* a taskId that is not a string is the server's -32602 to
		 * answer, whatever the header says */
		if (!m->task_id && mgw_jrpc_params_has(m, "taskId"))
			return 1;
		field = "params.taskId";
		name = m->task_id;
	} else
		return 1;
	r = get_one(h, "Mcp-Name", &hv, &hlen);
	if (r < 0) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: multiple Mcp-Name headers");
		return 0;
	}
	if (r == 0) {
		if (!name)
			return 1; /* the method handler reports the missing name */
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: missing Mcp-Name header (%s is '%s')",
		       field, show(name, strlen(name), b, 48));
		return 0;
	}
	dec = mgw_sep2243_decode(hv, hlen, &dlen);
	if (!dec) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: Mcp-Name header value '%s' is malformed (bad base64 sentinel, invalid UTF-8 or invalid characters)",
		       show(hv, hlen, a, 48));
		return 0;
	}
	if (!name) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: Mcp-Name header value '%s' but the body has no %s",
		       show(dec, dlen, a, 48), field);
		free(dec);
		return 0;
	}
	eq = bytes_eq(dec, dlen, name, strlen(name));
	if (!eq)
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: Mcp-Name header value '%s' does not match %s '%s'",
		       show(dec, dlen, a, 48), field,
		       show(name, strlen(name), b, 48));
	free(dec);
	return eq;
}

/* Follows a JSON Pointer (RFC 6901) through objects only: x-mcp-header
 * paths are chains of properties, never array items. */
static json_t *pointer_get(json_t *root, const char *ptr)
{
	char tok[256];

	while (*ptr == '/' && root) {
		size_t n = 0;

		ptr++;
		while (*ptr && *ptr != '/') {
			char c = *ptr++;

			if (c == '~') {
				if (*ptr == '0')
					c = '~';
				else if (*ptr == '1')
					c = '/';
				else
					return NULL;
				ptr++;
			}
			if (n + 1 >= sizeof(tok))
				return NULL;
			tok[n++] = c;
		}
		tok[n] = '\0';
		if (!json_is_object(root))
			return NULL;
		root = json_object_get(root, tok);
	}
	return *ptr ? NULL : root;
}

/* Strict JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 * Sets *integral when there is neither fraction nor exponent. */
static int number_syntax(const char *s, size_t len, int *integral)
{
	size_t i = 0;

	*integral = 1;
	if (i < len && s[i] == '-')
		i++;
	if (i >= len || s[i] < '0' || s[i] > '9')
		return 0;
	if (s[i] == '0')
		i++;
	else
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	if (i < len && s[i] == '.') {
		*integral = 0;
		if (++i >= len || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		*integral = 0;
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= len || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == len;
}

/* 1 when the decoded header text equals the JSON scalar val under the
 * spec's conversion rules (strings as is, booleans lowercase, numbers
 * compared numerically). */
static int value_matches(const char *hv, size_t hlen, json_t *val)
{
	char buf[64];
	int integral;
	double d;
	const char *wt;
	size_t wn;

	/* A number beyond json_int_t or a double (mcp/json.h): no value to
	 * compare, so the header must carry the same text. */
	if (mgw_json_wide_number(val, &wt, &wn))
		return number_syntax(hv, hlen, &integral) && bytes_eq(hv, hlen, wt, wn);
	if (json_is_string(val))
		return bytes_eq(hv, hlen, json_string_value(val),
		                json_string_length(val));
	if (json_is_true(val))
		return bytes_eq(hv, hlen, "true", 4);
	if (json_is_false(val))
		return bytes_eq(hv, hlen, "false", 5);
	if (!json_is_number(val) || !number_syntax(hv, hlen, &integral) ||
	    hlen >= sizeof(buf))
		return 0;
	memcpy(buf, hv, hlen);
	buf[hlen] = '\0';
	if (json_is_integer(val) && integral) {
		long long x;

		errno = 0;
		x = strtoll(buf, NULL, 10);
		return errno == 0 && x == (long long)json_integer_value(val);
	}
	errno = 0;
	d = strtod(buf, NULL);
	if (errno == ERANGE || !isfinite(d))
		return 0;
	if (json_is_integer(val)) {
		json_int_t iv = json_integer_value(val);

		/* Beyond 2^53 a double cannot tell neighbours apart. */
		if (iv > 9007199254740991LL || iv < -9007199254740991LL)
			return 0;
		return d == (double)iv;
	}
	return d == json_real_value(val);
}

static int check_param(const struct mgw_headers *h,
                       const struct mgw_jrpc_msg *m,
                       const struct mgw_sep2243_param *p,
                       struct mgw_sep2243_verdict *v)
{
	char hname[128], a[200], b[200], c[120];
	json_t *args, *val;
	const char *hv;
	size_t hlen, dlen;
	char *dec;
	int r, ok;

	if (snprintf(hname, sizeof(hname), "Mcp-Param-%s", p->header) >=
	    (int)sizeof(hname)) {
		fail_v(v, MGW_JRPC_INTERNAL_ERROR,
		       "declared header name Mcp-Param-%.40s... is too long",
		       p->header);
		v->status = 500;
		return 0;
	}
	args = mgw_jrpc_params(m) ? json_object_get(mgw_jrpc_params(m), "arguments") : NULL;
	if (p->param[0] == '/')
		val = pointer_get(args, p->param);
	else
		val = json_is_object(args) ? json_object_get(args, p->param) : NULL;
	if (json_is_null(val))
		val = NULL;
	r = get_one(h, hname, &hv, &hlen);
	if (r < 0) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: multiple %s headers", hname);
		return 0;
	}
	if (r == 0) {
		if (!val)
			return 1;
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: missing %s header (argument '%s' is present)",
		       hname, show(p->param, strlen(p->param), b, 48));
		return 0;
	}
	dec = mgw_sep2243_decode(hv, hlen, &dlen);
	if (!dec) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: %s header value '%s' is malformed (bad base64 sentinel, invalid UTF-8 or invalid characters)",
		       hname, show(hv, hlen, a, 48));
		return 0;
	}
	if (!val) {
		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: %s header value '%s' but argument '%s' is absent",
		       hname, show(dec, dlen, a, 48),
		       show(p->param, strlen(p->param), b, 48));
		free(dec);
		return 0;
	}
	ok = value_matches(dec, dlen, val);
	if (!ok) {
		char *body = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);

		fail_v(v, MGW_MCP_HEADER_MISMATCH,
		       "Header mismatch: %s header value '%s' does not match argument '%s' = %s",
		       hname, show(dec, dlen, a, 48),
		       show(p->param, strlen(p->param), b, 48),
		       body ? show(body, strlen(body), c, sizeof(c)) : "?");
		free(body);
	}
	free(dec);
	return ok;
}

int mgw_sep2243_validate(const struct mgw_headers *h,
                         const struct mgw_jrpc_msg *m,
                         const char *const *supported,
                         const struct mgw_sep2243_param *params,
                         size_t n_params, struct mgw_sep2243_verdict *v)
{
	size_t i;

	memset(v, 0, sizeof(*v));
	if (!supported)
		supported = mgw_mcp_modern_versions;
	if (!m || (m->kind != MGW_JRPC_REQUEST &&
	           m->kind != MGW_JRPC_NOTIFICATION) || !m->method) {
		fail_v(v, MGW_JRPC_INVALID_REQUEST,
		       "not a JSON-RPC request or notification");
		return 0;
	}
	if (!check_version(h, m, supported, v) || !check_method(h, m, v) ||
	    !check_name(h, m, v))
		return 0;
	if (m->kind == MGW_JRPC_REQUEST && !strcmp(m->method, "tools/call"))
		for (i = 0; i < n_params; i++)
			if (!check_param(h, m, &params[i], v))
				return 0;
	v->ok = 1;
	v->status = 200;
	return 0;
}
