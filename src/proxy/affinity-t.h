/* affinity-t.h - task affinity of an upstream group (types only; see
 * affinity.h): which server holds which task. */
#ifndef MGW_PROXY_AFFINITY_T_H
#define MGW_PROXY_AFFINITY_T_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A task id longer than this is never learned (its tasks/... requests go
 * to the balancer).  Servers mint ids; 256 bytes leave room for a UUID
 * with any prefix, or a signed handle. */
#define MGW_TASK_ID_MAX 256

/* One task the gateway saw created. */
struct mgw_task_entry {
	struct mgw_task_entry *chain;   /* next in its bucket */
	struct mgw_task_entry *older, *newer; /* learn order */
	uint64_t hash;                  /* mgw_hash64 of id */
	uint64_t owner;                 /* mgw_hash64 of the owner's URL */
	uint64_t expires_ms;            /* monotonic ms */
	size_t len;
	char id[];                      /* len bytes, NUL-terminated */
};

/* The tasks of one group, shared by every worker (the lock): bounded in
 * entries (max; when full the entry learned longest ago goes), each
 * expiring at its task's ttlMs, bounded by max_ttl_ms.  The owner is
 * kept by its URL's hash, so that a reload (same URL, new server
 * struct) keeps it and a server removed from the configuration is seen
 * to be gone. */
struct mgw_task_map {
	pthread_mutex_t mu;
	struct mgw_task_entry **buckets;
	size_t mask;                    /* buckets - 1 (a power of two) */
	size_t n, max;
	struct mgw_task_entry *oldest, *newest;
	uint64_t max_ttl_ms;
	/* counters (any thread; /mcpgw/stats, /metrics) */
	atomic_uint_fast64_t learned;   /* task-creating answers learned */
	atomic_uint_fast64_t routed;    /* tasks/... sent to their owner */
	atomic_uint_fast64_t owner_gone; /* answered "task not found" by the
	                                 * gateway: the owner is gone */
	atomic_uint_fast64_t misses;    /* tasks/... of a task not known here
	                                 * (nor in Redis): balanced */
	atomic_uint_fast64_t shared_hits; /* known from Redis after a local
	                                 * miss */
	atomic_uint_fast64_t evicted;   /* forgotten to stay within max */
};

#endif
