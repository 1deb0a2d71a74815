/* jwt.c - verifying JWT access tokens in JWS compact serialization
 * (RFC 7515 section 7.1, RFC 7519, RFC 9068) with the keys of a JWKS
 * (jwks.c): RS256, PS256, ES256, EdDSA through EVP_DigestVerify.
 *
 * Order: size bound, three parts, the JOSE header (a JSON object, no
 * member twice, no "crit", "alg" one of the four), the claims (a JSON
 * object), the key (by "kid", else every key of the algorithm's type;
 * the key's type and "alg" must fit the token's), the signature over the
 * first two parts as sent, then the claims.  Nothing in a header ("jwk",
 * "jku", "x5u", "x5c") ever chooses or supplies a key. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "auth/jwks-t.h"
#include "auth/jwt.h"
#include "auth/principal.h"
#include "core/errors.h"
#include "mcp/json.h"
#include "util/base64.h"

#define HEADER_MAX_DEPTH 4
#define CLAIMS_MAX_DEPTH 32
#define ES256_SIG_LEN 64
#define ED25519_SIG_LEN 64
#define PSS_SALT_LEN 32  /* RFC 7518 section 3.5: the hash's size */

static const char *const result_names[] = {
	[MGW_JWT_OK] = "ok",
	[MGW_JWT_MALFORMED] = "malformed",
	[MGW_JWT_TOO_LARGE] = "too_large",
	[MGW_JWT_BAD_ALG] = "bad_alg",
	[MGW_JWT_UNKNOWN_KID] = "unknown_kid",
	[MGW_JWT_BAD_SIGNATURE] = "bad_signature",
	[MGW_JWT_EXPIRED] = "expired",
	[MGW_JWT_NOT_YET_VALID] = "not_yet_valid",
	[MGW_JWT_BAD_ISSUER] = "bad_issuer",
	[MGW_JWT_BAD_AUDIENCE] = "bad_audience",
	[MGW_JWT_BAD_CLAIMS] = "bad_claims",
};

const char *mgw_jwt_result_name(enum mgw_jwt_result r)
{
	if ((size_t)r < sizeof(result_names) / sizeof(result_names[0]) &&
	    result_names[r])
		return result_names[r];
	return "unknown";
}

/* The compact serialization's three parts: [h, h+hl) "." [p, p+pl) "."
 * [s, s+sl); the signing input is [h, p+pl). */
struct parts {
	const char *h, *p, *s;
	size_t hl, pl, sl;
};

static int split(const char *tok, size_t len, struct parts *pt)
{
	const char *end = tok + len, *d1, *d2;

	d1 = memchr(tok, '.', len);
	if (!d1)
		return -1;
	d2 = memchr(d1 + 1, '.', (size_t)(end - d1 - 1));
	if (!d2 || memchr(d2 + 1, '.', (size_t)(end - d2 - 1)))
		return -1;
	pt->h = tok;
	pt->hl = (size_t)(d1 - tok);
	pt->p = d1 + 1;
	pt->pl = (size_t)(d2 - pt->p);
	pt->s = d2 + 1;
	pt->sl = (size_t)(end - pt->s);
	return 0;
}

/* A base64url part holding a JSON object: a new reference, or NULL with
 * *dup set when the reason was a member name twice. */
static json_t *json_part(const char *s, size_t n, size_t depth, int *dup)
{
	struct mgw_json_error jerr;
	unsigned char *raw;
	size_t rawlen;
	json_t *v;

	*dup = 0;
	if (n == 0)
		return NULL;
	raw = mgw_base64_decode(s, n, 1, &rawlen);
	if (!raw)
		return NULL;
	v = mgw_json_parse(raw, rawlen, depth, &jerr);
	free(raw);
	if (!v) {
		*dup = jerr.code == MGW_JSON_DUPLICATE;
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* The string member name of o, which must hold no NUL byte (a "sub" of
 * "a\u0000b" must not pass for "a").  Returns 1 (*s set), 0 if absent,
 * -1 if present but not such a string. */
static int str_claim(const json_t *o, const char *name, const char **s)
{
	json_t *v = json_object_get(o, name);

	*s = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return -1;
	*s = json_string_value(v);
	return 1;
}

/* A NumericDate (RFC 7519 section 2: integer or not).  1, 0 (absent) or
 * -1 (not a number). */
static int date_claim(const json_t *o, const char *name, double *d)
{
	json_t *v = json_object_get(o, name);

	if (!v)
		return 0;
	if (!json_is_number(v))
		return -1;
	*d = json_number_value(v);
	return 1;
}

/* The raw R || S of an ES256 signature as the DER ECDSA-Sig-Value
 * OpenSSL verifies: *der malloc'd.  0 or -1. */
static int es256_der(const unsigned char *sig, unsigned char **der, size_t *len)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig, ES256_SIG_LEN / 2, NULL);
	BIGNUM *s = BN_bin2bn(sig + ES256_SIG_LEN / 2, ES256_SIG_LEN / 2, NULL);
	int n = -1;

	*der = NULL;
	if (es && r && s && ECDSA_SIG_set0(es, r, s) == 1) {
		r = s = NULL; /* es owns them */
		n = i2d_ECDSA_SIG(es, der);
	}
	BN_free(r);
	BN_free(s);
	ECDSA_SIG_free(es);
	if (n <= 0) {
		OPENSSL_free(*der);
		*der = NULL;
		return -1;
	}
	*len = (size_t)n;
	return 0;
}

/* 1 if sig is alg's signature of in by k. */
static int sig_ok(const struct mgw_jwk *k, enum mgw_jws_alg alg,
                  const unsigned char *in, size_t inlen,
                  const unsigned char *sig, size_t siglen)
{
	EVP_MD_CTX *md = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	unsigned char *der = NULL;
	int ok = 0;

	switch (alg) {
	case MGW_JWS_RS256:
	case MGW_JWS_PS256:
		if ((int)siglen != EVP_PKEY_get_size(k->pkey))
			return 0;
		break;
	case MGW_JWS_ES256:
		/* the JWS form only: a DER signature is refused, whatever
		 * OpenSSL would make of it */
		if (siglen != ES256_SIG_LEN || es256_der(sig, &der, &siglen) != 0)
			return 0;
		sig = der;
		break;
	case MGW_JWS_EDDSA:
		if (siglen != ED25519_SIG_LEN)
			return 0;
		break;
	default:
		return 0;
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestVerifyInit_ex(md, &pctx,
	                                   alg == MGW_JWS_EDDSA ? NULL : "SHA256",
	                                   NULL, NULL, k->pkey, NULL) != 1)
		goto out;
	if (alg == MGW_JWS_RS256 &&
	    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1)
		goto out;
	if (alg == MGW_JWS_PS256 &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
	     EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, "SHA256", NULL) != 1 ||
	     EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, PSS_SALT_LEN) != 1))
		goto out;
	ok = EVP_DigestVerify(md, sig, siglen, in, inlen) == 1;
out:
	EVP_MD_CTX_free(md);
	OPENSSL_free(der);
	return ok;
}

static enum mgw_jwt_result say(enum mgw_jwt_result r, char *why,
                               size_t whylen, const char *text)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", text);
	return r;
}

/* Finds the key(s) and checks the signature. */
static enum mgw_jwt_result check_signature(const struct mgw_jwks *keys,
                                           enum mgw_jws_alg alg,
                                           const char *kid,
                                           const struct parts *pt,
                                           char *why, size_t whylen)
{
	unsigned char *sig;
	size_t siglen, fit = 0;
	int kid_seen = 0, ok = 0;

	if (pt->sl == 0)
		return say(MGW_JWT_MALFORMED, why, whylen, "empty signature");
	sig = mgw_base64_decode(pt->s, pt->sl, 1, &siglen);
	if (!sig)
		return say(MGW_JWT_MALFORMED, why, whylen,
		           "signature not base64url");
	for (size_t i = 0; keys && i < keys->n && !ok; i++) {
		const struct mgw_jwk *k = &keys->keys[i];

		if (kid) {
			if (!k->kid || strcmp(k->kid, kid) != 0)
				continue;
			kid_seen = 1;
		}
		if (k->type != mgw_jws_alg_key_type(alg) ||
		    (k->alg != MGW_JWS_NONE && k->alg != alg))
			continue;
		fit++;
		ok = sig_ok(k, alg, (const unsigned char *)pt->h,
		            (size_t)(pt->p + pt->pl - pt->h), sig, siglen);
	}
	free(sig);
	/* a failed verification leaves errors on this thread's queue, where
	 * the TLS code of the same worker would find them */
	ERR_clear_error();
	if (ok)
		return MGW_JWT_OK;
	if (kid && !kid_seen)
		return say(MGW_JWT_UNKNOWN_KID, why, whylen, "unknown kid");
	if (fit == 0)
		return kid ? say(MGW_JWT_BAD_ALG, why, whylen,
		                 "alg does not fit the key")
		           : say(MGW_JWT_UNKNOWN_KID, why, whylen,
		                 "no key for the token's alg");
	return say(MGW_JWT_BAD_SIGNATURE, why, whylen, "invalid signature");
}

/* 1 if s (n bytes) is a scope-token of RFC 6749 section 3.3. */
static int scope_token_ok(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x21 || c > 0x7E || c == '"' || c == '\\')
			return 0;
	}
	return 1;
}

/* Appends the space-separated scopes of s.  0, MGW_EINVAL, MGW_ENOMEM. */
static int add_scope_list(struct mgw_principal *p, const char *s)
{
	while (*s) {
		size_t n;
		int rc;

		while (*s == ' ')
			s++;
		n = strcspn(s, " ");
		if (n == 0)
			break;
		if (!scope_token_ok(s, n))
			return MGW_EINVAL;
		rc = mgw_principal_add_scope(p, s, n);
		if (rc != 0)
			return rc;
		s += n;
	}
	return 0;
}

/* The scopes: "scope" (a space-separated string, RFC 8693 / RFC 9068),
 * else "scp" (an array of strings, or a string like "scope"). */
static int add_scopes(struct mgw_principal *p, const json_t *claims)
{
	json_t *scp, *v;
	const char *s;
	size_t i;
	int rc;

	rc = str_claim(claims, "scope", &s);
	if (rc != 0)
		return rc < 0 ? MGW_EINVAL : add_scope_list(p, s);
	scp = json_object_get(claims, "scp");
	if (!scp)
		return 0;
	if (json_is_string(scp)) {
		if (str_claim(claims, "scp", &s) < 0)
			return MGW_EINVAL;
		return add_scope_list(p, s);
	}
	if (!json_is_array(scp))
		return MGW_EINVAL;
	json_array_foreach(scp, i, v) {
		if (!json_is_string(v) ||
		    !scope_token_ok(json_string_value(v), json_string_length(v)))
			return MGW_EINVAL;
		rc = mgw_principal_add_scope(p, json_string_value(v),
		                             json_string_length(v));
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* 1 if "aud" (a string or an array of strings) holds want; -1 if "aud"
 * is of the wrong type. */
static int aud_holds(const json_t *claims, const char *want)
{
	json_t *aud = json_object_get(claims, "aud"), *v;
	int found = 0;
	size_t i;

	if (!aud)
		return 0;
	if (json_is_string(aud))
		return want && json_string_length(aud) == strlen(want) &&
		       memcmp(json_string_value(aud), want, strlen(want)) == 0;
	if (!json_is_array(aud))
		return -1;
	json_array_foreach(aud, i, v) {
		if (!json_is_string(v))
			return -1;
		if (want && json_string_length(v) == strlen(want) &&
		    memcmp(json_string_value(v), want, strlen(want)) == 0)
			found = 1;
	}
	return found;
}

static enum mgw_jwt_result check_claims(const json_t *c,
                                        const struct mgw_jwt_policy *pol,
                                        int64_t now, char *why, size_t whylen)
{
	double exp = 0, nbf = 0, iat = 0, t = (double)now;
	double skew = (double)pol->skew;
	const char *iss, *sub, *cid;
	int has_exp, has_nbf, has_iat, has_iss, aud;

	has_exp = date_claim(c, "exp", &exp);
	has_nbf = date_claim(c, "nbf", &nbf);
	has_iat = date_claim(c, "iat", &iat);
	if (has_exp < 0 || has_nbf < 0 || has_iat < 0)
		return say(MGW_JWT_BAD_CLAIMS, why, whylen,
		           "exp, nbf or iat not a number");
	if (has_exp == 0)
		return say(MGW_JWT_BAD_CLAIMS, why, whylen, "no exp");
	has_iss = str_claim(c, "iss", &iss);
	aud = aud_holds(c, pol->audience);
	if (has_iss < 0 || aud < 0)
		return say(MGW_JWT_BAD_CLAIMS, why, whylen,
		           "iss or aud of the wrong type");
	if (str_claim(c, "sub", &sub) != 1 || sub[0] == '\0')
		return say(MGW_JWT_BAD_CLAIMS, why, whylen, "no sub string");
	if (str_claim(c, "client_id", &cid) < 0 || str_claim(c, "azp", &cid) < 0)
		return say(MGW_JWT_BAD_CLAIMS, why, whylen,
		           "client_id or azp not a string");
	if (t >= exp + skew)
		return say(MGW_JWT_EXPIRED, why, whylen, "token expired");
	if (has_nbf && nbf - skew > t)
		return say(MGW_JWT_NOT_YET_VALID, why, whylen,
		           "token not yet valid");
	if (has_iat && iat - skew > t)
		return say(MGW_JWT_NOT_YET_VALID, why, whylen,
		           "token issued in the future");
	if (pol->issuer && (has_iss == 0 || strcmp(iss, pol->issuer) != 0))
		return say(MGW_JWT_BAD_ISSUER, why, whylen, "wrong issuer");
	if (pol->audience && aud != 1)
		return say(MGW_JWT_BAD_AUDIENCE, why, whylen, "wrong audience");
	return MGW_JWT_OK;
}

static enum mgw_jwt_result principal_of(json_t *claims,
                                        struct mgw_principal **out,
                                        char *why, size_t whylen)
{
	const char *sub, *cid;
	struct mgw_principal *p;
	int rc;

	str_claim(claims, "sub", &sub);
	if (str_claim(claims, "client_id", &cid) != 1)
		str_claim(claims, "azp", &cid);
	p = mgw_principal_new(MGW_PRINCIPAL_JWT, sub, cid);
	if (!p)
		return say(MGW_JWT_MALFORMED, why, whylen, "out of memory");
	rc = add_scopes(p, claims);
	if (rc != 0) {
		mgw_principal_free(p);
		return rc == MGW_ENOMEM
		       ? say(MGW_JWT_MALFORMED, why, whylen, "out of memory")
		       : say(MGW_JWT_BAD_CLAIMS, why, whylen,
		             "scope or scp not RFC 6749 scope tokens");
	}
	p->claims = json_incref(claims);
	*out = p;
	return MGW_JWT_OK;
}

/* The header's "kid": 1 (*kid set), 0 (none), -1 (not a NUL-free
 * string). */
static int header_kid(const json_t *h, const char **kid)
{
	return str_claim(h, "kid", kid);
}

enum mgw_jwt_result mgw_jwt_verify(const char *token, size_t len,
                                   const struct mgw_jwks *keys,
                                   const struct mgw_jwt_policy *pol,
                                   int64_t now, struct mgw_principal **out,
                                   char *why, size_t whylen)
{
	size_t max = pol->max_token_bytes ? pol->max_token_bytes
	                                  : MGW_JWT_MAX_TOKEN_BYTES;
	json_t *hdr = NULL, *claims = NULL;
	enum mgw_jwt_result r;
	enum mgw_jws_alg alg;
	const char *s, *kid;
	struct parts pt;
	int dup;

	*out = NULL;
	say(MGW_JWT_OK, why, whylen, "");
	if (len > max)
		return say(MGW_JWT_TOO_LARGE, why, whylen, "token too large");
	if (split(token, len, &pt) != 0)
		return say(MGW_JWT_MALFORMED, why, whylen,
		           "not three dot-separated parts");
	hdr = json_part(pt.h, pt.hl, HEADER_MAX_DEPTH, &dup);
	if (!hdr) {
		r = say(MGW_JWT_MALFORMED, why, whylen,
		        dup ? "a member twice in the JOSE header"
		            : "header not base64url of a JSON object");
		goto out;
	}
	if (json_object_get(hdr, "crit")) {
		/* no extension is understood, so none may be critical */
		r = say(MGW_JWT_MALFORMED, why, whylen, "unsupported crit header");
		goto out;
	}
	if (str_claim(hdr, "alg", &s) != 1) {
		r = say(MGW_JWT_MALFORMED, why, whylen, "no alg string");
		goto out;
	}
	alg = mgw_jws_alg_parse(s, strlen(s));
	if (alg == MGW_JWS_NONE) {
		r = say(MGW_JWT_BAD_ALG, why, whylen,
		        "alg not RS256, PS256, ES256 or EdDSA");
		goto out;
	}
	if (header_kid(hdr, &kid) < 0) {
		r = say(MGW_JWT_MALFORMED, why, whylen, "kid not a string");
		goto out;
	}
	claims = json_part(pt.p, pt.pl, CLAIMS_MAX_DEPTH, &dup);
	if (!claims) {
		r = say(MGW_JWT_MALFORMED, why, whylen,
		        dup ? "a claim twice in the payload"
		            : "payload not base64url of a JSON object");
		goto out;
	}
	r = check_signature(keys, alg, kid, &pt, why, whylen);
	if (r != MGW_JWT_OK)
		goto out;
	r = check_claims(claims, pol, now, why, whylen);
	if (r != MGW_JWT_OK)
		goto out;
	r = principal_of(claims, out, why, whylen);
out:
	json_decref(hdr);
	json_decref(claims);
	return r;
}

const char *mgw_jwt_kid(const char *token, size_t len, char *buf,
                        size_t buflen)
{
	const char *kid = NULL;
	struct parts pt;
	json_t *hdr;
	int dup;

	if (split(token, len, &pt) != 0)
		return NULL;
	hdr = json_part(pt.h, pt.hl, HEADER_MAX_DEPTH, &dup);
	if (!hdr)
		return NULL;
	if (header_kid(hdr, &kid) == 1 && strlen(kid) < buflen)
		memcpy(buf, kid, strlen(kid) + 1);
	else
		kid = NULL;
	json_decref(hdr);
	return kid ? buf : NULL;
}
