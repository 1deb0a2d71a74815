/* mrtr.c - the "book" tool: a multi round-trip tools/call (SEP-2322).
 * The first call answers resultType "input_required" with one elicitation
 * (inputRequests) and an opaque requestState; the client retries the
 * original request (a new JSON-RPC id) with inputResponses and the echoed
 * requestState.  Round 1 asks for a date, the last round for a
 * confirmation, the rounds between for a note; after the last round the
 * result carries a booking id.  The state names the tool and a digest of
 * its arguments (a state presented with others is refused), optionally a
 * digest of the Authorization field (--request-state-bind-principal) and,
 * sealed, its expiry; --single-use keeps the nonces of sealed states
 * presented here so a second presentation is refused.  With the redis
 * design (mrtr_redis.c) storing and reading the state are asynchronous:
 * the call is answered from the Redis reply. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "backend/backend.h"
#include "backend/mrtr.h"
#include "backend/strmap.h"
#include "core/errors.h"
#include "http/server.h"
#include "util/rand.h"
#include "util/time.h"

#define MAX_KEYS 16
#define MAX_ENTRIES 100000 /* memory states, and single-use nonces */

struct mgw_mrtr {
	struct mgw_hmac_key keys[MAX_KEYS];
	size_t nkeys;
	struct mgw_strmap *states; /* memory: id -> struct mem_state */
	struct mgw_strmap *used;   /* single-use: nonce -> int64_t exp */
	struct mgw_mrtr_redis *redis; /* redis design */
};

struct mem_state {
	char *json;
	int64_t exp;
};

int mgw_mrtr_init(struct mgw_backend *be, char *err, size_t errlen)
{
	struct mgw_mrtr *m = calloc(1, sizeof(*m));
	int n;

	if (!m || !(m->states = mgw_strmap_new()) || !(m->used = mgw_strmap_new())) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (be->conf.key_file) {
		n = mgw_hmac_keys_load(be->conf.key_file, m->keys, MAX_KEYS, err, errlen);
		if (n < 0)
			goto fail;
		m->nkeys = (size_t)n;
	} else {
		if (mgw_hmac_key_random(&m->keys[0]) != 0) {
			snprintf(err, errlen, "cannot generate a random key");
			goto fail;
		}
		m->nkeys = 1;
		if (be->conf.request_state == MGW_RS_SEALED)
			mgw_warn(NULL, "--request-state sealed without --key-file: a random "
			         "key, so other replicas cannot continue this one's dialogues");
	}
	if (be->conf.request_state == MGW_RS_REDIS &&
	    !(m->redis = mgw_mrtr_redis_new(be->base, be->conf.redis_url,
	                                    &be->conf.redis_tls, err, errlen)))
		goto fail;
	be->mrtr = m;
	return 0;
fail:
	if (m) {
		mgw_strmap_free(m->states);
		mgw_strmap_free(m->used);
		free(m);
	}
	return MGW_EINVAL;
}

static int drop_state(const char *key, void *value, void *arg)
{
	struct mem_state *st = value;

	(void)key;
	(void)arg;
	free(st->json);
	free(st);
	return 1;
}

static int drop_used(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 1;
}

void mgw_mrtr_deinit(struct mgw_backend *be)
{
	struct mgw_mrtr *m = be->mrtr;

	if (!m)
		return;
	mgw_mrtr_redis_free(m->redis); /* answers its pending operations */
	mgw_strmap_foreach(m->states, drop_state, NULL);
	mgw_strmap_foreach(m->used, drop_used, NULL);
	mgw_strmap_free(m->states);
	mgw_strmap_free(m->used);
	memset(m->keys, 0, sizeof(m->keys));
	free(m);
	be->mrtr = NULL;
}

void mgw_mrtr_describe(const struct mgw_backend *be, json_t *obj)
{
	const struct mgw_be_stats *st = &be->stats;

	json_object_set_new(obj, "request_state",
	                    json_string(mgw_be_rs_name(be->conf.request_state)));
	json_object_set_new(obj, "mrtr_states_issued",
	                    json_integer((json_int_t)st->mrtr_states_issued));
	json_object_set_new(obj, "mrtr_state_bytes_total",
	                    json_integer((json_int_t)st->mrtr_state_bytes_total));
	json_object_set_new(obj, "mrtr_state_bytes_max",
	                    json_integer((json_int_t)st->mrtr_state_bytes_max));
	json_object_set_new(obj, "mrtr_completed",
	                    json_integer((json_int_t)st->mrtr_completed));
	json_object_set_new(obj, "mrtr_refusals",
	                    json_integer((json_int_t)st->mrtr_refusals));
	if (be->mrtr)
		json_object_set_new(obj, "mrtr_states_held",
		                    json_integer((json_int_t)mgw_strmap_count(be->mrtr->states)));
	if (be->mrtr && be->mrtr->redis)
		mgw_mrtr_redis_describe(be->mrtr->redis, obj);
}

/* ---- expiry sweeps ------------------------------------------------------ */

static int sweep_state(const char *key, void *value, void *arg)
{
	struct mem_state *st = value;

	if (st->exp >= *(const int64_t *)arg)
		return 0;
	return drop_state(key, value, NULL);
}

static int sweep_used(const char *key, void *value, void *arg)
{
	(void)key;
	if (*(int64_t *)value >= *(const int64_t *)arg)
		return 0;
	free(value);
	return 1;
}

/* Sweeps a full table; 0 when there is room for one more entry. */
static int room(struct mgw_strmap *t, mgw_strmap_visit_cb sweep)
{
	int64_t now = mgw_wall_s();

	if (mgw_strmap_count(t) < MAX_ENTRIES)
		return 0;
	mgw_strmap_foreach(t, sweep, &now);
	return mgw_strmap_count(t) < MAX_ENTRIES ? 0 : MGW_ELIMIT;
}

/* ---- digests ---------------------------------------------------------- */

static void hex_digest(const void *data, size_t len, char out[33])
{
	unsigned char d[SHA256_DIGEST_LENGTH];

	SHA256(data, len, d);
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* Digest of the arguments as canonical JSON (sorted keys, compact). */
static int args_digest(json_t *args, char out[33])
{
	char *s = args ? json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS)
	               : strdup("{}");

	if (!s)
		return MGW_ENOMEM;
	hex_digest(s, strlen(s), out);
	free(s);
	return 0;
}

static void principal_digest(struct mgw_be_call *c, char out[33])
{
	const char *a = c->x ? mgw_http_req_header(c->x, "Authorization") : NULL;

	/* "-" prefix: no Authorization is a principal of its own. */
	if (!a)
		a = "";
	{
		size_t n = strlen(a);
		char *buf = malloc(n + 2);
		if (!buf) {
			snprintf(out, 33, "%s", "-");
			return;
		}
		buf[0] = a[0] ? 'A' : '-';
		memcpy(buf + 1, a, n + 1);
		hex_digest(buf, n + 1, out);
		free(buf);
	}
}

/* ---- answers ---------------------------------------------------------- */

static void refuse(struct mgw_be_call *c, int code, const char *reason,
                   const char *message)
{
	struct mgw_log_ctx ctx = mgw_be_ctx(c->x, NULL);

	c->be->stats.mrtr_refusals++;
	mgw_info(&ctx, "tools/call book: requestState refused (%s)", reason);
	mgw_be_call_error(c, 200, code, message, json_pack("{ss}", "reason", reason));
}

static void tool_text(struct mgw_be_call *c, int is_error, const char *text,
                      json_t *structured)
{
	json_t *r = json_pack("{s[{ssss}]sb}", "content", "type", "text", "text",
	                      text, "isError", is_error);

	if (structured)
		json_object_set_new(r, "structuredContent", structured);
	if (is_error)
		c->be->stats.tool_errors++;
	mgw_be_call_result(c, r);
}

/* The input key of round k (0-based) of n. */
static void round_key(int k, int n, char *out, size_t len)
{
	if (k == 0)
		snprintf(out, len, "date");
	else if (k == n - 1)
		snprintf(out, len, "confirm");
	else
		snprintf(out, len, "note_%d", k);
}

static json_t *elicitation(int k, int n)
{
	const char *field, *type, *msg;

	if (k == 0) {
		field = "date", type = "string", msg = "Which date (YYYY-MM-DD)?";
	} else if (k == n - 1) {
		field = "confirm", type = "boolean", msg = "Confirm the booking?";
	} else {
		field = "note", type = "string", msg = "Anything to add?";
	}
	return json_pack("{sss{sssss{sss{s{ss}}s[s]}}}", "method",
	                 "elicitation/create", "params", "mode", "form", "message",
	                 msg, "requestedSchema", "type", "object", "properties",
	                 field, "type", type, "required", field);
}

/* Answers the input_required result of round k of n with requestState
 * rs, counting its size. */
static void issue(struct mgw_be_call *c, int k, int n, const char *rs)
{
	struct mgw_be_stats *st = &c->be->stats;
	size_t len = strlen(rs);
	char key[16];

	st->mrtr_states_issued++;
	st->mrtr_state_bytes_total += len;
	if (len > st->mrtr_state_bytes_max)
		st->mrtr_state_bytes_max = len;
	round_key(k, n, key, sizeof(key));
	mgw_be_call_result(c, json_pack("{sss{so}ss}", "resultType", "input_required",
	                                "inputRequests", key, elicitation(k, n),
	                                "requestState", rs));
}

static void store_unavailable(struct mgw_be_call *c, int err)
{
	struct mgw_log_ctx ctx = mgw_be_ctx(c->x, NULL);

	mgw_warn(&ctx, "tools/call book: request state store: %s", mgw_strerror(err));
	mgw_be_call_error(c, 200, MGW_MRTR_E_STORE,
	                  "request state store unavailable",
	                  json_pack("{ss}", "reason", "store_unavailable"));
}

/* A redis put in flight: the call (one reference) and what to answer. */
struct put_op {
	struct mgw_be_call *c;
	int k, n;
	char rs[4 + 32 + 1];
};

static void on_put(int err, const char *json, int64_t exp, void *arg)
{
	struct put_op *o = arg;

	(void)json;
	(void)exp;
	if (mgw_be_call_alive(o->c)) {
		if (err)
			store_unavailable(o->c, err);
		else
			issue(o->c, o->k, o->n, o->rs);
	}
	mgw_be_call_unref(o->c);
	free(o);
}

/* The redis design of ask(): the state is written under its nonce and
 * the round answered when Redis has it. */
static void ask_redis(struct mgw_be_call *c, json_t *state, const char *nonce,
                      int64_t exp)
{
	struct mgw_backend *be = c->be;
	struct put_op *o = calloc(1, sizeof(*o));
	char *js = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS);

	if (!o || !js) {
		free(o);
		free(js);
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
		return;
	}
	o->c = c;
	o->k = (int)json_integer_value(json_object_get(state, "round"));
	o->n = (int)json_integer_value(json_object_get(state, "rounds"));
	snprintf(o->rs, sizeof(o->rs), "rr1.%s", nonce);
	mgw_be_call_ref(c);
	mgw_mrtr_redis_put(be->mrtr->redis, nonce, exp,
	                   (int64_t)(be->conf.request_state_ttl + 0.999),
	                   json_string_value(json_object_get(state, "args")), js,
	                   on_put, o);
	free(js);
}

/* Issues the next round: state (stolen) gets a fresh nonce and becomes
 * the requestState of an input_required result. */
static void ask(struct mgw_be_call *c, json_t *state)
{
	struct mgw_backend *be = c->be;
	struct mgw_mrtr *m = be->mrtr;
	int k = (int)json_integer_value(json_object_get(state, "round"));
	int n = (int)json_integer_value(json_object_get(state, "rounds"));
	int64_t exp = mgw_wall_s() + (int64_t)(be->conf.request_state_ttl + 0.999);
	char nonce[33], *rs = NULL;
	struct mem_state *st = NULL;

	if (mgw_random_hex(nonce, 16) != 0)
		goto fail;
	json_object_set_new(state, "nonce", json_string(nonce));
	if (be->conf.request_state == MGW_RS_REDIS) {
		ask_redis(c, state, nonce, exp);
		json_decref(state);
		return;
	}
	if (be->conf.request_state == MGW_RS_SEALED) {
		rs = mgw_mrtr_seal(&m->keys[0], state, exp);
		if (!rs)
			goto fail;
	} else {
		if (room(m->states, sweep_state) != 0) {
			json_decref(state);
			tool_text(c, 1, "request state store full", NULL);
			return;
		}
		st = calloc(1, sizeof(*st));
		rs = malloc(4 + 32 + 1);
		if (!st || !rs ||
		    !(st->json = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS)))
			goto fail;
		st->exp = exp;
		snprintf(rs, 37, "rm1.%s", nonce);
		if (mgw_strmap_put(m->states, nonce, st) != 0)
			goto fail;
		st = NULL;
	}
	issue(c, k, n, rs);
	free(rs);
	json_decref(state);
	return;
fail:
	if (st) {
		free(st->json);
		free(st);
	}
	free(rs);
	json_decref(state);
	mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
}

static void resume(struct mgw_be_call *c, json_t *state, const char *digest);

/* A redis take in flight. */
struct take_op {
	struct mgw_be_call *c;
	char id[33];
	char digest[33];
};

/* The state read from Redis (or why not): refused, or the dialogue
 * resumed as for the other designs. */
static void on_take(int err, const char *json, int64_t exp, void *arg)
{
	struct take_op *o = arg;
	struct mgw_be_call *c = o->c;
	json_t *state;

	if (!mgw_be_call_alive(c))
		goto out;
	switch (err) {
	case 0:
		break;
	case MGW_ENOTFOUND:
		refuse(c, MGW_MRTR_E_UNKNOWN, "unknown",
		       "requestState unknown (expired and forgotten, or never issued)");
		goto out;
	case MGW_ECONFLICT:
		refuse(c, MGW_MRTR_E_REPLAYED, "replayed", "requestState already used");
		goto out;
	case MGW_EINVAL:
		refuse(c, MGW_MRTR_E_INVALID, "invalid", "requestState invalid");
		goto out;
	default:
		store_unavailable(c, err);
		goto out;
	}
	if (exp < mgw_wall_s()) {
		refuse(c, MGW_MRTR_E_EXPIRED, "expired", "requestState expired");
		goto out;
	}
	state = json_loads(json, 0, NULL);
	/* the key names the state: a value under another name is not ours */
	if (!json_is_object(state) ||
	    !json_is_string(json_object_get(state, "nonce")) ||
	    strcmp(json_string_value(json_object_get(state, "nonce")), o->id) != 0) {
		json_decref(state);
		refuse(c, MGW_MRTR_E_INVALID, "invalid", "requestState invalid");
		goto out;
	}
	resume(c, state, o->digest);
out:
	mgw_be_call_unref(c);
	free(o);
}

static int lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The redis design of open_state: only a well-formed reference reaches
 * Redis (as part of a key); --single-use consumes it in the same step. */
static void open_redis(struct mgw_be_call *c, const char *rs, size_t len,
                       const char *digest)
{
	struct take_op *o;

	if (strncmp(rs, "rr1.", 4) != 0 || len != 36 || !lower_hex(rs + 4, 32)) {
		refuse(c, MGW_MRTR_E_INVALID, "malformed", "requestState malformed");
		return;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
		return;
	}
	o->c = c;
	memcpy(o->id, rs + 4, 32);
	snprintf(o->digest, sizeof(o->digest), "%s", digest);
	mgw_be_call_ref(c);
	mgw_mrtr_redis_take(c->be->mrtr->redis, o->id, digest, c->be->conf.single_use,
	                    on_take, o);
}

/* Opens the presented requestState: 0 and *state, 1 when the redis
 * design answers later, or -1 when a refusal was answered. */
static int open_state(struct mgw_be_call *c, const char *rs, const char *digest,
                      json_t **state)
{
	struct mgw_backend *be = c->be;
	struct mgw_mrtr *m = be->mrtr;
	struct mem_state *st;
	size_t len = strnlen(rs, MGW_MRTR_MAX_STATE + 1);
	int rc;

	*state = NULL;
	if (len > MGW_MRTR_MAX_STATE) {
		refuse(c, MGW_MRTR_E_TOOLARGE, "oversized", "requestState too large");
		return -1;
	}
	if (be->conf.request_state == MGW_RS_REDIS) {
		open_redis(c, rs, len, digest);
		return 1;
	}
	if (be->conf.request_state == MGW_RS_MEMORY) {
		if (strncmp(rs, "rm1.", 4) != 0 || len != 36) {
			refuse(c, MGW_MRTR_E_INVALID, "malformed", "requestState malformed");
			return -1;
		}
		/* Consumed only once its checks pass (consume_state), so a
		 * refused presentation does not destroy the dialogue. */
		st = mgw_strmap_get(m->states, rs + 4);
		if (!st) {
			refuse(c, MGW_MRTR_E_UNKNOWN, "unknown",
			       "requestState unknown to this server (not held by this "
			       "replica, already used, or expired)");
			return -1;
		}
		if (st->exp < mgw_wall_s()) {
			mgw_strmap_del(m->states, rs + 4);
			drop_state(NULL, st, NULL);
			refuse(c, MGW_MRTR_E_EXPIRED, "expired", "requestState expired");
			return -1;
		}
		*state = json_loads(st->json, 0, NULL);
		if (!*state) {
			mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
			return -1;
		}
		return 0;
	}
	rc = mgw_mrtr_open(m->keys, m->nkeys, rs, mgw_wall_s(), state);
	switch (rc) {
	case 0:
		return 0;
	case MGW_MRTR_E_TOOLARGE:
		refuse(c, rc, "oversized", "requestState too large");
		break;
	case MGW_MRTR_E_EXPIRED:
		refuse(c, rc, "expired", "requestState expired");
		break;
	default:
		refuse(c, MGW_MRTR_E_INVALID, "invalid",
		       "requestState invalid (malformed, truncated or tampered)");
		break;
	}
	return -1;
}

/* Binding and single use; 0 when the state may be continued here. */
static int check_state(struct mgw_be_call *c, json_t *state, const char *digest)
{
	struct mgw_backend *be = c->be;
	json_t *t = json_object_get(state, "tool"), *a = json_object_get(state, "args");
	json_t *p = json_object_get(state, "principal");
	json_t *nonce = json_object_get(state, "nonce");
	json_t *r = json_object_get(state, "round"), *n = json_object_get(state, "rounds");
	char prin[33];
	int64_t *exp;

	if (!json_is_string(t) || strcmp(json_string_value(t), "book") != 0 ||
	    !json_is_string(a) || strcmp(json_string_value(a), digest) != 0) {
		refuse(c, MGW_MRTR_E_REQUEST, "other_request",
		       "requestState belongs to another request (tool or arguments differ)");
		return -1;
	}
	if (!json_is_integer(r) || !json_is_integer(n) || !json_is_string(nonce) ||
	    json_integer_value(r) < 0 ||
	    json_integer_value(r) >= json_integer_value(n)) {
		refuse(c, MGW_MRTR_E_INVALID, "invalid", "requestState invalid");
		return -1;
	}
	if (json_is_string(p)) {
		principal_digest(c, prin);
		if (strcmp(json_string_value(p), prin) != 0) {
			refuse(c, MGW_MRTR_E_PRINCIPAL, "other_principal",
			       "requestState belongs to another principal");
			return -1;
		}
	}
	if (be->conf.single_use && be->conf.request_state == MGW_RS_SEALED) {
		if (mgw_strmap_get(be->mrtr->used, json_string_value(nonce))) {
			refuse(c, MGW_MRTR_E_REPLAYED, "replayed",
			       "requestState already used");
			return -1;
		}
		if (room(be->mrtr->used, sweep_used) != 0) {
			tool_text(c, 1, "single-use nonce store full", NULL);
			return -1;
		}
		exp = malloc(sizeof(*exp));
		if (!exp || mgw_strmap_put(be->mrtr->used, json_string_value(nonce), exp) != 0) {
			free(exp);
			mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
			return -1;
		}
		/* Kept as long as the state could still verify. */
		*exp = mgw_wall_s() + (int64_t)(be->conf.request_state_ttl + 0.999) + 1;
	}
	return 0;
}

/* Takes the answer to round k from inputResponses into state.  Returns 1
 * when taken, 0 when missing or unusable (ask again), -1 when the user
 * declined or cancelled (the call has been answered). */
static int take_answer(struct mgw_be_call *c, json_t *state, json_t *resp,
                       int k, int n)
{
	char key[16];
	json_t *r, *action, *content, *v;
	const char *field = k == 0 ? "date" : k == n - 1 ? "confirm" : "note";

	round_key(k, n, key, sizeof(key));
	r = json_is_object(resp) ? json_object_get(resp, key) : NULL;
	if (!json_is_object(r))
		return 0;
	action = json_object_get(r, "action");
	if (!json_is_string(action))
		return 0;
	if (strcmp(json_string_value(action), "accept") != 0) {
		tool_text(c, 1, "booking cancelled by the user", NULL);
		return -1;
	}
	content = json_object_get(r, "content");
	v = json_is_object(content) ? json_object_get(content, field) : NULL;
	if (k == n - 1 ? !json_is_boolean(v) : !json_is_string(v))
		return 0;
	if (k == n - 1 && !json_is_true(v)) {
		tool_text(c, 1, "booking not confirmed", NULL);
		return -1;
	}
	if (json_is_string(v) && json_string_length(v) > 200)
		return 0;
	json_object_set(json_object_get(state, "answers"), key, v);
	return 1;
}

/* A memory state that passed its checks is used up. */
static void consume_state(struct mgw_backend *be, const char *rs)
{
	struct mem_state *st;

	if (be->conf.request_state != MGW_RS_MEMORY)
		return;
	st = mgw_strmap_del(be->mrtr->states, rs + 4);
	if (st)
		drop_state(NULL, st, NULL);
}

void mgw_mrtr_run_book(struct mgw_be_call *c, json_t *args)
{
	struct mgw_backend *be = c->be;
	json_t *params = mgw_jrpc_params(&c->msg), *rounds = json_object_get(args, "rounds");
	json_t *rs = json_object_get(params, "requestState");
	json_t *resp = json_object_get(params, "inputResponses");
	json_t *caps = mgw_jrpc_meta(&c->msg) ? json_object_get(mgw_jrpc_meta(&c->msg),
	                             "io.modelcontextprotocol/clientCapabilities") : NULL;
	json_t *state = NULL;
	char digest[33], prin[33];

	if (rs && !json_is_string(rs)) {
		mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS,
		                  "Invalid params: requestState must be a string", NULL);
		return;
	}
	if (resp && !json_is_object(resp)) {
		mgw_be_call_error(c, 200, MGW_JRPC_INVALID_PARAMS,
		                  "Invalid params: inputResponses must be an object", NULL);
		return;
	}
	if (!json_is_integer(rounds) || json_integer_value(rounds) < 2 ||
	    json_integer_value(rounds) > 10) {
		tool_text(c, 1, "invalid arguments: rounds must be an integer from 2 to 10",
		          NULL);
		return;
	}
	if (!json_is_object(json_object_get(caps, "elicitation"))) {
		tool_text(c, 1, "the client does not declare the elicitation capability "
		                "this tool needs", NULL);
		return;
	}
	if (args_digest(args, digest) != 0) {
		mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
		return;
	}
	if (!rs) {
		/* A new dialogue. */
		state = json_pack("{sssssisis{}}", "tool", "book", "args", digest,
		                  "round", 0, "rounds", (int)json_integer_value(rounds),
		                  "answers");
		if (state && be->conf.request_state_bind_principal) {
			principal_digest(c, prin);
			json_object_set_new(state, "principal", json_string(prin));
		}
		if (!state) {
			mgw_be_call_error(c, 500, MGW_JRPC_INTERNAL_ERROR, "Out of memory", NULL);
			return;
		}
		ask(c, state);
		return;
	}
	if (open_state(c, json_string_value(rs), digest, &state) != 0)
		return;
	resume(c, state, digest);
}

/* Continues the dialogue from its opened state (stolen): the checks,
 * then this round's answer, then the next round or the booking. */
static void resume(struct mgw_be_call *c, json_t *state, const char *digest)
{
	struct mgw_backend *be = c->be;
	json_t *params = mgw_jrpc_params(&c->msg);
	json_t *rs = json_object_get(params, "requestState");
	json_t *resp = json_object_get(params, "inputResponses");
	char text[96], booking[33];
	int k, n, got;
	json_t *date;

	if (check_state(c, state, digest) != 0) {
		json_decref(state);
		return;
	}
	consume_state(be, json_string_value(rs));
	if (!json_is_object(json_object_get(state, "answers")))
		json_object_set_new(state, "answers", json_object());
	k = (int)json_integer_value(json_object_get(state, "round"));
	n = (int)json_integer_value(json_object_get(state, "rounds"));
	got = take_answer(c, state, resp, k, n);
	if (got < 0) {
		json_decref(state);
		return;
	}
	if (got == 0 || k + 1 < n) {
		/* Missing answer: the same round again (spec: ask again rather
		 * than fail); otherwise the next round. */
		json_object_set_new(state, "round", json_integer(got ? k + 1 : k));
		ask(c, state);
		return;
	}
	if (mgw_random_hex(booking, 8) != 0)
		snprintf(booking, sizeof(booking), "0");
	date = json_object_get(json_object_get(state, "answers"), "date");
	snprintf(text, sizeof(text), "booked bk-%s for %s", booking,
	         json_string_value(date));
	be->stats.mrtr_completed++;
	{
		char id[40];
		snprintf(id, sizeof(id), "bk-%s", booking);
		tool_text(c, 0, text,
		          json_pack("{sssOsisI}", "bookingId", id, "date", date,
		                    "rounds", n, "requestStateBytes",
		                    (json_int_t)strlen(json_string_value(rs))));
	}
	json_decref(state);
}
