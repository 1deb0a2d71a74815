/* config-t.h - the typed, validated, immutable configuration snapshot of
 * mcpgw: every module's section in one struct.  Filled only by
 * mgw_config_load()/mgw_config_defaults(); never mutated afterwards (a
 * reload builds a new snapshot).  Each section's type lives with the
 * module that owns it; this header only assembles them. */
#ifndef MGW_CONF_CONFIG_T_H
#define MGW_CONF_CONFIG_T_H

#include <stddef.h>

#include "backend/conf_backend-t.h"
#include "core/config-t.h"
#include "core/log.h"
#include "http/server.h"
#include "proxy/conf_serve-t.h"

struct mgw_config {
	char *source;                   /* file it came from, or "<defaults>" */
	enum mgw_log_level log_level;   /* log.level (info) */
	int log_access;                 /* log.access: one line per proxied
	                                 * request at info (false) */
	enum mgw_access_format log_access_format; /* log.access_format (text) */
	char *log_access_file;          /* log.access_file: NULL = stderr */
	struct mgw_listener_conf *listeners; /* listeners (may be 0 entries) */
	size_t n_listeners;
	struct mgw_http_limits limits;  /* limits: + timeouts: sections */
	double shutdown_timeout;        /* timeouts.shutdown (10s) */
	int has_backend;                /* a backend: section was present */
	struct mgw_backend_conf backend;
	int has_serve;                  /* upstreams:/routes: present */
	struct mgw_serve_conf serve;
};

#endif
