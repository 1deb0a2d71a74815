/* keyfile.h - 256-bit secret keys with short ids, read from files of lines
 * "KID HEX64" ('#' starts a comment line).  The first key is the current
 * one (it signs or seals); every key verifies or opens, so a key can be
 * rotated by adding the new one as a second line on every replica, then
 * moving it first, then dropping the old one.  Used by the backend's HMAC
 * handles and the gateway's sealed session tokens. */
#ifndef MGW_UTIL_KEYFILE_H
#define MGW_UTIL_KEYFILE_H

#include <stddef.h>

#define MGW_KID_MAX 16          /* key id: 1..16 of [A-Za-z0-9_-] */

struct mgw_key256 {
	char kid[MGW_KID_MAX + 1];
	unsigned char key[32];
};

/* 1 if s/len is a valid key id. */
int mgw_kid_valid(const char *s, size_t len);

/* Loads at most max_keys keys from path (blank lines and '#' lines
 * skipped; duplicate ids refused).  Returns the number of keys (>= 1), or
 * MGW_EIO (cannot read), MGW_EINVAL (syntax, with "PATH:LINE: reason"),
 * MGW_ELIMIT (more than max_keys), with a message in err.  Reads the file
 * synchronously: start-up only.  Key bytes left in local buffers are
 * wiped. */
int mgw_keyfile_load(const char *path, struct mgw_key256 *keys,
                     size_t max_keys, char *err, size_t errlen);

/* A fresh random key named kid.  Returns 0, MGW_EINVAL (kid not a valid
 * id) or MGW_EIO. */
int mgw_keyfile_random(struct mgw_key256 *k, const char *kid);

#endif
