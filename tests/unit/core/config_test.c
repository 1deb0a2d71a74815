/* config_test.c - unit tests for src/core/config.c with a root of its
 * own: parts merged into one top level (offsets shifted, unknown and
 * duplicate keys across parts, each part's check on its own scope, in
 * order), defaults and source, file loading, the listener section and
 * its duplicate-address check. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cfgschema.h"
#include "core/config.h"
#include "core/errors.h"
#include "core/log.h"

/* Part "a": a log level, listeners, and a section with presence. */
struct opts {
	uint32_t n;
};

struct part_a {
	int level;
	struct mgw_listener_conf *listeners;
	size_t n_listeners;
	struct opts opts;
	int has_opts;
	int checked;              /* part a's check ran (1) */
};

/* Part "b": a name and a list of items. */
struct item {
	char *name;
};

struct part_b {
	char *name;
	struct item *items;
	size_t n_items;
	int saw_name;             /* its check found "name" in its scope */
	int checked_after_a;      /* part a had been checked before */
};

struct root {
	int pad;                  /* parts do not start at offset 0 */
	char *source;
	struct part_a a;
	struct part_b b;
};

static const struct mgw_cfg_field opts_fields[] = {
	{.key = "n", .type = MGW_CFG_INT, MGW_CFG_AT(struct opts, n),
	 .min = 0, .max = 9, .def = "3"},
};
static const struct mgw_cfg_section opts_sec = {
	.size = sizeof(struct opts), .fields = opts_fields,
	.nfields = MGW_CFG_COUNT(opts_fields),
};

static int check_a(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                   void *obj)
{
	struct part_a *a = obj;

	a->checked = 1;
	if (a->has_opts && a->opts.n == 9)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "opts"), "opts",
		                    "a says no");
	return mgw_cfg_check_listeners(c, mgw_cfg_scope_value(sc, "listeners"),
	                               a->listeners, a->n_listeners);
}

static const struct mgw_cfg_field a_fields[] = {
	{.key = "level", .type = MGW_CFG_ENUM, MGW_CFG_AT(struct part_a, level),
	 .enums = mgw_cfg_log_levels, .def = "info"},
	{.key = "listeners", .type = MGW_CFG_LIST,
	 .off = offsetof(struct part_a, listeners),
	 .aux = offsetof(struct part_a, n_listeners),
	 .sub = &mgw_cfg_listener_section},
	{.key = "opts", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct part_a, opts),
	 .aux = offsetof(struct part_a, has_opts),
	 .flags = MGW_CFG_PRESENCE, .sub = &opts_sec},
};
static const struct mgw_cfg_section a_sec = {
	.size = sizeof(struct part_a), .fields = a_fields,
	.nfields = MGW_CFG_COUNT(a_fields), .check = check_a,
};

static const struct mgw_cfg_field item_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING, MGW_CFG_AT(struct item, name),
	 .flags = MGW_CFG_REQUIRED},
};
static const struct mgw_cfg_section item_sec = {
	.size = sizeof(struct item), .fields = item_fields,
	.nfields = MGW_CFG_COUNT(item_fields),
};

/* Reaches part a through the root: only to prove the order. */
static int check_b(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                   void *obj)
{
	struct part_b *b = obj;
	const struct root *r = (const void *)((char *)b -
	                                      offsetof(struct root, b));

	b->saw_name = mgw_cfg_scope_value(sc, "name") != NULL;
	b->checked_after_a = r->a.checked;
	if (strcmp(b->name, "bad") == 0)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "name"), "name",
		                    "b says no");
	return 0;
}

static const struct mgw_cfg_field b_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING, MGW_CFG_AT(struct part_b, name),
	 .def = "anon"},
	{.key = "items", .type = MGW_CFG_LIST,
	 .off = offsetof(struct part_b, items),
	 .aux = offsetof(struct part_b, n_items), .sub = &item_sec},
};
static const struct mgw_cfg_section b_sec = {
	.size = sizeof(struct part_b), .fields = b_fields,
	.nfields = MGW_CFG_COUNT(b_fields), .check = check_b,
};

static const struct mgw_cfg_part parts[] = {
	{.sec = &a_sec, .off = offsetof(struct root, a)},
	{.sec = &b_sec, .off = offsetof(struct root, b)},
};
static const struct mgw_cfg_root root = {
	.size = sizeof(struct root), .source_off = offsetof(struct root, source),
	.parts = parts, .n_parts = MGW_CFG_COUNT(parts),
};

static struct root *load(const char *text, char *err, size_t errlen)
{
	err[0] = '\0';
	return mgw_cfg_root_load_string(&root, "t.yaml", text, strlen(text), err,
	                                errlen);
}

static void expect_error(const char *text, const char *want)
{
	char err[512];
	struct root *r = load(text, err, sizeof(err));

	assert_null(r);
	assert_string_equal(err, want);
}

static void test_defaults(void **state)
{
	struct root *r = mgw_cfg_root_defaults(&root);

	(void)state;
	assert_non_null(r);
	assert_string_equal(r->source, "<defaults>");
	assert_int_equal(r->a.level, MGW_LOG_INFO);
	assert_int_equal(r->a.opts.n, 3);
	assert_int_equal(r->a.has_opts, 0);
	assert_int_equal(r->a.n_listeners, 0);
	assert_string_equal(r->b.name, "anon");
	assert_int_equal(r->b.n_items, 0);
	assert_int_equal(r->a.checked, 0); /* defaults run no check */
	mgw_cfg_root_free(&root, r);
	mgw_cfg_root_free(&root, NULL);
}

static void test_parts_merged(void **state)
{
	char err[512];
	struct root *r = load("items: [{name: i0}, {name: i1}]\n"
	                      "level: debug\n"
	                      "name: bee\n"
	                      "opts: {n: 5}\n"
	                      "listeners:\n"
	                      "  - address: 127.0.0.1:0\n"
	                      "  - address: 127.0.0.1:0\n"
	                      "    tls: {cert: c.pem, key: k.pem}\n",
	                      err, sizeof(err));

	(void)state;
	assert_non_null(r);
	assert_string_equal(err, "");
	assert_string_equal(r->source, "t.yaml");
	assert_int_equal(r->a.level, MGW_LOG_DEBUG);
	assert_int_equal(r->a.has_opts, 1);
	assert_int_equal(r->a.opts.n, 5);
	assert_int_equal(r->a.n_listeners, 2); /* port 0 may repeat */
	assert_string_equal(r->a.listeners[1].tls_cert, "c.pem");
	assert_null(r->a.listeners[0].tls_key);
	assert_string_equal(r->b.name, "bee");
	assert_int_equal(r->b.n_items, 2);
	assert_string_equal(r->b.items[1].name, "i1");
	assert_int_equal(r->b.saw_name, 1);
	assert_int_equal(r->b.checked_after_a, 1);
	mgw_cfg_root_free(&root, r);
}

static void test_empty_document(void **state)
{
	char err[512];
	struct root *r = load("", err, sizeof(err));

	(void)state;
	assert_non_null(r);
	assert_string_equal(r->source, "t.yaml");
	assert_string_equal(r->b.name, "anon");
	assert_int_equal(r->b.saw_name, 0);
	mgw_cfg_root_free(&root, r);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("name: x\nbogus: 1\n", "t.yaml:2:1: bogus: unknown key");
	expect_error("name: x\nlevel: info\nname: y\n",
	             "t.yaml:3:1: name: duplicate key (first given at line 1)");
	expect_error("items: [{}]\n",
	             "t.yaml:1:9: items[0].name: missing required key");
	expect_error("level: loud\n", "t.yaml:1:8: level: 'loud' is not one "
	             "of: error, warn, info, debug");
	expect_error("- 1\n", "t.yaml:1:1: expected a mapping, got a list");
	/* each part's check, in order: a's error wins over b's */
	expect_error("name: bad\nopts: {n: 9}\n", "t.yaml:2:7: opts: a says no");
	expect_error("name: bad\n", "t.yaml:1:7: name: b says no");
}

static void test_listeners(void **state)
{
	(void)state;
	expect_error("listeners:\n"
	             "  - address: 127.0.0.1:8080\n"
	             "  - address: 127.0.0.1:8081\n"
	             "  - address: 127.0.0.1:8080\n",
	             "t.yaml:4:14: listeners[2].address: same address as "
	             "listeners[0]");
	expect_error("listeners: [{address: nowhere}]\n",
	             "t.yaml:1:23: listeners[0].address: 'nowhere' is not "
	             "HOST:PORT, [IPV6]:PORT or :PORT");
	expect_error("listeners: [{address: ':1', tls: {cert: a}}]\n",
	             "t.yaml:1:34: listeners[0].tls.key: missing required key");
}

static void test_files(void **state)
{
	char path[] = "/tmp/mgw_core_config_XXXXXX", err[512];
	const char text[] = "name: from-file\n";
	struct root *r;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	r = mgw_cfg_root_load(&root, path, err, sizeof(err));
	assert_non_null(r);
	assert_string_equal(r->source, path);
	assert_string_equal(r->b.name, "from-file");
	mgw_cfg_root_free(&root, r);
	unlink(path);
	assert_null(mgw_cfg_root_load(&root, "/nonexistent/x.yaml", err,
	                              sizeof(err)));
	assert_string_equal(err, "/nonexistent/x.yaml: cannot open: No such "
	                    "file or directory");
	assert_null(mgw_cfg_root_load(&root, "/tmp", err, sizeof(err)));
	assert_string_equal(err, "/tmp: not a regular file");
}

/* A relative TLS file name in a file is taken from the file's folder
 * (made absolute); an absolute one, and names in a document that is no
 * file, stay as written. */
static void test_relative_files(void **state)
{
	char dir[] = "/tmp/mgw_core_rel_XXXXXX", path[128], want[256], err[512];
	const char text[] = "listeners:\n"
	                    "  - address: 127.0.0.1:0\n"
	                    "    tls: {cert: tls/c.pem, key: /abs/k.pem}\n";
	struct root *r;
	char *real;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gw.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	real = realpath(dir, NULL);
	assert_non_null(real);
	r = mgw_cfg_root_load(&root, path, err, sizeof(err));
	assert_non_null(r);
	snprintf(want, sizeof(want), "%s/tls/c.pem", real);
	assert_string_equal(r->a.listeners[0].tls_cert, want);
	assert_string_equal(r->a.listeners[0].tls_key, "/abs/k.pem");
	mgw_cfg_root_free(&root, r);
	r = load(text, err, sizeof(err));
	assert_non_null(r);
	assert_string_equal(r->a.listeners[0].tls_cert, "tls/c.pem");
	mgw_cfg_root_free(&root, r);
	free(real);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative_files),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_parts_merged),
		cmocka_unit_test(test_empty_document),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_listeners),
		cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
