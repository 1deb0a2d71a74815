/* mrtr_redis.c - the "redis" requestState design of the book tool: the
 * dialogue's state is a key in a shared Redis, so any replica sharing it
 * continues the dialogue; the client only holds "rr1." + 128-bit random
 * id.  The connection is net/redis.c (the one every part of mcpgw uses);
 * while it is not up, operations fail at once with MGW_EIO.
 *
 * Value of key "mcpgw:rs:ID": "EXP ARGS JSON" - expiry (unix seconds),
 * the digest of the arguments the state was made for, and the state.  The
 * key lives EXP + a grace (so that a late presentation is told "expired",
 * not "unknown"); a state taken with --single-use is replaced by the
 * tombstone "used" (keeping its lifetime) in the same script that reads
 * it, so two presentations racing on two replicas cannot both pass. */
#include "autoconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "backend/mrtr.h"
#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"

#define KEY_PREFIX "mcpgw:rs:"
#define OP_TIMEOUT 2.0
/* The key outlives its state by the TTL clamped to this range: at least
 * a few seconds, since expiry is checked in whole seconds. */
#define GRACE_MIN_S 5
#define GRACE_MAX_S 60

/* KEYS[1] the state; ARGV[1] the presenter's argument digest, ARGV[2]
 * "1" to consume.  A state presented with other arguments is returned
 * without being consumed (the caller refuses it: a refused presentation
 * does not destroy the dialogue). */
static const char take_script[] =
	"local v = redis.call('GET', KEYS[1]) "
	"if not v then return false end "
	"if v == 'used' then return v end "
	"if ARGV[2] == '1' then "
	"local a = string.match(v, '^%d+ (%x+) ') "
	"if a == ARGV[1] then redis.call('SET', KEYS[1], 'used', 'KEEPTTL') end "
	"end "
	"return v";

struct mgw_mrtr_redis {
	struct mgw_redis *conn;
	uint64_t ops;             /* commands sent */
	uint64_t failures;        /* commands refused, failed or unanswered */
};

struct rr_op {
	struct mgw_mrtr_redis *r;
	mgw_mrtr_redis_cb cb;
	void *arg;
};

static void on_state(void *arg, enum mgw_redis_state st, const char *why)
{
	struct mgw_mrtr_redis *r = arg;

	if (st == MGW_REDIS_UP)
		mgw_info(NULL, "redis %s (request state): connected",
		         mgw_redis_display(r->conn));
	else if (st == MGW_REDIS_DOWN)
		mgw_warn(NULL, "redis %s (request state): %s (reconnecting)",
		         mgw_redis_display(r->conn), why ? why : "unavailable");
}

struct mgw_mrtr_redis *mgw_mrtr_redis_new(struct event_base *base,
                                          const char *url,
                                          const struct mgw_redis_tls_conf *tls,
                                          char *err, size_t errlen)
{
	struct mgw_mrtr_redis *r = calloc(1, sizeof(*r));
	struct mgw_redis_opts o = {
		.url = url, .tls = tls, .timeout = OP_TIMEOUT,
		.on_state = on_state,
	};

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	o.state_arg = r;
	r->conn = mgw_redis_new(base, &o, err, errlen);
	if (!r->conn) {
		free(r);
		return NULL;
	}
	return r;
}

void mgw_mrtr_redis_free(struct mgw_mrtr_redis *r)
{
	if (!r)
		return;
	mgw_redis_free(r->conn); /* pending operations are answered MGW_EIO */
	free(r);
}

void mgw_mrtr_redis_describe(const struct mgw_mrtr_redis *r, json_t *obj)
{
	json_object_set_new(obj, "mrtr_store_ops", json_integer((json_int_t)r->ops));
	json_object_set_new(obj, "mrtr_store_failures",
	                    json_integer((json_int_t)r->failures));
	json_object_set_new(obj, "mrtr_redis", json_string(mgw_redis_display(r->conn)));
	json_object_set_new(obj, "mrtr_redis_connected",
	                    json_boolean(mgw_redis_state(r->conn) == MGW_REDIS_UP));
}

/* Sends one command whose answer goes to on_reply with an rr_op; on
 * failure to send, cb runs at once with MGW_EIO. */
static void send_op(struct mgw_mrtr_redis *r, mgw_mrtr_redis_cb cb, void *arg,
                    mgw_redis_reply_cb on_reply,
                    int argc, const char **argv, const size_t *lens)
{
	struct rr_op *o;

	if (mgw_redis_state(r->conn) == MGW_REDIS_DOWN) {
		r->failures++;
		cb(MGW_EIO, NULL, 0, arg);
		return;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		cb(MGW_ENOMEM, NULL, 0, arg);
		return;
	}
	o->r = r;
	o->cb = cb;
	o->arg = arg;
	if (mgw_redis_command_argv(r->conn, argc, argv, lens, on_reply, o) != 0) {
		free(o);
		r->failures++;
		cb(MGW_EIO, NULL, 0, arg);
		return;
	}
	r->ops++;
}

static void on_put_reply(void *arg, int status, redisReply *rep)
{
	struct rr_op *o = arg;

	if (status == 0 && rep->type == REDIS_REPLY_STATUS) {
		o->cb(0, NULL, 0, o->arg);
	} else {
		o->r->failures++;
		if (status == 0 && rep->type == REDIS_REPLY_ERROR)
			mgw_warn(NULL, "redis %s: SET (request state) failed: %s",
			         mgw_redis_display(o->r->conn), rep->str);
		o->cb(MGW_EIO, NULL, 0, o->arg);
	}
	free(o);
}

void mgw_mrtr_redis_put(struct mgw_mrtr_redis *r, const char *id, int64_t exp,
                        int64_t ttl_s, const char *args_digest,
                        const char *json, mgw_mrtr_redis_cb cb, void *arg)
{
	char key[sizeof(KEY_PREFIX) + 64], ex[24], head[64];
	int64_t grace = ttl_s < GRACE_MIN_S ? GRACE_MIN_S
	                : ttl_s > GRACE_MAX_S ? GRACE_MAX_S : ttl_s;
	size_t hl, jl = strlen(json);
	char *val;
	const char *argv[5];
	size_t lens[5];

	snprintf(key, sizeof(key), KEY_PREFIX "%s", id);
	snprintf(ex, sizeof(ex), "%" PRId64, ttl_s + grace);
	hl = (size_t)snprintf(head, sizeof(head), "%" PRId64 " %s ", exp, args_digest);
	val = malloc(hl + jl + 1);
	if (!val) {
		cb(MGW_ENOMEM, NULL, 0, arg);
		return;
	}
	memcpy(val, head, hl);
	memcpy(val + hl, json, jl + 1);
	argv[0] = "SET", argv[1] = key, argv[2] = val, argv[3] = "EX", argv[4] = ex;
	for (int i = 0; i < 5; i++)
		lens[i] = strlen(argv[i]);
	send_op(r, cb, arg, on_put_reply, 5, argv, lens); /* argv copied */
	free(val);
}

/* Splits "EXP ARGS JSON": *exp and the JSON part, or NULL. */
static const char *parse_value(const char *v, int64_t *exp)
{
	char *end;
	long long e = strtoll(v, &end, 10);
	const char *sp;

	if (end == v || *end != ' ')
		return NULL;
	sp = strchr(end + 1, ' ');
	if (!sp)
		return NULL;
	*exp = (int64_t)e;
	return sp + 1;
}

static void on_take_reply(void *arg, int status, redisReply *rep)
{
	struct rr_op *o = arg;
	const char *json;
	int64_t exp = 0;

	if (status == 0 && rep->type == REDIS_REPLY_NIL) {
		o->cb(MGW_ENOTFOUND, NULL, 0, o->arg);
	} else if (status == 0 && rep->type == REDIS_REPLY_STRING) {
		if (strcmp(rep->str, "used") == 0)
			o->cb(MGW_ECONFLICT, NULL, 0, o->arg);
		else if (!(json = parse_value(rep->str, &exp)))
			o->cb(MGW_EINVAL, NULL, 0, o->arg);
		else
			o->cb(0, json, exp, o->arg);
	} else {
		o->r->failures++;
		if (status == 0 && rep->type == REDIS_REPLY_ERROR)
			mgw_warn(NULL, "redis %s: EVAL (request state) failed: %s",
			         mgw_redis_display(o->r->conn), rep->str);
		o->cb(MGW_EIO, NULL, 0, o->arg);
	}
	free(o);
}

void mgw_mrtr_redis_take(struct mgw_mrtr_redis *r, const char *id,
                         const char *args_digest, int consume,
                         mgw_mrtr_redis_cb cb, void *arg)
{
	char key[sizeof(KEY_PREFIX) + 64];
	const char *argv[6];
	size_t lens[6];

	snprintf(key, sizeof(key), KEY_PREFIX "%s", id);
	argv[0] = "EVAL", argv[1] = take_script, argv[2] = "1", argv[3] = key;
	argv[4] = args_digest, argv[5] = consume ? "1" : "0";
	for (int i = 0; i < 6; i++)
		lens[i] = strlen(argv[i]);
	send_op(r, cb, arg, on_take_reply, 6, argv, lens);
}
