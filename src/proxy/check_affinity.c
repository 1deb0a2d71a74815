/* check_affinity.c - task affinity on the stateless path (upstreams[].
 * affinity: task; doc/serve.md, "Task affinity").
 *
 * Learning: the answer to a tools/call whose request declares the tasks
 * extension (only such a client may be given a task, SEP-2663) is read
 * when complete, through the relay's capture and the one answer reader
 * (mgw_sse_body_response, as tools/list answers are for replay.h); a
 * CreateTaskResult (resultType "task") puts taskId -> the server that
 * answered into the group's map (affinity.h) for its ttlMs, and, with
 * task_affinity.redis, into Redis (one SET ... PX).  The bytes relayed
 * are never touched.
 *
 * Routing (the check, last of the routed ones): a tasks/... request whose
 * params.taskId (which the sep2243 check confirmed against Mcp-Name)
 * names a known task goes to its owner, and only there (t->owner).  The
 * owner gone (no longer in the group, down by the health checks, or the
 * connection to it refused: MGW_FO_GONE) -> the answer the tasks
 * extension prescribes for an unknown task, -32602, from the gateway: any
 * other replica would not know the task either, or worse, run a
 * tasks/update on a stale copy.  A task this gateway never saw (nor
 * Redis) goes to the balancer as before: another gateway, or a task
 * store the replicas share, may know it. */
#include "autoconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"
#include "proxy/affinity.h"
#include "proxy/checks.h"
#include "proxy/conf_serve-t.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline.h"
#include "proxy/pipeline-t.h"
#include "proxy/sse.h"
#include "proxy/txn.h"
#include "proxy/upstream.h"
#include "util/time.h"

#define TASKS_EXTENSION "io.modelcontextprotocol/tasks"
#define VALUE_MAX 2100    /* "EXPIRES URL" in Redis */

/* ---- the owner ------------------------------------------------------------- */

/* The server of g whose URL has key owner, or NULL (removed). */
static struct mgw_upstream_server *owner_server(
	const struct mgw_upstream_group *g, uint64_t owner)
{
	for (size_t i = 0; i < g->n_servers; i++)
		if (mgw_task_owner_key(g->servers[i].conf->url) == owner)
			return &g->servers[i];
	return NULL;
}

void mgw_affinity_gone(struct mgw_txn *t)
{
	struct mgw_proxy_reply r;

	atomic_fetch_add(&t->route->group->tasks->owner_gone, 1);
	mgw_txn_note_why(t, "task-owner-gone");
	mgw_txn_cancel_attempt(t);
	t->rl.mode = MGW_RELAY_NONE;
	/* 200: a JSON-RPC error as the owner itself would have answered it
	 * (a 4xx could send a dual-era client back to initialize) */
	if (mgw_proxy_reply_build(&r, 200, MGW_JRPC_INVALID_PARAMS,
	                          "Failed to retrieve task: Task not found (the "
	                          "server that held it is no longer available)",
	                          NULL, 1,
	                          mgw_proxy_reply_id(&t->msg)) != 0) {
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return;
	}
	mgw_txn_reply(t, &r, NULL);
}

/* t's task lives on owner: pin it there, or answer that it is gone.
 * Draining or ejected owners still get it (the task is nowhere else; a
 * refused connection then says gone); down by the health checks is
 * gone. */
static enum mgw_check_verdict settle(struct mgw_txn *t, uint64_t owner)
{
	struct mgw_task_map *m = t->route->group->tasks;
	struct mgw_upstream_server *s = owner_server(t->route->group, owner);

	if (!s || !atomic_load(&s->health_up)) {
		mgw_affinity_gone(t);
		return MGW_CHECK_ANSWERED;
	}
	t->owner = s;
	atomic_fetch_add(&m->routed, 1);
	mgw_txn_note_why(t, "task-affinity");
	return MGW_CHECK_PASS;
}

static enum mgw_check_verdict miss(struct mgw_txn *t)
{
	atomic_fetch_add(&t->route->group->tasks->misses, 1);
	return MGW_CHECK_PASS;
}

/* ---- Redis ---------------------------------------------------------------- */

/* This worker's connection for g's task_affinity.redis (NULL: none or
 * cannot be made). */
static struct mgw_redis *redis_conn(struct mgw_pipeline *pl,
                                    const struct mgw_upstream_group *g)
{
	if (!g->conf->affinity.redis.url)
		return NULL;
	if (!pl->task_redis) {
		pl->task_redis = calloc(pl->ups->n_groups, sizeof(*pl->task_redis));
		if (!pl->task_redis)
			return NULL;
		pl->n_task_redis = pl->ups->n_groups;
	}
	if (g->index >= pl->n_task_redis)
		return NULL;
	return mgw_pipeline_redis(pl, &pl->task_redis[g->index],
	                          &g->conf->affinity.redis, &pl->task_log,
	                          "task_affinity.redis");
}

/* "mcpgw:task:GROUP:SHA256(id)": a task id may be a bearer handle
 * (SEP-2663, "Security Implications"), so Redis never holds it. */
static int redis_key(const struct mgw_upstream_group *g, const char *id,
                     size_t len, char *buf, size_t n)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int w;

	if (!EVP_Digest(id, len, md, &mdlen, EVP_sha256(), NULL))
		return -1;
	w = snprintf(buf, n, "mcpgw:task:%s:", g->name);
	for (unsigned i = 0; w > 0 && (size_t)w + 2 < n && i < mdlen; i++)
		w += snprintf(buf + w, n - (size_t)w, "%02x", md[i]);
	return w > 0 && (size_t)w < n ? w : -1;
}

static void on_set(void *arg, int status, redisReply *rep)
{
	(void)arg;
	(void)status;
	(void)rep;     /* a lost SET costs the other gateways a miss */
}

/* The value: "EXPIRES_UNIX_MS URL", so another gateway keeps the task
 * no longer than this one would. */
static void redis_learn(struct mgw_txn *t, const char *id, size_t len,
                        uint64_t ttl_ms)
{
	const struct mgw_upstream_group *g = t->route->group;
	struct mgw_redis *r = redis_conn(t->pl, g);
	char key[160], val[VALUE_MAX];
	int kl, vl;

	if (!r || mgw_redis_state(r) == MGW_REDIS_DOWN ||
	    (kl = redis_key(g, id, len, key, sizeof(key))) < 0)
		return;
	if (ttl_ms > g->tasks->max_ttl_ms)
		ttl_ms = g->tasks->max_ttl_ms;
	vl = snprintf(val, sizeof(val), "%" PRIu64 " %s", mgw_wall_ms() + ttl_ms,
	              t->last->conf->url);
	if (vl < 0 || (size_t)vl >= sizeof(val))
		return;   /* an URL this long: other gateways miss it */
	mgw_redis_command(r, on_set, NULL, "SET %b %b PX %llu", key, (size_t)kl,
	                  val, (size_t)vl, (unsigned long long)ttl_ms);
}

/* One tasks/... request waiting for Redis; outlives t when the client
 * leaves first (t NULL then). */
struct task_wait {
	struct mgw_txn *t;
};

static void on_cancel(struct mgw_txn *t)
{
	struct task_wait *w = t->pending_arg;

	w->t = NULL;    /* the reply frees w */
}

/* A "EXPIRES URL" value from Redis: the owner and the time left, or 0. */
static int parse_value(const char *v, size_t n, uint64_t now_wall,
                       uint64_t *owner, uint64_t *left_ms)
{
	char buf[VALUE_MAX];
	unsigned long long exp;
	int used = 0;

	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, v, n);
	buf[n] = '\0';
	if (sscanf(buf, "%llu %n", &exp, &used) != 1 || used <= 0 ||
	    !buf[used] || exp <= now_wall)
		return 0;
	*owner = mgw_task_owner_key(buf + used);
	*left_ms = exp - now_wall;
	return 1;
}

static void on_get(void *arg, int status, redisReply *rep)
{
	struct task_wait *w = arg;
	struct mgw_txn *t = w->t;
	struct mgw_task_map *m;
	uint64_t owner, left;
	enum mgw_check_verdict v;

	free(w);
	if (!t)
		return;
	t->pending_cancel = NULL;
	t->pending_arg = NULL;
	m = t->route->group->tasks;
	if (status == 0 && rep && rep->type == REDIS_REPLY_STRING &&
	    parse_value(rep->str, rep->len, mgw_wall_ms(), &owner, &left)) {
		atomic_fetch_add(&m->shared_hits, 1);
		mgw_task_map_put(m, t->msg.task_id, strlen(t->msg.task_id), owner,
		                 left, mgw_now_ms());
		v = settle(t, owner);
	} else {
		/* not there, or Redis down or slow: the balancer decides */
		v = miss(t);
	}
	if (v == MGW_CHECK_PASS)
		mgw_pipeline_resume(t);
}

static enum mgw_check_verdict shared_lookup(struct mgw_txn *t,
                                            struct mgw_redis *r)
{
	struct task_wait *w;
	char key[160];
	int kl;

	kl = redis_key(t->route->group, t->msg.task_id, strlen(t->msg.task_id),
	               key, sizeof(key));
	if (kl < 0 || !(w = malloc(sizeof(*w))))
		return miss(t);
	w->t = t;
	if (mgw_redis_command(r, on_get, w, "GET %b", key, (size_t)kl) != 0) {
		free(w);
		return miss(t);
	}
	t->pending_cancel = on_cancel;
	t->pending_arg = w;
	return MGW_CHECK_PENDING;
}

/* ---- the check -------------------------------------------------------------- */

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const struct mgw_upstream_group *g = t->route->group;
	const char *id = t->have_msg ? t->msg.task_id : NULL;
	struct mgw_redis *r;
	uint64_t owner;

	if (!g || !g->tasks || !id || t->msg.kind != MGW_JRPC_REQUEST)
		return MGW_CHECK_PASS;
	if (mgw_task_map_get(g->tasks, id, strlen(id), mgw_now_ms(), &owner,
	                     NULL))
		return settle(t, owner);
	r = redis_conn(t->pl, g);
	if (r && mgw_redis_state(r) != MGW_REDIS_DOWN)
		return shared_lookup(t, r);
	return miss(t);
}

const struct mgw_check mgw_check_affinity = {
	"task-affinity", MGW_PHASE_ROUTED, MGW_H_STATELESS, run,
};

/* ---- learning ------------------------------------------------------------- */

int mgw_affinity_wants(const struct mgw_txn *t)
{
	const json_t *caps, *ext;

	if (!t->route->group || !t->route->group->tasks || !t->have_msg ||
	    t->msg.kind != MGW_JRPC_REQUEST || !t->msg.method ||
	    strcmp(t->msg.method, "tools/call") != 0 || !mgw_jrpc_has_meta(&t->msg))
		return 0;
	caps = json_object_get(mgw_jrpc_meta(&t->msg),
	                       "io.modelcontextprotocol/clientCapabilities");
	ext = json_object_get(caps, "extensions");
	return json_object_get(ext, TASKS_EXTENSION) != NULL;
}

void mgw_affinity_learn(struct mgw_txn *t, const void *body, size_t len)
{
	struct mgw_task_map *m;
	json_t *resp;
	const char *id;
	size_t n;
	uint64_t ttl;

	if (!body || !t->last || t->status < 200 || t->status > 299 ||
	    !mgw_affinity_wants(t))
		return;
	m = t->route->group->tasks;
	resp = mgw_sse_body_response(body, len, t->rl.sse,
	                             t->pl->conf->max_json_depth);
	if (resp && mgw_task_created(resp, &id, &n, &ttl) &&
	    mgw_task_map_put(m, id, n, mgw_task_owner_key(t->last->conf->url),
	                     ttl, mgw_now_ms()) == 0) {
		atomic_fetch_add(&m->learned, 1);
		redis_learn(t, id, n, ttl);
	}
	json_decref(resp);
}
