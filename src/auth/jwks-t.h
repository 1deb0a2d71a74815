/* jwks-t.h - the key set behind struct mgw_jwks (auth/jwt.h); private to
 * src/auth/ (jwks.c builds it, jwt.c reads it). */
#ifndef MGW_AUTH_JWKS_T_H
#define MGW_AUTH_JWKS_T_H

#include <stdatomic.h>
#include <stddef.h>

#include <openssl/evp.h>

/* The key types the verifier can use; each fits exactly one family of
 * algorithms, which is what stops algorithm confusion. */
enum mgw_jwk_type {
	MGW_JWK_RSA = 1,     /* RS256, PS256; at least 2048 bits */
	MGW_JWK_EC_P256,     /* ES256 */
	MGW_JWK_ED25519,     /* EdDSA */
};

/* The algorithms (the JOSE header's "alg", a key's "alg"). */
enum mgw_jws_alg {
	MGW_JWS_NONE = 0,    /* absent (a key without "alg") */
	MGW_JWS_RS256,
	MGW_JWS_PS256,
	MGW_JWS_ES256,
	MGW_JWS_EDDSA,
};

struct mgw_jwk {
	char *kid;                /* NULL when the key has no "kid" */
	enum mgw_jwk_type type;
	enum mgw_jws_alg alg;     /* the key's "alg", MGW_JWS_NONE if absent */
	EVP_PKEY *pkey;           /* a public key; one reference held */
};

/* Never changed after it is made: threads share it by reference only. */
struct mgw_jwks {
	atomic_size_t refs;
	size_t n;
	struct mgw_jwk *keys;
};

/* The algorithm named s (n bytes), MGW_JWS_NONE if not one of the four
 * (so "none", "HS256", "RS384", ... all map to MGW_JWS_NONE). */
enum mgw_jws_alg mgw_jws_alg_parse(const char *s, size_t n);
const char *mgw_jws_alg_name(enum mgw_jws_alg a);
/* The key type alg needs. */
enum mgw_jwk_type mgw_jws_alg_key_type(enum mgw_jws_alg a);

#endif
