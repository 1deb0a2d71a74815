/* serve_cmd.c - `mcpgw serve`: command line and configuration, the shared
 * run-time state (the first configuration generation, the health
 * checker), the worker threads with their SO_REUSEPORT listeners, the
 * "listening on" lines, signals, the drain and graceful shutdown.  The
 * reload on SIGHUP is reload.c. */
#include "autoconf.h"

#include <errno.h>
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
#include "core/cfgcheck.h"
#include "core/cli.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/signals.h"
#include "http/headers.h"
#include "net/serve_listeners.h"
#include "proxy/liveness.h"
#include "proxy/metrics.h"
#include "proxy/mrtr_set.h"
#include "proxy/pipeline.h"
#include "proxy/reload.h"
#include "proxy/serve-t.h"
#include "proxy/health.h"
#include "proxy/hints.h"
#include "proxy/route.h"
#include "proxy/serve_check.h"
#include "proxy/stateful.h"
#include "proxy/upstream.h"
#include "proxy/worker.h"
#include "util/time.h"
#include "util/parse.h"
#include "util/rand.h"
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
"server replicas.  Modern (2026-07-28) requests are balanced over the healthy\n"
"replicas of their route's upstream group, each on its own, and forwarded\n"
"byte for byte with their headers intact, their SEP-2243 headers checked\n"
"against the body first; a call lost in flight on a dying replica is sent\n"
"to another when it is safe to repeat (routes[].replay); with\n"
"upstreams[].affinity: task, tasks/get, tasks/update and tasks/cancel go to\n"
"the replica that created the task (or are answered -32602 when it is\n"
"gone).  Legacy\n"
"(2025-11-25) sessions are terminated by the gateway (auto and stateful\n"
"modes): it mints the session ids clients see, pins each session to a\n"
"replica, and re-pins it (replaying the client's\n"
"initialize) when that replica dies, is ejected or forgets the session.\n"
"The default health probe passes replicas of either era.  Relative file\n"
"names in the file (TLS, key and CA files) are taken from its folder.\n"
"\n"
"  -c, --config FILE\n"
"        YAML (or JSON) configuration: listeners:, limits:, timeouts:, log:,\n"
"        mode:, workers:, upstreams:, routes:, retry_budget:, forwarded:,\n"
"        mcp:, admin:, security:, auth:, rate_limits:, sessions:.  Flags\n"
"        override file values.\n"
"  --listen HOST:PORT\n"
"        Listen on HOST:PORT (IPv6 as [::1]:PORT); repeatable; replaces the\n"
"        file's listeners.  Port 0 picks a free port (shared by all workers).\n"
"        For each listener 'listening on HOST:PORT' is printed on stdout\n"
"        before anything else.\n"
"  --upstream URL\n"
"        A replica, http://HOST[:PORT][/prefix] or https://...; repeatable.\n"
"        The request path is appended to the prefix: a server whose endpoint\n"
"        is /mcp is http://HOST:PORT (with /mcp its requests go to /mcp/mcp,\n"
"        which is logged at start).\n"
"        Builds one group 'default' and one route taking every path to it,\n"
"        replacing the file's upstreams: and routes:.\n"
"  --mode auto|stateless|stateful\n"
"        auto terminates legacy (2025-11-25) sessions and serves modern\n"
"        (2026-07-28) traffic statelessly, on the same listeners, so it\n"
"        works in front of servers of either era.  stateless balances each\n"
"        request on its own (modern servers; GET and DELETE answer 405).\n"
"        stateful is auto for a legacy-only fleet: every request with\n"
"        Mcp-Session-Id, and GET or DELETE, is taken as legacy.  The session\n"
"        store and\n"
"        re-pin rules are in the file's sessions: section (memory store by\n"
"        default).  Default: auto (the file's mode:).\n"
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
"  --drain-delay DURATION\n"
"        On SIGTERM or SIGINT, GET /mcpgw/readyz answers 503 at once while\n"
"        the listeners keep accepting for this long (time for a load\n"
"        balancer or Kubernetes to take the gateway out of its endpoints);\n"
"        then they close.  Default: the file's drain.delay, else 0.\n"
"  --shutdown-timeout DURATION\n"
"        After the drain delay: stop accepting, close idle keep-alive\n"
"        connections (HTTP/1.1 Connection: close, HTTP/2 GOAWAY), let\n"
"        requests in flight and SSE streams finish for at most this long,\n"
"        then exit 0.  Default: 10s.\n"
"  --log-level error|warn|info|debug\n"
"        Logs go to stderr.  Default: info.\n"
"  --access-log\n"
"        One line per proxied request at info (method, path, Mcp-Method,\n"
"        upstream, status, duration).  Off by default (log.access).\n"
"  --check\n"
"        Check the configuration as a start (or a SIGHUP reload) would:\n"
"        the file with the flags over it, upstream groups and routes, TLS\n"
"        files, session keys; print 'configuration ok' and exit 0, or the\n"
"        reason and exit 2.  Nothing is bound or contacted.\n"
"  --access-log-format text|json\n"
"        text: that line; json: one JSON object per request (client\n"
"        address, listener, protocol, bytes, MCP method and name, era,\n"
"        session prefix, re-pin reason, trace id...; see doc/serve.md).\n"
"        Default: text (log.access_format).\n"
"  --access-log-file PATH\n"
"        Write access lines to PATH (appended; reopened on SIGUSR1, for\n"
"        logrotate) instead of stderr, whatever --log-level; turns the\n"
"        access log on (log.access_file).\n"
"  -h, --help\n"
"        Show this text and exit.\n"
"  --version\n"
"        Print the version (and the libraries built in) and exit.\n"
"\n"
"In stateless mode GET and DELETE on the MCP endpoint answer 405.  Errors\n"
"the gateway makes itself carry a JSON-RPC error with the request id and a\n"
"code in -32001..-32019 (see doc/errors.md).  GET /mcpgw/stats on any\n"
"listener answers the gateway's counters as JSON: upstream server states,\n"
"sessions, re-pins by reason, replays; by default to loopback clients only\n"
"(admin.stats: loopback | any | off).  GET /metrics answers Prometheus\n"
"metrics (text format 0.0.4) to the clients admin.metrics allows (loopback by\n"
"default), at admin.metrics_path, on the listener admin.metrics_listener\n"
"names or every one.\n"
"\n"
"With auth: (issuer, resource, jwks_file and/or jwks_url, static_tokens)\n"
"every route that does not say auth: false requires a bearer token: a JWT\n"
"(RS256, PS256, ES256, EdDSA) of the issuer for the audience with the\n"
"required scopes, or a static token; else 401 (400 when malformed) or 403\n"
"with WWW-Authenticate and -32017 / -32018.  The gateway answers its\n"
"Protected Resource Metadata at /.well-known/oauth-protected-resource.\n"
"Upstream groups strip the client's Authorization unless upstream_auth\n"
"says static or passthrough; a route's allow_/deny_ lists (methods, tools,\n"
"prompts, resources) and policy: rules answer refused requests 403.\n"
"\n"
"A route's rate_limit: {rate, burst, key: principal|client|method|tool,\n"
"shared: none|redis} answers requests over its key's token bucket 429 with\n"
"Retry-After and -32019; limits.max_connections_per_client and\n"
"limits.new_connections_per_client close a client address's connections\n"
"over them (doc/security.md).\n"
"\n"
"SIGHUP reloads the -c file (servers, routes, listeners, policies; requests\n"
"in progress finish under the configuration they started with; memory-store\n"
"sessions survive); a file that does not load, or a change of mode, workers\n"
"or sessions:, is refused and the running configuration stays.\n"
"\n"
"Exit status: 0 after a graceful stop, 1 on a runtime failure (such as a\n"
"listener that cannot bind), 2 on a usage or configuration error.\n",
	      out);
}

enum {
	OPT_UPSTREAM = 256, OPT_MODE, OPT_BALANCER, OPT_HASH_HEADER,
	OPT_H2C, OPT_WORKERS, OPT_NO_VALIDATE, OPT_SHUTDOWN, OPT_ACCESS_LOG,
	OPT_DRAIN, OPT_CHECK, OPT_ACCESS_FORMAT, OPT_ACCESS_FILE,
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
	{"drain-delay", required_argument, NULL, OPT_DRAIN},
	{"check", no_argument, NULL, OPT_CHECK},
	{"access-log", no_argument, NULL, OPT_ACCESS_LOG},
	{"access-log-format", required_argument, NULL, OPT_ACCESS_FORMAT},
	{"access-log-file", required_argument, NULL, OPT_ACCESS_FILE},
	{NULL, 0, NULL, 0},
};

/* Flag values, applied on top of the configuration after parsing so that
 * flags win whatever their position relative to -c. */
struct serve_flags {
	struct mgw_cli_server srv;  /* -c, -h, --listen, TLS, --log-level */
	const char *upstream[MAX_UPSTREAM_FLAGS];
	size_t n_upstream;
	const char *mode, *balancer, *hash_header, *workers, *shutdown, *drain;
	int h2c, no_validate, access_log, check;
	const char *access_format, *access_file;
};

/* A usage error: the message, where to find help, exit status 2. */
#define usage_error(...) mgw_cli_usage_error("serve", __VA_ARGS__)

/* An option of this command's own (mgw_cli_parse_server takes the rest). */
static int on_opt(int c, char *v, void *arg)
{
	struct serve_flags *f = arg;

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
	case OPT_DRAIN: f->drain = v; break;
	case OPT_CHECK: f->check = 1; break;
	case OPT_ACCESS_LOG: f->access_log = 1; break;
	case OPT_ACCESS_FORMAT: f->access_format = v; break;
	case OPT_ACCESS_FILE: f->access_file = v; break;
	default: return MGW_EINVAL;
	}
	return 0;
}

static const struct mgw_cli_server_cmd serve_cmd = {
	.name = "serve", .longopts = long_opts, .on_opt = on_opt, .usage = usage,
};

/* Applies the flags to cfg, which is not shared with anyone yet.  Returns
 * 0 or an exit code (the message is printed). */
static int apply_flags(struct mgw_config *cfg, const struct serve_flags *f)
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
	if (f->drain) {
		double d;
		if (mgw_parse_duration(f->drain, &d) != 0 || d < 0 || d > 3600)
			return usage_error("invalid --drain-delay '%s' (a duration "
			                   "such as 5s; at most 1h)", f->drain);
		s->drain_delay = d;
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

static void warn_line(void *arg, const char *msg)
{
	(void)arg;
	mgw_warn(NULL, "%s", msg);
}

/* A doubled server URL path (hints.h): one line per group at start; one
 * per Redis connection whose certificate is not verified. */
static void path_hints(const struct mgw_serve_conf *s)
{
	char msg[512];

	for (size_t gi = 0; gi < s->n_upstreams; gi++)
		if (mgw_hint_doubled_path(s, gi, msg, sizeof(msg)))
			mgw_warn(NULL, "%s", msg);
	mgw_hint_redis_no_verify(s, warn_line, NULL);
}

/* ---- running ---------------------------------------------------------- */


static void stop_all(struct serve *sv)
{
	for (unsigned i = 0; i < sv->n_workers; i++)
		if (sv->workers[i])
			mgw_worker_stop(sv->workers[i]);
}

/* The drain delay is over: the listeners close, requests in flight get
 * the shutdown timeout. */
static void on_drained(evutil_socket_t fd, short what, void *arg)
{
	struct serve *sv = arg;

	(void)fd;
	(void)what;
	mgw_info(NULL, "mcpgw serve: closing listeners (up to %.1fs for "
	         "requests in flight)", sv->cfg->shutdown_timeout);
	stop_all(sv);
}

/* SIGTERM/SIGINT: readiness goes at once; the listeners keep accepting
 * for drain.delay (so that load balancers see readyz fail and take this
 * gateway out of their endpoints), then close. */
static void on_stop(int signo, void *arg)
{
	struct serve *sv = arg;
	double delay = sv->cfg->serve.drain_delay;
	struct timeval tv = mgw_tv(delay);

	sv->stopping = 1;
	mgw_liveness_set_draining(sv->live);
	if (delay <= 0 || !sv->drain_ev || evtimer_add(sv->drain_ev, &tv) != 0) {
		mgw_info(NULL, "mcpgw serve: signal %d, stopping (up to %.1fs for "
		         "requests in flight)", signo, sv->cfg->shutdown_timeout);
		stop_all(sv);
		return;
	}
	mgw_info(NULL, "mcpgw serve: signal %d, draining: readyz answers 503, "
	         "listeners stay open for %.1fs, then up to %.1fs for requests "
	         "in flight", signo, delay, sv->cfg->shutdown_timeout);
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
 * "listening on" lines.  Records each in sv->lst from first on (a
 * reload closes them by their bound address). */
int mgw_serve_bind(struct serve *sv, const struct mgw_listen_spec *ls,
                   size_t n, size_t first)
{
	struct mgw_serve_listeners sl = {
		.cmd = "serve", .n_workers = sv->n_workers, .log_workers = 1,
		.bind = on_bind, .arg = sv,
	};
	int rc;

	if (first + n > MGW_CLI_MAX_LISTEN) {
		fprintf(stderr, "mcpgw serve: more than %d listeners\n",
		        MGW_CLI_MAX_LISTEN);
		return MGW_EXIT_USAGE;
	}
	rc = mgw_serve_listeners_open(&sl, ls, n);
	for (size_t i = 0; i < n; i++) {
		struct mgw_serve_lst *l = &sv->lst[first + i];

		snprintf(l->address, sizeof(l->address), "%s", ls[i].address);
		snprintf(l->cert, sizeof(l->cert), "%s", ls[i].cert ? ls[i].cert : "");
		snprintf(l->key, sizeof(l->key), "%s", ls[i].key ? ls[i].key : "");
		snprintf(l->bound, sizeof(l->bound), "%s", sl.bound[i]);
	}
	sv->n_lst = first + n;
	return mgw_cli_exit_code(rc);
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

/* The access log: its format and file, flags over log:.  Returns 0 or
 * an exit code. */
static int access_format(const struct mgw_config *cfg,
                         const struct serve_flags *f,
                         enum mgw_access_format *fmt)
{
	*fmt = cfg->log_access_format;
	if (!f->access_format)
		return 0;
	if (strcmp(f->access_format, "text") == 0)
		*fmt = MGW_ACCESS_TEXT;
	else if (strcmp(f->access_format, "json") == 0)
		*fmt = MGW_ACCESS_JSON;
	else
		return usage_error("invalid --access-log-format '%s' (text or "
		                   "json)", f->access_format);
	return 0;
}

static int access_log(const struct mgw_config *cfg, const struct serve_flags *f)
{
	enum mgw_access_format fmt;
	const char *file = f->access_file ? f->access_file : cfg->log_access_file;
	char why[300];
	int rc = access_format(cfg, f, &fmt);

	if (rc)
		return rc;
	if (f->access_file && mgw_cfg_check_log_file(f->access_file, why,
	                                             sizeof(why)) != 0)
		return usage_error("invalid --access-log-file: %s", why);
	mgw_log_set_access_format(fmt);
	mgw_log_set_access(cfg->log_access || f->access_log || file);
	if (file && mgw_log_access_open(file) != 0) {
		fprintf(stderr, "mcpgw serve: cannot open the access log '%s': "
		        "%s\n", file, strerror(errno));
		return MGW_EXIT_RUNTIME;
	}
	return 0;
}

/* SIGUSR1: the access log file is opened again under its name. */
static void on_reopen(void *arg)
{
	(void)arg;
	if (mgw_log_access_reopen() != 0)
		mgw_warn(NULL, "SIGUSR1: cannot reopen the access log: %s (still "
		         "writing to the old file)", strerror(errno));
	else
		mgw_info(NULL, "SIGUSR1: access log reopened");
}

int mgw_serve_prepare(const struct serve_flags *f, struct mgw_config *cfg,
                      struct mgw_listen_spec *ls, size_t *n_ls)
{
	char err[1024];
	int rc = apply_flags(cfg, f);

	if (rc)
		return rc;
	rc = mgw_serve_check(cfg, err, sizeof(err));
	if (rc == MGW_ENOMEM)
		return MGW_EXIT_RUNTIME;
	if (rc)
		return usage_error("%s", err);
	path_hints(&cfg->serve);
	return mgw_cli_listen_specs("serve", &f->srv.listen, cfg->listeners,
	                            cfg->n_listeners, ":", ls, n_ls);
}

int mgw_serve_apply_logs(const struct serve_flags *f,
                         const struct mgw_config *cfg, int reload)
{
	int rc = mgw_cli_log_level("serve", f->srv.log_level, cfg->log_level);
	const char *file = f->access_file ? f->access_file : cfg->log_access_file;
	const char *now = mgw_log_access_path();
	enum mgw_access_format fmt;

	if (rc || !reload)
		return rc ? rc : access_log(cfg, f);
	/* a reload: a new file takes the old one's descriptor number (no
	 * writer sees a closed one); back to stderr needs a restart */
	if (file && (!now || strcmp(file, now) != 0) &&
	    mgw_log_access_open(file) != 0) {
		mgw_warn(NULL, "reload: cannot open the access log '%s': %s (it "
		         "stays %s)", file, strerror(errno), now ? now : "stderr");
		file = now;
	} else if (!file && now) {
		mgw_warn(NULL, "reload: the access log stays %s until a restart",
		         now);
		file = now;
	}
	if (access_format(cfg, f, &fmt) == 0)
		mgw_log_set_access_format(fmt);
	mgw_log_set_access(cfg->log_access || f->access_log || file);
	return 0;
}

unsigned mgw_serve_workers(const struct mgw_config *cfg)
{
	return cfg->serve.workers ? cfg->serve.workers : default_workers();
}

/* The main loop's timer that frees retired generations once idle. */
static void on_gc(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	mgw_serve_gen_collect(arg, 0);
}

static void on_reload(int signo, void *arg)
{
	(void)signo;
	mgw_serve_reload(arg);
}

/* What the workers share: the first generation (upstream groups, routes
 * and, in stateful and auto modes, the session stores), the main loop.
 * Returns 0 or an exit code. */
static int setup_shared(struct serve *sv)
{
	char err[1024];
	struct timeval gc = {1, 0};

	/* before any event_base: workers are woken from the main thread */
	if (evthread_use_pthreads() != 0) {
		fprintf(stderr, "mcpgw serve: libevent without thread support\n");
		return MGW_EXIT_RUNTIME;
	}
	sv->base = event_base_new();
	if (!sv->base)
		return MGW_EXIT_RUNTIME;
	sv->exited_ev = event_new(sv->base, -1, 0, on_worker_exited, sv);
	sv->drain_ev = evtimer_new(sv->base, on_drained, sv);
	if (!sv->exited_ev || !sv->drain_ev)
		return MGW_EXIT_RUNTIME;
	sv->gc_ev = event_new(sv->base, -1, EV_PERSIST, on_gc, sv);
	if (!sv->gc_ev || event_add(sv->gc_ev, &gc) != 0)
		return MGW_EXIT_RUNTIME;
	/* the session stores' expiry sweeps run on the main loop */
	sv->gen = mgw_serve_gen_new(sv->cfg, NULL, sv->base, err, sizeof(err));
	if (!sv->gen) {
		fprintf(stderr, "mcpgw serve: %s\n", err);
		return MGW_EXIT_USAGE;
	}
	sv->gen->seq = 1;
	sv->ups = sv->gen->ups;
	sv->routes = sv->gen->routes;
	sv->sf = sv->gen->sf;
	if (sv->gen->stores_owner)
		sv->stores_cfg = sv->cfg;
	if (mgw_park_init(&sv->park) != 0)
		return MGW_EXIT_RUNTIME;
	sv->park_ok = 1;
	return 0;
}

/* --check: what a start would refuse before binding (the stores are
 * opened and closed again: a sealed key file is read, a Redis URL
 * parsed).  Returns an exit code. */
static int check_only(struct serve *sv, const struct mgw_listen_spec *ls,
                      size_t n)
{
	char err[1024];
	struct mgw_serve_gen *g;

	if (mgw_serve_listeners_check(ls, n, err, sizeof(err)) != 0)
		return usage_error("%s", err);
	g = mgw_serve_gen_new(sv->cfg, NULL, NULL, err, sizeof(err));
	if (!g)
		return usage_error("%s", err);
	g->stores_owner = 1;         /* sv->cfg is freed by the caller */
	mgw_serve_gen_free(g);
	printf("configuration ok\n");
	return MGW_EXIT_OK;
}

/* The counters behind GET /metrics, and the listener that answers them
 * (admin.metrics_listener: one of the listeners to bind, by address).
 * Returns 0 or an exit code. */
static int setup_metrics(struct serve *sv, const struct mgw_listen_spec *ls,
                         size_t n_ls)
{
	const struct mgw_serve_conf *s = &sv->cfg->serve;

	/* room for what reloads add (more counts as route/group "none") */
	sv->metrics = mgw_metrics_new(sv->n_workers,
	                              sv->routes->n + MGW_METRICS_RELOAD_ROOM,
	                              sv->ups->n_groups + MGW_METRICS_RELOAD_ROOM,
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

/* The rate-limit buckets and the requestState digests every worker
 * shares (rate_limits.max_keys, mrtr_guard.max_states; for the whole
 * run) and the per-client connection limits of limits:.
 * Returns 0 or MGW_ENOMEM. */
static int setup_limits(struct serve *sv)
{
	const struct mgw_http_limits *lim = &sv->cfg->limits;
	uint64_t seed;

	if (mgw_random_bytes(&seed, sizeof(seed)) != 0)
		seed = mgw_now_ns();
	sv->rlt = mgw_rl_table_new(sv->cfg->serve.rate_limits.max_keys, seed);
	if (!sv->rlt)
		return MGW_ENOMEM;
	sv->metrics->rlt = sv->rlt;
	sv->mrtr = mgw_mrtr_set_new(sv->cfg->serve.mrtr_guard.max_states);
	if (!sv->mrtr)
		return MGW_ENOMEM;
	sv->metrics->mrtr = sv->mrtr;
	if (lim->max_connections_per_client || lim->new_connections_per_client) {
		sv->connlim = mgw_http_connlim_new(lim->max_connections_per_client,
		                                   lim->new_connections_per_client,
		                                   seed);
		if (!sv->connlim)
			return MGW_ENOMEM;
	}
	return 0;
}

int mgw_serve_main(int argc, char **argv)
{
	struct serve_flags f = {0};
	struct serve sv = {0};
	struct mgw_signals *sig = NULL;
	struct mgw_listen_spec ls[MGW_CLI_MAX_LISTEN];
	size_t n_ls = 0;
	char err[1024];
	int rc;

	rc = mgw_cli_server_begin(&serve_cmd, argc, argv, &f.srv, &f, &sv.cfg);
	if (!sv.cfg)
		return rc;
	sv.flags = &f;
	sv.path = f.srv.config;
	rc = mgw_serve_prepare(&f, sv.cfg, ls, &n_ls);
	if (rc == 0)
		rc = mgw_serve_apply_logs(&f, sv.cfg, 0);
	if (rc == 0 && f.check) {
		rc = check_only(&sv, ls, n_ls);
		goto out;
	}
	if (rc)
		goto out;
	rc = setup_shared(&sv);
	if (rc)
		goto out;
	rc = MGW_EXIT_RUNTIME;
	sv.n_workers = mgw_serve_workers(sv.cfg);
	sv.workers = calloc(sv.n_workers, sizeof(*sv.workers));
	sv.live = mgw_liveness_new(sv.n_workers, mgw_now_ms());
	if (!sv.workers || !sv.live)
		goto out;
	rc = setup_metrics(&sv, ls, n_ls);
	if (rc)
		goto out;
	rc = MGW_EXIT_RUNTIME;
	if (setup_limits(&sv) != 0)
		goto out;
	for (unsigned i = 0; i < sv.n_workers; i++) {
		sv.workers[i] = mgw_worker_new(i, sv.cfg, sv.routes, sv.ups,
		                               sv.n_workers, sv.exited_ev, err,
		                               sizeof(err));
		if (!sv.workers[i]) {
			fprintf(stderr, "mcpgw serve: %s\n", err);
			goto out;
		}
		if (mgw_worker_set_liveness(sv.workers[i], sv.live) != 0 ||
		    mgw_worker_set_park(sv.workers[i], &sv.park) != 0)
			goto out;
		mgw_worker_set_metrics(sv.workers[i], sv.metrics);
		mgw_worker_set_ratelimit(sv.workers[i], sv.rlt);
		mgw_worker_set_mrtr(sv.workers[i], sv.mrtr);
		mgw_http_server_set_connlim(sv.workers[i]->http, sv.connlim);
		if (sv.sf && mgw_pipeline_enable_stateful(sv.workers[i]->pl, sv.sf,
		                                          err, sizeof(err)) != 0) {
			fprintf(stderr, "mcpgw serve: sessions: %s\n", err);
			goto out;
		}
		if (sv.gen->keys &&
		    mgw_pipeline_enable_auth(sv.workers[i]->pl, sv.gen->keys, err,
		                             sizeof(err)) != 0) {
			fprintf(stderr, "mcpgw serve: auth: %s\n", err);
			goto out;
		}
	}
	/* Before the listeners: "listening on" tells a supervisor it may
	 * signal us, and a SIGTERM must then be a graceful stop, not the
	 * default action.  libevent holds it until the loop runs. */
	sig = mgw_signals_server_new(sv.base, on_stop, &sv);
	if (!sig)
		goto out;
	mgw_signals_on_reload(sig, on_reload, &sv);
	if (mgw_signals_on_reopen(sig, sv.base, on_reopen, NULL) != 0)
		goto out;
	rc = mgw_serve_bind(&sv, ls, n_ls, 0);
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
	mgw_log_access_close(); /* after the last access line */
	mgw_liveness_free(sv.live);
	/* the generations (and the stores with the last of them) after every
	 * view (the workers') is gone; the stores' snapshot last of all */
	if (sv.gen) {
		mgw_serve_gen_collect(&sv, 1);
		mgw_serve_gen_free(sv.gen);
		mgw_config_free(sv.stores_cfg);
	} else {
		mgw_config_free(sv.cfg);
	}
	if (sv.park_ok)
		mgw_park_destroy(&sv.park);
	mgw_metrics_free(sv.metrics);
	mgw_rl_table_free(sv.rlt);
	mgw_mrtr_set_free(sv.mrtr);
	mgw_http_connlim_free(sv.connlim);
	if (sv.exited_ev)
		event_free(sv.exited_ev);
	if (sv.drain_ev)
		event_free(sv.drain_ev);
	if (sv.gc_ev)
		event_free(sv.gc_ev);
	if (sv.base)
		event_base_free(sv.base);
	return rc;
}
