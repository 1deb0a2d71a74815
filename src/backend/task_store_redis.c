/* task_store_redis.c - the "redis" task design: one hash per task,
 * mcpgw:task:<id>, expiring with the task's ttl, so any replica answers
 * tasks/get and tasks/cancel for a task another one created.  Transitions
 * run as Lua scripts: "working and not past its deadline" is checked and
 * changed atomically, so a cancel and the job's completion racing from
 * two replicas leave exactly one terminal state.  The connection is
 * net/redis.c, the same client as the --state redis handles (shared with
 * them when both are on). */
#include "autoconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "backend/tasks.h"
#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"

#define KEY_PREFIX "mcpgw:task:"
#define OP_TIMEOUT 2.0

static const char create_script[] =
	"redis.call('HSET', KEYS[1], 'status', ARGV[1], 'created', ARGV[2], "
	"'updated', ARGV[2], 'deadline', ARGV[3], 'ttl', ARGV[4], 'poll', "
	"ARGV[5], 'message', ARGV[6]) "
	"redis.call('PEXPIRE', KEYS[1], ARGV[4]) return 1";

/* Returns false for an unknown task, else {changed, HGETALL...}. */
static const char finish_script[] =
	"local s = redis.call('HGET', KEYS[1], 'status') "
	"if not s then return false end "
	"local d = tonumber(redis.call('HGET', KEYS[1], 'deadline')) "
	"local changed = 0 "
	"if s == 'working' and d >= tonumber(ARGV[4]) then "
	"redis.call('HSET', KEYS[1], 'status', ARGV[1], 'message', ARGV[2], "
	"'outcome', ARGV[3], 'updated', ARGV[4]) changed = 1 end "
	"local r = redis.call('HGETALL', KEYS[1]) "
	"table.insert(r, 1, changed) return r";

struct redis_tasks {
	struct mgw_be_task_store base;
	struct mgw_redis *conn;
	int owned;
	uint64_t errors;
};

struct op {
	struct redis_tasks *r;
	mgw_be_task_cb cb;
	void *arg;
};

static void on_state(void *arg, enum mgw_redis_state st, const char *why)
{
	struct redis_tasks *r = arg;

	if (st == MGW_REDIS_UP)
		mgw_info(NULL, "tasks redis %s: connected", mgw_redis_display(r->conn));
	else if (st == MGW_REDIS_DOWN)
		mgw_warn(NULL, "tasks redis %s: %s (reconnecting)",
		         mgw_redis_display(r->conn), why ? why : "unavailable");
}

/* Task ids are what tasks.c mints: "t_" and 32 hex digits.  Anything else
 * is unknown without a round trip and never becomes a key. */
static int id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n != 34 || strncmp(id, "t_", 2) != 0)
		return 0;
	for (id += 2; *id; id++)
		if (!((*id >= '0' && *id <= '9') || (*id >= 'a' && *id <= 'f')))
			return 0;
	return 1;
}

static int u64_field(const redisReply *v, uint64_t *out)
{
	char *end;

	if (v->type != REDIS_REPLY_STRING || v->len == 0)
		return MGW_EPROTO;
	*out = strtoull(v->str, &end, 10);
	return *end ? MGW_EPROTO : 0;
}

/* Reads HGETALL pairs from rep->element[from..] into t. */
static int parse_hash(const redisReply *rep, size_t from, const char *id,
                      struct mgw_be_task *t)
{
	uint64_t v;
	int have = 0;

	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	for (size_t i = from; i + 1 < rep->elements; i += 2) {
		const redisReply *k = rep->element[i], *val = rep->element[i + 1];
		if (k->type != REDIS_REPLY_STRING || val->type != REDIS_REPLY_STRING)
			return MGW_EPROTO;
		if (!strcmp(k->str, "status")) {
			if (mgw_be_task_status_parse(val->str, &t->status) != 0)
				return MGW_EPROTO;
			have |= 1;
		} else if (!strcmp(k->str, "message")) {
			snprintf(t->message, sizeof(t->message), "%s", val->str);
		} else if (!strcmp(k->str, "outcome") && val->len > 0) {
			t->outcome = json_loadb(val->str, val->len, 0, NULL);
		} else if (u64_field(val, &v) == 0) {
			if (!strcmp(k->str, "created"))
				t->created_ms = v, have |= 2;
			else if (!strcmp(k->str, "updated"))
				t->updated_ms = v;
			else if (!strcmp(k->str, "deadline"))
				t->deadline_ms = v, have |= 4;
			else if (!strcmp(k->str, "ttl"))
				t->ttl_ms = (uint32_t)v;
			else if (!strcmp(k->str, "poll"))
				t->poll_ms = (uint32_t)v;
		}
	}
	return have == 7 ? 0 : MGW_EPROTO;
}

/* ---- replies ------------------------------------------------------------- */

static void fail_reply(struct op *o, int status, redisReply *rep)
{
	o->r->errors++;
	if (status == 0 && rep->type == REDIS_REPLY_ERROR)
		mgw_warn(NULL, "tasks redis %s: %s", mgw_redis_display(o->r->conn),
		         rep->str);
	o->cb(MGW_EIO, NULL, o->arg);
}

struct get_op {
	struct op o;
	char id[40];
};

static void on_created(void *arg, int status, redisReply *rep)
{
	struct get_op *g = arg;

	if (status == 0 && rep->type == REDIS_REPLY_INTEGER) {
		struct mgw_be_task t = {0};
		snprintf(t.id, sizeof(t.id), "%s", g->id);
		g->o.cb(0, &t, g->o.arg);
	} else {
		fail_reply(&g->o, status, rep);
	}
	free(g);
}

static void answer_hash(struct get_op *g, const redisReply *rep, size_t from,
                        int err)
{
	struct mgw_be_task t;

	if (parse_hash(rep, from, g->id, &t) != 0) {
		mgw_be_task_deinit(&t);
		g->o.r->errors++;
		g->o.cb(MGW_EIO, NULL, g->o.arg);
		return;
	}
	g->o.cb(err, &t, g->o.arg);
	mgw_be_task_deinit(&t);
}

static void on_got(void *arg, int status, redisReply *rep)
{
	struct get_op *g = arg;

	if (status == 0 && rep->type == REDIS_REPLY_ARRAY) {
		if (rep->elements == 0)
			g->o.cb(MGW_ENOTFOUND, NULL, g->o.arg);
		else
			answer_hash(g, rep, 0, 0);
	} else {
		fail_reply(&g->o, status, rep);
	}
	free(g);
}

static void on_finished(void *arg, int status, redisReply *rep)
{
	struct get_op *g = arg;

	if (status == 0 && rep->type == REDIS_REPLY_NIL) {
		g->o.cb(MGW_ENOTFOUND, NULL, g->o.arg);
	} else if (status == 0 && rep->type == REDIS_REPLY_ARRAY &&
	           rep->elements >= 1 &&
	           rep->element[0]->type == REDIS_REPLY_INTEGER) {
		answer_hash(g, rep, 1,
		            rep->element[0]->integer == 1 ? 0 : MGW_ECONFLICT);
	} else {
		fail_reply(&g->o, status, rep);
	}
	free(g);
}

/* ---- operations ---------------------------------------------------------- */

/* A new operation, or NULL with cb already answered. */
static struct get_op *op_start(struct redis_tasks *r, const char *id,
                               mgw_be_task_cb cb, void *arg)
{
	struct get_op *g;

	if (!id_valid(id)) {
		cb(MGW_ENOTFOUND, NULL, arg);
		return NULL;
	}
	if (mgw_redis_state(r->conn) == MGW_REDIS_DOWN) {
		cb(MGW_EIO, NULL, arg);
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		cb(MGW_ENOMEM, NULL, arg);
		return NULL;
	}
	g->o.r = r;
	g->o.cb = cb;
	g->o.arg = arg;
	snprintf(g->id, sizeof(g->id), "%s", id);
	return g;
}

static void sent(struct get_op *g, int rc)
{
	if (rc == 0)
		return;
	g->o.cb(MGW_EIO, NULL, g->o.arg);
	free(g);
}

static void redis_create(struct mgw_be_task_store *s, const struct mgw_be_task *t,
                         mgw_be_task_cb cb, void *arg)
{
	struct redis_tasks *r = (struct redis_tasks *)s;
	struct get_op *g = op_start(r, t->id, cb, arg);
	char created[24], deadline[24], ttl[16], poll[16];

	if (!g)
		return;
	snprintf(created, sizeof(created), "%" PRIu64, t->created_ms);
	snprintf(deadline, sizeof(deadline), "%" PRIu64, t->deadline_ms);
	snprintf(ttl, sizeof(ttl), "%" PRIu32, t->ttl_ms);
	snprintf(poll, sizeof(poll), "%" PRIu32, t->poll_ms);
	sent(g, mgw_redis_command(r->conn, on_created, g,
	                          "EVAL %s 1 " KEY_PREFIX "%s %s %s %s %s %s %s",
	                          create_script, t->id,
	                          mgw_be_task_status_name(t->status), created,
	                          deadline, ttl, poll, t->message));
}

static void redis_get(struct mgw_be_task_store *s, const char *id,
                      mgw_be_task_cb cb, void *arg)
{
	struct redis_tasks *r = (struct redis_tasks *)s;
	struct get_op *g = op_start(r, id, cb, arg);

	if (g)
		sent(g, mgw_redis_command(r->conn, on_got, g,
		                          "HGETALL " KEY_PREFIX "%s", id));
}

static void redis_finish(struct mgw_be_task_store *s, const char *id,
                         enum mgw_be_task_status status, const char *message,
                         const json_t *outcome, uint64_t now_ms,
                         mgw_be_task_cb cb, void *arg)
{
	struct redis_tasks *r = (struct redis_tasks *)s;
	struct get_op *g = op_start(r, id, cb, arg);
	char *doc = NULL, now[24];

	if (!g)
		return;
	if (outcome && !(doc = json_dumps(outcome, JSON_COMPACT))) {
		free(g);
		cb(MGW_ENOMEM, NULL, arg);
		return;
	}
	snprintf(now, sizeof(now), "%" PRIu64, now_ms);
	sent(g, mgw_redis_command(r->conn, on_finished, g,
	                          "EVAL %s 1 " KEY_PREFIX "%s %s %s %s %s",
	                          finish_script, id,
	                          mgw_be_task_status_name(status),
	                          message ? message : "", doc ? doc : "", now));
	free(doc);
}

static size_t redis_held(const struct mgw_be_task_store *s)
{
	(void)s;
	return 0;
}

static void redis_describe(const struct mgw_be_task_store *s, json_t *obj)
{
	const struct redis_tasks *r = (const struct redis_tasks *)s;

	json_object_set_new(obj, "tasks_redis", json_string(mgw_redis_display(r->conn)));
	json_object_set_new(obj, "tasks_redis_connected",
	                    json_boolean(mgw_redis_state(r->conn) == MGW_REDIS_UP));
	json_object_set_new(obj, "tasks_redis_shared", json_boolean(!r->owned));
	json_object_set_new(obj, "tasks_store_errors", json_integer((json_int_t)r->errors));
}

static void redis_free(struct mgw_be_task_store *s)
{
	struct redis_tasks *r = (struct redis_tasks *)s;

	if (r->owned)
		mgw_redis_free(r->conn); /* pending operations answered MGW_EIO */
	free(r);
}

static const struct mgw_be_task_store_ops redis_ops = {
	.name = "redis",
	.create = redis_create,
	.get = redis_get,
	.finish = redis_finish,
	.held = redis_held,
	.describe = redis_describe,
	.free = redis_free,
};

struct mgw_be_task_store *mgw_be_task_store_redis_new(
	struct event_base *base, struct mgw_redis *conn, const char *url,
	const struct mgw_redis_tls_conf *tls, char *err, size_t errlen)
{
	struct redis_tasks *r = calloc(1, sizeof(*r));
	struct mgw_redis_opts o = {
		.url = url, .tls = tls, .timeout = OP_TIMEOUT,
		.on_state = on_state,
	};

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base.ops = &redis_ops;
	if (conn) {
		r->conn = conn;
		return &r->base;
	}
	o.state_arg = r;
	r->owned = 1;
	r->conn = mgw_redis_new(base, &o, err, errlen);
	if (!r->conn) {
		free(r);
		return NULL;
	}
	return &r->base;
}
