/* config_cmd.c - "mcpgw check-config": load a configuration file, report
 * the first error as FILE:LINE:COLUMN: KEY: message, or a short summary. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "core/commands.h"
#include "conf/config.h"
#include "core/errors.h"
#include "load/scenario.h"

static void usage(FILE *out)
{
	fputs("usage: mcpgw check-config -c FILE [-q]\n"
	      "       mcpgw check-config --scenario FILE [-q]\n"
	      "\n"
	      "Validate a configuration file (YAML or JSON) and exit.\n"
	      "\n"
	      "Options:\n"
	      "  -c, --config FILE   the file to check (serve / backend configuration)\n"
	      "  -s, --scenario FILE check a `mcpgw load` scenario file instead\n"
	      "  -q, --quiet         print nothing on success\n"
	      "  -h, --help          show this text\n"
	      "\n"
	      "Exit status: 0 valid, 2 invalid file or usage error.\n"
	      "Errors are printed as FILE:LINE:COLUMN: KEY.PATH: message.\n",
	      out);
}

struct options {
	const char *file;
	int scenario; /* file is a load scenario, not a configuration */
	int quiet;
	int help;
};

/* One file per run: a second -c/-s would silently replace the first
 * (and "-s A -c B" checked B as a scenario). */
static int set_file(struct options *o, const char *file, int scenario)
{
	if (o->file) {
		fprintf(stderr, "mcpgw check-config: one FILE per run (-c FILE "
		        "or --scenario FILE)\n");
		return -1;
	}
	o->file = file;
	o->scenario = scenario;
	return 0;
}

/* Returns 0, or -1 after printing what was wrong with the arguments. */
static int parse_args(int argc, char **argv, struct options *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			o->quiet = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			o->help = 1;
		} else if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "mcpgw check-config: %s needs a FILE\n", a);
				return -1;
			}
			if (set_file(o, argv[++i], 0) != 0)
				return -1;
		} else if (strcmp(a, "-s") == 0 || strcmp(a, "--scenario") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "mcpgw check-config: %s needs a FILE\n", a);
				return -1;
			}
			if (set_file(o, argv[++i], 1) != 0)
				return -1;
		} else if (strncmp(a, "--config=", 9) == 0) {
			if (set_file(o, a + 9, 0) != 0)
				return -1;
		} else if (strncmp(a, "-c", 2) == 0) {
			if (set_file(o, a + 2, 0) != 0)
				return -1;
		} else {
			fprintf(stderr, "mcpgw check-config: unexpected argument '%s'\n",
			        a);
			return -1;
		}
	}
	return 0;
}

static void summary(const struct mgw_config *c)
{
	printf("%s: ok\n", c->source);
	printf("listeners: %zu", c->n_listeners);
	if (c->has_backend)
		printf(", backend: era %s, state %s, sse %s\n",
		       mgw_config_era_name(c->backend.era),
		       mgw_config_state_name(c->backend.state),
		       mgw_config_sse_name(c->backend.sse));
	else
		printf(", no backend section\n");
	if (c->has_serve) {
		size_t servers = 0;

		for (size_t i = 0; i < c->serve.n_upstreams; i++)
			servers += c->serve.upstreams[i].n_servers;
		printf("serve: mode %s, %zu upstream group%s, %zu server%s, "
		       "%zu route%s\n", mgw_config_mode_name(c->serve.mode),
		       c->serve.n_upstreams, c->serve.n_upstreams == 1 ? "" : "s",
		       servers, servers == 1 ? "" : "s", c->serve.n_routes,
		       c->serve.n_routes == 1 ? "" : "s");
	}
}

/* Validates a load scenario the way `mcpgw load --scenario` reads it (the
 * command line may still add targets, so only the file itself is checked). */
static int check_scenario(const struct options *o)
{
	struct mgw_load_conf *lc = mgw_load_conf_new();
	char err[1024];
	int rc;

	if (!lc) {
		fprintf(stderr, "mcpgw check-config: out of memory\n");
		return MGW_EXIT_RUNTIME;
	}
	rc = mgw_load_scenario_load(lc, o->file, err, sizeof(err));
	mgw_load_conf_free(lc);
	if (rc != 0) {
		fprintf(stderr, "%s\n", err);
		return MGW_EXIT_USAGE;
	}
	if (!o->quiet)
		printf("%s: ok (load scenario)\n", o->file);
	return MGW_EXIT_OK;
}

int mgw_check_config_main(int argc, char **argv)
{
	struct options o = {0};
	struct mgw_config *c;
	char err[1024];

	if (parse_args(argc, argv, &o) != 0) {
		usage(stderr);
		return MGW_EXIT_USAGE;
	}
	if (o.help) {
		usage(stdout);
		return MGW_EXIT_OK;
	}
	if (!o.file || !*o.file) {
		fprintf(stderr, "mcpgw check-config: no file given (-c FILE)\n");
		usage(stderr);
		return MGW_EXIT_USAGE;
	}
	if (o.scenario)
		return check_scenario(&o);
	c = mgw_config_load(o.file, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "%s\n", err);
		return MGW_EXIT_USAGE;
	}
	if (!o.quiet)
		summary(c);
	mgw_config_free(c);
	return MGW_EXIT_OK;
}
