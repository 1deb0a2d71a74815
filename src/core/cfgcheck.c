/* cfgcheck.c - string checks shared by the configuration sections of
 * several modules (see cfgcheck.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <openssl/crypto.h>

#include "core/cfgcheck.h"
#include "util/keyfile.h"
#include "util/parse.h"
#include "util/redis_url.h"
#include "util/url.h"

int mgw_cfg_check_nonempty(const char *s, char *why, size_t whylen)
{
	if (*s)
		return 0;
	snprintf(why, whylen, "must not be empty");
	return -1;
}

int mgw_cfg_check_word(const char *s, char *why, size_t whylen)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++) {
		if (s[i] <= 0x20 || s[i] >= 0x7f) {
			snprintf(why, whylen, "must be visible ASCII without spaces");
			return -1;
		}
	}
	if (n >= 1 && n <= 128)
		return 0;
	snprintf(why, whylen, "must be 1 to 128 characters long");
	return -1;
}

int mgw_cfg_check_path(const char *s, char *why, size_t whylen)
{
	if (s[0] != '/' || strlen(s) > 1024) {
		snprintf(why, whylen, "must start with '/' (at most 1024 bytes)");
		return -1;
	}
	for (; *s; s++) {
		if (*s <= 0x20 || *s >= 0x7f || *s == '?' || *s == '#') {
			snprintf(why, whylen,
			         "must be visible ASCII without '?', '#' or spaces");
			return -1;
		}
	}
	return 0;
}

int mgw_cfg_check_hostport(const char *s, char *why, size_t whylen)
{
	char host[256];
	uint16_t port;

	if (mgw_parse_hostport(s, host, sizeof(host), &port) == 0)
		return 0;
	snprintf(why, whylen, "'%.60s' is not HOST:PORT, [IPV6]:PORT or :PORT",
	         s);
	return -1;
}

int mgw_cfg_check_url(const char *s, char *why, size_t whylen)
{
	struct mgw_url u;
	char reason[64];

	if (mgw_url_parse(s, &u, reason, sizeof(reason)) == 0)
		return 0;
	snprintf(why, whylen, "'%.60s' %.60s", s, reason);
	return -1;
}

int mgw_cfg_check_redis_url(const char *s, char *why, size_t whylen)
{
	char err[256];

	/* the connection's own parser, so that check-config finds what
	 * serve would refuse (its message shows no password) */
	if (mgw_redis_url_check(s, NULL, 0, err, sizeof(err)) == 0)
		return 0;
	snprintf(why, whylen, "%s", err);
	return -1;
}

int mgw_cfg_check_sentinel(const char *s, char *why, size_t whylen)
{
	char host[256];
	unsigned char tmp[16];
	uint16_t port = 0;

	if (mgw_parse_hostport(s, host, sizeof(host), &port) == 0 && port &&
	    (inet_pton(AF_INET, host, tmp) == 1 ||
	     inet_pton(AF_INET6, host, tmp) == 1))
		return 0;
	snprintf(why, whylen, "'%.60s' must be IP:PORT (a numeric address)",
	         s);
	return -1;
}

/* O_NONBLOCK: opening a FIFO must not hang the check (it then fails as
 * "not a regular file"). */
int mgw_cfg_check_file(const char *s, char *why, size_t whylen)
{
	struct stat st;
	int fd = open(s, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		snprintf(why, whylen, "cannot read '%.100s': %s", s, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "'%.100s' is not a regular file", s);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int mgw_cfg_check_keyfile(const char *s, char *why, size_t whylen)
{
	struct mgw_key256 keys[MGW_CFG_KEYFILE_MAX];
	int n;

	if (mgw_cfg_check_file(s, why, whylen) != 0)
		return -1;
	n = mgw_keyfile_load(s, keys, MGW_CFG_KEYFILE_MAX, why, whylen);
	OPENSSL_cleanse(keys, sizeof(keys));
	return n < 1 ? -1 : 0;
}

int mgw_cfg_check_log_file(const char *s, char *why, size_t whylen)
{
	char dir[4096];
	const char *slash;
	struct stat st;

	if (!*s) {
		snprintf(why, whylen, "must not be empty");
		return -1;
	}
	if (stat(s, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(why, whylen, "'%.100s' is a directory", s);
			return -1;
		}
		if (access(s, W_OK) != 0) {
			snprintf(why, whylen, "cannot write '%.100s': %s", s,
			         strerror(errno));
			return -1;
		}
		return 0;
	}
	if (errno != ENOENT) {
		snprintf(why, whylen, "cannot write '%.100s': %s", s, strerror(errno));
		return -1;
	}
	/* it will be created: its folder must be there and writable */
	slash = strrchr(s, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == s)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - s), s);
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(why, whylen, "cannot create '%.100s' in '%.100s': %s", s,
		         dir, strerror(errno));
		return -1;
	}
	return 0;
}
