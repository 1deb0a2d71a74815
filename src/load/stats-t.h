/* stats-t.h - what a `mcpgw load` run measures: per phase and per tool,
 * counts of every outcome, shed ticks, recoveries, two latency histograms
 * (from the intended start and from the actual send), and a per-second
 * timeline.  Filled by the engine through stats.h, read by the report and
 * the gates. */
#ifndef MGW_LOAD_STATS_T_H
#define MGW_LOAD_STATS_T_H

#include <stddef.h>
#include <stdint.h>

#include "load/agent-t.h"
#include "load/histogram-t.h"
#include "mcp/era.h"

/* Counters of one row.  requests == ok + the sum of fail[]; shed ticks are
 * not requests (nothing was sent). */
struct mgw_load_counts {
	uint64_t requests;         /* calls that ended */
	uint64_t ok;
	uint64_t fail[MGW_LOAD_OUTCOME_N]; /* by outcome; fail[MGW_LOAD_OK]
	                                    * stays 0 */
	uint64_t shed;             /* open-loop ticks never sent */
	uint64_t reinit;           /* initialize handshakes beyond each
	                            * virtual user's first: recoveries */
	uint64_t reconnects;
	uint64_t dialogues;        /* MRTR dialogues that ended (any outcome) */
	uint64_t rounds;           /* their input rounds, summed */
	uint64_t represented;      /* fork_every: old states re-presented */
	uint64_t forked;           /* ... that the server acted on again */
	uint64_t refused;          /* ... that were refused */
	uint64_t tasks;            /* calls the server answered with a task */
	uint64_t polls;            /* tasks/get requests of those calls */
	uint64_t deletes;          /* sessions ended by DELETE and checked
	                            * (--delete-sessions) */
	uint64_t bytes;            /* response body bytes */
};

/* A row of the report: a phase, a tool within a phase, or a total.
 * Latencies are of successful calls, in nanoseconds. */
struct mgw_load_row {
	struct mgw_load_counts c;
	/* Closed loop: from the call's start.  Open loop: from its intended
	 * start (coordinated omission corrected: time spent waiting for a
	 * free virtual user counts). */
	struct mgw_hist *lat;
	/* From the moment the request was handed to the transport: what the
	 * server and the network took. */
	struct mgw_hist *svc;
};

struct mgw_load_phase_stats {
	const char *name;          /* borrowed from the plan */
	int warmup;
	int mode;                  /* enum mgw_load_mode */
	long concurrency;
	double rate;
	int ran;                   /* the phase started */
	uint64_t start_ns;         /* monotonic */
	uint64_t issue_end_ns;     /* when it stopped starting calls */
	uint64_t end_ns;           /* when its last call ended */
	double window_s;           /* totals: sum of the phases' windows */
	double duration_s;         /* totals: sum of the phases' durations */
	struct mgw_load_row all;
	struct mgw_load_row *tools; /* one per tool name */
};

/* One second of the run, by completion time (t counts from the run's
 * start).  p50/p99 of the calls that succeeded in that second. */
struct mgw_load_tl_row {
	uint32_t t;
	uint32_t phase;            /* index of the phase running when the
	                            * second began */
	struct mgw_load_counts c;
	uint64_t p50_ns, p99_ns;
};

/* Most timeline rows kept (a week at one a second); later seconds are
 * still counted in the phases. */
#define MGW_LOAD_TL_MAX (7u * 24 * 3600)

/* The first failures of a run, kept whole for the report: counters say
 * how many failed, these say what the failures said. */
#define MGW_LOAD_FAIL_SAMPLES 32
struct mgw_load_fail_sample {
	double t_s;                /* completion, seconds since start_ns */
	int outcome;               /* enum mgw_load_outcome */
	int status;                /* HTTP status, 0 when none */
	size_t call;               /* plan entry */
	char detail[200];
};

struct mgw_load_stats {
	size_t n_phases;
	struct mgw_load_phase_stats *phases;
	size_t n_tools;
	char **tools;              /* distinct call names, in plan order */
	size_t n_calls;
	size_t *call_tool;         /* call index -> tool index */
	struct mgw_load_phase_stats total; /* non-warmup phases that ran */
	struct mgw_load_tl_row *timeline;
	size_t n_timeline, cap_timeline;
	uint64_t start_ns;
	/* the second being collected */
	uint32_t cur_t;
	uint32_t cur_phase;        /* phase running when the second began */
	uint32_t live_phase;       /* phase running now */
	struct mgw_load_counts cur;
	struct mgw_hist *cur_hist;
	/* set by the engine for the report */
	enum mgw_era era;
	int interrupted;
	int finished;
	struct mgw_load_fail_sample samples[MGW_LOAD_FAIL_SAMPLES];
	size_t n_samples;
};

#endif
