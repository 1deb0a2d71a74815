/* conf_sessions.h - the "sessions:" section table (struct
 * mgw_sessions_conf); the serve section places it at "sessions:". */
#ifndef MGW_SESSION_CONF_SESSIONS_H
#define MGW_SESSION_CONF_SESSIONS_H

#include "core/cfgschema-t.h"
#include "session/conf_sessions-t.h"

extern const struct mgw_cfg_section mgw_sessions_conf_section;

#endif
