/* cli-t.h - types of the command-line helpers every mcpgw subcommand
 * shares: the --listen / --tls-cert / --tls-key flags as given, and the
 * listeners they (or the configuration file) ask for. */
#ifndef MGW_CORE_CLI_T_H
#define MGW_CORE_CLI_T_H

#include <stddef.h>
#include <stdio.h>

struct option;

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
	MGW_CLI_OPT_VERSION,
};

/* The options every server command (serve, backend) takes, as given. */
struct mgw_cli_server {
	const char *config;           /* -c, --config FILE */
	struct mgw_cli_listen listen; /* --listen, --tls-cert, --tls-key */
	const char *log_level;        /* --log-level */
	int help;                     /* -h, --help */
	int version;                  /* --version */
};

/* One option found by mgw_cli_parse: c is what getopt_long returned for
 * it, value its argument (NULL for a flag without one).  Returns 0 to go
 * on, an exit code to stop parsing with it, or MGW_EINVAL for a c it does
 * not know (reported as an unknown option). */
typedef int (*mgw_cli_opt_cb)(int c, char *value, void *arg);

/* A server command's command line (mgw_cli_server_begin). */
struct mgw_cli_server_cmd {
	const char *name;               /* "serve": names the messages */
	const struct option *longopts;  /* with MGW_CLI_SERVER_OPTIONS */
	mgw_cli_opt_cb on_opt;          /* the command's own options */
	void (*usage)(FILE *out);       /* the --help text */
};

/* One listener to bind: an address and, for TLS, PEM files (both NULL
 * for a plain listener).  The strings are borrowed from argv or from the
 * configuration snapshot. */
struct mgw_listen_spec {
	const char *address;
	const char *cert, *key;
};

#endif
