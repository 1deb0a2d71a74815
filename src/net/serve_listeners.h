/* serve_listeners.h - the listener set-up of a server command (`mcpgw
 * serve`, `mcpgw backend`): TLS contexts, one socket per worker thread
 * for every listener, the log lines and the "listening on HOST:PORT"
 * lines on stdout.  What a socket is bound to (an HTTP server, a worker)
 * is the command's business, through a callback. */
#ifndef MGW_NET_SERVE_LISTENERS_H
#define MGW_NET_SERVE_LISTENERS_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "core/cli-t.h"

/* Room for a bound "IP:PORT" ("[IPv6]:PORT"). */
#define MGW_BOUND_LEN 80

/* Binds one socket of one listener for worker (0 .. n_workers - 1):
 * address is the listener's own for worker 0 and the address worker 0
 * got for the others (so port 0 picks one port for all); reuseport is set
 * when there are several workers; tls (NULL: plain) is borrowed, to be
 * referenced by whoever keeps it.  Writes the bound address.  Returns 0,
 * MGW_EINVAL (bad address), MGW_ENOMEM or MGW_EIO (errno kept). */
typedef int (*mgw_listen_bind_cb)(void *arg, unsigned worker,
                                  const char *address, SSL_CTX *tls,
                                  int reuseport, char *bound,
                                  size_t boundlen);

/* How a command binds its listeners, and what they got. */
struct mgw_serve_listeners {
	const char *cmd;      /* "serve", "backend": names the messages */
	unsigned n_workers;   /* sockets per listener, at least 1 */
	int log_workers;      /* the info line ends with "(N workers)" */
	mgw_listen_bind_cb bind;
	void *arg;
	/* out: the bound address of each listener, in the order given */
	char bound[MGW_CLI_MAX_LISTEN][MGW_BOUND_LEN];
};

/* Binds the n (at most MGW_CLI_MAX_LISTEN) listeners ls through sl->bind,
 * logs "listening on ADDRESS[ (TLS)][ (N workers)]" at info for each,
 * then, once all are bound, prints "listening on ADDRESS" per listener on
 * stdout (flushed): the line a supervisor waits for.  A failure prints
 * "mcpgw CMD: " and the reason on stderr (a TLS file, an invalid address,
 * an address that cannot be bound) and stops there; sockets already bound
 * stay with their owners.  Returns 0, MGW_EINVAL (TLS files or address
 * rejected), MGW_ENOMEM or MGW_EIO. */
int mgw_serve_listeners_open(struct mgw_serve_listeners *sl,
                             const struct mgw_listen_spec *ls, size_t n);

/* What mgw_serve_listeners_open refuses before binding, without binding:
 * every TLS listener's certificate and key load (PEM, matching, not
 * encrypted).  Returns 0, or MGW_EINVAL with "TLS for ADDRESS: reason" in
 * err, the words mgw_serve_listeners_open prints after "mcpgw CMD: ". */
int mgw_serve_listeners_check(const struct mgw_listen_spec *ls, size_t n,
                              char *err, size_t errlen);

#endif
