/* jsonrpc_fuzz.c - libFuzzer target for mgw_jrpc_classify: any byte string
 * must classify without crashing, leaking or tripping a sanitizer, and the
 * classification must be internally consistent (the views it exposes are
 * what the gateway routes on). */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/json.h"
#include "mcp/jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mgw_jrpc_msg m;
	size_t depth = 0, len;
	char *body;

	/* The first byte picks a small depth limit now and then, so the
	 * pre-scan boundary is exercised as well as the default. */
	if (size > 0 && data[0] < 8) {
		depth = data[0] + 1;
		data++;
		size--;
	}
	if (mgw_jrpc_classify(data, size, depth, &m) < 0)
		return 0;
	switch (m.kind) {
	case MGW_JRPC_REQUEST:
		if (!m.method || !m.id || !m.root)
			abort();
		if (!json_is_integer(m.id) && !json_is_string(m.id))
			abort();
		break;
	case MGW_JRPC_NOTIFICATION:
		if (!m.method || m.id || m.name)
			abort();
		break;
	case MGW_JRPC_RESPONSE:
		if (m.method || m.name)
			abort();
		break;
	case MGW_JRPC_BATCH:
		if (!json_is_array(m.root))
			abort();
		break;
	case MGW_JRPC_INVALID:
		if (m.error_code != MGW_JRPC_PARSE_ERROR &&
		    m.error_code != MGW_JRPC_INVALID_REQUEST)
			abort();
		if (m.method || m.name || m.params)
			abort();
		break;
	default:
		abort();
	}
	if (m.method && strlen(m.method) == 0)
		abort();
	if (m.meta_protocol_version && !m.meta)
		abort();
	/* Answer building must cope with whatever id was extracted. */
	body = mgw_jrpc_error_body(m.id, m.kind == MGW_JRPC_INVALID ?
	                           m.error_code : MGW_JRPC_INTERNAL_ERROR,
	                           m.kind == MGW_JRPC_INVALID ? m.error_msg : "x",
	                           NULL, &len);
	/* Only allocation failure may stop an answer from being built. */
	if (!body)
		abort();
	{
		struct mgw_jrpc_msg again;

		/* What we emit must itself classify as a response. */
		if (mgw_jrpc_classify(body, len, 0, &again) == 0) {
			const char *t1, *t2;
			size_t n1, n2;

			if (again.kind != MGW_JRPC_RESPONSE)
				abort();
			/* an id beyond 64 bits comes back as its exact text */
			if (mgw_json_wide_number(m.id, &t1, &n1) &&
			    (!mgw_json_wide_number(again.id, &t2, &n2) ||
			     n1 != n2 || memcmp(t1, t2, n1) != 0))
				abort();
			mgw_jrpc_msg_deinit(&again);
		}
		free(body);
	}
	mgw_jrpc_msg_deinit(&m);
	return 0;
}
