/* allocator_test.c - the allocator a build runs on (src/util/allocator.c):
 * its name, and, built with mimalloc, that malloc is mimalloc's for the
 * program and for the libraries it links (libc's own strdup, OpenSSL,
 * jansson): the link order put mimalloc in front of glibc's malloc. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "util/allocator.h"

#include "util/asan.h"

static void test_name(void **state)
{
	const char *n = mgw_allocator_name();

	(void)state;
#if defined(HAVE_MIMALLOC)
	assert_int_equal(strncmp(n, "mimalloc-", 9), 0);
	assert_non_null(strchr(n + 9, '.'));
#elif MGW_ASAN
	assert_string_equal(n, "AddressSanitizer");
#else
	assert_string_equal(n, "glibc");
#endif
	assert_null(strchr(n, ' ')); /* a metric label value */
}

static void test_every_malloc_is_the_allocators(void **state)
{
	void *a = malloc(24), *c = OPENSSL_malloc(40);
	char *b = strdup("a string libc copies");
	json_t *j = json_object();

	(void)state;
	assert_true(mgw_allocator_owns(a));
	assert_true(mgw_allocator_owns(b));
	assert_true(mgw_allocator_owns(c));
	assert_true(mgw_allocator_owns(j));
#ifdef HAVE_MIMALLOC
	{
		int on_stack;

		/* and the check can fail: a block not from malloc */
		assert_false(mgw_allocator_owns(&on_stack));
	}
#endif
	json_decref(j);
	OPENSSL_free(c);
	free(b);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_every_malloc_is_the_allocators),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
