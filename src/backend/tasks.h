/* tasks.h - tasks of the reference MCP server: the task-augmented
 * slow_job tool in both eras (2025-11-25 experimental tasks; the
 * io.modelcontextprotocol/tasks extension of 2026-07-28, SEP-2663), the
 * tasks/... methods, and where task records live (--tasks):
 *   memory  a map in this replica; another replica does not know the task
 *   redis   a hash per task in the Redis of --redis, so any replica answers
 *           tasks/get for a task another one created
 * The work itself always runs in the replica that created the task, on a
 * timer of its loop.  A task whose replica died would stay "working"
 * forever, so every record carries a deadline (the job's length plus
 * MGW_BE_TASK_GRACE_MS) past which it reads failed. */
#ifndef MGW_BACKEND_TASKS_H
#define MGW_BACKEND_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

struct mgw_redis_tls_conf;

struct mgw_backend;
struct mgw_be_call;
struct mgw_be_session;
struct mgw_redis;

/* How long past its expected end a working task may stay working. */
#define MGW_BE_TASK_GRACE_MS 3000

enum mgw_be_task_status {
	MGW_TASK_WORKING, MGW_TASK_INPUT_REQUIRED, MGW_TASK_COMPLETED,
	MGW_TASK_FAILED, MGW_TASK_CANCELLED,
};

/* One task record as a store keeps it.  Times are wall-clock
 * milliseconds (replicas compare them with each other). */
struct mgw_be_task {
	char id[40];
	enum mgw_be_task_status status;
	uint64_t created_ms, updated_ms, deadline_ms;
	uint32_t ttl_ms, poll_ms;
	char message[160];    /* statusMessage; "" for none */
	json_t *outcome;      /* completed: the CallToolResult; failed: the
	                       * JSON-RPC error object; else NULL.  Owned */
};

/* ---- stores (task_store_memory.c, task_store_redis.c) -------------------- */

struct mgw_be_task_store;

/* Outcome of a store operation: err 0, MGW_ENOTFOUND (unknown or
 * expired), MGW_ECONFLICT (finish: the task was no longer working; t is
 * the task as it is), MGW_ELIMIT (create: store full), MGW_EIO (store
 * unavailable) or MGW_ENOMEM.  t is borrowed for the callback (NULL
 * unless err is 0 or MGW_ECONFLICT).  May run before the starting call
 * returns (memory) or later from the loop (redis). */
typedef void (*mgw_be_task_cb)(int err, const struct mgw_be_task *t,
                               void *arg);

struct mgw_be_task_store_ops {
	const char *name;
	/* Stores a new record (t copied); cb runs once it is durable, so a
	 * tasks/get anywhere finds it (SEP-2663, task creation). */
	void (*create)(struct mgw_be_task_store *s, const struct mgw_be_task *t,
	               mgw_be_task_cb cb, void *arg);
	void (*get)(struct mgw_be_task_store *s, const char *id,
	            mgw_be_task_cb cb, void *arg);
	/* Moves a working task, not past its deadline, to status (terminal)
	 * with message and outcome (borrowed; may be NULL) at now_ms:
	 * terminal states never change again. */
	void (*finish)(struct mgw_be_task_store *s, const char *id,
	               enum mgw_be_task_status status, const char *message,
	               const json_t *outcome, uint64_t now_ms, mgw_be_task_cb cb,
	               void *arg);
	/* Drops records past their ttl (memory); may be NULL. */
	void (*sweep)(struct mgw_be_task_store *s, uint64_t now_ms);
	/* Records this store holds for this replica (memory: all of them;
	 * redis: none, Redis holds them). */
	size_t (*held)(const struct mgw_be_task_store *s);
	void (*describe)(const struct mgw_be_task_store *s, json_t *obj);
	void (*free)(struct mgw_be_task_store *s);
};

struct mgw_be_task_store {
	const struct mgw_be_task_store_ops *ops;
};

/* At most max records at once (create answers MGW_ELIMIT beyond). */
struct mgw_be_task_store *mgw_be_task_store_memory_new(size_t max);

/* Records in Redis.  conn: the connection to use, borrowed (the state
 * store's, which must then outlive this store's commands), or NULL to
 * open one to url (owned; tls for rediss://).  Returns NULL with a message in err for a
 * malformed URL or no memory. */
struct mgw_be_task_store *mgw_be_task_store_redis_new(
	struct event_base *base, struct mgw_redis *conn, const char *url,
	const struct mgw_redis_tls_conf *tls, char *err, size_t errlen);

/* NULL allowed. */
void mgw_be_task_store_free(struct mgw_be_task_store *s);

/* ---- records (tasks.c) ---------------------------------------------------- */

const char *mgw_be_task_status_name(enum mgw_be_task_status st);
/* Returns 0 and sets *out, or MGW_EINVAL. */
int mgw_be_task_status_parse(const char *s, enum mgw_be_task_status *out);

/* The status a reader reports at now_ms: a working task past its
 * deadline is failed (its replica stopped before finishing it). */
enum mgw_be_task_status mgw_be_task_effective(const struct mgw_be_task *t,
                                              uint64_t now_ms);

/* Deep copy of src into dst (outcome referenced). */
void mgw_be_task_copy(struct mgw_be_task *dst, const struct mgw_be_task *src);
void mgw_be_task_deinit(struct mgw_be_task *t);

/* Wall-clock milliseconds since the epoch. */
uint64_t mgw_be_wall_ms(void);

/* ---- the server's side (tasks.c) ------------------------------------------ */

/* Creates the task machinery from be->conf (--tasks, --max-tasks ...).
 * state_conn: the state store's Redis connection to share, or NULL.
 * Returns 0, or MGW_EINVAL with a message in err. */
int mgw_be_tasks_init(struct mgw_backend *be, struct mgw_redis *state_conn,
                      char *err, size_t errlen);
/* Stops the jobs still running and frees everything. */
void mgw_be_tasks_deinit(struct mgw_backend *be);
void mgw_be_tasks_sweep(struct mgw_backend *be, uint64_t mono_now_ms);
/* Adds the tasks_* counters to the stats object. */
void mgw_be_tasks_describe(const struct mgw_backend *be, json_t *obj);

/* 1 when c may get a task for its tools/call: modern, the request
 * declares the extension; legacy (a 2025-11-25 session), params.task is
 * present.  -1 when params.task is malformed (c answered -32602). */
int mgw_be_task_requested(struct mgw_be_call *c, struct mgw_be_session *sess);

/* 1 when the era and session of c know tasks/... methods at all. */
int mgw_be_tasks_speaks(const struct mgw_be_call *c,
                        const struct mgw_be_session *sess);

/* Answers c with a new task whose job ends after ms with the slow_job
 * result. */
void mgw_be_task_create(struct mgw_be_call *c, uint32_t ms);

/* tasks/get, tasks/cancel, tasks/update (modern) and tasks/result
 * (legacy) for c; the caller checked the era knows the method. */
void mgw_be_tasks_method(struct mgw_be_call *c);

/* The slow_job result for a job of ms (new reference). */
json_t *mgw_be_slow_job_result(uint32_t ms);

#endif
