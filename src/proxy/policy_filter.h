/* policy_filter.h - the opt-in tools/list filter of a route with a tool
 * policy (filter_tools_list: true): the one place the gateway rewrites an
 * upstream's body.  Only a 200 JSON answer the relay collects is
 * rewritten: with a Content-Length up to MGW_RELAY_CAPTURE_MAX, or
 * without one (chunked; the stateful handler never passes one on) until
 * it outgrows that bound, when it streams on unfiltered; an SSE answer
 * goes through unfiltered.  Filtering is cosmetic: a tools/call of a
 * denied tool is refused by the policy check whatever the list showed. */
#ifndef MGW_PROXY_POLICY_FILTER_H
#define MGW_PROXY_POLICY_FILTER_H

#include <stddef.h>

#include "proxy/conf_policy-t.h"
#include "proxy/txn-t.h"

/* The JSON-RPC response body (n bytes) with every tool of result.tools
 * that l would refuse on tools/call removed.  Returns 1 with a malloc'd
 * *out / *outlen (compact JSON, members in their order) when a tool was
 * removed, 0 when the body stays as it is (nothing denied, not a result
 * with a tools array, not parsable), or MGW_ENOMEM. */
int mgw_policy_filter_tools(const struct mgw_policy_lists *l,
                            const void *body, size_t n, char **out,
                            size_t *outlen);

/* 1 when t's answer is to be filtered: a tools/list request on a route
 * with filter_tools_list and a policy. */
int mgw_policy_filter_wanted(const struct mgw_txn *t);

#endif
