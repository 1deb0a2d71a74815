/* conf_backend.h - the "backend:" section table and the parsers of its
 * enumerations, which the command line shares. */
#ifndef MGW_BACKEND_CONF_BACKEND_H
#define MGW_BACKEND_CONF_BACKEND_H

#include "backend/conf_backend-t.h"
#include "core/cfgschema-t.h"

/* The section (struct mgw_backend_conf); conf/config.c places it at
 * "backend:". */
extern const struct mgw_cfg_section mgw_backend_conf_section;

/* Parsers of the enumerations shared with command-line flags.
 * Return 0 or MGW_EINVAL. */
int mgw_config_parse_era(const char *s, enum mgw_era_conf *out);
int mgw_config_parse_state(const char *s, enum mgw_state_conf *out);
int mgw_config_parse_sse(const char *s, enum mgw_sse_conf *out);
int mgw_config_parse_tasks(const char *s, enum mgw_tasks_conf *out);

/* The spelling of each value as the parsers accept it (static strings). */
const char *mgw_config_era_name(enum mgw_era_conf v);
const char *mgw_config_state_name(enum mgw_state_conf v);
const char *mgw_config_sse_name(enum mgw_sse_conf v);
const char *mgw_config_tasks_name(enum mgw_tasks_conf v);

#endif
