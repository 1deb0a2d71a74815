/* conf_policy.h - the keys of a route's tool policy (conf_policy-t.h):
 * allow_methods, deny_methods, allow_tools, deny_tools, allow_prompts,
 * deny_prompts, allow_resources, deny_resources (at the route and in
 * each rule of "policy:"), and the rules' "when:". */
#ifndef MGW_PROXY_CONF_POLICY_H
#define MGW_PROXY_CONF_POLICY_H

#include <stddef.h>

#include "core/cfgschema-t.h"
#include "proxy/conf_policy-t.h"

/* An entry of a list: not empty, at most 1024 bytes, no control
 * characters (an mgw_cfg_string_check). */
int mgw_policy_check_entry(const char *s, char *why, size_t whylen);

#define MGW_POLICY_FIELD_(T, M, K, D, I)                                   \
	{.key = K, .type = MGW_CFG_STRLIST,                                 \
	 .off = offsetof(T, M.D[I].v),                                      \
	 .aux = offsetof(T, M.D[I].n),                                      \
	 .check = mgw_policy_check_entry}
/* The eight list fields of a struct mgw_policy_lists at member M of
 * struct type T, for a section's field table. */
#define MGW_POLICY_FIELDS(T, M)                                              \
	MGW_POLICY_FIELD_(T, M, "allow_methods", allow, MGW_POL_METHODS), \
	MGW_POLICY_FIELD_(T, M, "deny_methods", deny, MGW_POL_METHODS),   \
	MGW_POLICY_FIELD_(T, M, "allow_tools", allow, MGW_POL_TOOLS),     \
	MGW_POLICY_FIELD_(T, M, "deny_tools", deny, MGW_POL_TOOLS),       \
	MGW_POLICY_FIELD_(T, M, "allow_prompts", allow, MGW_POL_PROMPTS), \
	MGW_POLICY_FIELD_(T, M, "deny_prompts", deny, MGW_POL_PROMPTS),   \
	MGW_POLICY_FIELD_(T, M, "allow_resources", allow, MGW_POL_RESOURCES), \
	MGW_POLICY_FIELD_(T, M, "deny_resources", deny, MGW_POL_RESOURCES)

/* Records in l which lists the section of sc had (allow_given, any);
 * for a section check.  Returns 0. */
int mgw_policy_lists_seen(const struct mgw_cfg_scope *sc,
                          struct mgw_policy_lists *l);

/* One item of "policy:" (struct mgw_policy_rule_conf). */
extern const struct mgw_cfg_section mgw_policy_rule_section;

#endif
