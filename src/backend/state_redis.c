/* state_redis.c - the "redis" handle design: a handle names a key in a
 * shared Redis, so every replica sees the same counter.  The connection
 * (hiredis on the server's event loop, evdns for names, reconnection with
 * exponential backoff) is net/redis.c; while it is not up, operations fail
 * fast with MGW_EIO ("state store unavailable"). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "backend/state.h"
#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"
#include "util/rand.h"

#define KEY_PREFIX "mcpgw:ctr:"
#define HANDLE_PREFIX "r_"
#define HANDLE_HEX 32
#define OP_TIMEOUT 2.0

/* Increment only an existing key, so a forgotten or foreign handle is an
 * "unknown handle" instead of a counter silently restarting at 1. */
static const char incr_script[] =
	"if redis.call('EXISTS', KEYS[1]) == 1 then "
	"local v = redis.call('INCR', KEYS[1]) "
	"redis.call('EXPIRE', KEYS[1], ARGV[1]) "
	"return v else return false end";

struct redis_store {
	struct mgw_be_store base;
	struct mgw_redis *conn;
	int64_t ttl_s;
};

struct op {
	struct redis_store *r;
	mgw_be_store_cb cb;
	void *arg;
	char handle[sizeof(HANDLE_PREFIX) + HANDLE_HEX];
};

/* Logs the transitions of the connection (not every failed attempt). */
static void on_state(void *arg, enum mgw_redis_state st, const char *why)
{
	struct redis_store *r = arg;

	if (st == MGW_REDIS_UP)
		mgw_info(NULL, "redis %s: connected", mgw_redis_display(r->conn));
	else if (st == MGW_REDIS_DOWN)
		mgw_warn(NULL, "redis %s: %s (reconnecting)",
		         mgw_redis_display(r->conn), why ? why : "unavailable");
}

static int usable(struct redis_store *r)
{
	return mgw_redis_state(r->conn) == MGW_REDIS_UP;
}

/* ---- operations ------------------------------------------------------ */

static void on_create_reply(void *arg, int status, redisReply *rep)
{
	struct op *o = arg;

	if (status == 0 && rep->type == REDIS_REPLY_STATUS) {
		o->cb(0, 0, o->handle, o->arg);
	} else {
		if (status == 0 && rep->type == REDIS_REPLY_ERROR)
			mgw_warn(NULL, "redis %s: SET failed: %s",
			         mgw_redis_display(o->r->conn), rep->str);
		o->cb(MGW_EIO, 0, NULL, o->arg);
	}
	free(o);
}

static void on_incr_reply(void *arg, int status, redisReply *rep)
{
	struct op *o = arg;

	if (status == 0 && rep->type == REDIS_REPLY_INTEGER) {
		o->cb(0, (int64_t)rep->integer, NULL, o->arg);
	} else if (status == 0 && rep->type == REDIS_REPLY_NIL) {
		o->cb(MGW_ENOTFOUND, 0, NULL, o->arg);
	} else {
		if (status == 0 && rep->type == REDIS_REPLY_ERROR)
			mgw_warn(NULL, "redis %s: EVAL failed: %s",
			         mgw_redis_display(o->r->conn), rep->str);
		o->cb(MGW_EIO, 0, NULL, o->arg);
	}
	free(o);
}

static struct op *op_new(struct redis_store *r, mgw_be_store_cb cb, void *arg)
{
	struct op *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->r = r;
	o->cb = cb;
	o->arg = arg;
	return o;
}

static void redis_create(struct mgw_be_store *s, mgw_be_store_cb cb, void *arg)
{
	struct redis_store *r = (struct redis_store *)s;
	struct op *o;

	if (!usable(r)) {
		cb(MGW_EIO, 0, NULL, arg);
		return;
	}
	o = op_new(r, cb, arg);
	if (!o) {
		cb(MGW_ENOMEM, 0, NULL, arg);
		return;
	}
	memcpy(o->handle, HANDLE_PREFIX, sizeof(HANDLE_PREFIX) - 1);
	if (mgw_random_hex(o->handle + sizeof(HANDLE_PREFIX) - 1, HANDLE_HEX / 2) != 0) {
		free(o);
		cb(MGW_EIO, 0, NULL, arg);
		return;
	}
	if (mgw_redis_command(r->conn, on_create_reply, o,
	                      "SET " KEY_PREFIX "%s 0 EX %lld NX", o->handle,
	                      (long long)r->ttl_s) != 0) {
		free(o);
		cb(MGW_EIO, 0, NULL, arg);
	}
}

/* Only handles this design minted can name a key: anything else is
 * unknown without a round trip, and never reaches Redis as a key. */
static int handle_valid(const char *h)
{
	size_t pl = sizeof(HANDLE_PREFIX) - 1;

	if (strncmp(h, HANDLE_PREFIX, pl) != 0 || strlen(h) != pl + HANDLE_HEX)
		return 0;
	for (h += pl; *h; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return 0;
	return 1;
}

static void redis_increment(struct mgw_be_store *s, const char *handle,
                            mgw_be_store_cb cb, void *arg)
{
	struct redis_store *r = (struct redis_store *)s;
	struct op *o;

	if (!handle_valid(handle)) {
		cb(MGW_ENOTFOUND, 0, NULL, arg);
		return;
	}
	if (!usable(r)) {
		cb(MGW_EIO, 0, NULL, arg);
		return;
	}
	o = op_new(r, cb, arg);
	if (!o) {
		cb(MGW_ENOMEM, 0, NULL, arg);
		return;
	}
	if (mgw_redis_command(r->conn, on_incr_reply, o,
	                      "EVAL %s 1 " KEY_PREFIX "%s %lld", incr_script,
	                      handle, (long long)r->ttl_s) != 0) {
		free(o);
		cb(MGW_EIO, 0, NULL, arg);
	}
}

static void redis_describe(const struct mgw_be_store *s, json_t *obj)
{
	const struct redis_store *r = (const struct redis_store *)s;
	struct mgw_redis_stats st;

	mgw_redis_get_stats(r->conn, &st);
	json_object_set_new(obj, "redis", json_string(mgw_redis_display(r->conn)));
	json_object_set_new(obj, "connected",
	                    json_boolean(mgw_redis_state(r->conn) == MGW_REDIS_UP));
	json_object_set_new(obj, "connects", json_integer((json_int_t)st.connects));
	json_object_set_new(obj, "connect_failures", json_integer((json_int_t)st.failures));
	json_object_set_new(obj, "errors", json_integer((json_int_t)st.errors));
	json_object_set_new(obj, "timeouts", json_integer((json_int_t)st.timeouts));
}

static void redis_free(struct mgw_be_store *s)
{
	struct redis_store *r = (struct redis_store *)s;

	if (!r)
		return;
	mgw_redis_free(r->conn); /* pending ops are answered MGW_EIO */
	free(r);
}

static const struct mgw_be_store_ops redis_ops = {
	.name = "redis",
	.create = redis_create,
	.increment = redis_increment,
	.describe = redis_describe,
	.free = redis_free,
};

struct mgw_redis *mgw_be_store_redis_conn(struct mgw_be_store *s)
{
	return s && s->ops == &redis_ops ? ((struct redis_store *)s)->conn : NULL;
}

struct mgw_be_store *mgw_be_store_redis_new(struct event_base *base,
                                            const char *url,
                                            const struct mgw_redis_tls_conf *tls,
                                            double ttl,
                                            char *err, size_t errlen)
{
	struct redis_store *r = calloc(1, sizeof(*r));
	struct mgw_redis_opts o = {
		.url = url, .tls = tls, .timeout = OP_TIMEOUT,
		.on_state = on_state,
	};

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base.ops = &redis_ops;
	r->ttl_s = ttl >= 1.0 ? (int64_t)ttl : 1;
	o.state_arg = r;
	r->conn = mgw_redis_new(base, &o, err, errlen);
	if (!r->conn) {
		free(r);
		return NULL;
	}
	if (mgw_redis_state(r->conn) == MGW_REDIS_DOWN)
		mgw_warn(NULL, "redis %s: unavailable (retrying)",
		         mgw_redis_display(r->conn));
	return &r->base;
}
