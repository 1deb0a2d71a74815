/* cmd.c - `mcpgw backend`: command line and configuration, startup (state
 * store, listeners, the "listening on" lines), signals and graceful
 * shutdown of the reference MCP server. */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "backend/backend.h"
#include "backend/record.h"
#include "backend/state.h"
#include "core/commands.h"
#include "conf/config.h"
#include "core/cli.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/signals.h"
#include "http/server.h"
#include "net/tls.h"
#include "util/parse.h"
#include "util/time.h"

#define MAX_LISTEN 16

static void usage(FILE *out)
{
	fputs(
"usage: mcpgw backend --listen HOST:PORT [--listen ...] [OPTIONS]\n"
"\n"
"Runs the reference MCP server: a real Streamable HTTP MCP server with the\n"
"tools echo, echo_region, add, sleep, whoami, counter_create,\n"
"counter_increment, notify, list_changed and ticks, for tests and benchmarks that\n"
"need replicas to scale out, kill and restart.\n"
"\n"
"  -c, --config FILE\n"
"        Read the backend:, listeners:, limits:, timeouts: and log: sections\n"
"        of a YAML (or JSON) configuration file.  Flags override file values.\n"
"  --listen HOST:PORT\n"
"        Listen on HOST:PORT (IPv6 as [::1]:PORT); repeatable.  Port 0 picks a\n"
"        free port.  For each listener a line 'listening on HOST:PORT' with\n"
"        the bound address is printed on stdout before anything else.  Given\n"
"        on the command line, replaces the file's listeners.\n"
"  --tls-cert FILE, --tls-key FILE\n"
"        PEM certificate chain and private key: the --listen listeners speak\n"
"        TLS and negotiate h2 or http/1.1 by ALPN.  Plain listeners serve\n"
"        HTTP/1.1 and HTTP/2 with prior knowledge (h2c).\n"
"  --era legacy|modern|dual\n"
"        Protocol era.  legacy: 2025-03-26 .. 2025-11-25 (initialize,\n"
"        Mcp-Session-Id sessions, GET stream, DELETE).  modern: 2026-07-28\n"
"        (stateless; SEP-2243 header validation; server/discover;\n"
"        subscriptions/listen; GET and DELETE answer 405).  dual: both on one\n"
"        endpoint, chosen per request (initialize or a session header means\n"
"        legacy, a modern protocol version means modern).  Default: dual.\n"
"  --state memory|hmac|redis\n"
"        Where modern counter handles keep their value.  memory: a map in\n"
"        this replica (other replicas answer the tool error 'unknown\n"
"        handle').  hmac: the value travels in a signed, expiring handle that\n"
"        every replica with the same key accepts.  redis: a key in a shared\n"
"        Redis.  Legacy counters always live in the session.  Default: memory.\n"
"  --redis URL\n"
"        Redis for --state redis: redis://[:PASSWORD@]HOST[:PORT][/DB] or\n"
"        unix:PATH (%XX escapes in the password are decoded).  An\n"
"        unreachable Redis is not fatal: counter tools answer\n"
"        'state store unavailable' while the server reconnects with backoff.\n"
"        Default: redis://127.0.0.1:6379.\n"
"  --key-file FILE\n"
"        HMAC keys for --state hmac: lines 'KID HEX64' ('#' comments); the\n"
"        first key signs, all keys verify.  Without it a random key is used\n"
"        and handles only work on this replica.\n"
"  --handle-ttl DURATION\n"
"        Lifetime of hmac and redis handles, and idle lifetime of memory\n"
"        handles.  Default: 1h.\n"
"  --sse always|never\n"
"        always: answer every request as an SSE stream (a progress or log\n"
"        notification, then the response).  never: answer application/json.\n"
"        Notifications are answered 202 either way.  Default: never.\n"
"  --delay-ms N\n"
"        Hold every JSON-RPC answer back N milliseconds (a timer; the server\n"
"        keeps serving other requests).  Default: 0.\n"
"  --id NAME\n"
"        Replica id returned by the whoami tool, GET /whoami and GET /stats.\n"
"        Default: backend-PORT (port of the first listener).\n"
"  --lost-session-status 404|400\n"
"        HTTP status for a request naming an unknown or expired session.\n"
"        The spec says 404; many deployed servers answer 400.  Default: 404.\n"
"  --session-idle-timeout DURATION\n"
"        A legacy session unused this long is forgotten (an open GET stream\n"
"        counts as use).  Default: 30m.\n"
"  --max-sessions N\n"
"        Most legacy sessions held at once; initialize beyond it is answered\n"
"        503.  Default: 100000.\n"
"  --sse-keepalive DURATION\n"
"        Interval of ': keepalive' comments on GET and subscriptions/listen\n"
"        streams.  Default: 15s.\n"
"  --path PATH\n"
"        The MCP endpoint.  Default: /mcp.\n"
"  --shutdown-timeout DURATION\n"
"        On SIGTERM or SIGINT: stop accepting, end long-lived streams (listen\n"
"        streams get their completion result), let in-flight requests finish\n"
"        for at most this long, then exit 0.  Default: 10s.\n"
"  --record N\n"
"        Keep the last N requests (1 to 10000) as they arrived: method,\n"
"        target, every header field in arrival order, body length and\n"
"        SHA-256 of the body bytes.  GET /debug/requests shows them as JSON,\n"
"        DELETE /debug/requests forgets them.  For gateway tests; off by\n"
"        default (then /debug/requests does not exist).\n"
"  --log-level error|warn|info|debug\n"
"        Logs go to stderr; client faults are logged at info.  Default: info.\n"
"  -h, --help\n"
"        Show this text and exit.\n"
"\n"
"DURATION is a number of seconds or a number with ms, s, m or h.\n"
"Other paths: GET /healthz answers 'ok'; GET /stats answers counters as JSON\n"
"(id, era, state, sessions, sessions_created, sessions_expired,\n"
"sessions_deleted, initialize_count, requests, requests_by_method,\n"
"lost_session_rejections, handle_losses, sse_streams_open, uptime_s,\n"
"connections, ...); GET /whoami answers the replica id.\n"
"\n"
"Exit status: 0 after a graceful stop, 1 on a runtime failure (such as a\n"
"listener that cannot bind), 2 on a usage or configuration error.\n",
	      out);
}

enum {
	OPT_LISTEN = 256, OPT_ERA, OPT_STATE, OPT_REDIS, OPT_KEY_FILE, OPT_SSE,
	OPT_DELAY, OPT_ID, OPT_LOST, OPT_TLS_CERT, OPT_TLS_KEY, OPT_PATH,
	OPT_IDLE, OPT_KEEPALIVE, OPT_LOG_LEVEL, OPT_MAX_SESSIONS,
	OPT_HANDLE_TTL, OPT_SHUTDOWN, OPT_RECORD,
};

static const struct option long_opts[] = {
	{"config", required_argument, NULL, 'c'},
	{"help", no_argument, NULL, 'h'},
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"era", required_argument, NULL, OPT_ERA},
	{"state", required_argument, NULL, OPT_STATE},
	{"redis", required_argument, NULL, OPT_REDIS},
	{"key-file", required_argument, NULL, OPT_KEY_FILE},
	{"sse", required_argument, NULL, OPT_SSE},
	{"delay-ms", required_argument, NULL, OPT_DELAY},
	{"id", required_argument, NULL, OPT_ID},
	{"lost-session-status", required_argument, NULL, OPT_LOST},
	{"tls-cert", required_argument, NULL, OPT_TLS_CERT},
	{"tls-key", required_argument, NULL, OPT_TLS_KEY},
	{"path", required_argument, NULL, OPT_PATH},
	{"session-idle-timeout", required_argument, NULL, OPT_IDLE},
	{"sse-keepalive", required_argument, NULL, OPT_KEEPALIVE},
	{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
	{"max-sessions", required_argument, NULL, OPT_MAX_SESSIONS},
	{"handle-ttl", required_argument, NULL, OPT_HANDLE_TTL},
	{"shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN},
	{"record", required_argument, NULL, OPT_RECORD},
	{NULL, 0, NULL, 0},
};

/* Flag values, applied on top of the configuration after parsing so that
 * flags win whatever their position relative to -c. */
struct flags {
	const char *config;
	const char *listen[MAX_LISTEN];
	size_t n_listen;
	const char *tls_cert, *tls_key;
	const char *era, *state, *redis, *key_file, *sse, *delay, *id, *lost;
	const char *path, *idle, *keepalive, *log_level, *max_sessions;
	const char *handle_ttl, *shutdown, *record;
};

/* A usage error: the message, where to find help, exit status 2. */
#define usage_error(...) mgw_cli_usage_error("backend", __VA_ARGS__)

static int parse_flags(int argc, char **argv, struct flags *f, int *help)
{
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":c:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c': f->config = optarg; break;
		case 'h': *help = 1; break;
		case OPT_LISTEN:
			if (f->n_listen == MAX_LISTEN)
				return usage_error("at most %d --listen options", MAX_LISTEN);
			f->listen[f->n_listen++] = optarg;
			break;
		case OPT_ERA: f->era = optarg; break;
		case OPT_STATE: f->state = optarg; break;
		case OPT_REDIS: f->redis = optarg; break;
		case OPT_KEY_FILE: f->key_file = optarg; break;
		case OPT_SSE: f->sse = optarg; break;
		case OPT_DELAY: f->delay = optarg; break;
		case OPT_ID: f->id = optarg; break;
		case OPT_LOST: f->lost = optarg; break;
		case OPT_TLS_CERT: f->tls_cert = optarg; break;
		case OPT_TLS_KEY: f->tls_key = optarg; break;
		case OPT_PATH: f->path = optarg; break;
		case OPT_IDLE: f->idle = optarg; break;
		case OPT_KEEPALIVE: f->keepalive = optarg; break;
		case OPT_LOG_LEVEL: f->log_level = optarg; break;
		case OPT_MAX_SESSIONS: f->max_sessions = optarg; break;
		case OPT_HANDLE_TTL: f->handle_ttl = optarg; break;
		case OPT_SHUTDOWN: f->shutdown = optarg; break;
		case OPT_RECORD: f->record = optarg; break;
		case ':':
			return usage_error("option '%s' needs a value",
			                   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return MGW_ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* The same bounds as the file's keys (backend/conf_backend.c): values past
 * them overflow where they become milliseconds or timevals. */
static int duration_flag(const char *name, const char *v, double *out,
                         double min, double max)
{
	double d;

	if (mgw_parse_duration(v, &d) != 0 || d < min || d > max)
		return usage_error("invalid %s '%s' (a duration such as 500ms, 10s, "
		                   "5m, from %gs to %gs)", name, v, min, max);
	*out = d;
	return 0;
}

/* Ids appear in logs, stats and tool results: keep them printable. */
static int id_valid(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 128)
		return 0;
	for (; *s; s++)
		if (*s <= 0x20 || *s >= 0x7f)
			return 0;
	return 1;
}

/* Copies the file's backend section (own strings) and applies the flags. */
static int apply_flags(struct mgw_backend *be, const struct mgw_config *cfg,
                       const struct flags *f)
{
	struct mgw_backend_conf *b = &be->conf;
	long long v;
	int rc;

	*b = cfg->backend;
	b->redis_url = b->key_file = b->id = b->path = NULL;
	if ((cfg->backend.redis_url && set_str(&b->redis_url, cfg->backend.redis_url)) ||
	    (cfg->backend.key_file && set_str(&b->key_file, cfg->backend.key_file)) ||
	    (cfg->backend.id && set_str(&b->id, cfg->backend.id)) ||
	    set_str(&b->path, cfg->backend.path ? cfg->backend.path : "/mcp"))
		return MGW_EXIT_RUNTIME;
	be->shutdown_timeout = cfg->shutdown_timeout;

	if (f->era && mgw_config_parse_era(f->era, &b->era) != 0)
		return usage_error("invalid --era '%s' (legacy, modern or dual)", f->era);
	if (f->state && mgw_config_parse_state(f->state, &b->state) != 0)
		return usage_error("invalid --state '%s' (memory, hmac or redis)", f->state);
	if (f->sse && mgw_config_parse_sse(f->sse, &b->sse) != 0)
		return usage_error("invalid --sse '%s' (always or never)", f->sse);
	if (f->delay) {
		if (mgw_parse_int(f->delay, 0, 600000, &v) != 0)
			return usage_error("invalid --delay-ms '%s' (0 to 600000)", f->delay);
		b->delay_ms = (uint32_t)v;
	}
	if (f->lost) {
		if (strcmp(f->lost, "404") != 0 && strcmp(f->lost, "400") != 0)
			return usage_error("invalid --lost-session-status '%s' (404 or 400)",
			                   f->lost);
		b->lost_session_status = atoi(f->lost);
	}
	if (f->max_sessions) {
		if (mgw_parse_int(f->max_sessions, 1, 100000000, &v) != 0)
			return usage_error("invalid --max-sessions '%s'", f->max_sessions);
		b->max_sessions = (size_t)v;
	}
	if (f->id) {
		if (!id_valid(f->id))
			return usage_error("invalid --id '%s' (1 to 128 visible ASCII characters)",
			                   f->id);
		set_str(&b->id, f->id);
	}
	if (f->path) {
		if (f->path[0] != '/' || strpbrk(f->path, "?# \t"))
			return usage_error("invalid --path '%s' (must start with '/')", f->path);
		set_str(&b->path, f->path);
	}
	if (f->redis) {
		if (strncmp(f->redis, "redis://", 8) != 0 && strncmp(f->redis, "unix:", 5) != 0)
			return usage_error("invalid --redis '%s' (redis://HOST[:PORT][/DB] or unix:PATH)",
			                   f->redis);
		set_str(&b->redis_url, f->redis);
	}
	if (f->key_file)
		set_str(&b->key_file, f->key_file);
	if (f->idle && (rc = duration_flag("--session-idle-timeout", f->idle,
	                                   &b->session_idle_timeout, 0.01,
	                                   7 * 86400.0)) != 0)
		return rc;
	if (f->keepalive && (rc = duration_flag("--sse-keepalive", f->keepalive,
	                                        &b->keepalive_interval, 0.01,
	                                        3600.0)) != 0)
		return rc;
	if (f->handle_ttl && (rc = duration_flag("--handle-ttl", f->handle_ttl,
	                                         &b->handle_ttl, 1.0,
	                                         366 * 86400.0)) != 0)
		return rc;
	if (f->shutdown && (rc = duration_flag("--shutdown-timeout", f->shutdown,
	                                       &be->shutdown_timeout, 0.0,
	                                       3600.0)) != 0)
		return rc;
	if (b->lost_session_status != 400 && b->lost_session_status != 404)
		b->lost_session_status = 404;
	if (!b->redis_url)
		set_str(&b->redis_url, "redis://127.0.0.1:6379");
	return 0;
}

static void conf_free(struct mgw_backend_conf *b)
{
	free(b->redis_url);
	free(b->key_file);
	free(b->id);
	free(b->path);
	memset(b, 0, sizeof(*b));
}

/* ---- running ---------------------------------------------------------- */

static void on_shutdown_done(void *arg)
{
	struct mgw_backend *be = arg;

	event_base_loopexit(be->base, NULL);
}

static void on_stop(int signo, void *arg)
{
	struct mgw_backend *be = arg;

	(void)signo;
	be->stopping = 1;
	/* Long-lived streams never finish by themselves: end them now so the
	 * shutdown only waits for real work. */
	mgw_be_streams_close_all(be);
	mgw_http_server_shutdown(be->http, be->shutdown_timeout, on_shutdown_done,
	                         be);
}

static struct mgw_be_store *make_store(struct mgw_backend *be, int *exit_code)
{
	char err[512] = "";
	struct mgw_be_store *s = NULL;

	*exit_code = MGW_EXIT_USAGE;
	switch (be->conf.state) {
	case MGW_STATE_MEMORY:
		s = mgw_be_store_memory_new(be->conf.handle_ttl, be->conf.max_sessions);
		if (!s)
			snprintf(err, sizeof(err), "out of memory");
		break;
	case MGW_STATE_HMAC:
		s = mgw_be_store_hmac_new(be->conf.key_file, be->conf.handle_ttl, err,
		                          sizeof(err));
		break;
	case MGW_STATE_REDIS:
		s = mgw_be_store_redis_new(be->base, be->conf.redis_url,
		                           be->conf.handle_ttl, err, sizeof(err));
		break;
	}
	if (!s)
		fprintf(stderr, "mcpgw backend: --state %s: %s\n",
		        mgw_be_state_name(be->conf.state), err);
	return s;
}

struct listen_spec {
	const char *address;
	const char *cert, *key;
};

/* Binds every listener and prints the "listening on" lines (stdout, the
 * only thing written there).  Returns an exit code or 0. */
static int start_listeners(struct mgw_backend *be, const struct listen_spec *ls,
                           size_t n)
{
	char bound[MAX_LISTEN][80];
	char err[512];

	for (size_t i = 0; i < n; i++) {
		SSL_CTX *tls = NULL;
		int rc;

		if (ls[i].cert) {
			tls = mgw_tls_server_ctx(ls[i].cert, ls[i].key, err, sizeof(err));
			if (!tls) {
				fprintf(stderr, "mcpgw backend: TLS for %s: %s\n",
				        ls[i].address, err);
				return MGW_EXIT_USAGE;
			}
		}
		rc = mgw_http_server_listen(be->http, ls[i].address, tls, bound[i],
		                            sizeof(bound[i]));
		if (tls)
			SSL_CTX_free(tls);
		if (rc == MGW_EINVAL) {
			fprintf(stderr, "mcpgw backend: invalid listen address '%s'\n",
			        ls[i].address);
			return MGW_EXIT_USAGE;
		}
		if (rc != 0) {
			fprintf(stderr, "mcpgw backend: cannot listen on %s: %s\n",
			        ls[i].address, strerror(errno));
			return MGW_EXIT_RUNTIME;
		}
		mgw_info(NULL, "listening on %s%s", bound[i], ls[i].cert ? " (TLS)" : "");
	}
	if (!be->conf.id) {
		const char *port = strrchr(bound[0], ':');
		char id[32];
		snprintf(id, sizeof(id), "backend-%s", port ? port + 1 : "0");
		set_str(&be->conf.id, id);
	}
	for (size_t i = 0; i < n; i++)
		printf("listening on %s\n", bound[i]);
	fflush(stdout);
	return 0;
}

int mgw_backend_main(int argc, char **argv)
{
	struct flags f = {0};
	struct mgw_config *cfg = NULL;
	struct mgw_backend be = {0};
	struct mgw_signals *sig = NULL;
	struct listen_spec ls[MAX_LISTEN];
	size_t n_ls = 0;
	enum mgw_log_level level;
	char err[1024];
	int help = 0, rc;

	rc = parse_flags(argc, argv, &f, &help);
	if (rc)
		return rc;
	if (help) {
		usage(stdout);
		return MGW_EXIT_OK;
	}
	cfg = f.config ? mgw_config_load(f.config, err, sizeof(err)) : mgw_config_defaults();
	if (!cfg) {
		fprintf(stderr, "mcpgw backend: %s\n", f.config ? err : "out of memory");
		return MGW_EXIT_USAGE;
	}
	rc = apply_flags(&be, cfg, &f);
	if (rc)
		goto out;
	level = cfg->log_level;
	if (f.log_level && mgw_log_parse_level(f.log_level, &level) != 0) {
		rc = usage_error("invalid --log-level '%s' (error, warn, info or debug)",
		                 f.log_level);
		goto out;
	}
	mgw_log_set_level(level);

	if (!f.tls_cert != !f.tls_key) {
		rc = usage_error("--tls-cert and --tls-key go together");
		goto out;
	}
	if (f.n_listen) {
		for (size_t i = 0; i < f.n_listen; i++) {
			char host[256];
			uint16_t port;
			if (mgw_parse_hostport(f.listen[i], host, sizeof(host), &port) != 0) {
				rc = usage_error("invalid --listen '%s' (HOST:PORT)", f.listen[i]);
				goto out;
			}
			ls[n_ls++] = (struct listen_spec){f.listen[i], f.tls_cert, f.tls_key};
		}
	} else {
		if (f.tls_cert) {
			rc = usage_error("--tls-cert applies to --listen listeners; none given");
			goto out;
		}
		if (cfg->n_listeners > MAX_LISTEN) {
			rc = usage_error("%zu listeners in the file; at most %d",
			                 cfg->n_listeners, MAX_LISTEN);
			goto out;
		}
		for (size_t i = 0; i < cfg->n_listeners; i++)
			ls[n_ls++] = (struct listen_spec){cfg->listeners[i].address,
			                                  cfg->listeners[i].tls_cert,
			                                  cfg->listeners[i].tls_key};
	}
	if (n_ls == 0) {
		rc = usage_error("no listener: give --listen HOST:PORT");
		goto out;
	}
	if (f.record) {
		long long v;

		if (mgw_parse_int(f.record, 1, MGW_BE_RECORD_MAX, &v) != 0) {
			rc = usage_error("invalid --record '%s' (1 to %d)", f.record,
			                 MGW_BE_RECORD_MAX);
			goto out;
		}
		be.record = mgw_be_record_new((size_t)v);
		if (!be.record) {
			rc = MGW_EXIT_RUNTIME;
			goto out;
		}
	}

	rc = MGW_EXIT_RUNTIME;
	be.base = event_base_new();
	if (!be.base)
		goto out;
	be.start_ms = mgw_now_ms();
	if (mgw_be_sessions_init(&be) != 0)
		goto out;
	/* Legacy counters live in sessions; only the modern era needs a store. */
	if (be.conf.era != MGW_ERA_LEGACY) {
		be.store = make_store(&be, &rc);
		if (!be.store)
			goto out;
		rc = MGW_EXIT_RUNTIME;
	}
	be.http = mgw_http_server_new(be.base, &cfg->limits, mgw_be_on_request, &be);
	if (!be.http)
		goto out;
	/* before "listening on": a SIGTERM right after it is a graceful
	 * stop, not the default action */
	sig = mgw_signals_new(be.base, on_stop, &be);
	if (!sig || mgw_signals_ignore_hup(sig, be.base) != 0) {
		rc = MGW_EXIT_RUNTIME;
		goto out;
	}
	rc = start_listeners(&be, ls, n_ls);
	if (rc)
		goto out;
	mgw_info(NULL, "mcpgw backend %s: era %s, state %s, path %s, sse %s", be.conf.id,
	         mgw_be_era_name(be.conf.era), mgw_be_state_name(be.conf.state),
	         be.conf.path, be.conf.sse == MGW_SSE_ALWAYS ? "always" : "never");
	event_base_dispatch(be.base);
	mgw_info(NULL, "mcpgw backend %s: stopped", be.conf.id);
	rc = be.stopping ? MGW_EXIT_OK : MGW_EXIT_RUNTIME;
out:
	/* Order matters: freeing the server aborts open exchanges (their calls
	 * and streams go away), then the store answers its pending commands,
	 * then nothing refers to sessions any more. */
	mgw_signals_free(sig);
	mgw_http_server_free(be.http);
	be.http = NULL;
	mgw_be_store_free(be.store);
	be.store = NULL;
	mgw_be_sessions_deinit(&be);
	mgw_be_record_free(be.record);
	if (be.base)
		event_base_free(be.base);
	conf_free(&be.conf);
	mgw_config_free(cfg);
	return rc;
}
