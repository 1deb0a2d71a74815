/* cfgschema_test.c - unit tests for src/core/cfgschema.c with a schema of
 * its own, so every type, width, hook and path form is exercised whether
 * or not the mcpgw schema uses it yet. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cfgschema.h"
#include "core/cfgtree.h"
#include "core/errors.h"

enum color { RED = 1, GREEN = 2 };

struct item {
	char *name;
	int on;
	uint8_t weight;
};

struct opts {
	uint16_t port;
	size_t bytes;
	double wait;
	enum color color;
	int64_t big;
	int8_t small;
};

struct doc {
	int flag;
	char *label;
	struct opts opts;
	int has_opts;
	struct item *items;
	size_t n_items;
	char **tags;
	size_t n_tags;
	char **labels;             /* STRMAP: key, value, ... */
	size_t n_labels;
	int init_ran;
	int checks;
};

static const struct mgw_cfg_enum colors[] = {
	{"red", RED}, {"green", GREEN}, {NULL, 0},
};

static int check_no_x(const char *s, char *why, size_t whylen)
{
	if (!strchr(s, 'x'))
		return 0;
	snprintf(why, whylen, "must not contain 'x'");
	return -1;
}

static const struct mgw_cfg_field item_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING, MGW_CFG_AT(struct item, name),
	 .flags = MGW_CFG_REQUIRED, .check = check_no_x},
	{.key = "on", .type = MGW_CFG_BOOL, MGW_CFG_AT(struct item, on),
	 .def = "true"},
	{.key = "weight", .type = MGW_CFG_INT, MGW_CFG_AT(struct item, weight),
	 .min = 0, .max = 255, .def = "7"},
};
static const struct mgw_cfg_section item_sec = {
	.size = sizeof(struct item), .fields = item_fields, .nfields = 3,
};

static void opts_init(void *obj)
{
	struct opts *o = obj;

	o->port = 1111; /* overridden by the field default below */
	o->bytes = 4096; /* kept: the field has no default */
}

static const struct mgw_cfg_field opts_fields[] = {
	{.key = "port", .type = MGW_CFG_INT, MGW_CFG_AT(struct opts, port),
	 .min = 1, .max = 65535, .def = "8080"},
	{.key = "bytes", .type = MGW_CFG_SIZE, MGW_CFG_AT(struct opts, bytes),
	 .min = 1, .max = 4LL << 30},
	{.key = "wait", .type = MGW_CFG_DURATION, MGW_CFG_AT(struct opts, wait),
	 .dmin = 0.5, .dmax = 7200, .def = "2m"},
	{.key = "color", .type = MGW_CFG_ENUM, MGW_CFG_AT(struct opts, color),
	 .enums = colors, .def = "green"},
	{.key = "big", .type = MGW_CFG_INT, MGW_CFG_AT(struct opts, big),
	 .min = INT64_MIN, .max = INT64_MAX, .def = "-1"},
	{.key = "small", .type = MGW_CFG_INT, MGW_CFG_AT(struct opts, small),
	 .min = -128, .max = 127, .def = "-3"},
};
static const struct mgw_cfg_section opts_sec = {
	.size = sizeof(struct opts), .fields = opts_fields, .nfields = 6,
	.init = opts_init,
};

static unsigned seen_label_line; /* where the check found "label" */

/* Cross-field rule: a label "bad" is refused at the label's node. */
static int doc_check(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                     void *obj)
{
	struct doc *d = obj;

	const struct mgw_cfg_node *label = mgw_cfg_scope_value(sc, "label");

	d->checks++;
	seen_label_line = label ? label->line : 0;
	if (d->label && strcmp(d->label, "bad") == 0)
		return mgw_cfg_fail(c, label, "label", "is %s", "bad");
	return 0;
}

static const struct mgw_cfg_field doc_fields[] = {
	{.key = "flag", .type = MGW_CFG_BOOL, MGW_CFG_AT(struct doc, flag)},
	{.key = "label", .type = MGW_CFG_STRING, MGW_CFG_AT(struct doc, label),
	 .def = "none"},
	{.key = "opts", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct doc, opts), .aux = offsetof(struct doc, has_opts),
	 .flags = MGW_CFG_PRESENCE, .sub = &opts_sec},
	{.key = "items", .type = MGW_CFG_LIST,
	 .off = offsetof(struct doc, items),
	 .aux = offsetof(struct doc, n_items), .sub = &item_sec},
	{.key = "tags", .type = MGW_CFG_STRLIST,
	 .off = offsetof(struct doc, tags),
	 .aux = offsetof(struct doc, n_tags), .check = check_no_x},
	{.key = "labels", .type = MGW_CFG_STRMAP,
	 .off = offsetof(struct doc, labels),
	 .aux = offsetof(struct doc, n_labels), .check = check_no_x},
};
static const struct mgw_cfg_section doc_sec = {
	.size = sizeof(struct doc), .fields = doc_fields, .nfields = 6,
	.check = doc_check,
};

static char err[512];

/* Parses text and applies it over defaults; returns the apply result. */
static int load(const char *text, struct doc *d)
{
	struct mgw_cfg_ctx c = {.name = "s.yaml", .err = err,
	                        .errlen = sizeof(err)};
	struct mgw_cfg_node *root = NULL;
	int rc;

	memset(d, 0, sizeof(*d));
	mgw_cfg_defaults(&doc_sec, d);
	err[0] = '\0';
	assert_int_equal(mgw_cfg_tree_parse("s.yaml", text, strlen(text), &root,
	                                    err, sizeof(err)), 0);
	assert_non_null(root);
	rc = mgw_cfg_apply(&c, &doc_sec, d, root);
	assert_int_equal(c.plen, 0); /* the path is unwound after errors too */
	mgw_cfg_tree_free(root);
	return rc;
}

/* Loads a document that must be valid, naming the error if it is not. */
#define LOAD_OK(text, d)                                                  \
	do {                                                              \
		if (load(text, d) != 0)                                   \
			fail_msg("unexpected error: %s", err);            \
	} while (0)

static void expect_error(const char *text, const char *msg)
{
	struct doc d;

	assert_int_equal(load(text, &d), MGW_EINVAL);
	assert_string_equal(err, msg);
	mgw_cfg_release(&doc_sec, &d); /* partial values must be freeable */
}

/* mgw_cfg_equal: every type, nested sections, presence, list items. */
static void test_equal(void **state)
{
	static const char *base = "flag: true\nlabel: a\nopts: {port: 9, "
	                          "wait: 1s, color: red}\nitems: [{name: n1}, "
	                          "{name: n2, weight: 3}]\n";
	static const char *differ[] = {
		"flag: false\nlabel: a\nopts: {port: 9, wait: 1s, color: red}\n"
		"items: [{name: n1}, {name: n2, weight: 3}]\n",
		"flag: true\nlabel: b\nopts: {port: 9, wait: 1s, color: red}\n"
		"items: [{name: n1}, {name: n2, weight: 3}]\n",
		"flag: true\nlabel: a\nopts: {port: 10, wait: 1s, color: red}\n"
		"items: [{name: n1}, {name: n2, weight: 3}]\n",
		"flag: true\nlabel: a\nopts: {port: 9, wait: 2s, color: red}\n"
		"items: [{name: n1}, {name: n2, weight: 3}]\n",
		"flag: true\nlabel: a\nopts: {port: 9, wait: 1s, color: green}\n"
		"items: [{name: n1}, {name: n2, weight: 3}]\n",
		"flag: true\nlabel: a\nopts: {port: 9, wait: 1s, color: red}\n"
		"items: [{name: n1}, {name: n2, weight: 4}]\n",
		"flag: true\nlabel: a\nopts: {port: 9, wait: 1s, color: red}\n"
		"items: [{name: n1}]\n",
		"flag: true\nlabel: a\nitems: [{name: n1}, {name: n2, weight: 3}]\n",
	};
	struct doc a, b;

	(void)state;
	LOAD_OK(base, &a);
	LOAD_OK(base, &b);
	assert_true(mgw_cfg_equal(&doc_sec, &a, &b));
	mgw_cfg_release(&doc_sec, &b);
	for (size_t i = 0; i < sizeof(differ) / sizeof(differ[0]); i++) {
		LOAD_OK(differ[i], &b);
		if (mgw_cfg_equal(&doc_sec, &a, &b))
			fail_msg("case %zu compared equal", i);
		assert_false(mgw_cfg_equal(&doc_sec, &b, &a));
		mgw_cfg_release(&doc_sec, &b);
	}
	mgw_cfg_release(&doc_sec, &a);
}

static void test_defaults(void **state)
{
	struct doc d = {0};

	(void)state;
	mgw_cfg_defaults(&doc_sec, &d);
	assert_int_equal(d.flag, 0);
	assert_string_equal(d.label, "none");
	assert_int_equal(d.opts.port, 8080);
	assert_int_equal(d.opts.bytes, 4096);
	assert_true(d.opts.wait == 120.0);
	assert_int_equal(d.opts.color, GREEN);
	assert_true(d.opts.big == -1);
	assert_int_equal(d.opts.small, -3);
	assert_int_equal(d.has_opts, 0);
	assert_null(d.items);
	assert_int_equal(d.n_items, 0);
	mgw_cfg_release(&doc_sec, &d);
	assert_null(d.label);
}

static void test_all_types(void **state)
{
	struct doc d;

	(void)state;
	LOAD_OK("flag: yes\n"
	        "label: 'hello world'\n"
	        "opts:\n"
	        "  port: 65535\n"
	        "  bytes: 4GiB\n"
	        "  wait: 750ms\n"
	        "  color: red\n"
	        "  big: -9223372036854775808\n"
	        "  small: -128\n"
	        "items:\n"
	        "  - name: a\n"
	        "  - {name: b, on: off, weight: 255}\n",
	        &d);
	assert_int_equal(d.flag, 1);
	assert_string_equal(d.label, "hello world");
	assert_int_equal(d.has_opts, 1);
	assert_int_equal(d.opts.port, 65535);
	assert_true(d.opts.bytes == (size_t)4 << 30);
	assert_true(d.opts.wait == 0.75);
	assert_int_equal(d.opts.color, RED);
	assert_true(d.opts.big == INT64_MIN);
	assert_int_equal(d.opts.small, -128);
	assert_int_equal(d.n_items, 2);
	assert_string_equal(d.items[0].name, "a");
	assert_int_equal(d.items[0].on, 1);      /* item default */
	assert_int_equal(d.items[0].weight, 7);  /* item default */
	assert_string_equal(d.items[1].name, "b");
	assert_int_equal(d.items[1].on, 0);
	assert_int_equal(d.items[1].weight, 255);
	assert_int_equal(d.checks, 1);
	assert_int_equal(seen_label_line, 2);
	mgw_cfg_release(&doc_sec, &d);
	assert_null(d.items);
	assert_int_equal(d.n_items, 0);
}

static void test_bool_spellings(void **state)
{
	static const struct { const char *doc; int v; } ok[] = {
		{"flag: true", 1}, {"flag: false", 0}, {"flag: True", 1},
		{"flag: FALSE", 0}, {"flag: on", 1}, {"flag: no", 0},
	};
	struct doc d;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		LOAD_OK(ok[i].doc, &d);
		assert_int_equal(d.flag, ok[i].v);
		mgw_cfg_release(&doc_sec, &d);
	}
	expect_error("flag: \"true\"", "s.yaml:1:7: flag: expected a boolean "
	             "(true or false), got a quoted string");
	expect_error("flag: 1", "s.yaml:1:7: flag: expected a boolean "
	             "(true or false), got '1'");
	expect_error("flag:", "s.yaml:1:6: flag: expected a boolean "
	             "(true or false), got null");
}

static void test_empty_and_null_sections(void **state)
{
	struct doc d;

	(void)state;
	LOAD_OK("opts:\nitems:\n", &d);
	assert_int_equal(d.has_opts, 1);
	assert_int_equal(d.opts.port, 8080);
	assert_int_equal(d.n_items, 0);
	assert_int_equal(seen_label_line, 0); /* absent key: no node */
	mgw_cfg_release(&doc_sec, &d);
	LOAD_OK("items: []\n", &d);
	assert_int_equal(d.has_opts, 0);
	assert_int_equal(d.n_items, 0);
	mgw_cfg_release(&doc_sec, &d);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("opts: {port: 0}", "s.yaml:1:14: opts.port: out of range: "
	             "must be between 1 and 65535");
	expect_error("opts: {port: 65536}", "s.yaml:1:14: opts.port: out of "
	             "range: must be between 1 and 65535");
	expect_error("opts: {bytes: 0}", "s.yaml:1:15: opts.bytes: out of range: "
	             "must be between 1 byte and 4GiB");
	expect_error("opts: {bytes: 5G}", "s.yaml:1:15: opts.bytes: out of "
	             "range: must be between 1 byte and 4GiB");
	expect_error("opts: {bytes: -1}", "s.yaml:1:15: opts.bytes: expected a "
	             "size (4096, 64KiB, 4MiB, 1GiB), got '-1'");
	expect_error("opts: {wait: 100ms}", "s.yaml:1:14: opts.wait: out of "
	             "range: must be between 500ms and 2h");
	expect_error("opts: {wait: [1]}", "s.yaml:1:14: opts.wait: expected a "
	             "duration (250ms, 10s, 2m, 1h or seconds), got a list");
	expect_error("opts: {color: blue}", "s.yaml:1:15: opts.color: 'blue' is "
	             "not one of: red, green");
	expect_error("opts: {color: {}}", "s.yaml:1:15: opts.color: expected "
	             "one of: red, green");
	expect_error("opts: {small: 1.5}", "s.yaml:1:15: opts.small: expected "
	             "an integer, got '1.5'");
	expect_error("opts: {big: 9223372036854775808}", "s.yaml:1:13: opts.big: "
	             "out of range: must be between -9223372036854775808 and "
	             "9223372036854775807");
	expect_error("label: {a: b}", "s.yaml:1:8: label: expected a string, "
	             "got a mapping");
	expect_error("label: \"a\\0b\"", "s.yaml:1:8: label: must not contain a "
	             "NUL byte");
	expect_error("label: bad", "s.yaml:1:8: label: is bad");
	expect_error("opts: 3", "s.yaml:1:7: opts: expected a mapping, got '3'");
	expect_error("items: {}", "s.yaml:1:8: items: expected a list, got a "
	             "mapping");
}

static void test_list_paths(void **state)
{
	(void)state;
	expect_error("items:\n  - name: a\n  - name: box\n",
	             "s.yaml:3:11: items[1].name: must not contain 'x'");
	expect_error("items:\n  - name: a\n  - on: true\n",
	             "s.yaml:3:5: items[1].name: missing required key");
	expect_error("items: [{name: a}, 7]",
	             "s.yaml:1:20: items[1]: expected a mapping, got '7'");
	expect_error("items: [{name: a}, ~]",
	             "s.yaml:1:20: items[1].name: missing required key");
	expect_error("items:\n  - name: a\n    colour: red\n",
	             "s.yaml:3:5: items[0].colour: unknown key");
	expect_error("items:\n  - name: a\n    name: b\n",
	             "s.yaml:3:5: items[0].name: duplicate key (first given at "
	             "line 2)");
}

/* A list of strings: items in order, each checked, freed, compared. */
static void test_strlist(void **state)
{
	struct doc a, b;

	(void)state;
	LOAD_OK("tags: [one, \"two\"]\n", &a);
	assert_int_equal(a.n_tags, 2);
	assert_string_equal(a.tags[0], "one");
	assert_string_equal(a.tags[1], "two");
	LOAD_OK("tags:\n  - one\n  - two\n", &b);
	assert_true(mgw_cfg_equal(&doc_sec, &a, &b));
	mgw_cfg_release(&doc_sec, &b);
	LOAD_OK("tags: [one]\n", &b);
	assert_false(mgw_cfg_equal(&doc_sec, &a, &b));
	mgw_cfg_release(&doc_sec, &b);
	LOAD_OK("tags: [one, three]\n", &b);
	assert_false(mgw_cfg_equal(&doc_sec, &a, &b));
	mgw_cfg_release(&doc_sec, &b);
	mgw_cfg_release(&doc_sec, &a);
	assert_null(a.tags);
	assert_int_equal(a.n_tags, 0);
	LOAD_OK("tags: []\n", &a);
	assert_int_equal(a.n_tags, 0);
	mgw_cfg_release(&doc_sec, &a);
	LOAD_OK("tags: ~\n", &a);
	assert_int_equal(a.n_tags, 0);
	mgw_cfg_release(&doc_sec, &a);
	expect_error("tags: [a, box]", "s.yaml:1:11: tags[1]: must not "
	             "contain 'x'");
	expect_error("tags: [a, [b]]", "s.yaml:1:11: tags[1]: expected a "
	             "string, got a list");
	expect_error("tags: [a, ~]", "s.yaml:1:11: tags[1]: expected a "
	             "string, got null");
	expect_error("tags: {a: b}", "s.yaml:1:7: tags: expected a list of "
	             "strings, got a mapping");
	expect_error("tags: a", "s.yaml:1:7: tags: expected a list of "
	             "strings, got 'a'");
}

/* A mapping of any keys to strings, kept in order as key, value pairs. */
static void test_strmap(void **state)
{
	struct doc a, b;

	(void)state;
	LOAD_OK("labels: {tenant: acme, level: 3, \"a b\": ''}\n", &a);
	assert_int_equal(a.n_labels, 6);
	assert_string_equal(a.labels[0], "tenant");
	assert_string_equal(a.labels[1], "acme");
	assert_string_equal(a.labels[2], "level");
	assert_string_equal(a.labels[3], "3");
	assert_string_equal(a.labels[4], "a b");
	assert_string_equal(a.labels[5], "");
	LOAD_OK("labels:\n  tenant: acme\n  level: '3'\n  a b: \"\"\n", &b);
	assert_true(mgw_cfg_equal(&doc_sec, &a, &b));
	mgw_cfg_release(&doc_sec, &b);
	LOAD_OK("labels: {tenant: acme}\n", &b);
	assert_false(mgw_cfg_equal(&doc_sec, &a, &b));
	mgw_cfg_release(&doc_sec, &b);
	mgw_cfg_release(&doc_sec, &a);
	assert_null(a.labels);
	assert_int_equal(a.n_labels, 0);
	LOAD_OK("labels: {}\n", &a);
	assert_int_equal(a.n_labels, 0);
	mgw_cfg_release(&doc_sec, &a);
	LOAD_OK("labels: ~\n", &a);
	assert_int_equal(a.n_labels, 0);
	mgw_cfg_release(&doc_sec, &a);
	expect_error("labels: {a: b, c: box}", "s.yaml:1:19: labels.c: must "
	             "not contain 'x'");
	expect_error("labels: {a: b, a: c}", "s.yaml:1:16: labels.a: duplicate "
	             "key (first given at line 1)");
	expect_error("labels: {a: [b]}", "s.yaml:1:13: labels.a: expected a "
	             "string, got a list");
	expect_error("labels: [a]", "s.yaml:1:9: labels: expected a mapping of "
	             "strings, got a list");
}

static void test_key_sanitized(void **state)
{
	(void)state;
	expect_error("\"a\\tb\": 1", "s.yaml:1:1: a?b: unknown key");
	expect_error("\"a\\0\": 1", "s.yaml:1:1: a: unknown key");
}

static void test_enum_helpers(void **state)
{
	int v = 0;

	(void)state;
	assert_int_equal(mgw_cfg_enum_lookup(colors, "green", &v), 0);
	assert_int_equal(v, GREEN);
	assert_int_equal(mgw_cfg_enum_lookup(colors, "Green", &v), MGW_EINVAL);
	assert_int_equal(mgw_cfg_enum_lookup(colors, NULL, &v), MGW_EINVAL);
	assert_string_equal(mgw_cfg_enum_name(colors, RED), "red");
	assert_string_equal(mgw_cfg_enum_name(colors, 99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_all_types),
		cmocka_unit_test(test_bool_spellings),
		cmocka_unit_test(test_empty_and_null_sections),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_list_paths),
		cmocka_unit_test(test_key_sanitized),
		cmocka_unit_test(test_enum_helpers),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_strlist),
		cmocka_unit_test(test_strmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
