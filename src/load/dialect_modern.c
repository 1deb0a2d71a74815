/* dialect_modern.c - the modern (2026-07-28) dialect of the load agent:
 * no handshake; every request declares its version, identity and
 * capabilities in params._meta and mirrors method, name and declared
 * tool parameters into SEP-2243 header fields, exactly as a conforming
 * client must (a gateway validating them would otherwise refuse the
 * load itself). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/headers.h"
#include "load/agent_impl.h"
#include "mcp/sep2243.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_INFO "io.modelcontextprotocol/clientInfo"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_TASKS "io.modelcontextprotocol/tasks"

/* Methods whose params name/uri is mirrored into Mcp-Name. */
static const char *name_member(const char *method)
{
	if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
		return "name";
	if (strcmp(method, "resources/read") == 0)
		return "uri";
	/* SEP-2663: so that intermediaries route to the task's replica */
	if (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
	    strcmp(method, "tasks/cancel") == 0)
		return "taskId";
	return NULL;
}

/* Renders an argument for a Mcp-Param-* field: strings as they are,
 * integers in decimal, booleans as true/false; NULL for anything the spec
 * does not mirror (null, absent, numbers with fractions, containers). */
static char *param_value(const json_t *v)
{
	char buf[32];

	if (json_is_string(v))
		return mgw_sep2243_encode(json_string_value(v), json_string_length(v));
	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(v));
		return strdup(buf);
	}
	if (json_is_boolean(v))
		return strdup(json_is_true(v) ? "true" : "false");
	return NULL;
}

/* Follows a JSON Pointer of object members ("/a/b") from args. */
static const json_t *pointer_get(const json_t *args, const char *ptr)
{
	char key[256];
	const json_t *v = args;

	while (v && *ptr == '/') {
		size_t n = 0;

		ptr++;
		while (*ptr && *ptr != '/' && n + 1 < sizeof(key)) {
			if (ptr[0] == '~' && ptr[1] == '1') {
				key[n++] = '/';
				ptr += 2;
			} else if (ptr[0] == '~' && ptr[1] == '0') {
				key[n++] = '~';
				ptr += 2;
			} else {
				key[n++] = *ptr++;
			}
		}
		key[n] = '\0';
		v = json_object_get(v, key);
	}
	return v;
}

static int param_fields(struct mgw_load_agent *a, struct ld_msg *m,
                        const char *tool, const json_t *args)
{
	json_t *decl = json_object_get(a->tool_headers, tool);
	size_t i;
	json_t *d;

	json_array_foreach(decl, i, d) {
		const char *h = json_string_value(json_array_get(d, 0));
		const char *ptr = json_string_value(json_array_get(d, 1));
		char name[300];
		char *v;
		int rc;

		if (!h || !ptr)
			continue;
		v = param_value(pointer_get(args, ptr));
		if (!v)
			continue;
		snprintf(name, sizeof(name), "Mcp-Param-%s", h);
		rc = mgw_headers_adds(&m->hdr, name, v);
		free(v);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The agent's params._meta for its current call (built on first use and
 * shared by every request after: no one changes it once built). */
static json_t *modern_meta(struct mgw_load_agent *a)
{
	int flow = a->spec ? (int)a->spec->flow : -1;
	size_t i = flow == MGW_LOAD_FLOW_TASK ? 1 : flow == MGW_LOAD_FLOW_MRTR ? 2 : 0;

	if (a->modern_meta[i])
		return a->modern_meta[i];
	/* a task call declares the tasks extension: only then may the
	 * server answer with a task (SEP-2663); an MRTR dialogue declares
	 * elicitation: servers may only ask for input the client declared */
	if (i == 1)
		a->modern_meta[i] = json_pack("{s:s, s:O, s:{s:{s:{}}}}", META_VERSION,
		                              a->modern_version, META_INFO,
		                              a->client_info, META_CAPS,
		                              "extensions", META_TASKS);
	else if (i == 2)
		a->modern_meta[i] = json_pack("{s:s, s:O, s:{s:{}}}", META_VERSION,
		                              a->modern_version, META_INFO,
		                              a->client_info, META_CAPS,
		                              "elicitation");
	else
		a->modern_meta[i] = json_pack("{s:s, s:O, s:{}}", META_VERSION,
		                              a->modern_version, META_INFO,
		                              a->client_info, META_CAPS);
	return a->modern_meta[i];
}

struct ld_msg *ld_modern_request(struct mgw_load_agent *a, const char *method,
                                 const char *name, json_t *params)
{
	const char *member = name_member(method);
	json_t *meta, *args = NULL;
	struct ld_msg *m;
	char *enc = NULL, *own = NULL;

	if (!params)
		params = json_object();
	meta = modern_meta(a);
	if (!params || !meta) {
		json_decref(params);
		return NULL;
	}
	if (json_object_set(params, "_meta", meta) != 0) {
		json_decref(params);
		return NULL;
	}
	if (member && !name) {
		/* a copy: the build below consumes params */
		name = own = strdup(json_string_value(json_object_get(params, member))
		                    ? json_string_value(json_object_get(params, member))
		                    : "");
		if (!own) {
			json_decref(params);
			return NULL;
		}
		if (!own[0])
			name = NULL;
	}
	/* kept past the build, which consumes params, for Mcp-Param-* */
	if (a->tool_headers && strcmp(method, "tools/call") == 0)
		args = json_incref(json_object_get(params, "arguments"));
	m = ld_msg_build(a, method, params, 0);
	if (!m) {
		json_decref(args);
		free(own);
		return NULL;
	}
	if (mgw_headers_adds(&m->hdr, "MCP-Protocol-Version", a->modern_version) ||
	    mgw_headers_adds(&m->hdr, "Mcp-Method", method))
		goto fail;
	if (member && name) {
		enc = mgw_sep2243_encode(name, strlen(name));
		if (!enc || mgw_headers_adds(&m->hdr, "Mcp-Name", enc) != 0)
			goto fail;
		free(enc);
		enc = NULL;
	}
	if (args && name && param_fields(a, m, name, args) != 0)
		goto fail;
	json_decref(args);
	free(own);
	return m;
fail:
	json_decref(args);
	free(own);
	free(enc);
	ld_msg_free(m);
	return NULL;
}

/* Walks a schema through "properties" chains only (the places where
 * x-mcp-header is valid) and records every declaration. */
static int walk_schema(const json_t *schema, char *ptr, size_t plen, size_t cap,
                       json_t *out, int depth)
{
	json_t *props = json_object_get(schema, "properties");
	const char *k;
	json_t *p;

	if (!json_is_object(props) || depth > 16)
		return 0;
	json_object_foreach(props, k, p) {
		json_t *hdr = json_object_get(p, "x-mcp-header");
		size_t n = plen;

		if (n + 1 >= cap)
			continue;
		ptr[n++] = '/';
		for (const char *c = k; *c && n + 2 < cap; c++) {
			if (*c == '~' || *c == '/') {
				ptr[n++] = '~';
				ptr[n++] = *c == '~' ? '0' : '1';
			} else {
				ptr[n++] = *c;
			}
		}
		ptr[n] = '\0';
		if (json_is_string(hdr) && json_string_length(hdr) > 0 &&
		    mgw_header_name_valid(json_string_value(hdr),
		                          json_string_length(hdr))) {
			if (json_array_append_new(out, json_pack("[s, s]",
			                          json_string_value(hdr), ptr)) != 0)
				return MGW_ENOMEM;
		}
		if (walk_schema(p, ptr, n, cap, out, depth + 1) != 0)
			return MGW_ENOMEM;
		ptr[plen] = '\0';
	}
	return 0;
}

void ld_modern_learn_tools(struct mgw_load_agent *a, const json_t *result)
{
	json_t *tools = json_object_get(result, "tools");
	json_t *map = json_object();
	size_t i;
	json_t *t;
	char ptr[512];

	if (!map)
		return;
	json_array_foreach(tools, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *decl = json_array();

		if (!name || !decl) {
			json_decref(decl);
			continue;
		}
		ptr[0] = '\0';
		if (walk_schema(json_object_get(t, "inputSchema"), ptr, 0,
		                sizeof(ptr), decl, 0) != 0 ||
		    json_array_size(decl) == 0) {
			json_decref(decl);
			continue;
		}
		json_object_set_new(map, name, decl);
	}
	json_decref(a->tool_headers);
	a->tool_headers = map;
}
