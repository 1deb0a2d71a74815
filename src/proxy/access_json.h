/* access_json.h - the access line as one JSON object (log.access_format:
 * json), written by mgw_txn_access_log.  The members are listed in
 * doc/serve.md ("Access log"). */
#ifndef MGW_PROXY_ACCESS_JSON_H
#define MGW_PROXY_ACCESS_JSON_H

#include <stddef.h>

#include "proxy/txn-t.h"

/* Bounds of the client-controlled strings (input bytes, cut on a UTF-8
 * boundary). */
#define MGW_ACCESS_PATH_MAX 1024
#define MGW_ACCESS_NAME_MAX 128

/* Writes t's access line (status: what the client got, 0 if nothing) to
 * the access log.  t->x must still be there. */
void mgw_access_json(const struct mgw_txn *t, int status);

/* The trace id of a W3C traceparent value ("00-<32 hex>-<16 hex>-<2
 * hex>"): copies its 32 hex digits into out (33 bytes) and returns 0, or
 * -1 when v is not a valid traceparent. */
int mgw_access_trace_id(const char *v, char out[33]);

#endif
