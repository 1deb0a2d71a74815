/* check_ratelimit.c - a route's rate_limit (doc/security.md, "Rate
 * limits"): a token bucket per key (ratelimit.h); over the limit, 429
 * with Retry-After and the JSON-RPC error -32019 carrying the request's
 * id and data {retry_after, key}.
 *
 * Keys: principal (the verified token's subject; on a route without auth
 * there is none, and the client address stands in), client (the peer's
 * address, or with forwarded.trust_client the last X-Forwarded-For
 * entry, the one the trusted proxy in front wrote), method (the MCP
 * method; requests without one share the bucket ""), tool (tools/call's
 * params.name; every other request passes).
 *
 * shared: redis keeps the bucket in Redis instead, one for every gateway
 * (an atomic script per request on this worker's connection, the check
 * waiting, MGW_CHECK_PENDING); when Redis is down, refuses or does not
 * answer within rate_limits.redis.timeout the local bucket decides
 * (counted, and the event rate_limit_redis_fallback). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "auth/principal-t.h"
#include "core/errors.h"
#include "core/log.h"
#include "http/headers.h"
#include "http/server.h"
#include "net/redis.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/pipeline-t.h"
#include "proxy/ratelimit.h"
#include "proxy/txn.h"
#include "util/tbucket.h"
#include "util/time.h"

/* The bucket: token bucket of rate/s up to burst, in a hash that expires
 * once it would be full again.  The clock is Redis' own, so every gateway
 * measures refills alike.  Returns {1, "0"} or {0, seconds to wait}. */
static const char script[] =
	"local r=tonumber(ARGV[1]) local b=tonumber(ARGV[2]) "
	"local t=redis.call('TIME') local now=tonumber(t[1])+tonumber(t[2])/1e6 "
	"local v=redis.call('HMGET',KEYS[1],'k','t') "
	"local k=tonumber(v[1]) local ts=tonumber(v[2]) "
	"if k==nil or ts==nil then k=b ts=now end "
	"if now>ts then k=math.min(b,k+(now-ts)*r) end "
	"local ok=0 local w=0 "
	"if k>=1 then k=k-1 ok=1 else w=(1-k)/r end "
	"redis.call('HSET',KEYS[1],'k',tostring(k),'t',tostring(now)) "
	"redis.call('PEXPIRE',KEYS[1],math.ceil(b/r*1000)+1000) "
	"return {ok,tostring(w)}";

/* The last entry of the last X-Forwarded-For, trimmed, into buf; NULL
 * when there is none. */
static const char *forwarded_for(const struct mgw_http_exchange *x,
                                 char *buf, size_t len)
{
	const struct mgw_headers *h = mgw_http_req_headers(x);
	const char *v = NULL, *s, *e;
	size_t n;

	for (size_t i = 0; h && i < h->n; i++)
		if (MGW_HEADER_IS(&h->v[i], "x-forwarded-for"))
			v = h->v[i].value;
	if (!v)
		return NULL;
	s = strrchr(v, ',');
	s = s ? s + 1 : v;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = (size_t)(e - s);
	if (n == 0 || n >= len)
		return NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

static const char *client_addr(const struct mgw_txn *t, char *buf, size_t len)
{
	const char *ip = NULL;

	if (t->pl->conf->trust_forwarded)
		ip = forwarded_for(t->x, buf, len);
	return ip ? ip : mgw_http_peer_ip(t->x);
}

/* The key of t under kind k into buf ("p:SUB", "c:IP", "m:METHOD",
 * "t:NAME"); 0, or 1 when t has nothing to count (a tool limit and no
 * tool). */
static int make_key(const struct mgw_txn *t, enum mgw_rl_key_conf k,
                    char *buf, size_t len, size_t *n)
{
	char ip[64];
	const char *m;
	int w;

	switch (k) {
	case MGW_RL_KEY_PRINCIPAL:
		/* no auth on this route: the client address stands in */
		if (t->principal && t->principal->sub)
			w = snprintf(buf, len, "p:%s", t->principal->sub);
		else
			w = snprintf(buf, len, "c:%s",
			             client_addr(t, ip, sizeof(ip)));
		break;
	case MGW_RL_KEY_CLIENT:
		w = snprintf(buf, len, "c:%s", client_addr(t, ip, sizeof(ip)));
		break;
	case MGW_RL_KEY_METHOD:
		m = mgw_txn_mcp_method(t);
		w = snprintf(buf, len, "m:%s", m ? m : "");
		break;
	case MGW_RL_KEY_TOOL:
		if (!t->have_msg || !t->msg.method || !t->msg.name ||
		    strcmp(t->msg.method, "tools/call") != 0)
			return 1;
		w = snprintf(buf, len, "t:%s", t->msg.name);
		break;
	default:
		return 1;
	}
	*n = w < 0 ? 0 : (size_t)w >= len ? len - 1 : (size_t)w;
	return 0;
}

static enum mgw_check_verdict refuse(struct mgw_txn *t, double wait_s)
{
	const struct mgw_rate_limit_conf *l = &t->route->conf->rate_limit;
	unsigned ra = mgw_tbucket_retry_after(wait_s);
	struct mgw_proxy_reply r;
	struct mgw_headers h;
	char num[16];
	json_t *data;

	mgw_rl_count_limited(t->pl->rlt, t->route->index, l->key);
	t->pl->st.errors[MGW_PERR_RATE_LIMITED]++;
	t->note = "rate limited";
	data = json_pack("{s:I,s:s}", "retry_after", (json_int_t)ra, "key",
	                 mgw_rl_key_name(l->key));
	snprintf(num, sizeof(num), "%u", ra);
	mgw_headers_init(&h);
	if (mgw_headers_adds(&h, "retry-after", num) != 0 ||
	    mgw_proxy_reply_build(&r, 429, mgw_proxy_error_info(
	                              MGW_PERR_RATE_LIMITED)->code,
	                          "rate limit exceeded", data, t->as_json,
	                          mgw_proxy_reply_id(t->have_msg ? &t->msg
	                                                         : NULL)) != 0) {
		mgw_headers_deinit(&h);
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return MGW_CHECK_ANSWERED;
	}
	mgw_txn_reply(t, &r, &h);
	mgw_headers_deinit(&h);
	return MGW_CHECK_ANSWERED;
}

static enum mgw_check_verdict local(struct mgw_txn *t, uint64_t id,
                                    const char *key, size_t n)
{
	const struct mgw_rate_limit_conf *l = &t->route->conf->rate_limit;
	double wait_s = 0;

	if (mgw_rl_take(t->pl->rlt, id, key, n, l->rate, (double)l->burst,
	                mgw_now_ns(), &wait_s))
		return MGW_CHECK_PASS;
	return refuse(t, wait_s);
}

/* ---- shared: redis -------------------------------------------------------- */

/* One request waiting for Redis; outlives t when the client leaves
 * first (t NULL then). */
struct rl_wait {
	struct mgw_txn *t;
	uint64_t id;
	size_t n;
	char key[];
};

static void on_cancel(struct mgw_txn *t)
{
	struct rl_wait *w = t->pending_arg;

	w->t = NULL;    /* the reply frees w */
}

static void fallback(struct mgw_txn *t, const char *why)
{
	mgw_rl_count_fallback(t->pl->rlt);
	mgw_event(NULL, "rate_limit_redis_fallback", "redis=%s why=\"%s\"",
	          t->pl->rl_redis ? mgw_redis_display(t->pl->rl_redis) : "-",
	          why);
}

static void on_reply(void *arg, int status, redisReply *rep)
{
	struct rl_wait *w = arg;
	struct mgw_txn *t = w->t;
	enum mgw_check_verdict v;

	if (!t) {
		free(w);
		return;
	}
	t->pending_cancel = NULL;
	t->pending_arg = NULL;
	if (status == 0 && rep && rep->type == REDIS_REPLY_ARRAY &&
	    rep->elements == 2 && rep->element[0]->type == REDIS_REPLY_INTEGER &&
	    rep->element[1]->type == REDIS_REPLY_STRING) {
		double wait_s = strtod(rep->element[1]->str, NULL);

		v = rep->element[0]->integer ? MGW_CHECK_PASS : refuse(t, wait_s);
	} else {
		fallback(t, status == MGW_ETIMEDOUT ? "timeout"
		            : status != 0           ? "connection"
		            : rep && rep->type == REDIS_REPLY_ERROR ? rep->str
		                                                    : "reply");
		v = local(t, w->id, w->key, w->n);
	}
	free(w);
	if (v == MGW_CHECK_PASS)
		mgw_pipeline_resume(t);
}

static struct mgw_redis *redis_conn(struct mgw_pipeline *pl)
{
	return mgw_pipeline_redis(pl, &pl->rl_redis, &pl->conf->rate_limits.redis,
	                          &pl->rl_log, "rate_limits.redis");
}

static enum mgw_check_verdict shared(struct mgw_txn *t, uint64_t id,
                                     const char *key, size_t n)
{
	const struct mgw_rate_limit_conf *l = &t->route->conf->rate_limit;
	struct mgw_redis *r = redis_conn(t->pl);
	struct rl_wait *w;
	char rkey[1100], rate[32], burst[16];
	int kl;

	if (!r || mgw_redis_state(r) == MGW_REDIS_DOWN) {
		fallback(t, "down");
		return local(t, id, key, n);
	}
	w = malloc(sizeof(*w) + n + 1);
	if (!w)
		return local(t, id, key, n);
	w->t = t;
	w->id = id;
	w->n = n;
	memcpy(w->key, key, n);
	w->key[n] = '\0';
	kl = snprintf(rkey, sizeof(rkey), "mcpgw:rl:%016llx:%.*s",
	              (unsigned long long)id, (int)n, key);
	if (kl < 0 || (size_t)kl >= sizeof(rkey))
		kl = (int)sizeof(rkey) - 1;
	snprintf(rate, sizeof(rate), "%.17g", l->rate);
	snprintf(burst, sizeof(burst), "%u", l->burst);
	if (mgw_redis_command(r, on_reply, w, "EVAL %s 1 %b %s %s", script,
	                      rkey, (size_t)kl, rate, burst) != 0) {
		free(w);
		fallback(t, "refused");
		return local(t, id, key, n);
	}
	t->pending_cancel = on_cancel;
	t->pending_arg = w;
	return MGW_CHECK_PENDING;
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const struct mgw_route_conf *rc = t->route ? t->route->conf : NULL;
	char key[1024];
	size_t n = 0;
	uint64_t id;

	if (!rc || !rc->has_rate_limit || !t->pl->rlt)
		return MGW_CHECK_PASS;
	if (make_key(t, rc->rate_limit.key, key, sizeof(key), &n) != 0)
		return MGW_CHECK_PASS;
	id = mgw_rl_limit_id(rc);
	if (rc->rate_limit.shared == MGW_RL_SHARED_REDIS)
		return shared(t, id, key, n);
	return local(t, id, key, n);
}

const struct mgw_check mgw_check_ratelimit = {
	"rate-limit", MGW_PHASE_ROUTED, MGW_H_ALL, run,
};
