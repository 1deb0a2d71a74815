/* cfgtree_test.c - unit tests for src/core/cfgtree.c: the document tree
 * keeps types and 1-based positions, and refuses aliases, anchors, tags,
 * several documents, non-scalar keys and inputs beyond the limits. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cfgtree.h"
#include "core/errors.h"

static char err[512];

static struct mgw_cfg_node *parse_ok(const char *text, size_t len)
{
	struct mgw_cfg_node *root = (void *)1;

	err[0] = '\0';
	assert_int_equal(mgw_cfg_tree_parse("t.yaml", text, len, &root, err,
	                                    sizeof(err)), 0);
	assert_string_equal(err, "");
	return root;
}

static void expect_fail(const char *text, size_t len, int rc, const char *msg)
{
	struct mgw_cfg_node *root = (void *)1;

	err[0] = '\0';
	assert_int_equal(mgw_cfg_tree_parse("t.yaml", text, len, &root, err,
	                                    sizeof(err)), rc);
	assert_null(root);
	assert_string_equal(err, msg);
}

#define FAIL(text, rc, msg) expect_fail(text, strlen(text), rc, msg)

static void assert_scalar(const struct mgw_cfg_node *n, const char *text,
                          int plain, unsigned line, unsigned col)
{
	assert_int_equal(n->kind, MGW_CFG_SCALAR);
	assert_string_equal(n->text, text);
	assert_int_equal(n->len, strlen(text));
	assert_int_equal(n->plain, plain);
	assert_int_equal(n->line, line);
	assert_int_equal(n->col, col);
}

static void test_structure_and_positions(void **state)
{
	static const char doc[] = "a: 1\n"
	                          "b: [x, 'y']\n"
	                          "c:\n"
	                          "  d: \"e\"\n";
	struct mgw_cfg_node *r = parse_ok(doc, strlen(doc)), *b, *c;

	(void)state;
	assert_int_equal(r->kind, MGW_CFG_MAP);
	assert_int_equal(r->n, 6);
	assert_scalar(r->kids[0], "a", 1, 1, 1);
	assert_scalar(r->kids[1], "1", 1, 1, 4);
	b = r->kids[3];
	assert_int_equal(b->kind, MGW_CFG_SEQ);
	assert_int_equal(b->line, 2);
	assert_int_equal(b->col, 4);
	assert_int_equal(b->n, 2);
	assert_scalar(b->kids[0], "x", 1, 2, 5);
	assert_scalar(b->kids[1], "y", 0, 2, 8);
	c = r->kids[5];
	assert_int_equal(c->kind, MGW_CFG_MAP);
	assert_int_equal(c->line, 4);
	assert_int_equal(c->col, 3);
	assert_scalar(c->kids[1], "e", 0, 4, 6);
	mgw_cfg_tree_free(r);
}

/* JSON, including tab indentation, is read by the same parser. */
static void test_json(void **state)
{
	static const char doc[] = "{\n\t\"a\": [1, 2.5, true, null],\n"
	                          "\t\"b\": {\"c\": \"d\\u00e9\"}\n}\n";
	struct mgw_cfg_node *r = parse_ok(doc, strlen(doc)), *a;

	(void)state;
	assert_int_equal(r->kind, MGW_CFG_MAP);
	assert_int_equal(r->n, 4);
	assert_scalar(r->kids[0], "a", 0, 2, 2);
	a = r->kids[1];
	assert_int_equal(a->n, 4);
	assert_scalar(a->kids[1], "2.5", 1, 2, 11);
	assert_true(mgw_cfg_node_is_null(a->kids[3]));
	assert_scalar(r->kids[3]->kids[1], "d\xc3\xa9", 0, 3, 13);
	mgw_cfg_tree_free(r);
}

static void test_null_spellings(void **state)
{
	static const char doc[] = "[~, null, Null, NULL, '', \"null\", nil, ]";
	struct mgw_cfg_node *r;

	(void)state;
	r = parse_ok(doc, strlen(doc));
	assert_int_equal(r->n, 7);
	for (size_t i = 0; i < 4; i++)
		assert_true(mgw_cfg_node_is_null(r->kids[i]));
	assert_false(mgw_cfg_node_is_null(r->kids[4])); /* quoted empty */
	assert_false(mgw_cfg_node_is_null(r->kids[5])); /* quoted "null" */
	assert_false(mgw_cfg_node_is_null(r->kids[6]));
	assert_false(mgw_cfg_node_is_null(r));
	assert_false(mgw_cfg_node_is_null(NULL));
	mgw_cfg_tree_free(r);
	/* "key:" with nothing after it is a plain empty scalar: null */
	r = parse_ok("k:\n", 3);
	assert_true(mgw_cfg_node_is_null(r->kids[1]));
	mgw_cfg_tree_free(r);
}

static void test_empty_inputs(void **state)
{
	(void)state;
	assert_null(parse_ok("", 0));
	assert_null(parse_ok("# nothing\n\n", 11));
	mgw_cfg_tree_free(parse_ok("---\n", 4)); /* a document with a null */
}

static void test_nul_escape_kept(void **state)
{
	struct mgw_cfg_node *r = parse_ok("k: \"a\\0b\"", 9);

	(void)state;
	assert_int_equal(r->kids[1]->len, 3);
	assert_memory_equal(r->kids[1]->text, "a\0b", 4);
	mgw_cfg_tree_free(r);
}

static void test_refused_features(void **state)
{
	(void)state;
	FAIL("a: &x 1\nb: 2\n", MGW_EINVAL, "t.yaml:1:4: anchors are not allowed");
	FAIL("a: 1\nb: *x\n", MGW_EINVAL, "t.yaml:2:4: aliases are not allowed");
	FAIL("a: &x [1]\n", MGW_EINVAL, "t.yaml:1:4: anchors are not allowed");
	FAIL("a: &x {b: 1}\n", MGW_EINVAL, "t.yaml:1:4: anchors are not allowed");
	FAIL("a: !!str 1\n", MGW_EINVAL, "t.yaml:1:4: tags are not allowed");
	FAIL("a: !foo {}\n", MGW_EINVAL, "t.yaml:1:4: tags are not allowed");
	FAIL("a: 1\n---\nb: 2\n", MGW_EINVAL,
	     "t.yaml:2:1: only one document is allowed");
	FAIL("? [a]\n: 1\n", MGW_EINVAL, "t.yaml:1:3: mapping keys must be scalars");
	FAIL("{{a: 1}: 2}", MGW_EINVAL, "t.yaml:1:2: mapping keys must be scalars");
}

/* The classic "billion laughs" document dies at its first anchor, before
 * anything is expanded. */
static void test_billion_laughs(void **state)
{
	static const char doc[] =
		"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
		"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
		"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n";

	(void)state;
	FAIL(doc, MGW_EINVAL, "t.yaml:1:4: anchors are not allowed");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	FAIL("a: [1, 2\n", MGW_EINVAL,
	     "t.yaml:2:1: YAML syntax error: did not find expected ',' or ']' "
	     "(while parsing a flow sequence)");
	FAIL("a:\n\tb: 1\n", MGW_EINVAL,
	     "t.yaml:2:1: YAML syntax error: found character that cannot start "
	     "any token (while scanning for the next token)");
	FAIL("a: 1\n b: 2\n", MGW_EINVAL,
	     "t.yaml:2:3: YAML syntax error: mapping values are not allowed in "
	     "this context");
	/* reader errors come as byte offsets; they are turned into line:col */
	FAIL("a: 1\nb: x\xff\n", MGW_EINVAL,
	     "t.yaml:2:5: YAML syntax error: invalid leading UTF-8 octet");
	expect_fail("a: 1\nb: \0\n", 10, MGW_EINVAL,
	            "t.yaml:2:4: YAML syntax error: control characters are not "
	            "allowed");
}

static char *repeat(const char *head, const char *unit, size_t n,
                    const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * n + tl + 1), *p = s;

	assert_non_null(s);
	memcpy(p, head, hl);
	p += hl;
	for (size_t i = 0; i < n; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

static void test_depth_limit(void **state)
{
	char *ok = repeat("", "[", MGW_CFG_MAX_DEPTH, ""), *bad, *okdoc, *baddoc;
	char msg[128];

	(void)state;
	okdoc = repeat(ok, "]", MGW_CFG_MAX_DEPTH, "");
	mgw_cfg_tree_free(parse_ok(okdoc, strlen(okdoc)));
	bad = repeat("", "[", MGW_CFG_MAX_DEPTH + 1, "");
	baddoc = repeat(bad, "]", MGW_CFG_MAX_DEPTH + 1, "");
	snprintf(msg, sizeof(msg), "t.yaml:1:%d: nesting deeper than %d levels",
	         MGW_CFG_MAX_DEPTH + 1, MGW_CFG_MAX_DEPTH);
	FAIL(baddoc, MGW_ELIMIT, msg);
	free(ok);
	free(okdoc);
	free(bad);
	free(baddoc);
}

static void test_node_limit(void **state)
{
	/* the list itself is one node, so limit - 1 items fit exactly */
	char *ok = repeat("[", "1,", MGW_CFG_MAX_NODES - 1, "]");
	char *bad = repeat("[", "1,", MGW_CFG_MAX_NODES, "]");
	struct mgw_cfg_node *r;

	(void)state;
	r = parse_ok(ok, strlen(ok));
	assert_int_equal(r->n, MGW_CFG_MAX_NODES - 1);
	mgw_cfg_tree_free(r);
	expect_fail(bad, strlen(bad), MGW_ELIMIT,
	            "t.yaml:1:131072: too many values in one file");
	free(ok);
	free(bad);
}

static void test_size_limit(void **state)
{
	size_t n = MGW_CFG_MAX_BYTES + 1;
	char *big = malloc(n);
	struct mgw_cfg_node *r;

	(void)state;
	assert_non_null(big);
	memset(big, '#', n);
	big[n - 1] = '\n';
	expect_fail(big, n, MGW_ELIMIT,
	            "t.yaml:1:1: file too large (1048577 bytes, the limit is "
	            "1048576)");
	/* exactly at the limit is still read */
	r = (void *)1;
	assert_int_equal(mgw_cfg_tree_parse("t.yaml", big, n - 1, &r, err,
	                                    sizeof(err)), 0);
	assert_null(r);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure_and_positions),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_null_spellings),
		cmocka_unit_test(test_empty_inputs),
		cmocka_unit_test(test_nul_escape_kept),
		cmocka_unit_test(test_refused_features),
		cmocka_unit_test(test_billion_laughs),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_node_limit),
		cmocka_unit_test(test_size_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
