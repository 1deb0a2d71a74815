/* h1_scan.h - the strict HTTP/1 head scan shared by the server (request
 * heads, h1.c) and the upstream client (response heads, client_h1.c), as
 * chunked.h is shared for bodies.
 *
 * A lenient parser (http-parser as Debian builds it) folds obs-fold lines
 * into the value, drops control bytes from values, accepts spaces in
 * field names and bare LF line ends.  Two parsers that disagree on where
 * a head or a field ends let one message pass for two (request
 * smuggling, or a poisoned pooled connection on the client side).  So
 * both sides run every head through this raw-byte scanner, which finds
 * where the head ends, and read the head it accepted with h1_head.h. */
#ifndef MGW_HTTP_H1_SCAN_H
#define MGW_HTTP_H1_SCAN_H

#include <stddef.h>

#include "http/h1_scan-t.h"

/* Appends n bytes at p to the NUL-terminated buffer *buf of *len bytes and
 * *cap allocated, growing it by doubling.  Returns 0 or MGW_ENOMEM (the
 * buffer is then unchanged). */
int mgw_h1_buf_append(char **buf, size_t *len, size_t *cap, const void *p,
                      size_t n);

/* Prepares s for a new head of at most cap bytes.  lead_crlf != 0 skips
 * empty lines before the start line (RFC 9112 §2.2, for requests); with
 * 0 such a line is an error (responses). */
void mgw_h1_scan_reset(struct mgw_h1_scan *s, size_t cap, int lead_crlf);

/* Checks len raw head bytes at p and finds where the head ends: *feed is
 * how many of them belong to it (all of len while it goes on; s->in_head
 * is 0 once its final empty line was seen).  Returns 0; MGW_EPROTO on a
 * bare CR or LF, an obs-fold line (or a start line beginning blank), a
 * control byte other than HTAB, or a refused empty line; MGW_ELIMIT once
 * the head exceeds its cap.  After an error s must be reset. */
int mgw_h1_scan_feed(struct mgw_h1_scan *s, const unsigned char *p,
                     size_t len, size_t *feed);

#endif
