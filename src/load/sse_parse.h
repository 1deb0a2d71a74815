/* sse_parse.h - incremental Server-Sent Events parser (the WHATWG
 * "event stream" interpretation) for MCP responses answered as
 * text/event-stream.
 *
 * Bytes are fed as they arrive, split anywhere.  Lines end with CRLF, LF
 * or CR; a blank line dispatches the event.  "data:" lines are joined with
 * LF, "event:" names the type, "id:" sets the last event id (ignored when
 * it contains NUL), "retry:" and unknown fields are ignored, lines starting
 * with ':' are comments (keep-alives) and are only counted.  A leading
 * UTF-8 BOM is skipped.  An event with no data field is not dispatched.
 * A line longer than max_line or an event whose data exceeds max_event
 * fails the parser with MGW_ELIMIT: a server must not make the client
 * buffer without bound. */
#ifndef MGW_LOAD_SSE_PARSE_H
#define MGW_LOAD_SSE_PARSE_H

#include <stddef.h>

#include "load/sse_parse-t.h"

/* Default bounds: 64 KiB lines, 4 MiB of data per event. */
#define MGW_SSE_MAX_LINE (64u * 1024)
#define MGW_SSE_MAX_EVENT (4u * 1024 * 1024)

/* Prepares p for a new stream; 0 for a bound means its default.  No
 * memory is allocated until bytes arrive. */
void mgw_sse_init(struct mgw_sse_parser *p, size_t max_line,
                  size_t max_event);

/* Frees p's buffers; p may be initialised again afterwards. */
void mgw_sse_deinit(struct mgw_sse_parser *p);

/* Parses len bytes, calling on_event(arg, ev) for each complete event.
 * Returns 0 when all bytes were consumed; on_event's non-zero value as
 * soon as it returns one (the rest of buf is not parsed, and the parser
 * must not be fed again); MGW_ELIMIT when a bound is exceeded; MGW_ENOMEM.
 * After an error every later call returns the same error. */
int mgw_sse_feed(struct mgw_sse_parser *p, const void *buf, size_t len,
                 mgw_sse_event_cb on_event, void *arg);

/* End of stream.  Per the SSE rules an event not terminated by a blank
 * line is discarded; returns 1 when such a partial event (or a partial
 * line) was pending, 0 otherwise, so a caller can tell a stream that was
 * cut inside an event. */
int mgw_sse_finish(struct mgw_sse_parser *p);

#endif
