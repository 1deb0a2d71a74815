/* serve_check.h - what `mcpgw serve` refuses at start that the snapshot
 * alone decides, before anything is bound: one check shared by serve
 * itself and `mcpgw check-config`, so that a file check-config passes is
 * a file serve starts with (the listeners are checked by the functions
 * every server shares: mgw_listen_specs, mgw_serve_listeners_check). */
#ifndef MGW_PROXY_SERVE_CHECK_H
#define MGW_PROXY_SERVE_CHECK_H

#include <stddef.h>

#include "conf/config-t.h"

/* Checks cfg (flags applied): at least one upstream group ("no upstream:
 * give --upstream URL or an upstreams: section"), and the groups and
 * routes build as serve builds them (an upstream TLS CA file that does
 * not load, say).  Returns 0, MGW_EINVAL with the reason in err, or
 * MGW_ENOMEM. */
int mgw_serve_check(const struct mgw_config *cfg, char *err, size_t errlen);

#endif
