/* jwks_test.c - unit tests for src/auth/jwks.c: JWKS documents made from
 * keys generated here, every kind of key the parser must skip, the
 * document errors, merging, and the reference count under threads. */
#include "autoconf.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>

#include "auth/jwt.h"
#include "auth/principal.h"
#include "tests/tools/jws_sign.h"

#define NOW 1767225600

static EVP_PKEY *k_rsa, *k_ec, *k_ed, *k_small;
static const struct mgw_jwt_policy pol = {NULL, NULL, 0, 0};

static int setup(void **state)
{
	(void)state;
	k_rsa = mgw_ti_keygen("RS256", 2048);
	k_ec = mgw_ti_keygen("ES256", 0);
	k_ed = mgw_ti_keygen("EdDSA", 0);
	k_small = mgw_ti_keygen("RS256", 1024);
	return k_rsa && k_ec && k_ed && k_small ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	EVP_PKEY_free(k_rsa);
	EVP_PKEY_free(k_ec);
	EVP_PKEY_free(k_ed);
	EVP_PKEY_free(k_small);
	return 0;
}

/* {"keys": [the given JWKs]} as text (malloc'd); takes the references. */
static char *doc_of(json_t *a, json_t *b)
{
	json_t *arr = json_array(), *doc = json_object();
	char *s;

	if (a)
		json_array_append_new(arr, a);
	if (b)
		json_array_append_new(arr, b);
	json_object_set_new(doc, "keys", arr);
	s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return s;
}

static struct mgw_jwks *parse(const char *s, size_t *skipped, char *err)
{
	return mgw_jwks_parse(s, strlen(s), skipped, err, 200);
}

/* 1 if a token signed by k with alg and kid verifies against set. */
static int verifies(const struct mgw_jwks *set, EVP_PKEY *k, const char *alg,
                    const char *kid)
{
	static const char c[] = "{\"sub\":\"s\",\"exp\":1767229200}";
	char *h = mgw_ti_header(alg, kid);
	char *t = mgw_ti_sign(k, alg, h, c, strlen(c), 0), why[100];
	struct mgw_principal *p = NULL;
	enum mgw_jwt_result r;

	assert_non_null(t);
	r = mgw_jwt_verify(t, strlen(t), set, &pol, NOW, &p, why, sizeof(why));
	mgw_principal_free(p);
	free(t);
	free(h);
	return r == MGW_JWT_OK;
}

static void test_three_types(void **state)
{
	json_t *arr = json_array(), *doc = json_object();
	struct mgw_jwks *set;
	size_t skipped = 7;
	char err[200], *s;

	(void)state;
	json_array_append_new(arr, mgw_ti_jwk(k_rsa, "r", "RS256"));
	json_array_append_new(arr, mgw_ti_jwk(k_ec, "e", NULL));
	json_array_append_new(arr, mgw_ti_jwk(k_ed, "d", "EdDSA"));
	json_array_append_new(arr, mgw_ti_jwk(k_ed, NULL, NULL));
	json_object_set_new(doc, "keys", arr);
	/* other members of the document and of keys are ignored */
	json_object_set_new(doc, "issuer", json_string("x"));
	json_object_set_new(json_array_get(arr, 0), "x5t", json_string("abc"));
	s = json_dumps(doc, JSON_INDENT(2));
	set = parse(s, &skipped, err);
	assert_non_null(set);
	assert_int_equal(mgw_jwks_count(set), 4);
	assert_int_equal(skipped, 0);
	assert_true(mgw_jwks_has_kid(set, "r"));
	assert_true(mgw_jwks_has_kid(set, "e"));
	assert_true(mgw_jwks_has_kid(set, "d"));
	assert_false(mgw_jwks_has_kid(set, "x"));
	assert_false(mgw_jwks_has_kid(set, ""));
	assert_false(mgw_jwks_has_kid(set, NULL));
	assert_true(verifies(set, k_rsa, "RS256", "r"));
	assert_false(verifies(set, k_rsa, "PS256", "r")); /* its alg is RS256 */
	assert_true(verifies(set, k_ec, "ES256", "e"));
	assert_true(verifies(set, k_ed, "EdDSA", "d"));
	assert_true(verifies(set, k_ed, "EdDSA", NULL));
	mgw_jwks_unref(set);
	json_decref(doc);
	free(s);
}

static void test_document_errors(void **state)
{
	static const struct {
		const char *doc, *err;
	} cases[] = {
		{"", "not JSON"},
		{"{\"keys\":[]", "not JSON"},
		{"[]", "not a JWKS"},
		{"{}", "not a JWKS"},
		{"{\"keys\":{}}", "not a JWKS"},
		{"{\"keys\":null}", "not a JWKS"},
		{"{\"keys\":[]}", "no keys"},
		{"{\"keys\":[],\"keys\":[]}", "not JSON: duplicate"},
		{"{\"keys\":[42]}", "no usable key (key 0: not an object)"},
		{"{\"keys\":[{\"kty\":\"oct\",\"k\":\"AAAA\"}]}",
		 "no usable key (key 0: \"kty\" not RSA, EC or OKP)"},
	};
	char err[200];
	size_t skipped = 9;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_null(parse(cases[i].doc, &skipped, err));
		if (strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("%s: \"%s\"", cases[i].doc, err);
		assert_int_equal(skipped, 0);
	}
}

static void test_too_many_keys(void **state)
{
	json_t *arr = json_array(), *doc = json_object();
	char err[200], *s;

	(void)state;
	for (int i = 0; i <= MGW_JWKS_MAX_KEYS; i++)
		json_array_append_new(arr, mgw_ti_jwk(k_ed, NULL, NULL));
	json_object_set_new(doc, "keys", arr);
	s = json_dumps(doc, 0);
	assert_null(parse(s, NULL, err));
	assert_string_equal(err, "more than 100 keys");
	free(s);
	json_array_remove(arr, 0);
	s = json_dumps(doc, 0);
	{
		struct mgw_jwks *set = parse(s, NULL, err);

		assert_non_null(set);
		assert_int_equal(mgw_jwks_count(set), MGW_JWKS_MAX_KEYS);
		mgw_jwks_unref(set);
	}
	free(s);
	json_decref(doc);
}

/* A JWK of k with member name set to the JSON value (NULL: removed). */
static json_t *jwk_with(EVP_PKEY *k, const char *name, const char *value)
{
	json_t *j = mgw_ti_jwk(k, "bad", NULL);

	if (!value)
		json_object_del(j, name);
	else
		json_object_set_new(j, name, json_loads(value, JSON_DECODE_ANY, NULL));
	return j;
}

/* A JWK of k with one character of member name's value replaced. */
static json_t *jwk_edit(EVP_PKEY *k, const char *name, size_t at, char c)
{
	json_t *j = mgw_ti_jwk(k, "bad", NULL);
	char *s = strdup(json_string_value(json_object_get(j, name)));

	s[at] = s[at] == c ? (c == 'A' ? 'B' : 'A') : c;
	json_object_set_new(j, name, json_string(s));
	free(s);
	return j;
}

static void test_unusable_keys_skipped(void **state)
{
	struct {
		json_t *jwk;
		const char *why;
	} cases[] = {
		{mgw_ti_jwk(k_small, "bad", NULL), "RSA key under 2048 bits"},
		{jwk_with(k_rsa, "use", "\"enc\""), "\"use\" is not \"sig\""},
		{jwk_with(k_rsa, "use", "1"), "\"use\" is not \"sig\""},
		{jwk_with(k_rsa, "key_ops", "[\"encrypt\"]"), "\"key_ops\" without"},
		{jwk_with(k_rsa, "key_ops", "\"verify\""), "\"key_ops\" without"},
		{jwk_with(k_rsa, "alg", "\"RS384\""), "\"alg\" not"},
		{jwk_with(k_rsa, "alg", "\"none\""), "\"alg\" not"},
		{jwk_with(k_rsa, "alg", "\"HS256\""), "\"alg\" not"},
		{jwk_with(k_rsa, "alg", "256"), "\"alg\" not"},
		{jwk_with(k_rsa, "alg", "\"ES256\""), "\"alg\" does not fit"},
		{jwk_with(k_ec, "alg", "\"EdDSA\""), "\"alg\" does not fit"},
		{jwk_with(k_ed, "alg", "\"RS256\""), "\"alg\" does not fit"},
		{jwk_with(k_rsa, "kid", "5"), "\"kid\" not a string"},
		{jwk_with(k_rsa, "kty", NULL), "no \"kty\""},
		{jwk_with(k_rsa, "kty", "\"oct\""), "\"kty\" not"},
		{jwk_with(k_rsa, "kty", "\"rsa\""), "\"kty\" not"},
		{jwk_edit(k_rsa, "n", 10, '+'), "no valid base64url \"n\""},
		{jwk_edit(k_rsa, "n", 10, '='), "no valid base64url \"n\""},
		{jwk_with(k_rsa, "n", "\"AQAB==\""), "no valid base64url \"n\""},
		{jwk_with(k_rsa, "n", "\"\""), "no valid base64url \"n\""},
		{jwk_with(k_rsa, "n", NULL), "no valid base64url \"n\""},
		{jwk_with(k_rsa, "e", NULL), "no valid base64url \"e\""},
		{jwk_with(k_rsa, "e", "\"AQAA\""), "RSA exponent unusable"},
		{jwk_with(k_rsa, "e", "\"AQ\""), "RSA exponent unusable"},
		{jwk_with(k_ec, "crv", "\"P-384\""), "EC curve not P-256"},
		{jwk_with(k_ec, "crv", "\"secp256k1\""), "EC curve not P-256"},
		{jwk_with(k_ec, "crv", NULL), "EC curve not P-256"},
		{jwk_with(k_ec, "x", "\"AAAA\""), "no valid 32-byte"},
		{jwk_edit(k_ec, "y", 3, '*'), "no valid 32-byte"},
		{jwk_edit(k_ec, "y", 5, 'A'), "EC point not on P-256"},
		{jwk_with(k_ed, "crv", "\"X25519\""), "OKP curve not Ed25519"},
		{jwk_with(k_ed, "crv", "\"Ed448\""), "OKP curve not Ed25519"},
		{jwk_with(k_ed, "x", "\"AAAA\""), "no valid 32-byte base64url \"x\""},
		{json_string("RSA"), "not an object"},
	};
	char err[200], *s;
	size_t skipped;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mgw_jwks *set;
		char want[160];

		assert_non_null(cases[i].jwk);
		/* beside a good key: skipped and counted */
		s = doc_of(json_incref(cases[i].jwk), mgw_ti_jwk(k_ed, "good", NULL));
		set = parse(s, &skipped, err);
		free(s);
		if (!set)
			fail_msg("case %zu: %s", i, err);
		assert_int_equal(mgw_jwks_count(set), 1);
		assert_int_equal(skipped, 1);
		assert_false(mgw_jwks_has_kid(set, "bad"));
		assert_true(mgw_jwks_has_kid(set, "good"));
		mgw_jwks_unref(set);
		/* alone: an error naming the key and the reason */
		s = doc_of(cases[i].jwk, NULL);
		assert_null(parse(s, &skipped, err));
		free(s);
		assert_int_equal(ERR_peek_error(), 0);
		snprintf(want, sizeof(want), "no usable key (key 0: %s", cases[i].why);
		if (strncmp(err, want, strlen(want)) != 0)
			fail_msg("case %zu: \"%s\", want \"%s\"", i, err, want);
	}
}

static void test_use_and_ops_accepted(void **state)
{
	json_t *a = jwk_with(k_rsa, "key_ops", "[\"sign\",\"verify\"]");
	json_t *b = jwk_with(k_ed, "use", NULL);
	struct mgw_jwks *set;
	char err[200], *s;
	size_t skipped;

	(void)state;
	/* a private member is ignored: the public part is used */
	json_object_set_new(b, "d", json_string("AAAA"));
	s = doc_of(a, b);
	set = parse(s, &skipped, err);
	assert_non_null(set);
	assert_int_equal(mgw_jwks_count(set), 2);
	assert_true(verifies(set, k_ed, "EdDSA", "bad"));
	assert_true(verifies(set, k_rsa, "PS256", "bad"));
	mgw_jwks_unref(set);
	free(s);
}

static void test_merge(void **state)
{
	char err[200], *s;
	struct mgw_jwks *a, *b, *m, *m2;

	(void)state;
	s = doc_of(mgw_ti_jwk(k_rsa, "r", NULL), mgw_ti_jwk(k_ec, "e", NULL));
	a = parse(s, NULL, err);
	free(s);
	s = doc_of(mgw_ti_jwk(k_ed, "d", NULL), NULL);
	b = parse(s, NULL, err);
	free(s);
	assert_non_null(a);
	assert_non_null(b);
	m = mgw_jwks_merge(a, b);
	assert_int_equal(mgw_jwks_count(m), 3);
	assert_null(mgw_jwks_merge(NULL, NULL));
	m2 = mgw_jwks_merge(NULL, b);
	assert_int_equal(mgw_jwks_count(m2), 1);
	assert_false(verifies(a, k_ed, "EdDSA", "d"));
	/* the merged set outlives its parts */
	mgw_jwks_unref(a);
	mgw_jwks_unref(b);
	assert_true(verifies(m, k_rsa, "RS256", "r"));
	assert_true(verifies(m, k_ec, "ES256", "e"));
	assert_true(verifies(m, k_ed, "EdDSA", "d"));
	assert_true(verifies(m2, k_ed, "EdDSA", "d"));
	assert_true(mgw_jwks_ref(m) == m);
	mgw_jwks_unref(m);
	mgw_jwks_unref(m);
	mgw_jwks_unref(m2);
	mgw_jwks_unref(NULL);
	assert_null(mgw_jwks_ref(NULL));
	assert_int_equal(mgw_jwks_count(NULL), 0);
}

struct worker {
	struct mgw_jwks *set;
	int ok;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 200; i++) {
		struct mgw_jwks *s = mgw_jwks_ref(w->set);

		w->ok += verifies(s, k_ed, "EdDSA", "d");
		mgw_jwks_unref(s);
	}
	/* each worker took one reference for itself */
	mgw_jwks_unref(w->set);
	return NULL;
}

static void test_shared_between_threads(void **state)
{
	char err[200], *s = doc_of(mgw_ti_jwk(k_ed, "d", NULL), NULL);
	struct mgw_jwks *set = parse(s, NULL, err);
	struct worker w[4];
	pthread_t th[4];

	(void)state;
	free(s);
	assert_non_null(set);
	for (int i = 0; i < 4; i++) {
		w[i].set = mgw_jwks_ref(set);
		w[i].ok = 0;
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	mgw_jwks_unref(set); /* the workers' references keep it */
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].ok, 200);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_types),
		cmocka_unit_test(test_document_errors),
		cmocka_unit_test(test_too_many_keys),
		cmocka_unit_test(test_unusable_keys_skipped),
		cmocka_unit_test(test_use_and_ops_accepted),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_shared_between_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
