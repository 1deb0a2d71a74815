/* policy_filter.c - removing denied tools from a tools/list answer
 * (policy_filter.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/errors.h"
#include "mcp/json.h"
#include "proxy/policy.h"
#include "proxy/policy_filter.h"
#include "proxy/route-t.h"

int mgw_policy_filter_wanted(const struct mgw_txn *t)
{
	return t->route && t->route->conf->filter_tools_list &&
	       mgw_policy_active(t->route->conf) && t->have_msg &&
	       t->msg.kind == MGW_JRPC_REQUEST &&
	       strcmp(t->msg.method, "tools/list") == 0;
}

/* Tool schemas nest deep; jansson's own parser bound. */
#define FILTER_MAX_DEPTH 2048

int mgw_policy_filter_tools(const struct mgw_policy_lists *l,
                            const void *body, size_t n, char **out,
                            size_t *outlen)
{
	struct mgw_json_error jerr;
	json_t *root, *tools;
	enum mgw_policy_kind why;
	size_t removed = 0;
	int rc = 0;

	*out = NULL;
	*outlen = 0;
	/* numbers of any size are read and written back as their text (a
	 * schema's "maximum": 1e400 must not leave the list unfiltered) */
	root = mgw_json_parse_flags(body, n, FILTER_MAX_DEPTH,
	                            MGW_JSON_WIDE_NUMBERS, &jerr);
	tools = json_object_get(json_object_get(root, "result"), "tools");
	if (!json_is_array(tools))
		goto done;
	for (size_t i = 0; i < json_array_size(tools);) {
		json_t *name = json_object_get(json_array_get(tools, i), "name");

		if (json_is_string(name) &&
		    !mgw_policy_allows(l, "tools/call", 0, json_string_value(name),
		                       &why)) {
			json_array_remove(tools, i);
			removed++;
		} else {
			i++;
		}
	}
	if (!removed)
		goto done;
	*out = mgw_json_dump(root, outlen);
	if (!*out) {
		rc = MGW_ENOMEM;
		goto done;
	}
	rc = 1;
done:
	json_decref(root);
	return rc;
}
