/* mrtr_seal_test.c - unit tests for src/backend/mrtr_seal.c: sealed MRTR
 * requestState (round trip, every byte tampered, truncation, size cap
 * checked first, expiry, wrong key, key rotation, a non-object state). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/mrtr.h"
#include "core/errors.h"

#define NOW 1700000000LL

static struct mgw_hmac_key key_of(const char *kid, unsigned char fill)
{
	struct mgw_hmac_key k;

	memset(&k, 0, sizeof(k));
	strcpy(k.kid, kid);
	memset(k.key, fill, sizeof(k.key));
	return k;
}

static json_t *sample(void)
{
	return json_pack("{sssssisis{ss}ss}", "tool", "book", "args", "abc",
	                 "round", 1, "rounds", 3, "answers", "date", "2026-08-01",
	                 "nonce", "00ff");
}

static void test_round_trip(void **state)
{
	struct mgw_hmac_key k = key_of("A", 0xA5);
	json_t *in = sample(), *out = NULL;
	char *s = mgw_mrtr_seal(&k, in, NOW + 60);

	(void)state;
	assert_non_null(s);
	assert_memory_equal(s, "rs1.", 4);
	for (size_t j = 0; s[j]; j++)
		assert_true(s[j] > 0x20 && s[j] < 0x7F);
	assert_int_equal(mgw_mrtr_open(&k, 1, s, NOW, &out), 0);
	assert_true(json_equal(in, out));
	json_decref(out);
	json_decref(in);
	free(s);
}

static void test_tamper_every_byte(void **state)
{
	struct mgw_hmac_key k = key_of("A", 0xA5);
	json_t *in = sample(), *out = NULL;
	char *s = mgw_mrtr_seal(&k, in, NOW + 60);
	size_t n = strlen(s);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		char saved = s[i];
		s[i] = saved == 'A' ? 'B' : 'A';
		assert_int_not_equal(mgw_mrtr_open(&k, 1, s, NOW, &out), 0);
		assert_null(out);
		s[i] = saved;
	}
	for (size_t len = 0; len < n; len++) {
		char *t = strndup(s, len);
		assert_int_equal(mgw_mrtr_open(&k, 1, t, NOW, &out), MGW_MRTR_E_INVALID);
		free(t);
	}
	json_decref(in);
	free(s);
}

static void test_size_cap_first(void **state)
{
	struct mgw_hmac_key k = key_of("A", 0xA5);
	char *big = malloc(MGW_MRTR_MAX_STATE + 2);
	json_t *out = NULL;

	(void)state;
	memset(big, 'A', MGW_MRTR_MAX_STATE + 1);
	big[MGW_MRTR_MAX_STATE + 1] = '\0';
	memcpy(big, "rs1.", 4);
	assert_int_equal(mgw_mrtr_open(&k, 1, big, NOW, &out), MGW_MRTR_E_TOOLARGE);
	big[MGW_MRTR_MAX_STATE] = '\0';
	assert_int_equal(mgw_mrtr_open(&k, 1, big, NOW, &out), MGW_MRTR_E_INVALID);
	free(big);
}

static void test_expiry_and_keys(void **state)
{
	struct mgw_hmac_key a = key_of("A", 0xA5), b = key_of("B", 0x5B);
	struct mgw_hmac_key ring[2] = { b, a };
	json_t *in = sample(), *out = NULL;
	char *s = mgw_mrtr_seal(&a, in, NOW);

	(void)state;
	assert_int_equal(mgw_mrtr_open(&a, 1, s, NOW, &out), 0);
	json_decref(out);
	assert_int_equal(mgw_mrtr_open(&a, 1, s, NOW + 1, &out), MGW_MRTR_E_EXPIRED);
	assert_int_equal(mgw_mrtr_open(&b, 1, s, NOW, &out), MGW_MRTR_E_INVALID);
	/* rotation: the old key still verifies after the new one */
	assert_int_equal(mgw_mrtr_open(ring, 2, s, NOW, &out), 0);
	json_decref(out);
	json_decref(in);
	free(s);
}

static void test_not_an_object(void **state)
{
	struct mgw_hmac_key k = key_of("A", 0xA5);
	json_t *arr = json_pack("[i]", 1), *out = NULL;
	char *s = mgw_mrtr_seal(&k, arr, NOW + 60);

	(void)state;
	assert_non_null(s);
	assert_int_equal(mgw_mrtr_open(&k, 1, s, NOW, &out), MGW_MRTR_E_INVALID);
	assert_null(out);
	assert_int_equal(mgw_mrtr_open(&k, 1, "rs1.", NOW, &out), MGW_MRTR_E_INVALID);
	assert_int_equal(mgw_mrtr_open(&k, 1, "rs1..", NOW, &out), MGW_MRTR_E_INVALID);
	assert_int_equal(mgw_mrtr_open(&k, 1, "rs1.a.b.c", NOW, &out), MGW_MRTR_E_INVALID);
	json_decref(arr);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_tamper_every_byte),
		cmocka_unit_test(test_size_cap_first),
		cmocka_unit_test(test_expiry_and_keys),
		cmocka_unit_test(test_not_an_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
