/* main.c - mcpgw-bench: the command line, the order of a run (scenes,
 * repetitions in alternating order, a cooldown before each), and the
 * reports, rewritten after every repetition so that an interrupted run
 * still leaves a consistent report of what it measured. */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/cli.h"
#include "core/errors.h"
#include "util/parse.h"
#include "util/rand.h"
#include "bench/src/aggregate.h"
#include "bench/src/cell.h"
#include "bench/src/cli.h"
#include "bench/src/proc.h"
#include "bench/src/report_json.h"
#include "bench/src/report_md.h"
#include "bench/src/resume.h"
#include "bench/src/scene.h"
#include "bench/src/state_table.h"
#include "bench/src/soak.h"
#include "bench/src/subst.h"

/* The HTML renderer (bench/src/report_html.c) is built when present; the
 * weak references let this program link and run without it, skipping
 * report.html with a warning. */
int mgw_bench_report_html(const json_t *report, const char *run_dir,
                          const char *out_path) __attribute__((weak));
int mgw_bench_html_main(int argc, char **argv) __attribute__((weak));

#define MIN_REPS 5
#define DEFAULT_REPS 10
#define DEFAULT_THRESHOLD 256
/* The load client hands an open-loop tick to the most recently idle
 * virtual user, so with sub-millisecond answers one user (one session)
 * would carry the whole rate; a service time keeps rate x time calls in
 * flight, each on its own user, as many clients would. */
#define DEFAULT_SERVICE_MS 50

static const char usage_text[] =
"usage: mcpgw-bench SCENE [OPTIONS]\n"
"       mcpgw-bench soak [OPTIONS]   (its options: mcpgw-bench soak --help)\n"
"       mcpgw-bench resume DIR [--allow-harness-change]\n"
"       mcpgw-bench html DIR\n"
"\n"
"The churn bench: starts `mcpgw backend` replicas, `mcpgw serve` gateways,\n"
"redis-server and `mcpgw load` on 127.0.0.1 (ephemeral ports), kills and\n"
"replaces them on schedule, repeats every cell, and reports what each\n"
"configuration lost.\n"
"\n"
"SCENE:\n"
"  scale-out     replicas 1, 2, 4 x new connection / reuse x legacy /\n"
"                modern, direct; the gateway at 4 replicas (200 rps)\n"
"  handles       modern handles in replica memory, HMAC-signed, in Redis;\n"
"                direct and through the gateway (100 rps)\n"
"  pod-kill      one of 2 replicas killed at --kill-at and replaced on its\n"
"                port after --readiness-delay (100 rps)\n"
"  gateway-kill  one of 2 gateways (gateway-ha) killed and replaced\n"
"  redis-outage  redis-server killed and restarted\n"
"  mrtr          MRTR book dialogues, requestState in replica memory,\n"
"                sealed (a shared key file) or in Redis; one of 2\n"
"                replicas killed; direct and through the gateway (50/s)\n"
"  fork          every dialogue's last round presented again (sealed\n"
"                state): direct, gateway, gateway with the single-use\n"
"                guard; forked vs refused (50/s)\n"
"  tasks         tasks in replica memory or Redis, one of 2 replicas\n"
"                killed; direct, gateway, gateway with affinity: task\n"
"                (50/s)\n"
"  demo          pod-kill, legacy only: direct vs gateway (vs --external)\n"
"  all           every scene but demo, in the order above\n"
"\n"
"Options:\n"
"  --quick              every cell once, short runs (4 s, kill scenes 6 s\n"
"                       with the kill at 2 s): a smoke run, not a result\n"
"  --reps N             repetitions per cell (default 10; at least 5\n"
"                       unless --quick, whose default is 1)\n"
"  --out DIR            output directory (default mcpgw-bench-DATE-TIME);\n"
"                       must not hold an earlier run\n"
"  --duration S         run length of every cell (default 30 s, kill\n"
"                       scenes 60 s)\n"
"  --rate RPS           offered rate, open loop (default 200 scale-out, 50\n"
"                       mrtr, fork and tasks, 100 otherwise)\n"
"  --kill-at S          kill time on the load client's clock (default 20)\n"
"  --kill-signal KILL|TERM\n"
"                       signal of the kill (default KILL)\n"
"  --readiness-delay S  from the kill to the replacement's start (default\n"
"                       2 s, --quick 1 s)\n"
"  --external CMD       adds an `external` path: CMD is run with /bin/sh in\n"
"                       front of the replicas, placeholders {listen}\n"
"                       (127.0.0.1:PORT to listen on), {listen_port},\n"
"                       {ports}, {addrs}, {port1}..{portN}, {n}, {dir}.\n"
"                       bench/haproxy-sticky.sh is one ready to use\n"
"  --external-name NAME the external path's name in tables (default\n"
"                       external)\n"
"  --cell GLOB          only cells whose name or slug matches (repeatable)\n"
"  --service-ms N       every replica answers after N ms (default 50):\n"
"                       at R rps about R*N/1000 calls are in flight, each\n"
"                       virtual user with its own session or handle; 0\n"
"                       lets one user carry the whole load\n"
"  --reconnect-after N  in reuse cells each virtual user opens a new\n"
"                       connection (to a target drawn again) after N\n"
"                       requests, as the field study's clients did now and\n"
"                       then (default 0: keep it while it works)\n"
"  --spread-users       the load client's ticks go round all --concurrency\n"
"                       virtual users (sessions), as that many clients\n"
"                       would (default: the most recently idle one)\n"
"  --users N            the load client's fixed population of virtual\n"
"                       users, each with its own session and connection\n"
"                       (mcpgw load --users); default: 100 in the kill\n"
"                       scenes, none elsewhere; 0: none\n"
"  --no-list-tools      legacy clients do not call tools/list after each\n"
"                       initialization (by default they do, as real\n"
"                       clients do)\n"
"  --concurrency N      the load client's in-flight bound (default 64)\n"
"  --workers N          gateway worker threads (default 1)\n"
"  --cooldown-max S     longest wait before a cell for TIME_WAIT sockets\n"
"                       on the bench's ports to drop (default 120 s,\n"
"                       --quick 3 s)\n"
"  --cooldown-threshold N\n"
"                       TIME_WAIT sockets a cell may start with (default\n"
"                       256)\n"
"  --mcpgw PATH         the mcpgw binary (default: $MCPGW, else the one\n"
"                       next to mcpgw-bench, else mcpgw on PATH)\n"
"  --redis-server PATH  redis-server to run (default: on PATH)\n"
"  -h, --help           this text\n"
"  --version            the version (and the libraries built in)\n"
"\n"
"Writes DIR/report.md, report.json, report.csv, report.html,\n"
"versions.txt, runs/SCENE/CELL-rNN.json (the load client's report, kill\n"
"records, gateway counters) and logs/.  `mcpgw-bench html DIR` re-renders\n"
"report.html.  `mcpgw-bench resume DIR` continues an interrupted run with\n"
"its own options, running only the repetitions it lacks; it refuses when\n"
"the kind of machine (CPU count, memory, OS; the kernel build and CPU\n"
"model may differ and are recorded per sitting) or a component's build\n"
"(mcpgw's SHA-256 among them) is not the one DIR was measured with.\n"
"--allow-harness-change accepts another build of mcpgw-bench itself (its\n"
"SHA-256 is recorded per sitting); the measured builds must still match.\n"
"See doc/bench.md.\n"
"\n"
"Exit status: 0 every cell has at least one valid repetition; 1 a cell\n"
"has none, a component could not be run, or the run was interrupted;\n"
"2 usage error.\n";


/* The scenes' command line: errors name no sub-command. */
#define usage_error(...) mgw_bench_usage_error(NULL, __VA_ARGS__)
#define parse_secs(flag, v, out) mgw_bench_parse_secs(NULL, flag, v, out)
#define parse_num(flag, v, min, max, out) \
	mgw_bench_parse_num(NULL, flag, v, min, max, out)

static int write_key(const char *path)
{
	char hex[65];
	FILE *f;
	int rc;

	if (mgw_random_hex(hex, 32) != 0)
		return MGW_EIO;
	f = fopen(path, "we");
	if (!f)
		return MGW_EIO;
	chmod(path, 0600);
	fprintf(f, "# generated by mcpgw-bench for this run only\nbench1 %s\n",
	        hex);
	rc = ferror(f) ? MGW_EIO : 0;
	if (fclose(f) != 0)
		rc = MGW_EIO;
	return rc;
}

/* One scene's cells and what their repetitions produced. */
struct scene_run {
	enum mgw_bench_scene scene;
	struct mgw_bench_cell cells[MGW_BENCH_MAX_CELLS];
	int n_cells;
	json_t *runs[MGW_BENCH_MAX_CELLS];  /* arrays of run records */
	json_t *paths[MGW_BENCH_MAX_CELLS]; /* arrays of their paths */
};

struct run {
	struct mgw_bench_opts o;
	struct mgw_bench_env env;
	struct scene_run scenes[MGW_BENCH_SCENE_N];
	size_t n_scenes;
	json_t *machine, *versions;
	json_t *argv;     /* the command line as an array, for a resume */
	json_t *sittings; /* [{started_at, command, kernel, cpu, harness_sha256}] */
	const char *resume_dir; /* set by `mcpgw-bench resume DIR` */
	int allow_harness;      /* resume --allow-harness-change */
	json_t *resumed;  /* that DIR's report.json */
	char command[4096];
	char started[40];
	int interrupted;
};

static double scene_readiness(const struct run *R)
{
	return R->env.readiness_delay_s;
}

static json_t *build_report(struct run *R, int finished)
{
	char fin[40];
	json_t *rep, *scenes = json_array(), *opts;

	mgw_bench_iso_now(fin, sizeof(fin));
	for (size_t s = 0; s < R->n_scenes; s++) {
		struct scene_run *sr = &R->scenes[s];
		json_t *cells = json_array(), *so;
		const struct mgw_bench_cell *c0 = sr->n_cells ? &sr->cells[0] : NULL;

		for (int i = 0; i < sr->n_cells; i++) {
			json_t *agg;

			if (json_array_size(sr->runs[i]) == 0)
				continue; /* not reached yet (interrupted run) */
			agg = mgw_bench_aggregate(&sr->cells[i], sr->runs[i],
			                          sr->paths[i]);
			if (agg)
				json_array_append_new(cells, agg);
		}
		so = json_pack("{s:s, s:s, s:o, s:o, s:i, s:i, s:b, s:o, s:s?, s:o, "
		               "s:s, s:o}",
			"scene", mgw_bench_scene_name(sr->scene),
			"title", mgw_bench_scene_title(sr->scene),
			"offered_rps", json_real(c0 ? c0->offered_rps : 0),
			"duration_s", json_real(c0 ? c0->duration_s : 0),
			"reps", R->o.reps,
			"service_ms", R->o.service_ms,
			"list_tools", !R->o.no_list_tools,
			"kill_at_s", mgw_bench_scene_kills(sr->scene) && c0
			                 ? json_real(c0->kill_at_s) : json_null(),
			"kill_signal", mgw_bench_scene_kills(sr->scene)
			                   ? (R->o.kill_signal == SIGTERM ? "TERM"
			                                                  : "KILL")
			                   : NULL,
			"readiness_delay_s", mgw_bench_scene_kills(sr->scene)
			                         ? json_real(scene_readiness(R))
			                         : json_null(),
			"order", "alternating: forward in odd repetitions, reversed "
			         "in even ones",
			"cells", cells);
		if (so)
			json_array_append_new(scenes, so);
	}
	opts = json_pack("{s:b, s:i, s:o, s:i, s:i, s:o, s:i, s:i, s:i, s:b, "
	                 "s:i, s:b, s:s?, s:s?}",
		"quick", R->o.quick, "reps", R->o.reps,
		"cooldown_max_s", json_real(R->o.cooldown_max_s),
		"cooldown_threshold", R->o.cooldown_threshold,
		"workers", R->o.workers,
		"readiness_delay_s", json_real(R->env.readiness_delay_s),
		"concurrency", R->o.concurrency, "service_ms", R->o.service_ms,
		"reconnect_after", R->o.reconnect_after,
		"spread_users", R->o.spread_users,
		"users", R->o.users,
		"list_tools", !R->o.no_list_tools,
		"external", R->o.external, "external_name", R->o.external_name);
	rep = json_pack("{s:s, s:s, s:O, s:O, s:s, s:s?, s:b, s:O, s:O, s:o, "
	                "s:o}",
		"tool", "mcpgw-bench",
		"command", R->command,
		"argv", R->argv,
		"sittings", R->sittings,
		"started_at", R->started,
		"finished_at", finished ? fin : NULL,
		"complete", finished && !R->interrupted,
		"machine", R->machine,
		"versions", R->versions,
		"options", opts,
		"scenes", scenes);
	return rep;
}

/* Writes report.json, report.md and report.csv (and report.html at the
 * end).  Returns 0 or MGW_EIO. */
static int write_reports(struct run *R, int finished)
{
	char path[PATH_MAX];
	json_t *rep = build_report(R, finished);
	FILE *f;
	int rc = 0;

	if (!rep)
		return MGW_ENOMEM;
	snprintf(path, sizeof(path), "%s/report.json", R->o.out_dir);
	if (mgw_bench_write_json(rep, path) != 0)
		rc = MGW_EIO;
	snprintf(path, sizeof(path), "%s/report.md", R->o.out_dir);
	f = fopen(path, "we");
	if (!f || mgw_bench_report_md(f, rep) != 0)
		rc = MGW_EIO;
	if (f && fclose(f) != 0)
		rc = MGW_EIO;
	snprintf(path, sizeof(path), "%s/report.csv", R->o.out_dir);
	f = fopen(path, "we");
	if (!f || mgw_bench_report_csv(f, rep) != 0)
		rc = MGW_EIO;
	if (f && fclose(f) != 0)
		rc = MGW_EIO;
	if (finished) {
		snprintf(path, sizeof(path), "%s/report.html", R->o.out_dir);
		if (mgw_bench_report_html) {
			if (mgw_bench_report_html(rep, R->o.out_dir, path) != 0) {
				fprintf(stderr, "mcpgw-bench: could not write %s\n", path);
				rc = MGW_EIO;
			}
		} else {
			fprintf(stderr, "mcpgw-bench: warning: this build has no HTML "
			        "renderer; report.html not written\n");
		}
	}
	json_decref(rep);
	return rc;
}

static void progress(const struct scene_run *sr, int ci, int rep, int reps,
                     const json_t *rec)
{
	const json_t *t = json_object_get(json_object_get(rec, "load"), "total");
	const json_t *f = json_object_get(t, "failures");
	json_int_t other = 0;

	for (const char *const *k = mgw_bench_other_failures; *k; k++)
		other += json_integer_value(json_object_get(f, *k));
	printf("[%s rep %d/%d] %s: ", mgw_bench_scene_name(sr->scene), rep, reps,
	       sr->cells[ci].name);
	if (json_is_true(json_object_get(rec, "valid")) &&
	    sr->cells[ci].flow != MGW_BENCH_FLOW_PLAIN)
		printf("%.1f rps, %lld dialogues, %lld tasks, losses state %lld "
		       "task %lld other %lld, %lld forked, %lld refused\n",
		       json_number_value(json_object_get(t, "achieved_rps")),
		       (long long)json_integer_value(json_object_get(t, "dialogues")),
		       (long long)json_integer_value(json_object_get(t, "tasks")),
		       (long long)json_integer_value(json_object_get(f, "state_lost")),
		       (long long)json_integer_value(json_object_get(f, "task_lost")),
		       (long long)other,
		       (long long)json_integer_value(json_object_get(t, "forked")),
		       (long long)json_integer_value(json_object_get(t, "refused")));
	else if (json_is_true(json_object_get(rec, "valid")))
		printf("%.1f rps, losses session %lld handle %lld other %lld\n",
		       json_number_value(json_object_get(t, "achieved_rps")),
		       (long long)json_integer_value(json_object_get(f, "session_lost")),
		       (long long)json_integer_value(json_object_get(f, "handle_lost")),
		       (long long)other);
	else
		printf("INVALID: %s\n", json_string_value(json_object_get(
		                            rec, "invalid_reason")));
	fflush(stdout);
}

/* Whether runs (an array of run records) holds repetition rep. */
static int has_rep(const json_t *runs, int rep)
{
	const json_t *rec;
	size_t i;

	json_array_foreach(runs, i, rec)
		if (json_integer_value(json_object_get(rec, "rep")) == rep)
			return 1;
	return 0;
}

/* Runs every repetition of every scene that no earlier sitting finished.
 * Returns 0, MGW_ECLOSED when interrupted, MGW_EIO when a record could
 * not be written. */
static int run_all(struct run *R)
{
	/* a resumed run cools down first: the last sitting's sockets, or
	 * anything else's, may still be there */
	int first = !R->resume_dir;

	for (size_t s = 0; s < R->n_scenes; s++) {
		struct scene_run *sr = &R->scenes[s];

		for (int rep = 1; rep <= R->o.reps; rep++) {
			for (int k = 0; k < sr->n_cells; k++) {
				/* odd repetitions forward, even ones backward: drift
				 * over a run (heat, background load, TIME_WAIT left
				 * over) falls on every cell alike */
				int ci = rep % 2 ? k : sr->n_cells - 1 - k;
				json_t *cool = NULL, *rec = NULL;
				char rel[PATH_MAX];
				int rc;

				if (has_rep(sr->runs[ci], rep))
					continue; /* finished in an earlier sitting */
				if (!first)
					cool = mgw_bench_cooldown(&R->env,
					                          R->o.cooldown_threshold,
					                          R->o.cooldown_max_s);
				first = 0;
				if (mgw_bench_interrupted) {
					json_decref(cool);
					return MGW_ECLOSED;
				}
				rc = mgw_bench_run_rep(&R->env, &sr->cells[ci], rep, cool,
				                       &rec, rel, sizeof(rel));
				json_decref(cool);
				if (rc != 0)
					return rc;
				json_array_append_new(sr->runs[ci], rec);
				json_array_append_new(sr->paths[ci], json_string(rel));
				progress(sr, ci, rep, R->o.reps, rec);
				if (write_reports(R, 0) != 0)
					return MGW_EIO;
			}
		}
	}
	return 0;
}

static int needs_redis(const struct run *R)
{
	for (size_t s = 0; s < R->n_scenes; s++)
		for (int i = 0; i < R->scenes[s].n_cells; i++) {
			const struct mgw_bench_cell *c = &R->scenes[s].cells[i];

			if (c->state == MGW_BENCH_STATE_REDIS ||
			    c->store == MGW_BENCH_STORE_REDIS)
				return 1;
		}
	return 0;
}

/* The output directory: created, and refused when it already holds a
 * run (results of two runs must never mix). */
static int prepare_out(struct run *R)
{
	char path[PATH_MAX];
	struct stat stt;

	snprintf(path, sizeof(path), "%s/report.json", R->o.out_dir);
	if (!R->resume_dir && stat(path, &stt) == 0)
		return usage_error("--out %s already holds a run (report.json); "
		                   "choose another directory, or continue it with "
		                   "`mcpgw-bench resume %s`", R->o.out_dir,
		                   R->o.out_dir);
	snprintf(path, sizeof(path), "%s/runs", R->o.out_dir);
	if (!R->resume_dir && stat(path, &stt) == 0)
		return usage_error("--out %s already holds runs/; choose another "
		                   "directory", R->o.out_dir);
	snprintf(path, sizeof(path), "%s/keys", R->o.out_dir);
	if (mgw_bench_mkdirs(path) != 0) {
		fprintf(stderr, "mcpgw-bench: cannot create %s: %s\n", path,
		        strerror(errno));
		return MGW_EXIT_RUNTIME;
	}
	snprintf(R->env.handle_key, sizeof(R->env.handle_key),
	         "%s/keys/handles.key", R->o.out_dir);
	snprintf(R->env.session_key, sizeof(R->env.session_key),
	         "%s/keys/sessions.key", R->o.out_dir);
	/* a resume keeps the keys of its first sitting */
	if ((!R->resume_dir || access(R->env.handle_key, R_OK) != 0 ||
	     access(R->env.session_key, R_OK) != 0) &&
	    (write_key(R->env.handle_key) != 0 ||
	     write_key(R->env.session_key) != 0)) {
		fprintf(stderr, "mcpgw-bench: cannot write keys under %s\n", path);
		return MGW_EXIT_RUNTIME;
	}
	return 0;
}

/* Turns a relative --out into an absolute path: the children are told
 * file names under it, and they do not share our working directory's
 * meaning if it ever changes. */
static int absolute_out(struct run *R, char *buf, size_t len)
{
	char cwd[PATH_MAX];

	if (R->o.out_dir[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd)))
		return MGW_EIO;
	if (snprintf(buf, len, "%s/%s", cwd, R->o.out_dir) >= (int)len)
		return MGW_EINVAL;
	R->o.out_dir = buf;
	return 0;
}

enum {
	OPT_QUICK = 256, OPT_REPS, OPT_OUT, OPT_EXTERNAL, OPT_EXTERNAL_NAME,
	OPT_DURATION, OPT_RATE, OPT_KILL_AT, OPT_KILL_SIGNAL, OPT_READINESS,
	OPT_MCPGW, OPT_REDIS, OPT_CELL, OPT_CONCURRENCY, OPT_WORKERS,
	OPT_COOL_MAX, OPT_COOL_THRESHOLD, OPT_TEST_PREKILL, OPT_SERVICE_MS,
	OPT_VERSION,
	OPT_RECONNECT_AFTER, OPT_SPREAD_USERS, OPT_USERS,
	OPT_NO_LIST_TOOLS,
};

static const struct option long_opts[] = {
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "external", required_argument, NULL, OPT_EXTERNAL },
	{ "external-name", required_argument, NULL, OPT_EXTERNAL_NAME },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "kill-at", required_argument, NULL, OPT_KILL_AT },
	{ "kill-signal", required_argument, NULL, OPT_KILL_SIGNAL },
	{ "readiness-delay", required_argument, NULL, OPT_READINESS },
	{ "mcpgw", required_argument, NULL, OPT_MCPGW },
	{ "redis-server", required_argument, NULL, OPT_REDIS },
	{ "cell", required_argument, NULL, OPT_CELL },
	{ "concurrency", required_argument, NULL, OPT_CONCURRENCY },
	{ "service-ms", required_argument, NULL, OPT_SERVICE_MS },
	{ "reconnect-after", required_argument, NULL, OPT_RECONNECT_AFTER },
	{ "spread-users", no_argument, NULL, OPT_SPREAD_USERS },
	{ "users", required_argument, NULL, OPT_USERS },
	{ "no-list-tools", no_argument, NULL, OPT_NO_LIST_TOOLS },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "cooldown-max", required_argument, NULL, OPT_COOL_MAX },
	{ "cooldown-threshold", required_argument, NULL, OPT_COOL_THRESHOLD },
	/* test aid, not in --help: the victim is SIGKILLed before the load
	 * starts, so the scheduled kill finds it dead (doc/bench.md) */
	{ "test-prekill", no_argument, NULL, OPT_TEST_PREKILL },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* Parses argv into R->o.  Returns -1 to go on, else an exit status. */
static int parse_args(struct run *R, int argc, char **argv)
{
	struct mgw_bench_opts *o = &R->o;
	double readiness = -1, cool_max = -1;
	int reps = 0, opt, rc;
	long long v;
	const char *scene;

	memset(o, 0, sizeof(*o));
	o->kill_signal = SIGKILL;
	o->redis_server = "redis-server";
	o->workers = 1;
	o->cooldown_threshold = DEFAULT_THRESHOLD;
	o->service_ms = DEFAULT_SERVICE_MS;
	o->users = -1; /* per scene */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		rc = 0;
		switch (opt) {
		case 'h':
			fputs(usage_text, stdout);
			return MGW_EXIT_OK;
		case OPT_VERSION:
			return mgw_cli_version(stdout);
		case OPT_QUICK: o->quick = 1; break;
		case OPT_REPS:
			rc = parse_num("--reps", optarg, 1, 1000, &v);
			reps = (int)v;
			break;
		case OPT_OUT: o->out_dir = optarg; break;
		case OPT_EXTERNAL: o->external = optarg; break;
		case OPT_EXTERNAL_NAME: o->external_name = optarg; break;
		case OPT_DURATION: rc = parse_secs("--duration", optarg, &o->duration_s); break;
		case OPT_RATE:
			rc = parse_num("--rate", optarg, 1, 1000000, &v);
			o->rate = (double)v;
			break;
		case OPT_KILL_AT: rc = parse_secs("--kill-at", optarg, &o->kill_at_s); break;
		case OPT_KILL_SIGNAL:
			if (strcmp(optarg, "KILL") == 0 || strcmp(optarg, "SIGKILL") == 0)
				o->kill_signal = SIGKILL;
			else if (strcmp(optarg, "TERM") == 0 || strcmp(optarg, "SIGTERM") == 0)
				o->kill_signal = SIGTERM;
			else
				rc = usage_error("--kill-signal: '%s' is not KILL or TERM",
				                 optarg);
			break;
		case OPT_READINESS:
			if (mgw_parse_duration(optarg, &readiness) != 0 || readiness > 600)
				rc = usage_error("--readiness-delay: '%s' is not a duration "
				                 "up to 600 s", optarg);
			break;
		case OPT_MCPGW: o->mcpgw = optarg; break;
		case OPT_REDIS: o->redis_server = optarg; break;
		case OPT_CELL:
			if (o->n_filters >= MGW_BENCH_MAX_FILTERS)
				rc = usage_error("--cell: at most %d patterns",
				                 MGW_BENCH_MAX_FILTERS);
			else
				o->filters[o->n_filters++] = optarg;
			break;
		case OPT_CONCURRENCY:
			rc = parse_num("--concurrency", optarg, 1, 100000, &v);
			o->concurrency = (int)v;
			break;
		case OPT_NO_LIST_TOOLS: o->no_list_tools = 1; break;
		case OPT_SPREAD_USERS: o->spread_users = 1; break;
		case OPT_USERS:
			rc = parse_num("--users", optarg, 0, 100000, &v);
			o->users = (int)v;
			break;
		case OPT_RECONNECT_AFTER:
			rc = parse_num("--reconnect-after", optarg, 0, 1000000000, &v);
			o->reconnect_after = (int)v;
			break;
		case OPT_SERVICE_MS:
			rc = parse_num("--service-ms", optarg, 0, 60000, &v);
			o->service_ms = (int)v;
			break;
		case OPT_WORKERS:
			rc = parse_num("--workers", optarg, 1, 64, &v);
			o->workers = (int)v;
			break;
		case OPT_COOL_MAX:
			if (mgw_parse_duration(optarg, &cool_max) != 0 || cool_max > 3600)
				rc = usage_error("--cooldown-max: '%s' is not a duration "
				                 "up to 3600 s", optarg);
			break;
		case OPT_COOL_THRESHOLD:
			rc = parse_num("--cooldown-threshold", optarg, 1, 10000000, &v);
			o->cooldown_threshold = (int)v;
			break;
		case OPT_TEST_PREKILL: o->test_prekill = 1; break;
		case ':':
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (rc)
			return rc;
	}
	if (optind >= argc)
		return usage_error("no SCENE given");
	if (optind + 1 < argc)
		return usage_error("unexpected argument '%s' after the scene",
		                   argv[optind + 1]);
	scene = argv[optind];
	if (strcmp(scene, "all") == 0) {
		for (int s = 0; s < MGW_BENCH_SCENE_N; s++)
			if (s != MGW_BENCH_DEMO && s != MGW_BENCH_SOAK)
				o->scenes[o->n_scenes++] = (enum mgw_bench_scene)s;
	} else if (strcmp(scene, "soak") == 0) {
		return usage_error("soak is a command of its own, with its own "
		                   "options: mcpgw-bench soak [OPTIONS] (see "
		                   "mcpgw-bench soak --help)");
	} else if (mgw_bench_scene_parse(scene, &o->scenes[0]) == 0) {
		o->n_scenes = 1;
	} else {
		return usage_error("unknown scene '%s' (scale-out, handles, "
		                   "pod-kill, gateway-kill, redis-outage, mrtr, fork, "
		                   "tasks, demo, all)",
		                   scene);
	}
	if (reps == 0)
		reps = o->quick ? 1 : DEFAULT_REPS;
	if (!o->quick && reps < MIN_REPS)
		return usage_error("--reps %d: at least %d repetitions per cell "
		                   "(a median of fewer says little); --quick runs "
		                   "a smoke test", reps, MIN_REPS);
	o->reps = reps;
	R->env.readiness_delay_s = readiness >= 0 ? readiness : o->quick ? 1.0 : 2.0;
	o->readiness_delay_s = R->env.readiness_delay_s;
	o->cooldown_max_s = cool_max >= 0 ? cool_max : o->quick ? 3.0 : 120.0;
	if (o->external_name && !*o->external_name)
		return usage_error("--external-name must not be empty");
	if (o->external_name && !o->external)
		return usage_error("--external-name needs --external");
	if (o->external) {
		struct mgw_bench_subst_vars sv;
		char buf[8192], err[256];

		memset(&sv, 0, sizeof(sv));
		sv.listen_port = 1;
		sv.n_ports = MGW_BENCH_MAX_REPLICAS;
		for (int i = 0; i < sv.n_ports; i++)
			sv.ports[i] = i + 2;
		sv.dir = "/tmp";
		if (mgw_bench_subst(o->external, &sv, buf, sizeof(buf), err,
		                    sizeof(err)) != 0)
			return usage_error("--external: %s", err);
	}
	return -1;
}

/* Builds each scene's cells and checks the kill time fits the runs. */
static int plan(struct run *R)
{
	int total = 0;

	for (size_t s = 0; s < R->o.n_scenes; s++) {
		struct scene_run *sr = &R->scenes[R->n_scenes];
		int n = mgw_bench_scene_cells(R->o.scenes[s], &R->o, sr->cells,
		                              MGW_BENCH_MAX_CELLS);

		if (n < 0)
			return usage_error("internal: too many cells in scene %s",
			                   mgw_bench_scene_name(R->o.scenes[s]));
		if (n == 0)
			continue;
		sr->scene = R->o.scenes[s];
		sr->n_cells = n;
		for (int i = 0; i < n; i++) {
			const struct mgw_bench_cell *c = &sr->cells[i];

			if (c->victim != MGW_BENCH_VICTIM_NONE &&
			    c->kill_at_s >= c->duration_s)
				return usage_error("the kill at %g s falls outside the "
				                   "%g s run (--kill-at, --duration)",
				                   c->kill_at_s, c->duration_s);
			sr->runs[i] = json_array();
			sr->paths[i] = json_array();
		}
		total += n;
		R->n_scenes++;
	}
	if (total == 0)
		return usage_error("no cell matches the --cell patterns");
	return -1;
}

static void free_run(struct run *R)
{
	for (size_t s = 0; s < R->n_scenes; s++)
		for (int i = 0; i < R->scenes[s].n_cells; i++) {
			json_decref(R->scenes[s].runs[i]);
			json_decref(R->scenes[s].paths[i]);
		}
	json_decref(R->machine);
	json_decref(R->versions);
	json_decref(R->argv);
	json_decref(R->sittings);
	json_decref(R->resumed);
}

/* Prints every scene's table (the README's demo output). */
static void print_tables(struct run *R)
{
	json_t *rep = build_report(R, 1);
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(rep, "scenes"), i, s) {
		printf("\n%s (%s)\n\n", json_string_value(json_object_get(s, "scene")),
		       json_string_value(json_object_get(s, "title")));
		mgw_bench_report_md_table(stdout, s);
		if (mgw_bench_state_cols(json_string_value(json_object_get(s,
		                                                           "scene")))) {
			putchar('\n');
			mgw_bench_report_md_state_table(stdout, s);
		}
	}
	json_decref(rep);
}

static int all_cells_valid(const struct run *R)
{
	for (size_t s = 0; s < R->n_scenes; s++)
		for (int i = 0; i < R->scenes[s].n_cells; i++) {
			const json_t *rec;
			size_t k;
			int any = 0;

			json_array_foreach(R->scenes[s].runs[i], k, rec)
				if (json_is_true(json_object_get(rec, "valid")))
					any = 1;
			if (!any)
				return 0;
		}
	return 1;
}

/* The report of an earlier sitting: its options (argv) become this
 * run's.  Returns -1 to go on (argc/argv replaced), else an exit status. */
static int open_resume(struct run *R, const char *dir, int *argc,
                       char ***argv)
{
	char err[512];

	R->resumed = mgw_bench_resume_load(dir, err, sizeof(err));
	if (!R->resumed) {
		fprintf(stderr, "mcpgw-bench: resume: %s\n", err);
		return MGW_EXIT_USAGE;
	}
	if (json_is_true(json_object_get(R->resumed, "complete"))) {
		printf("mcpgw-bench: %s holds a complete run; nothing to resume\n",
		       dir);
		return MGW_EXIT_OK;
	}
	*argc = mgw_bench_resume_argv(R->resumed, argv);
	if (*argc < 0) {
		fprintf(stderr, "mcpgw-bench: resume: out of memory\n");
		return MGW_EXIT_RUNTIME;
	}
	R->resume_dir = dir;
	return -1;
}

/* A resume's checks (same machine, same builds) and the repetitions its
 * earlier sittings finished, loaded into R.  Returns 0 or an exit
 * status. */
static int load_resumed(struct run *R)
{
	char err[1024];
	int done = 0, total = 0;

	if (mgw_bench_resume_compare(R->resumed, R->machine, R->versions,
	                             R->allow_harness, err, sizeof(err)) != 0) {
		fprintf(stderr, "mcpgw-bench: cannot resume %s: %s; a run must not "
		        "mix machines or builds (resume with the build it started "
		        "with, or start a new run)\n", R->resume_dir, err);
		return MGW_EXIT_RUNTIME;
	}
	for (size_t s = 0; s < R->n_scenes; s++) {
		struct scene_run *sr = &R->scenes[s];
		const char *scene = mgw_bench_scene_name(sr->scene);

		for (int rep = 1; rep <= R->o.reps; rep++)
			for (int i = 0; i < sr->n_cells; i++) {
				json_t *rec = mgw_bench_resume_run(R->o.out_dir, scene,
				                                   sr->cells[i].slug, rep);
				char rel[PATH_MAX];

				total++;
				if (!rec)
					continue;
				mgw_bench_env_note_record(&R->env, rec);
				snprintf(rel, sizeof(rel), "runs/%s/%s-r%02d.json", scene,
				         sr->cells[i].slug, rep);
				json_array_append_new(sr->runs[i], rec);
				json_array_append_new(sr->paths[i], json_string(rel));
				done++;
			}
	}
	printf("mcpgw-bench: resuming %s: %d of %d repetitions already done\n",
	       R->resume_dir, done, total);
	return 0;
}

/* The sittings so far (a resume's earlier ones) and this one. */
static void add_sitting(struct run *R)
{
	const json_t *old = R->resumed ? json_object_get(R->resumed, "sittings")
	                               : NULL;

	R->sittings = json_is_array(old) ? json_deep_copy(old) : json_array();
	json_array_append_new(R->sittings, json_pack("{s:s, s:s, s:O?, s:O?, s:O?}",
		"started_at", R->started,
		"command", R->resume_dir ? "resume" : "start",
		"kernel", json_object_get(R->machine, "kernel"),
		"cpu", json_object_get(R->machine, "cpu"),
		"harness_sha256", json_object_get(R->versions, "mcpgw-bench_sha256")));
}

/* A resume on another machine of the kind, or with another build of
 * mcpgw-bench: said on the terminal, and the report's "machine" and
 * "versions" stay the first sitting's (the sittings give each one's
 * kernel, CPU model and mcpgw-bench SHA-256). */
static void note_changed(json_t *now, const json_t *then, const char *key,
                         const char *what)
{
	const char *k0 = json_string_value(json_object_get(then, key));
	const char *k1 = json_string_value(json_object_get(now, key));

	if (!k0 || !k1 || strcmp(k0, k1) == 0)
		return;
	printf("mcpgw-bench: this sitting runs %s %s (the run started with %s); "
	       "recorded in the report's sittings\n", what, k1, k0);
	json_object_set_new(now, key, json_string(k0));
}

static void note_machine(struct run *R)
{
	const json_t *m = json_object_get(R->resumed, "machine");

	note_changed(R->machine, m, "kernel", "on kernel");
	note_changed(R->machine, m, "cpu", "on CPU");
	note_changed(R->versions, json_object_get(R->resumed, "versions"),
	             "mcpgw-bench_sha256", "mcpgw-bench build");
}

int main(int argc, char **argv)
{
	static struct run R; /* big: cells and ports; one per process */
	char mcpgw_buf[PATH_MAX], out_buf[PATH_MAX], def_out[64], line[256];
	char **resume_argv = NULL;
	int rc, status = MGW_EXIT_OK;

	if (argc >= 2 && strcmp(argv[1], "html") == 0) {
		if (!mgw_bench_html_main) {
			fprintf(stderr, "mcpgw-bench: this build has no HTML renderer\n");
			return MGW_EXIT_RUNTIME;
		}
		return mgw_bench_html_main(argc - 1, argv + 1);
	}
	if (argc >= 2 && strcmp(argv[1], "soak") == 0)
		return mgw_bench_soak_main(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "resume") == 0) {
		if (argc == 4 && strcmp(argv[3], "--allow-harness-change") == 0)
			R.allow_harness = 1;
		else if (argc != 3)
			return usage_error("usage: mcpgw-bench resume DIR "
			                   "[--allow-harness-change]");
		rc = open_resume(&R, argv[2], &argc, &resume_argv);
		if (rc >= 0)
			goto done_rc;
		argv = resume_argv;
	}
	/* before getopt permutes argv: the command as the user typed it */
	mgw_bench_command_line(R.command, sizeof(R.command), argc, argv);
	R.argv = json_array();
	for (int i = 0; i < argc; i++)
		json_array_append_new(R.argv, json_string(i ? argv[i]
		                                            : "mcpgw-bench"));
	rc = parse_args(&R, argc, argv);
	if (rc >= 0)
		goto done_rc;
	if (R.resume_dir)
		R.o.out_dir = R.resume_dir;
	R.env.o = &R.o;
	rc = plan(&R);
	if (rc >= 0)
		goto done_rc;
	R.o.mcpgw = mgw_bench_find_mcpgw(R.o.mcpgw, mcpgw_buf, sizeof(mcpgw_buf));
	if (mgw_bench_check_mcpgw(NULL, R.o.mcpgw) != 0) {
		rc = MGW_EXIT_RUNTIME;
		goto done_rc;
	}
	if (needs_redis(&R)) {
		char *av[] = { (char *)R.o.redis_server, "--version", NULL };

		if (mgw_bench_capture_line(av, 10.0, line, sizeof(line)) != 0) {
			fprintf(stderr, "mcpgw-bench: cannot run '%s' (install "
			        "redis-server: scripts/setup.sh; or give "
			        "--redis-server PATH)\n", R.o.redis_server);
			rc = MGW_EXIT_RUNTIME;
			goto done_rc;
		}
	}
	if (!R.o.out_dir) {
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(def_out, sizeof(def_out), "mcpgw-bench-%Y%m%d-%H%M%S", &tm);
		R.o.out_dir = def_out;
	}
	if (absolute_out(&R, out_buf, sizeof(out_buf)) != 0) {
		fprintf(stderr, "mcpgw-bench: cannot resolve --out %s\n", R.o.out_dir);
		rc = MGW_EXIT_RUNTIME;
		goto done_rc;
	}
	rc = prepare_out(&R);
	if (rc != 0)
		goto done_rc;
	mgw_bench_iso_now(R.started, sizeof(R.started));
	R.machine = mgw_bench_machine();
	R.versions = mgw_bench_versions(&R.o);
	add_sitting(&R);
	if (R.resume_dir &&
	    json_is_string(json_object_get(R.resumed, "started_at")))
		snprintf(R.started, sizeof(R.started), "%s", json_string_value(
		             json_object_get(R.resumed, "started_at")));
	if (R.resume_dir) {
		rc = load_resumed(&R);
		if (rc != 0)
			goto done_rc;
		note_machine(&R);
	}
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/versions.txt", R.o.out_dir);
		mgw_bench_write_versions_txt(R.machine, R.versions, path);
	}

	mgw_bench_catch_signals();

	printf("mcpgw-bench: output in %s\n", R.o.out_dir);
	fflush(stdout);
	rc = run_all(&R);
	if (rc == MGW_ECLOSED || mgw_bench_interrupted) {
		R.interrupted = 1;
		mgw_bench_proc_kill_all();
		fprintf(stderr, "mcpgw-bench: interrupted; the reports hold the "
		        "repetitions that finished\n");
		status = MGW_EXIT_RUNTIME;
	} else if (rc != 0) {
		/* not complete: repetitions are missing; resume can finish it */
		R.interrupted = 1;
		mgw_bench_proc_kill_all();
		fprintf(stderr, "mcpgw-bench: cannot write under %s: %s; the "
		        "reports hold the repetitions that finished\n",
		        R.o.out_dir, mgw_strerror(rc));
		status = MGW_EXIT_RUNTIME;
	}
	if (write_reports(&R, 1) != 0) {
		fprintf(stderr, "mcpgw-bench: could not write every report under "
		        "%s\n", R.o.out_dir);
		status = MGW_EXIT_RUNTIME;
	}
	if (!R.interrupted) {
		print_tables(&R);
		printf("\nreport: %s/report.md\n", R.o.out_dir);
	}
	if (status == MGW_EXIT_OK && !all_cells_valid(&R)) {
		fprintf(stderr, "mcpgw-bench: some cell has no valid repetition "
		        "(see report.md)\n");
		status = MGW_EXIT_RUNTIME;
	}
	free_run(&R);
	mgw_bench_resume_free_argv(resume_argv);
	return status;
done_rc:
	free_run(&R);
	mgw_bench_resume_free_argv(resume_argv);
	return rc;
}
