/* keyfile.c - loader of "KID HEX64" key files (see keyfile.h), shared by
 * the backend's HMAC handles and the gateway's sealed session tokens. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/errors.h"
#include "util/keyfile.h"
#include "util/rand.h"

/* Key ids travel in clear inside handles and tokens: keep them to a
 * charset no encoding has to care about. */
int mgw_kid_valid(const char *s, size_t len)
{
	if (len < 1 || len > MGW_KID_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses one non-comment line "KID HEX64" (surrounding blanks allowed).
 * Returns 0 or MGW_EINVAL with a message in err. */
static int parse_key_line(char *line, struct mgw_key256 *k, char *err,
                          size_t errlen)
{
	char *kid, *hex, *end;
	size_t i, klen;

	kid = line;
	while (*kid == ' ' || *kid == '\t')
		kid++;
	for (hex = kid; *hex && *hex != ' ' && *hex != '\t'; hex++)
		;
	klen = (size_t)(hex - kid);
	while (*hex == ' ' || *hex == '\t')
		hex++;
	for (end = hex; *end && *end != ' ' && *end != '\t'; end++)
		;
	if (!mgw_kid_valid(kid, klen)) {
		snprintf(err, errlen,
		         "key id must be 1-%d characters of [A-Za-z0-9_-]",
		         MGW_KID_MAX);
		return MGW_EINVAL;
	}
	for (i = (size_t)(end - line); line[i]; i++) {
		if (line[i] != ' ' && line[i] != '\t') {
			snprintf(err, errlen,
			         "expected \"KID HEX64\", found extra text");
			return MGW_EINVAL;
		}
	}
	if (end - hex != 2 * (long)sizeof(k->key)) {
		snprintf(err, errlen,
		         "key must be exactly %zu hex digits (256 bits)",
		         2 * sizeof(k->key));
		return MGW_EINVAL;
	}
	for (i = 0; i < sizeof(k->key); i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			snprintf(err, errlen, "key has a non-hex digit");
			return MGW_EINVAL;
		}
		k->key[i] = (unsigned char)(hi << 4 | lo);
	}
	memcpy(k->kid, kid, klen);
	k->kid[klen] = '\0';
	return 0;
}

int mgw_keyfile_load(const char *path, struct mgw_key256 *keys,
                     size_t max_keys, char *err, size_t errlen)
{
	char line[512], msg[160];
	size_t n = 0, lineno = 0, i;
	int rc = MGW_EINVAL;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return MGW_EIO;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *p = line;

		lineno++;
		if (len == sizeof(line) - 1 && line[len - 1] != '\n' && !feof(f)) {
			snprintf(err, errlen, "%s:%zu: line too long", path, lineno);
			goto fail;
		}
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		if (n == max_keys) {
			snprintf(err, errlen, "%s:%zu: more than %zu keys", path,
			         lineno, max_keys);
			rc = MGW_ELIMIT;
			goto fail;
		}
		if (parse_key_line(p, &keys[n], msg, sizeof(msg)) < 0) {
			snprintf(err, errlen, "%s:%zu: %s", path, lineno, msg);
			goto fail;
		}
		for (i = 0; i < n; i++) {
			if (!strcmp(keys[i].kid, keys[n].kid)) {
				snprintf(err, errlen, "%s:%zu: duplicate key id '%s'",
				         path, lineno, keys[n].kid);
				goto fail;
			}
		}
		n++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		rc = MGW_EIO;
		goto fail;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: no keys", path);
		goto fail;
	}
	fclose(f);
	OPENSSL_cleanse(line, sizeof(line));
	return (int)n;
fail:
	fclose(f);
	OPENSSL_cleanse(line, sizeof(line));
	OPENSSL_cleanse(keys, (n < max_keys ? n + 1 : n) * sizeof(*keys));
	return rc;
}

int mgw_keyfile_random(struct mgw_key256 *k, const char *kid)
{
	size_t len = strlen(kid);

	memset(k, 0, sizeof(*k));
	if (!mgw_kid_valid(kid, len))
		return MGW_EINVAL;
	memcpy(k->kid, kid, len);
	return mgw_random_bytes(k->key, sizeof(k->key));
}
