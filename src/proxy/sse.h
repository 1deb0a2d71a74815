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
 * an empty value (which resets the client's last event id) is left alone. */
#ifndef MGW_PROXY_SSE_H
#define MGW_PROXY_SSE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <jansson.h>

/* Bytes the stamp puts in front of an upstream id. */
#define MGW_SSE_STAMP_LEN 9

/* Incremental stamper state for one stream.  Bytes go through unchanged
 * except `id` fields; at most a few bytes of a possible "id: " prefix are
 * held between calls (so events still pass as they arrive). */
struct mgw_sse_stamper {
	char stamp[MGW_SSE_STAMP_LEN + 1]; /* "xxxxxxxx." */
	unsigned state;                    /* position in a line (sse.c) */
	char held[4];                      /* "i", "id", "id:", "id: " */
	size_t n_held;
};

/* Prepares st for a new stream under pin tag. */
void mgw_sse_stamper_init(struct mgw_sse_stamper *st, uint32_t tag);

/* Feeds len bytes of the upstream's stream and appends what the client
 * gets to out.  Returns 0 or MGW_ENOMEM. */
int mgw_sse_stamp(struct mgw_sse_stamper *st, const void *data, size_t len,
                  struct evbuffer *out);

/* End of the upstream's stream: appends the bytes still held.  Returns 0
 * or MGW_ENOMEM. */
int mgw_sse_stamp_flush(struct mgw_sse_stamper *st, struct evbuffer *out);

/* Checks a Last-Event-ID value v/len against the current pin tag: 1 and
 * *rest / *rest_len naming the upstream's own id (inside v) when v is a
 * stamp of tag followed by a non-empty id; 0 otherwise (issued under
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
