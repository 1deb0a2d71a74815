/* record_codec.h - the one binary encoding of a session record for the
 * stores that keep records outside the process: the plaintext of sealed
 * tokens (session/store_sealed.c) and the `d` field of Redis values
 * (modules/redis_store/).  Built on the length-prefixed fields of
 * util/bytes.h.
 *
 * Big-endian integers; strings and bodies length-prefixed, length 0 =
 * absent.  One core, two layouts; the FULL parts are marked:
 *   u8 format (1) | i64 created_s | i64 expires_s | u32 pin_gen |
 *   FULL: u8 flags (1 bound, 2 tools_known) | [32 principal, if bound] |
 *   u16+pin_url | u16+upstream_sid | u8+protocol_version |
 *   u8 n_headers, per header u8+name u16+value |
 *   u32+initialize body |
 *   FULL: u16+initialized body | u16 n_safe_tools, per tool u16+name
 * Neither layout holds the id or the version (a token is its own id; in
 * Redis they are the key and the hash field v).
 *
 * Decoding validates every field through the session setters, as for a
 * record the proxy builds, and accepts exactly one record (no trailing
 * bytes): what comes back from Redis or out of a token is not trusted
 * blindly.  The core layout is canonical (an accepted record encodes back
 * to the same bytes); the full layout is canonical but for the tool set,
 * which the setter sorts, deduplicates and trims of overlong names. */
#ifndef MGW_SESSION_RECORD_CODEC_H
#define MGW_SESSION_RECORD_CODEC_H

#include <stddef.h>

#include "session/session-t.h"

/* What an encoding carries besides the core. */
enum mgw_record_layout {
	/* Sealed tokens: the core only.  The principal is bound by the
	 * token's associated data, and a token is immutable, so the state a
	 * session gains later (the initialized body, tool annotations) is
	 * kept by the local cache, never sealed. */
	MGW_RECORD_CORE,
	/* Redis: the core plus the principal binding, the initialized body
	 * and the replay-safe tools. */
	MGW_RECORD_FULL,
};

/* Bytes of the core layout besides its variable fields (the fixed
 * integers and the length prefixes): no valid core record is shorter. */
#define MGW_RECORD_CORE_FIXED (1 + 8 + 8 + 4 + 2 + 2 + 1 + 1 + 4)

/* The length of s encoded in layout l. */
size_t mgw_record_size(const struct mgw_session *s,
                       enum mgw_record_layout l);

/* The longest encoding in layout l of a record the setters accept whose
 * initialize body is at most max_init bytes. */
size_t mgw_record_size_max(enum mgw_record_layout l, size_t max_init);

/* Encodes s (not its id, version, or the bookkeeping fields) in layout l.
 * Returns a malloc'd buffer of mgw_record_size() bytes and sets *len, or
 * NULL on no memory. */
unsigned char *mgw_record_encode(const struct mgw_session *s,
                                 enum mgw_record_layout l, size_t *len);

/* Decodes exactly one record in layout l from p/len.  Returns a new
 * record (one reference, no id, version 0), or NULL when p/len is not
 * one valid record or on no memory. */
struct mgw_session *mgw_record_decode(const unsigned char *p, size_t len,
                                      enum mgw_record_layout l);

#endif
