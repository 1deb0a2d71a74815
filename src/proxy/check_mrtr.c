/* check_mrtr.c - a route's mrtr: single_use (doc/serve.md, "Single-use
 * requestState"): the at-most-once guard the 2026-07-28 MRTR pattern
 * asks of servers whose requestState must be consumed once ("MUST
 * enforce that invariant server-side"), kept by the gateway in front of
 * every replica.  A request whose params carry a string requestState is
 * let through the first time within the route's ttl; a second
 * presentation gets 409 with the JSON-RPC error -31023 and its id, and
 * reaches no replica.
 *
 * The digest is SHA-256 of the string's value (after JSON unescaping:
 * "\u0041" and "A" are one state to any server, so they are one here),
 * recorded in the process's set (mrtr_set.h) that every worker shares;
 * with shared: redis also by one SET mcpgw:mrtr:HEX 1 NX PX ttl on this
 * worker's connection (the check waits, MGW_CHECK_PENDING), so every
 * gateway sees it.  Redis down, an error reply or no answer within its
 * timeout refuse the request (503, -31024): a guard that let states
 * through unchecked would be no guard; the local claim is then released,
 * so the client may present the state again once Redis is back.  A full
 * set is also 503 (an entry is never forgotten early).
 *
 * Batches do not exist in 2026-07-28, the only revision with
 * requestState: a batch carrying one on a guarded route is refused
 * (400, -32600) rather than passed unchecked.  Runs last among the
 * routed checks, so a request refused by auth, policy or rate limit does
 * not use up its state. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "core/errors.h"
#include "net/redis.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/mrtr_set.h"
#include "proxy/pipeline.h"
#include "proxy/pipeline-t.h"
#include "proxy/txn.h"
#include "util/time.h"

/* The requestState of params (a JSON object, may be NULL) when it is a
 * string, else NULL. */
static json_t *request_state(json_t *params)
{
	json_t *v = json_is_object(params) ? json_object_get(params,
	                                                     "requestState")
	                                   : NULL;

	return json_is_string(v) ? v : NULL;
}

static enum mgw_check_verdict refuse(struct mgw_txn *t, enum mgw_proxy_error e,
                                     enum mgw_mrtr_count c, const char *detail)
{
	mgw_mrtr_set_count(t->pl->mrtr, c);
	mgw_txn_fail(t, e, detail);
	return MGW_CHECK_ANSWERED;
}

/* ---- shared: redis ------------------------------------------------------- */

/* One presentation waiting for Redis; outlives t when the client leaves
 * first (t NULL then). */
struct mrtr_wait {
	struct mgw_txn *t;
	struct mgw_mrtr_set *set;
	uint8_t d[MGW_MRTR_DIGEST_LEN];
};

static void on_cancel(struct mgw_txn *t)
{
	struct mrtr_wait *w = t->pending_arg;

	w->t = NULL;    /* the reply frees w */
}

static void on_reply(void *arg, int status, redisReply *rep)
{
	struct mrtr_wait *w = arg;
	struct mgw_txn *t = w->t;
	int first = status == 0 && rep && rep->type == REDIS_REPLY_STATUS;
	int seen = status == 0 && rep && rep->type == REDIS_REPLY_NIL;

	if (!first && !seen) /* not recorded anywhere: presentable again */
		mgw_mrtr_set_release(w->set, w->d);
	if (!t) {
		free(w);
		return;
	}
	free(w);
	t->pending_cancel = NULL;
	t->pending_arg = NULL;
	if (first) {
		mgw_pipeline_resume(t);
		return;
	}
	if (seen)
		refuse(t, MGW_PERR_STATE_REUSED, MGW_MRTR_C_REFUSED,
		       "requestState already used (another gateway saw it)");
	else
		refuse(t, MGW_PERR_STATE_STORE, MGW_MRTR_C_STORE,
		       status == MGW_ETIMEDOUT
		       ? "requestState could not be checked: Redis did not "
		         "answer in time"
		       : "requestState could not be checked: Redis unavailable");
}

static struct mgw_redis *redis_conn(struct mgw_pipeline *pl)
{
	const struct mgw_serve_conf *s = pl->conf;
	const struct mgw_redis_conf *c = s->mrtr_guard.redis.url
	                                 ? &s->mrtr_guard.redis
	                                 : &s->rate_limits.redis;

	return mgw_pipeline_redis(pl, &pl->mrtr_redis, c, &pl->mrtr_log,
	                          s->mrtr_guard.redis.url ? "mrtr_guard.redis"
	                                                  : "rate_limits.redis");
}

static enum mgw_check_verdict shared(struct mgw_txn *t,
                                     const uint8_t d[MGW_MRTR_DIGEST_LEN],
                                     uint64_t ttl_ms)
{
	static const char hex[] = "0123456789abcdef";
	struct mgw_redis *r = redis_conn(t->pl);
	struct mrtr_wait *w;
	char key[11 + 2 * MGW_MRTR_DIGEST_LEN + 1] = "mcpgw:mrtr:";
	char px[24];

	for (size_t i = 0; i < MGW_MRTR_DIGEST_LEN; i++) {
		key[11 + 2 * i] = hex[d[i] >> 4];
		key[12 + 2 * i] = hex[d[i] & 15];
	}
	key[sizeof(key) - 1] = '\0';
	snprintf(px, sizeof(px), "%llu", (unsigned long long)ttl_ms);
	if (!r || mgw_redis_state(r) == MGW_REDIS_DOWN ||
	    !(w = malloc(sizeof(*w)))) {
		mgw_mrtr_set_release(t->pl->mrtr, d);
		return refuse(t, MGW_PERR_STATE_STORE, MGW_MRTR_C_STORE,
		              "requestState could not be checked: Redis "
		              "unavailable");
	}
	w->t = t;
	w->set = t->pl->mrtr;
	memcpy(w->d, d, MGW_MRTR_DIGEST_LEN);
	if (mgw_redis_command(r, on_reply, w, "SET %s 1 NX PX %s", key, px) != 0) {
		free(w);
		mgw_mrtr_set_release(t->pl->mrtr, d);
		return refuse(t, MGW_PERR_STATE_STORE, MGW_MRTR_C_STORE,
		              "requestState could not be checked: Redis "
		              "refused the command");
	}
	t->pending_cancel = on_cancel;
	t->pending_arg = w;
	return MGW_CHECK_PENDING;
}

/* ---- the check ------------------------------------------------------------ */

static int batch_carries_state(json_t *root)
{
	size_t i;
	json_t *o;

	json_array_foreach(root, i, o)
		if (json_is_object(o) &&
		    request_state(json_object_get(o, "params")))
			return 1;
	return 0;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const struct mgw_route_conf *rc = t->route ? t->route->conf : NULL;
	uint8_t d[MGW_MRTR_DIGEST_LEN];
	uint64_t ttl_ms;
	json_t *rs;

	if (!rc || !rc->has_mrtr || !rc->mrtr.single_use || !t->pl->mrtr ||
	    !t->have_msg)
		return MGW_CHECK_PASS;
	if (t->msg.kind == MGW_JRPC_BATCH && batch_carries_state(mgw_jrpc_root(&t->msg)))
		return mgw_check_reject(t, 400, MGW_JRPC_INVALID_REQUEST,
		                        "requestState in a batch: batches do not "
		                        "exist in the protocol revision that "
		                        "defines requestState (2026-07-28)",
		                        NULL, 1, "requestState in a batch");
	if (t->msg.kind != MGW_JRPC_REQUEST ||
	    !mgw_jrpc_params_has(&t->msg, "requestState") ||
	    !(rs = request_state(mgw_jrpc_params(&t->msg))))
		return MGW_CHECK_PASS;
	if (!EVP_Digest(json_string_value(rs), json_string_length(rs), d, NULL,
	                EVP_sha256(), NULL))
		return refuse(t, MGW_PERR_STATE_STORE, MGW_MRTR_C_STORE,
		              "requestState could not be checked: no digest");
	mgw_mrtr_set_count(t->pl->mrtr, MGW_MRTR_C_CHECKED);
	ttl_ms = (uint64_t)(rc->mrtr.ttl * 1000.0);
	switch (mgw_mrtr_set_claim(t->pl->mrtr, d, mgw_now_ms(), ttl_ms)) {
	case MGW_MRTR_SEEN:
		return refuse(t, MGW_PERR_STATE_REUSED, MGW_MRTR_C_REFUSED, NULL);
	case MGW_MRTR_FULL:
		return refuse(t, MGW_PERR_STATE_STORE, MGW_MRTR_C_FULL,
		              "requestState could not be checked: the gateway "
		              "holds mrtr_guard.max_states states");
	case MGW_MRTR_FIRST:
		break;
	}
	if (rc->mrtr.shared == MGW_MRTR_SHARED_REDIS)
		return shared(t, d, ttl_ms);
	return MGW_CHECK_PASS;
}

const struct mgw_check mgw_check_mrtr = {
	"mrtr-single-use", MGW_PHASE_ROUTED, MGW_H_ALL, run,
};
