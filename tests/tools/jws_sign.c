/* jws_sign.c - a JWS issuer for the tests (jws_sign.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>

#include "tests/tools/jws_sign.h"
#include "util/base64.h"

EVP_PKEY *mgw_ti_keygen(const char *alg, int bits)
{
	if (strcmp(alg, "RS256") == 0 || strcmp(alg, "PS256") == 0)
		return EVP_PKEY_Q_keygen(NULL, NULL, "RSA",
		                         (size_t)(bits ? bits : 2048));
	if (strcmp(alg, "ES256") == 0)
		return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (strcmp(alg, "EdDSA") == 0)
		return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	return NULL;
}

static int set_b64(json_t *o, const char *name, const unsigned char *b,
                   size_t n)
{
	char *s = mgw_base64_encode(b, n, 1);
	int rc = s ? json_object_set_new(o, name, json_string(s)) : -1;

	free(s);
	return rc;
}

/* The big-endian bytes of BN parameter name, left-padded to pad bytes
 * (0: minimal). */
static int set_bn(json_t *o, const char *jname, EVP_PKEY *k,
                  const char *name, int pad)
{
	BIGNUM *bn = NULL;
	unsigned char buf[2048];
	int n, rc = -1;

	if (EVP_PKEY_get_bn_param(k, name, &bn) != 1)
		return -1;
	n = pad ? pad : BN_num_bytes(bn);
	if (n <= (int)sizeof(buf) && BN_bn2binpad(bn, buf, n) == n)
		rc = set_b64(o, jname, buf, (size_t)n);
	BN_free(bn);
	return rc;
}

json_t *mgw_ti_jwk(EVP_PKEY *k, const char *kid, const char *alg)
{
	json_t *o = json_object();
	int rc = -1;

	if (!o)
		return NULL;
	if (EVP_PKEY_is_a(k, "RSA")) {
		rc = json_object_set_new(o, "kty", json_string("RSA")) ||
		     set_bn(o, "n", k, OSSL_PKEY_PARAM_RSA_N, 0) ||
		     set_bn(o, "e", k, OSSL_PKEY_PARAM_RSA_E, 0);
	} else if (EVP_PKEY_is_a(k, "EC")) {
		rc = json_object_set_new(o, "kty", json_string("EC")) ||
		     json_object_set_new(o, "crv", json_string("P-256")) ||
		     set_bn(o, "x", k, OSSL_PKEY_PARAM_EC_PUB_X, 32) ||
		     set_bn(o, "y", k, OSSL_PKEY_PARAM_EC_PUB_Y, 32);
	} else if (EVP_PKEY_is_a(k, "ED25519")) {
		unsigned char x[32];
		size_t n = sizeof(x);

		rc = EVP_PKEY_get_raw_public_key(k, x, &n) != 1 ||
		     json_object_set_new(o, "kty", json_string("OKP")) ||
		     json_object_set_new(o, "crv", json_string("Ed25519")) ||
		     set_b64(o, "x", x, n);
	}
	if (rc == 0 && kid && *kid)
		rc = json_object_set_new(o, "kid", json_string(kid));
	if (rc == 0 && alg)
		rc = json_object_set_new(o, "alg", json_string(alg));
	if (rc == 0)
		rc = json_object_set_new(o, "use", json_string("sig"));
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *mgw_ti_header(const char *alg, const char *kid)
{
	json_t *h = json_pack("{s:s, s:s}", "alg", alg, "typ", "JWT");
	char *s;

	if (!h)
		return NULL;
	if (kid && *kid)
		json_object_set_new(h, "kid", json_string(kid));
	s = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(h);
	return s;
}

/* header "." payload, both base64url (malloc'd). */
static char *signing_input(const char *header, const void *payload,
                           size_t plen)
{
	char *h = mgw_base64_encode(header, strlen(header), 1);
	char *p = mgw_base64_encode(payload, plen, 1);
	char *s = NULL;

	if (h && p && (s = malloc(strlen(h) + strlen(p) + 2)))
		sprintf(s, "%s.%s", h, p);
	free(h);
	free(p);
	return s;
}

/* input "." BASE64URL(sig), freeing input. */
static char *append_sig(char *input, const unsigned char *sig, size_t n)
{
	char *e = mgw_base64_encode(sig, n, 1), *s = NULL;

	if (e && (s = malloc(strlen(input) + strlen(e) + 2)))
		sprintf(s, "%s.%s", input, e);
	free(e);
	free(input);
	return s;
}

/* OpenSSL's DER ECDSA-Sig-Value as the 64 bytes R || S. */
static int der_to_raw(const unsigned char *der, size_t n, unsigned char *raw)
{
	ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &der, (long)n);
	const BIGNUM *r, *s;
	int ok;

	if (!es)
		return -1;
	ECDSA_SIG_get0(es, &r, &s);
	ok = BN_bn2binpad(r, raw, 32) == 32 && BN_bn2binpad(s, raw + 32, 32) == 32;
	ECDSA_SIG_free(es);
	return ok ? 0 : -1;
}

char *mgw_ti_sign(EVP_PKEY *k, const char *alg, const char *header,
                  const void *payload, size_t plen, int flags)
{
	int rsa = strcmp(alg, "RS256") == 0, pss = strcmp(alg, "PS256") == 0;
	int es = strcmp(alg, "ES256") == 0, ed = strcmp(alg, "EdDSA") == 0;
	char *input = NULL;
	EVP_MD_CTX *md = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	unsigned char *sig = NULL, raw[64];
	size_t siglen = 0;

	if (!((rsa || pss) && EVP_PKEY_is_a(k, "RSA")) &&
	    !(es && EVP_PKEY_is_a(k, "EC")) && !(ed && EVP_PKEY_is_a(k, "ED25519")))
		return NULL;
	input = signing_input(header, payload, plen);
	md = EVP_MD_CTX_new();
	if (!input || !md ||
	    EVP_DigestSignInit_ex(md, &pctx, ed ? NULL : "SHA256", NULL, NULL, k,
	                          NULL) != 1)
		goto fail;
	if (pss && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
	            EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, "SHA256", NULL) != 1 ||
	            EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 32) != 1))
		goto fail;
	if (EVP_DigestSign(md, NULL, &siglen, (unsigned char *)input,
	                   strlen(input)) != 1 ||
	    !(sig = malloc(siglen)) ||
	    EVP_DigestSign(md, sig, &siglen, (unsigned char *)input,
	                   strlen(input)) != 1)
		goto fail;
	EVP_MD_CTX_free(md);
	if (es && !(flags & MGW_TI_ES_DER)) {
		if (der_to_raw(sig, siglen, raw) != 0) {
			free(sig);
			free(input);
			return NULL;
		}
		free(sig);
		return append_sig(input, raw, sizeof(raw));
	}
	input = append_sig(input, sig, siglen);
	free(sig);
	return input;
fail:
	EVP_MD_CTX_free(md);
	free(sig);
	free(input);
	return NULL;
}

char *mgw_ti_sign_hs256(const void *secret, size_t slen, const char *header,
                        const void *payload, size_t plen)
{
	char *input = signing_input(header, payload, plen);
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!input)
		return NULL;
	if (!HMAC(EVP_sha256(), secret, (int)slen, (unsigned char *)input,
	          strlen(input), mac, &n)) {
		free(input);
		return NULL;
	}
	return append_sig(input, mac, n);
}

char *mgw_ti_unsigned(const char *header, const void *payload, size_t plen)
{
	char *input = signing_input(header, payload, plen), *s = NULL;

	if (input && (s = malloc(strlen(input) + 2)))
		sprintf(s, "%s.", input);
	free(input);
	return s;
}
