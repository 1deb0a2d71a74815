/* jwt_test.c - unit tests for src/auth/jwt.c and token.c: keys made here
 * with OpenSSL (RSA 2048, P-256, Ed25519), their JWKS, and tokens signed
 * by tests/tools/jws_sign.c (EVP_DigestSign, no code of src/auth/) for
 * each algorithm, valid and broken in every way the verifier must see. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "auth/jwt.h"
#include "auth/principal.h"
#include "core/errors.h"
#include "tests/tools/jws_sign.h"
#include "util/base64.h"

#define NOW 1767225600 /* 2026-01-01T00:00:00Z */
#define ISS "https://issuer.test"
#define AUD "https://mcp.test/mcp"

/* one key per type; the RSA key serves RS256 and PS256; "ps" is a second
 * RSA key whose JWK says "alg": "PS256" */
static EVP_PKEY *k_rsa, *k_ps, *k_ec, *k_ed;
static struct mgw_jwks *keys;
static struct mgw_jwt_policy pol;

static EVP_PKEY *key_for(const char *alg, const char *kid)
{
	if (kid && strcmp(kid, "ps") == 0)
		return k_ps;
	if (strcmp(alg, "ES256") == 0)
		return k_ec;
	if (strcmp(alg, "EdDSA") == 0)
		return k_ed;
	return k_rsa;
}

static int setup(void **state)
{
	json_t *doc = json_object(), *arr = json_array();
	char *s, err[200];
	size_t skipped = 99;

	(void)state;
	k_rsa = mgw_ti_keygen("RS256", 2048);
	k_ps = mgw_ti_keygen("PS256", 2048);
	k_ec = mgw_ti_keygen("ES256", 0);
	k_ed = mgw_ti_keygen("EdDSA", 0);
	if (!k_rsa || !k_ps || !k_ec || !k_ed)
		return -1;
	json_array_append_new(arr, mgw_ti_jwk(k_rsa, "rsa", NULL));
	json_array_append_new(arr, mgw_ti_jwk(k_ps, "ps", "PS256"));
	json_array_append_new(arr, mgw_ti_jwk(k_ec, "ec", "ES256"));
	json_array_append_new(arr, mgw_ti_jwk(k_ed, "ed", NULL));
	json_object_set_new(doc, "keys", arr);
	s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	keys = mgw_jwks_parse(s, strlen(s), &skipped, err, sizeof(err));
	free(s);
	if (!keys || mgw_jwks_count(keys) != 4 || skipped != 0)
		return -1;
	pol.issuer = ISS;
	pol.audience = AUD;
	pol.skew = 60;
	pol.max_token_bytes = 8192;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mgw_jwks_unref(keys);
	EVP_PKEY_free(k_rsa);
	EVP_PKEY_free(k_ps);
	EVP_PKEY_free(k_ec);
	EVP_PKEY_free(k_ed);
	return 0;
}

/* Claims with iss, aud, sub, exp = NOW + 300 and extra members. */
static char *claims(const char *extra)
{
	static char buf[16384];

	snprintf(buf, sizeof(buf),
	         "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"sub\":\"alice\","
	         "\"exp\":%d%s%s}", NOW + 300, extra ? "," : "", extra ? extra : "");
	return buf;
}

/* A token signed with alg by its key; kid NULL: none in the header. */
static char *sign(const char *alg, const char *kid, const char *payload)
{
	char *h = mgw_ti_header(alg, kid);
	char *t = mgw_ti_sign(key_for(alg, kid), alg, h, payload, strlen(payload), 0);

	free(h);
	assert_non_null(t);
	return t;
}

/* A token with the raw header and payload JSON given, signed RS256. */
static char *sign_raw(const char *header, const char *payload)
{
	char *t = mgw_ti_sign(k_rsa, "RS256", header, payload, strlen(payload), 0);

	assert_non_null(t);
	return t;
}

static char why[160];

static enum mgw_jwt_result verify_at(const char *t, const struct mgw_jwt_policy *p,
                                     int64_t now)
{
	struct mgw_principal *pr = (struct mgw_principal *)1;
	enum mgw_jwt_result r;

	memset(why, 'x', sizeof(why));
	r = mgw_jwt_verify(t, strlen(t), keys, p, now, &pr, why, sizeof(why));
	assert_non_null(memchr(why, '\0', sizeof(why)));
	if (r == MGW_JWT_OK) {
		assert_non_null(pr);
		mgw_principal_free(pr);
	} else {
		assert_null(pr);
		assert_true(strlen(why) > 0);
	}
	return r;
}

static enum mgw_jwt_result verify(const char *t)
{
	return verify_at(t, &pol, NOW);
}

/* Verifies and frees t, expecting want. */
static void expect(char *t, enum mgw_jwt_result want)
{
	enum mgw_jwt_result r = verify(t);

	if (r != want)
		fail_msg("%s: got %s (%s), want %s", t, mgw_jwt_result_name(r), why,
		         mgw_jwt_result_name(want));
	free(t);
}

static const char *const all_algs[][2] = {
	{"RS256", "rsa"}, {"PS256", "rsa"}, {"PS256", "ps"},
	{"ES256", "ec"}, {"EdDSA", "ed"},
};
#define N_ALGS (sizeof(all_algs) / sizeof(all_algs[0]))

static void test_valid_each_alg(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ALGS; i++) {
		char *t = sign(all_algs[i][0], all_algs[i][1],
		               claims("\"client_id\":\"app1\",\"scope\":\"mcp read\""));
		struct mgw_principal *p = NULL;
		char buf[64];

		assert_int_equal(mgw_jwt_verify(t, strlen(t), keys, &pol, NOW, &p,
		                                why, sizeof(why)), MGW_JWT_OK);
		assert_string_equal(why, "");
		assert_int_equal(p->kind, MGW_PRINCIPAL_JWT);
		assert_string_equal(p->sub, "alice");
		assert_string_equal(p->client_id, "app1");
		assert_int_equal(p->n_scopes, 2);
		assert_true(mgw_principal_has_scope(p, "mcp"));
		assert_true(mgw_principal_has_scope(p, "read"));
		assert_false(mgw_principal_has_scope(p, "write"));
		assert_string_equal(mgw_principal_claim(p, "iss", buf, sizeof(buf)), ISS);
		assert_string_equal(mgw_principal_claim(p, "exp", buf, sizeof(buf)),
		                    "1767225900");
		mgw_principal_free(p);
		free(t);
	}
}

static void test_kidless_token(void **state)
{
	(void)state;
	/* tried against every key of the algorithm's type */
	for (size_t i = 0; i < N_ALGS; i++) {
		char *h = mgw_ti_header(all_algs[i][0], NULL);
		const char *c = claims(NULL);
		char *t = mgw_ti_sign(key_for(all_algs[i][0], all_algs[i][1]),
		                      all_algs[i][0], h, c, strlen(c), 0);

		expect(t, MGW_JWT_OK);
		free(h);
	}
}

static void test_principal_fields(void **state)
{
	static const struct {
		const char *extra;
		const char *client_id;
		size_t n_scopes;
		const char *scope;
	} cases[] = {
		{NULL, NULL, 0, NULL},
		{"\"azp\":\"web\"", "web", 0, NULL},
		{"\"azp\":\"web\",\"client_id\":\"cli\"", "cli", 0, NULL},
		{"\"scope\":\"  a   b c \"", NULL, 3, "c"},
		{"\"scp\":[\"x\",\"y\"]", NULL, 2, "y"},
		{"\"scp\":\"x y z\"", NULL, 3, "z"},
		{"\"scope\":\"s\",\"scp\":[\"x\"]", NULL, 1, "s"},
		{"\"scope\":\"\"", NULL, 0, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = sign("EdDSA", "ed", claims(cases[i].extra));
		struct mgw_principal *p = NULL;

		assert_int_equal(mgw_jwt_verify(t, strlen(t), keys, &pol, NOW, &p,
		                                why, sizeof(why)), MGW_JWT_OK);
		if (cases[i].client_id)
			assert_string_equal(p->client_id, cases[i].client_id);
		else
			assert_null(p->client_id);
		assert_int_equal(p->n_scopes, cases[i].n_scopes);
		if (cases[i].scope)
			assert_true(mgw_principal_has_scope(p, cases[i].scope));
		assert_true(json_is_object(p->claims));
		mgw_principal_free(p);
		free(t);
	}
}

static void test_bad_claim_types(void **state)
{
	static const char *const bad[] = {
		"{\"sub\":\"a\"}",                               /* no exp */
		"{\"sub\":\"a\",\"exp\":\"1767225900\"}",        /* exp a string */
		"{\"sub\":\"a\",\"exp\":1767225900,\"nbf\":true}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"iat\":null}",
		"{\"exp\":1767225900}",                          /* no sub */
		"{\"sub\":1,\"exp\":1767225900}",
		"{\"sub\":\"\",\"exp\":1767225900}",
		"{\"sub\":\"alice\\u0000x\",\"exp\":1767225900}", /* not "alice" */
		"{\"sub\":\"a\",\"exp\":1767225900,\"iss\":7}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"aud\":{}}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"aud\":[\"x\",3]}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"client_id\":5}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"azp\":[]}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"scope\":[\"a\"]}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"scp\":[\"a b\"]}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"scp\":[1]}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"scp\":{}}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"scope\":\"a\\\"b\"}",
		"{\"sub\":\"a\",\"exp\":1767225900,\"scope\":\"caf\\u00e9\"}",
	};
	struct mgw_jwt_policy open = pol;

	(void)state;
	open.issuer = open.audience = NULL;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *t = sign("ES256", "ec", bad[i]);
		enum mgw_jwt_result r = verify_at(t, &open, NOW);

		if (r != MGW_JWT_BAD_CLAIMS)
			fail_msg("%s: %s", bad[i], mgw_jwt_result_name(r));
		free(t);
	}
}

static void test_expiry_and_skew(void **state)
{
	struct mgw_jwt_policy p = pol;
	char c[256];
	char *t;

	(void)state;
	/* exp 30 s ago: valid within 60 s of skew, expired without */
	snprintf(c, sizeof(c), "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\","
	         "\"sub\":\"a\",\"exp\":%d}", NOW - 30);
	t = sign("RS256", "rsa", c);
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_OK);
	p.skew = 0;
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_EXPIRED);
	assert_string_equal(why, "token expired");
	free(t);
	/* exp 61 s ago: expired even with skew */
	snprintf(c, sizeof(c), "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\","
	         "\"sub\":\"a\",\"exp\":%d}", NOW - 61);
	t = sign("ES256", "ec", c);
	assert_int_equal(verify_at(t, &pol, NOW), MGW_JWT_EXPIRED);
	free(t);
	/* the boundary: exp == now is expired; a real exp half a second on
	 * is not */
	p.skew = 0;
	snprintf(c, sizeof(c), "{\"sub\":\"a\",\"exp\":%d,\"iss\":\"" ISS "\","
	         "\"aud\":\"" AUD "\"}", NOW);
	t = sign("EdDSA", "ed", c);
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_EXPIRED);
	assert_int_equal(verify_at(t, &p, NOW - 1), MGW_JWT_OK);
	free(t);
	snprintf(c, sizeof(c), "{\"sub\":\"a\",\"exp\":%d.5,\"iss\":\"" ISS "\","
	         "\"aud\":\"" AUD "\"}", NOW);
	t = sign("EdDSA", "ed", c);
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_OK);
	assert_int_equal(verify_at(t, &p, NOW + 1), MGW_JWT_EXPIRED);
	free(t);
}

static void test_not_yet_valid(void **state)
{
	struct mgw_jwt_policy p = pol;
	char extra[64];
	char *t;

	(void)state;
	/* nbf 30 s ahead: valid with 60 s of skew, not without */
	snprintf(extra, sizeof(extra), "\"nbf\":%d", NOW + 30);
	t = sign("PS256", "ps", claims(extra));
	assert_int_equal(verify_at(t, &pol, NOW), MGW_JWT_OK);
	p.skew = 0;
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_NOT_YET_VALID);
	assert_int_equal(verify_at(t, &p, NOW + 30), MGW_JWT_OK);
	free(t);
	snprintf(extra, sizeof(extra), "\"nbf\":%d", NOW + 120);
	t = sign("ES256", "ec", claims(extra));
	assert_int_equal(verify_at(t, &pol, NOW), MGW_JWT_NOT_YET_VALID);
	assert_string_equal(why, "token not yet valid");
	free(t);
	/* iat in the future beyond the skew */
	snprintf(extra, sizeof(extra), "\"iat\":%d", NOW + 120);
	t = sign("ES256", "ec", claims(extra));
	assert_int_equal(verify_at(t, &pol, NOW), MGW_JWT_NOT_YET_VALID);
	free(t);
	snprintf(extra, sizeof(extra), "\"iat\":%d.25,\"nbf\":%d", NOW - 10, NOW - 10);
	t = sign("ES256", "ec", claims(extra));
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_OK);
	free(t);
}

static void test_audience(void **state)
{
	static const struct {
		const char *aud;
		enum mgw_jwt_result want;
	} cases[] = {
		{"\"aud\":\"https://other.test/mcp\"", MGW_JWT_BAD_AUDIENCE},
		{"\"aud\":\"" AUD "/\"", MGW_JWT_BAD_AUDIENCE},
		{"\"aud\":[]", MGW_JWT_BAD_AUDIENCE},
		{"\"aud\":[\"a\",\"b\"]", MGW_JWT_BAD_AUDIENCE},
		{"\"aud\":[\"a\",\"" AUD "\"]", MGW_JWT_OK},
		{"\"aud\":[\"" AUD "\"]", MGW_JWT_OK},
		{"\"aud\":\"" AUD "\"", MGW_JWT_OK},
		{"\"aud\":\"" AUD "\\u0000\"", MGW_JWT_BAD_AUDIENCE},
		{"\"aud\":[\"" AUD "\",null]", MGW_JWT_BAD_CLAIMS},
	};
	struct mgw_jwt_policy any = pol;
	char c[512];

	(void)state;
	any.audience = NULL;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t;

		snprintf(c, sizeof(c), "{\"iss\":\"" ISS "\",\"sub\":\"a\","
		         "\"exp\":%d,%s}", NOW + 60, cases[i].aud);
		t = sign("RS256", "rsa", c);
		if (verify(t) != cases[i].want)
			fail_msg("%s: %s", cases[i].aud, mgw_jwt_result_name(verify(t)));
		/* without an audience configured, only the type matters */
		assert_int_equal(verify_at(t, &any, NOW),
		                 cases[i].want == MGW_JWT_BAD_CLAIMS ? MGW_JWT_BAD_CLAIMS
		                                                     : MGW_JWT_OK);
		free(t);
	}
	/* no aud at all */
	snprintf(c, sizeof(c), "{\"iss\":\"" ISS "\",\"sub\":\"a\",\"exp\":%d}",
	         NOW + 60);
	expect(sign("RS256", "rsa", c), MGW_JWT_BAD_AUDIENCE);
	assert_string_equal(why, "wrong audience");
}

static void test_issuer(void **state)
{
	char c[512];
	struct mgw_jwt_policy any = pol;
	char *t;

	(void)state;
	snprintf(c, sizeof(c), "{\"iss\":\"https://evil.test\",\"aud\":\"" AUD "\","
	         "\"sub\":\"a\",\"exp\":%d}", NOW + 60);
	expect(sign("EdDSA", "ed", c), MGW_JWT_BAD_ISSUER);
	snprintf(c, sizeof(c), "{\"aud\":\"" AUD "\",\"sub\":\"a\",\"exp\":%d}",
	         NOW + 60);
	expect(sign("EdDSA", "ed", c), MGW_JWT_BAD_ISSUER);
	snprintf(c, sizeof(c), "{\"iss\":\"" ISS "\\u0000x\",\"aud\":\"" AUD "\","
	         "\"sub\":\"a\",\"exp\":%d}", NOW + 60);
	t = sign("EdDSA", "ed", c);
	assert_int_equal(verify(t), MGW_JWT_BAD_CLAIMS);
	free(t);
	snprintf(c, sizeof(c), "{\"iss\":\"" ISS "x\",\"aud\":\"" AUD "\","
	         "\"sub\":\"a\",\"exp\":%d}", NOW + 60);
	t = sign("EdDSA", "ed", c);
	assert_int_equal(verify(t), MGW_JWT_BAD_ISSUER);
	any.issuer = NULL;
	assert_int_equal(verify_at(t, &any, NOW), MGW_JWT_OK);
	free(t);
}

static void test_unknown_kid(void **state)
{
	char *t, buf[64];
	const char *k;

	(void)state;
	t = sign("RS256", "attacker-kid-xyz", claims(NULL));
	/* signed by a key of the set, but the kid names none: not tried */
	expect(strdup(t), MGW_JWT_UNKNOWN_KID);
	assert_null(strstr(why, "attacker"));
	k = mgw_jwt_kid(t, strlen(t), buf, sizeof(buf));
	assert_non_null(k);
	assert_string_equal(k, "attacker-kid-xyz");
	assert_false(mgw_jwks_has_kid(keys, k));
	assert_null(mgw_jwt_kid(t, strlen(t), buf, 5)); /* does not fit */
	free(t);
	t = sign("RS256", NULL, claims(NULL));
	assert_null(mgw_jwt_kid(t, strlen(t), buf, sizeof(buf)));
	free(t);
	assert_null(mgw_jwt_kid("x.y.z", 5, buf, sizeof(buf)));
	assert_true(mgw_jwks_has_kid(keys, "ec"));
}

static void test_kidless_without_fitting_key(void **state)
{
	json_t *doc = json_pack("{s:[o]}", "keys", mgw_ti_jwk(k_rsa, NULL, NULL));
	char *s = json_dumps(doc, 0), err[128];
	struct mgw_jwks *rsa_only = mgw_jwks_parse(s, strlen(s), NULL, err, sizeof(err));
	struct mgw_principal *p = NULL;
	char *t = sign("ES256", NULL, claims(NULL));

	(void)state;
	assert_non_null(rsa_only);
	assert_int_equal(mgw_jwt_verify(t, strlen(t), rsa_only, &pol, NOW, &p, why,
	                                sizeof(why)), MGW_JWT_UNKNOWN_KID);
	free(t);
	/* a kid-less RS256 token finds the kid-less key */
	t = sign("RS256", NULL, claims(NULL));
	assert_int_equal(mgw_jwt_verify(t, strlen(t), rsa_only, &pol, NOW, &p, why,
	                                sizeof(why)), MGW_JWT_OK);
	mgw_principal_free(p);
	free(t);
	/* no set at all */
	t = sign("RS256", NULL, claims(NULL));
	assert_int_equal(mgw_jwt_verify(t, strlen(t), NULL, &pol, NOW, &p, why,
	                                sizeof(why)), MGW_JWT_UNKNOWN_KID);
	free(t);
	mgw_jwks_unref(rsa_only);
	json_decref(doc);
	free(s);
}

/* t with one bit of its part (0 header, 1 payload, 2 signature) flipped
 * in the decoded bytes at byte i, re-encoded. */
static char *flip(const char *t, int part, size_t i, unsigned char bit)
{
	const char *a = t, *b;
	size_t n;
	unsigned char *raw;
	char *enc, *out;

	for (int k = 0; k < part; k++)
		a = strchr(a, '.') + 1;
	b = strchr(a, '.');
	if (!b)
		b = a + strlen(a);
	raw = mgw_base64_decode(a, (size_t)(b - a), 1, &n);
	assert_non_null(raw);
	assert_true(i < n);
	raw[i] ^= bit;
	enc = mgw_base64_encode(raw, n, 1);
	out = malloc(strlen(t) + 8);
	sprintf(out, "%.*s%s%s", (int)(a - t), t, enc, b);
	free(raw);
	free(enc);
	return out;
}

static void test_bad_signature(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ALGS; i++) {
		char *t = sign(all_algs[i][0], all_algs[i][1], claims(NULL));
		/* "sub":"alice" is at a fixed place: alice -> alicd keeps the
		 * JSON valid, so only the signature can tell */
		const char *c = claims(NULL);
		size_t at = (size_t)(strstr(c, "alice") - c) + 4;

		expect(flip(t, 2, 0, 0x01), MGW_JWT_BAD_SIGNATURE);
		/* nothing left on the thread's OpenSSL error queue for the
		 * TLS code of the same worker to trip over */
		assert_int_equal(ERR_peek_error(), 0);
		expect(flip(t, 2, 20, 0x80), MGW_JWT_BAD_SIGNATURE);
		expect(flip(t, 1, at, 0x01), MGW_JWT_BAD_SIGNATURE);
		expect(strdup(t), MGW_JWT_OK);
		free(t);
	}
	/* a signature by another key of the same type and kid */
	{
		char *h = mgw_ti_header("RS256", "rsa");
		const char *c = claims(NULL);
		char *t = mgw_ti_sign(k_ps, "RS256", h, c, strlen(c), 0);

		expect(t, MGW_JWT_BAD_SIGNATURE);
		assert_string_equal(why, "invalid signature");
		free(h);
	}
	/* RS256 signature verified as PS256 and the other way round */
	{
		char *h = mgw_ti_header("PS256", "rsa");
		const char *c = claims(NULL);
		char *t = mgw_ti_sign(k_rsa, "RS256", h, c, strlen(c), 0);

		expect(t, MGW_JWT_BAD_SIGNATURE);
		free(h);
		h = mgw_ti_header("RS256", "rsa");
		expect(mgw_ti_sign(k_rsa, "PS256", h, c, strlen(c), 0),
		       MGW_JWT_BAD_SIGNATURE);
		free(h);
	}
}

static void test_alg_none(void **state)
{
	const char *c = claims(NULL);
	char *h;

	(void)state;
	h = mgw_ti_header("none", NULL);
	expect(mgw_ti_unsigned(h, c, strlen(c)), MGW_JWT_BAD_ALG);
	free(h);
	h = mgw_ti_header("none", "rsa");
	expect(mgw_ti_unsigned(h, c, strlen(c)), MGW_JWT_BAD_ALG);
	free(h);
	/* "None", "NONE", and a none token carrying a real signature */
	expect(mgw_ti_unsigned("{\"alg\":\"None\"}", c, strlen(c)), MGW_JWT_BAD_ALG);
	expect(mgw_ti_sign(k_rsa, "RS256", "{\"alg\":\"NONE\",\"kid\":\"rsa\"}", c,
	                   strlen(c), 0), MGW_JWT_BAD_ALG);
	expect(sign_raw("{\"alg\":\"none\",\"kid\":\"rsa\"}", c), MGW_JWT_BAD_ALG);
}

static void test_other_algs_refused(void **state)
{
	static const char *const algs[] = {
		"HS256", "HS384", "HS512", "RS384", "RS512", "PS384", "PS512",
		"ES384", "ES512", "ES256K", "Ed25519", "EdDSA ", "rs256", "",
	};
	const char *c = claims(NULL);

	(void)state;
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		char *h = mgw_ti_header(algs[i], "rsa");

		expect(sign_raw(h, c), MGW_JWT_BAD_ALG);
		free(h);
	}
	expect(sign_raw("{\"alg\":256,\"kid\":\"rsa\"}", c), MGW_JWT_MALFORMED);
	expect(sign_raw("{\"kid\":\"rsa\"}", c), MGW_JWT_MALFORMED);
}

/* The classic confusion: HS256 keyed with the RSA public key as the
 * verifier would hold it (PEM, DER, the JWK's n). */
static void test_hs256_with_rsa_public_key(void **state)
{
	const char *c = claims(NULL);
	BIO *bio = BIO_new(BIO_s_mem());
	unsigned char *der = NULL;
	char *pem, *h;
	long pemlen;
	int derlen;

	(void)state;
	assert_int_equal(PEM_write_bio_PUBKEY(bio, k_rsa), 1);
	pemlen = BIO_get_mem_data(bio, &pem);
	derlen = i2d_PUBKEY(k_rsa, &der);
	assert_true(derlen > 0);
	h = mgw_ti_header("HS256", "rsa");
	expect(mgw_ti_sign_hs256(pem, (size_t)pemlen, h, c, strlen(c)), MGW_JWT_BAD_ALG);
	expect(mgw_ti_sign_hs256(der, (size_t)derlen, h, c, strlen(c)), MGW_JWT_BAD_ALG);
	free(h);
	h = mgw_ti_header("HS256", NULL);
	expect(mgw_ti_sign_hs256(pem, (size_t)pemlen, h, c, strlen(c)), MGW_JWT_BAD_ALG);
	free(h);
	OPENSSL_free(der);
	BIO_free(bio);
}

/* A valid signature under an algorithm that does not fit the key named by
 * kid, or that the key's "alg" excludes. */
static void test_alg_key_mismatch(void **state)
{
	const char *c = claims(NULL);
	char *h, *t;

	(void)state;
	/* "ps" says alg PS256: an RS256 signature by it is refused */
	h = mgw_ti_header("RS256", "ps");
	t = mgw_ti_sign(k_ps, "RS256", h, c, strlen(c), 0);
	expect(t, MGW_JWT_BAD_ALG);
	assert_string_equal(why, "alg does not fit the key");
	free(h);
	/* ES256 naming the RSA key, EdDSA naming the EC key */
	h = mgw_ti_header("ES256", "rsa");
	expect(mgw_ti_sign(k_ec, "ES256", h, c, strlen(c), 0), MGW_JWT_BAD_ALG);
	free(h);
	h = mgw_ti_header("EdDSA", "ec");
	expect(mgw_ti_sign(k_ed, "EdDSA", h, c, strlen(c), 0), MGW_JWT_BAD_ALG);
	free(h);
	/* RS256 naming the Ed25519 key */
	h = mgw_ti_header("RS256", "ed");
	expect(mgw_ti_sign(k_rsa, "RS256", h, c, strlen(c), 0), MGW_JWT_BAD_ALG);
	free(h);
	/* kid-less RS256 by the "ps" key: the only RSA key that could check
	 * it, "rsa", does not: a bad signature */
	h = mgw_ti_header("RS256", NULL);
	expect(mgw_ti_sign(k_ps, "RS256", h, c, strlen(c), 0), MGW_JWT_BAD_SIGNATURE);
	free(h);
}

static void test_es256_der_refused(void **state)
{
	const char *c = claims(NULL);
	char *h = mgw_ti_header("ES256", "ec");
	char *t = mgw_ti_sign(k_ec, "ES256", h, c, strlen(c), MGW_TI_ES_DER);
	char *raw = mgw_ti_sign(k_ec, "ES256", h, c, strlen(c), 0);

	(void)state;
	expect(t, MGW_JWT_BAD_SIGNATURE);
	expect(raw, MGW_JWT_OK);
	free(h);
	/* 63 and 65 bytes */
	{
		char *ok = sign("ES256", "ec", c);
		char *sig = strrchr(ok, '.') + 1;
		size_t n;
		unsigned char *b = mgw_base64_decode(sig, strlen(sig), 1, &n), big[65];
		char *e, *tt;

		assert_int_equal(n, 64);
		e = mgw_base64_encode(b, 63, 1);
		tt = malloc(strlen(ok) + 8);
		sprintf(tt, "%.*s%s", (int)(sig - ok), ok, e);
		expect(tt, MGW_JWT_BAD_SIGNATURE);
		free(e);
		memcpy(big, b, 64);
		big[64] = 0;
		e = mgw_base64_encode(big, 65, 1);
		tt = malloc(strlen(ok) + 8);
		sprintf(tt, "%.*s%s", (int)(sig - ok), ok, e);
		expect(tt, MGW_JWT_BAD_SIGNATURE);
		free(e);
		free(b);
		free(ok);
	}
}

static void test_oversized(void **state)
{
	struct mgw_jwt_policy p = pol;
	char *t = sign("EdDSA", "ed", claims(NULL)), *big;
	char pad[9000];

	(void)state;
	p.max_token_bytes = strlen(t);
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_OK);
	p.max_token_bytes = strlen(t) - 1;
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_TOO_LARGE);
	free(t);
	/* 0: the default bound, 8192 bytes */
	memset(pad, 'a', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	big = malloc(sizeof(pad) + 64);
	snprintf(big, sizeof(pad) + 64, "\"pad\":\"%s\"", pad);
	t = sign("EdDSA", "ed", claims(big));
	p.max_token_bytes = 0;
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_TOO_LARGE);
	assert_string_equal(why, "token too large");
	p.max_token_bytes = strlen(t);
	assert_int_equal(verify_at(t, &p, NOW), MGW_JWT_OK);
	free(t);
	free(big);
}

static void test_malformed(void **state)
{
	const char *c = claims(NULL);
	char *good = sign("RS256", "rsa", c), *t;
	const char *p1 = strchr(good, '.'), *p2 = strrchr(good, '.');
	static const char *const bad[] = {
		"", ".", "..", "...", "a", "a.b", "a.b.c.d", "a.b.c.d.e",
		"eyJhbGciOiJSUzI1NiJ9..", "eyJhbGciOiJSUzI1NiJ9.e30.",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum mgw_jwt_result r = verify(bad[i]);

		if (r != MGW_JWT_MALFORMED)
			fail_msg("\"%s\": %s", bad[i], mgw_jwt_result_name(r));
	}
	/* two parts, four parts */
	t = strndup(good, (size_t)(p2 - good));
	expect(t, MGW_JWT_MALFORMED);
	assert_string_equal(why, "not three dot-separated parts");
	t = malloc(strlen(good) + 8);
	sprintf(t, "%s.AAAA", good);
	expect(t, MGW_JWT_MALFORMED);
	/* bad base64url: a byte outside the alphabet in each part, padding */
	for (int part = 0; part < 3; part++) {
		const char *at = part == 0 ? good : part == 1 ? p1 + 1 : p2 + 1;
		static const char subs[] = "+/=*";

		for (const char *s = subs; *s; s++) {
			t = strdup(good);
			t[at - good + 3] = *s;
			expect(t, MGW_JWT_MALFORMED);
		}
		t = malloc(strlen(good) + 8);
		sprintf(t, "%.*s==%s", (int)(at - good + 4), good, at + 4);
		expect(t, MGW_JWT_MALFORMED);
	}
	t = malloc(strlen(good) + 8);
	sprintf(t, "%s==", good);
	expect(t, MGW_JWT_MALFORMED);
	free(good);
	/* JSON that is not an object, or not JSON */
	expect(sign_raw("[\"RS256\"]", c), MGW_JWT_MALFORMED);
	expect(sign_raw("\"RS256\"", c), MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\"", c), MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\"}", "[]"), MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\"}", "42"), MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\"}", "{\"sub\":"),
	       MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\"}", ""), MGW_JWT_MALFORMED);
	/* a member twice in the header (the second alg could pass for the
	 * first), a claim twice */
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\",\"alg\":\"RS256\"}", c),
	       MGW_JWT_MALFORMED);
	assert_string_equal(why, "a member twice in the JOSE header");
	expect(sign_raw("{\"alg\":\"none\",\"kid\":\"rsa\",\"alg\":\"RS256\"}", c),
	       MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\",\"kid\":\"ec\"}", c),
	       MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\"}",
	                "{\"sub\":\"a\",\"sub\":\"admin\",\"exp\":1767225900}"),
	       MGW_JWT_MALFORMED);
	assert_string_equal(why, "a claim twice in the payload");
	/* crit, a kid that is not a string */
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"rsa\",\"crit\":[\"exp\"],"
	                "\"exp\":1}", c), MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":1}", c), MGW_JWT_MALFORMED);
	expect(sign_raw("{\"alg\":\"RS256\",\"kid\":\"r\\u0000sa\"}", c),
	       MGW_JWT_MALFORMED);
	/* a header with an embedded key is not a way in: the key is ignored */
	{
		json_t *jwk = mgw_ti_jwk(k_ps, NULL, NULL);
		json_t *h = json_pack("{s:s, s:s, s:o}", "alg", "RS256", "kid", "rsa",
		                      "jwk", jwk);
		char *hs = json_dumps(h, JSON_COMPACT);

		expect(mgw_ti_sign(k_ps, "RS256", hs, c, strlen(c), 0),
		       MGW_JWT_BAD_SIGNATURE);
		free(hs);
		json_decref(h);
	}
}

static void test_result_names(void **state)
{
	static const char *const names[] = {
		"ok", "malformed", "too_large", "bad_alg", "unknown_kid",
		"bad_signature", "expired", "not_yet_valid", "bad_issuer",
		"bad_audience", "bad_claims",
	};

	(void)state;
	for (int i = 0; i <= MGW_JWT_BAD_CLAIMS; i++)
		assert_string_equal(mgw_jwt_result_name(i), names[i]);
	assert_string_equal(mgw_jwt_result_name(MGW_JWT_BAD_CLAIMS + 1), "unknown");
}

/* why never holds what the client sent */
static void test_why_has_no_token_bytes(void **state)
{
	char c[256];
	char *t;

	(void)state;
	snprintf(c, sizeof(c), "{\"iss\":\"SECRETISS\",\"aud\":\"SECRETAUD\","
	         "\"sub\":\"SECRETSUB\",\"exp\":%d}", NOW + 60);
	t = sign("ES256", "SECRETKID", c);
	assert_int_equal(verify(t), MGW_JWT_UNKNOWN_KID);
	assert_null(strstr(why, "SECRET"));
	free(t);
	t = sign("ES256", "ec", c);
	assert_int_equal(verify(t), MGW_JWT_BAD_ISSUER);
	assert_null(strstr(why, "SECRET"));
	free(t);
	t = sign_raw("{\"alg\":\"SECRETALG\"}", c);
	assert_int_equal(verify(t), MGW_JWT_BAD_ALG);
	assert_null(strstr(why, "SECRET"));
	free(t);
}

static void test_token_digest(void **state)
{
	unsigned char d[MGW_TOKEN_DIGEST_LEN], e[MGW_TOKEN_DIGEST_LEN];
	static const char abc[] =
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	static const char *const bad[] = {
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a",
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015add",
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ag",
		"sha256: a7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"SHA256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"sha256:0000000000000000000000000000000000000000000000000000000000000000",
		"sha256:", "",
	};

	(void)state;
	mgw_token_digest("abc", 3, d);
	assert_int_equal(mgw_token_digest_parse(abc, e), 0);
	assert_true(mgw_token_digest_equal(d, e));
	assert_int_equal(mgw_token_digest_parse(
		"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
		e), 0);
	assert_true(mgw_token_digest_equal(d, e));
	mgw_token_digest("abd", 3, e);
	assert_false(mgw_token_digest_equal(d, e));
	mgw_token_digest("abc\0", 4, e); /* the length counts */
	assert_false(mgw_token_digest_equal(d, e));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(e, d, sizeof(e));
		if (mgw_token_digest_parse(bad[i], e) != MGW_EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_memory_equal(e, d, sizeof(e)); /* untouched */
	}
	assert_int_equal(mgw_token_digest_parse(NULL, e), MGW_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_each_alg),
		cmocka_unit_test(test_kidless_token),
		cmocka_unit_test(test_principal_fields),
		cmocka_unit_test(test_bad_claim_types),
		cmocka_unit_test(test_expiry_and_skew),
		cmocka_unit_test(test_not_yet_valid),
		cmocka_unit_test(test_audience),
		cmocka_unit_test(test_issuer),
		cmocka_unit_test(test_unknown_kid),
		cmocka_unit_test(test_kidless_without_fitting_key),
		cmocka_unit_test(test_bad_signature),
		cmocka_unit_test(test_alg_none),
		cmocka_unit_test(test_other_algs_refused),
		cmocka_unit_test(test_hs256_with_rsa_public_key),
		cmocka_unit_test(test_alg_key_mismatch),
		cmocka_unit_test(test_es256_der_refused),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_result_names),
		cmocka_unit_test(test_why_has_no_token_bytes),
		cmocka_unit_test(test_token_digest),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
