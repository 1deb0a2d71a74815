/* session_test.c - unit tests for src/session/session.c: drafts and their
 * setters' validation, deep copies, reference counting, the replay-safe
 * tool set, principal digests and pin tags. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "session/session.h"

static const char init_body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}";

static void test_setters_and_dup(void **state)
{
	struct mgw_session *s = mgw_session_new(), *d;
	size_t before;

	(void)state;
	assert_non_null(s);
	assert_null(s->pin_url);
	before = s->mem_size;
	assert_int_equal(mgw_session_set_init(s, init_body, strlen(init_body)), 0);
	assert_true(s->mem_size >= before + strlen(init_body));
	assert_int_equal(mgw_session_set_id(s, "abc", 3), 0);
	assert_int_equal(mgw_session_set_pin(s, "http://127.0.0.1:1/x", "up-1"), 0);
	assert_int_equal(mgw_session_set_protocol_version(s, "2025-11-25"), 0);
	assert_int_equal(mgw_session_set_initialized(s, "{}", 2), 0);
	assert_int_equal(mgw_session_add_init_header(s, "X-Tenant", "blue"), 0);
	s->version = 7;

	d = mgw_session_dup(s);
	assert_non_null(d);
	assert_ptr_not_equal(d->init_body, s->init_body);
	assert_memory_equal(d->init_body, init_body, strlen(init_body));
	assert_int_equal(d->init_len, strlen(init_body));
	assert_string_equal(d->id, "abc");
	assert_string_equal(d->pin_url, "http://127.0.0.1:1/x");
	assert_string_equal(d->upstream_sid, "up-1");
	assert_string_equal(d->protocol_version, "2025-11-25");
	assert_int_equal(d->initialized_len, 2);
	assert_int_equal(d->n_init_headers, 1);
	assert_string_equal(d->init_headers[0].value, "blue");
	assert_int_equal(d->version, 7);
	assert_int_equal(d->mem_size, s->mem_size);

	/* A change to the copy leaves the original alone. */
	assert_int_equal(mgw_session_repin(d, "http://127.0.0.1:2/x", "up-2"), 0);
	assert_int_equal(d->pin_gen, 1);
	assert_int_equal(s->pin_gen, 0);
	assert_string_equal(s->upstream_sid, "up-1");
	mgw_session_unref(d);

	/* Reference counting: the record survives until the last unref. */
	mgw_session_ref(s);
	mgw_session_unref(s);
	assert_string_equal(s->id, "abc");
	mgw_session_unref(s);
	mgw_session_unref(NULL);
}

static void test_validation(void **state)
{
	struct mgw_session *s = mgw_session_new();
	char big[MGW_SESSION_UPSTREAM_ID_MAX + 2];

	(void)state;
	assert_int_equal(mgw_session_set_init(s, "", 0), MGW_EINVAL);
	assert_int_equal(mgw_session_set_id(s, "a b", 3), MGW_EINVAL);
	assert_int_equal(mgw_session_set_id(s, "a\x7f", 2), MGW_EINVAL);
	assert_int_equal(mgw_session_set_id(s, "", 0), MGW_EINVAL);
	assert_true(mgw_session_id_valid("!~", 2, 2));
	assert_false(mgw_session_id_valid("abc", 3, 2));
	assert_false(mgw_session_id_valid(NULL, 0, 10));

	/* Credentials are never kept, whatever their case. */
	assert_int_equal(mgw_session_add_init_header(s, "authorization", "x"),
	                 MGW_EINVAL);
	assert_int_equal(mgw_session_add_init_header(s, "Cookie", "a=b"),
	                 MGW_EINVAL);
	assert_int_equal(mgw_session_add_init_header(s, "Proxy-Authorization",
	                                             "x"), MGW_EINVAL);
	assert_int_equal(mgw_session_add_init_header(s, "Bad Name", "x"),
	                 MGW_EINVAL);
	assert_int_equal(mgw_session_add_init_header(s, "X", "a\nb"),
	                 MGW_EINVAL);
	for (int i = 0; i < MGW_SESSION_MAX_HEADERS; i++)
		assert_int_equal(mgw_session_add_init_header(s, "X-H", "v"), 0);
	assert_int_equal(mgw_session_add_init_header(s, "X-H", "v"), MGW_ELIMIT);

	/* A failed pin leaves the old one whole. */
	assert_int_equal(mgw_session_set_pin(s, "http://a:1", "sid"), 0);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(mgw_session_set_pin(s, "http://b:1", big), MGW_EINVAL);
	assert_int_equal(mgw_session_repin(s, "http://b:1", "a b"), MGW_EINVAL);
	assert_string_equal(s->pin_url, "http://a:1");
	assert_string_equal(s->upstream_sid, "sid");
	assert_int_equal(s->pin_gen, 0);
	/* Unpinned and no upstream session are legitimate. */
	assert_int_equal(mgw_session_set_pin(s, NULL, NULL), 0);
	assert_null(s->pin_url);

	assert_int_equal(mgw_session_set_protocol_version(s, "has space"),
	                 MGW_EINVAL);
	{
		char *huge = malloc(MGW_SESSION_INITIALIZED_MAX + 1);

		memset(huge, '{', MGW_SESSION_INITIALIZED_MAX + 1);
		assert_int_equal(mgw_session_set_initialized(
			s, huge, MGW_SESSION_INITIALIZED_MAX + 1), MGW_ELIMIT);
		assert_int_equal(mgw_session_set_initialized(
			s, huge, MGW_SESSION_INITIALIZED_MAX), 0);
		free(huge);
	}
	mgw_session_unref(s);
}

static void test_safe_tools(void **state)
{
	const char *names[] = {"write", "read", "get", "read", "get_all", "",
	                       NULL};
	char longname[MGW_SESSION_TOOL_NAME_MAX + 2];
	struct mgw_session *s = mgw_session_new();
	const char **many;

	(void)state;
	assert_false(s->tools_known);
	assert_false(mgw_session_tool_replay_safe(s, "read", 4));
	memset(longname, 't', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	names[6] = longname;
	assert_int_equal(mgw_session_set_safe_tools(s, names, 7), 0);
	assert_true(s->tools_known);
	/* Sorted, duplicates and unusable names dropped. */
	assert_int_equal(s->n_safe_tools, 4);
	assert_string_equal(s->safe_tools[0], "get");
	assert_string_equal(s->safe_tools[1], "get_all");
	assert_string_equal(s->safe_tools[2], "read");
	assert_string_equal(s->safe_tools[3], "write");
	assert_true(mgw_session_tool_replay_safe(s, "get", 3));
	assert_true(mgw_session_tool_replay_safe(s, "get_all", 7));
	assert_true(mgw_session_tool_replay_safe(s, "write", 5));
	/* Prefixes and extensions of a safe name are other tools. */
	assert_false(mgw_session_tool_replay_safe(s, "ge", 2));
	assert_false(mgw_session_tool_replay_safe(s, "get_", 4));
	assert_false(mgw_session_tool_replay_safe(s, "reads", 5));
	/* Length-delimited: "read" inside a longer buffer. */
	assert_true(mgw_session_tool_replay_safe(s, "readX", 4));
	assert_false(mgw_session_tool_replay_safe(s, longname,
	                                          strlen(longname)));
	assert_false(mgw_session_tool_replay_safe(s, "", 0));

	/* A later list replaces the earlier one. */
	assert_int_equal(mgw_session_set_safe_tools(s, names + 1, 1), 0);
	assert_int_equal(s->n_safe_tools, 1);
	assert_false(mgw_session_tool_replay_safe(s, "write", 5));

	many = calloc(MGW_SESSION_MAX_SAFE_TOOLS + 1, sizeof(*many));
	for (int i = 0; i <= MGW_SESSION_MAX_SAFE_TOOLS; i++)
		many[i] = "t";
	assert_int_equal(mgw_session_set_safe_tools(
		s, many, MGW_SESSION_MAX_SAFE_TOOLS + 1), MGW_ELIMIT);
	assert_int_equal(s->n_safe_tools, 1);
	free(many);
	mgw_session_unref(s);
}

static void hex(const unsigned char *d, char *out)
{
	for (int i = 0; i < MGW_SESSION_DIGEST_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_principal(void **state)
{
	unsigned char a[32], b[32], none[32];
	char h[65];
	struct mgw_session *s = mgw_session_new();

	(void)state;
	mgw_session_principal_digest(NULL, 0, none);
	hex(none, h);
	/* SHA-256 of the empty string. */
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb924"
	                       "27ae41e4649b934ca495991b7852b855");
	mgw_session_principal_digest("abc", 3, a);
	hex(a, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223"
	                       "b00361a396177a9cb410ff61f20015ad");
	mgw_session_principal_digest("Bearer abd", 10, b);

	assert_true(mgw_session_principal_matches(s, b)); /* unbound */
	assert_true(mgw_session_principal_matches(s, NULL));
	mgw_session_set_principal(s, a);
	assert_true(mgw_session_principal_matches(s, a));
	assert_false(mgw_session_principal_matches(s, b));
	assert_false(mgw_session_principal_matches(s, NULL));
	assert_false(mgw_session_principal_matches(s, none));
	mgw_session_unref(s);
}

static void test_pin_tag(void **state)
{
	struct mgw_session *a = mgw_session_new(), *b;
	uint32_t t0, t1;

	(void)state;
	assert_int_equal(mgw_session_set_pin(a, "http://h:1", "s1"), 0);
	b = mgw_session_dup(a);
	t0 = mgw_session_pin_tag(a);
	assert_int_equal(mgw_session_pin_tag(b), t0);
	/* Same generation, other upstream session (two gateways re-pinning
	 * one sealed session independently): another tag. */
	assert_int_equal(mgw_session_repin(a, "http://h:2", "s2"), 0);
	assert_int_equal(mgw_session_repin(b, "http://h:3", "s3"), 0);
	t1 = mgw_session_pin_tag(a);
	assert_int_not_equal(t1, t0);
	assert_int_not_equal(mgw_session_pin_tag(b), t1);
	/* Same pin, other generation: another tag. */
	assert_int_equal(mgw_session_set_pin(b, "http://h:2", "s2"), 0);
	assert_int_equal(mgw_session_pin_tag(b), t1);
	assert_int_equal(mgw_session_pin_tag(b), t1); /* the memo */
	assert_int_equal(mgw_session_repin(b, "http://h:2", "s2"), 0);
	assert_int_not_equal(mgw_session_pin_tag(b), t1);
	/* Field boundaries matter. */
	assert_int_equal(mgw_session_set_pin(a, "http://h:1", "2s"), 0);
	assert_int_equal(mgw_session_set_pin(b, "http://h:12", "s"), 0);
	b->pin_gen = a->pin_gen;
	assert_int_not_equal(mgw_session_pin_tag(a), mgw_session_pin_tag(b));
	mgw_session_unref(a);
	mgw_session_unref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setters_and_dup),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_safe_tools),
		cmocka_unit_test(test_principal),
		cmocka_unit_test(test_pin_tag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
