/* sse.c - SSE event-id stamping and response extraction for the stateful
 * path (see sse.h for why ids are stamped and the id format). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "mcp/jsonrpc.h"
#include "proxy/sse.h"
#include "util/base64.h"

/* Where the stamper stands in the current line. */
enum {
	S_LINE_START = 0,  /* nothing of this line seen yet */
	S_MID,             /* inside a line that is not an id field */
	S_HELD,            /* a prefix of "id: " is held */
};

void mgw_sse_stamper_init(struct mgw_sse_stamper *st, uint32_t tag)
{
	memset(st, 0, sizeof(*st));
	snprintf(st->stamp, sizeof(st->stamp), "%08x.", (unsigned)tag);
	st->stamp_len = MGW_SSE_STAMP_LEN;
	st->state = S_LINE_START;
}

/* base64url of id's JSON text into buf, or 0 when it is too long / not a
 * request id / no memory. */
static size_t encode_id(const json_t *id, char *buf, size_t size)
{
	char *text, *b64;
	size_t n = 0;

	if (!id || !(json_is_string(id) || json_is_integer(id)))
		return 0;
	text = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
	if (!text)
		return 0;
	if (strlen(text) <= MGW_SSE_REQ_ID_MAX &&
	    (b64 = mgw_base64_encode(text, strlen(text), 1)) != NULL) {
		n = strlen(b64);
		if (n < size)
			memcpy(buf, b64, n + 1);
		else
			n = 0;
		free(b64);
	}
	free(text);
	return n;
}

static size_t request_stamp(uint32_t tag, char sep, const json_t *id,
                            char *buf, size_t size)
{
	char enc[MGW_SSE_STAMP_MAX];
	int n;

	if (encode_id(id, enc, sizeof(enc)) == 0)
		return 0;
	n = snprintf(buf, size, "%08x%c%s.", (unsigned)tag, sep, enc);
	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

void mgw_sse_stamper_init_req(struct mgw_sse_stamper *st, uint32_t tag,
                              const json_t *id)
{
	size_t n;

	mgw_sse_stamper_init(st, tag);
	n = request_stamp(tag, '-', id, st->stamp, sizeof(st->stamp));
	if (n)
		st->stamp_len = n;
	else
		mgw_sse_stamper_init(st, tag);
}

size_t mgw_sse_answered_id(uint32_t tag, const json_t *id, char *buf,
                           size_t size)
{
	size_t n = request_stamp(tag, '+', id, buf, size);

	if (!n || n + 1 >= size)
		return 0;
	buf[n++] = '0';
	buf[n] = '\0';
	return n;
}

static int is_eol(char c)
{
	return c == '\r' || c == '\n';
}

int mgw_sse_stamp(struct mgw_sse_stamper *st, const void *data, size_t len,
                  struct evbuffer *out)
{
	const char *p = data, *end = p + len;

	while (p < end) {
		switch (st->state) {
		case S_MID: {
			const char *q = p;

			while (q < end && !is_eol(*q))
				q++;
			if (q == end) {
				if (evbuffer_add(out, p, (size_t)(end - p)) != 0)
					return MGW_ENOMEM;
				return 0;
			}
			/* the line ends here; CR LF is two line ends to us,
			 * which is harmless: an empty line holds no id */
			if (evbuffer_add(out, p, (size_t)(q - p) + 1) != 0)
				return MGW_ENOMEM;
			p = q + 1;
			st->state = S_LINE_START;
			break;
		}
		case S_LINE_START:
			if (*p == 'i') {
				st->held[0] = 'i';
				st->n_held = 1;
				st->state = S_HELD;
			} else {
				if (evbuffer_add(out, p, 1) != 0)
					return MGW_ENOMEM;
				if (!is_eol(*p))
					st->state = S_MID;
			}
			p++;
			break;
		default: { /* S_HELD */
			static const char want[] = "id: ";
			char c = *p;

			if (st->n_held < 4 && c == want[st->n_held]) {
				st->held[st->n_held++] = c;
				p++;
				break;
			}
			/* Decided: "id:" or "id: " followed by a value byte is
			 * an id field with a value; anything else ("idx", "id"
			 * alone, an empty value) passes unchanged.  c itself is
			 * left for S_MID. */
			if (evbuffer_add(out, st->held, st->n_held) != 0)
				return MGW_ENOMEM;
			if (st->n_held >= 3 && !is_eol(c) &&
			    evbuffer_add(out, st->stamp, st->stamp_len) != 0)
				return MGW_ENOMEM;
			st->n_held = 0;
			st->state = S_MID;
			break;
		}
		}
	}
	return 0;
}

int mgw_sse_stamp_flush(struct mgw_sse_stamper *st, struct evbuffer *out)
{
	if (st->n_held && evbuffer_add(out, st->held, st->n_held) != 0)
		return MGW_ENOMEM;
	st->n_held = 0;
	st->state = S_LINE_START;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mgw_sse_stamp_parse(const char *v, size_t len,
                        struct mgw_sse_stamp_view *out)
{
	uint32_t got = 0;
	const char *p, *end;

	if (!v || len < MGW_SSE_STAMP_LEN)
		return 0;
	for (size_t i = 0; i < MGW_SSE_STAMP_LEN - 1; i++) {
		int d = hexval(v[i]);

		if (d < 0)
			return 0;
		got = got << 4 | (uint32_t)d;
	}
	memset(out, 0, sizeof(*out));
	out->tag = got;
	end = v + len;
	switch (v[MGW_SSE_STAMP_LEN - 1]) {
	case '.':
		out->kind = MGW_SSE_STAMP_PLAIN;
		out->rest = v + MGW_SSE_STAMP_LEN;
		out->rest_len = len - MGW_SSE_STAMP_LEN;
		return out->rest_len > 0;
	case '-':
		out->kind = MGW_SSE_STAMP_REQUEST;
		break;
	case '+':
		out->kind = MGW_SSE_STAMP_ANSWERED;
		break;
	default:
		return 0;
	}
	/* base64url has no '.': the first one ends the id */
	p = v + MGW_SSE_STAMP_LEN;
	out->req = p;
	while (p < end && *p != '.')
		p++;
	out->req_len = (size_t)(p - out->req);
	if (p == end || out->req_len == 0 ||
	    out->req_len > MGW_SSE_STAMP_MAX - MGW_SSE_STAMP_LEN - 1)
		return 0;
	out->rest = p + 1;
	out->rest_len = (size_t)(end - out->rest);
	return out->kind == MGW_SSE_STAMP_ANSWERED || out->rest_len > 0;
}

json_t *mgw_sse_stamp_request_id(const struct mgw_sse_stamp_view *sv)
{
	unsigned char *text;
	size_t n;
	json_t *id;

	if (sv->kind == MGW_SSE_STAMP_PLAIN || !sv->req)
		return NULL;
	text = mgw_base64_decode(sv->req, sv->req_len, 1, &n);
	if (!text)
		return NULL;
	id = n <= MGW_SSE_REQ_ID_MAX
	     ? json_loadb((const char *)text, n, JSON_DECODE_ANY, NULL) : NULL;
	free(text);
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		json_decref(id);
		id = NULL;
	}
	return id;
}

int mgw_sse_unstamp(const char *v, size_t len, uint32_t tag,
                    const char **rest, size_t *rest_len)
{
	struct mgw_sse_stamp_view sv;

	if (!mgw_sse_stamp_parse(v, len, &sv) || sv.tag != tag ||
	    sv.kind == MGW_SSE_STAMP_ANSWERED || sv.rest_len == 0)
		return 0;
	*rest = sv.rest;
	*rest_len = sv.rest_len;
	return 1;
}

/* The JSON-RPC response in data/len, or NULL. */
static json_t *as_response(const void *data, size_t len, size_t max_depth)
{
	struct mgw_jrpc_msg m;
	json_t *r = NULL;

	if (len == 0 || mgw_jrpc_classify(data, len, max_depth, &m) != 0)
		return NULL;
	if (m.kind == MGW_JRPC_RESPONSE && mgw_jrpc_root(&m))
		r = json_incref(mgw_jrpc_root(&m));
	mgw_jrpc_msg_deinit(&m);
	return r;
}

json_t *mgw_sse_find_response(const void *body, size_t len, size_t max_depth)
{
	const char *p = body, *end = p + len;
	char *data = malloc(len + 1);
	size_t n = 0;
	json_t *r = NULL;

	if (!data)
		return NULL;
	while (p < end) {
		const char *q = p;
		size_t ll;

		while (q < end && !is_eol(*q))
			q++;
		ll = (size_t)(q - p);
		if (ll == 0) {
			/* blank line (or the end of the body): dispatch */
			if (n > 0) {
				r = as_response(data, n - 1, max_depth);
				if (r)
					break;
			}
			n = 0;
		} else if (ll >= 4 && memcmp(p, "data", 4) == 0 &&
		           (ll == 4 || p[4] == ':')) {
			const char *v = p + (ll > 4 ? 5 : 4);
			size_t vl = ll > 4 ? ll - 5 : 0;

			if (vl > 0 && *v == ' ') {
				v++;
				vl--;
			}
			memcpy(data + n, v, vl);
			n += vl;
			data[n++] = '\n';
		}
		if (q == end)
			break;
		/* CR LF counts as one line end */
		p = (q[0] == '\r' && q + 1 < end && q[1] == '\n') ? q + 2 : q + 1;
	}
	/* An event the body ended in without its blank line: the SSE spec
	 * drops it, but an upstream that closes right after its response
	 * still answered. */
	if (!r && n > 0)
		r = as_response(data, n - 1, max_depth);
	free(data);
	return r;
}

json_t *mgw_sse_body_response(const void *body, size_t len, int is_sse,
                              size_t max_depth)
{
	if (is_sse)
		return mgw_sse_find_response(body, len, max_depth);
	return as_response(body, len, max_depth);
}
