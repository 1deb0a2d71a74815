/* record_codec.c - the binary encoding of session records shared by the
 * sealed and Redis stores (layouts in record_codec.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "session/record_codec.h"
#include "session/session.h"
#include "util/bytes.h"

#define FORMAT 1
#define FLAG_BOUND 1
#define FLAG_TOOLS_KNOWN 2
/* What the full layout adds besides its variable fields: the flags, the
 * initialized body's length and the tool count. */
#define FULL_FIXED (1 + 2 + 2)

static size_t slen(const char *s)
{
	return s ? strlen(s) : 0;
}

/* ---- sizes ---- */

static size_t core_size(const struct mgw_session *s)
{
	size_t n = MGW_RECORD_CORE_FIXED + s->init_len;

	n += slen(s->pin_url) + slen(s->upstream_sid) +
	     slen(s->protocol_version);
	for (size_t i = 0; i < s->n_init_headers; i++)
		n += 1 + slen(s->init_headers[i].name) + 2 +
		     slen(s->init_headers[i].value);
	return n;
}

size_t mgw_record_size(const struct mgw_session *s, enum mgw_record_layout l)
{
	size_t n = core_size(s);

	if (l == MGW_RECORD_CORE)
		return n;
	n += FULL_FIXED + s->initialized_len;
	n += s->bound ? MGW_SESSION_DIGEST_LEN : 0;
	for (size_t i = 0; i < s->n_safe_tools; i++)
		n += 2 + slen(s->safe_tools[i]);
	return n;
}

size_t mgw_record_size_max(enum mgw_record_layout l, size_t max_init)
{
	size_t n = MGW_RECORD_CORE_FIXED + MGW_SESSION_URL_MAX +
	           MGW_SESSION_UPSTREAM_ID_MAX + MGW_SESSION_VERSION_MAX +
	           MGW_SESSION_MAX_HEADERS *
	                   (1 + MGW_SESSION_HEADER_NAME_MAX + 2 +
	                    MGW_SESSION_HEADER_VALUE_MAX) +
	           max_init;

	if (l == MGW_RECORD_CORE)
		return n;
	return n + FULL_FIXED + MGW_SESSION_DIGEST_LEN +
	       MGW_SESSION_INITIALIZED_MAX +
	       MGW_SESSION_MAX_SAFE_TOOLS * (2 + MGW_SESSION_TOOL_NAME_MAX);
}

/* ---- encoding ---- */

static void put_head(struct mgw_wbuf *w, const struct mgw_session *s)
{
	mgw_wbuf_put_uint(w, FORMAT, 1);
	mgw_wbuf_put_uint(w, (uint64_t)s->created_s, 8);
	mgw_wbuf_put_uint(w, (uint64_t)s->expires_s, 8);
	mgw_wbuf_put_uint(w, s->pin_gen, 4);
}

static void put_binding(struct mgw_wbuf *w, const struct mgw_session *s)
{
	mgw_wbuf_put_uint(w, (s->bound ? FLAG_BOUND : 0) |
	                     (s->tools_known ? FLAG_TOOLS_KNOWN : 0), 1);
	if (s->bound)
		mgw_wbuf_put(w, s->principal, MGW_SESSION_DIGEST_LEN);
}

/* The pin, the protocol version, the replay headers and the initialize
 * body. */
static void put_handshake(struct mgw_wbuf *w, const struct mgw_session *s)
{
	mgw_wbuf_put_str(w, s->pin_url, 2);
	mgw_wbuf_put_str(w, s->upstream_sid, 2);
	mgw_wbuf_put_str(w, s->protocol_version, 1);
	mgw_wbuf_put_uint(w, s->n_init_headers, 1);
	for (size_t i = 0; i < s->n_init_headers; i++) {
		mgw_wbuf_put_str(w, s->init_headers[i].name, 1);
		mgw_wbuf_put_str(w, s->init_headers[i].value, 2);
	}
	mgw_wbuf_put_field(w, s->init_body, s->init_len, 4);
}

/* What a session gains after create: the initialized body and the
 * replay-safe tools. */
static void put_replay(struct mgw_wbuf *w, const struct mgw_session *s)
{
	mgw_wbuf_put_field(w, s->initialized_body, s->initialized_len, 2);
	mgw_wbuf_put_uint(w, s->n_safe_tools, 2);
	for (size_t i = 0; i < s->n_safe_tools; i++)
		mgw_wbuf_put_str(w, s->safe_tools[i], 2);
}

unsigned char *mgw_record_encode(const struct mgw_session *s,
                                 enum mgw_record_layout l, size_t *len)
{
	struct mgw_wbuf w = {.cap = mgw_record_size(s, l)};

	w.p = malloc(w.cap);
	if (!w.p)
		return NULL;
	put_head(&w, s);
	if (l == MGW_RECORD_FULL)
		put_binding(&w, s);
	put_handshake(&w, s);
	if (l == MGW_RECORD_FULL)
		put_replay(&w, s);
	*len = w.len;
	return w.p;
}

/* ---- decoding: each part returns 0 or MGW_EINVAL (MGW_ENOMEM) ---- */

static int get_head(struct mgw_rbuf *r, struct mgw_session *s)
{
	if (mgw_rbuf_get_uint(r, 1) != FORMAT)
		return MGW_EINVAL;
	s->created_s = mgw_u64_to_signed(mgw_rbuf_get_uint(r, 8));
	s->expires_s = mgw_u64_to_signed(mgw_rbuf_get_uint(r, 8));
	s->pin_gen = (uint32_t)mgw_rbuf_get_uint(r, 4);
	return r->bad ? MGW_EINVAL : 0;
}

/* The flags byte (returned in *flags for the tools) and the principal. */
static int get_binding(struct mgw_rbuf *r, struct mgw_session *s,
                       unsigned *flags)
{
	*flags = (unsigned)mgw_rbuf_get_uint(r, 1);
	if (r->bad || (*flags & ~(unsigned)(FLAG_BOUND | FLAG_TOOLS_KNOWN)))
		return MGW_EINVAL;
	if (*flags & FLAG_BOUND) {
		if (r->len - r->off < MGW_SESSION_DIGEST_LEN)
			return MGW_EINVAL;
		mgw_session_set_principal(s, r->p + r->off);
		r->off += MGW_SESSION_DIGEST_LEN;
	}
	return 0;
}

static int get_pin(struct mgw_rbuf *r, struct mgw_session *s)
{
	char *url = mgw_rbuf_get_str(r, 2);
	char *sid = mgw_rbuf_get_str(r, 2);
	char *ver = mgw_rbuf_get_str(r, 1);
	int rc = MGW_EINVAL;

	if (!r->bad && mgw_session_set_pin(s, url, sid) == 0 &&
	    mgw_session_set_protocol_version(s, ver) == 0)
		rc = 0;
	free(url);
	free(sid);
	free(ver);
	return rc;
}

static int get_headers(struct mgw_rbuf *r, struct mgw_session *s)
{
	size_t n = (size_t)mgw_rbuf_get_uint(r, 1);

	for (size_t i = 0; i < n && !r->bad; i++) {
		char *name = mgw_rbuf_get_str(r, 1);
		char *value = mgw_rbuf_get_str(r, 2);
		/* an empty value is written as length 0, read back as NULL */
		int ok = !r->bad && name &&
		         mgw_session_add_init_header(s, name,
		                                     value ? value : "") == 0;

		free(name);
		free(value);
		if (!ok)
			return MGW_EINVAL;
	}
	return r->bad ? MGW_EINVAL : 0;
}

static int get_init(struct mgw_rbuf *r, struct mgw_session *s)
{
	const unsigned char *f;
	size_t n;

	mgw_rbuf_get_field(r, 4, &f, &n);
	if (r->bad || !f || mgw_session_set_init(s, f, n) != 0)
		return MGW_EINVAL;
	return 0;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* The tool set; a record whose tool list is not known has none. */
static int get_tools(struct mgw_rbuf *r, struct mgw_session *s,
                     unsigned flags)
{
	size_t n = (size_t)mgw_rbuf_get_uint(r, 2);
	char **t = NULL;
	int rc = MGW_EINVAL;

	if (r->bad || n > MGW_SESSION_MAX_SAFE_TOOLS ||
	    (n && !(flags & FLAG_TOOLS_KNOWN)))
		return MGW_EINVAL;
	if (n) {
		t = calloc(n, sizeof(*t));
		if (!t)
			return MGW_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		t[i] = mgw_rbuf_get_str(r, 2);
		if (r->bad || !t[i])
			goto out;
	}
	if ((flags & FLAG_TOOLS_KNOWN) &&
	    mgw_session_set_safe_tools(s, (const char *const *)t, n) != 0)
		goto out;
	rc = 0;
out:
	free_strv(t, n);
	return rc;
}

static int get_replay(struct mgw_rbuf *r, struct mgw_session *s,
                      unsigned flags)
{
	const unsigned char *f;
	size_t n;

	mgw_rbuf_get_field(r, 2, &f, &n);
	if (r->bad || (f && mgw_session_set_initialized(s, f, n) != 0))
		return MGW_EINVAL;
	return get_tools(r, s, flags);
}

struct mgw_session *mgw_record_decode(const unsigned char *p, size_t len,
                                      enum mgw_record_layout l)
{
	struct mgw_rbuf r = {.p = p, .len = len};
	struct mgw_session *s = mgw_session_new();
	unsigned flags = 0;

	if (!s)
		return NULL;
	if (get_head(&r, s) != 0)
		goto fail;
	if (l == MGW_RECORD_FULL && get_binding(&r, s, &flags) != 0)
		goto fail;
	if (get_pin(&r, s) != 0 || get_headers(&r, s) != 0 ||
	    get_init(&r, s) != 0)
		goto fail;
	if (l == MGW_RECORD_FULL && get_replay(&r, s, flags) != 0)
		goto fail;
	if (r.off != r.len)
		goto fail;
	return s;
fail:
	mgw_session_unref(s);
	return NULL;
}
