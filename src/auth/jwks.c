/* jwks.c - JSON Web Key Sets (RFC 7517, RFC 7518 section 6, RFC 8037)
 * into OpenSSL public keys: RSA (n, e), EC P-256 (x, y) and OKP Ed25519
 * (x), each built with EVP_PKEY_fromdata.  A set is immutable once
 * parsed and shared between workers by an atomic reference count. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "auth/jwks-t.h"
#include "auth/jwt.h"
#include "core/errors.h"
#include "mcp/json.h"
#include "util/base64.h"

/* A JWKS nests two levels (object, keys array, key objects, key_ops). */
#define JWKS_MAX_DEPTH 8
#define RSA_MIN_BITS 2048
#define RSA_MAX_BITS 16384   /* OpenSSL's own ceiling for RSA */
#define RSA_MAX_E_BITS 64    /* OpenSSL's ceiling for moduli over 3072 bits */
#define EC_COORD_LEN 32
#define ED25519_LEN 32

static const struct {
	const char *name;
	enum mgw_jws_alg alg;
	enum mgw_jwk_type type;
} algs[] = {
	{"RS256", MGW_JWS_RS256, MGW_JWK_RSA},
	{"PS256", MGW_JWS_PS256, MGW_JWK_RSA},
	{"ES256", MGW_JWS_ES256, MGW_JWK_EC_P256},
	{"EdDSA", MGW_JWS_EDDSA, MGW_JWK_ED25519},
};

enum mgw_jws_alg mgw_jws_alg_parse(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (strlen(algs[i].name) == n && memcmp(algs[i].name, s, n) == 0)
			return algs[i].alg;
	return MGW_JWS_NONE;
}

const char *mgw_jws_alg_name(enum mgw_jws_alg a)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == a)
			return algs[i].name;
	return "none";
}

enum mgw_jwk_type mgw_jws_alg_key_type(enum mgw_jws_alg a)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == a)
			return algs[i].type;
	return 0;
}

/* The string member name of o, which must hold no NUL; NULL if absent or
 * not such a string (*present tells the two apart). */
static const char *str_member(const json_t *o, const char *name, int *present)
{
	json_t *v = json_object_get(o, name);
	const char *s;

	*present = v != NULL;
	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	return strlen(s) == json_string_length(v) ? s : NULL;
}

/* The base64url member name of o decoded (malloc'd), of *len bytes > 0;
 * NULL if absent, empty, not a string or not strict base64url. */
static unsigned char *b64_member(const json_t *o, const char *name, size_t *len)
{
	json_t *v = json_object_get(o, name);
	unsigned char *b;

	if (!json_is_string(v) || json_string_length(v) == 0)
		return NULL;
	b = mgw_base64_decode(json_string_value(v), json_string_length(v), 1, len);
	if (b && *len == 0) {
		free(b);
		return NULL;
	}
	return b;
}

static EVP_PKEY *from_params(const char *type, OSSL_PARAM *params)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	EVP_PKEY *pkey = NULL;

	if (!ctx)
		return NULL;
	if (EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

static int rsa_key(const json_t *o, EVP_PKEY **out, const char **why)
{
	unsigned char *n = NULL, *e = NULL;
	size_t nlen = 0, elen = 0;
	BIGNUM *bn = NULL, *be = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	int rc = MGW_EINVAL;

	n = b64_member(o, "n", &nlen);
	e = b64_member(o, "e", &elen);
	if (!n || !e) {
		*why = !n ? "no valid base64url \"n\"" : "no valid base64url \"e\"";
		goto fail;
	}
	bn = BN_bin2bn(n, (int)nlen, NULL);
	be = BN_bin2bn(e, (int)elen, NULL);
	if (!bn || !be) {
		rc = MGW_ENOMEM;
		*why = "out of memory";
		goto fail;
	}
	if (BN_num_bits(bn) < RSA_MIN_BITS) {
		*why = "RSA key under 2048 bits";
		goto fail;
	}
	if (BN_num_bits(bn) > RSA_MAX_BITS) {
		*why = "RSA key over 16384 bits";
		goto fail;
	}
	if (!BN_is_odd(be) || BN_num_bits(be) < 2 ||
	    BN_num_bits(be) > RSA_MAX_E_BITS) {
		*why = "RSA exponent unusable";
		goto fail;
	}
	bld = OSSL_PARAM_BLD_new();
	if (!bld || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) ||
	    !(params = OSSL_PARAM_BLD_to_param(bld))) {
		rc = MGW_ENOMEM;
		*why = "out of memory";
		goto fail;
	}
	*out = from_params("RSA", params);
	if (!*out) {
		*why = "RSA key refused by OpenSSL";
		goto fail;
	}
	rc = 0;
fail:
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	BN_free(be);
	free(n);
	free(e);
	return rc;
}

/* 1 if OpenSSL finds the public key sound (an EC point on its curve). */
static int public_check(EVP_PKEY *pkey)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	int ok = ctx && EVP_PKEY_public_check(ctx) == 1;

	EVP_PKEY_CTX_free(ctx);
	return ok;
}

static int ec_key(const json_t *o, EVP_PKEY **out, const char **why)
{
	unsigned char *x = NULL, *y = NULL, pub[1 + 2 * EC_COORD_LEN];
	char group[] = "prime256v1";
	size_t xlen = 0, ylen = 0;
	const char *crv;
	int present, rc = MGW_EINVAL;
	OSSL_PARAM params[3];

	crv = str_member(o, "crv", &present);
	if (!crv || strcmp(crv, "P-256") != 0) {
		*why = "EC curve not P-256";
		goto fail;
	}
	x = b64_member(o, "x", &xlen);
	y = b64_member(o, "y", &ylen);
	if (!x || !y || xlen != EC_COORD_LEN || ylen != EC_COORD_LEN) {
		*why = "no valid 32-byte base64url \"x\" and \"y\"";
		goto fail;
	}
	pub[0] = 0x04; /* uncompressed point */
	memcpy(pub + 1, x, EC_COORD_LEN);
	memcpy(pub + 1 + EC_COORD_LEN, y, EC_COORD_LEN);
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
	                                             group, 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
	                                              pub, sizeof(pub));
	params[2] = OSSL_PARAM_construct_end();
	*out = from_params("EC", params);
	if (*out && !public_check(*out)) {
		EVP_PKEY_free(*out);
		*out = NULL;
	}
	if (!*out) {
		*why = "EC point not on P-256";
		goto fail;
	}
	rc = 0;
fail:
	free(x);
	free(y);
	return rc;
}

static int okp_key(const json_t *o, EVP_PKEY **out, const char **why)
{
	unsigned char *x = NULL;
	size_t xlen = 0;
	const char *crv;
	int present, rc = MGW_EINVAL;
	OSSL_PARAM params[2];

	crv = str_member(o, "crv", &present);
	if (!crv || strcmp(crv, "Ed25519") != 0) {
		*why = "OKP curve not Ed25519";
		goto fail;
	}
	x = b64_member(o, "x", &xlen);
	if (!x || xlen != ED25519_LEN) {
		*why = "no valid 32-byte base64url \"x\"";
		goto fail;
	}
	params[0] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
	                                              x, xlen);
	params[1] = OSSL_PARAM_construct_end();
	*out = from_params("ED25519", params);
	if (!*out) {
		*why = "Ed25519 key refused by OpenSSL";
		goto fail;
	}
	rc = 0;
fail:
	free(x);
	return rc;
}

/* 1 if key_ops (absent, or an array of strings) allows "verify". */
static int ops_allow_verify(const json_t *o)
{
	json_t *ops = json_object_get(o, "key_ops"), *v;
	size_t i;

	if (!ops)
		return 1;
	if (!json_is_array(ops))
		return 0;
	json_array_foreach(ops, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), "verify") == 0)
			return 1;
	return 0;
}

/* One key of the set into *k: 0, MGW_EINVAL (unusable: skipped, *why
 * says why) or MGW_ENOMEM. */
static int jwk_parse(const json_t *o, struct mgw_jwk *k, const char **why)
{
	const char *kty, *use, *alg, *kid;
	int present, rc;

	memset(k, 0, sizeof(*k));
	if (!json_is_object(o)) {
		*why = "not an object";
		return MGW_EINVAL;
	}
	kty = str_member(o, "kty", &present);
	if (!kty) {
		*why = "no \"kty\"";
		return MGW_EINVAL;
	}
	use = str_member(o, "use", &present);
	if (present && (!use || strcmp(use, "sig") != 0)) {
		*why = "\"use\" is not \"sig\"";
		return MGW_EINVAL;
	}
	if (!ops_allow_verify(o)) {
		*why = "\"key_ops\" without \"verify\"";
		return MGW_EINVAL;
	}
	alg = str_member(o, "alg", &present);
	if (present) {
		k->alg = alg ? mgw_jws_alg_parse(alg, strlen(alg)) : MGW_JWS_NONE;
		if (k->alg == MGW_JWS_NONE) {
			*why = "\"alg\" not RS256, PS256, ES256 or EdDSA";
			return MGW_EINVAL;
		}
	}
	kid = str_member(o, "kid", &present);
	if (present && !kid) {
		*why = "\"kid\" not a string";
		return MGW_EINVAL;
	}
	if (strcmp(kty, "RSA") == 0) {
		k->type = MGW_JWK_RSA;
		rc = rsa_key(o, &k->pkey, why);
	} else if (strcmp(kty, "EC") == 0) {
		k->type = MGW_JWK_EC_P256;
		rc = ec_key(o, &k->pkey, why);
	} else if (strcmp(kty, "OKP") == 0) {
		k->type = MGW_JWK_ED25519;
		rc = okp_key(o, &k->pkey, why);
	} else {
		*why = "\"kty\" not RSA, EC or OKP";
		return MGW_EINVAL;
	}
	if (rc != 0)
		return rc;
	if (k->alg != MGW_JWS_NONE && mgw_jws_alg_key_type(k->alg) != k->type) {
		*why = "\"alg\" does not fit \"kty\"";
		goto fail;
	}
	if (kid && !(k->kid = strdup(kid))) {
		*why = "out of memory";
		rc = MGW_ENOMEM;
		goto fail;
	}
	return 0;
fail:
	EVP_PKEY_free(k->pkey);
	k->pkey = NULL;
	return rc ? rc : MGW_EINVAL;
}

static struct mgw_jwks *set_new(size_t n)
{
	struct mgw_jwks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->keys = calloc(n ? n : 1, sizeof(*s->keys));
	if (!s->keys) {
		free(s);
		return NULL;
	}
	atomic_init(&s->refs, 1);
	return s;
}

static void set_free(struct mgw_jwks *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->keys[i].kid);
		EVP_PKEY_free(s->keys[i].pkey);
	}
	free(s->keys);
	free(s);
}

struct mgw_jwks *mgw_jwks_parse(const char *json, size_t len,
                                size_t *skipped, char *err, size_t errlen)
{
	struct mgw_json_error jerr;
	struct mgw_jwks *set = NULL;
	json_t *root, *keys, *v;
	const char *why = NULL;
	size_t i, nskip = 0, last = 0;

	if (skipped)
		*skipped = 0;
	root = mgw_json_parse(json, len, JWKS_MAX_DEPTH, &jerr);
	if (!root) {
		snprintf(err, errlen, "not JSON: %s", jerr.text);
		return NULL;
	}
	keys = json_object_get(root, "keys");
	if (!json_is_object(root) || !json_is_array(keys)) {
		snprintf(err, errlen, "not a JWKS: no \"keys\" array");
		goto fail;
	}
	if (json_array_size(keys) > MGW_JWKS_MAX_KEYS) {
		snprintf(err, errlen, "more than %d keys", MGW_JWKS_MAX_KEYS);
		goto fail;
	}
	set = set_new(json_array_size(keys));
	if (!set) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	json_array_foreach(keys, i, v) {
		int rc = jwk_parse(v, &set->keys[set->n], &why);

		if (rc == MGW_ENOMEM) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		if (rc == 0) {
			set->n++;
		} else {
			nskip++;
			last = i;
		}
	}
	if (set->n == 0) {
		if (nskip)
			snprintf(err, errlen, "no usable key (key %zu: %s)", last, why);
		else
			snprintf(err, errlen, "no keys");
		goto fail;
	}
	if (skipped)
		*skipped = nskip;
	json_decref(root);
	ERR_clear_error(); /* what refused keys left on this thread's queue */
	return set;
fail:
	if (set)
		set_free(set);
	json_decref(root);
	ERR_clear_error();
	return NULL;
}

static int copy_keys(struct mgw_jwks *dst, const struct mgw_jwks *src)
{
	for (size_t i = 0; src && i < src->n; i++) {
		struct mgw_jwk *k = &dst->keys[dst->n];

		*k = src->keys[i];
		k->kid = NULL;
		if (src->keys[i].kid && !(k->kid = strdup(src->keys[i].kid)))
			return MGW_ENOMEM;
		if (EVP_PKEY_up_ref(k->pkey) != 1) {
			free(k->kid);
			return MGW_ENOMEM;
		}
		dst->n++;
	}
	return 0;
}

struct mgw_jwks *mgw_jwks_merge(const struct mgw_jwks *a,
                                const struct mgw_jwks *b)
{
	struct mgw_jwks *s;

	if (!a && !b)
		return NULL;
	s = set_new((a ? a->n : 0) + (b ? b->n : 0));
	if (!s)
		return NULL;
	if (copy_keys(s, a) != 0 || copy_keys(s, b) != 0) {
		set_free(s);
		return NULL;
	}
	return s;
}

struct mgw_jwks *mgw_jwks_ref(struct mgw_jwks *k)
{
	if (k)
		atomic_fetch_add_explicit(&k->refs, 1, memory_order_relaxed);
	return k;
}

void mgw_jwks_unref(struct mgw_jwks *k)
{
	if (k && atomic_fetch_sub_explicit(&k->refs, 1, memory_order_acq_rel) == 1)
		set_free(k);
}

size_t mgw_jwks_count(const struct mgw_jwks *k)
{
	return k ? k->n : 0;
}

int mgw_jwks_has_kid(const struct mgw_jwks *k, const char *kid)
{
	for (size_t i = 0; k && kid && i < k->n; i++)
		if (k->keys[i].kid && strcmp(k->keys[i].kid, kid) == 0)
			return 1;
	return 0;
}
