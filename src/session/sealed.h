/* sealed.h - the plaintext serialization inside sealed session tokens
 * (format in store_sealed.c), exposed so that the fuzz target can drive
 * the parser that runs after a token authenticated. */
#ifndef MGW_SESSION_SEALED_H
#define MGW_SESSION_SEALED_H

#include <stddef.h>

#include "session/session-t.h"

/* Serializes the sealed fields of s (times, pin, protocol version, replay
 * headers, initialize body).  Returns a malloc'd buffer and *len, or NULL
 * on no memory. */
unsigned char *mgw_sealed_plain_encode(const struct mgw_session *s,
                                       size_t *len);

/* Parses exactly one record from p/len (every field validated as the
 * setters do; trailing bytes refused).  Returns a new record without an
 * id, or NULL.  The encoding is canonical: encoding the result gives back
 * p/len byte for byte. */
struct mgw_session *mgw_sealed_plain_decode(const unsigned char *p,
                                            size_t len);

#endif
