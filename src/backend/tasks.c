/* tasks.c - tasks in both eras: creating one for a slow_job call, the job
 * on a timer of this replica's loop, and the tasks/... methods.
 *
 * Wire shapes follow each era's text.  2025-11-25 (experimental tasks):
 * the client asks with params.task {ttl}; CreateTaskResult is {task:
 * Task}; Task has ttl and pollInterval; tasks/result blocks until the
 * task is terminal and returns what tools/call would have; tasks/cancel
 * returns the cancelled Task and refuses a terminal one.  2026-07-28
 * (SEP-2663, io.modelcontextprotocol/tasks): the client declares the
 * extension in its per-request capabilities and the server decides;
 * CreateTaskResult is the Task itself with resultType "task"; ttlMs and
 * pollIntervalMs; tasks/get inlines result or error; tasks/cancel and
 * tasks/update are acks; tasks/result does not exist; tasks/... carry
 * Mcp-Name: <taskId>.  An unknown task is -32602 in both. */
#include "autoconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/state.h"
#include "backend/strmap.h"
#include "backend/tasks.h"
#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "mcp/sep2243.h"
#include "util/rand.h"
#include "util/time.h"

#define EXT_TASKS "io.modelcontextprotocol/tasks"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_RELATED "io.modelcontextprotocol/related-task"
#define MISSING_CAPABILITY (-32021)
/* The first legacy version that has tasks. */
#define TASKS_LEGACY_VERSION "2025-11-25"

/* A job running in this replica. */
struct run {
	struct mgw_be_tasks *tk;
	char id[40];
	uint32_t ms;
	struct event *ev;
};

struct mgw_be_tasks {
	struct mgw_backend *be;
	struct mgw_be_task_store *store;
	struct mgw_strmap *runs;         /* id -> struct run */
	uint64_t created, completed, cancelled, refused, unknown, late;
};

/* ---- records ------------------------------------------------------------- */

static const char *const status_names[] = {
	[MGW_TASK_WORKING] = "working",
	[MGW_TASK_INPUT_REQUIRED] = "input_required",
	[MGW_TASK_COMPLETED] = "completed",
	[MGW_TASK_FAILED] = "failed",
	[MGW_TASK_CANCELLED] = "cancelled",
};

const char *mgw_be_task_status_name(enum mgw_be_task_status st)
{
	return (unsigned)st < sizeof(status_names) / sizeof(status_names[0])
	               ? status_names[st] : "failed";
}

int mgw_be_task_status_parse(const char *s, enum mgw_be_task_status *out)
{
	for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++) {
		if (strcmp(s, status_names[i]) == 0) {
			*out = (enum mgw_be_task_status)i;
			return 0;
		}
	}
	return MGW_EINVAL;
}

static int terminal(enum mgw_be_task_status st)
{
	return st == MGW_TASK_COMPLETED || st == MGW_TASK_FAILED ||
	       st == MGW_TASK_CANCELLED;
}

enum mgw_be_task_status mgw_be_task_effective(const struct mgw_be_task *t,
                                              uint64_t now_ms)
{
	if (!terminal(t->status) && now_ms > t->deadline_ms)
		return MGW_TASK_FAILED;
	return t->status;
}

void mgw_be_task_copy(struct mgw_be_task *dst, const struct mgw_be_task *src)
{
	*dst = *src;
	if (dst->outcome)
		json_incref(dst->outcome);
}

void mgw_be_task_deinit(struct mgw_be_task *t)
{
	json_decref(t->outcome);
	t->outcome = NULL;
}

uint64_t mgw_be_wall_ms(void)
{
	return mgw_wall_ms();
}

json_t *mgw_be_slow_job_result(uint32_t ms)
{
	char text[64];

	snprintf(text, sizeof(text), "slow_job done after %" PRIu32 " ms", ms);
	return json_pack("{s[{ssss}]sbs{si}}", "content", "type", "text", "text",
	                 text, "isError", 0, "structuredContent", "ms", (int)ms);
}

/* ---- the wire shape of a task ---------------------------------------------- */

static json_t *iso_time(uint64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char buf[40], out[48];

	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, sizeof(out), "%s.%03uZ", buf, (unsigned)(ms % 1000));
	return json_string(out);
}

/* The error a task past its deadline reports (failed needs one). */
static json_t *deadline_error(void)
{
	return json_pack("{siss}", "code", MGW_JRPC_INTERNAL_ERROR, "message",
	                 "Internal error: the task did not finish before its "
	                 "deadline (the replica running it may have stopped)");
}

/* The Task object as the era spells it, at now; detailed: inline the
 * result or error (modern tasks/get). */
static json_t *task_json(const struct mgw_be_task *t, enum mgw_be_era era,
                         uint64_t now, int detailed)
{
	enum mgw_be_task_status st = mgw_be_task_effective(t, now);
	int late = st != t->status;
	json_t *o = json_pack("{sssssoso}", "taskId", t->id, "status",
	                      mgw_be_task_status_name(st), "createdAt",
	                      iso_time(t->created_ms), "lastUpdatedAt",
	                      iso_time(late ? t->deadline_ms : t->updated_ms));
	const char *msg = late ? "the task did not finish before its deadline"
	                       : t->message;

	if (msg[0])
		json_object_set_new(o, "statusMessage", json_string(msg));
	json_object_set_new(o, era == MGW_BE_MODERN ? "ttlMs" : "ttl",
	                    json_integer((json_int_t)t->ttl_ms));
	if (!terminal(st))
		json_object_set_new(o, era == MGW_BE_MODERN ? "pollIntervalMs"
		                                            : "pollInterval",
		                    json_integer((json_int_t)t->poll_ms));
	if (detailed && st == MGW_TASK_COMPLETED && t->outcome)
		json_object_set(o, "result", t->outcome);
	else if (detailed && st == MGW_TASK_FAILED)
		json_object_set_new(o, "error", late || !t->outcome
		                                        ? deadline_error()
		                                        : json_incref(t->outcome));
	return o;
}

/* ---- setup ------------------------------------------------------------------ */

int mgw_be_tasks_init(struct mgw_backend *be, struct mgw_redis *state_conn,
                      char *err, size_t errlen)
{
	struct mgw_be_tasks *tk = calloc(1, sizeof(*tk));

	if (!tk || !(tk->runs = mgw_strmap_new())) {
		free(tk);
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	tk->be = be;
	if (be->conf.tasks == MGW_TASKS_REDIS)
		tk->store = mgw_be_task_store_redis_new(be->base, state_conn,
		                                        be->conf.redis_url,
		                                        &be->conf.redis_tls, err,
		                                        errlen);
	else if (!(tk->store = mgw_be_task_store_memory_new(be->conf.max_tasks)))
		snprintf(err, errlen, "out of memory");
	if (!tk->store) {
		mgw_strmap_free(tk->runs);
		free(tk);
		return MGW_EINVAL;
	}
	be->tasks = tk;
	return 0;
}

static void run_free(struct run *r)
{
	if (r->ev)
		event_free(r->ev);
	free(r);
}

static int free_run(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	run_free(value);
	return 1;
}

void mgw_be_tasks_deinit(struct mgw_backend *be)
{
	struct mgw_be_tasks *tk = be->tasks;

	if (!tk)
		return;
	/* Jobs still running are dropped: with --tasks redis other replicas
	 * see them fail at their deadline. */
	mgw_strmap_foreach(tk->runs, free_run, NULL);
	mgw_strmap_free(tk->runs);
	mgw_be_task_store_free(tk->store);
	free(tk);
	be->tasks = NULL;
}

void mgw_be_tasks_sweep(struct mgw_backend *be, uint64_t mono_now_ms)
{
	struct mgw_be_task_store *s = be->tasks ? be->tasks->store : NULL;

	if (s && s->ops->sweep)
		s->ops->sweep(s, mono_now_ms);
}

#define U(v) json_integer((json_int_t)(v))

void mgw_be_tasks_describe(const struct mgw_backend *be, json_t *obj)
{
	const struct mgw_be_tasks *tk = be->tasks;
	size_t running = tk ? mgw_strmap_count(tk->runs) : 0;

	if (!tk)
		return;
	json_object_set_new(obj, "tasks", json_string(tk->store->ops->name));
	json_object_set_new(obj, "tasks_created", U(tk->created));
	json_object_set_new(obj, "tasks_completed", U(tk->completed));
	json_object_set_new(obj, "tasks_cancelled", U(tk->cancelled));
	json_object_set_new(obj, "tasks_refused", U(tk->refused));
	json_object_set_new(obj, "tasks_unknown", U(tk->unknown));
	json_object_set_new(obj, "tasks_finished_late", U(tk->late));
	json_object_set_new(obj, "tasks_running", U(running));
	/* what --max-tasks bounds: every record kept here (memory), or the
	 * jobs running here (redis keeps the records) */
	json_object_set_new(obj, "tasks_held",
	                    U(tk->store->ops->held(tk->store) > running
	                              ? tk->store->ops->held(tk->store) : running));
	json_object_set_new(obj, "max_tasks", U(be->conf.max_tasks));
	if (tk->store->ops->describe)
		tk->store->ops->describe(tk->store, obj);
}

/* ---- which requests get tasks ------------------------------------------------ */

static int legacy_tasks_session(const struct mgw_be_session *sess)
{
	return sess && strcmp(sess->version, TASKS_LEGACY_VERSION) >= 0;
}

static int modern_declares(const struct mgw_be_call *c)
{
	json_t *caps = mgw_jrpc_meta(&c->msg) ? json_object_get(mgw_jrpc_meta(&c->msg), META_CAPS) : NULL;

	return json_is_object(json_object_get(json_object_get(caps, "extensions"),
	                                      EXT_TASKS));
}

int mgw_be_tasks_speaks(const struct mgw_be_call *c,
                        const struct mgw_be_session *sess)
{
	return c->era == MGW_BE_MODERN || legacy_tasks_session(sess);
}

int mgw_be_task_requested(struct mgw_be_call *c, struct mgw_be_session *sess)
{
	json_t *task, *ttl;

	if (c->era == MGW_BE_MODERN)
		/* SEP-2663: the task parameter of 2025-11-25 is ignored */
		return modern_declares(c);
	task = json_object_get(mgw_jrpc_params(&c->msg), "task");
	if (!task || !legacy_tasks_session(sess))
		return 0; /* no task capability for this version: run normally */
	ttl = json_object_get(task, "ttl");
	if (!json_is_object(task) ||
	    (ttl && (!json_is_integer(ttl) || json_integer_value(ttl) < 1))) {
		mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS,
		                  "Invalid params: task must be an object whose ttl, "
		                  "when present, is a positive integer (ms)", NULL);
		return -1;
	}
	return 1;
}

/* ---- the job ------------------------------------------------------------------ */

static void on_job_finished(int err, const struct mgw_be_task *t, void *arg)
{
	struct mgw_be_tasks *tk = arg;
	struct mgw_log_ctx ctx = {0, -1, NULL};

	if (err == 0) {
		tk->completed++;
	} else if (err == MGW_ECONFLICT && t &&
	           mgw_be_task_effective(t, mgw_be_wall_ms()) == MGW_TASK_FAILED) {
		tk->late++;
		mgw_warn(&ctx, "task %s finished after its deadline: it stays failed",
		         t->id);
	} else if (err != MGW_ECONFLICT) {
		mgw_warn(&ctx, "task completion not recorded: %s", mgw_strerror(err));
	}
}

static void on_job_timer(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	struct mgw_be_tasks *tk = r->tk;
	json_t *res = mgw_be_slow_job_result(r->ms);

	(void)fd;
	(void)what;
	mgw_strmap_del(tk->runs, r->id);
	tk->store->ops->finish(tk->store, r->id, MGW_TASK_COMPLETED,
	                       "slow_job finished", res, mgw_be_wall_ms(),
	                       on_job_finished, tk);
	json_decref(res);
	run_free(r);
}

/* Starts the job's timer.  Returns 0 or MGW_ENOMEM. */
static int run_start(struct mgw_be_tasks *tk, const char *id, uint32_t ms)
{
	struct run *r = calloc(1, sizeof(*r));
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	if (!r)
		return MGW_ENOMEM;
	r->tk = tk;
	r->ms = ms;
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->ev = evtimer_new(tk->be->base, on_job_timer, r);
	if (!r->ev || mgw_strmap_put(tk->runs, r->id, r) != 0) {
		run_free(r);
		return MGW_ENOMEM;
	}
	evtimer_add(r->ev, &tv);
	return 0;
}

/* Stops the job of id if it runs here (it was cancelled). */
static void run_stop(struct mgw_be_tasks *tk, const char *id)
{
	struct run *r = mgw_strmap_del(tk->runs, id);

	if (r)
		run_free(r);
}

/* ---- creating ------------------------------------------------------------------- */

struct create_op {
	struct mgw_be_call *c;
	struct mgw_be_task t;
	uint32_t ms;
};

static void store_error(struct mgw_be_call *c, int err)
{
	mgw_be_call_error(c, 200, MGW_JRPC_INTERNAL_ERROR,
	                  err == MGW_ELIMIT ? "Internal error: too many tasks held "
	                                      "(max-tasks)"
	                  : err == MGW_EIO ? "Internal error: task store unavailable"
	                                   : "Internal error", NULL);
}

static void on_task_created(int err, const struct mgw_be_task *stored,
                            void *arg)
{
	struct create_op *op = arg;
	struct mgw_be_call *c = op->c;
	struct mgw_be_tasks *tk = c->be->tasks;
	json_t *res;

	(void)stored;
	if (err == 0 && run_start(tk, op->t.id, op->ms) != 0)
		err = MGW_ENOMEM; /* the record stays and fails at its deadline */
	if (err) {
		if (err == MGW_ELIMIT)
			tk->refused++;
		store_error(c, err);
	} else {
		tk->created++;
		res = task_json(&op->t, c->era, op->t.created_ms, 0);
		if (c->era == MGW_BE_MODERN)
			json_object_set_new(res, "resultType", json_string("task"));
		else
			res = json_pack("{so}", "task", res);
		mgw_be_call_result(c, res);
	}
	mgw_be_call_unref(c);
	free(op);
}

/* The ttl of a new task: the configured one, or less when a legacy client
 * asks for less (2025-11-25: receivers MAY override the requested ttl). */
static uint32_t task_ttl(const struct mgw_be_call *c)
{
	uint32_t ttl = (uint32_t)(c->be->conf.task_ttl * 1000.0);
	json_t *want = json_object_get(json_object_get(mgw_jrpc_params(&c->msg), "task"), "ttl");

	if (c->era == MGW_BE_LEGACY && json_is_integer(want) &&
	    json_integer_value(want) < (json_int_t)ttl)
		ttl = (uint32_t)json_integer_value(want);
	return ttl;
}

void mgw_be_task_create(struct mgw_be_call *c, uint32_t ms)
{
	struct mgw_be_tasks *tk = c->be->tasks;
	struct create_op *op;
	uint64_t now = mgw_be_wall_ms();

	if (mgw_strmap_count(tk->runs) >= c->be->conf.max_tasks) {
		tk->refused++;
		store_error(c, MGW_ELIMIT);
		return;
	}
	op = calloc(1, sizeof(*op));
	if (!op) {
		store_error(c, MGW_ENOMEM);
		return;
	}
	memcpy(op->t.id, "t_", 2);
	if (mgw_random_hex(op->t.id + 2, 16) != 0) {
		free(op);
		store_error(c, MGW_EIO);
		return;
	}
	op->c = c;
	op->ms = ms;
	op->t.status = MGW_TASK_WORKING;
	op->t.created_ms = op->t.updated_ms = now;
	op->t.deadline_ms = now + ms + MGW_BE_TASK_GRACE_MS;
	op->t.ttl_ms = task_ttl(c);
	op->t.poll_ms = (uint32_t)(c->be->conf.task_poll_interval * 1000.0);
	snprintf(op->t.message, sizeof(op->t.message), "slow_job is running");
	mgw_be_call_ref(c);
	tk->store->ops->create(tk->store, &op->t, on_task_created, op);
}

/* ---- tasks/... --------------------------------------------------------------------- */

static void task_unknown(struct mgw_be_call *c)
{
	c->be->tasks->unknown++;
	mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS,
	                  "Failed to retrieve task: Task not found", NULL);
}

/* The answer to tasks/result for a terminal task: what tools/call would
 * have answered, tagged with the related task (2025-11-25). */
static void answer_result(struct mgw_be_call *c, const struct mgw_be_task *t,
                          enum mgw_be_task_status st)
{
	json_t *err, *res;
	char msg[200];

	if (st == MGW_TASK_COMPLETED && t->outcome) {
		res = json_deep_copy(t->outcome);
		json_object_set_new(res, "_meta", json_pack("{s{ss}}", META_RELATED,
		                                            "taskId", t->id));
		mgw_be_call_result(c, res);
		return;
	}
	if (st == MGW_TASK_CANCELLED) {
		snprintf(msg, sizeof(msg), "Task %s was cancelled: it has no result",
		         t->id);
		mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS, msg, NULL);
		return;
	}
	err = st == MGW_TASK_FAILED && t->outcome && st == t->status
	              ? json_incref(t->outcome) : deadline_error();
	mgw_be_call_error(c, 200,
	                  (int)json_integer_value(json_object_get(err, "code")),
	                  json_string_value(json_object_get(err, "message")),
	                  json_incref(json_object_get(err, "data")));
	json_decref(err);
}

static void on_result_poll(struct mgw_be_call *c);

static void on_got(int err, const struct mgw_be_task *t, void *arg)
{
	struct mgw_be_call *c = arg;
	const char *m = c->msg.method;
	uint64_t now = mgw_be_wall_ms();
	enum mgw_be_task_status st;

	if (!mgw_be_call_alive(c))
		goto out;
	if (err == MGW_ENOTFOUND) {
		task_unknown(c);
		goto out;
	}
	if (err) {
		store_error(c, err);
		goto out;
	}
	st = mgw_be_task_effective(t, now);
	if (strcmp(m, "tasks/get") == 0) {
		mgw_be_call_result(c, task_json(t, c->era, now, c->era == MGW_BE_MODERN));
	} else if (strcmp(m, "tasks/update") == 0) {
		/* No task of this server asks for input: every inputResponses
		 * key is one not outstanding, which SEP-2663 says to ignore. */
		mgw_be_call_result(c, json_object());
	} else if (terminal(st)) {
		answer_result(c, t, st);
	} else if (mgw_be_call_after(c, t->poll_ms, on_result_poll) != 0) {
		/* tasks/result blocks until the task is terminal: look again
		 * after the poll interval (the job may run elsewhere) */
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR,
		                  "Cannot arm a timer", NULL);
	}
out:
	mgw_be_call_unref(c);
}

static void lookup(struct mgw_be_call *c)
{
	struct mgw_be_task_store *s = c->be->tasks->store;
	const char *id = json_string_value(json_object_get(mgw_jrpc_params(&c->msg), "taskId"));

	mgw_be_call_ref(c);
	s->ops->get(s, id, on_got, c);
}

static void on_result_poll(struct mgw_be_call *c) { lookup(c); }

static void on_cancelled(int err, const struct mgw_be_task *t, void *arg)
{
	struct mgw_be_call *c = arg;
	struct mgw_be_tasks *tk = c->be->tasks;
	char msg[160];

	if (err == 0) {
		tk->cancelled++;
		run_stop(tk, t->id);
	}
	if (!mgw_be_call_alive(c))
		goto out;
	if (err == MGW_ENOTFOUND) {
		task_unknown(c);
	} else if (err && err != MGW_ECONFLICT) {
		store_error(c, err);
	} else if (c->era == MGW_BE_MODERN) {
		/* an ack, whatever the state (SEP-2663: cancellation is
		 * cooperative and eventually consistent) */
		mgw_be_call_result(c, json_object());
	} else if (err == MGW_ECONFLICT) {
		snprintf(msg, sizeof(msg),
		         "Cannot cancel task: already in terminal status '%s'",
		         mgw_be_task_status_name(mgw_be_task_effective(t, mgw_be_wall_ms())));
		mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS, msg, NULL);
	} else {
		mgw_be_call_result(c, task_json(t, c->era, mgw_be_wall_ms(), 0));
	}
out:
	mgw_be_call_unref(c);
}

/* Bad params of a tasks/... request: 400 in the modern era (the request
 * itself is malformed), a JSON-RPC error in the legacy one. */
static void bad_params(struct mgw_be_call *c, const char *message)
{
	mgw_be_call_error(c, c->era == MGW_BE_MODERN ? 400 : 200,
	                  MGW_JRPC_INVALID_PARAMS, message, NULL);
}

/* SEP-2663: tasks/... over Streamable HTTP carry Mcp-Name = params.taskId;
 * whoever reads the body rejects a mismatch (SEP-2243, -32020).
 * Returns 1 when it matches (else c is answered). */
static int name_matches(struct mgw_be_call *c, const char *id)
{
	const struct mgw_headers *h = mgw_http_req_headers(c->x);
	const char *hv = NULL;
	size_t n = 0, dlen = 0, hlen = 0;
	char *dec = NULL, msg[200];
	int ok;

	for (size_t i = 0; h && i < h->n; i++) {
		if (MGW_HEADER_IS(&h->v[i], "Mcp-Name")) {
			hv = h->v[i].value;
			hlen = h->v[i].value_len;
			n++;
		}
	}
	if (n == 1)
		dec = mgw_sep2243_decode(hv, hlen, &dlen);
	ok = dec && dlen == strlen(id) && memcmp(dec, id, dlen) == 0;
	if (!ok) {
		snprintf(msg, sizeof(msg), "Header mismatch: %s",
		         n == 0 ? "missing Mcp-Name header (it carries the taskId)"
		         : n > 1 ? "multiple Mcp-Name headers"
		                 : "Mcp-Name header does not match params.taskId");
		c->be->stats.header_mismatches++;
		mgw_be_call_error(c, 400, MGW_MCP_HEADER_MISMATCH, msg, NULL);
	}
	free(dec);
	return ok;
}

void mgw_be_tasks_method(struct mgw_be_call *c)
{
	struct mgw_be_task_store *s = c->be->tasks->store;
	const char *m = c->msg.method;
	json_t *id = json_object_get(mgw_jrpc_params(&c->msg), "taskId");

	if (!json_is_string(id)) {
		bad_params(c, "Invalid params: taskId must be a string");
		return;
	}
	if (c->era == MGW_BE_MODERN) {
		if (!name_matches(c, json_string_value(id)))
			return;
		if (!modern_declares(c)) {
			mgw_be_call_error(c, 400, MISSING_CAPABILITY,
			                  "Missing required client capability",
			                  json_pack("{s{s{s{}}}}", "requiredCapabilities",
			                            "extensions", EXT_TASKS));
			return;
		}
		if (strcmp(m, "tasks/update") == 0 &&
		    !json_is_object(json_object_get(mgw_jrpc_params(&c->msg), "inputResponses"))) {
			bad_params(c, "Invalid params: inputResponses must be an object");
			return;
		}
	}
	if (strcmp(m, "tasks/cancel") == 0) {
		mgw_be_call_ref(c);
		s->ops->finish(s, json_string_value(id), MGW_TASK_CANCELLED,
		               "The task was cancelled by request.", NULL,
		               mgw_be_wall_ms(), on_cancelled, c);
		return;
	}
	lookup(c);
}
