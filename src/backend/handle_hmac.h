/* handle_hmac.h - self-contained counter handles signed with HMAC-SHA256
 * (SEP-2567 "handles"): the value and expiry travel inside the handle, so
 * any replica holding the key can continue the counter. */
#ifndef MGW_BACKEND_HANDLE_HMAC_H
#define MGW_BACKEND_HANDLE_HMAC_H

#include <stddef.h>
#include <stdint.h>

struct mgw_hmac_key {
	char kid[17];               /* key id, 1..16 chars [A-Za-z0-9_-] */
	unsigned char key[32];      /* HMAC-SHA256 key */
};

/* Loads keys from a file of lines "KID HEX64" ('#' comments; the first
 * key signs, all verify).  Returns the number of keys (>= 1) or a
 * negative MGW_E* with a message in err. */
int mgw_hmac_keys_load(const char *path, struct mgw_hmac_key *keys,
                       size_t max_keys, char *err, size_t errlen);

/* Generates a random key with kid "k0" (used when no key file is given;
 * replicas then do not share handles, which is logged). */
int mgw_hmac_key_random(struct mgw_hmac_key *k);

/* Returns a malloc'd visible-ASCII handle "v1.KID.PAYLOAD.MAC" (base64url
 * fields) carrying value and the absolute expiry exp (unix seconds). */
char *mgw_hmac_handle_seal(const struct mgw_hmac_key *k, int64_t value,
                           int64_t exp);

/* Verifies and opens a handle with any of nkeys keys (selected by kid,
 * MAC compared in constant time).  Returns 0 and *value, MGW_EAUTH
 * (malformed, unknown kid, bad MAC), or MGW_EEXPIRED (exp < now). */
int mgw_hmac_handle_open(const struct mgw_hmac_key *keys, size_t nkeys,
                         const char *handle, int64_t now, int64_t *value);

#endif
