/* bench-t.h - types of mcpgw-bench, the churn bench: what a cell is (one
 * combination of conditions), the options of a bench run, and the
 * enumerations that name paths, eras and state designs in reports. */
#ifndef MGW_BENCH_T_H
#define MGW_BENCH_T_H

#include <stddef.h>

/* Scenes: each one a list of cells (scene.c). */
enum mgw_bench_scene {
	MGW_BENCH_SCALE_OUT = 0, /* the study's M1 */
	MGW_BENCH_HANDLES,       /* M2 */
	MGW_BENCH_POD_KILL,      /* M3 */
	MGW_BENCH_GATEWAY_KILL,
	MGW_BENCH_REDIS_OUTAGE,
	MGW_BENCH_MRTR,          /* MRTR dialogues across a pod kill */
	MGW_BENCH_FORK,          /* an old requestState presented again */
	MGW_BENCH_TASKS,         /* tasks in replica memory across a pod kill */
	MGW_BENCH_DEMO,          /* the README's short pod kill */
	MGW_BENCH_SOAK,          /* `mcpgw-bench soak` (soak.c builds its cell;
	                          * no scene list, not in "all") */
	MGW_BENCH_SCENE_N,
};

/* How the load client reaches the replicas. */
enum mgw_bench_path {
	MGW_BENCH_DIRECT = 0,   /* per-connection choice among replica URLs */
	MGW_BENCH_GATEWAY,      /* one mcpgw serve */
	MGW_BENCH_GATEWAY_HA,   /* two mcpgw serve sharing session state */
	MGW_BENCH_EXTERNAL,     /* the user's --external proxy command */
};

enum mgw_bench_era {
	MGW_BENCH_LEGACY = 0,   /* 2025-11-25, sessions */
	MGW_BENCH_MODERN,       /* 2026-07-28, stateless */
};

enum mgw_bench_conn {
	MGW_BENCH_CONN_NEW = 0, /* a new connection per request */
	MGW_BENCH_CONN_REUSE,   /* keep-alive */
};

/* Modern handle design of the replicas (report.json "state").  NONE:
 * the cell calls echo, no handle is involved. */
enum mgw_bench_state {
	MGW_BENCH_STATE_NONE = 0,
	MGW_BENCH_STATE_MEMORY,
	MGW_BENCH_STATE_HMAC,
	MGW_BENCH_STATE_REDIS,
};

/* Session store of a stateful gateway ("session_store"); NONE for
 * stateless gateways and paths without one. */
enum mgw_bench_store {
	MGW_BENCH_STORE_NONE = 0,
	MGW_BENCH_STORE_MEMORY,
	MGW_BENCH_STORE_SEALED,
	MGW_BENCH_STORE_REDIS,
};

/* What the load client does in a cell.  PLAIN: echo, or the handle
 * flow when the cell has a handle design (state). */
enum mgw_bench_flow {
	MGW_BENCH_FLOW_PLAIN = 0,
	MGW_BENCH_FLOW_MRTR,  /* book dialogues (flow: mrtr) */
	MGW_BENCH_FLOW_FORK,  /* book dialogues, each one's last retry sent
	                       * again (fork_every: 1) */
	MGW_BENCH_FLOW_TASK,  /* slow_job as a task, polled (flow: task) */
};

/* What a cell kills mid-run. */
enum mgw_bench_victim {
	MGW_BENCH_VICTIM_NONE = 0,
	MGW_BENCH_VICTIM_REPLICA,  /* replica 1 */
	MGW_BENCH_VICTIM_GATEWAY,  /* gateway 1 of gateway-ha */
	MGW_BENCH_VICTIM_REDIS,    /* the redis-server */
};

#define MGW_BENCH_NAME_MAX 96
/* Kill scenes' virtual users: at 100 rps each calls about once a second,
 * so a kill meets 100 live sessions or handles, as many clients would,
 * not the 5 to 10 that rate x service time keeps busy. */
#define MGW_BENCH_KILL_USERS 100
/* The sealed gateway-kill cell: each user ends its session with DELETE
 * every this many calls and checks it stays deleted through the other
 * gateway. */
#define MGW_BENCH_DELETE_AFTER 5
#define MGW_BENCH_MAX_REPLICAS 8
#define MGW_BENCH_MAX_FILTERS 16

/* One cell: everything that differs between two rows of a table. */
struct mgw_bench_cell {
	char name[MGW_BENCH_NAME_MAX]; /* "legacy direct 2 replicas, reuse" */
	char slug[MGW_BENCH_NAME_MAX]; /* file-name form of name */
	enum mgw_bench_scene scene;
	enum mgw_bench_path path;
	enum mgw_bench_era era;
	enum mgw_bench_conn conn;
	enum mgw_bench_state state;
	enum mgw_bench_store store;
	enum mgw_bench_victim victim;
	enum mgw_bench_flow flow;
	/* MRTR and fork: where the replicas keep requestState (backend
	 * --request-state memory|sealed|redis); tasks: where they keep task
	 * records (--tasks memory|redis).  NONE for the other flows. */
	enum mgw_bench_store keep;
	int guard;              /* the gateway's route has mrtr: {single_use:
	                         * true} (the requestState guard) */
	int affinity;           /* the gateway's group has affinity: task */
	int replicas;           /* 1..MGW_BENCH_MAX_REPLICAS */
	double offered_rps;
	double duration_s;
	double kill_at_s;       /* victim != NONE */
	/* the soak's (bench/src/soak.c; 0 in every scene's cells): */
	double kill_every_s;    /* > 0: a replica killed every so many
	                         * seconds, the replicas in turn, each
	                         * replaced on its port (instead of one kill
	                         * at kill_at_s) */
	double sample_every_s;  /* > 0: the gateway's RSS and open fds and the
	                         * load client's counts so far, sampled this
	                         * often into the record's "samples" */
	int users;              /* load --users (a fixed population of
	                         * virtual users); 0: none.  Kill scenes:
	                         * MGW_BENCH_KILL_USERS unless --users */
	int delete_after;       /* load --delete-sessions (the sealed
	                         * gateway-kill cell: sealed tombstones
	                         * shared in Redis); 0: none */
	int sentinel;           /* the redis store behind Redis Sentinel: a
	                         * master, a replica, three sentinels; the
	                         * victim is the master */
	int learn_tools;        /* the gateway's group probes tools/list
	                         * (tools_probe) and modern clients list
	                         * tools too: over a run longer than the
	                         * group's 10-minute memory of annotations,
	                         * echo stays known safe to replay */
};

/* The options of one bench run, after defaults were applied per scene
 * (0 / NULL below means "the scene's default"). */
struct mgw_bench_opts {
	enum mgw_bench_scene scenes[MGW_BENCH_SCENE_N];
	size_t n_scenes;
	int quick;
	int reps;                 /* per cell */
	const char *out_dir;
	const char *external;     /* proxy command with placeholders */
	const char *external_name;
	double duration_s;        /* 0: per scene */
	double rate;              /* 0: per scene */
	double kill_at_s;         /* 0: per scene */
	int kill_signal;          /* SIGKILL or SIGTERM */
	double readiness_delay_s; /* negative: per mode */
	const char *mcpgw;        /* path of the mcpgw binary */
	const char *redis_server; /* path or name of redis-server */
	int concurrency;          /* load client in-flight bound; 0: its default */
	int service_ms;           /* replicas answer after this long (--delay-ms) */
	int reconnect_after;      /* reuse cells: load --reconnect-after; 0 none */
	int spread_users;         /* load --spread-users */
	int users;                /* load --users N (a fixed population of
	                           * virtual users, each with its own
	                           * connection); 0: none; negative: the
	                           * scene's default (scene.c) */
	int no_list_tools;        /* legacy clients skip tools/list */
	int workers;              /* gateway worker threads */
	double cooldown_max_s;    /* negative: per mode */
	int cooldown_threshold;   /* TIME_WAIT sockets */
	const char *filters[MGW_BENCH_MAX_FILTERS]; /* --cell globs on slugs */
	size_t n_filters;
	int test_prekill;         /* test aid: the victim dies before the load */
};

#endif
