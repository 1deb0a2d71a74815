/* load-t.h - the plan of a `mcpgw load` run: what a scenario file and the
 * command line describe together (transport, dialect, call mix, phases,
 * think time, gates, outputs).  Built by scenario.c (file, with defaults)
 * and load_cmd.c (flags override), validated once, then read-only while
 * the engine runs.  Strings and lists are owned by the plan and released
 * with mgw_load_conf_free(). */
#ifndef MGW_LOAD_LOAD_T_H
#define MGW_LOAD_LOAD_T_H

#include <stddef.h>

#include <jansson.h>

#include "load/agent-t.h"

enum mgw_load_transport {
	MGW_LOAD_HTTP = 0,
	MGW_LOAD_STDIO,
};

/* Closed loop: `concurrency` virtual users, each issuing its next call when
 * the previous one ended (after its think time).  Open loop: calls are
 * started at a fixed `rate` whatever the answers do; latency counts from
 * each call's intended start time. */
enum mgw_load_mode {
	MGW_LOAD_CLOSED = 0,
	MGW_LOAD_OPEN,
};

enum mgw_load_think_kind {
	MGW_THINK_NONE = 0,
	MGW_THINK_FIXED,    /* always min */
	MGW_THINK_UNIFORM,  /* uniform in [min, max] */
	/* Agent-shaped: mostly short pauses, uniform in [min, max], and with
	 * probability long_share a long one, uniform in [long_min, long_max]
	 * (a model that reads a tool result, then sometimes "thinks"). */
	MGW_THINK_AGENT,
};

/* Pause of a closed-loop virtual user between two calls, in seconds. */
struct mgw_load_think {
	int kind;                  /* enum mgw_load_think_kind */
	double min, max;
	double long_min, long_max;
	double long_share;         /* 0..1 */
};

struct mgw_load_phase {
	char *name;
	int warmup;                /* measured, reported, excluded from the
	                            * total and the gates */
	int mode;                  /* enum mgw_load_mode: open iff rate set */
	long concurrency;          /* closed: virtual users; open: bound on
	                            * calls in flight */
	double rate;               /* open: calls started per second */
	long backlog;              /* open: ticks that may wait for a free
	                            * virtual user (0: as many as concurrency);
	                            * beyond it, or older than the timeout, a
	                            * tick is shed */
	double duration;           /* seconds; 0: until `requests` */
	long long requests;        /* calls to start; 0: until `duration` */
	/* presence of keys in the file, for the command-line overrides */
	int has_rate, has_concurrency;
};

/* One entry of the call mix as written in a scenario (see
 * struct mgw_load_call_spec for the meaning). */
struct mgw_load_call {
	char *name;                /* report label; default: tool, or "counter" */
	int flow;                  /* enum mgw_load_flow */
	char *tool;
	char *create_tool;
	char *handle_arg;
	double weight;
	json_t *arguments;         /* an object; owned (one reference) */
	json_t *answers;           /* mrtr: an object; owned, or NULL */
	long max_rounds;           /* mrtr: bound on input rounds (20) */
	long fork_every;           /* mrtr: re-present every Nth dialogue (0) */
	long fork_round;           /* mrtr: which retry (0: the last) */
};

/* A static header sent with every HTTP request; exactly one of value or
 * env (a variable read when the run starts). */
struct mgw_load_header {
	char *name;
	char *value;
	char *env;
};

/* Gates: thresholds checked on the total of the non-warmup phases.  A gate
 * is active only when its has_ flag is set. */
struct mgw_load_gates {
	double max_p95_ms, max_p99_ms;
	double max_error_rate;     /* (failed + shed) / (requests + shed) */
	double min_rps;            /* achieved (successful) calls per second */
	long long max_session_losses, max_handle_losses, max_state_losses;
	int has_max_p95_ms, has_max_p99_ms, has_max_error_rate, has_min_rps,
	    has_max_session_losses, has_max_handle_losses, has_max_state_losses;
};

struct mgw_load_transport_conf {
	int type;                  /* enum mgw_load_transport */
	char **targets;            /* URLs */
	size_t n_targets;
	int connection;            /* enum mgw_load_conn */
	long long reconnect_after; /* reuse: a new connection (and target)
	                            * after this many requests; 0: never */
	int http2;
	char *ca_file;             /* NULL: the system store */
	char *command;             /* stdio: sh -c command line */
};

struct mgw_load_auth_conf {
	struct mgw_load_header *headers;
	size_t n_headers;
	char *command;
};

struct mgw_load_output_conf {
	char *json;                /* report file; NULL: none ("-": stdout) */
	char *csv;                 /* timeline file; NULL: none */
	char *clock_file;          /* t = 0 written here at the engine start
	                            * (CLOCK_MONOTONIC ns); NULL: none */
	char *progress_file;       /* the counts so far, rewritten once a
	                            * second (JSON); NULL: none */
};

struct mgw_load_conf {
	char *source;              /* scenario file name, or NULL */
	char *name;                /* scenario name for the report */
	struct mgw_load_transport_conf transport;
	int dialect;               /* enum mgw_load_dialect */
	char *protocol_version;    /* NULL: the dialect's newest */
	char *client_name;
	int list_tools;
	char *lost_session_match;  /* see struct mgw_load_agent_opts */
	double timeout;            /* per logical call, seconds; 0: none */
	struct mgw_load_think think;
	long long seed;            /* 0: random */
	struct mgw_load_auth_conf auth;
	struct mgw_load_call *calls;
	size_t n_calls;
	struct mgw_load_phase *phases;
	size_t n_phases;
	struct mgw_load_gates gates;
	struct mgw_load_output_conf output;
	int quiet;                 /* no table, no progress line */
	int spread_users;          /* open loop: ticks go round all users */
	long long users;           /* open loop: this many users from the
	                            * start, ticks in turn (implies
	                            * spread_users); 0: see spread_users */
	long long delete_sessions; /* legacy: end a session with DELETE after
	                            * this many calls and check it stays
	                            * deleted through another target; 0: no */
};

#endif
