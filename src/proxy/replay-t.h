/* replay-t.h - what the gateway knows about sending a request lost in
 * flight again (types only; see replay.h). */
#ifndef MGW_PROXY_REPLAY_T_H
#define MGW_PROXY_REPLAY_T_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds of one group's set of replay-safe tools. */
#define MGW_REPLAY_TOOLS_MAX 1024        /* names kept */
#define MGW_REPLAY_TOOLS_BYTES (64 * 1024) /* bytes of names kept */
#define MGW_REPLAY_TOOL_NAME_MAX 256     /* longer: never replay-safe */
#define MGW_REPLAY_TOOLS_TTL_MS (10 * 60 * 1000) /* a set unrefreshed this
                                          * long is forgotten (the
                                          * default of upstreams[].tools_ttl) */

/* The tools the latest tools/list answer seen through the gateway for
 * one upstream group annotated readOnlyHint: true or idempotentHint:
 * true.  Shared by every worker (the lock); bounded in names and bytes;
 * forgotten MGW_REPLAY_TOOLS_TTL_MS after it was last learned. */
struct mgw_replay_tools {
	pthread_mutex_t mu;
	char **names;                   /* sorted, unique */
	size_t n;
	size_t bytes;
	uint64_t learned_ms;            /* monotonic ms of the last learn;
	                                 * 0: never */
	uint64_t ttl_ms;
};

/* Replays of requests lost in flight, counted per group (any thread). */
struct mgw_replay_group {
	struct mgw_replay_tools tools;
	atomic_uint_fast64_t replayed;  /* lost in flight, sent again */
	atomic_uint_fast64_t refused;   /* lost in flight, not safe to send
	                                 * again: answered -32010 */
	atomic_uint_fast64_t learned;   /* tools/list answers learned from */
};

#endif
