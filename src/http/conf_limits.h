/* conf_limits.h - the "limits:" section table (struct mgw_http_limits):
 * what one client may make the HTTP layer hold. */
#ifndef MGW_HTTP_CONF_LIMITS_H
#define MGW_HTTP_CONF_LIMITS_H

#include "core/cfgschema-t.h"

/* Its defaults are mgw_http_limits_default(); conf/config.c places it at
 * "limits:" (the HTTP timeouts live in "timeouts:" next to the
 * process's own). */
extern const struct mgw_cfg_section mgw_http_limits_section;

#endif
