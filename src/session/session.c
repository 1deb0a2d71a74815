/* session.c - session records: construction, copies, reference counting,
 * the replay-safe tool set and principal digests (see session.h). */
#include "autoconf.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/errors.h"
#include "http/headers.h"
#include "session/session.h"

const char mgw_session_canonical_initialized[] =
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

static size_t strsize(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* Keeps mem_size equal to what the record holds, so that stores can
 * account memory without walking records. */
static void account(struct mgw_session *s)
{
	size_t n = sizeof(*s);

	n += s->id ? s->id_len + 1 : 0;
	n += s->init_len + s->initialized_len;
	n += strsize(s->protocol_version) + strsize(s->pin_url) +
	     strsize(s->upstream_sid);
	n += s->n_init_headers * sizeof(*s->init_headers);
	for (size_t i = 0; i < s->n_init_headers; i++)
		n += strsize(s->init_headers[i].name) +
		     strsize(s->init_headers[i].value);
	n += s->n_safe_tools * sizeof(*s->safe_tools);
	for (size_t i = 0; i < s->n_safe_tools; i++)
		n += strsize(s->safe_tools[i]);
	s->mem_size = n;
}

struct mgw_session *mgw_session_new(void)
{
	struct mgw_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	account(s);
	return s;
}

struct mgw_session *mgw_session_ref(struct mgw_session *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

static void free_tools(char **t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i]);
	free(t);
}

static void free_headers(struct mgw_session_header *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}

void mgw_session_unref(struct mgw_session *s)
{
	if (!s)
		return;
	/* acq_rel: the thread that frees must see every write made before
	 * other threads dropped their references. */
	if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(s->id);
	free(s->init_body);
	free_headers(s->init_headers, s->n_init_headers);
	free(s->initialized_body);
	free(s->protocol_version);
	free(s->pin_url);
	free(s->upstream_sid);
	free_tools(s->safe_tools, s->n_safe_tools);
	OPENSSL_cleanse(s->principal, sizeof(s->principal));
	free(s);
}

static void *memdup0(const void *p, size_t len)
{
	char *d = malloc(len + 1);

	if (!d)
		return NULL;
	if (len)
		memcpy(d, p, len);
	d[len] = '\0';
	return d;
}

/* Copies an optional string; *ok cleared on allocation failure. */
static char *strdup_opt(const char *s, int *ok)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*ok = 0;
	return d;
}

struct mgw_session *mgw_session_dup(const struct mgw_session *s)
{
	struct mgw_session *d = mgw_session_new();
	int ok = 1;

	if (!d)
		return NULL;
	d->id_len = s->id_len;
	d->version = s->version;
	d->init_len = s->init_len;
	d->initialized_len = s->initialized_len;
	d->bound = s->bound;
	memcpy(d->principal, s->principal, sizeof(d->principal));
	d->pin_gen = s->pin_gen;
	d->tools_known = s->tools_known;
	d->created_s = s->created_s;
	d->expires_s = s->expires_s;
	if (s->id && !(d->id = memdup0(s->id, s->id_len)))
		ok = 0;
	if (s->init_body && !(d->init_body = memdup0(s->init_body, s->init_len)))
		ok = 0;
	if (s->initialized_body &&
	    !(d->initialized_body = memdup0(s->initialized_body,
	                                    s->initialized_len)))
		ok = 0;
	d->protocol_version = strdup_opt(s->protocol_version, &ok);
	d->pin_url = strdup_opt(s->pin_url, &ok);
	d->upstream_sid = strdup_opt(s->upstream_sid, &ok);
	if (s->n_init_headers) {
		d->init_headers = calloc(s->n_init_headers,
		                         sizeof(*d->init_headers));
		if (!d->init_headers)
			ok = 0;
		for (size_t i = 0; d->init_headers && i < s->n_init_headers; i++) {
			d->n_init_headers = i + 1;
			d->init_headers[i].name =
				strdup_opt(s->init_headers[i].name, &ok);
			d->init_headers[i].value =
				strdup_opt(s->init_headers[i].value, &ok);
		}
	}
	if (s->n_safe_tools) {
		d->safe_tools = calloc(s->n_safe_tools, sizeof(*d->safe_tools));
		if (!d->safe_tools)
			ok = 0;
		for (size_t i = 0; d->safe_tools && i < s->n_safe_tools; i++) {
			d->n_safe_tools = i + 1;
			d->safe_tools[i] = strdup_opt(s->safe_tools[i], &ok);
		}
	}
	if (!ok) {
		mgw_session_unref(d);
		return NULL;
	}
	account(d);
	return d;
}

static int visible_ascii(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x21 || (unsigned char)p[i] > 0x7e)
			return 0;
	return 1;
}

int mgw_session_id_valid(const char *id, size_t len, size_t max_len)
{
	return id && len >= 1 && len <= max_len && visible_ascii(id, len);
}

int mgw_session_set_id(struct mgw_session *s, const char *id, size_t len)
{
	char *d;

	if (!mgw_session_id_valid(id, len, (size_t)-1))
		return MGW_EINVAL;
	d = memdup0(id, len);
	if (!d)
		return MGW_ENOMEM;
	free(s->id);
	s->id = d;
	s->id_len = len;
	account(s);
	return 0;
}

int mgw_session_set_init(struct mgw_session *s, const void *body, size_t len)
{
	unsigned char *d;

	if (!body || len == 0)
		return MGW_EINVAL;
	d = memdup0(body, len);
	if (!d)
		return MGW_ENOMEM;
	free(s->init_body);
	s->init_body = d;
	s->init_len = len;
	account(s);
	return 0;
}

/* Credentials belong to whoever acts now (see session-t.h): never kept. */
static int is_credential(const char *name)
{
	return !strcasecmp(name, "authorization") ||
	       !strcasecmp(name, "proxy-authorization") ||
	       !strcasecmp(name, "cookie");
}

int mgw_session_add_init_header(struct mgw_session *s, const char *name,
                                const char *value)
{
	struct mgw_session_header *h;
	size_t nl, vl;

	if (!name || !value)
		return MGW_EINVAL;
	nl = strlen(name);
	vl = strlen(value);
	if (nl == 0 || nl > MGW_SESSION_HEADER_NAME_MAX ||
	    vl > MGW_SESSION_HEADER_VALUE_MAX ||
	    !mgw_header_name_valid(name, nl) ||
	    !mgw_header_value_valid(value, vl) || is_credential(name))
		return MGW_EINVAL;
	if (s->n_init_headers >= MGW_SESSION_MAX_HEADERS)
		return MGW_ELIMIT;
	h = realloc(s->init_headers, (s->n_init_headers + 1) * sizeof(*h));
	if (!h)
		return MGW_ENOMEM;
	s->init_headers = h;
	h = &s->init_headers[s->n_init_headers];
	h->name = strdup(name);
	h->value = strdup(value);
	if (!h->name || !h->value) {
		free(h->name);
		free(h->value);
		return MGW_ENOMEM;
	}
	s->n_init_headers++;
	account(s);
	return 0;
}

int mgw_session_set_initialized(struct mgw_session *s, const void *body,
                                size_t len)
{
	unsigned char *d;

	if (!body || len == 0)
		return MGW_EINVAL;
	if (len > MGW_SESSION_INITIALIZED_MAX)
		return MGW_ELIMIT;
	d = memdup0(body, len);
	if (!d)
		return MGW_ENOMEM;
	free(s->initialized_body);
	s->initialized_body = d;
	s->initialized_len = len;
	account(s);
	return 0;
}

/* Replaces *dst by a copy of src after checking it is visible ASCII of at
 * most max bytes (src NULL clears). */
static int set_visible(char **dst, const char *src, size_t max)
{
	char *d = NULL;

	if (src) {
		size_t n = strlen(src);

		if (n == 0 || n > max || !visible_ascii(src, n))
			return MGW_EINVAL;
		d = strdup(src);
		if (!d)
			return MGW_ENOMEM;
	}
	free(*dst);
	*dst = d;
	return 0;
}

int mgw_session_set_protocol_version(struct mgw_session *s, const char *v)
{
	int rc = set_visible(&s->protocol_version, v, MGW_SESSION_VERSION_MAX);

	account(s);
	return rc;
}

int mgw_session_set_pin(struct mgw_session *s, const char *url,
                        const char *upstream_sid)
{
	char *u = NULL, *sid = NULL;
	int rc;

	/* Both checked and copied before either is replaced, so that a
	 * failure leaves the old pin whole. */
	rc = set_visible(&u, url, MGW_SESSION_URL_MAX);
	if (rc == 0)
		rc = set_visible(&sid, upstream_sid, MGW_SESSION_UPSTREAM_ID_MAX);
	if (rc != 0) {
		free(u);
		return rc;
	}
	free(s->pin_url);
	free(s->upstream_sid);
	s->pin_url = u;
	s->upstream_sid = sid;
	atomic_store_explicit(&s->pin_tag_memo, 0, memory_order_relaxed);
	account(s);
	return 0;
}

int mgw_session_repin(struct mgw_session *s, const char *url,
                      const char *upstream_sid)
{
	int rc = mgw_session_set_pin(s, url, upstream_sid);

	if (rc == 0) {
		s->pin_gen++;
		atomic_store_explicit(&s->pin_tag_memo, 0, memory_order_relaxed);
	}
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int mgw_session_set_safe_tools(struct mgw_session *s,
                               const char *const *names, size_t n)
{
	char **t = NULL;
	size_t k = 0;

	if (n > MGW_SESSION_MAX_SAFE_TOOLS)
		return MGW_ELIMIT;
	if (n) {
		t = calloc(n, sizeof(*t));
		if (!t)
			return MGW_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = names[i] ? strlen(names[i]) : 0;

		if (len == 0 || len > MGW_SESSION_TOOL_NAME_MAX)
			continue;
		t[k] = strdup(names[i]);
		if (!t[k]) {
			free_tools(t, k);
			return MGW_ENOMEM;
		}
		k++;
	}
	if (k > 1) {
		size_t w = 1;

		qsort(t, k, sizeof(*t), cmp_str);
		for (size_t r = 1; r < k; r++) {
			if (strcmp(t[r], t[w - 1]) == 0)
				free(t[r]);
			else
				t[w++] = t[r];
		}
		k = w;
	}
	if (k == 0) {
		free(t);
		t = NULL;
	}
	free_tools(s->safe_tools, s->n_safe_tools);
	s->safe_tools = t;
	s->n_safe_tools = k;
	s->tools_known = 1;
	account(s);
	return 0;
}

int mgw_session_tool_replay_safe(const struct mgw_session *s,
                                 const char *name, size_t len)
{
	size_t lo = 0, hi = s->n_safe_tools;

	if (!name || len == 0 || len > MGW_SESSION_TOOL_NAME_MAX)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *t = s->safe_tools[mid];
		size_t tl = strlen(t);
		int c = memcmp(t, name, tl < len ? tl : len);

		if (c == 0)
			c = tl < len ? -1 : tl > len ? 1 : 0;
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void mgw_session_principal_digest(const char *auth, size_t len,
                                  unsigned char out[MGW_SESSION_DIGEST_LEN])
{
	unsigned int n = 0;

	if (!auth)
		len = 0;
	/* EVP_Digest only fails on an unusable OpenSSL; an all-zero digest
	 * then still compares consistently (and is never the SHA-256 of any
	 * value). */
	if (!EVP_Digest(auth ? auth : "", len, out, &n, EVP_sha256(), NULL) ||
	    n != MGW_SESSION_DIGEST_LEN)
		memset(out, 0, MGW_SESSION_DIGEST_LEN);
}

void mgw_session_set_principal(struct mgw_session *s,
                               const unsigned char d[MGW_SESSION_DIGEST_LEN])
{
	memcpy(s->principal, d, MGW_SESSION_DIGEST_LEN);
	s->bound = 1;
}

int mgw_session_principal_matches(const struct mgw_session *s,
                                  const unsigned char *d)
{
	if (!s->bound)
		return 1;
	if (!d)
		return 0;
	return CRYPTO_memcmp(s->principal, d, MGW_SESSION_DIGEST_LEN) == 0;
}

/* Hashes s and its terminating NUL (NULL as a lone NUL), so that fields
 * in a row cannot run into each other: ("ab","c") differs from ("a","bc"). */
static int digest_str(EVP_MD_CTX *c, const char *s)
{
	return EVP_DigestUpdate(c, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* The SHA-256 under the tag: about 8,000 instructions, once per record
 * (the memo), where it used to be twice per proxied request. */
static uint32_t pin_tag_compute(const struct mgw_session *s)
{
	unsigned char md[32], gen[4];
	unsigned int n = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	/* Fallback when OpenSSL cannot hash: still differs per generation. */
	uint32_t tag = s->pin_gen * 2654435761u;

	gen[0] = (unsigned char)(s->pin_gen >> 24);
	gen[1] = (unsigned char)(s->pin_gen >> 16);
	gen[2] = (unsigned char)(s->pin_gen >> 8);
	gen[3] = (unsigned char)s->pin_gen;
	if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) &&
	    EVP_DigestUpdate(c, gen, sizeof(gen)) &&
	    digest_str(c, s->pin_url) && digest_str(c, s->upstream_sid) &&
	    EVP_DigestFinal_ex(c, md, &n) && n == sizeof(md))
		tag = (uint32_t)md[0] << 24 | (uint32_t)md[1] << 16 |
		      (uint32_t)md[2] << 8 | md[3];
	EVP_MD_CTX_free(c);
	return tag;
}

uint32_t mgw_session_pin_tag(const struct mgw_session *s)
{
	struct mgw_session *w = (struct mgw_session *)s; /* the memo only */
	uint64_t memo = atomic_load_explicit(&w->pin_tag_memo,
	                                     memory_order_relaxed);
	uint32_t tag;

	if (memo >> 32)
		return (uint32_t)memo;
	tag = pin_tag_compute(s);
	atomic_store_explicit(&w->pin_tag_memo, (uint64_t)1 << 32 | tag,
	                      memory_order_relaxed);
	return tag;
}
