/* serve_listeners.c - bind a server command's listeners, one socket per
 * worker, and announce them. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/serve_listeners.h"
#include "net/tls.h"

/* The TLS context of listener ls into *tls (NULL for a plain one).
 * Returns 0, or MGW_EINVAL with "TLS for ADDRESS: reason" in err. */
static int tls_ctx(const struct mgw_listen_spec *ls, SSL_CTX **tls, char *err,
                   size_t errlen)
{
	char why[512];

	*tls = NULL;
	if (!ls->cert)
		return 0;
	*tls = mgw_tls_server_ctx(ls->cert, ls->key, why, sizeof(why));
	if (*tls)
		return 0;
	snprintf(err, errlen, "TLS for %s: %s", ls->address, why);
	return MGW_EINVAL;
}

static int make_tls(const struct mgw_serve_listeners *sl,
                    const struct mgw_listen_spec *ls, SSL_CTX **tls)
{
	char err[600];
	int rc = tls_ctx(ls, tls, err, sizeof(err));

	if (rc)
		fprintf(stderr, "mcpgw %s: %s\n", sl->cmd, err);
	return rc;
}

int mgw_serve_listeners_check(const struct mgw_listen_spec *ls, size_t n,
                              char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		SSL_CTX *tls;
		int rc = tls_ctx(&ls[i], &tls, err, errlen);

		if (rc)
			return rc;
		SSL_CTX_free(tls);
	}
	return 0;
}

/* Worker 0 binds the listener's address into bound, the others bind what
 * it got.  Returns 0 or the failure, reported. */
static int bind_workers(struct mgw_serve_listeners *sl,
                        const struct mgw_listen_spec *ls, SSL_CTX *tls,
                        char *bound)
{
	int reuse = sl->n_workers > 1;

	for (unsigned w = 0; w < sl->n_workers; w++) {
		const char *addr = w == 0 ? ls->address : bound;
		char got[MGW_BOUND_LEN];
		int rc = sl->bind(sl->arg, w, addr, tls, reuse,
		                  w == 0 ? bound : got, MGW_BOUND_LEN);
		int e = errno;

		if (rc == MGW_EINVAL) {
			fprintf(stderr, "mcpgw %s: invalid listen address '%s'\n",
			        sl->cmd, ls->address);
			return rc;
		}
		if (rc != 0) {
			fprintf(stderr, "mcpgw %s: cannot listen on %s: %s\n", sl->cmd,
			        addr, rc == MGW_ENOMEM ? "out of memory" : strerror(e));
			return rc;
		}
	}
	return 0;
}

static void log_bound(const struct mgw_serve_listeners *sl, const char *bound,
                      int tls)
{
	if (sl->log_workers)
		mgw_info(NULL, "listening on %s%s (%u workers)", bound,
		         tls ? " (TLS)" : "", sl->n_workers);
	else
		mgw_info(NULL, "listening on %s%s", bound, tls ? " (TLS)" : "");
}

int mgw_serve_listeners_open(struct mgw_serve_listeners *sl,
                             const struct mgw_listen_spec *ls, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		SSL_CTX *tls;
		int rc = make_tls(sl, &ls[i], &tls);

		if (rc)
			return rc;
		rc = bind_workers(sl, &ls[i], tls, sl->bound[i]);
		SSL_CTX_free(tls); /* each socket's owner holds its own reference */
		if (rc)
			return rc;
		log_bound(sl, sl->bound[i], ls[i].cert != NULL);
	}
	for (size_t i = 0; i < n; i++)
		printf("listening on %s\n", sl->bound[i]);
	fflush(stdout);
	return 0;
}
