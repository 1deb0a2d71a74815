/* policy.h - the per-route tool policy, decided without I/O: which lists
 * apply to a principal (the first rule of "policy:" whose "when" holds,
 * else the route's own), and whether they allow one JSON-RPC message.
 * Called by the check (check_policy.c) and, for the tools/list filter
 * (policy_filter.c), by the relay; tests/unit/proxy/policy_test.c tests
 * it as a table.  The rules (doc/security.md, "Tool policy"):
 * - deny wins over allow; an allow list that is present (even empty)
 *   refuses what it does not name; "*" as a whole entry names everything;
 * - methods are exact; tools/call is judged by params.name, prompts/get
 *   by params.name, resources/read by params.uri (an entry ending in '*'
 *   is a prefix there) - always the body's, never a header's;
 * - a notification is refused only when deny_methods names it exactly
 *   (allow lists and "*" do not reach notifications: a session needs
 *   notifications/initialized); a response is never refused. */
#ifndef MGW_PROXY_POLICY_H
#define MGW_PROXY_POLICY_H

#include "auth/principal-t.h"
#include "proxy/conf_serve-t.h"

/* 1 when route r has a tool policy (some list, or rules). */
int mgw_policy_active(const struct mgw_route_conf *r);

/* The lists that judge a request on r from principal p (NULL without
 * authentication, when only rules with an empty "when" hold): the first
 * rule whose when holds (every scope granted, every claim equal as
 * mgw_principal_claim writes it), else r's own lists.  Borrowed from r. */
const struct mgw_policy_lists *mgw_policy_select(const struct mgw_route_conf *r,
                                                 const struct mgw_principal *p);

/* The kind of name method carries (MGW_POL_TOOLS for tools/call,
 * MGW_POL_PROMPTS for prompts/get, MGW_POL_RESOURCES for resources/read),
 * or MGW_POL_METHODS when it carries none. */
enum mgw_policy_kind mgw_policy_name_kind(const char *method);

/* Whether l allows one message: method (NULL for a response: allowed),
 * notification (1 when the message has no id), name (params.name /
 * params.uri from the body, NULL when absent or not a string).  Returns
 * 1, or 0 with *why the kind of the list that refused (MGW_POL_METHODS:
 * the method itself). */
int mgw_policy_allows(const struct mgw_policy_lists *l, const char *method,
                      int notification, const char *name,
                      enum mgw_policy_kind *why);

#endif
