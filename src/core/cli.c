/* cli.c - what every mcpgw subcommand's command line shares. */
#include "autoconf.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <http_parser.h>
#include <jansson.h>
#include <nghttp2/nghttp2ver.h>
#include <openssl/opensslv.h>
#include <yaml.h>

#include "core/cli.h"
#include "core/config.h"
#include "core/errors.h"
#include "util/allocator.h"
#include "util/parse.h"

int mgw_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mcpgw %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'mcpgw %s --help'.\n", cmd);
	return MGW_EXIT_USAGE;
}

int mgw_cli_version(FILE *out)
{
	unsigned long hp = http_parser_version();

	fprintf(out, "mcpgw %s\n", PACKAGE_VERSION);
	fprintf(out, "  libevent %s, nghttp2 %s, %s, jansson %s, libyaml %s,\n"
	        "  http-parser %lu.%lu.%lu, hiredis %d.%d.%d\n",
	        event_get_version(), NGHTTP2_VERSION, OPENSSL_VERSION_TEXT,
	        JANSSON_VERSION, yaml_get_version_string(), hp >> 16 & 255,
	        hp >> 8 & 255, hp & 255, HIREDIS_MAJOR, HIREDIS_MINOR,
	        HIREDIS_PATCH);
	fprintf(out, "  allocator: %s\n", mgw_allocator_name());
	return fflush(out) == 0 ? MGW_EXIT_OK : MGW_EXIT_RUNTIME;
}

int mgw_cli_parse(const char *cmd, int argc, char **argv,
                  const char *shortopts, const struct option *longopts,
                  mgw_cli_opt_cb on_opt, void *arg)
{
	int c, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == ':')
			return mgw_cli_usage_error(cmd, "option '%s' needs a value",
			                           argv[optind - 1]);
		rc = c == '?' ? MGW_EINVAL : on_opt(c, optarg, arg);
		if (rc == MGW_EINVAL)
			return mgw_cli_usage_error(cmd, "unknown option '%s'",
			                           argv[optind - 1]);
		if (rc)
			return rc;
	}
	if (optind < argc)
		return mgw_cli_usage_error(cmd, "unexpected argument '%s'",
		                           argv[optind]);
	return 0;
}

int mgw_cli_repeat(const char *cmd, const char **v, size_t *n, size_t max,
                   const char *value, const char *name)
{
	if (*n >= max)
		return mgw_cli_usage_error(cmd, "at most %d %s options", (int)max,
		                           name);
	v[(*n)++] = value;
	return 0;
}

int mgw_cli_set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return MGW_ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int mgw_cli_log_level(const char *cmd, const char *value,
                      enum mgw_log_level fallback)
{
	enum mgw_log_level level = fallback;

	if (value && mgw_log_parse_level(value, &level) != 0)
		return mgw_cli_usage_error(cmd, "invalid --log-level '%s' (error, "
		                           "warn, info or debug)", value);
	mgw_log_set_level(level);
	return 0;
}

int mgw_cli_listen_add(const char *cmd, struct mgw_cli_listen *l,
                       const char *address)
{
	return mgw_cli_repeat(cmd, l->address, &l->n, MGW_CLI_MAX_LISTEN,
	                      address, "--listen");
}

/* What mgw_cli_parse_server hands to its option callback. */
struct server_parse {
	const char *cmd;
	struct mgw_cli_server *srv;
	mgw_cli_opt_cb on_opt;
	void *arg;
};

static int on_server_opt(int c, char *v, void *arg)
{
	struct server_parse *p = arg;
	struct mgw_cli_server *s = p->srv;

	switch (c) {
	case 'c': s->config = v; return 0;
	case 'h': s->help = 1; return 0;
	case MGW_CLI_OPT_VERSION: s->version = 1; return 0;
	case MGW_CLI_OPT_LISTEN: return mgw_cli_listen_add(p->cmd, &s->listen, v);
	case MGW_CLI_OPT_TLS_CERT: s->listen.tls_cert = v; return 0;
	case MGW_CLI_OPT_TLS_KEY: s->listen.tls_key = v; return 0;
	case MGW_CLI_OPT_LOG_LEVEL: s->log_level = v; return 0;
	default: return p->on_opt(c, v, p->arg);
	}
}

int mgw_cli_parse_server(const char *cmd, int argc, char **argv,
                         const struct option *longopts,
                         struct mgw_cli_server *srv, mgw_cli_opt_cb on_opt,
                         void *arg)
{
	struct server_parse p = {cmd, srv, on_opt, arg};

	return mgw_cli_parse(cmd, argc, argv, ":c:h", longopts, on_server_opt,
	                     &p);
}

/* The --listen flags, each checked to be HOST:PORT, with the TLS files. */
static int flag_specs(const struct mgw_cli_listen *l,
                      struct mgw_listen_spec *out, size_t *n_out, char *why,
                      size_t whylen)
{
	for (size_t i = 0; i < l->n; i++) {
		char host[256];
		uint16_t port;

		if (mgw_parse_hostport(l->address[i], host, sizeof(host), &port) != 0) {
			snprintf(why, whylen, "invalid --listen '%s' (HOST:PORT)",
			         l->address[i]);
			return MGW_EINVAL;
		}
		out[(*n_out)++] = (struct mgw_listen_spec){l->address[i],
		                                           l->tls_cert, l->tls_key};
	}
	return 0;
}

/* The file's listeners (the configuration checked their addresses). */
static int file_specs(const struct mgw_cli_listen *l,
                      const struct mgw_listener_conf *file, size_t n_file,
                      const char *too_many, struct mgw_listen_spec *out,
                      size_t *n_out, char *why, size_t whylen)
{
	if (l->tls_cert) {
		snprintf(why, whylen, "--tls-cert applies to --listen listeners; "
		         "none given");
		return MGW_EINVAL;
	}
	if (n_file > MGW_CLI_MAX_LISTEN) {
		snprintf(why, whylen, "%zu listeners%s at most %d", n_file, too_many,
		         MGW_CLI_MAX_LISTEN);
		return MGW_EINVAL;
	}
	for (size_t i = 0; i < n_file; i++)
		out[(*n_out)++] = (struct mgw_listen_spec){file[i].address,
		                                           file[i].tls_cert,
		                                           file[i].tls_key};
	return 0;
}

int mgw_listen_specs(const struct mgw_cli_listen *l,
                     const struct mgw_listener_conf *file, size_t n_file,
                     const char *too_many, struct mgw_listen_spec *out,
                     size_t *n_out, char *why, size_t whylen)
{
	int rc;

	*n_out = 0;
	if (!l->tls_cert != !l->tls_key) {
		snprintf(why, whylen, "--tls-cert and --tls-key go together");
		return MGW_EINVAL;
	}
	rc = l->n ? flag_specs(l, out, n_out, why, whylen)
	          : file_specs(l, file, n_file, too_many, out, n_out, why, whylen);
	if (rc)
		return rc;
	if (*n_out == 0) {
		snprintf(why, whylen, "no listener: give --listen HOST:PORT or a "
		         "listeners: section");
		return MGW_EINVAL;
	}
	return 0;
}

int mgw_cli_listen_specs(const char *cmd, const struct mgw_cli_listen *l,
                         const struct mgw_listener_conf *file, size_t n_file,
                         const char *too_many, struct mgw_listen_spec *out,
                         size_t *n_out)
{
	char why[256];

	if (mgw_listen_specs(l, file, n_file, too_many, out, n_out, why,
	                     sizeof(why)) != 0)
		return mgw_cli_usage_error(cmd, "%s", why);
	return 0;
}

int mgw_cli_exit_code(int err)
{
	if (err == 0)
		return MGW_EXIT_OK;
	return err == MGW_EINVAL ? MGW_EXIT_USAGE : MGW_EXIT_RUNTIME;
}
