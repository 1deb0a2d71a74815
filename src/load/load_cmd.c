/* load_cmd.c - `mcpgw load`: command line and scenario file into one plan,
 * then the run (engine.c), the outputs (report.c) and the gates (gates.c).
 * Exit status: 0 every gate passed, 1 a gate failed (or the run could not
 * be carried out), 2 a usage or configuration error. */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/commands.h"
#include "core/cli.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/signals.h"
#include "http/headers.h"
#include "load/engine.h"
#include "load/gates.h"
#include "load/report.h"
#include "load/scenario.h"
#include "util/parse.h"
#include "util/time.h"
#include "util/url.h"

static void usage(FILE *out)
{
	fputs(
"usage: mcpgw load --target URL [--target URL ...] --tool NAME [OPTIONS]\n"
"       mcpgw load --scenario FILE [OPTIONS]\n"
"\n"
"Drives MCP servers (or a gateway) with tools/call traffic in either protocol\n"
"era, measures latency and throughput, counts every kind of loss, and fails\n"
"a CI job when a gate is missed.\n"
"\n"
"Target and transport:\n"
"  --target URL\n"
"        http:// or https:// MCP endpoint (e.g. http://127.0.0.1:8080/mcp);\n"
"        repeatable.  With several, each virtual user picks one at random\n"
"        per connection, as a Kubernetes Service would.\n"
"  --connection reuse|new\n"
"        reuse: keep-alive (one connection per virtual user; a connection\n"
"        that failed or gave no answer within --timeout is dropped, and the\n"
"        next call opens a new one to a target chosen again).  new: a new\n"
"        connection, to a randomly chosen target, for every request.\n"
"        Default: reuse.\n"
"  --reconnect-after N\n"
"        reuse: a virtual user closes its connection after N requests and\n"
"        opens the next one to a target chosen again (each switch re-rolls\n"
"        the replica behind a per-connection balancer).  Default: 0, never.\n"
"  --http2\n"
"        HTTP/2: prior knowledge (h2c) on http://, ALPN h2 on https://.\n"
"  --ca-file FILE\n"
"        CA certificates (PEM) that https:// targets must chain to.  Server\n"
"        certificates are always verified (default: the system store).\n"
"  --stdio CMD\n"
"        Instead of URLs: start CMD (with /bin/sh -c) and speak\n"
"        newline-delimited JSON-RPC on its stdin/stdout.\n"
"\n"
"Protocol:\n"
"  --dialect legacy|modern|auto\n"
"        legacy (2025-11-25): initialize, notifications/initialized, calls\n"
"        with Mcp-Session-Id; a lost session is counted and the virtual user\n"
"        re-initializes; DELETE at the end.  modern (2026-07-28): no\n"
"        handshake, SEP-2243 headers and params._meta on every request.\n"
"        auto: probe with a modern request, fall back to legacy.\n"
"        Default: auto.\n"
"  --protocol-version V\n"
"        Version to request (default: the newest of the dialect).\n"
"  --list-tools\n"
"        Call tools/list after each initialization, like real clients do.\n"
"  --lost-session-match TEXT\n"
"        Legacy: a 400 to a call with a session is a lost session when its\n"
"        JSON-RPC error message contains TEXT (default 'session'; '' = any\n"
"        400).  A 404 always is.\n"
"  --auth-header 'NAME: VALUE'\n"
"        Header sent with every HTTP request; repeatable.  A VALUE of the\n"
"        form env:VAR is read from the environment variable VAR.\n"
"  --auth-command CMD\n"
"        Run CMD (sh -c) for 'NAME: VALUE' header lines; run again when a\n"
"        request is answered 401.\n"
"\n"
"What to call:\n"
"  --tool NAME\n"
"        Tool to call (replaces the scenario's calls).  The name 'counter'\n"
"        selects the handle flow: counter_create once, then\n"
"        counter_increment on the handle; an 'unknown handle' answer is a\n"
"        handle loss and the handle is recreated.  The name 'task' selects\n"
"        the task flow: slow_job asked for as a task, tasks/get at the\n"
"        server's poll interval (modern: Mcp-Name taskId) until terminal,\n"
"        legacy tasks/result; an unknown task (-32602) is a task loss.\n"
"  --arg KEY=VALUE, --arg KEY:=JSON\n"
"        Tool argument; repeatable.  VALUE becomes a number, true, false or\n"
"        null when it is spelled like one, else a string; KEY:=JSON takes\n"
"        any JSON value.\n"
"\n"
"Load model:\n"
"  --concurrency N\n"
"        Closed loop: N virtual users, each starting its next call when the\n"
"        previous one ended.  With --rate: the most calls in flight.\n"
"        Default: 1 (closed), 64 (open).\n"
"  --rate RPS\n"
"        Open loop: start RPS calls per second on a fixed schedule whatever\n"
"        the server does.  Latency counts from each call's intended start\n"
"        (coordinated omission corrected); a call that finds no free\n"
"        virtual user waits in a backlog, and is shed when the backlog is\n"
"        full or it waited longer than the timeout.\n"
"  --backlog N\n"
"        Open loop: ticks that may wait for a free virtual user (default:\n"
"        the concurrency).\n"
"  --spread-users\n"
"        Open loop: all --concurrency virtual users exist from the start\n"
"        and each tick goes to the one idle the longest, so every user\n"
"        (session, handle) carries its share, as that many separate\n"
"        clients would.  Default: the one idle the shortest, which keeps\n"
"        the fewest sessions busy.\n"
"  --users N\n"
"        Open loop: N virtual users (sessions, handles) exist from the start\n"
"        and take the ticks in turn, whatever --concurrency (which still\n"
"        bounds the calls in flight); a tick waits in the backlog while all\n"
"        N are busy.  So a kill scene hits N sessions, not the few a fast\n"
"        target keeps busy.  Implies --spread-users.\n"
"  --delete-sessions N\n"
"        Legacy: after N calls on a session, a virtual user ends it with\n"
"        DELETE, then presents the deleted id (a ping) through another\n"
"        target, which must refuse it (404); a 2xx there is counted as\n"
"        deleted_served.  Then it starts a new session.  Default 0: never.\n"
"  --duration DURATION\n"
"        Length of the measured phase.  Default: 10s (none with --requests).\n"
"  --requests N\n"
"        Stop the measured phase after N calls (exactly N are reported;\n"
"        open loop: N ticks, each sent or shed).\n"
"  --warmup DURATION\n"
"        A warmup phase first, same shape, excluded from total and gates.\n"
"  --think none|DURATION|MIN-MAX|agent\n"
"        Closed loop pause between a user's calls: fixed, uniform in\n"
"        MIN-MAX, or agent-shaped (mostly 50-500 ms, one in ten 2-10 s).\n"
"  --timeout DURATION\n"
"        Bound on each call (handshake included); 0 = none.  Default: 10s.\n"
"  --seed N\n"
"        Seed of the call mix and think times (default, and 0: random).\n"
"\n"
"Scenario and output:\n"
"  --scenario FILE\n"
"        YAML or JSON scenario (targets, transport, dialect, calls with\n"
"        weights and arguments, phases, think, timeout, auth, gates,\n"
"        output); see conf/load-*.yaml and doc/load.md.  Flags override it.\n"
"        A call with flow: mrtr is a multi round-trip dialogue (SEP-2322):\n"
"        input_required results are answered from its answers map and the\n"
"        request retried with the requestState echoed; one outcome per\n"
"        dialogue, its rounds counted (conf/load-mrtr.yaml).  With\n"
"        fork_every: N every Nth dialogue of a user re-presents an old\n"
"        requestState (fork_round: K, 0 the last), counted as forked or\n"
"        refused.\n"
"  --json FILE\n"
"        Write the full report as JSON ('-': stdout).\n"
"  --csv FILE\n"
"        Write the per-second timeline as CSV ('-': stdout).\n"
"  --clock-file FILE\n"
"        At the engine start, write its t = 0 (CLOCK_MONOTONIC, ns) to\n"
"        FILE, so that another program can schedule events on this run's\n"
"        clock (the report's timeline and clock.start_ns use the same).\n"
"  --progress-file FILE\n"
"        Rewrite FILE once a second (and at the end) with the counts so\n"
"        far as one JSON object: t_s, requests, ok, failed, failures by\n"
"        kind, shed, in_flight (for a program watching a long run).\n"
"  --quiet\n"
"        No table and no progress line.\n"
"  --log-level error|warn|info|debug\n"
"        Logs on stderr.  Default: warn.\n"
"\n"
"Gates (on the total of the non-warmup phases):\n"
"  --max-p95 MS, --max-p99 MS\n"
"        Highest p95 / p99 latency in milliseconds.\n"
"  --max-error-rate R\n"
"        Highest (failed + shed) / (requests + shed), 0 to 1.\n"
"  --min-rps N\n"
"        Lowest achieved (successful) calls per second.\n"
"  --max-session-losses N, --max-handle-losses N, --max-state-losses N\n"
"        Most lost sessions / lost handles / lost MRTR request states.\n"
"\n"
"  -h, --help\n"
"        Show this text and exit.\n"
"  --version\n"
"        Print the version (and the libraries built in) and exit.\n"
"\n"
"DURATION is a number of seconds or a number with ms, s, m or h.  The\n"
"table shows one row per phase: phase, conc/rate, reqs, rps, ok%, mean,\n"
"p50, p90, p95, p99, max (ms) and losses (session/handle).\n"
"\n"
"Exit status: 0 all gates passed (or none set), 1 a gate failed or the run\n"
"could not start, 2 usage or configuration error.\n",
	      out);
}

enum {
	OPT_TARGET = 256, OPT_DIALECT, OPT_CONCURRENCY, OPT_RATE, OPT_DURATION,
	OPT_WARMUP, OPT_CONNECTION, OPT_HTTP2, OPT_TOOL, OPT_ARG, OPT_JSON, OPT_CLOCK_FILE,
	OPT_PROGRESS_FILE,
	OPT_CSV, OPT_SCENARIO, OPT_MAX_P95, OPT_MAX_P99, OPT_MAX_ERR,
	OPT_MIN_RPS, OPT_MAX_SESS, OPT_MAX_HANDLE, OPT_MAX_STATE, OPT_STDIO, OPT_TIMEOUT,
	OPT_THINK, OPT_AUTH_HEADER, OPT_AUTH_CMD, OPT_SEED, OPT_QUIET,
	OPT_REQUESTS, OPT_BACKLOG, OPT_CA_FILE, OPT_PROTO, OPT_LIST_TOOLS,
	OPT_LOG_LEVEL, OPT_LOST_MATCH, OPT_RECONNECT_AFTER, OPT_SPREAD_USERS,
	OPT_USERS, OPT_DELETE_SESSIONS,
};

static const struct option long_opts[] = {
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, MGW_CLI_OPT_VERSION},
	{"target", required_argument, NULL, OPT_TARGET},
	{"dialect", required_argument, NULL, OPT_DIALECT},
	{"concurrency", required_argument, NULL, OPT_CONCURRENCY},
	{"rate", required_argument, NULL, OPT_RATE},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"requests", required_argument, NULL, OPT_REQUESTS},
	{"backlog", required_argument, NULL, OPT_BACKLOG},
	{"connection", required_argument, NULL, OPT_CONNECTION},
	{"reconnect-after", required_argument, NULL, OPT_RECONNECT_AFTER},
	{"http2", no_argument, NULL, OPT_HTTP2},
	{"ca-file", required_argument, NULL, OPT_CA_FILE},
	{"tool", required_argument, NULL, OPT_TOOL},
	{"arg", required_argument, NULL, OPT_ARG},
	{"json", required_argument, NULL, OPT_JSON},
	{"csv", required_argument, NULL, OPT_CSV},
	{"clock-file", required_argument, NULL, OPT_CLOCK_FILE},
	{"progress-file", required_argument, NULL, OPT_PROGRESS_FILE},
	{"scenario", required_argument, NULL, OPT_SCENARIO},
	{"max-p95", required_argument, NULL, OPT_MAX_P95},
	{"max-p99", required_argument, NULL, OPT_MAX_P99},
	{"max-error-rate", required_argument, NULL, OPT_MAX_ERR},
	{"min-rps", required_argument, NULL, OPT_MIN_RPS},
	{"max-session-losses", required_argument, NULL, OPT_MAX_SESS},
	{"max-handle-losses", required_argument, NULL, OPT_MAX_HANDLE},
	{"max-state-losses", required_argument, NULL, OPT_MAX_STATE},
	{"stdio", required_argument, NULL, OPT_STDIO},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"think", required_argument, NULL, OPT_THINK},
	{"auth-header", required_argument, NULL, OPT_AUTH_HEADER},
	{"auth-command", required_argument, NULL, OPT_AUTH_CMD},
	{"seed", required_argument, NULL, OPT_SEED},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"protocol-version", required_argument, NULL, OPT_PROTO},
	{"list-tools", no_argument, NULL, OPT_LIST_TOOLS},
	{"spread-users", no_argument, NULL, OPT_SPREAD_USERS},
	{"users", required_argument, NULL, OPT_USERS},
	{"delete-sessions", required_argument, NULL, OPT_DELETE_SESSIONS},
	{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
	{"lost-session-match", required_argument, NULL, OPT_LOST_MATCH},
	{NULL, 0, NULL, 0},
};

#define MAX_REPEAT 256

/* Flags as given; applied over the scenario after parsing so that flags
 * win whatever their position. */
struct flags {
	const char *targets[MAX_REPEAT];
	size_t n_targets;
	const char *args[MAX_REPEAT];
	size_t n_args;
	const char *headers[MAX_REPEAT];
	size_t n_headers;
	const char *dialect, *concurrency, *rate, *duration, *warmup, *requests;
	const char *users;
	const char *delete_sessions;
	const char *backlog, *connection, *reconnect_after, *ca_file, *tool, *json, *csv, *clock_file;
	const char *progress_file;
	const char *scenario, *max_p95, *max_p99, *max_err, *min_rps;
	const char *max_sess, *max_handle, *max_state, *stdio_cmd, *timeout, *think;
	const char *auth_cmd, *seed, *proto, *log_level, *lost_match;
	int http2, quiet, list_tools, spread_users, help, version;
};

/* A usage error: the message, where to find help, exit status 2. */
#define usage_error(...) mgw_cli_usage_error("load", __VA_ARGS__)

static int repeat(const char **v, size_t *n, const char *s, const char *name)
{
	return mgw_cli_repeat("load", v, n, MAX_REPEAT, s, name);
}

static int on_opt(int c, char *v, void *arg)
{
	struct flags *f = arg;

	switch (c) {
	case 'h': f->help = 1; break;
	case MGW_CLI_OPT_VERSION: f->version = 1; break;
	case OPT_TARGET: return repeat(f->targets, &f->n_targets, v, "--target");
	case OPT_ARG: return repeat(f->args, &f->n_args, v, "--arg");
	case OPT_AUTH_HEADER:
		return repeat(f->headers, &f->n_headers, v, "--auth-header");
	case OPT_DIALECT: f->dialect = v; break;
	case OPT_CONCURRENCY: f->concurrency = v; break;
	case OPT_RATE: f->rate = v; break;
	case OPT_DURATION: f->duration = v; break;
	case OPT_WARMUP: f->warmup = v; break;
	case OPT_REQUESTS: f->requests = v; break;
	case OPT_BACKLOG: f->backlog = v; break;
	case OPT_CONNECTION: f->connection = v; break;
	case OPT_RECONNECT_AFTER: f->reconnect_after = v; break;
	case OPT_HTTP2: f->http2 = 1; break;
	case OPT_CA_FILE: f->ca_file = v; break;
	case OPT_TOOL: f->tool = v; break;
	case OPT_JSON: f->json = v; break;
	case OPT_CSV: f->csv = v; break;
	case OPT_CLOCK_FILE: f->clock_file = v; break;
	case OPT_PROGRESS_FILE: f->progress_file = v; break;
	case OPT_SCENARIO: f->scenario = v; break;
	case OPT_MAX_P95: f->max_p95 = v; break;
	case OPT_MAX_P99: f->max_p99 = v; break;
	case OPT_MAX_ERR: f->max_err = v; break;
	case OPT_MIN_RPS: f->min_rps = v; break;
	case OPT_MAX_SESS: f->max_sess = v; break;
	case OPT_MAX_HANDLE: f->max_handle = v; break;
	case OPT_MAX_STATE: f->max_state = v; break;
	case OPT_STDIO: f->stdio_cmd = v; break;
	case OPT_TIMEOUT: f->timeout = v; break;
	case OPT_THINK: f->think = v; break;
	case OPT_AUTH_CMD: f->auth_cmd = v; break;
	case OPT_SEED: f->seed = v; break;
	case OPT_QUIET: f->quiet = 1; break;
	case OPT_PROTO: f->proto = v; break;
	case OPT_LIST_TOOLS: f->list_tools = 1; break;
	case OPT_SPREAD_USERS: f->spread_users = 1; break;
	case OPT_USERS: f->users = v; break;
	case OPT_DELETE_SESSIONS: f->delete_sessions = v; break;
	case OPT_LOG_LEVEL: f->log_level = v; break;
	case OPT_LOST_MATCH: f->lost_match = v; break;
	default: return MGW_EINVAL;
	}
	return 0;
}

/* ---- value parsers ---- */

/* A plain decimal number (no exponent, hex, inf or nan) in [min, max]. */
static int parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	double v;
	size_t digits = 0;
	const char *p = s;

	if (*p == '-')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (*p || !digits)
		return MGW_EINVAL;
	v = strtod(s, &end);
	if (*end || !(v >= min && v <= max))
		return MGW_EINVAL;
	*out = v;
	return 0;
}

static int oom(void)
{
	fputs("mcpgw load: out of memory\n", stderr);
	return MGW_EXIT_RUNTIME;
}

/* --auth-header 'Name: value' -> a header entry; "env:VAR" values are read
 * when the run starts (the engine reports an unset variable). */
static int add_header(struct mgw_load_conf *c, const char *spec)
{
	const char *colon = strchr(spec, ':');
	struct mgw_load_header *v, *h;
	const char *val;
	size_t nlen;

	if (!colon || colon == spec)
		return usage_error("invalid --auth-header '%s' (NAME: VALUE)", spec);
	nlen = (size_t)(colon - spec);
	if (!mgw_header_name_valid(spec, nlen))
		return usage_error("invalid --auth-header '%s': bad header name",
		                   spec);
	val = colon + 1;
	while (*val == ' ' || *val == '\t')
		val++;
	if (!mgw_header_value_valid(val, strlen(val)))
		return usage_error("invalid --auth-header '%.*s': the value has "
		                   "control characters", (int)nlen, spec);
	v = realloc(c->auth.headers, (c->auth.n_headers + 1) * sizeof(*v));
	if (!v)
		return oom();
	c->auth.headers = v;
	h = &v[c->auth.n_headers];
	memset(h, 0, sizeof(*h));
	h->name = strndup(spec, nlen);
	if (strncmp(val, "env:", 4) == 0 && val[4])
		h->env = strdup(val + 4);
	else
		h->value = strdup(val);
	c->auth.n_headers++;
	if (!h->name || (!h->env && !h->value))
		return oom();
	return 0;
}

/* ---- flags over the plan ---- */

static int apply_transport(struct mgw_load_conf *c, const struct flags *f)
{
	if (f->stdio_cmd && f->n_targets)
		return usage_error("--stdio and --target exclude each other");
	if (f->n_targets) {
		mgw_load_conf_clear_targets(c);
		c->transport.type = MGW_LOAD_HTTP;
		for (size_t i = 0; i < f->n_targets; i++) {
			char why[128];
			struct mgw_url u;

			if (mgw_url_parse(f->targets[i], &u, why, sizeof(why)) != 0)
				return usage_error("invalid --target '%s': %s",
				                   f->targets[i], why);
			if (mgw_load_conf_add_target(c, f->targets[i]) != 0)
				return oom();
		}
	}
	if (f->stdio_cmd) {
		mgw_load_conf_clear_targets(c);
		c->transport.type = MGW_LOAD_STDIO;
		if (!*f->stdio_cmd)
			return usage_error("--stdio needs a command");
		if (mgw_cli_set_str(&c->transport.command, f->stdio_cmd))
			return oom();
	}
	if (f->connection && mgw_load_parse_conn(f->connection,
	                                         &c->transport.connection) != 0)
		return usage_error("invalid --connection '%s' (reuse or new)",
		                   f->connection);
	if (f->reconnect_after &&
	    mgw_parse_int(f->reconnect_after, 0, 1000000000,
	                  &c->transport.reconnect_after) != 0)
		return usage_error("invalid --reconnect-after '%s' (requests, 0 for "
		                   "never)", f->reconnect_after);
	if (f->http2)
		c->transport.http2 = 1;
	if (f->ca_file && mgw_cli_set_str(&c->transport.ca_file, f->ca_file))
		return oom();
	return 0;
}

static int apply_protocol(struct mgw_load_conf *c, const struct flags *f)
{
	double d;
	long long v;
	int rc;

	if (f->dialect && mgw_load_parse_dialect(f->dialect, &c->dialect) != 0)
		return usage_error("invalid --dialect '%s' (legacy, modern or auto)",
		                   f->dialect);
	if (f->proto) {
		if (!*f->proto || !mgw_header_value_valid(f->proto, strlen(f->proto)))
			return usage_error("invalid --protocol-version '%s'", f->proto);
		if (mgw_cli_set_str(&c->protocol_version, f->proto))
			return oom();
	}
	if (f->lost_match &&
	    mgw_cli_set_str(&c->lost_session_match, f->lost_match))
		return oom();
	if (f->list_tools)
		c->list_tools = 1;
	if (f->spread_users)
		c->spread_users = 1;
	if (f->users &&
	    mgw_parse_int(f->users, 1, 1000000, &c->users) != 0)
		return usage_error("invalid --users '%s' (1 to 1000000)", f->users);
	if (f->delete_sessions &&
	    mgw_parse_int(f->delete_sessions, 0, 1000000000,
	                  &c->delete_sessions) != 0)
		return usage_error("invalid --delete-sessions '%s' (a number of "
		                   "calls, 0 = never)", f->delete_sessions);
	if (f->timeout) {
		if (mgw_parse_duration(f->timeout, &d) != 0 || d > 3600)
			return usage_error("invalid --timeout '%s' (a duration up to "
			                   "1h, 0 for none)", f->timeout);
		c->timeout = d;
	}
	if (f->think && mgw_load_parse_think(f->think, &c->think) != 0)
		return usage_error("invalid --think '%s' (none, a duration, "
		                   "MIN-MAX or agent)", f->think);
	if (f->seed) {
		if (mgw_parse_int(f->seed, 0, 0x7fffffffffffffffLL, &v) != 0)
			return usage_error("invalid --seed '%s'", f->seed);
		c->seed = v;
	}
	/* --auth-header replaces the scenario's auth headers (flags
	 * override the file), never adds a second Authorization */
	if (f->n_headers)
		mgw_load_conf_clear_auth_headers(c);
	for (size_t i = 0; i < f->n_headers; i++)
		if ((rc = add_header(c, f->headers[i])) != 0)
			return rc;
	if (f->auth_cmd && mgw_cli_set_str(&c->auth.command, f->auth_cmd))
		return oom();
	return 0;
}

static int apply_calls(struct mgw_load_conf *c, const struct flags *f)
{
	struct mgw_load_call *k;
	char err[256];

	if (f->tool) {
		if (!*f->tool)
			return usage_error("--tool needs a name");
		mgw_load_conf_clear_calls(c);
		if (!mgw_load_conf_add_call(c, f->tool))
			return oom();
	}
	if (f->n_args == 0)
		return 0;
	if (c->n_calls != 1)
		return usage_error("--arg needs --tool (or a scenario with exactly "
		                   "one call)");
	k = &c->calls[0];
	for (size_t i = 0; i < f->n_args; i++) {
		int rc = mgw_load_parse_arg(k->arguments, f->args[i], err,
		                            sizeof(err));
		if (rc == MGW_ENOMEM)
			return oom();
		if (rc != 0)
			return usage_error("%s", err);
	}
	return 0;
}

struct shape {
	int has_conc, has_rate, has_backlog, has_duration, has_requests;
	long concurrency, backlog;
	double rate, duration, warmup;
	long long requests;
	int has_warmup;
};

static int parse_shape(const struct flags *f, struct shape *s)
{
	long long v;

	memset(s, 0, sizeof(*s));
	if (f->concurrency) {
		if (mgw_parse_int(f->concurrency, 1, 100000, &v) != 0)
			return usage_error("invalid --concurrency '%s' (1 to 100000)",
			                   f->concurrency);
		s->has_conc = 1;
		s->concurrency = (long)v;
	}
	if (f->rate) {
		if (parse_number(f->rate, 0.001, 10000000, &s->rate) != 0)
			return usage_error("invalid --rate '%s' (calls per second, "
			                   "0.001 to 10000000)", f->rate);
		s->has_rate = 1;
	}
	if (f->backlog) {
		if (mgw_parse_int(f->backlog, 1, 10000000, &v) != 0)
			return usage_error("invalid --backlog '%s'", f->backlog);
		s->has_backlog = 1;
		s->backlog = (long)v;
	}
	if (f->duration) {
		if (mgw_parse_duration(f->duration, &s->duration) != 0 ||
		    s->duration <= 0 || s->duration > 30 * 86400.0)
			return usage_error("invalid --duration '%s' (a duration "
			                   "such as 30s or 5m)", f->duration);
		s->has_duration = 1;
	}
	if (f->requests) {
		if (mgw_parse_int(f->requests, 1, 1000000000000LL, &v) != 0)
			return usage_error("invalid --requests '%s'", f->requests);
		s->has_requests = 1;
		s->requests = v;
	}
	if (f->warmup) {
		if (mgw_parse_duration(f->warmup, &s->warmup) != 0 ||
		    s->warmup > 30 * 86400.0)
			return usage_error("invalid --warmup '%s' (a duration)",
			                   f->warmup);
		s->has_warmup = 1;
	}
	return 0;
}

static void shape_phase(struct mgw_load_phase *p, const struct shape *s)
{
	if (s->has_rate) {
		p->mode = MGW_LOAD_OPEN;
		p->rate = s->rate;
		if (!s->has_conc && !p->has_concurrency)
			p->concurrency = 64;
	}
	if (s->has_conc)
		p->concurrency = s->concurrency;
	if (s->has_backlog)
		p->backlog = s->backlog;
}

/* Without phases in the scenario the flags describe the run: an optional
 * warmup, then one measured phase.  With phases, the flags reshape them:
 * concurrency, rate and backlog apply to every phase, duration and
 * requests to the measured ones, --warmup to the warmup phases (one is
 * added in front, shaped like the first phase, when there is none). */
static int apply_phases(struct mgw_load_conf *c, const struct flags *f)
{
	struct shape s;
	struct mgw_load_phase *p;
	int rc = parse_shape(f, &s);

	if (rc != 0)
		return rc;
	if (c->n_phases == 0) {
		if (s.has_warmup && s.warmup > 0) {
			if (!(p = mgw_load_conf_add_phase(c, "warmup")))
				return oom();
			p->warmup = 1;
			p->duration = s.warmup;
			shape_phase(p, &s);
		}
		if (!(p = mgw_load_conf_add_phase(c, "load")))
			return oom();
		shape_phase(p, &s);
		p->duration = s.has_duration ? s.duration
		                             : s.has_requests ? 0 : 10;
		p->requests = s.requests;
		return 0;
	}
	for (size_t i = 0; i < c->n_phases; i++) {
		p = &c->phases[i];
		shape_phase(p, &s);
		if (p->warmup) {
			if (s.has_warmup)
				p->duration = s.warmup;
			continue;
		}
		if (s.has_duration)
			p->duration = s.duration;
		if (s.has_requests)
			p->requests = s.requests;
	}
	for (size_t i = 0; i < c->n_phases; i++)
		if (c->phases[i].warmup && c->phases[i].duration <= 0 &&
		    c->phases[i].requests <= 0)
			return usage_error("--warmup 0 leaves warmup phase %s "
			                   "without a length", c->phases[i].name);
	if (s.has_warmup && s.warmup > 0) {
		int have = 0;

		for (size_t i = 0; i < c->n_phases; i++)
			have |= c->phases[i].warmup;
		if (!have) {
			struct mgw_load_phase w;

			if (!(p = mgw_load_conf_add_phase(c, "warmup")))
				return oom();
			/* shaped like the first phase, then moved in front */
			p->warmup = 1;
			p->duration = s.warmup;
			p->mode = c->phases[0].mode;
			p->concurrency = c->phases[0].concurrency;
			p->rate = c->phases[0].rate;
			p->backlog = c->phases[0].backlog;
			w = *p;
			memmove(&c->phases[1], &c->phases[0],
			        (c->n_phases - 1) * sizeof(*c->phases));
			c->phases[0] = w;
		}
	}
	return 0;
}

/* A --max-*-losses gate: a count from 0. */
static int loss_gate(const char *flag, const char *text, long long *limit,
                     int *has)
{
	long long v;

	if (mgw_parse_int(text, 0, 1000000000000LL, &v) != 0)
		return usage_error("invalid %s '%s'", flag, text);
	*limit = v;
	*has = 1;
	return 0;
}

static int apply_gates(struct mgw_load_conf *c, const struct flags *f)
{
	struct mgw_load_gates *g = &c->gates;
	int rc;

	if (f->max_p95) {
		if (parse_number(f->max_p95, 0, 1e9, &g->max_p95_ms) != 0)
			return usage_error("invalid --max-p95 '%s' (milliseconds)",
			                   f->max_p95);
		g->has_max_p95_ms = 1;
	}
	if (f->max_p99) {
		if (parse_number(f->max_p99, 0, 1e9, &g->max_p99_ms) != 0)
			return usage_error("invalid --max-p99 '%s' (milliseconds)",
			                   f->max_p99);
		g->has_max_p99_ms = 1;
	}
	if (f->max_err) {
		if (parse_number(f->max_err, 0, 1, &g->max_error_rate) != 0)
			return usage_error("invalid --max-error-rate '%s' (0 to 1)",
			                   f->max_err);
		g->has_max_error_rate = 1;
	}
	if (f->min_rps) {
		if (parse_number(f->min_rps, 0, 1e9, &g->min_rps) != 0)
			return usage_error("invalid --min-rps '%s'", f->min_rps);
		g->has_min_rps = 1;
	}
	if (f->max_sess && (rc = loss_gate("--max-session-losses", f->max_sess,
	                                   &g->max_session_losses,
	                                   &g->has_max_session_losses)) != 0)
		return rc;
	if (f->max_handle && (rc = loss_gate("--max-handle-losses", f->max_handle,
	                                     &g->max_handle_losses,
	                                     &g->has_max_handle_losses)) != 0)
		return rc;
	if (f->max_state && (rc = loss_gate("--max-state-losses", f->max_state,
	                                    &g->max_state_losses,
	                                    &g->has_max_state_losses)) != 0)
		return rc;
	if (f->json && (!*f->json || mgw_cli_set_str(&c->output.json, f->json)))
		return *f->json ? oom() : usage_error("--json needs a file name");
	if (f->csv && (!*f->csv || mgw_cli_set_str(&c->output.csv, f->csv)))
		return *f->csv ? oom() : usage_error("--csv needs a file name");
	if (f->clock_file &&
	    (!*f->clock_file ||
	     mgw_cli_set_str(&c->output.clock_file, f->clock_file)))
		return *f->clock_file ? oom()
		                      : usage_error("--clock-file needs a file name");
	if (f->progress_file &&
	    (!*f->progress_file ||
	     mgw_cli_set_str(&c->output.progress_file, f->progress_file)))
		return *f->progress_file ? oom()
		                         : usage_error("--progress-file needs a file "
		                                       "name");
	if (f->quiet)
		c->quiet = 1;
	return 0;
}

/* ---- the run ---- */

struct run {
	struct event_base *base;
	struct mgw_load_engine *engine;
	const struct mgw_load_conf *conf;
	int progress;
	int progress_warned;
};

/* text into path, whole or not at all (written beside it, then
 * renamed): a reader polling for the file never sees half of it. */
static int write_whole(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;
	int rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	rc = fputs(text, f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -1;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* The engine's t = 0 into path (--clock-file). */
static int write_clock(const char *path, uint64_t start_ns)
{
	char line[32];

	snprintf(line, sizeof(line), "%llu\n", (unsigned long long)start_ns);
	return write_whole(path, line);
}

/* The counts so far into --progress-file.  A failed write is warned
 * about once: the run itself goes on, the watcher sees stale counts. */
static void write_progress(struct run *r)
{
	json_t *o;
	char *text;

	if (!r->conf->output.progress_file)
		return;
	o = mgw_load_report_progress_json(mgw_load_engine_stats(r->engine),
	                                  mgw_load_engine_inflight(r->engine),
	                                  mgw_now_ns());
	text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
	if (!text || write_whole(r->conf->output.progress_file, text) != 0) {
		if (!r->progress_warned)
			mgw_warn(NULL, "load: cannot write %s: %s",
			         r->conf->output.progress_file,
			         text ? strerror(errno) : "out of memory");
		r->progress_warned = 1;
	}
	free(text);
	json_decref(o);
}

static void on_finished(struct mgw_load_engine *e, void *arg)
{
	struct run *r = arg;

	(void)e;
	event_base_loopbreak(r->base);
}

static void on_progress(struct mgw_load_engine *e, void *arg)
{
	struct run *r = arg;

	write_progress(r);
	if (!r->progress)
		return;
	mgw_load_report_progress(stdout, r->conf, mgw_load_engine_stats(e),
	                         mgw_load_engine_phase(e),
	                         mgw_load_engine_inflight(e), mgw_now_ns());
}

static void on_signal(int signo, void *arg)
{
	struct run *r = arg;

	(void)signo;
	mgw_warn(NULL, "load: interrupted; finishing the calls in flight");
	mgw_load_engine_stop(r->engine);
}

static int run_plan(const struct mgw_load_conf *c)
{
	struct event_config *cfg = event_config_new();
	struct run r = {.conf = c};
	struct mgw_signals *sig = NULL;
	struct mgw_load_gate_result gates;
	const struct mgw_load_stats *st;
	json_t *report = NULL;
	char err[512];
	int code = MGW_EXIT_RUNTIME;
	FILE *table = stdout;

	if (!cfg)
		return oom();
	/* Timers on CLOCK_MONOTONIC itself (libevent otherwise uses a
	 * coarse clock, a few ms off): the open loop keeps its rate from
	 * absolute times read with mgw_now_ns(). */
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	r.base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (!r.base)
		return oom();
	r.engine = mgw_load_engine_new(r.base, c, err, sizeof(err));
	if (!r.engine) {
		fprintf(stderr, "mcpgw load: %s\n", err);
		code = MGW_EXIT_USAGE;
		goto out;
	}
	sig = mgw_signals_new(r.base, on_signal, &r);
	if ((c->output.json && strcmp(c->output.json, "-") == 0) ||
	    (c->output.csv && strcmp(c->output.csv, "-") == 0))
		table = stderr; /* stdout carries the machine-readable output */
	r.progress = !c->quiet && table == stdout && isatty(STDOUT_FILENO);
	if (mgw_load_engine_start(r.engine, on_finished, on_progress, &r) != 0)
		goto out;
	if (c->output.clock_file &&
	    write_clock(c->output.clock_file,
	                mgw_load_engine_stats(r.engine)->start_ns) != 0) {
		fprintf(stderr, "mcpgw load: cannot write %s: %s\n",
		        c->output.clock_file, strerror(errno));
		goto out;
	}
	event_base_dispatch(r.base);
	write_progress(&r); /* the final counts */
	if (r.progress)
		mgw_load_report_progress_clear(stdout);
	st = mgw_load_engine_stats(r.engine);
	mgw_load_gates_eval(&c->gates, st, &gates);
	code = gates.passed ? MGW_EXIT_OK : MGW_EXIT_RUNTIME;
	if (!c->quiet)
		mgw_load_report_table(table, c, st, &gates);
	if (c->output.json) {
		report = mgw_load_report_json(c, st, &gates);
		if (!report ||
		    mgw_load_report_write_json(report, c->output.json, err,
		                               sizeof(err)) != 0) {
			fprintf(stderr, "mcpgw load: %s\n",
			        report ? err : "out of memory");
			code = MGW_EXIT_RUNTIME;
		}
	}
	if (c->output.csv &&
	    mgw_load_report_write_csv(st, c->output.csv, err, sizeof(err)) != 0) {
		fprintf(stderr, "mcpgw load: %s\n", err);
		code = MGW_EXIT_RUNTIME;
	}
	if (st->total.all.c.requests > 0 && st->total.all.c.ok == 0)
		mgw_warn(NULL, "load: no call succeeded");
out:
	json_decref(report);
	mgw_signals_free(sig);
	mgw_load_engine_free(r.engine);
	event_base_free(r.base);
	return code;
}

int mgw_load_main(int argc, char **argv)
{
	struct flags f = {0};
	struct mgw_load_conf *c = NULL;
	char err[512];
	int rc;

	rc = mgw_cli_parse("load", argc, argv, ":h", long_opts, on_opt, &f);
	if (rc != 0)
		return rc;
	if (f.help) {
		usage(stdout);
		return MGW_EXIT_OK;
	}
	if (f.version)
		return mgw_cli_version(stdout);
	rc = mgw_cli_log_level("load", f.log_level, MGW_LOG_WARN);
	if (rc != 0)
		return rc;
	c = mgw_load_conf_new();
	if (!c)
		return oom();
	if (f.scenario &&
	    mgw_load_scenario_load(c, f.scenario, err, sizeof(err)) != 0) {
		fprintf(stderr, "mcpgw load: %s\n", err);
		rc = MGW_EXIT_USAGE;
		goto out;
	}
	if ((rc = apply_transport(c, &f)) != 0 ||
	    (rc = apply_protocol(c, &f)) != 0 ||
	    (rc = apply_calls(c, &f)) != 0 ||
	    (rc = apply_phases(c, &f)) != 0 ||
	    (rc = apply_gates(c, &f)) != 0)
		goto out;
	if (mgw_load_conf_check(c, err, sizeof(err)) != 0) {
		rc = usage_error("%s", err);
		goto out;
	}
	rc = run_plan(c);
out:
	mgw_load_conf_free(c);
	return rc;
}
