/* checks.h - the transport-level request checks of the reference server
 * as pure string functions (Accept, Content-Type, Origin), so they can be
 * unit-tested without a connection. */
#ifndef MGW_BACKEND_CHECKS_H
#define MGW_BACKEND_CHECKS_H

/* 1 when one Accept field value admits the media type "type/subtype":
 * an exact range, "type/ *" or "* / *" (case-insensitive, parameters
 * ignored), unless that range carries q=0 (RFC 9110 §12.5.1). */
int mgw_be_accept_admits(const char *accept, const char *type);

/* 1 when a Content-Type value names the media type (case-insensitive,
 * parameters such as charset ignored). */
int mgw_be_media_type_is(const char *content_type, const char *type);

/* 1 when an Origin value is a local origin: http or https with host
 * localhost, 127.0.0.1 or [::1] and an optional port.  Everything else,
 * including "null", is refused (transport spec: DNS rebinding). */
int mgw_be_origin_allowed(const char *origin);

#endif
