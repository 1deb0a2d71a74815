/* record.h - the reference server's request recorder (`--record N`): the
 * last N HTTP requests as they arrived (method, target, every header field
 * in arrival order, body length and SHA-256), so that gateway tests can
 * prove that a proxy forwarded bytes and headers unchanged.  Exposed on
 * GET /debug/requests; DELETE /debug/requests empties it. */
#ifndef MGW_BACKEND_RECORD_H
#define MGW_BACKEND_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "http/headers-t.h"

/* Largest --record N: each entry keeps a copy of the request's header
 * block (itself bounded by limits.max_header_bytes), so N bounds memory. */
#define MGW_BE_RECORD_MAX 10000

struct mgw_be_record;

/* What one request looked like on arrival.  All pointers are borrowed for
 * the duration of mgw_be_record_add only. */
struct mgw_be_record_req {
	const char *method;
	const char *target;               /* raw request-target / :path */
	int http_version;                 /* 11 or 20 */
	int tls;
	const char *peer;                 /* "IP:PORT", may be NULL */
	const struct mgw_headers *headers;
	const unsigned char *body;
	size_t body_len;
};

/* A recorder keeping the last capacity requests (1..MGW_BE_RECORD_MAX).
 * Returns NULL on a bad capacity or no memory. */
struct mgw_be_record *mgw_be_record_new(size_t capacity);
void mgw_be_record_free(struct mgw_be_record *r);

/* Copies what is needed of req into the ring, evicting the oldest entry
 * when full.  Every request gets the next sequence number (from 1), so a
 * reader can tell that entries were evicted.  Returns 0 or MGW_ENOMEM (the
 * request is then not recorded, and the sequence number is still used). */
int mgw_be_record_add(struct mgw_be_record *r,
                      const struct mgw_be_record_req *req);

/* Forgets every entry (sequence numbers keep counting). */
void mgw_be_record_clear(struct mgw_be_record *r);

/* The GET /debug/requests document (new reference):
 *   {"capacity": N, "total": requests ever seen, "requests": [oldest ..
 *    newest: {"seq", "time_ms" (wall clock), "method", "target",
 *    "http_version" ("1.1" | "2"), "tls", "peer", "headers": [[name,
 *    value], ...], "body_length", "body_sha256" (lowercase hex)}]}
 * Header values that are not UTF-8 (obs-text) are shown as ISO-8859-1
 * decoded to UTF-8, the historical meaning of such bytes (RFC 9110 5.5).
 * Returns NULL on no memory. */
json_t *mgw_be_record_json(const struct mgw_be_record *r);

/* Lowercase hex SHA-256 of data into out (65 bytes with the NUL). */
void mgw_be_sha256_hex(const void *data, size_t len, char out[65]);

#endif
