/* main.c - the mcpgw command: register the modules (modules/), then
 * dispatch to subcommands. */
#include "autoconf.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>


#include "core/cli.h"
#include "core/commands.h"
#include "core/errors.h"
#include "modules/redis_store/redis_store.h"
#include "util/jalloc.h"

static void usage(FILE *out)
{
	fputs("usage: mcpgw COMMAND [OPTIONS]\n"
	      "\n"
	      "A gateway for the Model Context Protocol.\n"
	      "\n"
	      "Commands:\n"
	      "  serve          run the gateway in front of MCP server replicas, in one of\n"
	      "                 three modes (--mode):\n"
	      "                   auto       (default) per request: legacy (2025-11-25)\n"
	      "                              sessions terminated by the gateway, pinned\n"
	      "                              and re-pinned; modern (2026-07-28) requests\n"
	      "                              balanced on their own\n"
	      "                   stateless  every request balanced on its own (modern\n"
	      "                              servers); GET and DELETE answer 405\n"
	      "                   stateful   legacy sessions terminated, for a legacy-only\n"
	      "                              fleet\n"
	      "  backend        run the reference MCP server (--era legacy, modern or dual)\n"
	      "  load           drive MCP servers with load and check latency gates\n"
	      "  check-config   validate a configuration file as serve or backend would at\n"
	      "                 start (or a load scenario) and exit\n"
	      "  version        print version and library versions (also --version, and\n"
	      "                 COMMAND --version)\n"
	      "  help           show this text\n"
	      "\n"
	      "Run 'mcpgw COMMAND --help' for a command's options.\n"
	      "Exit status: 0 success, 1 runtime failure, 2 usage or configuration error.\n",
	      out);
}

int main(int argc, char **argv)
{
	const char *cmd;

	signal(SIGPIPE, SIG_IGN);
	/* before any jansson value: the allocator cache (util/jalloc.h) */
	if (mgw_jalloc_init() != 0)
		fprintf(stderr, "mcpgw: jansson allocation cache unavailable\n");
	/* before any command makes a session store; it only fills a table */
	if (mgw_redis_store_register() != 0) {
		fprintf(stderr, "mcpgw: cannot register the redis session store\n");
		return MGW_EXIT_RUNTIME;
	}
	if (argc < 2) {
		usage(stderr);
		return MGW_EXIT_USAGE;
	}
	cmd = argv[1];
	if (strcmp(cmd, "serve") == 0)
		return mgw_serve_main(argc - 1, argv + 1);
	if (strcmp(cmd, "backend") == 0)
		return mgw_backend_main(argc - 1, argv + 1);
	if (strcmp(cmd, "load") == 0)
		return mgw_load_main(argc - 1, argv + 1);
	if (strcmp(cmd, "check-config") == 0)
		return mgw_check_config_main(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
		return mgw_cli_version(stdout);
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return MGW_EXIT_OK;
	}
	fprintf(stderr, "mcpgw: unknown command '%s'\n", cmd);
	usage(stderr);
	return MGW_EXIT_USAGE;
}
