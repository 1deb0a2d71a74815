/* cmd.c - `mcpgw backend`: command line and configuration, startup (state
 * store, listeners, the "listening on" lines), signals and graceful
 * shutdown of the reference MCP server. */
#include "autoconf.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "backend/backend.h"
#include "backend/record.h"
#include "backend/mrtr.h"
#include "backend/state.h"
#include "backend/tasks.h"
#include "backend/conf_backend.h"
#include "core/commands.h"
#include "conf/config.h"
#include "conf/cli_config.h"
#include "core/cli.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/signals.h"
#include "http/server.h"
#include "net/redis.h"
#include "net/serve_listeners.h"
#include "util/parse.h"
#include "util/redis_url.h"
#include "util/time.h"

static void usage(FILE *out)
{
	fputs(
"usage: mcpgw backend --listen HOST:PORT [--listen ...] [OPTIONS]\n"
"\n"
"Runs the reference MCP server: a real Streamable HTTP MCP server with the\n"
"tools echo, echo_region, add, sleep, whoami, counter_create,\n"
"counter_increment, book, notify, list_changed, ticks and slow_job (a task), for\n"
"tests and benchmarks that\n"
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
"        Redis for --state redis and --request-state redis:\n"
"        redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], rediss://... (TLS) or\n"
"        unix:PATH (%XX escapes in the password are decoded).  An\n"
"        unreachable Redis is not fatal: counter tools answer\n"
"        'state store unavailable' while the server reconnects with backoff.\n"
"        Default: redis://127.0.0.1:6379.\n"
"  --redis-ca-file FILE, --redis-cert-file FILE, --redis-key-file FILE\n"
"        For a rediss:// --redis (with redis:// these TLS flags are a usage\n"
"        error): the CAs the server's certificate must chain to (default:\n"
"        the system store), and a client certificate and key, not\n"
"        encrypted (needed by a redis-server with tls-auth-clients yes).\n"
"  --redis-server-name NAME\n"
"        SNI and the name the certificate must match (default: the URL's\n"
"        host).\n"
"  --redis-no-verify\n"
"        Do not verify the Redis server's certificate (test setups only;\n"
"        logged as a warning at start).\n"
"  --key-file FILE\n"
"        HMAC keys for --state hmac: lines 'KID HEX64' ('#' comments); the\n"
"        first key signs, all keys verify.  Without it a random key is used\n"
"        and handles only work on this replica.\n"
"  --handle-ttl DURATION\n"
"        Lifetime of hmac and redis handles, and idle lifetime of memory\n"
"        handles.  Default: 1h.\n"
"  --request-state memory|sealed|redis\n"
"        Where the book tool's multi round-trip dialogues (MRTR) keep their\n"
"        requestState.  memory: an entry in this replica, consumed by its use\n"
"        (another replica answers the JSON-RPC error -32040).  sealed: \n"
"        'rs1.' base64url(expiry, state) '.' HMAC-SHA256 with the --key-file\n"
"        keys, so any replica with the same keys continues.  redis: 'rr1.' +\n"
"        random id naming a key in the --redis server, so any replica\n"
"        sharing it continues (Redis unavailable: JSON-RPC error -32047).\n"
"        Default: memory.\n"
"  --request-state-ttl DURATION\n"
"        Lifetime of a requestState (1s to 24h).  Default: 10m.\n"
"  --request-state-bind-principal\n"
"        Bind each requestState to a digest of the request's Authorization\n"
"        field: presented with another one it is refused (-32045).\n"
"  --single-use\n"
"        Sealed: remember each requestState presented here until it expires,\n"
"        refusing a second presentation (-32046).  Per replica.  Redis: the\n"
"        state is marked used in Redis as it is read (atomically), so a\n"
"        second presentation is refused on every replica (-32046).\n"
"  --tasks memory|redis\n"
"        Where the records of tasks (slow_job run as a task; tasks/get,\n"
"        tasks/cancel, tasks/update, legacy tasks/result) live.  memory: a map\n"
"        in this replica (another replica answers -32602 'Task not found').\n"
"        redis: a hash per task in the --redis Redis (the --state redis\n"
"        connection when both are redis), so any replica answers for any task.\n"
"        The job runs in the replica that created it; a task still working\n"
"        3 s past its job's end (its replica stopped) reads failed.\n"
"        Default: memory.\n"
"  --max-tasks N\n"
"        Most tasks held: records kept (memory) and jobs running here (both).\n"
"        A task beyond it is refused (-32603).  Default: 10000.\n"
"  --task-ttl DURATION\n"
"        Lifetime of a task record from its creation (ttl/ttlMs; a legacy\n"
"        client may ask for less).  1s to 24h.  Default: 5m.\n"
"  --task-poll-interval DURATION\n"
"        The pollInterval/pollIntervalMs tasks suggest.  Default: 100ms.\n"
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
"  --version\n"
"        Print the version (and the libraries built in) and exit.\n"
"\n"
"DURATION is a number of seconds or a number with ms, s, m or h.\n"
"Other paths: GET /healthz answers 'ok'; GET /stats answers counters as JSON\n"
"(id, era, state, sessions, sessions_created, sessions_expired,\n"
"sessions_deleted, initialize_count, requests, requests_by_method,\n"
"lost_session_rejections, handle_losses, sse_streams_open, uptime_s,\n"
"mrtr_states_issued, mrtr_state_bytes_total, mrtr_state_bytes_max,\n"
"mrtr_completed, mrtr_refusals, mrtr_store_ops (redis), tasks,\n"
"tasks_created, tasks_completed, tasks_cancelled, tasks_refused,\n"
"tasks_unknown, tasks_running, tasks_held,\n"
"connections, ...); GET /whoami answers the replica id.\n"
"\n"
"Exit status: 0 after a graceful stop, 1 on a runtime failure (such as a\n"
"listener that cannot bind), 2 on a usage or configuration error.\n",
	      out);
}

enum {
	OPT_ERA = 256, OPT_STATE, OPT_REDIS, OPT_KEY_FILE, OPT_SSE, OPT_DELAY,
	OPT_ID, OPT_LOST, OPT_PATH, OPT_IDLE, OPT_KEEPALIVE, OPT_MAX_SESSIONS,
	OPT_HANDLE_TTL, OPT_SHUTDOWN, OPT_RECORD, OPT_RS, OPT_RS_TTL,
	OPT_RS_BIND, OPT_SINGLE_USE, OPT_TASKS, OPT_MAX_TASKS, OPT_TASK_TTL,
	OPT_TASK_POLL, OPT_REDIS_CA, OPT_REDIS_CERT, OPT_REDIS_KEY,
	OPT_REDIS_NAME, OPT_REDIS_NO_VERIFY,
};

static const struct option long_opts[] = {
	MGW_CLI_SERVER_OPTIONS,
	{"era", required_argument, NULL, OPT_ERA},
	{"state", required_argument, NULL, OPT_STATE},
	{"redis", required_argument, NULL, OPT_REDIS},
	{"redis-ca-file", required_argument, NULL, OPT_REDIS_CA},
	{"redis-cert-file", required_argument, NULL, OPT_REDIS_CERT},
	{"redis-key-file", required_argument, NULL, OPT_REDIS_KEY},
	{"redis-server-name", required_argument, NULL, OPT_REDIS_NAME},
	{"redis-no-verify", no_argument, NULL, OPT_REDIS_NO_VERIFY},
	{"key-file", required_argument, NULL, OPT_KEY_FILE},
	{"sse", required_argument, NULL, OPT_SSE},
	{"delay-ms", required_argument, NULL, OPT_DELAY},
	{"id", required_argument, NULL, OPT_ID},
	{"lost-session-status", required_argument, NULL, OPT_LOST},
	{"path", required_argument, NULL, OPT_PATH},
	{"session-idle-timeout", required_argument, NULL, OPT_IDLE},
	{"sse-keepalive", required_argument, NULL, OPT_KEEPALIVE},
	{"max-sessions", required_argument, NULL, OPT_MAX_SESSIONS},
	{"handle-ttl", required_argument, NULL, OPT_HANDLE_TTL},
	{"shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN},
	{"record", required_argument, NULL, OPT_RECORD},
	{"request-state", required_argument, NULL, OPT_RS},
	{"request-state-ttl", required_argument, NULL, OPT_RS_TTL},
	{"request-state-bind-principal", no_argument, NULL, OPT_RS_BIND},
	{"single-use", no_argument, NULL, OPT_SINGLE_USE},
	{"tasks", required_argument, NULL, OPT_TASKS},
	{"max-tasks", required_argument, NULL, OPT_MAX_TASKS},
	{"task-ttl", required_argument, NULL, OPT_TASK_TTL},
	{"task-poll-interval", required_argument, NULL, OPT_TASK_POLL},
	{NULL, 0, NULL, 0},
};

/* Flag values, applied on top of the configuration after parsing so that
 * flags win whatever their position relative to -c. */
struct flags {
	struct mgw_cli_server srv;  /* -c, -h, --listen, TLS, --log-level */
	const char *era, *state, *redis, *key_file, *sse, *delay, *id, *lost;
	const char *path, *idle, *keepalive, *max_sessions;
	const char *handle_ttl, *shutdown, *record, *rs, *rs_ttl;
	const char *tasks, *max_tasks, *task_ttl, *task_poll;
	const char *redis_ca, *redis_cert, *redis_key, *redis_name;
	int rs_bind, single_use, redis_no_verify;
};

/* A usage error: the message, where to find help, exit status 2. */
#define usage_error(...) mgw_cli_usage_error("backend", __VA_ARGS__)

/* An option of this command's own (mgw_cli_parse_server takes the rest). */
static int on_opt(int c, char *v, void *arg)
{
	struct flags *f = arg;

	switch (c) {
	case OPT_ERA: f->era = v; break;
	case OPT_STATE: f->state = v; break;
	case OPT_REDIS: f->redis = v; break;
	case OPT_REDIS_CA: f->redis_ca = v; break;
	case OPT_REDIS_CERT: f->redis_cert = v; break;
	case OPT_REDIS_KEY: f->redis_key = v; break;
	case OPT_REDIS_NAME: f->redis_name = v; break;
	case OPT_REDIS_NO_VERIFY: f->redis_no_verify = 1; break;
	case OPT_KEY_FILE: f->key_file = v; break;
	case OPT_SSE: f->sse = v; break;
	case OPT_DELAY: f->delay = v; break;
	case OPT_ID: f->id = v; break;
	case OPT_LOST: f->lost = v; break;
	case OPT_PATH: f->path = v; break;
	case OPT_IDLE: f->idle = v; break;
	case OPT_KEEPALIVE: f->keepalive = v; break;
	case OPT_MAX_SESSIONS: f->max_sessions = v; break;
	case OPT_HANDLE_TTL: f->handle_ttl = v; break;
	case OPT_SHUTDOWN: f->shutdown = v; break;
	case OPT_RECORD: f->record = v; break;
	case OPT_RS: f->rs = v; break;
	case OPT_RS_TTL: f->rs_ttl = v; break;
	case OPT_RS_BIND: f->rs_bind = 1; break;
	case OPT_SINGLE_USE: f->single_use = 1; break;
	case OPT_TASKS: f->tasks = v; break;
	case OPT_MAX_TASKS: f->max_tasks = v; break;
	case OPT_TASK_TTL: f->task_ttl = v; break;
	case OPT_TASK_POLL: f->task_poll = v; break;
	default: return MGW_EINVAL;
	}
	return 0;
}

static const struct mgw_cli_server_cmd backend_cmd = {
	.name = "backend", .longopts = long_opts, .on_opt = on_opt,
	.usage = usage,
};

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

/* --tasks, --max-tasks, --task-ttl, --task-poll-interval (bounds as the
 * file's keys). */
static int task_flags(struct mgw_backend_conf *b, const struct flags *f)
{
	long long v;
	int rc;

	if (f->tasks && mgw_config_parse_tasks(f->tasks, &b->tasks) != 0)
		return usage_error("invalid --tasks '%s' (memory or redis)", f->tasks);
	if (f->max_tasks) {
		if (mgw_parse_int(f->max_tasks, 1, 10000000, &v) != 0)
			return usage_error("invalid --max-tasks '%s' (1 to 10000000)",
			                   f->max_tasks);
		b->max_tasks = (size_t)v;
	}
	if (f->task_ttl && (rc = duration_flag("--task-ttl", f->task_ttl,
	                                       &b->task_ttl, 1.0, 86400.0)) != 0)
		return rc;
	if (f->task_poll && (rc = duration_flag("--task-poll-interval",
	                                        f->task_poll,
	                                        &b->task_poll_interval, 0.01,
	                                        60.0)) != 0)
		return rc;
	return 0;
}

/* The Redis TLS options (flags or the file's redis_tls:) go with a
 * rediss:// URL only: with another they would be silently unused. */
static int redis_tls_url(const struct mgw_backend_conf *b,
                         const struct flags *f)
{
	const struct mgw_redis_tls_conf *t = &b->redis_tls;
	const char *url = b->redis_url ? b->redis_url : "redis://127.0.0.1:6379";
	const char *opt = f->redis_ca ? "--redis-ca-file"
	                  : f->redis_cert ? "--redis-cert-file"
	                  : f->redis_key ? "--redis-key-file"
	                  : f->redis_name ? "--redis-server-name"
	                  : f->redis_no_verify ? "--redis-no-verify"
	                  : "the configuration's redis_tls:";
	char display[300], err[256];

	if ((!t->ca_file && !t->cert_file && !t->key_file && !t->server_name &&
	     t->verify) || strncmp(url, "rediss://", 9) == 0)
		return 0;
	if (mgw_redis_url_check(url, display, sizeof(display), err,
	                        sizeof(err)) != 0)
		snprintf(display, sizeof(display), "?");
	return usage_error("%s is for a rediss:// --redis, but the Redis URL "
	                   "is '%s' (%s), so it would not be used; give "
	                   "--redis rediss://HOST:PORT for TLS", opt, display,
	                   strncmp(url, "unix:", 5) == 0 ? "a Unix socket"
	                                                 : "plain redis://");
}

/* --redis and its TLS options; the TLS files are loaded once here, so a
 * bad one is a usage error rather than a connection that never comes up. */
static int redis_flags(struct mgw_backend_conf *b, const struct flags *f)
{
	struct mgw_redis_tls_conf *t = &b->redis_tls;
	char err[256];
	SSL_CTX *ctx;
	int rc;

	if (f->redis) {
		if (mgw_redis_url_check(f->redis, NULL, 0, err, sizeof(err)) != 0)
			return usage_error("invalid --redis: %s", err);
		mgw_cli_set_str(&b->redis_url, f->redis);
	}
	if (f->redis_ca)
		mgw_cli_set_str(&t->ca_file, f->redis_ca);
	if (f->redis_cert)
		mgw_cli_set_str(&t->cert_file, f->redis_cert);
	if (f->redis_key)
		mgw_cli_set_str(&t->key_file, f->redis_key);
	if (f->redis_name)
		mgw_cli_set_str(&t->server_name, f->redis_name);
	if (f->redis_no_verify)
		t->verify = 0;
	if ((rc = redis_tls_url(b, f)) != 0)
		return rc;
	if (!f->redis_ca && !f->redis_cert && !f->redis_key)
		return 0;
	ctx = mgw_redis_tls_ctx(t, err, sizeof(err));
	if (!ctx)
		return usage_error("--redis TLS options: %s", err);
	SSL_CTX_free(ctx);
	return 0;
}

/* The file's redis_tls strings, copied (the snapshot owns its own). */
static int copy_redis_tls(struct mgw_redis_tls_conf *t,
                          const struct mgw_redis_tls_conf *from)
{
	t->ca_file = t->cert_file = t->key_file = t->server_name = NULL;
	return (from->ca_file && mgw_cli_set_str(&t->ca_file, from->ca_file)) ||
	       (from->cert_file &&
	        mgw_cli_set_str(&t->cert_file, from->cert_file)) ||
	       (from->key_file && mgw_cli_set_str(&t->key_file, from->key_file)) ||
	       (from->server_name &&
	        mgw_cli_set_str(&t->server_name, from->server_name));
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
	if ((cfg->backend.redis_url &&
	     mgw_cli_set_str(&b->redis_url, cfg->backend.redis_url)) ||
	    (cfg->backend.key_file &&
	     mgw_cli_set_str(&b->key_file, cfg->backend.key_file)) ||
	    (cfg->backend.id && mgw_cli_set_str(&b->id, cfg->backend.id)) ||
	    mgw_cli_set_str(&b->path, cfg->backend.path ? cfg->backend.path
	                                                : "/mcp") ||
	    copy_redis_tls(&b->redis_tls, &cfg->backend.redis_tls))
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
		mgw_cli_set_str(&b->id, f->id);
	}
	if (f->path) {
		if (f->path[0] != '/' || strpbrk(f->path, "?# \t"))
			return usage_error("invalid --path '%s' (must start with '/')", f->path);
		mgw_cli_set_str(&b->path, f->path);
	}
	if ((rc = redis_flags(b, f)) != 0)
		return rc;
	if (f->key_file)
		mgw_cli_set_str(&b->key_file, f->key_file);
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
	if (f->rs) {
		if (strcmp(f->rs, "memory") == 0)
			b->request_state = MGW_RS_MEMORY;
		else if (strcmp(f->rs, "sealed") == 0)
			b->request_state = MGW_RS_SEALED;
		else if (strcmp(f->rs, "redis") == 0)
			b->request_state = MGW_RS_REDIS;
		else
			return usage_error("invalid --request-state '%s' (memory, sealed or redis)",
			                   f->rs);
	}
	if (f->rs_ttl && (rc = duration_flag("--request-state-ttl", f->rs_ttl,
	                                     &b->request_state_ttl, 1.0,
	                                     86400.0)) != 0)
		return rc;
	if (f->rs_bind)
		b->request_state_bind_principal = 1;
	if (f->single_use)
		b->single_use = 1;
	if ((rc = task_flags(b, f)) != 0)
		return rc;
	if (f->shutdown && (rc = duration_flag("--shutdown-timeout", f->shutdown,
	                                       &be->shutdown_timeout, 0.0,
	                                       3600.0)) != 0)
		return rc;
	if (b->lost_session_status != 400 && b->lost_session_status != 404)
		b->lost_session_status = 404;
	if (!b->redis_url)
		mgw_cli_set_str(&b->redis_url, "redis://127.0.0.1:6379");
	return 0;
}

static void conf_free(struct mgw_backend_conf *b)
{
	free(b->redis_url);
	free(b->redis_tls.ca_file);
	free(b->redis_tls.cert_file);
	free(b->redis_tls.key_file);
	free(b->redis_tls.server_name);
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
		                           &be->conf.redis_tls, be->conf.handle_ttl, err, sizeof(err));
		break;
	}
	if (!s)
		fprintf(stderr, "mcpgw backend: --state %s: %s\n",
		        mgw_be_state_name(be->conf.state), err);
	return s;
}

/* One listener socket on the HTTP server (one worker: the loop). */
static int on_bind(void *arg, unsigned worker, const char *address,
                   SSL_CTX *tls, int reuseport, char *bound, size_t boundlen)
{
	struct mgw_backend *be = arg;

	(void)worker;
	(void)reuseport;
	return mgw_http_server_listen(be->http, address, tls, bound, boundlen);
}

/* Binds every listener and prints the "listening on" lines (stdout, the
 * only thing written there); without --id the replica is named after
 * the first one's port.  Returns an exit code or 0. */
static int start_listeners(struct mgw_backend *be,
                           const struct mgw_listen_spec *ls, size_t n)
{
	struct mgw_serve_listeners sl = {
		.cmd = "backend", .n_workers = 1, .bind = on_bind, .arg = be,
	};
	int rc = mgw_serve_listeners_open(&sl, ls, n);

	if (rc)
		return mgw_cli_exit_code(rc);
	if (!be->conf.id) {
		const char *port = strrchr(sl.bound[0], ':');
		char id[32];
		snprintf(id, sizeof(id), "backend-%s", port ? port + 1 : "0");
		mgw_cli_set_str(&be->conf.id, id);
	}
	return 0;
}

/* --record N: the ring of recent requests behind /debug/requests. */
static int make_record(struct mgw_backend *be, const char *record)
{
	long long v;

	if (!record)
		return 0;
	if (mgw_parse_int(record, 1, MGW_BE_RECORD_MAX, &v) != 0)
		return usage_error("invalid --record '%s' (1 to %d)", record,
		                   MGW_BE_RECORD_MAX);
	be->record = mgw_be_record_new((size_t)v);
	return be->record ? 0 : MGW_EXIT_RUNTIME;
}

/* A rediss:// --redis whose certificate is not checked is logged: the
 * operator must see it (as serve logs its tls.verify: false). */
static void no_verify_warning(const struct mgw_backend_conf *b)
{
	char display[300], err[256];

	if (b->redis_tls.verify || !b->redis_url ||
	    strncmp(b->redis_url, "rediss://", 9) != 0 ||
	    mgw_redis_url_check(b->redis_url, display, sizeof(display), err,
	                        sizeof(err)) != 0)
		return;
	mgw_warn(NULL, "--redis-no-verify (redis_tls.verify: false): TLS "
	         "certificate verification is off: the Redis server at %s is "
	         "not authenticated (test setups only)", display);
}

/* Everything the flags and the file decide, before anything runs.
 * Returns 0 or an exit code. */
static int configure(struct mgw_backend *be, const struct mgw_config *cfg,
                     const struct flags *f, struct mgw_listen_spec *ls,
                     size_t *n_ls)
{
	int rc = apply_flags(be, cfg, f);

	if (rc)
		return rc;
	rc = mgw_cli_log_level("backend", f->srv.log_level, cfg->log_level);
	if (rc)
		return rc;
	no_verify_warning(&be->conf);
	rc = mgw_cli_listen_specs("backend", &f->srv.listen, cfg->listeners,
	                          cfg->n_listeners, " in the file;", ls, n_ls);
	if (rc)
		return rc;
	return make_record(be, f->record);
}

/* The loop and what hangs on it: sessions, the state store, the HTTP
 * server.  Returns 0 or an exit code. */
static int setup(struct mgw_backend *be, const struct mgw_config *cfg)
{
	int rc;

	be->base = event_base_new();
	if (!be->base)
		return MGW_EXIT_RUNTIME;
	be->start_ms = mgw_now_ms();
	if (mgw_be_sessions_init(be) != 0)
		return MGW_EXIT_RUNTIME;
	/* Legacy counters live in sessions; only the modern era needs a store. */
	if (be->conf.era != MGW_ERA_LEGACY) {
		be->store = make_store(be, &rc);
		if (!be->store)
			return rc;
		{
			char err[512] = "";
			if (mgw_mrtr_init(be, err, sizeof(err)) != 0) {
				fprintf(stderr, "mcpgw backend: --request-state %s: %s\n",
				        mgw_be_rs_name(be->conf.request_state), err);
				return MGW_EXIT_USAGE;
			}
		}
	}
	{
		char err[512] = "";
		if (mgw_be_tasks_init(be, mgw_be_store_redis_conn(be->store), err,
		                      sizeof(err)) != 0) {
			fprintf(stderr, "mcpgw backend: --tasks %s: %s\n",
			        mgw_config_tasks_name(be->conf.tasks), err);
			return MGW_EXIT_USAGE;
		}
	}
	be->http = mgw_http_server_new(be->base, &cfg->limits, mgw_be_on_request,
	                               be);
	return be->http ? 0 : MGW_EXIT_RUNTIME;
}

int mgw_backend_main(int argc, char **argv)
{
	struct flags f = {0};
	struct mgw_config *cfg = NULL;
	struct mgw_backend be = {0};
	struct mgw_signals *sig = NULL;
	struct mgw_listen_spec ls[MGW_CLI_MAX_LISTEN];
	size_t n_ls = 0;
	int rc;

	rc = mgw_cli_server_begin(&backend_cmd, argc, argv, &f.srv, &f, &cfg);
	if (!cfg)
		return rc;
	rc = configure(&be, cfg, &f, ls, &n_ls);
	if (rc)
		goto out;
	rc = setup(&be, cfg);
	if (rc)
		goto out;
	/* before "listening on": a SIGTERM right after it is a graceful
	 * stop, not the default action */
	sig = mgw_signals_server_new(be.base, on_stop, &be);
	if (!sig) {
		rc = MGW_EXIT_RUNTIME;
		goto out;
	}
	rc = start_listeners(&be, ls, n_ls);
	if (rc)
		goto out;
	mgw_info(NULL, "mcpgw backend %s: era %s, state %s, tasks %s, "
	         "request-state %s%s%s, path %s, sse %s", be.conf.id,
	         mgw_be_era_name(be.conf.era), mgw_be_state_name(be.conf.state),
	         mgw_config_tasks_name(be.conf.tasks),
	         mgw_be_rs_name(be.conf.request_state),
	         be.conf.request_state_bind_principal ? " bound to principal" : "",
	         be.conf.single_use ? " single-use" : "",
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
	/* the state store first: a Redis connection the task store borrows
	 * answers the task store's pending commands while it still exists */
	mgw_be_store_free(be.store);
	be.store = NULL;
	mgw_be_tasks_deinit(&be);
	mgw_mrtr_deinit(&be);
	mgw_be_sessions_deinit(&be);
	mgw_be_record_free(be.record);
	if (be.base)
		event_base_free(be.base);
	conf_free(&be.conf);
	mgw_config_free(cfg);
	return rc;
}
