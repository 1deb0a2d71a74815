/* record.c - the request recorder behind `mcpgw backend --record N`.  A
 * ring of the last N requests with their header fields in arrival order
 * and a SHA-256 of the exact body bytes: the evidence a gateway test
 * needs to show that a proxy neither re-serialized a body nor reordered,
 * dropped or rewrote an end-to-end header.  Only a digest of the body is
 * kept, so recording large bodies costs no memory. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "backend/record.h"
#include "core/errors.h"
#include "http/headers.h"

struct rec_entry {
	uint64_t seq;
	uint64_t time_ms;
	char *method;
	char *target;
	char *peer;
	int http_version;
	int tls;
	struct mgw_headers headers;  /* an ordered copy */
	size_t body_len;
	char sha256[65];
};

struct mgw_be_record {
	struct rec_entry *ring;
	size_t capacity;
	size_t n;        /* entries held */
	size_t head;     /* index of the oldest entry */
	uint64_t total;  /* requests ever added (the last sequence number) */
};

static void entry_deinit(struct rec_entry *e)
{
	free(e->method);
	free(e->target);
	free(e->peer);
	mgw_headers_deinit(&e->headers);
	memset(e, 0, sizeof(*e));
	mgw_headers_init(&e->headers);
}

struct mgw_be_record *mgw_be_record_new(size_t capacity)
{
	struct mgw_be_record *r;

	if (capacity < 1 || capacity > MGW_BE_RECORD_MAX)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->ring = calloc(capacity, sizeof(*r->ring));
	if (!r->ring) {
		free(r);
		return NULL;
	}
	for (size_t i = 0; i < capacity; i++)
		mgw_headers_init(&r->ring[i].headers);
	r->capacity = capacity;
	return r;
}

void mgw_be_record_clear(struct mgw_be_record *r)
{
	for (size_t i = 0; i < r->capacity; i++)
		entry_deinit(&r->ring[i]);
	r->n = 0;
	r->head = 0;
}

void mgw_be_record_free(struct mgw_be_record *r)
{
	if (!r)
		return;
	mgw_be_record_clear(r);
	free(r->ring);
	free(r);
}

void mgw_be_sha256_hex(const void *data, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[SHA256_DIGEST_LENGTH];
	unsigned int mdlen = 0;

	/* EVP_Digest cannot fail for SHA-256 on memory short of an
	 * allocation failure; an all-zero digest then marks it visibly. */
	if (EVP_Digest(data ? data : "", len, md, &mdlen, EVP_sha256(), NULL) != 1)
		memset(md, 0, sizeof(md));
	for (size_t i = 0; i < SHA256_DIGEST_LENGTH; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int mgw_be_record_add(struct mgw_be_record *r,
                      const struct mgw_be_record_req *req)
{
	struct rec_entry *e;
	size_t slot;

	r->total++;
	if (r->n == r->capacity) {
		slot = r->head;
		r->head = (r->head + 1) % r->capacity;
		r->n--;
	} else {
		slot = (r->head + r->n) % r->capacity;
	}
	e = &r->ring[slot];
	entry_deinit(e);
	e->seq = r->total;
	e->time_ms = wall_ms();
	e->http_version = req->http_version;
	e->tls = req->tls;
	e->body_len = req->body_len;
	mgw_be_sha256_hex(req->body, req->body_len, e->sha256);
	e->method = dup_or_null(req->method ? req->method : "");
	e->target = dup_or_null(req->target ? req->target : "");
	e->peer = dup_or_null(req->peer);
	if (!e->method || !e->target || (req->peer && !e->peer))
		goto fail;
	for (size_t i = 0; req->headers && i < req->headers->n; i++) {
		const struct mgw_header *h = &req->headers->v[i];
		if (mgw_headers_add(&e->headers, h->name, h->name_len, h->value,
		                    h->value_len) != 0)
			goto fail;
	}
	r->n++;
	return 0;
fail:
	/* The slot stays empty; the ring order is unchanged because it was
	 * the slot right after the newest entry. */
	entry_deinit(e);
	return MGW_ENOMEM;
}

/* Header bytes as a JSON string: UTF-8 as is, anything else (obs-text)
 * decoded as ISO-8859-1 so that no byte is silently lost. */
static json_t *bytes_string(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);
	char *u;
	size_t k = 0;

	if (j)
		return j;
	u = malloc(2 * len + 1);
	if (!u)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			u[k++] = (char)c;
		} else {
			u[k++] = (char)(0xc0 | (c >> 6));
			u[k++] = (char)(0x80 | (c & 0x3f));
		}
	}
	j = json_stringn(u, k);
	free(u);
	return j;
}

static json_t *entry_json(const struct rec_entry *e)
{
	json_t *hs = json_array(), *o;

	if (!hs)
		return NULL;
	for (size_t i = 0; i < e->headers.n; i++) {
		const struct mgw_header *h = &e->headers.v[i];
		json_t *pair = json_pack("[oo]",
		                         bytes_string(h->name, h->name_len),
		                         bytes_string(h->value, h->value_len));
		if (!pair || json_array_append_new(hs, pair) != 0) {
			json_decref(hs);
			return NULL;
		}
	}
	o = json_pack("{sIsIsssssssbsosIss}",
	              "seq", (json_int_t)e->seq,
	              "time_ms", (json_int_t)e->time_ms,
	              "method", e->method,
	              "target", e->target,
	              "http_version", e->http_version == 20 ? "2" : "1.1",
	              "tls", e->tls,
	              "headers", hs,
	              "body_length", (json_int_t)e->body_len,
	              "body_sha256", e->sha256);
	if (o && e->peer)
		json_object_set_new(o, "peer", json_string(e->peer));
	return o;
}

json_t *mgw_be_record_json(const struct mgw_be_record *r)
{
	json_t *list = json_array(), *doc;

	if (!list)
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		json_t *e = entry_json(&r->ring[(r->head + i) % r->capacity]);
		if (!e || json_array_append_new(list, e) != 0) {
			json_decref(list);
			return NULL;
		}
	}
	doc = json_pack("{sIsIso}", "capacity", (json_int_t)r->capacity, "total",
	                (json_int_t)r->total, "requests", list);
	return doc;
}
