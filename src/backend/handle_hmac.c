/* handle_hmac.c - self-contained counter handles (SEP-2567) signed with
 * HMAC-SHA256, so that any replica holding the key can continue a counter
 * another replica started.
 *
 * Wire form: "v1.KID.PAYLOAD.MAC"
 *   KID      the key id, [A-Za-z0-9_-]{1,16}, so it needs no encoding;
 *   PAYLOAD  base64url (unpadded) of 16 bytes: value then exp, each a
 *            big-endian two's-complement int64 (fixed size: no parser,
 *            no ambiguity, nothing to canonicalize);
 *   MAC      base64url (unpadded) of the full 32-byte
 *            HMAC-SHA256(key, "v1." KID "." PAYLOAD), i.e. over the exact
 *            ASCII that precedes the last dot, so version and key id are
 *            authenticated too.
 * The payload is signed, not encrypted: the counter value is not a secret.
 * Opening checks the MAC (constant time) before looking at the payload,
 * and the strict base64url decoder rejects any second spelling of the same
 * bytes, so a handle has exactly one valid form. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "backend/handle_hmac.h"
#include "core/errors.h"
#include "util/base64.h"
#include "util/keyfile.h"

#define MAC_LEN 32
#define PAYLOAD_LEN 16
#define MAX_HANDLE 256 /* far above the ~90 bytes a valid handle needs */

static int kid_valid(const char *s, size_t len)
{
	return mgw_kid_valid(s, len);
}

/* The file format and its loader live in util/keyfile.c (the gateway's
 * sealed sessions read the same format); this keeps the backend's own key
 * type. */
int mgw_hmac_keys_load(const char *path, struct mgw_hmac_key *keys,
                       size_t max_keys, char *err, size_t errlen)
{
	struct mgw_key256 *tmp;
	int n;

	if (max_keys == 0) {
		snprintf(err, errlen, "%s: no room for keys", path);
		return MGW_EINVAL;
	}
	tmp = calloc(max_keys, sizeof(*tmp));
	if (!tmp) {
		snprintf(err, errlen, "%s: out of memory", path);
		return MGW_ENOMEM;
	}
	n = mgw_keyfile_load(path, tmp, max_keys, err, errlen);
	for (int i = 0; i < n; i++) {
		memcpy(keys[i].kid, tmp[i].kid, sizeof(keys[i].kid));
		memcpy(keys[i].key, tmp[i].key, sizeof(keys[i].key));
	}
	OPENSSL_cleanse(tmp, max_keys * sizeof(*tmp));
	free(tmp);
	return n;
}

int mgw_hmac_key_random(struct mgw_hmac_key *k)
{
	struct mgw_key256 tmp;
	int rc = mgw_keyfile_random(&tmp, "k0");

	memset(k, 0, sizeof(*k));
	if (rc == 0) {
		memcpy(k->kid, tmp.kid, sizeof(k->kid));
		memcpy(k->key, tmp.key, sizeof(k->key));
	}
	OPENSSL_cleanse(&tmp, sizeof(tmp));
	return rc;
}

/* HMAC-SHA256 of msg under k into mac.  Returns 0 or MGW_EIO. */
static int mac_of(const struct mgw_hmac_key *k, const char *msg, size_t len,
                  unsigned char mac[MAC_LEN])
{
	unsigned int mlen = 0;

	if (!HMAC(EVP_sha256(), k->key, (int)sizeof(k->key),
	          (const unsigned char *)msg, len, mac, &mlen) ||
	    mlen != MAC_LEN)
		return MGW_EIO;
	return 0;
}

static void put_be64(unsigned char *p, int64_t v)
{
	uint64_t u = (uint64_t)v;
	int i;

	for (i = 7; i >= 0; i--) {
		p[i] = (unsigned char)(u & 0xFF);
		u >>= 8;
	}
}

static int64_t get_be64(const unsigned char *p)
{
	uint64_t u = 0;
	int i;

	for (i = 0; i < 8; i++)
		u = u << 8 | p[i];
	/* Two's complement back to signed without implementation-defined
	 * conversion of out-of-range values. */
	if (u <= (uint64_t)INT64_MAX)
		return (int64_t)u;
	return -(int64_t)(~u) - 1;
}

char *mgw_hmac_handle_seal(const struct mgw_hmac_key *k, int64_t value,
                           int64_t exp)
{
	unsigned char payload[PAYLOAD_LEN], mac[MAC_LEN];
	char *p64 = NULL, *m64 = NULL, *out = NULL;
	size_t klen = strlen(k->kid), plen, mlen, n;

	if (!kid_valid(k->kid, klen))
		return NULL;
	put_be64(payload, value);
	put_be64(payload + 8, exp);
	p64 = mgw_base64_encode(payload, sizeof(payload), 1);
	if (!p64)
		goto fail;
	plen = strlen(p64);
	n = 3 + klen + 1 + plen;
	out = malloc(n + 1 + 4 * ((MAC_LEN + 2) / 3) + 1);
	if (!out)
		goto fail;
	snprintf(out, n + 1, "v1.%s.%s", k->kid, p64);
	if (mac_of(k, out, n, mac) < 0)
		goto fail;
	m64 = mgw_base64_encode(mac, sizeof(mac), 1);
	if (!m64)
		goto fail;
	mlen = strlen(m64);
	out[n] = '.';
	memcpy(out + n + 1, m64, mlen + 1);
	free(p64);
	free(m64);
	return out;
fail:
	free(p64);
	free(m64);
	free(out);
	return NULL;
}

int mgw_hmac_handle_open(const struct mgw_hmac_key *keys, size_t nkeys,
                         const char *handle, int64_t now, int64_t *value)
{
	unsigned char want[MAC_LEN], *got = NULL, *payload = NULL;
	const char *kid, *pl, *mac;
	size_t len, klen, glen = 0, plen = 0, i;
	int rc = MGW_EAUTH, matched = 0;
	int64_t exp;

	if (!handle)
		return MGW_EAUTH;
	len = strnlen(handle, MAX_HANDLE + 1);
	if (len > MAX_HANDLE || strncmp(handle, "v1.", 3))
		return MGW_EAUTH;
	kid = handle + 3;
	pl = strchr(kid, '.');
	if (!pl)
		return MGW_EAUTH;
	klen = (size_t)(pl - kid);
	pl++;
	mac = strchr(pl, '.');
	if (!mac || strchr(mac + 1, '.') || !kid_valid(kid, klen))
		return MGW_EAUTH;
	mac++;
	got = mgw_base64_decode(mac, strlen(mac), 1, &glen);
	if (!got || glen != MAC_LEN)
		goto fail;
	/* Several keys may share a kid only if the file said so twice, which
	 * the loader refuses; still, try each match rather than the first. */
	for (i = 0; i < nkeys && !matched; i++) {
		if (strlen(keys[i].kid) != klen || memcmp(keys[i].kid, kid, klen))
			continue;
		if (mac_of(&keys[i], handle, (size_t)(mac - 1 - handle), want) < 0) {
			rc = MGW_EIO;
			goto fail;
		}
		matched = CRYPTO_memcmp(want, got, MAC_LEN) == 0;
	}
	if (!matched)
		goto fail;
	payload = mgw_base64_decode(pl, (size_t)(mac - 1 - pl), 1, &plen);
	if (!payload || plen != PAYLOAD_LEN)
		goto fail;
	exp = get_be64(payload + 8);
	if (exp < now) {
		rc = MGW_EEXPIRED;
		goto fail;
	}
	*value = get_be64(payload);
	rc = 0;
fail:
	free(got);
	free(payload);
	return rc;
}
