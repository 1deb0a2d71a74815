/* config_cmd.c - "mcpgw check-config": its options, usage and exit codes.
 * The checks (a configuration file, a load scenario) are the caller's
 * (conf/check_config.c); each reports the first error as
 * FILE:LINE:COLUMN: KEY: message, or prints a short summary. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "core/cli.h"
#include "core/config_cmd.h"
#include "core/errors.h"

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
	      "      --version       print the version and exit\n"
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
	int version;
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
		} else if (strcmp(a, "--version") == 0) {
			o->version = 1;
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

/* The message of a failed check, and its exit status. */
static int failed(int rc, const char *err)
{
	fprintf(stderr, "%s\n", err);
	return rc == MGW_ENOMEM ? MGW_EXIT_RUNTIME : MGW_EXIT_USAGE;
}

int mgw_check_config_run(int argc, char **argv,
                         const struct mgw_check_config_ops *ops)
{
	struct options o = {0};
	mgw_check_file_fn check;
	char err[1024];
	int rc;

	if (parse_args(argc, argv, &o) != 0) {
		usage(stderr);
		return MGW_EXIT_USAGE;
	}
	if (o.help) {
		usage(stdout);
		return MGW_EXIT_OK;
	}
	if (o.version)
		return mgw_cli_version(stdout);
	if (!o.file || !*o.file) {
		fprintf(stderr, "mcpgw check-config: no file given (-c FILE)\n");
		usage(stderr);
		return MGW_EXIT_USAGE;
	}
	check = o.scenario ? ops->scenario : ops->config;
	rc = check(o.file, o.quiet, err, sizeof(err));
	return rc == 0 ? MGW_EXIT_OK : failed(rc, err);
}
