/* jwt_fuzz.c - libFuzzer target for the JWT/JWKS verifier (src/auth/).
 *
 * Input: a JWKS document, a NUL byte, a token (no NUL: the whole input is
 * both).  The document goes to mgw_jwks_parse, the token to
 * mgw_jwt_verify under a strict policy (issuer, audience, 60 s of skew)
 * and an open one (neither, the same skew), and to mgw_jwt_kid and the
 * static-token digest.  Properties besides the sanitizers':
 *  - a set parsed holds 1..MGW_JWKS_MAX_KEYS keys, usable plus skipped
 *    being the document's "keys"; a refused document says why;
 *  - every result is one of the enum with a name; a refusal has a short
 *    printable reason and no principal; OK has a principal with a sub,
 *    the claims object and non-empty scope strings;
 *  - what passes the strict policy passes the open one;
 *  - an accepted token with any one character of its signature changed
 *    is refused;
 *  - a set merged with itself gives every token the same verdict;
 *  - UNKNOWN_KID with a kid means the set has no key with that kid;
 *  - a token's digest, written as "sha256:HEX", parses back equal.
 * Then the token part is also signed, as the payload of an EdDSA token,
 * by a key the harness holds (so the claims checks see arbitrary bytes
 * behind a valid signature): the verdict is never about the key or the
 * signature, MALFORMED exactly when the bytes are not a JSON object, and
 * OK gives the payload's own "sub".
 * JWT_FUZZ_VERBOSE=1 prints each input's verdicts (to check seeds). */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "auth/jwt.h"
#include "auth/principal.h"
#include "mcp/json.h"
#include "util/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1767225600 /* 2026-01-01; the seeds expire in 2100 */

static const struct mgw_jwt_policy strict = {
	"https://issuer.test", "https://mcp.test/mcp", 60, 4096,
};
static const struct mgw_jwt_policy open_pol = {NULL, NULL, 60, 0};

static void check_why(const char *why, size_t len)
{
	size_t n = strnlen(why, len);

	if (n == len || n == 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)why[i] < 0x20 || (unsigned char)why[i] > 0x7E)
			abort();
}

static enum mgw_jwt_result verify(const char *t, size_t n,
                                  const struct mgw_jwks *k,
                                  const struct mgw_jwt_policy *pol)
{
	struct mgw_principal *p = (struct mgw_principal *)&p;
	enum mgw_jwt_result r;
	char why[128];

	r = mgw_jwt_verify(t, n, k, pol, NOW, &p, why, sizeof(why));
	if (r < MGW_JWT_OK || r > MGW_JWT_BAD_CLAIMS ||
	    strcmp(mgw_jwt_result_name(r), "unknown") == 0)
		abort();
	if (r != MGW_JWT_OK) {
		if (p)
			abort();
		check_why(why, sizeof(why));
		return r;
	}
	if (!p || !p->sub || !p->sub[0] || !json_is_object(p->claims) ||
	    why[0] != '\0' || p->kind != MGW_PRINCIPAL_JWT)
		abort();
	for (size_t i = 0; i < p->n_scopes; i++)
		if (!p->scopes[i][0] || strchr(p->scopes[i], ' '))
			abort();
	mgw_principal_free(p);
	return r;
}

/* The number of elements of the document's "keys" array, or -1. */
static long keys_in(const uint8_t *d, size_t n)
{
	struct mgw_json_error e;
	json_t *v = mgw_json_parse(d, n, 8, &e);
	json_t *k = json_object_get(v, "keys");
	long c = json_is_array(k) ? (long)json_array_size(k) : -1;

	json_decref(v);
	return c;
}

static void tamper(const char *t, size_t n, const struct mgw_jwks *k)
{
	const char *sig = memchr(t, '.', n);
	char *c;

	sig = sig ? memchr(sig + 1, '.', n - (size_t)(sig + 1 - t)) : NULL;
	if (!sig || (size_t)(sig + 1 - t) >= n)
		abort(); /* an accepted token has a signature */
	c = malloc(n);
	if (!c)
		return;
	/* every position of the signature, one at a time (a few: bounded) */
	for (size_t i = (size_t)(sig + 1 - t), step = 1; i < n; i += step) {
		memcpy(c, t, n);
		c[i] = c[i] == 'A' ? 'B' : 'A';
		if (verify(c, n, k, &open_pol) == MGW_JWT_OK)
			abort();
		step = step * 2 + 1;
	}
	free(c);
}

static EVP_PKEY *own_key;
static struct mgw_jwks *own_set;

static void own_init(void)
{
	unsigned char x[32];
	size_t n = sizeof(x);
	char doc[200], *b, err[200];

	own_key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!own_key || EVP_PKEY_get_raw_public_key(own_key, x, &n) != 1 ||
	    !(b = mgw_base64_encode(x, n, 1)))
		abort();
	snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"OKP\",\"crv\":"
	         "\"Ed25519\",\"kid\":\"fz\",\"x\":\"%s\"}]}", b);
	free(b);
	own_set = mgw_jwks_parse(doc, strlen(doc), NULL, err, sizeof(err));
	if (!own_set)
		abort();
}

/* payload signed by own_key, then verified against own_set. */
static void signed_payload(const uint8_t *p, size_t n)
{
	static const char hdr[] = "eyJhbGciOiJFZERTQSIsImtpZCI6ImZ6In0"; /* {"alg":"EdDSA","kid":"fz"} */
	char *pl = mgw_base64_encode(p, n, 1), *tok = NULL, *sig64 = NULL;
	unsigned char sig[64];
	size_t siglen = sizeof(sig), len;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	struct mgw_principal *pr = NULL;
	struct mgw_json_error e;
	enum mgw_jwt_result r;
	char why[128];
	json_t *j;

	if (!pl || !md || !(tok = malloc(strlen(hdr) + strlen(pl) + 100)))
		goto out;
	len = (size_t)sprintf(tok, "%s.%s", hdr, pl);
	if (EVP_DigestSignInit_ex(md, NULL, NULL, NULL, NULL, own_key, NULL) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (unsigned char *)tok, len) != 1 ||
	    !(sig64 = mgw_base64_encode(sig, siglen, 1)))
		abort();
	len += (size_t)sprintf(tok + len, ".%s", sig64);
	r = mgw_jwt_verify(tok, len, own_set, &open_pol, NOW, &pr, why, sizeof(why));
	if (r == MGW_JWT_BAD_SIGNATURE || r == MGW_JWT_UNKNOWN_KID ||
	    r == MGW_JWT_BAD_ALG || r == MGW_JWT_TOO_LARGE)
		abort();
	j = mgw_json_parse(p, n, 32, &e);
	if ((r == MGW_JWT_MALFORMED) != !json_is_object(j))
		abort();
	if (r == MGW_JWT_OK &&
	    strcmp(pr->sub, json_string_value(json_object_get(j, "sub"))) != 0)
		abort();
	json_decref(j);
	mgw_principal_free(pr);
out:
	EVP_MD_CTX_free(md);
	free(sig64);
	free(tok);
	free(pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t jlen = nul ? (size_t)(nul - data) : size;
	const char *tok = nul ? (const char *)nul + 1 : (const char *)data;
	size_t tlen = nul ? size - jlen - 1 : size;
	struct mgw_jwks *keys, *twice;
	enum mgw_jwt_result rs, ro, rt;
	unsigned char d[MGW_TOKEN_DIGEST_LEN], e[MGW_TOKEN_DIGEST_LEN];
	char err[200], kid[64], hex[80], *z;
	size_t skipped = 12345;
	long want;

	if (!own_key)
		own_init();
	signed_payload((const uint8_t *)tok, tlen);
	err[0] = '\0';
	keys = mgw_jwks_parse((const char *)data, jlen, &skipped, err, sizeof(err));
	want = keys_in(data, jlen);
	if (keys) {
		if (mgw_jwks_count(keys) == 0 ||
		    mgw_jwks_count(keys) > MGW_JWKS_MAX_KEYS ||
		    (long)(mgw_jwks_count(keys) + skipped) != want)
			abort();
	} else if (!err[0] || skipped != 0) {
		abort();
	}
	rs = verify(tok, tlen, keys, &strict);
	ro = verify(tok, tlen, keys, &open_pol);
	if (rs == MGW_JWT_OK && ro != MGW_JWT_OK)
		abort();
	if (ro == MGW_JWT_OK)
		tamper(tok, tlen, keys);
	if (keys) {
		twice = mgw_jwks_merge(keys, keys);
		if (twice) {
			if (mgw_jwks_count(twice) != 2 * mgw_jwks_count(keys))
				abort();
			rt = verify(tok, tlen, twice, &open_pol);
			if (rt != ro)
				abort();
			mgw_jwks_unref(twice);
		}
	}
	if (mgw_jwt_kid(tok, tlen, kid, sizeof(kid)) && ro == MGW_JWT_UNKNOWN_KID &&
	    mgw_jwks_has_kid(keys, kid))
		abort();
	mgw_token_digest(tok, tlen, d);
	z = hex + snprintf(hex, sizeof(hex), "sha256:");
	for (size_t i = 0; i < sizeof(d); i++)
		z += snprintf(z, 3, "%02x", d[i]);
	if (mgw_token_digest_parse(hex, e) != 0 || !mgw_token_digest_equal(d, e))
		abort();
	if (getenv("JWT_FUZZ_VERBOSE"))
		fprintf(stderr, "jwks %s (%zu keys, %zu skipped%s%s) strict %s open %s\n",
		        keys ? "ok" : "refused", mgw_jwks_count(keys),
		        keys ? skipped : 0, keys ? "" : ": ", keys ? "" : err,
		        mgw_jwt_result_name(rs), mgw_jwt_result_name(ro));
	mgw_jwks_unref(keys);
	return 0;
}
