/* jws_sign.h - a JWS issuer for the tests, on OpenSSL alone (none of
 * src/auth/): keys, their public JWKs, compact JWS signing with
 * EVP_DigestSign.  mgw-test-issuer and the unit tests of src/auth/ use
 * it, so the verifier is always checked against a separate signer. */
#ifndef MGW_TESTS_JWS_SIGN_H
#define MGW_TESTS_JWS_SIGN_H

#include <stddef.h>

#include <jansson.h>
#include <openssl/evp.h>

/* A new private key for alg: RS256 and PS256 an RSA key of bits (0:
 * 2048), ES256 a P-256 key, EdDSA an Ed25519 key; NULL for another alg. */
EVP_PKEY *mgw_ti_keygen(const char *alg, int bits);
/* The public JWK of k (kty and its members), with "kid" and "alg" when
 * not NULL (a new reference, NULL on failure). */
json_t *mgw_ti_jwk(EVP_PKEY *k, const char *kid, const char *alg);
/* The JOSE header {"alg":alg,"typ":"JWT"[,"kid":kid]} as compact JSON
 * (malloc'd); kid NULL or "" leaves it out. */
char *mgw_ti_header(const char *alg, const char *kid);

enum {
	MGW_TI_ES_DER = 1,   /* ES256: keep OpenSSL's DER signature instead
	                      * of the JWS form R || S */
};
/* BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(signature by k
 * with alg: RS256, PS256 (MGF1 SHA-256, salt 32), ES256, EdDSA), as given
 * byte for byte (malloc'd; NULL if alg does not fit k or signing
 * fails). */
char *mgw_ti_sign(EVP_PKEY *k, const char *alg, const char *header,
                  const void *payload, size_t plen, int flags);
/* The same with HMAC-SHA-256 keyed with secret (an HS256 token). */
char *mgw_ti_sign_hs256(const void *secret, size_t slen, const char *header,
                        const void *payload, size_t plen);
/* The unsigned form: header "." payload "." (for "alg": "none"). */
char *mgw_ti_unsigned(const char *header, const void *payload, size_t plen);

#endif
