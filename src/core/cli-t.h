/* cli-t.h - types of the command-line helpers every mcpgw subcommand
 * shares: the --listen / --tls-cert / --tls-key flags as given, and the
 * listeners they (or the configuration file) ask for. */
#ifndef MGW_CORE_CLI_T_H
#define MGW_CORE_CLI_T_H

#include <stddef.h>

/* Most listeners a server binds (--listen flags or file entries). */
#define MGW_CLI_MAX_LISTEN 16

/* The listener flags of a server command, as given (strings borrowed
 * from argv). */
struct mgw_cli_listen {
	const char *address[MGW_CLI_MAX_LISTEN]; /* --listen, in order */
	size_t n;
	const char *tls_cert, *tls_key;          /* --tls-cert, --tls-key */
};

/* What getopt_long returns for the options of MGW_CLI_SERVER_OPTIONS
 * (cli.h) besides 'c' and 'h'; above any command's own values. */
enum {
	MGW_CLI_OPT_LISTEN = 0x1000,
	MGW_CLI_OPT_TLS_CERT,
	MGW_CLI_OPT_TLS_KEY,
	MGW_CLI_OPT_LOG_LEVEL,
};

/* The options every server command (serve, backend) takes, as given. */
struct mgw_cli_server {
	const char *config;           /* -c, --config FILE */
	struct mgw_cli_listen listen; /* --listen, --tls-cert, --tls-key */
	const char *log_level;        /* --log-level */
	int help;                     /* -h, --help */
};

/* One listener to bind: an address and, for TLS, PEM files (both NULL
 * for a plain listener).  The strings are borrowed from argv or from the
 * configuration snapshot. */
struct mgw_listen_spec {
	const char *address;
	const char *cert, *key;
};

#endif
