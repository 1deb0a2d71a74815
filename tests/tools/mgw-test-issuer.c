/* mgw-test-issuer.c - a token issuer for the integration tests: keys,
 * their public JWKS, and compact JWS tokens signed with OpenSSL
 * (jws_sign.c), independently of the gateway's verifier (src/auth/).
 *
 *   mgw-test-issuer keygen ALG KID OUT.pem
 *   mgw-test-issuer jwks KEY.pem[:KID[:ALG]]... > jwks.json
 *   mgw-test-issuer sign KEY.pem ALG KID CLAIMS.json|-
 *   mgw-test-issuer sign-hs256 SECRETFILE CLAIMS.json|- [KID]
 *   mgw-test-issuer sign-none CLAIMS.json|- [KID]
 *   mgw-test-issuer digest TOKEN
 *
 * keygen writes a PKCS#8 PEM private key (RSA 2048 for RS256 and PS256,
 * P-256 for ES256, Ed25519 for EdDSA) after a comment line recording KID
 * and ALG (PEM readers, openssl's included, skip it); jwks takes the kid
 * from there unless KEY.pem:KID overrides it (an empty KID: no "kid"
 * member), and writes an "alg" member only when :ALG is given.  sign
 * signs the claims byte for byte as given (so a test writes exp and nbf
 * itself, or a broken payload); KID "" leaves "kid" out of the header.
 * sign-hs256 makes the HMAC token of the algorithm-confusion attack
 * (SECRETFILE's bytes as the key, e.g. an RSA public key's PEM); sign-none
 * an "alg": "none" token.  digest prints the "sha256:HEX" form of a
 * static token.  Exit status 0, or 2 with a message on stderr. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "tests/tools/jws_sign.h"

#define MAX_FILE (1 << 20)
#define MARK "# mgw-test-issuer"

static int usage(void)
{
	fprintf(stderr,
	        "usage: mgw-test-issuer keygen ALG KID OUT.pem\n"
	        "       mgw-test-issuer jwks KEY.pem[:KID[:ALG]]...\n"
	        "       mgw-test-issuer sign KEY.pem ALG KID CLAIMS.json|-\n"
	        "       mgw-test-issuer sign-hs256 SECRETFILE CLAIMS.json|- [KID]\n"
	        "       mgw-test-issuer sign-none CLAIMS.json|- [KID]\n"
	        "       mgw-test-issuer digest TOKEN\n"
	        "ALG: RS256 PS256 ES256 EdDSA\n");
	return 2;
}

static int die(const char *what, const char *arg)
{
	fprintf(stderr, "mgw-test-issuer: %s%s%s\n", what, arg ? ": " : "",
	        arg ? arg : "");
	return 2;
}

/* The whole file (or stdin for "-"), NUL-terminated; *len its size. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf;
	size_t n = 0, r;

	if (!f)
		return NULL;
	buf = malloc(MAX_FILE + 1);
	while (buf && n < MAX_FILE && (r = fread(buf + n, 1, MAX_FILE - n, f)) > 0)
		n += r;
	if (f != stdin)
		fclose(f);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	*len = n;
	return buf;
}

static EVP_PKEY *load_key(const char *path)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *k;

	if (!f)
		return NULL;
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return k;
}

static int cmd_keygen(int argc, char **argv)
{
	EVP_PKEY *k;
	FILE *f;
	int ok;

	if (argc != 5)
		return usage();
	k = mgw_ti_keygen(argv[2], 0);
	if (!k)
		return die("cannot make a key for", argv[2]);
	umask(077);
	f = fopen(argv[4], "w");
	if (!f) {
		EVP_PKEY_free(k);
		return die("cannot write", argv[4]);
	}
	fprintf(f, "%s kid=%s alg=%s\n", MARK, argv[3], argv[2]);
	ok = PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) == 1;
	ok = fclose(f) == 0 && ok;
	EVP_PKEY_free(k);
	return ok ? 0 : die("cannot write", argv[4]);
}

/* The kid keygen recorded in path's first line, into buf ("" if none). */
static void recorded_kid(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512], *p, *e;

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && strncmp(line, MARK, strlen(MARK)) == 0 &&
	    (p = strstr(line, " kid=")) && (e = strstr(p, " alg="))) {
		p += strlen(" kid=");
		snprintf(buf, len, "%.*s", (int)(e - p), p);
	}
	fclose(f);
}

static int cmd_jwks(int argc, char **argv)
{
	json_t *doc = json_object(), *keys = json_array();
	char *out;

	if (argc < 3 || !doc || !keys)
		return usage();
	json_object_set_new(doc, "keys", keys);
	for (int i = 2; i < argc; i++) {
		char *path = argv[i], *kid = strchr(path, ':'), *alg = NULL;
		char kbuf[256];
		EVP_PKEY *k;
		json_t *jwk;

		if (kid) {
			*kid++ = '\0';
			alg = strchr(kid, ':');
			if (alg)
				*alg++ = '\0';
		} else {
			recorded_kid(path, kbuf, sizeof(kbuf));
			kid = kbuf;
		}
		k = load_key(path);
		if (!k) {
			json_decref(doc);
			return die("cannot read a private key from", path);
		}
		jwk = mgw_ti_jwk(k, kid, alg);
		EVP_PKEY_free(k);
		if (!jwk) {
			json_decref(doc);
			return die("cannot describe the key of", path);
		}
		json_array_append_new(keys, jwk);
	}
	out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (!out)
		return die("out of memory", NULL);
	printf("%s\n", out);
	free(out);
	return 0;
}

/* Prints a token made by the callers below, or fails. */
static int put(char *token)
{
	if (!token)
		return die("signing failed", NULL);
	printf("%s\n", token);
	free(token);
	return 0;
}

static int cmd_sign(int argc, char **argv)
{
	char *claims, *hdr, *tok;
	size_t n;
	EVP_PKEY *k;

	if (argc != 6)
		return usage();
	k = load_key(argv[2]);
	if (!k)
		return die("cannot read a private key from", argv[2]);
	claims = slurp(argv[5], &n);
	hdr = mgw_ti_header(argv[3], argv[4]);
	tok = claims && hdr ? mgw_ti_sign(k, argv[3], hdr, claims, n, 0) : NULL;
	EVP_PKEY_free(k);
	free(hdr);
	if (!claims)
		return die("cannot read", argv[5]);
	free(claims);
	if (!tok)
		return die("cannot sign with this key and alg", argv[3]);
	return put(tok);
}

static int cmd_sign_hs256(int argc, char **argv)
{
	char *secret, *claims, *hdr, *tok = NULL;
	size_t sn = 0, cn = 0;

	if (argc != 4 && argc != 5)
		return usage();
	secret = slurp(argv[2], &sn);
	claims = slurp(argv[3], &cn);
	hdr = mgw_ti_header("HS256", argc == 5 ? argv[4] : NULL);
	if (secret && claims && hdr)
		tok = mgw_ti_sign_hs256(secret, sn, hdr, claims, cn);
	free(secret);
	free(claims);
	free(hdr);
	return put(tok);
}

static int cmd_sign_none(int argc, char **argv)
{
	char *claims, *hdr, *tok = NULL;
	size_t cn = 0;

	if (argc != 3 && argc != 4)
		return usage();
	claims = slurp(argv[2], &cn);
	hdr = mgw_ti_header("none", argc == 4 ? argv[3] : NULL);
	if (claims && hdr)
		tok = mgw_ti_unsigned(hdr, claims, cn);
	free(claims);
	free(hdr);
	return put(tok);
}

static int cmd_digest(int argc, char **argv)
{
	unsigned char d[32];
	unsigned int n = 0;

	if (argc != 3)
		return usage();
	if (EVP_Digest(argv[2], strlen(argv[2]), d, &n, EVP_sha256(), NULL) != 1)
		return die("SHA-256 failed", NULL);
	printf("sha256:");
	for (unsigned int i = 0; i < n; i++)
		printf("%02x", d[i]);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "keygen") == 0)
		return cmd_keygen(argc, argv);
	if (strcmp(argv[1], "jwks") == 0)
		return cmd_jwks(argc, argv);
	if (strcmp(argv[1], "sign") == 0)
		return cmd_sign(argc, argv);
	if (strcmp(argv[1], "sign-hs256") == 0)
		return cmd_sign_hs256(argc, argv);
	if (strcmp(argv[1], "sign-none") == 0)
		return cmd_sign_none(argc, argv);
	if (strcmp(argv[1], "digest") == 0)
		return cmd_digest(argc, argv);
	return usage();
}
