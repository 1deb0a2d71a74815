/* policy.c - the per-route tool policy's decisions (policy.h). */
#include "autoconf.h"

#include <string.h>

#include "auth/principal.h"
#include "proxy/policy.h"

int mgw_policy_active(const struct mgw_route_conf *r)
{
	return r->policy.any || r->n_policy_rules > 0;
}

static int when_holds(const struct mgw_policy_rule_conf *rule,
                      const struct mgw_principal *p)
{
	char buf[1024];

	if ((rule->n_scopes || rule->n_claims) && !p)
		return 0;
	for (size_t i = 0; i < rule->n_scopes; i++)
		if (!mgw_principal_has_scope(p, rule->scopes[i]))
			return 0;
	for (size_t i = 0; i + 1 < rule->n_claims; i += 2) {
		const char *v = mgw_principal_claim(p, rule->claims[i], buf,
		                                    sizeof(buf));

		if (!v || strcmp(v, rule->claims[i + 1]) != 0)
			return 0;
	}
	return 1;
}

const struct mgw_policy_lists *mgw_policy_select(const struct mgw_route_conf *r,
                                                 const struct mgw_principal *p)
{
	for (size_t i = 0; i < r->n_policy_rules; i++)
		if (when_holds(&r->policy_rules[i], p))
			return &r->policy_rules[i].lists;
	return &r->policy;
}

enum mgw_policy_kind mgw_policy_name_kind(const char *method)
{
	if (!method)
		return MGW_POL_METHODS;
	if (strcmp(method, "tools/call") == 0)
		return MGW_POL_TOOLS;
	if (strcmp(method, "prompts/get") == 0)
		return MGW_POL_PROMPTS;
	if (strcmp(method, "resources/read") == 0)
		return MGW_POL_RESOURCES;
	return MGW_POL_METHODS;
}

/* Whether list names s: "*" names everything; with prefix, an entry
 * ending in '*' names what starts with the rest. */
static int names(const struct mgw_policy_list *list, const char *s, int prefix)
{
	for (size_t i = 0; i < list->n; i++) {
		const char *e = list->v[i];
		size_t n = strlen(e);

		if (strcmp(e, "*") == 0 || strcmp(e, s) == 0)
			return 1;
		if (prefix && n > 1 && e[n - 1] == '*' && strncmp(s, e, n - 1) == 0)
			return 1;
	}
	return 0;
}

static int names_exactly(const struct mgw_policy_list *list, const char *s)
{
	for (size_t i = 0; i < list->n; i++)
		if (strcmp(list->v[i], s) == 0)
			return 1;
	return 0;
}

/* deny wins; a present allow list refuses what it does not name */
static int judge(const struct mgw_policy_lists *l, enum mgw_policy_kind k,
                 const char *s)
{
	int prefix = k == MGW_POL_RESOURCES;

	if (names(&l->deny[k], s, prefix))
		return 0;
	if ((l->allow_given & (1u << k)) && !names(&l->allow[k], s, prefix))
		return 0;
	return 1;
}

int mgw_policy_allows(const struct mgw_policy_lists *l, const char *method,
                      int notification, const char *name,
                      enum mgw_policy_kind *why)
{
	enum mgw_policy_kind k;

	*why = MGW_POL_METHODS;
	if (!method)
		return 1;
	if (notification)
		return !names_exactly(&l->deny[MGW_POL_METHODS], method);
	if (!judge(l, MGW_POL_METHODS, method))
		return 0;
	k = mgw_policy_name_kind(method);
	if (k == MGW_POL_METHODS)
		return 1;
	*why = k;
	return judge(l, k, name ? name : "");
}
