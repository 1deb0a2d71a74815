/* conf_policy.c - the tables of a route's tool policy: the allow/deny
 * lists (placed in the route's own table by MGW_POLICY_FIELDS) and the
 * rules of "policy:" with their "when:". */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "proxy/conf_policy.h"

static const char *const allow_keys[MGW_POL_KINDS] = {
	"allow_methods", "allow_tools", "allow_prompts", "allow_resources",
};
static const char *const deny_keys[MGW_POL_KINDS] = {
	"deny_methods", "deny_tools", "deny_prompts", "deny_resources",
};

int mgw_policy_check_entry(const char *s, char *why, size_t whylen)
{
	size_t n = strlen(s);

	if (n == 0 || n > 1024) {
		snprintf(why, whylen, "must be 1 to 1024 bytes long");
		return -1;
	}
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			snprintf(why, whylen, "must not hold control characters");
			return -1;
		}
	}
	return 0;
}

int mgw_policy_lists_seen(const struct mgw_cfg_scope *sc,
                          struct mgw_policy_lists *l)
{
	l->allow_given = 0;
	l->any = 0;
	for (int k = 0; k < MGW_POL_KINDS; k++) {
		if (mgw_cfg_scope_value(sc, allow_keys[k])) {
			l->allow_given |= 1u << k;
			l->any = 1;
		}
		if (mgw_cfg_scope_value(sc, deny_keys[k]))
			l->any = 1;
	}
	return 0;
}

#define P(member) MGW_CFG_AT(struct mgw_policy_rule_conf, member)
static const struct mgw_cfg_field when_fields[] = {
	{.key = "scopes", .type = MGW_CFG_STRLIST,
	 .off = offsetof(struct mgw_policy_rule_conf, scopes),
	 .aux = offsetof(struct mgw_policy_rule_conf, n_scopes),
	 .check = mgw_cfg_check_nonempty},
	{.key = "claims", .type = MGW_CFG_STRMAP,
	 .off = offsetof(struct mgw_policy_rule_conf, claims),
	 .aux = offsetof(struct mgw_policy_rule_conf, n_claims)},
};
#undef P
static const struct mgw_cfg_section when_section = {
	.size = sizeof(struct mgw_policy_rule_conf),
	.fields = when_fields, .nfields = MGW_CFG_COUNT(when_fields),
};

/* A rule without lists would deny nothing and allow everything for the
 * principals it matches: almost certainly a mistake. */
static int check_rule(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                      void *obj)
{
	struct mgw_policy_rule_conf *r = obj;

	mgw_policy_lists_seen(sc, &r->lists);
	if (!r->lists.any)
		return mgw_cfg_fail(c, sc->map, NULL,
		                    "a policy rule needs at least one allow_* or "
		                    "deny_* list");
	return 0;
}

static const struct mgw_cfg_field rule_fields[] = {
	{.key = "when", .type = MGW_CFG_SECTION, .off = 0, .sub = &when_section},
	MGW_POLICY_FIELDS(struct mgw_policy_rule_conf, lists),
};
const struct mgw_cfg_section mgw_policy_rule_section = {
	.size = sizeof(struct mgw_policy_rule_conf),
	.fields = rule_fields, .nfields = MGW_CFG_COUNT(rule_fields),
	.check = check_rule,
};
