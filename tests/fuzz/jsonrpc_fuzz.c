/* jsonrpc_fuzz.c - libFuzzer target for mgw_jrpc_classify: any byte string
 * must classify without crashing, leaking or tripping a sanitizer, and the
 * classification must be internally consistent (the views it exposes are
 * what the gateway routes on).  Then the gateway's reading,
 * mgw_jrpc_classify_lazy, against it: the same kind, error, strings and
 * views (json_equal), the same answers without a tree; and the skim under
 * it (mgw_json_skim) never says valid where the parse refuses. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/json.h"
#include "mcp/jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_str(const char *a, const char *b)
{
	if (!a != !b || (a && strcmp(a, b) != 0))
		abort();
}

static void same_json(json_t *a, json_t *b)
{
	if (!a != !b || (a && !json_equal(a, b)))
		abort();
}

/* The lazy classification of the same bytes answers as the eager one
 * (e), before and after its tree is built. */
static void lazy_same(const uint8_t *data, size_t size, size_t depth,
                      const struct mgw_jrpc_msg *e)
{
	static const char *const keys[] = {"requestState", "inputResponses",
	                                   "cursor", "taskId", "name"};
	static const char *const path[] = {"params", "_meta"};
	struct mgw_json_skim sk;
	struct mgw_json_error jerr;
	struct mgw_jrpc_msg l;
	json_t *v;

	if (mgw_json_skim(data, size, depth, path, 2, &sk) == 0) {
		v = mgw_json_parse_flags(data, size, depth,
		                         MGW_JSON_WIDE_NUMBERS, &jerr);
		if (!v && jerr.code != MGW_JSON_NOMEM)
			abort(); /* the skim passed what the parse refuses */
		json_decref(v);
	}
	if (mgw_jrpc_classify_lazy(data, size, depth, &l) != 0)
		return;
	if (l.kind != e->kind || l.error_code != e->error_code ||
	    strcmp(l.error_msg, e->error_msg) != 0 ||
	    mgw_jrpc_parsed(&l) != mgw_jrpc_parsed(e) ||
	    mgw_jrpc_has_meta(&l) != mgw_jrpc_has_meta(e))
		abort();
	same_str(l.method, e->method);
	same_str(l.name, e->name);
	same_str(l.task_id, e->task_id);
	same_str(l.meta_protocol_version, e->meta_protocol_version);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (mgw_jrpc_params_has(&l, keys[i]) !=
		    mgw_jrpc_params_has(e, keys[i]))
			abort();
	/* now the views, which build the tree */
	same_json(mgw_jrpc_id(&l), mgw_jrpc_id(e));
	same_json(mgw_jrpc_params(&l), mgw_jrpc_params(e));
	same_json(mgw_jrpc_meta(&l), mgw_jrpc_meta(e));
	same_json(mgw_jrpc_root(&l), mgw_jrpc_root(e));
	if (mgw_jrpc_tree_failed(&l))
		abort();
	mgw_jrpc_msg_deinit(&l);
}

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
		if (!m.method || !mgw_jrpc_id(&m) || !mgw_jrpc_root(&m))
			abort();
		if (!json_is_integer(mgw_jrpc_id(&m)) && !json_is_string(mgw_jrpc_id(&m)))
			abort();
		break;
	case MGW_JRPC_NOTIFICATION:
		if (!m.method || mgw_jrpc_id(&m) || m.name)
			abort();
		break;
	case MGW_JRPC_RESPONSE:
		if (m.method || m.name)
			abort();
		break;
	case MGW_JRPC_BATCH:
		if (!json_is_array(mgw_jrpc_root(&m)))
			abort();
		break;
	case MGW_JRPC_INVALID:
		if (m.error_code != MGW_JRPC_PARSE_ERROR &&
		    m.error_code != MGW_JRPC_INVALID_REQUEST)
			abort();
		if (m.method || m.name || mgw_jrpc_params(&m))
			abort();
		break;
	default:
		abort();
	}
	if (m.method && strlen(m.method) == 0)
		abort();
	if (m.meta_protocol_version && !mgw_jrpc_meta(&m))
		abort();
	/* Answer building must cope with whatever id was extracted. */
	body = mgw_jrpc_error_body(mgw_jrpc_id(&m), m.kind == MGW_JRPC_INVALID ?
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
			if (mgw_json_wide_number(mgw_jrpc_id(&m), &t1, &n1) &&
			    (!mgw_json_wide_number(mgw_jrpc_id(&again), &t2, &n2) ||
			     n1 != n2 || memcmp(t1, t2, n1) != 0))
				abort();
			mgw_jrpc_msg_deinit(&again);
		}
		free(body);
	}
	lazy_same(data, size, depth, &m);
	mgw_jrpc_msg_deinit(&m);
	return 0;
}
