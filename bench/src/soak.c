/* soak.c - `mcpgw-bench soak`: the command line, one cell built for it,
 * and the outputs.
 *
 * The run itself is a repetition of the bench's own (cell.c): the same
 * fleet, load client, kill verification and run record, with a kill
 * schedule instead of one kill and samples of the gateway process taken
 * while it runs.  What this file adds is the verdict (soak_report.c),
 * soak.json, soak.html (report_html_soak.c) and the exit status: a soak is a
 * check, and a missed target must fail the job that ran it. */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
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
#include "bench/src/cell.h"
#include "bench/src/cli.h"
#include "bench/src/proc.h"
#include "bench/src/report_html.h"
#include "bench/src/report_json.h"
#include "bench/src/scene.h"
#include "bench/src/soak.h"
#include "bench/src/soak_report.h"

#define CMD "soak"

static const char usage_text[] =
"usage: mcpgw-bench soak [OPTIONS]\n"
"\n"
"One long run through `mcpgw serve` at a steady open-loop rate, with a\n"
"replica SIGKILLed every interval (the replicas in turn) and replaced on\n"
"its port after the readiness delay.  The calls are `echo` (annotated\n"
"idempotent), so every call lost in flight may be replayed: the target\n"
"is no loss at all.  Every --sample-every seconds the gateway process's\n"
"RSS (/proc/PID/status VmRSS) and open descriptors (/proc/PID/fd) are\n"
"sampled with the load client's counts so far.\n"
"\n"
"Options:\n"
"  --duration D         run length (default 30m; s, m, h suffixes)\n"
"  --rate RPS           offered rate, open loop (default 1000)\n"
"  --kill-every D       a replica SIGKILLed this often (default 60s); a\n"
"                       kill whose replacement could not be ready before\n"
"                       the end is not made\n"
"  --replicas N         replicas behind the gateway (default 3)\n"
"  --mode stateless|stateful\n"
"                       stateless: modern (2026-07-28) clients through a\n"
"                       stateless gateway; stateful: legacy (2025-11-25)\n"
"                       sessions through a stateful one (memory store)\n"
"                       (default stateless)\n"
"  --sample-every D     sampling period (default 10s)\n"
"  --warmup D           the start figures are the first sample at or\n"
"                       after this (default 10 % of the run, at most 60s)\n"
"  --max-growth PCT     target: RSS and open fds at the end at most PCT %\n"
"                       above the start (default 5; any number, e.g. -1)\n"
"  --max-losses N       target: failed calls, all reasons (default 0)\n"
"  --service-ms N       every replica answers after N ms (default 50)\n"
"  --users N            virtual users of the load client, each with its\n"
"                       own connection, taking the ticks in turn (default\n"
"                       128): a fixed client population, so the gateway's\n"
"                       descriptors do not follow how many users a burst\n"
"                       woke\n"
"  --concurrency N      the load client's in-flight bound (default 256)\n"
"  --readiness-delay D  from a kill to its replacement's start (default\n"
"                       2s)\n"
"  --workers N          gateway worker threads (default 1)\n"
"  --out DIR            output directory (default mcpgw-soak-DATE-TIME);\n"
"                       must not hold an earlier soak\n"
"  --mcpgw PATH         the mcpgw binary (default: $MCPGW, else the one\n"
"                       next to mcpgw-bench, else mcpgw on PATH)\n"
"  -h, --help           this text\n"
"\n"
"Writes DIR/soak.json (figures, targets, samples), DIR/soak.html (RSS and\n"
"open fds over time, kills marked), DIR/runs/soak/*.json (the run record:\n"
"kills, samples, the load client's whole report) and DIR/logs/, and a\n"
"summary on stdout.  See doc/bench.md, \"Soak\".\n"
"\n"
"Exit status: 0 every target met (the run valid, every planned kill\n"
"verified, RSS and fd growth at most --max-growth, losses at most\n"
"--max-losses); 1 a target missed, the run could not be measured, or it\n"
"was interrupted; 2 usage error.\n";

struct soak {
	struct mgw_bench_opts o;
	struct mgw_bench_env env;
	struct mgw_bench_cell cell;
	struct mgw_bench_soak_targets t;
	double warmup_s;        /* negative: the default */
	char command[4096];
	char started[40];
};

enum {
	OPT_DURATION = 256, OPT_RATE, OPT_KILL_EVERY, OPT_REPLICAS, OPT_MODE,
	OPT_SAMPLE_EVERY, OPT_WARMUP, OPT_MAX_GROWTH, OPT_MAX_LOSSES,
	OPT_SERVICE_MS, OPT_CONCURRENCY, OPT_READINESS, OPT_WORKERS, OPT_OUT,
	OPT_MCPGW, OPT_USERS,
};

static const struct option long_opts[] = {
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "kill-every", required_argument, NULL, OPT_KILL_EVERY },
	{ "replicas", required_argument, NULL, OPT_REPLICAS },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "sample-every", required_argument, NULL, OPT_SAMPLE_EVERY },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "max-growth", required_argument, NULL, OPT_MAX_GROWTH },
	{ "max-losses", required_argument, NULL, OPT_MAX_LOSSES },
	{ "service-ms", required_argument, NULL, OPT_SERVICE_MS },
	{ "concurrency", required_argument, NULL, OPT_CONCURRENCY },
	{ "users", required_argument, NULL, OPT_USERS },
	{ "readiness-delay", required_argument, NULL, OPT_READINESS },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "mcpgw", required_argument, NULL, OPT_MCPGW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define usage_error(...) mgw_bench_usage_error(CMD, __VA_ARGS__)

static void defaults(struct soak *S)
{
	struct mgw_bench_cell *c = &S->cell;

	memset(S, 0, sizeof(*S));
	S->o.kill_signal = SIGKILL;
	S->o.redis_server = "redis-server";
	S->o.workers = 1;
	S->o.service_ms = 50;
	S->o.concurrency = 256;
	S->o.users = 128;
	S->o.reps = 1;
	S->env.readiness_delay_s = 2.0;
	S->warmup_s = -1;
	S->t.max_growth_pct = 5.0;
	S->t.max_losses = 0;
	c->scene = MGW_BENCH_SOAK;
	c->path = MGW_BENCH_GATEWAY;
	c->era = MGW_BENCH_MODERN;
	c->conn = MGW_BENCH_CONN_REUSE;
	c->victim = MGW_BENCH_VICTIM_REPLICA;
	c->replicas = 3;
	c->offered_rps = 1000;
	c->duration_s = 1800;
	c->kill_every_s = 60;
	c->sample_every_s = 10;
	c->learn_tools = 1;
}

static int parse_real(const char *flag, const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(*out) || fabs(*out) > 1e6)
		return usage_error("%s: '%s' is not a number", flag, v);
	return 0;
}

/* One option into S.  Returns 0, or an exit status (help, usage). */
static int on_opt(struct soak *S, int opt, const char *v)
{
	struct mgw_bench_cell *c = &S->cell;
	long long n;
	int rc = 0;

	switch (opt) {
	case OPT_DURATION:
		return mgw_bench_parse_secs(CMD, "--duration", v, &c->duration_s);
	case OPT_RATE:
		rc = mgw_bench_parse_num(CMD, "--rate", v, 1, 1000000, &n);
		c->offered_rps = (double)n;
		return rc;
	case OPT_KILL_EVERY:
		return mgw_bench_parse_secs(CMD, "--kill-every", v, &c->kill_every_s);
	case OPT_REPLICAS:
		rc = mgw_bench_parse_num(CMD, "--replicas", v, 2,
		                         MGW_BENCH_MAX_REPLICAS, &n);
		c->replicas = (int)n;
		return rc;
	case OPT_MODE:
		if (strcmp(v, "stateless") == 0)
			c->era = MGW_BENCH_MODERN;
		else if (strcmp(v, "stateful") == 0)
			c->era = MGW_BENCH_LEGACY;
		else
			return usage_error("--mode: '%s' is not stateless or stateful",
			                   v);
		return 0;
	case OPT_SAMPLE_EVERY:
		return mgw_bench_parse_secs(CMD, "--sample-every", v,
		                            &c->sample_every_s);
	case OPT_WARMUP:
		if (mgw_parse_duration(v, &S->warmup_s) != 0 || S->warmup_s < 0)
			return usage_error("--warmup: '%s' is not a duration", v);
		return 0;
	case OPT_MAX_GROWTH:
		return parse_real("--max-growth", v, &S->t.max_growth_pct);
	case OPT_MAX_LOSSES:
		return mgw_bench_parse_num(CMD, "--max-losses", v, 0, LLONG_MAX / 2,
		                           &S->t.max_losses);
	case OPT_SERVICE_MS:
		rc = mgw_bench_parse_num(CMD, "--service-ms", v, 0, 60000, &n);
		S->o.service_ms = (int)n;
		return rc;
	case OPT_CONCURRENCY:
		rc = mgw_bench_parse_num(CMD, "--concurrency", v, 1, 100000, &n);
		S->o.concurrency = (int)n;
		return rc;
	case OPT_USERS:
		rc = mgw_bench_parse_num(CMD, "--users", v, 1, 100000, &n);
		S->o.users = (int)n;
		return rc;
	case OPT_READINESS:
		if (mgw_parse_duration(v, &S->env.readiness_delay_s) != 0 ||
		    S->env.readiness_delay_s > 600)
			return usage_error("--readiness-delay: '%s' is not a duration "
			                   "up to 600 s", v);
		return 0;
	case OPT_WORKERS:
		rc = mgw_bench_parse_num(CMD, "--workers", v, 1, 64, &n);
		S->o.workers = (int)n;
		return rc;
	case OPT_OUT: S->o.out_dir = v; return 0;
	case OPT_MCPGW: S->o.mcpgw = v; return 0;
	}
	return usage_error("unknown option");
}

/* Parses argv into S.  Returns -1 to go on, else an exit status. */
static int parse_args(struct soak *S, int argc, char **argv)
{
	struct mgw_bench_cell *c = &S->cell;
	int opt, rc;

	defaults(S);
	opterr = 0;
	optind = 2; /* after "soak" */
	while ((opt = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return MGW_EXIT_OK;
		}
		if (opt == ':')
			return usage_error("%s needs a value", argv[optind - 1]);
		if (opt == '?')
			return usage_error("unknown option '%s'", argv[optind - 1]);
		if ((rc = on_opt(S, opt, optarg)) != 0)
			return rc;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (c->sample_every_s > c->duration_s)
		return usage_error("--sample-every %g s is longer than the %g s run",
		                   c->sample_every_s, c->duration_s);
	if (S->warmup_s < 0)
		S->warmup_s = fmin(60.0, c->duration_s * 0.1);
	if (S->warmup_s >= c->duration_s - c->sample_every_s)
		return usage_error("--warmup %g s leaves no two samples to compare "
		                   "in the %g s run", S->warmup_s, c->duration_s);
	S->o.readiness_delay_s = S->env.readiness_delay_s;
	S->env.o = &S->o;
	S->t.warmup_s = S->warmup_s;
	S->t.offered_rps = c->offered_rps;
	S->t.kills_planned = mgw_bench_cell_kill_times(c, S->env.readiness_delay_s,
	                                               NULL, 0);
	if (S->t.kills_planned > MGW_BENCH_MAX_KILLS)
		return usage_error("%d kills planned: at most %d per run "
		                   "(--kill-every, --duration)", S->t.kills_planned,
		                   MGW_BENCH_MAX_KILLS);
	if (c->era == MGW_BENCH_LEGACY)
		c->store = MGW_BENCH_STORE_MEMORY;
	mgw_bench_cell_name(c, NULL, 0);
	return -1;
}

/* The output directory: created, refused when it holds a soak already. */
static int prepare_out(struct soak *S, char *buf, size_t len)
{
	char path[PATH_MAX], cwd[PATH_MAX];
	struct stat st;

	if (!S->o.out_dir) {
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(path, sizeof(path), "mcpgw-soak-%Y%m%d-%H%M%S", &tm);
		snprintf(buf, len, "%s", path);
		S->o.out_dir = buf;
	}
	if (S->o.out_dir[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(path, sizeof(path), "%s/%s", cwd, S->o.out_dir) >=
		        (int)sizeof(path))
			return usage_error("cannot resolve --out %s", S->o.out_dir);
		snprintf(buf, len, "%s", path);
		S->o.out_dir = buf;
	}
	/* a soak's results must never mix with an earlier one's */
	for (size_t i = 0; i < 2; i++) {
		static const char *const names[] = { "soak.json", "runs" };

		if (snprintf(path, sizeof(path), "%s/%s", S->o.out_dir, names[i]) >=
		    (int)sizeof(path))
			return usage_error("--out %s: name too long", S->o.out_dir);
		if (stat(path, &st) == 0)
			return usage_error("--out %s already holds %s; choose another "
			                   "directory", S->o.out_dir, names[i]);
	}
	if (mgw_bench_mkdirs(S->o.out_dir) != 0) {
		fprintf(stderr, "mcpgw-bench soak: cannot create %s: %s\n",
		        S->o.out_dir, strerror(errno));
		return MGW_EXIT_RUNTIME;
	}
	return 0;
}

static json_t *options_json(const struct soak *S)
{
	const struct mgw_bench_cell *c = &S->cell;

	return json_pack("{s:s, s:s, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:I, "
	                 "s:i, s:i, s:i, s:f, s:i, s:s, s:b}",
		"mode", c->era == MGW_BENCH_LEGACY ? "stateful" : "stateless",
		"era", mgw_bench_era_name(c->era),
		"duration_s", c->duration_s, "rate", c->offered_rps,
		"kill_every_s", c->kill_every_s, "replicas", c->replicas,
		"sample_every_s", c->sample_every_s, "warmup_s", S->warmup_s,
		"max_growth_pct", S->t.max_growth_pct,
		"max_losses", (json_int_t)S->t.max_losses,
		"service_ms", S->o.service_ms, "concurrency", S->o.concurrency,
		"users", S->o.users,
		"readiness_delay_s", S->env.readiness_delay_s,
		"workers", S->o.workers, "kill_signal", "KILL",
		"tools_probe", c->learn_tools);
}

/* soak.json: the stamp of the run (command, times, machine, versions,
 * options, the run record's path) and its results. */
static json_t *document(const struct soak *S, json_t *results,
                        const char *rel)
{
	char fin[40];
	json_t *doc;

	mgw_bench_iso_now(fin, sizeof(fin));
	doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:s}",
		"tool", "mcpgw-bench soak",
		"command", S->command,
		"cell", S->cell.name,
		"started_at", S->started,
		"finished_at", fin,
		"machine", mgw_bench_machine(),
		"versions", mgw_bench_versions(&S->o),
		"options", options_json(S),
		"run", rel);
	if (doc)
		json_object_update(doc, results);
	return doc;
}

/* Writes soak.json and soak.html.  Returns 0 or MGW_EIO. */
static int write_outputs(const struct soak *S, const json_t *doc)
{
	char path[PATH_MAX];
	int rc = 0;

	if (snprintf(path, sizeof(path), "%s/soak.json", S->o.out_dir) >=
	        (int)sizeof(path) ||
	    mgw_bench_write_json(doc, path) != 0) {
		fprintf(stderr, "mcpgw-bench soak: cannot write %s\n", path);
		rc = MGW_EIO;
	}
	if (snprintf(path, sizeof(path), "%s/soak.html", S->o.out_dir) >=
	        (int)sizeof(path) ||
	    mgw_bench_soak_html(doc, path) != 0) {
		fprintf(stderr, "mcpgw-bench soak: cannot write %s\n", path);
		rc = MGW_EIO;
	}
	return rc;
}

int mgw_bench_soak_main(int argc, char **argv)
{
	static struct soak S; /* big: the environment's port list */
	char mcpgw_buf[PATH_MAX], out_buf[PATH_MAX], rel[PATH_MAX];
	json_t *rec = NULL, *results = NULL, *doc = NULL;
	int rc;

	rc = parse_args(&S, argc, argv);
	if (rc >= 0)
		return rc;
	mgw_bench_command_line(S.command, sizeof(S.command), argc, argv);
	S.o.mcpgw = mgw_bench_find_mcpgw(S.o.mcpgw, mcpgw_buf, sizeof(mcpgw_buf));
	if (mgw_bench_check_mcpgw(CMD, S.o.mcpgw) != 0)
		return MGW_EXIT_RUNTIME;
	rc = prepare_out(&S, out_buf, sizeof(out_buf));
	if (rc != 0)
		return rc;
	mgw_bench_iso_now(S.started, sizeof(S.started));
	mgw_bench_catch_signals();
	printf("mcpgw-bench soak: %s, %g rps for %g s, a kill every %g s (%d "
	       "planned), samples every %g s; output in %s\n", S.cell.name,
	       S.cell.offered_rps, S.cell.duration_s, S.cell.kill_every_s,
	       S.t.kills_planned, S.cell.sample_every_s, S.o.out_dir);
	fflush(stdout);
	rc = mgw_bench_run_rep(&S.env, &S.cell, 1, NULL, &rec, rel, sizeof(rel));
	if (rc != 0 || mgw_bench_interrupted) {
		mgw_bench_proc_kill_all();
		fprintf(stderr, "mcpgw-bench soak: %s; no results (the logs are "
		        "under %s/logs)\n", rc == MGW_ECLOSED || mgw_bench_interrupted
		                           ? "interrupted"
		                           : "the run record could not be written",
		        S.o.out_dir);
		json_decref(rec);
		return MGW_EXIT_RUNTIME;
	}
	results = mgw_bench_soak_results(rec, &S.t);
	doc = results ? document(&S, results, rel) : NULL;
	if (!doc) {
		fprintf(stderr, "mcpgw-bench soak: out of memory\n");
		rc = MGW_EXIT_RUNTIME;
		goto out;
	}
	rc = write_outputs(&S, doc) != 0 ? MGW_EXIT_RUNTIME : MGW_EXIT_OK;
	mgw_bench_soak_summary(stdout, doc);
	printf("results: %s/soak.json, chart: %s/soak.html\n", S.o.out_dir,
	       S.o.out_dir);
	if (!json_is_true(json_object_get(doc, "passed")))
		rc = MGW_EXIT_RUNTIME;
out:
	json_decref(rec);
	json_decref(results);
	json_decref(doc);
	return rc;
}
