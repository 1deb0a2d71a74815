/* chunked.h - strict decoder for the HTTP/1.1 chunked transfer coding
 * (RFC 9112 §7.1), shared by the server (request bodies, h1.c) and the
 * upstream client (response bodies, client_h1.c).
 *
 * http-parser as Debian builds it (non-strict) accepts any two bytes where
 * the CRLF after chunk data belongs, so "2\r\nokXX0\r\n\r\n" decodes to
 * "ok": a request-smuggling vector when a front proxy frames the same
 * bytes differently.  Both sides therefore stop http-parser after the head
 * and decode chunked bodies here, byte by byte, refusing anything that is
 * not exactly the RFC grammar. */
#ifndef MGW_HTTP_CHUNKED_H
#define MGW_HTTP_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#include "http/chunked-t.h"

/* Receives one span of decoded body bytes (n > 0, p valid only during the
 * call).  Returns 0 to go on, > 0 to make mgw_chunked_feed stop right
 * after this span (the consumer paused), or a negative MGW_E* that
 * mgw_chunked_feed returns as is (e.g. a body limit). */
typedef int (*mgw_chunked_data_cb)(void *arg, const unsigned char *p,
                                   size_t n);

/* Prepares ck for a new body.  max_trailer bounds the bytes of the trailer
 * section (field lines without their CRLFs). */
void mgw_chunked_init(struct mgw_chunked *ck, size_t max_trailer);

/* Decodes up to len bytes of chunked coding at p, handing data spans to
 * on_data(arg, ...).  *used is set to the bytes consumed: all of len,
 * unless the body ended (bytes after its final CRLF belong to whatever
 * follows, e.g. the next pipelined message) or on_data asked to stop.
 * Returns 0; MGW_EPROTO on a framing error (bad size line, missing CRLF
 * after data, malformed trailer line); MGW_ELIMIT when the trailer section
 * exceeds its limit; or on_data's negative code.  After MGW_EPROTO /
 * MGW_ELIMIT, mgw_chunked_error() says why and every later call fails the
 * same way; *used then counts the bytes before the offending one. */
int mgw_chunked_feed(struct mgw_chunked *ck, const void *p, size_t len,
                     size_t *used, mgw_chunked_data_cb on_data, void *arg);

/* 1 once the final CRLF of the body was consumed, else 0. */
int mgw_chunked_done(const struct mgw_chunked *ck);

/* Data bytes of the current chunk announced by its size line (or by the
 * size digits read so far, a lower bound) and not yet delivered; 0 outside
 * a chunk.  Lets a consumer refuse a chunk that cannot fit its limit as
 * soon as the size is known, instead of waiting for its data. */
uint64_t mgw_chunked_declared(const struct mgw_chunked *ck);

/* Static description of the framing error reported last, or NULL. */
const char *mgw_chunked_error(const struct mgw_chunked *ck);

#endif
