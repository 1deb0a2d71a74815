/* tools_test.c - unit tests for src/backend/tools.c: the tool list is what
 * clients validate (schemas, annotations), and the x-mcp-header
 * declarations agree with the Mcp-Param-* table used for SEP-2243
 * validation. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "backend/backend.h"

static json_t *tool(json_t *list, const char *name)
{
	size_t i;
	json_t *t;

	json_array_foreach(list, i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
			return t;
	return NULL;
}

static void test_every_tool_is_well_formed(void **state)
{
	json_t *list = mgw_be_tools_list(NULL, MGW_BE_MODERN), *t;
	static const char *const names[] = {
		"echo", "add", "sleep", "whoami", "counter_create",
		"counter_increment", "notify", "list_changed", "echo_region",
	};
	size_t i;

	(void)state;
	assert_true(json_is_array(list));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_non_null(tool(list, names[i]));
	json_array_foreach(list, i, t) {
		json_t *schema = json_object_get(t, "inputSchema");
		json_t *ann = json_object_get(t, "annotations");
		json_t *req = json_object_get(schema, "required");
		size_t j;
		json_t *r;

		assert_true(json_is_string(json_object_get(t, "description")));
		assert_true(json_is_object(schema));
		assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
		assert_true(json_is_boolean(json_object_get(ann, "readOnlyHint")));
		assert_true(json_is_boolean(json_object_get(ann, "idempotentHint")));
		/* Every required argument is a declared property. */
		json_array_foreach(req, j, r)
			assert_non_null(json_object_get(json_object_get(schema, "properties"),
			                                json_string_value(r)));
	}
	json_decref(list);
}

static void test_annotations(void **state)
{
	json_t *list = mgw_be_tools_list(NULL, MGW_BE_LEGACY);
	static const char *const pure[] = {"echo", "add", "whoami", "sleep"};
	static const char *const stateful[] = {"counter_create", "counter_increment"};

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		json_t *a = json_object_get(tool(list, pure[i]), "annotations");
		assert_true(json_is_true(json_object_get(a, "readOnlyHint")));
		assert_true(json_is_true(json_object_get(a, "idempotentHint")));
	}
	for (size_t i = 0; i < 2; i++) {
		json_t *a = json_object_get(tool(list, stateful[i]), "annotations");
		assert_true(json_is_false(json_object_get(a, "readOnlyHint")));
		assert_true(json_is_false(json_object_get(a, "idempotentHint")));
	}
	json_decref(list);
}

/* Each x-mcp-header in a schema has its entry in the validation table,
 * and the table names nothing the schemas do not declare. */
static void test_header_params_match_schemas(void **state)
{
	json_t *list = mgw_be_tools_list(NULL, MGW_BE_MODERN), *t;
	size_t i, declared = 0, tabled = 0;

	(void)state;
	json_array_foreach(list, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *props = json_object_get(json_object_get(t, "inputSchema"), "properties");
		size_t n = 0;
		const struct mgw_sep2243_param *p = mgw_be_tool_header_params(name, &n);
		const char *prop;
		json_t *def;

		tabled += n;
		json_object_foreach(props, prop, def) {
			json_t *h = json_object_get(def, "x-mcp-header");
			int found = 0;
			if (!h)
				continue;
			declared++;
			/* Primitive, non-number types only (tools spec). */
			assert_string_equal(json_string_value(json_object_get(def, "type")), "string");
			for (size_t k = 0; k < n; k++)
				if (strcasecmp(p[k].header, json_string_value(h)) == 0 &&
				    strcmp(p[k].param, prop) == 0)
					found = 1;
			assert_true(found);
		}
	}
	assert_true(declared >= 1);
	assert_int_equal(declared, tabled);
	assert_null(mgw_be_tool_header_params("echo", &i));
	assert_int_equal(i, 0);
	assert_null(mgw_be_tool_header_params(NULL, &i));
	json_decref(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_tool_is_well_formed),
		cmocka_unit_test(test_annotations),
		cmocka_unit_test(test_header_params_match_schemas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
