/* conf_policy-t.h - a route's tool policy in the configuration (types
 * only): allow/deny lists of MCP methods and of tool, prompt and resource
 * names, and the rules that replace them for principals with given scopes
 * or claims.  Filled by the tables of conf_policy.c; judged by policy.c. */
#ifndef MGW_PROXY_CONF_POLICY_T_H
#define MGW_PROXY_CONF_POLICY_T_H

#include <stddef.h>

/* What a list names. */
enum mgw_policy_kind {
	MGW_POL_METHODS = 0,   /* allow_methods / deny_methods: MCP methods */
	MGW_POL_TOOLS,         /* allow_tools / deny_tools: tools/call name */
	MGW_POL_PROMPTS,       /* allow_prompts / deny_prompts: prompts/get name */
	MGW_POL_RESOURCES,     /* allow_resources / deny_resources:
	                        * resources/read uri (a trailing '*' makes
	                        * an entry a prefix) */
	MGW_POL_KINDS
};

struct mgw_policy_list {
	char **v;                 /* entries; "*" names everything */
	size_t n;
};

/* One set of lists (a route's, or one rule's). */
struct mgw_policy_lists {
	struct mgw_policy_list allow[MGW_POL_KINDS];
	struct mgw_policy_list deny[MGW_POL_KINDS];
	unsigned allow_given;     /* bit 1 << kind: that allow list was
	                           * written (an empty one allows nothing) */
	int any;                  /* some list was written */
};

/* One item of "policy:": when its condition holds, its lists replace the
 * route's for the request. */
struct mgw_policy_rule_conf {
	char **scopes;            /* when.scopes: all must be granted */
	size_t n_scopes;
	char **claims;            /* when.claims: name, value, ... (STRMAP);
	                           * each claim must equal its value */
	size_t n_claims;          /* strings: twice the claims */
	struct mgw_policy_lists lists;
};

#endif
