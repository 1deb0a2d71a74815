/* tls_common.c - OpenSSL error text shared by the server and the client
 * contexts (see tls_common.h). */
#include "autoconf.h"

#include <stdio.h>

#include <openssl/err.h>

#include "net/tls_common.h"

void mgw_tls_error(char *err, size_t errlen, const char *what,
                   const char *file)
{
	unsigned long e = ERR_get_error();
	char reason[256] = "unknown error";

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	if (err && errlen)
		snprintf(err, errlen, "%s %s: %s", what, file ? file : "", reason);
}
