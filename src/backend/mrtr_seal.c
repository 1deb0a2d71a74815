/* mrtr_seal.c - sealed MRTR requestState: "rs1." PAYLOAD "." MAC
 *   PAYLOAD  base64url (unpadded) of exp (8 bytes, big-endian unix
 *            seconds) followed by the state as compact JSON;
 *   MAC      base64url (unpadded) of HMAC-SHA256(key, "rs1." PAYLOAD).
 * The length is capped before anything else, the MAC is verified (every
 * configured key, constant-time compare) before the payload is decoded or
 * parsed, and the strict base64url decoder admits one spelling only.
 * Signed, not encrypted: the dialogue's answers are not secrets here. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "backend/mrtr.h"
#include "util/base64.h"

#define MAC_LEN 32

static int mac_of(const struct mgw_hmac_key *k, const char *msg, size_t len,
                  unsigned char mac[MAC_LEN])
{
	unsigned int mlen = 0;

	if (!HMAC(EVP_sha256(), k->key, (int)sizeof(k->key),
	          (const unsigned char *)msg, len, mac, &mlen) ||
	    mlen != MAC_LEN)
		return -1;
	return 0;
}

char *mgw_mrtr_seal(const struct mgw_hmac_key *k, const json_t *state,
                    int64_t exp)
{
	char *js = NULL, *p64 = NULL, *m64 = NULL, *out = NULL;
	unsigned char *raw = NULL, mac[MAC_LEN];
	uint64_t u = (uint64_t)exp;
	size_t jlen, plen, mlen;

	js = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS);
	if (!js)
		goto fail;
	jlen = strlen(js);
	raw = malloc(8 + jlen);
	if (!raw)
		goto fail;
	for (int i = 7; i >= 0; i--, u >>= 8)
		raw[i] = (unsigned char)(u & 0xFF);
	memcpy(raw + 8, js, jlen);
	p64 = mgw_base64_encode(raw, 8 + jlen, 1);
	if (!p64)
		goto fail;
	plen = strlen(p64);
	out = malloc(4 + plen + 1 + 4 * ((MAC_LEN + 2) / 3) + 1);
	if (!out)
		goto fail;
	memcpy(out, "rs1.", 4);
	memcpy(out + 4, p64, plen);
	if (mac_of(k, out, 4 + plen, mac) != 0)
		goto fail;
	m64 = mgw_base64_encode(mac, MAC_LEN, 1);
	if (!m64)
		goto fail;
	mlen = strlen(m64);
	out[4 + plen] = '.';
	memcpy(out + 5 + plen, m64, mlen + 1);
	free(js);
	free(raw);
	free(p64);
	free(m64);
	return out;
fail:
	free(js);
	free(raw);
	free(p64);
	free(m64);
	free(out);
	return NULL;
}

int mgw_mrtr_open(const struct mgw_hmac_key *keys, size_t nkeys,
                  const char *s, int64_t now, json_t **state)
{
	unsigned char want[MAC_LEN], *got = NULL, *raw = NULL;
	const char *dot;
	size_t len, glen = 0, rlen = 0, i;
	int rc = MGW_MRTR_E_INVALID, matched = 0;
	uint64_t u = 0;
	json_t *j;

	*state = NULL;
	len = strnlen(s, MGW_MRTR_MAX_STATE + 1);
	if (len > MGW_MRTR_MAX_STATE)
		return MGW_MRTR_E_TOOLARGE;
	if (len < 5 || strncmp(s, "rs1.", 4) != 0)
		return MGW_MRTR_E_INVALID;
	dot = strchr(s + 4, '.');
	if (!dot || strchr(dot + 1, '.'))
		return MGW_MRTR_E_INVALID;
	got = mgw_base64_decode(dot + 1, strlen(dot + 1), 1, &glen);
	if (!got || glen != MAC_LEN)
		goto out;
	for (i = 0; i < nkeys && !matched; i++) {
		if (mac_of(&keys[i], s, (size_t)(dot - s), want) != 0)
			goto out;
		matched = CRYPTO_memcmp(want, got, MAC_LEN) == 0;
	}
	if (!matched)
		goto out;
	/* Authentic from here on: only now is the payload looked at. */
	raw = mgw_base64_decode(s + 4, (size_t)(dot - s - 4), 1, &rlen);
	if (!raw || rlen < 9)
		goto out;
	for (i = 0; i < 8; i++)
		u = u << 8 | raw[i];
	if (u > (uint64_t)INT64_MAX || (int64_t)u < now) {
		rc = MGW_MRTR_E_EXPIRED;
		goto out;
	}
	j = json_loadb((const char *)raw + 8, rlen - 8, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		goto out;
	}
	*state = j;
	rc = 0;
out:
	free(got);
	free(raw);
	return rc;
}
