/* conf_auth.h - the "auth:" section (conf_auth-t.h). */
#ifndef MGW_AUTH_CONF_AUTH_H
#define MGW_AUTH_CONF_AUTH_H

#include "auth/conf_auth-t.h"
#include "core/cfgschema-t.h"

extern const struct mgw_cfg_section mgw_auth_conf_section;

/* The audience tokens must name: audience, else resource. */
const char *mgw_auth_audience(const struct mgw_auth_conf *a);

#endif
