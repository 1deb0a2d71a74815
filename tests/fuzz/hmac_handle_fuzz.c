/* hmac_handle_fuzz.c - libFuzzer target for sealed counter handles.
 *
 * Mode 0 (first byte even): the rest is a handle string opened with a
 * fixed key ring.  Anything that opens must be the one canonical sealing
 * of its value and expiry: a second spelling of a valid handle would mean
 * the parser is laxer than the MAC.
 * Mode 1 (first byte odd): value and expiry come from the input, the
 * handle is sealed, must open to the same value, and flipping any one
 * byte (position from the input) must make it fail. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/handle_hmac.h"
#include "core/errors.h"
#include "util/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1700000000LL

static void ring(struct mgw_hmac_key k[2])
{
	memset(k, 0, 2 * sizeof(*k));
	strcpy(k[0].kid, "new");
	memset(k[0].key, 0x11, sizeof(k[0].key));
	strcpy(k[1].kid, "old");
	memset(k[1].key, 0x22, sizeof(k[1].key));
}

static int64_t be64(const unsigned char *p)
{
	uint64_t u = 0;
	int i;

	for (i = 0; i < 8; i++)
		u = u << 8 | p[i];
	return (int64_t)u;
}

static void open_any(const struct mgw_hmac_key *k, const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1), *again;
	const char *pl, *mac;
	unsigned char *payload;
	size_t plen;
	int64_t v;
	int rc;

	if (!s)
		return;
	memcpy(s, d, n);
	s[n] = '\0';
	rc = mgw_hmac_handle_open(k, 2, s, NOW, &v);
	if (rc != 0 && rc != MGW_EAUTH && rc != MGW_EEXPIRED)
		abort();
	if (rc == 0) {
		const struct mgw_hmac_key *signer = !strncmp(s, "v1.new.", 7) ? &k[0] : &k[1];

		pl = strchr(s + 3, '.') + 1;
		mac = strchr(pl, '.');
		payload = mgw_base64_decode(pl, (size_t)(mac - pl), 1, &plen);
		if (!payload || plen != 16)
			abort();
		again = mgw_hmac_handle_seal(signer, v, be64(payload + 8));
		if (!again || strcmp(again, s))
			abort();
		free(again);
		free(payload);
	}
	free(s);
}

static void seal_open(const struct mgw_hmac_key *k, const uint8_t *d, size_t n)
{
	unsigned char buf[18] = { 0 };
	int64_t value, exp, got = 0;
	char *h;
	size_t len, pos;

	memcpy(buf, d, n < sizeof(buf) ? n : sizeof(buf));
	value = be64(buf);
	exp = be64(buf + 8);
	h = mgw_hmac_handle_seal(&k[1], value, exp);
	if (!h)
		abort();
	if (exp >= NOW) {
		if (mgw_hmac_handle_open(k, 2, h, NOW, &got) != 0 || got != value)
			abort();
	} else if (mgw_hmac_handle_open(k, 2, h, NOW, &got) != MGW_EEXPIRED) {
		abort();
	}
	len = strlen(h);
	pos = ((size_t)buf[16] << 8 | buf[17]) % len;
	h[pos] ^= 0x01;
	if (mgw_hmac_handle_open(k, 2, h, NOW, &got) != MGW_EAUTH)
		abort();
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mgw_hmac_key k[2];

	if (size == 0)
		return 0;
	ring(k);
	if (data[0] & 1)
		seal_open(k, data + 1, size - 1);
	else
		open_any(k, data + 1, size - 1);
	return 0;
}
