/* cell.c - one repetition of one cell, start to finish.
 *
 * The order inside a repetition: redis-server (when the cell's handles
 * or sessions live there), the replicas, then the gateways or the
 * external proxy, each waited for until it answers its health check; the
 * load client last, with the bench's clock noted at its start.  A victim
 * is killed at kill_at seconds on that clock and verified dead three
 * ways (reaped with the signal, its port refusing connections, a
 * replacement on the same port passing its health check); the
 * replacement starts after the readiness delay, the way a Kubernetes
 * pod's successor becomes ready some seconds after the old one died.
 * After the load client finished, the gateways' re-pin counters are read,
 * every process that was not meant to die is checked to be alive, and
 * the fleet is stopped.
 *
 * A repetition that could not be measured as intended (a component that
 * did not start, a kill that did not land, a replica that died by
 * itself, a load run without a report) is recorded as invalid with the
 * reason: aggregation leaves it out instead of counting it as a run
 * without losses. */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/errors.h"
#include "util/time.h"
#include "bench/src/cell.h"
#include "bench/src/net.h"
#include "bench/src/proc.h"
#include "bench/src/report_json.h"
#include "bench/src/scene.h"
#include "bench/src/subst.h"

/* Bounds on the waits of a repetition. */
#define START_TIMEOUT_S 10.0   /* "listening on" and the health check */
#define STOP_GRACE_S 10.0      /* SIGTERM to SIGKILL at teardown */
#define KILL_REAP_S 15.0       /* a victim must be reaped this soon */
#define LOAD_SLACK_S 60.0      /* the load client's run beyond --duration */
#define CLOCK_WAIT_S 10.0      /* for the load client's --clock-file */
#define BIND_ATTEMPTS 25       /* a replacement's port still in use */
#define SHUTDOWN_TIMEOUT "5s"  /* graceful stop of replicas and gateways */
#define LOAD_TIMEOUT "5s"      /* the load client's per-call bound */
#define STATS_PATH "/mcpgw/stats"
#define MRTR_ROUNDS 3          /* rounds of a book dialogue */
#define TASK_MS 300            /* slow_job's work per task */

#define PATH_LEN 1024
#define SENTINEL_MASTER "mcpgw-bench"
#define SENTINEL_WAIT_S 30.0   /* the set's readiness, and the failover */

/* An argv built from formatted pieces, all storage inline. */
struct argv_buf {
	char *v[48];
	int n;
	char store[8192];
	size_t used;
};

static void av_init(struct argv_buf *a)
{
	a->n = 0;
	a->used = 0;
	a->v[0] = NULL;
}

__attribute__((format(printf, 2, 3)))
static void av_add(struct argv_buf *a, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (a->n + 1 >= (int)(sizeof(a->v) / sizeof(a->v[0])))
		return;
	va_start(ap, fmt);
	len = vsnprintf(a->store + a->used, sizeof(a->store) - a->used, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(a->store) - a->used)
		return;
	a->v[a->n++] = a->store + a->used;
	a->v[a->n] = NULL;
	a->used += (size_t)len + 1;
}

static char *av_join(const struct argv_buf *a)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < a->n; i++)
		len += strlen(a->v[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < a->n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, a->v[i]);
	}
	return s;
}

struct rep {
	struct mgw_bench_env *env;
	const struct mgw_bench_opts *o;
	const struct mgw_bench_cell *c;
	int rep;
	char dir[PATH_LEN];     /* absolute or OUT-relative logs directory */
	char rel_logs[PATH_LEN];

	struct mgw_bench_proc redis;
	/* a Sentinel cell's: the master is redis; its replica, the three
	 * sentinels (ports in the processes) */
	struct mgw_bench_proc redis_replica;
	struct mgw_bench_proc sentinel[3];
	struct mgw_bench_proc replica[MGW_BENCH_MAX_REPLICAS];
	struct mgw_bench_proc gateway[2];
	int n_gateways;
	struct mgw_bench_proc external;
	struct mgw_bench_proc replacement;
	struct mgw_bench_proc load;
	struct mgw_bench_proc *victim;
	int victim_index;       /* replica or gateway number, 1-based */
	int redis_port;
	int ext_port;
	char ext_cmd[8192];

	uint64_t t0_ns;         /* the load client's t = 0 (CLOCK_MONOTONIC) */
	struct timespec t0_wall;
	int t0_from_load;       /* t0_ns read from its --clock-file */

	json_t *kills;
	double kill_planned_s;  /* the kill being made: its scheduled time */
	json_t *samples;        /* sample_every_s > 0: the samples so far */
	double next_sample_s;   /* due time of the next sample */
	char progress_path[PATH_LEN]; /* the load client's --progress-file */
	json_t *gw_stats;
	json_t *replica_stats;  /* stateful flows: the replicas' /stats */
	json_int_t repins;
	int have_repins;
	json_t *targets;
	char *load_cmd;
	int valid;
	char reason[512];
};

__attribute__((format(printf, 2, 3)))
static void invalid(struct rep *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->valid)
		return; /* the first reason is the one that matters */
	r->valid = 0;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

static double since_t0(const struct rep *r)
{
	return r->t0_ns ? (double)(mgw_now_ns() - r->t0_ns) / 1e9 : 0.0;
}

static void iso_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.20s.%03dZ", base, (int)(ts->tv_nsec / 1000000));
}

static json_t *now_iso(void)
{
	struct timespec ts;
	char buf[40];

	clock_gettime(CLOCK_REALTIME, &ts);
	iso_time(&ts, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *secs(double v)
{
	return json_real(round(v * 1000.0) / 1000.0);
}

/* snprintf for paths: a path that does not fit is an error, never a
 * silently shortened name (vsnprintf also keeps -Wformat-truncation to
 * the cases that matter). */
__attribute__((format(printf, 3, 4)))
static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? MGW_EINVAL : 0;
}

int mgw_bench_mkdirs(const char *dir)
{
	char tmp[PATH_LEN];
	size_t len;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return MGW_EINVAL;
	len = strlen(tmp);
	for (size_t i = 1; i <= len; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return MGW_EIO;
		if (i < len)
			tmp[i] = '/';
	}
	return 0;
}

static void env_note_port(struct mgw_bench_env *e, json_int_t port)
{
	if (port <= 0 || port > 65535)
		return;
	for (size_t i = 0; i < e->n_ports; i++)
		if (e->ports[i] == port)
			return;
	if (e->n_ports < MGW_BENCH_MAX_PORTS)
		e->ports[e->n_ports++] = (uint16_t)port;
}

static void note_port(struct rep *r, int port)
{
	env_note_port(r->env, port);
}

void mgw_bench_env_note_record(struct mgw_bench_env *e, const json_t *rec)
{
	const char *const lists[] = { "processes", "kills" };
	const json_t *p;
	size_t i;

	for (size_t l = 0; l < 2; l++)
		json_array_foreach(json_object_get(rec, lists[l]), i, p)
			env_note_port(e, json_integer_value(json_object_get(p, "port")));
}

static void log_path(const struct rep *r, char *buf, size_t len,
                     const char *name, const char *ext)
{
	if (pathf(buf, len, "%s/%s.%s", r->dir, name, ext) != 0)
		buf[0] = '\0';
}

/* ---- starting the fleet ------------------------------------------------ */

/* Polls GET path on p's port until it answers 200, p exits, or
 * START_TIMEOUT_S passes.  Returns 0, MGW_ECLOSED or MGW_ETIMEDOUT. */
static int wait_ready(struct mgw_bench_proc *p, const char *path)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(START_TIMEOUT_S * 1e9);

	for (;;) {
		int status = 0;

		if (mgw_bench_http_get(p->port, path, 2.0, &status, NULL) == 0 &&
		    status == 200)
			return 0;
		if (!mgw_bench_proc_running(p))
			return MGW_ECLOSED;
		if (mgw_now_ns() >= end || mgw_bench_sleep(0.05))
			return MGW_ETIMEDOUT;
	}
}

/* Starts argv as p and waits for its "listening on" line.  With a fixed
 * port (a replacement reusing its victim's port) a process that exits
 * before listening is retried: the port may still be held a moment by
 * the victim's sockets.  Returns 0 or a negative MGW_E*; *attempts gets
 * the number of starts. */
static int start_listening(struct rep *r, struct mgw_bench_proc *p,
                           const char *role, const char *name,
                           struct argv_buf *a, int fixed_port, int *attempts)
{
	char out[PATH_LEN], err[PATH_LEN];
	int rc = MGW_EIO;

	for (int i = 1; i <= (fixed_port ? BIND_ATTEMPTS : 1); i++) {
		if (attempts)
			*attempts = i;
		log_path(r, out, sizeof(out), name, "out");
		log_path(r, err, sizeof(err), name, "err");
		if (mgw_bench_proc_spawn(p, role, a->v, out, err, 1) != 0)
			return MGW_EIO;
		rc = mgw_bench_proc_wait_listening(p, START_TIMEOUT_S);
		if (rc == 0) {
			note_port(r, p->port);
			return 0;
		}
		if (rc != MGW_ECLOSED || mgw_bench_interrupted)
			break;
		if (mgw_bench_sleep(0.2))
			break;
	}
	mgw_bench_proc_stop(p, SIGTERM, 2.0);
	return rc;
}

static void backend_argv(const struct rep *r, struct argv_buf *a, int idx,
                         int port)
{
	const struct mgw_bench_cell *c = r->c;

	av_init(a);
	av_add(a, "%s", r->o->mcpgw);
	av_add(a, "backend");
	av_add(a, "--listen");
	av_add(a, "127.0.0.1:%d", port);
	av_add(a, "--era");
	av_add(a, "%s", mgw_bench_era_name(c->era));
	av_add(a, "--id");
	av_add(a, "replica-%d", idx);
	av_add(a, "--log-level");
	av_add(a, "warn");
	av_add(a, "--shutdown-timeout");
	av_add(a, SHUTDOWN_TIMEOUT);
	if (r->o->service_ms > 0) {
		av_add(a, "--delay-ms");
		av_add(a, "%d", r->o->service_ms);
	}
	if (c->era == MGW_BENCH_MODERN && c->state != MGW_BENCH_STATE_NONE) {
		av_add(a, "--state");
		av_add(a, "%s", mgw_bench_state_name(c->state));
	}
	if (c->state == MGW_BENCH_STATE_HMAC) {
		av_add(a, "--key-file");
		av_add(a, "%s", r->env->handle_key);
	}
	if (c->state == MGW_BENCH_STATE_REDIS || c->keep == MGW_BENCH_STORE_REDIS) {
		av_add(a, "--redis");
		av_add(a, "redis://127.0.0.1:%d", r->redis_port);
	}
	if (c->flow == MGW_BENCH_FLOW_MRTR || c->flow == MGW_BENCH_FLOW_FORK) {
		/* no --single-use: what stops a second presentation is the
		 * subject of the fork scene */
		av_add(a, "--request-state");
		av_add(a, "%s", mgw_bench_store_name(c->keep));
		if (c->keep == MGW_BENCH_STORE_SEALED) {
			/* one key file: any replica opens any replica's state */
			av_add(a, "--key-file");
			av_add(a, "%s", r->env->handle_key);
		}
	}
	if (c->flow == MGW_BENCH_FLOW_TASK) {
		av_add(a, "--tasks");
		av_add(a, "%s", mgw_bench_store_name(c->keep));
	}
}

/* Starts replica idx (1-based) into p, on port (0: any). */
static int start_backend(struct rep *r, struct mgw_bench_proc *p, int idx,
                         int port, int *attempts)
{
	struct argv_buf a;
	char role[32], name[32];
	int rc;

	backend_argv(r, &a, idx, port);
	snprintf(role, sizeof(role), "replica %d", idx);
	snprintf(name, sizeof(name), port ? "replica%d-new" : "replica%d", idx);
	rc = start_listening(r, p, role, name, &a, port, attempts);
	if (rc != 0)
		return rc;
	return wait_ready(p, "/healthz");
}

/* The gateway's configuration: one group of the replicas, checked by GET
 * /healthz (the default probe is a modern request a legacy-only replica
 * refuses) every 500 ms so that a dead replica leaves within a second. */
static int write_gw_conf(struct rep *r, const char *path, int port)
{
	const struct mgw_bench_cell *c = r->c;
	FILE *f = fopen(path, "we");
	int rc;

	if (!f)
		return MGW_EIO;
	fprintf(f, "# generated by mcpgw-bench for cell '%s'\n", c->name);
	fprintf(f, "listeners:\n  - address: 127.0.0.1:%d\n", port);
	fprintf(f, "mode: %s\n", c->era == MGW_BENCH_LEGACY ? "stateful"
	                                                     : "stateless");
	fprintf(f, "workers: %d\n", r->o->workers);
	fprintf(f, "upstreams:\n  - name: pool\n    balancer: round_robin\n"
	        "    servers:\n");
	for (int i = 0; i < c->replicas; i++)
		fprintf(f, "      - url: http://127.0.0.1:%d\n", r->replica[i].port);
	if (c->learn_tools)
		fprintf(f, "    tools_probe: true\n");
	if (c->affinity)
		fprintf(f, "    affinity: task\n");
	fprintf(f, "    health:\n      method: GET\n      path: /healthz\n"
	        "      interval: 500ms\n      timeout: 400ms\n      rise: 1\n"
	        "      fall: 2\n");
	fprintf(f, "routes:\n  - upstream: pool\n");
	if (c->guard)
		fprintf(f, "    mrtr: {single_use: true, ttl: 10m}\n");
	if (c->era == MGW_BENCH_LEGACY) {
		fprintf(f, "sessions:\n  store: %s\n",
		        mgw_bench_store_name(c->store) ? mgw_bench_store_name(c->store)
		                                       : "memory");
		if (c->store == MGW_BENCH_STORE_SEALED)
			fprintf(f, "  key_file: \"%s\"\n", r->env->session_key);
		/* the sealed DELETE check: tombstones shared in Redis */
		if (c->store == MGW_BENCH_STORE_SEALED && c->delete_after > 0)
			fprintf(f, "  sealed:\n    tombstones: redis\n  redis:\n"
			        "    url: redis://127.0.0.1:%d\n", r->redis_port);
		if (c->store == MGW_BENCH_STORE_REDIS && !c->sentinel)
			fprintf(f, "  redis:\n    url: redis://127.0.0.1:%d\n",
			        r->redis_port);
		if (c->store == MGW_BENCH_STORE_REDIS && c->sentinel)
			fprintf(f, "  redis:\n    url: redis://127.0.0.1/0\n"
			        "    master_name: %s\n    sentinels: [\"127.0.0.1:%d\", "
			        "\"127.0.0.1:%d\", \"127.0.0.1:%d\"]\n", SENTINEL_MASTER,
			        r->sentinel[0].port, r->sentinel[1].port,
			        r->sentinel[2].port);
	}
	rc = ferror(f) ? MGW_EIO : 0;
	if (fclose(f) != 0)
		rc = MGW_EIO;
	return rc;
}

static int start_gateway(struct rep *r, struct mgw_bench_proc *p, int idx,
                         int port, int *attempts)
{
	struct argv_buf a;
	char conf[PATH_LEN], role[32], name[32];
	int rc;

	snprintf(name, sizeof(name), port ? "gateway%d-new" : "gateway%d", idx);
	log_path(r, conf, sizeof(conf), name, "yaml");
	if (write_gw_conf(r, conf, port) != 0)
		return MGW_EIO;
	av_init(&a);
	av_add(&a, "%s", r->o->mcpgw);
	av_add(&a, "serve");
	av_add(&a, "-c");
	av_add(&a, "%s", conf);
	av_add(&a, "--log-level");
	av_add(&a, "warn");
	av_add(&a, "--shutdown-timeout");
	av_add(&a, SHUTDOWN_TIMEOUT);
	snprintf(role, sizeof(role), "gateway %d", idx);
	rc = start_listening(r, p, role, name, &a, port, attempts);
	if (rc != 0)
		return rc;
	/* GET /healthz is forwarded to a replica: 200 means the gateway has
	 * a healthy one to send requests to. */
	return wait_ready(p, "/healthz");
}

/* Spawns argv as p with logs NAME.out/.err and waits for PING on port. */
static int spawn_pinged(struct rep *r, struct mgw_bench_proc *p,
                        const char *role, const char *name, char **argv,
                        int port)
{
	char out[PATH_LEN], err[PATH_LEN];

	log_path(r, out, sizeof(out), name, "out");
	log_path(r, err, sizeof(err), name, "err");
	if (mgw_bench_proc_spawn(p, role, argv, out, err, 1) != 0)
		return MGW_EIO;
	p->port = port;
	for (int i = 0; i < (int)(START_TIMEOUT_S / 0.05); i++) {
		if (mgw_bench_redis_ping(port, 1.0) == 0) {
			note_port(r, port);
			return 0;
		}
		if (!mgw_bench_proc_running(p) || mgw_bench_sleep(0.05))
			break;
	}
	mgw_bench_proc_stop(p, SIGTERM, 2.0);
	return MGW_EIO;
}

/* A redis-server on port (a replica of 127.0.0.1:replicaof when that is
 * not 0), its files in the repetition's directory. */
static int start_redis_of(struct rep *r, struct mgw_bench_proc *p, int port,
                          const char *name, int replicaof)
{
	struct argv_buf a;

	av_init(&a);
	av_add(&a, "%s", r->o->redis_server);
	av_add(&a, "--dir");
	av_add(&a, "%s", r->dir);
	if (replicaof > 0) {
		av_add(&a, "--replicaof");
		av_add(&a, "127.0.0.1");
		av_add(&a, "%d", replicaof);
	}
	av_add(&a, "--port");
	av_add(&a, "%d", port);
	av_add(&a, "--bind");
	av_add(&a, "127.0.0.1");
	av_add(&a, "--save");
	av_add(&a, "%s", "");
	av_add(&a, "--appendonly");
	av_add(&a, "no");
	av_add(&a, "--daemonize");
	av_add(&a, "no");
	av_add(&a, "--protected-mode");
	av_add(&a, "yes");
	return spawn_pinged(r, p, "redis", name, a.v, port);
}

static int start_redis(struct rep *r, struct mgw_bench_proc *p, int port,
                       const char *name)
{
	return start_redis_of(r, p, port, name, 0);
}

/* Sentinel k (0-based) watching the master on mport: quorum 2, down
 * after 500 ms, as tests/integration/stateful_redis_sentinel.sh. */
static int start_sentinel(struct rep *r, int k, int mport)
{
	struct argv_buf a;
	char conf[PATH_LEN], name[32], role[32];
	int port = mgw_bench_free_port();
	FILE *f;

	snprintf(name, sizeof(name), "sentinel%d", k + 1);
	snprintf(role, sizeof(role), "redis sentinel %d", k + 1);
	log_path(r, conf, sizeof(conf), name, "conf");
	if (port <= 0 || !(f = fopen(conf, "we")))
		return MGW_EIO;
	fprintf(f, "port %d\nbind 127.0.0.1\ndir \"%s\"\n"
	        "sentinel monitor %s 127.0.0.1 %d 2\n"
	        "sentinel down-after-milliseconds %s 500\n"
	        "sentinel failover-timeout %s 3000\n"
	        "sentinel parallel-syncs %s 1\n", port, r->dir, SENTINEL_MASTER,
	        mport, SENTINEL_MASTER, SENTINEL_MASTER, SENTINEL_MASTER);
	if (fclose(f) != 0)
		return MGW_EIO;
	av_init(&a);
	av_add(&a, "%s", r->o->redis_server);
	av_add(&a, "%s", conf);
	av_add(&a, "--sentinel");
	return spawn_pinged(r, &r->sentinel[k], role, name, a.v, port);
}

/* The port the sentinels name as master (asking each in turn), or 0. */
static int sentinel_master_port(struct rep *r)
{
	char buf[256], cmd[96];

	snprintf(cmd, sizeof(cmd), "SENTINEL get-master-addr-by-name %s",
	         SENTINEL_MASTER);
	for (int k = 0; k < 3; k++) {
		char *last;

		if (mgw_bench_redis_query(r->sentinel[k].port, cmd, buf, sizeof(buf),
		                          1.0) != 0 || buf[0] != '*')
			continue;
		/* *2 $9 127.0.0.1 $N PORT: the port is the last line */
		buf[strlen(buf) - 2] = '\0';
		last = strrchr(buf, '\n');
		if (last)
			return atoi(last + 1);
	}
	return 0;
}

/* The set is ready when a sentinel says the quorum can be reached and
 * the replica's link to the master is up. */
static int sentinel_ready(struct rep *r)
{
	char buf[4096], cmd[96];

	snprintf(cmd, sizeof(cmd), "SENTINEL ckquorum %s", SENTINEL_MASTER);
	if (mgw_bench_redis_query(r->sentinel[0].port, cmd, buf, sizeof(buf),
	                          1.0) != 0 || strncmp(buf, "+OK", 3) != 0)
		return 0;
	if (mgw_bench_redis_query(r->redis_replica.port, "INFO replication", buf,
	                          sizeof(buf), 1.0) != 0)
		return 0;
	return strstr(buf, "master_link_status:up") != NULL;
}

/* A master, its replica and three sentinels; waits until the sentinels
 * see each other and the replica is in sync. */
static int start_sentinel_set(struct rep *r)
{
	int port = mgw_bench_free_port();
	uint64_t end;

	if (port <= 0 || start_redis_of(r, &r->redis_replica, port,
	                                "redis-replica", r->redis_port) != 0)
		return MGW_EIO;
	snprintf(r->redis_replica.role, sizeof(r->redis_replica.role),
	         "redis replica");
	for (int k = 0; k < 3; k++)
		if (start_sentinel(r, k, r->redis_port) != 0)
			return MGW_EIO;
	end = mgw_now_ns() + (uint64_t)(SENTINEL_WAIT_S * 1e9);
	while (!sentinel_ready(r))
		if (mgw_now_ns() >= end || mgw_bench_sleep(0.1))
			return MGW_ETIMEDOUT;
	return 0;
}

/* After the master's kill: waits for the sentinels to name another
 * master and records which process it is. */
static int await_failover(struct rep *r, json_t *rec, int old_port)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(SENTINEL_WAIT_S * 1e9);
	int port = 0;

	while ((port = sentinel_master_port(r)) == old_port || port == 0)
		if (mgw_now_ns() >= end || mgw_bench_sleep(0.05))
			break;
	json_object_set_new(rec, "failover", json_pack("{s:b, s:i, s:s?, s:o}",
		"promoted", port > 0 && port != old_port,
		"master_port", port,
		"master", port == r->redis_replica.port ? r->redis_replica.role
		                                        : NULL,
		"at_s", secs(since_t0(r))));
	return port > 0 && port != old_port ? port : 0;
}

/* redis-server cannot report a port it chose: take a free one and try
 * again with another if it was taken in between. */
static int start_first_redis(struct rep *r)
{
	for (int i = 0; i < 3; i++) {
		int port = mgw_bench_free_port();

		if (port <= 0)
			continue;
		r->redis_port = port;
		if (start_redis(r, &r->redis, port, "redis") == 0)
			return 0;
	}
	return MGW_EIO;
}

static int start_external(struct rep *r)
{
	struct mgw_bench_subst_vars v;
	char err[256], edir[PATH_LEN], out[PATH_LEN], errf[PATH_LEN];
	char *argv[] = { "/bin/sh", "-c", r->ext_cmd, NULL };

	memset(&v, 0, sizeof(v));
	if (pathf(edir, sizeof(edir), "%s/external", r->dir) != 0 ||
	    mgw_bench_mkdirs(edir) != 0)
		return MGW_EIO;
	for (int i = 0; i < r->c->replicas; i++)
		v.ports[i] = r->replica[i].port;
	v.n_ports = r->c->replicas;
	v.dir = edir;
	v.listen_port = r->ext_port = mgw_bench_free_port();
	if (r->ext_port <= 0)
		return MGW_EIO;
	if (mgw_bench_subst(r->o->external, &v, r->ext_cmd, sizeof(r->ext_cmd),
	                    err, sizeof(err)) != 0) {
		invalid(r, "--external: %s", err);
		return MGW_EINVAL;
	}
	log_path(r, out, sizeof(out), "external", "out");
	log_path(r, errf, sizeof(errf), "external", "err");
	if (mgw_bench_proc_spawn(&r->external, "external", argv, out, errf, 1) != 0)
		return MGW_EIO;
	r->external.port = r->ext_port;
	note_port(r, r->ext_port);
	/* ready when it forwards a health check to a replica */
	if (wait_ready(&r->external, "/healthz") != 0) {
		invalid(r, "the external proxy did not answer GET /healthz with "
		        "200 on 127.0.0.1:%d within %.0f s (%s)", r->ext_port,
		        START_TIMEOUT_S,
		        mgw_bench_proc_running(&r->external) ? "running"
		                                             : "it exited");
		return MGW_EIO;
	}
	return 0;
}

static int needs_redis(const struct mgw_bench_cell *c)
{
	return c->state == MGW_BENCH_STATE_REDIS || c->store == MGW_BENCH_STORE_REDIS ||
	       c->keep == MGW_BENCH_STORE_REDIS || c->delete_after > 0;
}

static int start_fleet(struct rep *r)
{
	const struct mgw_bench_cell *c = r->c;
	int rc;

	if (needs_redis(c) && start_first_redis(r) != 0) {
		invalid(r, "redis-server (%s) did not start or answer PING",
		        r->o->redis_server);
		return MGW_EIO;
	}
	if (c->sentinel && (rc = start_sentinel_set(r)) != 0) {
		invalid(r, "the Redis Sentinel set did not come up: %s (see %s)",
		        mgw_strerror(rc), r->rel_logs);
		return rc;
	}
	for (int i = 0; i < c->replicas; i++) {
		rc = start_backend(r, &r->replica[i], i + 1, 0, NULL);
		if (rc != 0) {
			invalid(r, "replica %d did not start: %s (see %s/replica%d.err)",
			        i + 1, mgw_strerror(rc), r->rel_logs, i + 1);
			return rc;
		}
	}
	r->n_gateways = c->path == MGW_BENCH_GATEWAY ? 1
	                : c->path == MGW_BENCH_GATEWAY_HA ? 2 : 0;
	for (int i = 0; i < r->n_gateways; i++) {
		rc = start_gateway(r, &r->gateway[i], i + 1, 0, NULL);
		if (rc != 0) {
			invalid(r, "gateway %d did not start or pass GET /healthz: %s "
			        "(see %s/gateway%d.err)", i + 1, mgw_strerror(rc),
			        r->rel_logs, i + 1);
			return rc;
		}
	}
	if (c->path == MGW_BENCH_EXTERNAL && (rc = start_external(r)) != 0) {
		invalid(r, "the external proxy did not start: %s", mgw_strerror(rc));
		return rc;
	}
	return 0;
}

static void pick_victim(struct rep *r)
{
	switch (r->c->victim) {
	case MGW_BENCH_VICTIM_REPLICA:
		r->victim = &r->replica[0];
		r->victim_index = 1;
		break;
	case MGW_BENCH_VICTIM_GATEWAY:
		r->victim = &r->gateway[0];
		r->victim_index = 1;
		break;
	case MGW_BENCH_VICTIM_REDIS:
		r->victim = &r->redis;
		r->victim_index = 0;
		break;
	case MGW_BENCH_VICTIM_NONE:
		r->victim = NULL;
		break;
	}
}

/* ---- the load client ---------------------------------------------------- */

/* Waits (bounded) for the load client's --clock-file and takes its t = 0
 * as this repetition's: kill times are then on the load run's own clock,
 * the one of its timeline (both CLOCK_MONOTONIC).  A run whose client
 * never tells its clock is invalid. */
static void read_load_clock(struct rep *r, const char *path)
{
	uint64_t spawned = r->t0_ns, now, mono;
	unsigned long long v = 0;
	struct timespec wall;
	FILE *f;
	int got = 0;

	while (!got && !mgw_bench_interrupted && mgw_bench_proc_running(&r->load) &&
	       mgw_now_ns() - spawned < (uint64_t)(CLOCK_WAIT_S * 1e9)) {
		f = fopen(path, "re");
		if (f) {
			got = fscanf(f, "%llu", &v) == 1;
			fclose(f);
		}
		if (!got)
			mgw_bench_sleep(0.002);
	}
	now = mgw_now_ns();
	clock_gettime(CLOCK_REALTIME, &wall);
	mono = now;
	if (!got) {
		invalid(r, "the load client wrote no clock file within %.0f s",
		        CLOCK_WAIT_S);
		v = spawned;
	} else if (v < spawned || v > now) {
		invalid(r, "the load client's clock file holds %llu, outside its "
		        "start-up", v);
		v = spawned;
	} else {
		r->t0_from_load = 1;
	}
	r->t0_ns = v;
	/* the wall time of t = 0: now, less the monotonic time since */
	{
		int64_t back = (int64_t)(mono - v);
		int64_t ns = (int64_t)wall.tv_nsec - back % 1000000000;

		r->t0_wall.tv_sec = wall.tv_sec - back / 1000000000;
		if (ns < 0) {
			ns += 1000000000;
			r->t0_wall.tv_sec--;
		}
		r->t0_wall.tv_nsec = ns;
	}
}

/* The calls of an MRTR cell: book dialogues of MRTR_ROUNDS rounds; in
 * the fork scene every dialogue's last retry is sent again. */
static int write_mrtr_scenario(const char *path, int fork)
{
	FILE *f = fopen(path, "we");
	int rc;

	if (!f)
		return MGW_EIO;
	fprintf(f, "# generated by mcpgw-bench: the calls of an MRTR cell; the\n"
	        "# command line gives the targets, rate and duration\n"
	        "calls:\n  - tool: book\n    flow: mrtr\n"
	        "    arguments: {rounds: %d}\n", MRTR_ROUNDS);
	if (fork)
		fprintf(f, "    fork_every: 1\n    fork_round: 0\n");
	fprintf(f, "    answers:\n"
	        "      date: {action: accept, content: {date: \"2026-08-01\"}}\n"
	        "      confirm: {action: accept, content: {confirm: true}}\n"
	        "      \"*\": {action: accept, content: {note: \"window seat\"}}\n");
	rc = ferror(f) ? MGW_EIO : 0;
	if (fclose(f) != 0)
		rc = MGW_EIO;
	return rc;
}

static int start_load(struct rep *r, const char *json_path)
{
	const struct mgw_bench_cell *c = r->c;
	struct argv_buf a;
	char out[PATH_LEN], err[PATH_LEN], clock[PATH_LEN], url[64];
	size_t i;
	json_t *t;

	log_path(r, clock, sizeof(clock), "load", "clock");
	unlink(clock);

	r->targets = json_array();
	switch (c->path) {
	case MGW_BENCH_DIRECT:
		for (int k = 0; k < c->replicas; k++) {
			snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp",
			         r->replica[k].port);
			json_array_append_new(r->targets, json_string(url));
		}
		break;
	case MGW_BENCH_GATEWAY:
	case MGW_BENCH_GATEWAY_HA:
		for (int k = 0; k < r->n_gateways; k++) {
			snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp",
			         r->gateway[k].port);
			json_array_append_new(r->targets, json_string(url));
		}
		break;
	case MGW_BENCH_EXTERNAL:
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", r->ext_port);
		json_array_append_new(r->targets, json_string(url));
		break;
	}
	av_init(&a);
	av_add(&a, "%s", r->o->mcpgw);
	av_add(&a, "load");
	av_add(&a, "--quiet");
	av_add(&a, "--json");
	av_add(&a, "%s", json_path);
	av_add(&a, "--dialect");
	av_add(&a, "%s", mgw_bench_era_name(c->era));
	av_add(&a, "--rate");
	av_add(&a, "%g", c->offered_rps);
	av_add(&a, "--duration");
	av_add(&a, "%g", c->duration_s);
	av_add(&a, "--connection");
	av_add(&a, "%s", mgw_bench_conn_name(c->conn));
	if (r->o->spread_users)
		av_add(&a, "--spread-users");
	if (c->users > 0 || r->o->users > 0) {
		av_add(&a, "--users");
		av_add(&a, "%d", c->users > 0 ? c->users : r->o->users);
	}
	if (c->delete_after > 0) {
		av_add(&a, "--delete-sessions");
		av_add(&a, "%d", c->delete_after);
	}
	if (c->conn == MGW_BENCH_CONN_REUSE && r->o->reconnect_after > 0) {
		av_add(&a, "--reconnect-after");
		av_add(&a, "%d", r->o->reconnect_after);
	}
	av_add(&a, "--timeout");
	av_add(&a, LOAD_TIMEOUT);
	av_add(&a, "--log-level");
	av_add(&a, "error");
	/* Real legacy clients list tools after initializing; the gateway
	 * learns from that list which in-flight calls it may replay after a
	 * re-pin (readOnlyHint / idempotentHint). */
	if ((c->era == MGW_BENCH_LEGACY || c->learn_tools) &&
	    !r->o->no_list_tools)
		av_add(&a, "--list-tools");
	if (r->o->concurrency > 0) {
		av_add(&a, "--concurrency");
		av_add(&a, "%d", r->o->concurrency);
	}
	json_array_foreach(r->targets, i, t) {
		av_add(&a, "--target");
		av_add(&a, "%s", json_string_value(t));
	}
	if (c->flow == MGW_BENCH_FLOW_MRTR || c->flow == MGW_BENCH_FLOW_FORK) {
		char sc[PATH_LEN];

		/* the dialogue's answers need a scenario; flags set the rest */
		log_path(r, sc, sizeof(sc), "load-scenario", "yaml");
		if (write_mrtr_scenario(sc, c->flow == MGW_BENCH_FLOW_FORK) != 0)
			return MGW_EIO;
		av_add(&a, "--scenario");
		av_add(&a, "%s", sc);
	} else if (c->flow == MGW_BENCH_FLOW_TASK) {
		av_add(&a, "--tool");
		av_add(&a, "task");
		av_add(&a, "--arg");
		av_add(&a, "ms=%d", TASK_MS);
	} else if (c->state != MGW_BENCH_STATE_NONE) {
		/* counter_create once, then counter_increment on the handle */
		av_add(&a, "--tool");
		av_add(&a, "counter");
	} else {
		av_add(&a, "--tool");
		av_add(&a, "echo");
		av_add(&a, "--arg");
		av_add(&a, "text=mcpgw-bench");
	}
	av_add(&a, "--clock-file");
	av_add(&a, "%s", clock);
	if (c->sample_every_s > 0) {
		log_path(r, r->progress_path, sizeof(r->progress_path), "load",
		         "progress");
		unlink(r->progress_path);
		av_add(&a, "--progress-file");
		av_add(&a, "%s", r->progress_path);
	}
	r->load_cmd = av_join(&a);
	log_path(r, out, sizeof(out), "load", "out");
	log_path(r, err, sizeof(err), "load", "err");
	if (mgw_bench_proc_spawn(&r->load, "load", a.v, out, err, 1) != 0)
		return MGW_EIO;
	r->t0_ns = mgw_now_ns(); /* until the load client tells its own */
	read_load_clock(r, clock);
	return 0;
}

/* ---- gateway counters ------------------------------------------------- */

static int sum_numbers(const json_t *v, json_int_t *out)
{
	const char *k;
	json_t *x;
	int found = 0;

	if (json_is_integer(v)) {
		*out += json_integer_value(v);
		return 1;
	}
	if (json_is_real(v)) {
		*out += (json_int_t)json_real_value(v);
		return 1;
	}
	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, x)
			found |= sum_numbers(x, out);
	return found;
}

int mgw_bench_stats_repins(const json_t *stats, json_int_t *out)
{
	/* "repinned": sessions a replay moved to another replica (what the
	 * table calls re-pins); the others are re-pins begun, for gateways
	 * that count only those */
	static const char *const keys[] = { "repinned", "repins_total", "repins",
		                            NULL };
	const json_t *scopes[2] = { json_object_get(stats, "sessions"), stats };

	for (int s = 0; s < 2; s++) {
		if (!json_is_object(scopes[s]))
			continue;
		for (int k = 0; keys[k]; k++) {
			const json_t *v = json_object_get(scopes[s], keys[k]);
			json_int_t sum = 0;

			if (v && sum_numbers(v, &sum)) {
				*out = sum;
				return 0;
			}
		}
	}
	return MGW_ENOTFOUND;
}

/* Reads one gateway's counters into the record; adds its re-pins. */
static void sample_gateway(struct rep *r, struct mgw_bench_proc *p,
                           const char *when)
{
	char *body = NULL;
	int status = 0;
	json_t *st = NULL, *e;
	json_int_t n = 0;

	if (!mgw_bench_proc_running(p))
		return;
	if (mgw_bench_http_get(p->port, STATS_PATH, 5.0, &status, &body) == 0 &&
	    status == 200)
		st = json_loads(body, 0, NULL);
	free(body);
	e = json_pack("{s:s, s:i, s:s, s:o}", "role", p->role, "port", p->port,
	              "when", when, "stats", st ? st : json_null());
	if (e)
		json_array_append_new(r->gw_stats, e);
	if (st && mgw_bench_stats_repins(st, &n) == 0) {
		r->repins += n;
		r->have_repins = 1;
	} else if (!st) {
		/* its counts are part of the run's re-pins: without them the
		 * run's number would be short, silently (a stateless gateway
		 * answers, without session counters: nothing to count) */
		invalid(r, "the re-pin counters of %s (port %d) could not be "
		        "read %s", p->role, p->port, when);
	}
}

/* Stateful flows: one replica's /stats (request-state bytes and store
 * operations, task counts) into the record; the victim's just before
 * the kill, the others' after the run, so their sums cover every
 * replica's work. */
static void sample_replica(struct rep *r, struct mgw_bench_proc *p,
                           const char *when)
{
	char *body = NULL;
	int status = 0;
	json_t *st = NULL;

	if (r->c->flow == MGW_BENCH_FLOW_PLAIN || !r->replica_stats ||
	    !mgw_bench_proc_running(p))
		return;
	if (mgw_bench_http_get(p->port, "/stats", 5.0, &status, &body) == 0 &&
	    status == 200)
		st = json_loads(body, 0, NULL);
	free(body);
	json_array_append_new(r->replica_stats, json_pack("{s:s, s:i, s:s, s:o}",
		"role", p->role, "port", p->port, "when", when,
		"stats", st ? st : json_null()));
}

/* ---- samples (the soak) ------------------------------------------------ */

/* One sample: the gateway's RSS and descriptors now, the load client's
 * counts as its --progress-file last said them (written once a second,
 * so up to a second old: its own t_s tells), and the kills done. */
static void take_sample(struct rep *r, double due)
{
	struct mgw_bench_proc *gw = &r->gateway[0];
	pid_t pid = mgw_bench_proc_running(gw) ? gw->pid : 0;
	long long rss = pid ? mgw_bench_proc_rss_kib(pid) : -1;
	long long fds = pid ? mgw_bench_proc_fd_count(pid) : -1;
	json_t *load = json_load_file(r->progress_path, 0, NULL);

	json_array_append_new(r->samples, json_pack("{s:o, s:o, s:o, s:o, s:o, "
	                                             "s:I}",
		"due_s", secs(due),
		"t_s", secs(since_t0(r)),
		"rss_kib", rss >= 0 ? json_integer(rss) : json_null(),
		"fds", fds >= 0 ? json_integer(fds) : json_null(),
		"load", json_is_object(load) ? load : json_null(),
		"kills", (json_int_t)json_array_size(r->kills)));
	if (!json_is_object(load))
		json_decref(load);
}

/* Takes the samples that are due: one every sample_every_s from t = 0,
 * the last one due before the planned end of the load. */
static void take_due_samples(struct rep *r)
{
	const struct mgw_bench_cell *c = r->c;

	if (!r->samples || !r->t0_ns)
		return; /* no load clock yet */
	while (r->next_sample_s < c->duration_s - 1e-9 &&
	       since_t0(r) >= r->next_sample_s) {
		take_sample(r, r->next_sample_s);
		r->next_sample_s += c->sample_every_s;
	}
}

/* Sleeps s seconds in slices, taking the samples that fall due meanwhile
 * (a kill's readiness delay must not leave a gap in them).  Returns 1
 * when interrupted. */
static int rep_sleep(struct rep *r, double s)
{
	uint64_t end = mgw_now_ns() + (uint64_t)(s > 0 ? s * 1e9 : 0);

	for (;;) {
		uint64_t now = mgw_now_ns();

		take_due_samples(r);
		if (mgw_bench_interrupted)
			return 1;
		if (now >= end)
			return 0;
		mgw_bench_sleep(fmin(0.01, (double)(end - now) / 1e9));
	}
}

/* ---- the kill ------------------------------------------------------------ */

static const char *sig_name(int sig)
{
	return sig == SIGTERM ? "TERM" : sig == SIGKILL ? "KILL" : "?";
}

/* Starts the victim's replacement on its port and waits for its health
 * check; fills rec's "replacement". */
static void replace_victim(struct rep *r, json_t *rec, int port)
{
	int attempts = 0, rc = MGW_EIO, healthy = 0, newm = 0;
	double started_at = since_t0(r);
	json_t *rp;

	switch (r->c->victim) {
	case MGW_BENCH_VICTIM_REPLICA:
		rc = start_backend(r, &r->replacement, r->victim_index, port,
		                   &attempts);
		break;
	case MGW_BENCH_VICTIM_GATEWAY:
		rc = start_gateway(r, &r->replacement, r->victim_index, port,
		                   &attempts);
		break;
	case MGW_BENCH_VICTIM_REDIS:
		/* Sentinel: the old master comes back as a replica of the one
		 * the sentinels promoted */
		if (r->c->sentinel && (newm = await_failover(r, rec, port)) == 0)
			break;
		for (attempts = 1; attempts <= BIND_ATTEMPTS; attempts++) {
			rc = start_redis_of(r, &r->replacement, port, "redis-new", newm);
			if (rc == 0 || mgw_bench_sleep(0.2))
				break;
		}
		break;
	case MGW_BENCH_VICTIM_NONE:
		return;
	}
	healthy = rc == 0;
	rp = json_pack("{s:i, s:o, s:i, s:b, s:o, s:s}",
	               "pid", (int)r->replacement.pid,
	               "started_at_s", secs(started_at),
	               "start_attempts", attempts,
	               "healthy", healthy,
	               "healthy_at_s", healthy ? secs(since_t0(r)) : json_null(),
	               "check", r->c->victim == MGW_BENCH_VICTIM_REDIS
	                            ? "PING" : "GET /healthz 200");
	json_object_set_new(rec, "replacement", rp);
	if (healthy && since_t0(r) > r->c->duration_s) {
		json_object_set_new(rec, "valid", json_false());
		json_object_set_new(rec, "reason", json_string(
			"the replacement passed its health check only after the "
			"load ended"));
		invalid(r, "the victim's replacement on port %d passed its health "
		        "check only after the load ended", port);
	} else if (!healthy) {
		if (json_is_true(json_object_get(rec, "valid")))
			json_object_set_new(rec, "reason", json_string(
				"the replacement did not pass its health check"));
		json_object_set_new(rec, "valid", json_false());
		invalid(r, "the victim's replacement on port %d did not pass its "
		        "health check: %s", port, mgw_strerror(rc));
	}
}

/* Kills the victim, verifies the kill and starts the replacement.  The
 * record goes to r->kills. */
static void kill_victim(struct rep *r)
{
	struct mgw_bench_proc *v = r->victim;
	int sig = r->o->kill_signal, port = v->port, landed = 0, refused = 0;
	int cerr, expected = 0;
	char st[64] = "", why[256] = "";
	double at = 0, reaped_at = NAN;
	json_t *rec;

	if (r->c->victim == MGW_BENCH_VICTIM_GATEWAY)
		sample_gateway(r, v, "before the kill");
	if (r->c->victim == MGW_BENCH_VICTIM_REPLICA)
		sample_replica(r, v, "before the kill");
	rec = json_object();
	json_object_set_new(rec, "victim", json_string(v->role));
	json_object_set_new(rec, "pid", json_integer(v->pid));
	json_object_set_new(rec, "port", json_integer(port));
	json_object_set_new(rec, "signal", json_string(sig_name(sig)));
	json_object_set_new(rec, "planned_at_s", secs(r->kill_planned_s));
	if (!mgw_bench_proc_running(v)) {
		/* it died before we killed it: whatever the run shows after this
		 * is not what a kill at kill_at does */
		mgw_bench_status_str(v->status, st, sizeof(st));
		at = since_t0(r);
		json_object_set_new(rec, "alive_before", json_false());
		snprintf(why, sizeof(why), "the victim (%s) had already exited "
		         "before the kill (%s)", v->role, st);
	} else {
		json_object_set_new(rec, "alive_before", json_true());
		at = since_t0(r);
		json_object_set_new(rec, "wall", now_iso());
		if (mgw_bench_proc_signal(v, sig) != 0)
			snprintf(why, sizeof(why), "kill(%d, SIG%s) failed: %s",
			         (int)v->pid, sig_name(sig), strerror(errno));
		if (mgw_bench_proc_wait(v, KILL_REAP_S) != 0) {
			if (!why[0])
				snprintf(why, sizeof(why), "the victim did not exit "
				         "within %.0f s of SIG%s", KILL_REAP_S,
				         sig_name(sig));
			mgw_bench_proc_stop(v, SIGKILL, 1.0);
		} else {
			reaped_at = since_t0(r);
		}
		mgw_bench_status_str(v->status, st, sizeof(st));
		/* SIGKILL cannot be caught; SIGTERM is a graceful stop for
		 * every component, which ends with exit status 0 */
		if (sig == SIGKILL)
			expected = WIFSIGNALED(v->status) && WTERMSIG(v->status) == SIGKILL;
		else
			expected = (WIFSIGNALED(v->status) &&
			            WTERMSIG(v->status) == SIGTERM) ||
			           (WIFEXITED(v->status) && WEXITSTATUS(v->status) == 0);
		if (!why[0] && !expected)
			snprintf(why, sizeof(why), "the victim was reaped %s, not "
			         "by SIG%s", st, sig_name(sig));
		landed = !why[0];
	}
	json_object_set_new(rec, "at_s", secs(at));
	json_object_set_new(rec, "reaped_at_s", isnan(reaped_at)
	                                          ? json_null() : secs(reaped_at));
	json_object_set_new(rec, "status", json_string(st));
	json_object_set_new(rec, "reaped_with_signal", json_boolean(landed));
	cerr = mgw_bench_connect_errno(port, 1.0);
	refused = cerr == ECONNREFUSED;
	json_object_set_new(rec, "connect", json_string(cerr ? strerror(cerr)
	                                                     : "accepted"));
	json_object_set_new(rec, "refused", json_boolean(refused));
	if (!why[0] && !refused)
		snprintf(why, sizeof(why), "a connect to the victim's port %d was "
		         "not refused after the kill (%s)", port,
		         cerr ? strerror(cerr) : "accepted");
	json_object_set_new(rec, "valid", json_boolean(!why[0]));
	json_object_set_new(rec, "reason", why[0] ? json_string(why) : json_null());
	if (why[0])
		invalid(r, "kill did not land: %s", why);
	/* like Kubernetes: the successor becomes ready some time after the
	 * old pod died */
	if (!mgw_bench_interrupted) {
		double wait = at + r->env->readiness_delay_s - since_t0(r);

		if (wait > 0)
			rep_sleep(r, wait);
		if (!mgw_bench_interrupted)
			replace_victim(r, rec, port);
	}
	json_array_append_new(r->kills, rec);
}

/* ---- the kill schedule ------------------------------------------------ */

int mgw_bench_cell_kill_times(const struct mgw_bench_cell *c,
                              double readiness_s, double *at, int cap)
{
	int n = 0;

	if (c->victim == MGW_BENCH_VICTIM_NONE)
		return 0;
	if (c->kill_every_s <= 0) {
		if (cap > 0)
			at[0] = c->kill_at_s;
		return 1;
	}
	/* a kill whose replacement could not be ready before the end is
	 * not made: it would be a kill the run cannot verify */
	for (int k = 1; k * c->kill_every_s + readiness_s < c->duration_s; k++) {
		if (n < cap)
			at[n] = k * c->kill_every_s;
		n++;
	}
	return n;
}

/* The victim of kill number k (0-based): replica 1 in a scene's single
 * kill; the replicas in turn in a soak. */
static void pick_victim_k(struct rep *r, int k)
{
	pick_victim(r);
	if (r->c->victim == MGW_BENCH_VICTIM_REPLICA && r->c->kill_every_s > 0) {
		r->victim_index = k % r->c->replicas + 1;
		r->victim = &r->replica[r->victim_index - 1];
	}
}

/* Kills on schedule until the load ends or a kill fails to land.  In a
 * soak each replacement takes its victim's slot, so the next kill of
 * that replica finds it. */
static void run_kills(struct rep *r)
{
	double at[MGW_BENCH_MAX_KILLS];
	int n = mgw_bench_cell_kill_times(r->c, r->env->readiness_delay_s, at,
	                                  MGW_BENCH_MAX_KILLS);
	char st[64];

	if (n > MGW_BENCH_MAX_KILLS)
		n = MGW_BENCH_MAX_KILLS;
	for (int k = 0; k < n && r->valid; k++) {
		while (since_t0(r) < at[k] && !mgw_bench_interrupted &&
		       mgw_bench_proc_running(&r->load))
			rep_sleep(r, fmin(0.01, at[k] - since_t0(r)));
		if (mgw_bench_interrupted)
			return;
		if (!mgw_bench_proc_running(&r->load)) {
			invalid(r, "the load client ended before the kill at %g s "
			        "(%s)", at[k], mgw_bench_status_str(r->load.status, st,
			                                              sizeof(st)));
			return;
		}
		pick_victim_k(r, k);
		r->kill_planned_s = at[k];
		kill_victim(r);
		if (r->c->kill_every_s > 0 &&
		    r->c->victim == MGW_BENCH_VICTIM_REPLICA) {
			mgw_bench_proc_move(r->victim, &r->replacement);
			r->victim = NULL; /* the slot holds a survivor again */
		}
	}
}

/* ---- teardown and the record ---------------------------------------------- */

static void proc_json(json_t *arr, struct mgw_bench_proc *p, const char *stop)
{
	char st[64];

	if (p->pid <= 0)
		return;
	json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:s, s:s?}",
		"role", p->role, "pid", (int)p->pid, "port", p->port,
		"exit", p->reaped ? mgw_bench_status_str(p->status, st, sizeof(st))
		                  : "running",
		"stopped", stop));
}

/* Every process that was not meant to die must still run at the end. */
static void check_survivors(struct rep *r)
{
	struct mgw_bench_proc *all[MGW_BENCH_MAX_REPLICAS + 9];
	size_t n = 0;
	char st[64];

	all[n++] = &r->redis;
	all[n++] = &r->redis_replica;
	for (int k = 0; k < 3; k++)
		all[n++] = &r->sentinel[k];
	for (int i = 0; i < r->c->replicas; i++)
		all[n++] = &r->replica[i];
	for (int i = 0; i < r->n_gateways; i++)
		all[n++] = &r->gateway[i];
	all[n++] = &r->external;
	all[n++] = &r->replacement;
	for (size_t i = 0; i < n; i++) {
		struct mgw_bench_proc *p = all[i];

		if (p == r->victim || p->pid <= 0)
			continue;
		if (!mgw_bench_proc_running(p))
			invalid(r, "%s exited during the run (%s; see %s)", p->role,
			        mgw_bench_status_str(p->status, st, sizeof(st)),
			        r->rel_logs);
	}
}

/* Stops the fleet front to back, so nothing in front of a replica
 * reports its stop as a failure; records each exit. */
static void stop_fleet(struct rep *r, json_t *procs)
{
	struct mgw_bench_proc *order[MGW_BENCH_MAX_REPLICAS + 10];
	size_t n = 0;

	order[n++] = &r->load;
	order[n++] = &r->external;
	for (int i = 0; i < r->n_gateways; i++)
		order[n++] = &r->gateway[i];
	if (r->c->victim == MGW_BENCH_VICTIM_GATEWAY)
		order[n++] = &r->replacement;
	for (int i = 0; i < r->c->replicas; i++)
		order[n++] = &r->replica[i];
	if (r->c->victim == MGW_BENCH_VICTIM_REPLICA)
		order[n++] = &r->replacement;
	for (int k = 0; k < 3; k++)
		order[n++] = &r->sentinel[k]; /* before they see a failure */
	order[n++] = &r->redis;
	if (r->c->victim == MGW_BENCH_VICTIM_REDIS)
		order[n++] = &r->replacement;
	order[n++] = &r->redis_replica;
	for (size_t i = 0; i < n; i++) {
		struct mgw_bench_proc *p = order[i];
		const char *how = NULL;

		if (p->pid <= 0)
			continue;
		if (!p->reaped)
			how = mgw_bench_proc_stop(p, SIGTERM, STOP_GRACE_S) == 0
			          ? "SIGTERM" : "SIGKILL after the grace time";
		proc_json(procs, p, how);
		mgw_bench_proc_unregister(p);
	}
}

static json_t *conditions(const struct mgw_bench_cell *c)
{
	const char *st = mgw_bench_state_name(c->state),
	           *store = mgw_bench_store_name(c->store),
	           *vic = mgw_bench_victim_name(c->victim);
	json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:s?, s:s?, s:s?, s:o, s:o, "
	                      "s:o, s:i, s:i, s:b}",
	                      "path", mgw_bench_path_name(c->path),
	                      "era", mgw_bench_era_name(c->era),
	                      "replicas", c->replicas,
	                      "connection", mgw_bench_conn_name(c->conn),
	                      "state", st, "session_store", store, "victim", vic,
	                      "offered_rps", secs(c->offered_rps),
	                      "duration_s", secs(c->duration_s),
	                      "kill_at_s", c->victim ? secs(c->kill_at_s)
	                                             : json_null(),
	                      "users", c->users, "delete_sessions", c->delete_after,
	                      "sentinel", c->sentinel);

	if (o && c->flow != MGW_BENCH_FLOW_PLAIN)
		json_object_update_new(o, json_pack("{s:s, s:s?, s:b, s:b}",
			"flow", mgw_bench_flow_name(c->flow),
			"keep", mgw_bench_store_name(c->keep),
			"guard", c->guard, "affinity", c->affinity));
	return o;
}

int mgw_bench_run_rep(struct mgw_bench_env *env, const struct mgw_bench_cell *c,
                      int rep, const json_t *cooldown, json_t **out, char *rel,
                      size_t rel_len)
{
	const struct mgw_bench_opts *o = env->o;
	struct rep *r;
	char load_json[PATH_LEN], path[PATH_LEN], runs_dir[PATH_LEN], st[64];
	json_t *rec = NULL, *procs = NULL, *load = NULL;
	int rc = MGW_EIO, loaded_ok;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return MGW_ENOMEM;
	r->env = env;
	r->o = o;
	r->c = c;
	r->rep = rep;
	r->valid = 1;
	r->kills = json_array();
	r->gw_stats = json_array();
	if (c->flow != MGW_BENCH_FLOW_PLAIN)
		r->replica_stats = json_array();
	procs = json_array();
	if (pathf(r->rel_logs, sizeof(r->rel_logs), "logs/%s/%s-r%02d",
	          mgw_bench_scene_name(c->scene), c->slug, rep) != 0 ||
	    pathf(r->dir, sizeof(r->dir), "%s/%s", o->out_dir, r->rel_logs) != 0 ||
	    pathf(runs_dir, sizeof(runs_dir), "%s/runs/%s", o->out_dir,
	          mgw_bench_scene_name(c->scene)) != 0 ||
	    pathf(rel, rel_len, "runs/%s/%s-r%02d.json",
	          mgw_bench_scene_name(c->scene), c->slug, rep) != 0 ||
	    pathf(path, sizeof(path), "%s/%s", o->out_dir, rel) != 0)
		goto fail;
	if (mgw_bench_mkdirs(r->dir) != 0 || mgw_bench_mkdirs(runs_dir) != 0)
		goto fail;
	log_path(r, load_json, sizeof(load_json), "load", "json");

	if (c->sample_every_s > 0)
		r->samples = json_array();
	if (start_fleet(r) == 0) {
		pick_victim(r);
		if (o->test_prekill && r->victim) {
			/* test aid: the victim dies now, unseen, so that the kill
			 * at kill_at finds it dead (doc/bench.md) */
			mgw_bench_proc_signal(r->victim, SIGKILL);
			mgw_bench_sleep(0.1);
		}
		if (start_load(r, load_json) != 0) {
			invalid(r, "the load client could not be started");
		} else {
			if (r->victim)
				run_kills(r);
			while (!mgw_bench_interrupted &&
			       mgw_bench_proc_running(&r->load) &&
			       since_t0(r) < c->duration_s + LOAD_SLACK_S)
				rep_sleep(r, 0.05);
			take_due_samples(r);
			if (mgw_bench_proc_running(&r->load)) {
				/* SIGINT: the load client writes what it has */
				mgw_bench_proc_signal(&r->load, SIGINT);
				if (mgw_bench_proc_wait(&r->load, 10.0) != 0)
					mgw_bench_proc_stop(&r->load, SIGKILL, 2.0);
				invalid(r, "the load client did not finish within %.0f s "
				        "of its duration", LOAD_SLACK_S);
			}
			for (int i = 0; i < r->n_gateways; i++)
				if (&r->gateway[i] != r->victim)
					sample_gateway(r, &r->gateway[i], "after the run");
			if (r->c->victim == MGW_BENCH_VICTIM_GATEWAY)
				sample_gateway(r, &r->replacement, "after the run");
			for (int i = 0; i < c->replicas; i++)
				if (&r->replica[i] != r->victim)
					sample_replica(r, &r->replica[i], "after the run");
			if (r->c->victim == MGW_BENCH_VICTIM_REPLICA)
				sample_replica(r, &r->replacement, "after the run");
			check_survivors(r);
		}
	}
	if (mgw_bench_interrupted) {
		rc = MGW_ECLOSED;
		stop_fleet(r, procs);
		goto fail;
	}
	stop_fleet(r, procs);

	load = r->load.pid > 0 ? json_load_file(load_json, 0, NULL) : NULL;
	loaded_ok = json_is_object(json_object_get(load, "total"));
	if (r->load.pid > 0) {
		if (!r->load.reaped || !WIFEXITED(r->load.status) ||
		    (WEXITSTATUS(r->load.status) != 0 && !loaded_ok))
			invalid(r, "the load client %s",
			        mgw_bench_status_str(r->load.status, st, sizeof(st)));
		else if (!loaded_ok)
			invalid(r, "the load client wrote no report");
		else if (json_is_true(json_object_get(load, "interrupted")))
			invalid(r, "the load run was interrupted");
	}
	if (r->load.pid > 0 && loaded_ok)
		unlink(load_json); /* it lives on inside the record */

	{
		char started[40] = "";

		if (r->t0_ns)
			iso_time(&r->t0_wall, started, sizeof(started));
		rec = json_pack("{s:s, s:s, s:s, s:i, s:b, s:s?, s:s?, s:o, s:O?, "
		                "s:s?, s:s, s:o, s:o, s:o, s:o, s:o, s:O?, s:s}",
			"scene", mgw_bench_scene_name(c->scene),
			"cell", c->name,
			"slug", c->slug,
			"rep", rep,
			"valid", r->valid,
			"invalid_reason", r->valid ? NULL : r->reason,
			"load_started_at", started[0] ? started : NULL,
			"conditions", conditions(c),
			"targets", r->targets,
			"load_command", r->load_cmd,
			"clock", "kill and replacement times (at_s, *_at_s) are "
			         "seconds on the load run's own clock: since its "
			         "engine start (load.clock.start_ns, "
			         "CLOCK_MONOTONIC), t = 0 of its timeline",
			"kills", r->kills,
			"repins", r->have_repins ? json_integer(r->repins) : json_null(),
			"gateway_stats", r->gw_stats,
			"processes", procs,
			"load_exit", json_string(r->load.pid > 0
			                             ? mgw_bench_status_str(r->load.status,
			                                                    st, sizeof(st))
			                             : "not started"),
			"cooldown", cooldown,
			"logs", r->rel_logs);
	}
	r->kills = r->gw_stats = procs = NULL;
	if (!rec)
		goto fail;
	if (r->external.pid > 0)
		json_object_set_new(rec, "external_command", json_string(r->ext_cmd));
	json_object_set_new(rec, "load_clock_start_ns",
	                    r->t0_from_load ? json_integer((json_int_t)r->t0_ns)
	                                    : json_null());
	if (r->samples) {
		json_object_set_new(rec, "samples", r->samples);
		r->samples = NULL;
	}
	if (r->replica_stats) {
		json_object_set_new(rec, "replica_stats", r->replica_stats);
		r->replica_stats = NULL;
	}
	json_object_set_new(rec, "load", load ? load : json_null());
	load = NULL;
	if (mgw_bench_write_json(rec, path) != 0)
		goto fail;
	*out = rec;
	rec = NULL;
	rc = 0;
fail:
	json_decref(rec);
	json_decref(load);
	json_decref(procs);
	json_decref(r->kills);
	json_decref(r->gw_stats);
	json_decref(r->samples);
	json_decref(r->replica_stats);
	json_decref(r->targets);
	free(r->load_cmd);
	free(r);
	return rc;
}

json_t *mgw_bench_cooldown(const struct mgw_bench_env *env, int threshold,
                           double max_s)
{
	uint64_t start = mgw_now_ns();
	size_t before = mgw_bench_timewait_count(env->ports, env->n_ports), now;
	double waited = 0;

	now = before;
	while ((int)now >= threshold && waited < max_s) {
		if (mgw_bench_sleep(fmin(1.0, max_s - waited)))
			break;
		waited = (double)(mgw_now_ns() - start) / 1e9;
		now = mgw_bench_timewait_count(env->ports, env->n_ports);
	}
	return json_pack("{s:i, s:I, s:I, s:o, s:b}", "threshold", threshold,
	                 "time_wait_before", (json_int_t)before,
	                 "time_wait_after", (json_int_t)now,
	                 "waited_s", secs(waited),
	                 "timed_out", (int)now >= threshold);
}
