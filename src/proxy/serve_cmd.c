/* serve_cmd.c - `mcpgw serve`: command line and configuration, the shared
 * run-time state (upstream groups, routes, health checker), the worker
 * threads with their SO_REUSEPORT listeners, the "listening on" lines,
 * signals and graceful shutdown. */
#include "autoconf.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "core/commands.h"
#include "conf/config.h"
#include "conf/cli_config.h"
#include "core/cli.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/signals.h"
#include "http/headers.h"
#include "net/serve_listeners.h"
#include "proxy/liveness.h"
#include "proxy/metrics.h"
#include "proxy/pipeline.h"
#include "proxy/health.h"
#include "proxy/route.h"
#include "proxy/stateful.h"
#include "proxy/upstream.h"
#include "proxy/worker.h"
#include "util/time.h"
#include "util/parse.h"
#include "util/url.h"

#define MAX_UPSTREAM_FLAGS 256
/* Default worker count: one per core, but not more than this. */
#define MAX_DEFAULT_WORKERS 64

static void usage(FILE *out)
{
	fputs(
"usage: mcpgw serve -c FILE [OPTIONS]\n"
"       mcpgw serve --listen HOST:PORT --upstream URL [--upstream URL ...] [OPTIONS]\n"
"\n"
"Runs the MCP gateway: an HTTP/1.1 and HTTP/2 reverse proxy in front of MCP\n"
"server replicas.  In stateless mode every POST is balanced over the healthy\n"
"replicas of its route's upstream group and forwarded byte for byte with its\n"
"headers intact; SEP-2243 headers of modern (2026-07-28) requests are checked\n"
"against the body first.  In stateful mode the gateway terminates legacy\n"
"(2025-11-25) sessions: it mints the session ids clients see, pins each\n"
"session to a replica, and re-pins it (replaying the client's initialize)\n"
"when that replica dies, is ejected or forgets the session.\n"
"\n"
"  -c, --config FILE\n"
"        YAML (or JSON) configuration: listeners:, limits:, timeouts:, log:,\n"
"        mode:, workers:, upstreams:, routes:, retry_budget:, forwarded:,\n"
"        mcp:, admin:, sessions:.  Flags override file values.\n"
"  --listen HOST:PORT\n"
"        Listen on HOST:PORT (IPv6 as [::1]:PORT); repeatable; replaces the\n"
"        file's listeners.  Port 0 picks a free port (shared by all workers).\n"
"        For each listener 'listening on HOST:PORT' is printed on stdout\n"
"        before anything else.\n"
"  --upstream URL\n"
"        A replica, http://HOST[:PORT][/prefix] or https://...; repeatable.\n"
"        Builds one group 'default' and one route taking every path to it,\n"
"        replacing the file's upstreams: and routes:.\n"
"  --mode stateless|stateful|auto\n"
"        stateless balances each request on its own.  stateful terminates\n"
"        legacy sessions (initialize, Mcp-Session-Id, GET streams, DELETE);\n"
"        auto does that for legacy traffic and serves modern traffic\n"
"        statelessly, on the same listeners.  The session store and re-pin\n"
"        rules are in the file's sessions: section (memory store by\n"
"        default).  Default: stateless.\n"
"  --balancer round_robin|least_request|random|hash\n"
"        Balancer of every upstream group.  hash needs --hash-header (or\n"
"        hash_header in the file).\n"
"  --hash-header NAME\n"
"        Request header whose value the hash balancer hashes.\n"
"  --upstream-h2c\n"
"        Speak HTTP/2 with prior knowledge (h2c) to every group (http://\n"
"        servers only).  Default: HTTP/1.1 keep-alive pools.\n"
"  --workers N\n"
"        Event-loop threads (1..1024); 0 means one per core.  Default: the\n"
"        file's workers:, else one per core (at most 64).\n"
"  --tls-cert FILE, --tls-key FILE\n"
"        PEM certificate chain and key: the --listen listeners speak TLS and\n"
"        negotiate h2 or http/1.1 by ALPN.  Plain listeners serve HTTP/1.1\n"
"        and HTTP/2 with prior knowledge (h2c).\n"
"  --no-validate-headers\n"
"        Turn SEP-2243 header validation off on every route (forward modern\n"
"        requests without checking their mirrored headers).\n"
"  --shutdown-timeout DURATION\n"
"        On SIGTERM or SIGINT: stop accepting, let requests in flight finish\n"
"        for at most this long, then exit 0.  Default: 10s.\n"
"  --log-level error|warn|info|debug\n"
"        Logs go to stderr.  Default: info.\n"
"  --access-log\n"
"        One line per proxied request at info (method, path, Mcp-Method,\n"
"        upstream, status, duration).  Off by default (log.access).\n"
"  -h, --help\n"
"        Show this text and exit.\n"
"\n"
"In stateless mode GET and DELETE on the MCP endpoint answer 405.  Errors\n"
"the gateway makes itself carry a JSON-RPC error with the request id and a\n"
"code in -32001..-32014 (see doc/errors.md).  GET /mcpgw/stats on any\n"
"listener answers the gateway's counters as JSON: upstream server states,\n"
"sessions, re-pins by reason, replays; by default to loopback clients only\n"
"(admin.stats: loopback | any | off).  GET /metrics answers Prometheus\n"
"metrics (text format 0.0.4) to the clients admin.metrics allows (loopback by\n"
"default), at admin.metrics_path, on the listener admin.metrics_listener\n"
"names or every one.\n"
"\n"
"Exit status: 0 after a graceful stop, 1 on a runtime failure (such as a\n"
"listener that cannot bind), 2 on a usage or configuration error.\n",
	      out);
}

enum {
	OPT_UPSTREAM = 256, OPT_MODE, OPT_BALANCER, OPT_HASH_HEADER,
	OPT_H2C, OPT_WORKERS, OPT_NO_VALIDATE, OPT_SHUTDOWN, OPT_ACCESS_LOG,
};

static const struct option long_opts[] = {
	MGW_CLI_SERVER_OPTIONS,
	{"upstream", required_argument, NULL, OPT_UPSTREAM},
	{"mode", required_argument, NULL, OPT_MODE},
	{"balancer", required_argument, NULL, OPT_BALANCER},
	{"hash-header", required_argument, NULL, OPT_HASH_HEADER},
	{"upstream-h2c", no_argument, NULL, OPT_H2C},
	{"workers", required_argument, NULL, OPT_WORKERS},
	{"no-validate-headers", no_argument, NULL, OPT_NO_VALIDATE},
	{"shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN},
	{"access-log", no_argument, NULL, OPT_ACCESS_LOG},
	{NULL, 0, NULL, 0},
};

/* Flag values, applied on top of the configuration after parsing so that
 * flags win whatever their position relative to -c. */
struct flags {
	struct mgw_cli_server srv;  /* -c, -h, --listen, TLS, --log-level */
	const char *upstream[MAX_UPSTREAM_FLAGS];
	size_t n_upstream;
	const char *mode, *balancer, *hash_header, *workers, *shutdown;
	int h2c, no_validate, access_log;
};

/* A usage error: the message, where to find help, exit status 2. */
#define usage_error(...) mgw_cli_usage_error("serve", __VA_ARGS__)

/* An option of this command's own (mgw_cli_parse_server takes the rest). */
static int on_opt(int c, char *v, void *arg)
{
	struct flags *f = arg;

	switch (c) {
	case OPT_UPSTREAM:
		return mgw_cli_repeat("serve", f->upstream, &f->n_upstream,
		                      MAX_UPSTREAM_FLAGS, v, "--upstream");
	case OPT_MODE: f->mode = v; break;
	case OPT_BALANCER: f->balancer = v; break;
	case OPT_HASH_HEADER: f->hash_header = v; break;
	case OPT_H2C: f->h2c = 1; break;
	case OPT_WORKERS: f->workers = v; break;
	case OPT_NO_VALIDATE: f->no_validate = 1; break;
	case OPT_SHUTDOWN: f->shutdown = v; break;
	case OPT_ACCESS_LOG: f->access_log = 1; break;
	default: return MGW_EINVAL;
	}
	return 0;
}

static const struct mgw_cli_server_cmd serve_cmd = {
	.name = "serve", .longopts = long_opts, .on_opt = on_opt, .usage = usage,
};

/* Applies the flags to cfg, which is not shared with anyone yet.  Returns
 * 0 or an exit code (the message is printed). */
static int apply_flags(struct mgw_config *cfg, const struct flags *f)
{
	struct mgw_serve_conf *s = &cfg->serve;
	char err[512];
	long long v;

	if (f->n_upstream) {
		int rc = mgw_config_serve_urls(cfg, f->upstream, f->n_upstream, err,
		                               sizeof(err));
		if (rc == MGW_ENOMEM)
			return MGW_EXIT_RUNTIME;
		if (rc != 0)
			return usage_error("invalid --upstream: %s", err);
	}
	if (f->mode && mgw_config_parse_mode(f->mode, &s->mode) != 0)
		return usage_error("invalid --mode '%s' (stateless, stateful or auto)",
		                   f->mode);
	if (f->workers) {
		if (mgw_parse_int(f->workers, 0, 1024, &v) != 0)
			return usage_error("invalid --workers '%s' (0 to 1024)", f->workers);
		s->workers = (uint32_t)v;
	}
	if (f->shutdown) {
		double d;
		if (mgw_parse_duration(f->shutdown, &d) != 0 || d < 0 || d > 3600)
			return usage_error("invalid --shutdown-timeout '%s' (a duration "
			                   "such as 500ms, 10s, 5m; at most 1h)",
			                   f->shutdown);
		cfg->shutdown_timeout = d;
	}
	if (f->hash_header &&
	    !mgw_header_name_valid(f->hash_header, strlen(f->hash_header)))
		return usage_error("invalid --hash-header '%s' (a header name)",
		                   f->hash_header);
	for (size_t gi = 0; gi < s->n_upstreams; gi++) {
		struct mgw_upstream_conf *g = &s->upstreams[gi];

		if (f->balancer &&
		    mgw_config_parse_balancer(f->balancer, &g->balancer) != 0)
			return usage_error("invalid --balancer '%s' (round_robin, "
			                   "least_request, random or hash)", f->balancer);
		if (f->hash_header) {
			char *hh = strdup(f->hash_header);
			if (!hh)
				return MGW_EXIT_RUNTIME;
			free(g->hash_header);
			g->hash_header = hh;
		}
		if (g->balancer == MGW_BAL_HASH && !g->hash_header)
			return usage_error("upstream '%s': the hash balancer needs "
			                   "--hash-header NAME", g->name);
		if (f->h2c) {
			for (size_t i = 0; i < g->n_servers; i++) {
				struct mgw_url u;
				if (mgw_url_parse(g->servers[i].url, &u, NULL, 0) == 0 &&
				    u.tls)
					return usage_error("--upstream-h2c is cleartext "
					                   "HTTP/2 but '%s' is https",
					                   g->servers[i].url);
			}
			g->protocol = MGW_UP_H2C;
		}
	}
	if (f->no_validate)
		for (size_t i = 0; i < s->n_routes; i++)
			s->routes[i].validate_headers = 0;
	return 0;
}

/* In stateful and auto modes the replicas speak the legacy protocol (or
 * both): the default active probe, a modern server/discover request, is
 * refused by a legacy-only server (it needs a session), which would take
 * every replica out of service.  A group whose probe was left at that
 * default is probed with a TCP connect instead; an HTTP probe the
 * replicas answer (GET /healthz, say) can be configured under health:. */
static void legacy_probes(struct mgw_config *cfg)
{
	struct mgw_serve_conf *s = &cfg->serve;

	if (s->mode == MGW_MODE_STATELESS)
		return;
	for (size_t gi = 0; gi < s->n_upstreams; gi++) {
		struct mgw_health_conf *h = &s->upstreams[gi].health;

		if (!h->enabled || h->type != MGW_PROBE_HTTP || h->path ||
		    h->n_headers || h->expect_status != 200 || !h->method ||
		    strcmp(h->method, "POST") != 0 || !h->body ||
		    strcmp(h->body, mgw_config_default_probe_body) != 0)
			continue;
		h->type = MGW_PROBE_TCP;
		mgw_info(NULL, "upstream '%s': health probe is a TCP connect in "
		         "%s mode (the default HTTP probe is a modern request that "
		         "legacy servers refuse); configure health: for an HTTP "
		         "probe", s->upstreams[gi].name,
		         mgw_config_mode_name(s->mode));
	}
}

/* ---- running ---------------------------------------------------------- */

struct serve {
	struct event_base *base;        /* main thread: signals, health */
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_routes *routes;
	struct mgw_health *health;
	struct mgw_sf_shared *sf;       /* stateful and auto modes */
	struct mgw_worker **workers;
	unsigned n_workers;
	struct mgw_liveness *live;      /* the workers' loop stamps */
	struct mgw_metrics *metrics;    /* the workers' counters (GET /metrics) */
	struct event *exited_ev;
	int stopping;
	int failed;                     /* a worker ended on its own */
};

static void stop_all(struct serve *sv)
{
	for (unsigned i = 0; i < sv->n_workers; i++)
		if (sv->workers[i])
			mgw_worker_stop(sv->workers[i]);
}

static void on_stop(int signo, void *arg)
{
	struct serve *sv = arg;

	mgw_info(NULL, "mcpgw serve: signal %d, stopping (up to %.1fs for "
	         "requests in flight)", signo, sv->cfg->shutdown_timeout);
	sv->stopping = 1;
	stop_all(sv);
}

/* A worker's loop ended: when all have, the main loop ends too. */
static void on_worker_exited(evutil_socket_t fd, short what, void *arg)
{
	struct serve *sv = arg;
	unsigned done = 0;

	for (unsigned i = 0; i < sv->n_workers; i++)
		done += mgw_worker_exited(sv->workers[i]) ? 1 : 0;
	if (!sv->stopping) {
		/* nobody asked: treat as a failure and bring the rest down */
		mgw_err(NULL, "mcpgw serve: a worker stopped unexpectedly");
		sv->failed = 1;
		sv->stopping = 1;
		stop_all(sv);
	}
	if (done == sv->n_workers)
		event_base_loopexit(sv->base, NULL);
}

/* One listener socket of one worker. */
static int on_bind(void *arg, unsigned w, const char *address, SSL_CTX *tls,
                   int reuse, char *bound, size_t boundlen)
{
	struct serve *sv = arg;

	return mgw_worker_listen(sv->workers[w], address, tls, reuse, bound,
	                         boundlen);
}

/* Binds every listener in every worker: worker 0 binds the configured
 * address (port 0 picks a port), the others bind what worker 0 got, all
 * with SO_REUSEPORT when there are several workers.  Prints the
 * "listening on" lines.  Returns 0 or an exit code. */
static int start_listeners(struct serve *sv, const struct mgw_listen_spec *ls,
                           size_t n)
{
	struct mgw_serve_listeners sl = {
		.cmd = "serve", .n_workers = sv->n_workers, .log_workers = 1,
		.bind = on_bind, .arg = sv,
	};

	return mgw_cli_exit_code(mgw_serve_listeners_open(&sl, ls, n));
}

static const char *store_name(enum mgw_session_store_conf s)
{
	switch (s) {
	case MGW_SESSION_STORE_MEMORY: return "memory";
	case MGW_SESSION_STORE_SEALED: return "sealed";
	case MGW_SESSION_STORE_REDIS: return "redis";
	default: return "?";
	}
}

static unsigned default_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > MAX_DEFAULT_WORKERS ? MAX_DEFAULT_WORKERS : (unsigned)n;
}

/* The flags over the file, the log settings, the listeners to bind.
 * Returns 0 or an exit code. */
static int configure(struct mgw_config *cfg, const struct flags *f,
                     struct mgw_listen_spec *ls, size_t *n_ls)
{
	int rc = apply_flags(cfg, f);

	if (rc)
		return rc;
	rc = mgw_cli_log_level("serve", f->srv.log_level, cfg->log_level);
	if (rc)
		return rc;
	legacy_probes(cfg);
	mgw_log_set_access(cfg->log_access || f->access_log);
	if (!cfg->has_serve || cfg->serve.n_upstreams == 0)
		return usage_error("no upstream: give --upstream URL or an "
		                   "upstreams: section");
	return mgw_cli_listen_specs("serve", &f->srv.listen, cfg->listeners,
	                            cfg->n_listeners, ":", ls, n_ls);
}

/* What the workers share: upstream groups, routes, the main loop and,
 * in stateful and auto modes, the session stores.  Returns 0 or an exit
 * code. */
static int setup_shared(struct serve *sv)
{
	char err[1024];

	/* before any event_base: workers are woken from the main thread */
	if (evthread_use_pthreads() != 0) {
		fprintf(stderr, "mcpgw serve: libevent without thread support\n");
		return MGW_EXIT_RUNTIME;
	}
	sv->ups = mgw_upstreams_new(&sv->cfg->serve, err, sizeof(err));
	if (!sv->ups) {
		fprintf(stderr, "mcpgw serve: %s\n", err);
		return MGW_EXIT_USAGE;
	}
	sv->routes = mgw_routes_new(&sv->cfg->serve, sv->ups, err, sizeof(err));
	if (!sv->routes) {
		fprintf(stderr, "mcpgw serve: %s\n", err);
		return MGW_EXIT_USAGE;
	}
	sv->base = event_base_new();
	if (!sv->base)
		return MGW_EXIT_RUNTIME;
	sv->exited_ev = event_new(sv->base, -1, 0, on_worker_exited, sv);
	if (!sv->exited_ev)
		return MGW_EXIT_RUNTIME;
	if (sv->cfg->serve.mode != MGW_MODE_STATELESS) {
		/* the session stores (expiry sweeps on the main loop) */
		sv->sf = mgw_sf_shared_new(&sv->cfg->serve, sv->routes, sv->base,
		                           err, sizeof(err));
		if (!sv->sf) {
			fprintf(stderr, "mcpgw serve: sessions: %s\n", err);
			return MGW_EXIT_USAGE;
		}
	}
	return 0;
}

/* The counters behind GET /metrics, and the listener that answers them
 * (admin.metrics_listener: one of the listeners to bind, by address).
 * Returns 0 or an exit code. */
static int setup_metrics(struct serve *sv, const struct mgw_listen_spec *ls,
                         size_t n_ls)
{
	const struct mgw_serve_conf *s = &sv->cfg->serve;

	sv->metrics = mgw_metrics_new(sv->n_workers, sv->routes->n,
	                              sv->ups->n_groups,
	                              s->metrics_tool_names
	                              ? s->metrics_tool_names_max : 0);
	if (!sv->metrics)
		return MGW_EXIT_RUNTIME;
	if (!s->metrics_listener || s->metrics == MGW_STATS_OFF)
		return 0;
	for (size_t i = 0; i < n_ls; i++) {
		if (strcmp(ls[i].address, s->metrics_listener) == 0) {
			sv->metrics->listener = (int)i;
			return 0;
		}
	}
	return usage_error("admin.metrics_listener '%s' is not one of the "
	                   "listeners (%zu given)", s->metrics_listener, n_ls);
}

int mgw_serve_main(int argc, char **argv)
{
	struct flags f = {0};
	struct serve sv = {0};
	struct mgw_signals *sig = NULL;
	struct mgw_listen_spec ls[MGW_CLI_MAX_LISTEN];
	size_t n_ls = 0;
	char err[1024];
	int rc;

	rc = mgw_cli_server_begin(&serve_cmd, argc, argv, &f.srv, &f, &sv.cfg);
	if (!sv.cfg)
		return rc;
	rc = configure(sv.cfg, &f, ls, &n_ls);
	if (rc)
		goto out;
	rc = setup_shared(&sv);
	if (rc)
		goto out;
	rc = MGW_EXIT_RUNTIME;
	sv.n_workers = sv.cfg->serve.workers ? sv.cfg->serve.workers
	                                     : default_workers();
	sv.workers = calloc(sv.n_workers, sizeof(*sv.workers));
	sv.live = mgw_liveness_new(sv.n_workers, mgw_now_ms());
	if (!sv.workers || !sv.live)
		goto out;
	rc = setup_metrics(&sv, ls, n_ls);
	if (rc)
		goto out;
	rc = MGW_EXIT_RUNTIME;
	for (unsigned i = 0; i < sv.n_workers; i++) {
		sv.workers[i] = mgw_worker_new(i, sv.cfg, sv.routes, sv.ups,
		                               sv.n_workers, sv.exited_ev, err,
		                               sizeof(err));
		if (!sv.workers[i]) {
			fprintf(stderr, "mcpgw serve: %s\n", err);
			goto out;
		}
		if (mgw_worker_set_liveness(sv.workers[i], sv.live) != 0)
			goto out;
		mgw_worker_set_metrics(sv.workers[i], sv.metrics);
		if (sv.sf && mgw_pipeline_enable_stateful(sv.workers[i]->pl, sv.sf,
		                                          err, sizeof(err)) != 0) {
			fprintf(stderr, "mcpgw serve: sessions: %s\n", err);
			goto out;
		}
	}
	/* Before the listeners: "listening on" tells a supervisor it may
	 * signal us, and a SIGTERM must then be a graceful stop, not the
	 * default action.  libevent holds it until the loop runs. */
	sig = mgw_signals_server_new(sv.base, on_stop, &sv);
	if (!sig)
		goto out;
	rc = start_listeners(&sv, ls, n_ls);
	if (rc)
		goto out;
	rc = MGW_EXIT_RUNTIME;
	sv.health = mgw_health_new(sv.base, sv.ups, err, sizeof(err));
	if (!sv.health) {
		fprintf(stderr, "mcpgw serve: health checks: %s\n", err);
		goto out;
	}
	for (unsigned i = 0; i < sv.n_workers; i++) {
		if (mgw_worker_start(sv.workers[i]) != 0) {
			fprintf(stderr, "mcpgw serve: cannot start worker %u\n", i);
			sv.stopping = 1;
			stop_all(&sv);
			for (unsigned j = 0; j < i; j++)
				mgw_worker_join(sv.workers[j]);
			goto out;
		}
	}
	mgw_health_start(sv.health);
	mgw_info(NULL, "mcpgw serve: mode %s, %u workers, %zu upstream groups, "
	         "%zu routes, %zu servers under health checks%s%s",
	         mgw_config_mode_name(sv.cfg->serve.mode), sv.n_workers,
	         sv.ups->n_groups, sv.routes->n, mgw_health_count(sv.health),
	         sv.sf ? ", session store " : "",
	         sv.sf ? store_name(sv.cfg->serve.sessions.store)
	               : "");
	event_base_dispatch(sv.base);
	for (unsigned i = 0; i < sv.n_workers; i++)
		mgw_worker_join(sv.workers[i]);
	mgw_info(NULL, "mcpgw serve: stopped");
	rc = sv.failed ? MGW_EXIT_RUNTIME : MGW_EXIT_OK;
out:
	/* Order: signals and health (main loop) go first, then the workers
	 * (their servers abort what is left, their pipelines close upstream
	 * connections), then what workers shared. */
	mgw_signals_free(sig);
	mgw_health_free(sv.health);
	if (sv.workers) {
		for (unsigned i = 0; i < sv.n_workers; i++)
			mgw_worker_free(sv.workers[i]);
		free(sv.workers);
	}
	mgw_liveness_free(sv.live);
	mgw_metrics_free(sv.metrics);
	/* the stores after every view (the workers') is gone */
	mgw_sf_shared_free(sv.sf);
	if (sv.exited_ev)
		event_free(sv.exited_ev);
	mgw_routes_free(sv.routes);
	mgw_upstreams_free(sv.ups);
	if (sv.base)
		event_base_free(sv.base);
	mgw_config_free(sv.cfg);
	return rc;
}
