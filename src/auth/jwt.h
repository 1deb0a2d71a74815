/* jwt.h - verifying bearer JWT access tokens (RFC 7519, RFC 9068) signed
 * with a key of a JWKS (RFC 7517): RS256, PS256, ES256 and EdDSA
 * (Ed25519) through OpenSSL 3; and static bearer tokens kept as SHA-256
 * digests.  Pure functions: no I/O, no clock (the caller gives "now"). */
#ifndef MGW_AUTH_JWT_H
#define MGW_AUTH_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "auth/principal-t.h"

/* A key set, parsed from a JWKS document.  Immutable once made, shared
 * between threads by reference counting. */
struct mgw_jwks;

/* At most this many keys in one JWKS document (more: an error). */
#define MGW_JWKS_MAX_KEYS 100

/* Parses a JWKS document (len bytes of JSON: {"keys": [...]}; strict
 * JSON, a member name twice in one object refused).  Keys it cannot use
 * are skipped (*skipped counts them, if not NULL): a "kty" other than
 * RSA, EC or OKP, a curve other than P-256 or Ed25519, "use" other than
 * "sig", "key_ops" without "verify", an "alg" other than RS256, PS256,
 * ES256 or EdDSA or one that does not fit the "kty", an RSA modulus under
 * 2048 (or over 16384) bits, a member that is not strict unpadded
 * base64url of the right length, an EC point off the curve.  Private
 * members ("d", ...) are ignored.  A document without one usable key, or
 * that is not a JWKS, is an error (NULL, err says why: for the last key
 * skipped, its index and reason). */
struct mgw_jwks *mgw_jwks_parse(const char *json, size_t len,
                                size_t *skipped, char *err, size_t errlen);
/* A set holding the keys of a and b (either may be NULL), a's first: a
 * JWKS file and a fetched set together.  NULL when out of memory or both
 * are NULL. */
struct mgw_jwks *mgw_jwks_merge(const struct mgw_jwks *a,
                                const struct mgw_jwks *b);
struct mgw_jwks *mgw_jwks_ref(struct mgw_jwks *k);
void mgw_jwks_unref(struct mgw_jwks *k);
size_t mgw_jwks_count(const struct mgw_jwks *k);
/* 1 if the set holds a key with this kid. */
int mgw_jwks_has_kid(const struct mgw_jwks *k, const char *kid);

/* What a token must satisfy besides its signature. */
struct mgw_jwt_policy {
	const char *issuer;          /* "iss" must equal it (NULL: not checked) */
	const char *audience;        /* "aud" (a string, or an array) must hold
	                              * it (NULL: not checked) */
	int64_t skew;                /* seconds of clock skew allowed for exp,
	                              * nbf (and iat in the future) */
	size_t max_token_bytes;      /* longer tokens: MGW_JWT_TOO_LARGE
	                              * (0: MGW_JWT_MAX_TOKEN_BYTES) */
};

#define MGW_JWT_MAX_TOKEN_BYTES 8192

enum mgw_jwt_result {
	MGW_JWT_OK = 0,
	MGW_JWT_MALFORMED,       /* not three base64url parts of JSON objects */
	MGW_JWT_TOO_LARGE,
	MGW_JWT_BAD_ALG,         /* "alg" not one of RS256 PS256 ES256 EdDSA
	                          * ("none", HS256, ...), or not the key's */
	MGW_JWT_UNKNOWN_KID,     /* no key has the token's "kid" (a refresh
	                          * of the set may find it) */
	MGW_JWT_BAD_SIGNATURE,
	MGW_JWT_EXPIRED,         /* exp + skew <= now; exp is required */
	MGW_JWT_NOT_YET_VALID,   /* nbf - skew > now */
	MGW_JWT_BAD_ISSUER,
	MGW_JWT_BAD_AUDIENCE,
	MGW_JWT_BAD_CLAIMS,      /* a registered claim of the wrong type, or
	                          * no "sub" */
};

/* Verifies token (len bytes, the credentials after "Bearer ") against
 * keys and pol at Unix time now.  The key is the one whose "kid" is the
 * token's; a token without kid is tried against every key of its
 * algorithm's type.  A key's "alg", when it has one, must be the
 * token's, and the algorithm must fit the key's type (so an HS256 token
 * is never checked with an RSA key as an HMAC secret).  On MGW_JWT_OK
 * *out gets the principal (sub, client_id or azp, scopes from "scope" or
 * "scp", the claims).  Otherwise why gets a short reason fit for an
 * error_description (no token bytes in it).
 *
 * The checks, in order (the first failing one is the result): size;
 * three parts; the JOSE header a JSON object without a member twice and
 * without "crit" (MALFORMED); "alg" (BAD_ALG); the claims a JSON object
 * without a member twice (MALFORMED); the key: a kid no key has, or no
 * key of the algorithm's type at all for a kid-less token (keys NULL
 * included), is UNKNOWN_KID (a refresh may find it; mgw_jwt_kid is NULL
 * for the kid-less case), a kid whose keys do not fit the algorithm is
 * BAD_ALG; the signature (an ES256 one must be the 64 bytes R || S);
 * then the claims' types (BAD_CLAIMS: exp missing or not a number, nbf
 * or iat not numbers, iss not a string, aud not a string or array of
 * strings, sub not a non-empty string, client_id, azp not strings; a
 * string with a NUL in it counts as the wrong type), exp, nbf, iat more
 * than skew ahead (NOT_YET_VALID), iss, aud; last the scopes, which must
 * be RFC 6749 scope tokens (BAD_CLAIMS).  "scope" wins over "scp".  The
 * header's "typ", "jwk", "jku", "x5u", "x5c" are never used. */
enum mgw_jwt_result mgw_jwt_verify(const char *token, size_t len,
                                   const struct mgw_jwks *keys,
                                   const struct mgw_jwt_policy *pol,
                                   int64_t now, struct mgw_principal **out,
                                   char *why, size_t whylen);
/* "ok", "malformed", "too_large", "bad_alg", "unknown_kid", ... */
const char *mgw_jwt_result_name(enum mgw_jwt_result r);
/* The "kid" of token's header into buf (NULL if none or malformed):
 * which key a refresh must find. */
const char *mgw_jwt_kid(const char *token, size_t len, char *buf,
                        size_t buflen);

/* Static tokens: the SHA-256 of a token, and its configured form
 * "sha256:" followed by 64 hex digits. */
#define MGW_TOKEN_DIGEST_LEN 32
void mgw_token_digest(const char *token, size_t len,
                      unsigned char out[MGW_TOKEN_DIGEST_LEN]);
/* Parses "sha256:HEX" into out; 0 or MGW_EINVAL. */
int mgw_token_digest_parse(const char *s,
                           unsigned char out[MGW_TOKEN_DIGEST_LEN]);
/* Constant-time comparison: 1 if equal. */
int mgw_token_digest_equal(const unsigned char *a, const unsigned char *b);

#endif
