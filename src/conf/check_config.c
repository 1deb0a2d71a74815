/* check_config.c - "mcpgw check-config" wired to what it checks: the
 * whole mcpgw configuration (config.c), then what the command the file is
 * meant for refuses at start before binding (the same functions serve and
 * backend call), and load scenarios (the load client's own check); the
 * command line itself is core/config_cmd.c. */
#include "autoconf.h"

#include <stdio.h>

#include "conf/config.h"
#include "core/cli.h"
#include "core/commands.h"
#include "core/config_cmd.h"
#include "core/errors.h"
#include "load/scenario.h"
#include "net/serve_listeners.h"
#include "proxy/hints.h"
#include "proxy/serve_check.h"

/* What serve (a file with any of its keys) or else backend refuses
 * without flags, in serve's order: for serve no upstream or groups that
 * do not build; no listener; a TLS listener whose files do not load.  Returns 0 or an
 * MGW_E* with the reason in why. */
static int check_start(const struct mgw_config *c, int serve, char *why,
                       size_t whylen)
{
	struct mgw_cli_listen none = {0};
	struct mgw_listen_spec ls[MGW_CLI_MAX_LISTEN];
	size_t n = 0;
	int rc = serve ? mgw_serve_check(c, why, whylen) : 0;

	if (rc == 0)
		rc = mgw_listen_specs(&none, c->listeners, c->n_listeners,
		                      serve ? ":" : " in the file;", ls, &n, why,
		                      whylen);
	if (rc == 0)
		rc = mgw_serve_listeners_check(ls, n, why, whylen);
	return rc;
}

static void warn_line(void *arg, const char *msg)
{
	const struct mgw_config *c = arg;

	fprintf(stderr, "%s: warning: %s\n", c->source, msg);
}

/* The start-time hints serve (and backend) would log (hints.h), as
 * warnings. */
static void warn_hints(const struct mgw_config *c)
{
	char msg[512];

	for (size_t gi = 0; gi < c->serve.n_upstreams; gi++)
		if (mgw_hint_doubled_path(&c->serve, gi, msg, sizeof(msg)))
			warn_line((void *)c, msg);
	mgw_hint_redis_no_verify(&c->serve, warn_line, (void *)c);
	if (c->has_backend &&
	    mgw_hint_redis_tls("backend.redis_tls (verify: false)", c->backend.redis_url,
	                       &c->backend.redis_tls, msg, sizeof(msg)))
		warn_line((void *)c, msg);
}

static int check_config(const char *path, int quiet, char *err, size_t errlen)
{
	struct mgw_config *c = mgw_config_load(path, err, errlen);
	char why[1024];
	int serve, rc;

	if (!c)
		return MGW_EINVAL;
	serve = c->serve.keys_given;
	rc = check_start(c, serve, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, why);
		mgw_config_free(c);
		return rc;
	}
	warn_hints(c);
	if (!quiet)
		mgw_config_summary(c, stdout);
	mgw_config_free(c);
	return 0;
}

static const struct mgw_check_config_ops ops = {
	.config = check_config,
	.scenario = mgw_load_scenario_check,
};

int mgw_check_config_main(int argc, char **argv)
{
	return mgw_check_config_run(argc, argv, &ops);
}
