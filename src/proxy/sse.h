/* sse.h - Server-Sent Events on the stateful path: stamping the session's
 * pin tag into the event ids relayed to a client, checking a client's
 * Last-Event-ID against the current pin, and finding the JSON-RPC response
 * in a whole SSE body.
 *
 * Why ids are stamped.  A legacy client resumes a broken stream with GET
 * and `Last-Event-ID`.  An event id only means something to the upstream
 * session that issued it; after a re-pin the new replica never saw it, and
 * passing it on would ask that replica to resume a stream it does not
 * have (at best ignored, at worst confused with one of its own ids).  So
 * every `id:` field going to the client becomes
 *
 *     <8 lowercase hex digits of mgw_session_pin_tag()> "." <upstream id>
 *
 * and a `Last-Event-ID` coming back is passed on (with the stamp removed)
 * only when its tag equals the session's current tag.  An `id` field with
 * an empty value (which resets the client's last event id) is left alone.
 *
 * Streams that answer a request.  The events of a POST's SSE answer are
 * stamped with the request's id as well, so that a client resuming that
 * stream after a re-pin (GET + Last-Event-ID) says which request it is
 * still waiting for:
 *
 *     <tag> "-" <base64url of the id's JSON text> "." <upstream id>
 *
 * The client carries the stamp -> request id map: nothing is remembered by
 * the gateway, so it holds across workers, restarts and gateways.  The id
 * is bounded (MGW_SSE_REQ_ID_MAX bytes of JSON text; a longer one gets the
 * plain stamp).  The gateway's own answer to such a resume (the request's
 * outcome) carries
 *
 *     <tag> "+" <base64url of the id's JSON text> "." "0"
 *
 * which says "answered": resumed again, it gets 204 (the SDKs read it as
 * the end of that stream).  base64url has no '.', so the first '.' after
 * the tag ends the request id, whatever the upstream's id holds. */
#ifndef MGW_PROXY_SSE_H
#define MGW_PROXY_SSE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <jansson.h>

/* Bytes the plain stamp puts in front of an upstream id. */
#define MGW_SSE_STAMP_LEN 9
/* Longest request id (its JSON text) carried in a stamp. */
#define MGW_SSE_REQ_ID_MAX 96
/* Longest stamp: tag, separator, base64url of the id, ".". */
#define MGW_SSE_STAMP_MAX (MGW_SSE_STAMP_LEN + (MGW_SSE_REQ_ID_MAX + 2) / 3 * 4 + 1)

/* What a stamp says (mgw_sse_stamp_parse). */
enum mgw_sse_stamp_kind {
	MGW_SSE_STAMP_PLAIN = 0,  /* "<tag>." : the standalone stream */
	MGW_SSE_STAMP_REQUEST,    /* "<tag>-<id>." : a request's answer */
	MGW_SSE_STAMP_ANSWERED,   /* "<tag>+<id>." : the gateway answered it */
};

struct mgw_sse_stamp_view {
	enum mgw_sse_stamp_kind kind;
	uint32_t tag;
	const char *req;          /* REQUEST, ANSWERED: base64url of the id */
	size_t req_len;
	const char *rest;         /* the upstream's id (may be empty) */
	size_t rest_len;
};

/* Incremental stamper state for one stream.  Bytes go through unchanged
 * except `id` fields; at most a few bytes of a possible "id: " prefix are
 * held between calls (so events still pass as they arrive). */
struct mgw_sse_stamper {
	char stamp[MGW_SSE_STAMP_MAX + 1]; /* "xxxxxxxx." or "xxxxxxxx-ID." */
	size_t stamp_len;
	unsigned state;                    /* position in a line (sse.c) */
	char held[4];                      /* "i", "id", "id:", "id: " */
	size_t n_held;
};

/* Prepares st for a new stream under pin tag. */
void mgw_sse_stamper_init(struct mgw_sse_stamper *st, uint32_t tag);

/* Prepares st for the SSE answer of the request whose id is id (a string
 * or integer): the stamp names the request too.  An id whose JSON text is
 * longer than MGW_SSE_REQ_ID_MAX (or NULL) gets the plain stamp. */
void mgw_sse_stamper_init_req(struct mgw_sse_stamper *st, uint32_t tag,
                              const json_t *id);

/* Reads a Last-Event-ID value: 1 and *out filled when v is one of the
 * three stamp forms (the REQUEST form needs a non-empty upstream id), 0
 * otherwise. */
int mgw_sse_stamp_parse(const char *v, size_t len,
                        struct mgw_sse_stamp_view *out);

/* The request id a REQUEST or ANSWERED stamp names (a new reference: a
 * string or integer), or NULL when it does not decode to one. */
json_t *mgw_sse_stamp_request_id(const struct mgw_sse_stamp_view *sv);

/* The ANSWERED stamp for the request id id under tag, into buf (at least
 * MGW_SSE_STAMP_MAX + 2 bytes).  Returns its length, 0 when id cannot be
 * carried. */
size_t mgw_sse_answered_id(uint32_t tag, const json_t *id, char *buf,
                           size_t size);

/* Feeds len bytes of the upstream's stream and appends what the client
 * gets to out.  Returns 0 or MGW_ENOMEM. */
int mgw_sse_stamp(struct mgw_sse_stamper *st, const void *data, size_t len,
                  struct evbuffer *out);

/* End of the upstream's stream: appends the bytes still held.  Returns 0
 * or MGW_ENOMEM. */
int mgw_sse_stamp_flush(struct mgw_sse_stamper *st, struct evbuffer *out);

/* Checks a Last-Event-ID value v/len against the current pin tag: 1 and
 * *rest / *rest_len naming the upstream's own id (inside v) when v is a
 * plain or request stamp of tag followed by a non-empty id; 0 otherwise (issued under
 * another pin, by another gateway configuration, or never by us). */
int mgw_sse_unstamp(const char *v, size_t len, uint32_t tag,
                    const char **rest, size_t *rest_len);

/* Finds the first JSON-RPC response (an object with "result" or "error")
 * among the events of a complete SSE body (the data lines of each event
 * joined with LF, as the SSE spec does).  Bodies, events and nesting are
 * bounded by the caller's collection limit and max_depth (0 = 64).
 * Returns the parsed response (a new reference) or NULL when there is
 * none or no memory. */
json_t *mgw_sse_find_response(const void *body, size_t len, size_t max_depth);

/* The JSON-RPC response of a complete upstream body: the body itself when
 * it is JSON, the first response event when is_sse.  NULL when there is
 * none.  Returns a new reference. */
json_t *mgw_sse_body_response(const void *body, size_t len, int is_sse,
                              size_t max_depth);

#endif
