/* headers_up.h - the header list the gateway sends upstream.
 *
 * What reaches the upstream: every end-to-end header of the client's in
 * arrival order and unchanged, minus hop-by-hop fields (RFC 9110 §7.6.1
 * and those named in Connection), Expect (already answered by the server
 * layer) and, unless forwarded.trust_client, the client's Forwarded /
 * X-Forwarded-* / X-Real-IP; then Forwarded and X-Forwarded-For naming
 * the client when forwarded.add.  The client's authority is kept (Host /
 * :authority).  HTTP/2 Cookie fields are joined into one as RFC 9113
 * §8.2.3 asks of a translating intermediary. */
#ifndef MGW_PROXY_HEADERS_UP_H
#define MGW_PROXY_HEADERS_UP_H

#include "proxy/conf_serve-t.h"
#include "http/headers-t.h"

/* Builds in out (initialised by the caller) the list to send upstream
 * from the client's list in.  peer is "IP:PORT" / "[V6]:PORT", tls
 * whether the client used TLS, authority the client's Host (may be NULL),
 * h2 whether the client spoke HTTP/2 (Cookie joining).  Returns 0 or
 * MGW_ENOMEM. */
int mgw_proxy_build_headers(struct mgw_headers *out,
                            const struct mgw_headers *in,
                            const struct mgw_serve_conf *conf,
                            const char *peer, int tls, const char *authority,
                            int h2);

/* upstream_auth (the group's mode) applied to a list going upstream:
 * strip drops every Authorization and Proxy-Authorization field, static
 * replaces them by one "Authorization: credential", passthrough keeps
 * them.  Returns 0 when in
 * can go as it is (out untouched), 1 when out (initialised by the
 * caller) holds the list to send instead, or MGW_ENOMEM.  Every request
 * the gateway sends upstream goes through it (mgw_upool_send). */
int mgw_proxy_upstream_auth(struct mgw_headers *out,
                            const struct mgw_headers *in,
                            enum mgw_upstream_auth_conf mode,
                            const char *credential);

#endif
