/* replay.c - the replay judgement and a group's replay-safe tools
 * (replay.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/errors.h"
#include "proxy/conf_serve-t.h"
#include "proxy/metrics-t.h"
#include "proxy/pipeline-t.h"
#include "proxy/repin.h"
#include "proxy/replay.h"
#include "proxy/sse.h"
#include "proxy/txn-t.h"
#include "proxy/upstream-t.h"
#include "util/time.h"

/* Sorted (bsearch).  Each is a read by the specification's own text:
 * doc/serve.md ("Requests lost in flight") cites it. */
static const char *const safe_methods[] = {
	"ping",
	"prompts/get",
	"prompts/list",
	"resources/list",
	"resources/read",
	"resources/templates/list",
	"server/discover",
	"tasks/get",
	"tools/list",
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int mgw_replay_method_safe(const char *method)
{
	if (!method)
		return 0;
	return bsearch(&method, safe_methods,
	               sizeof(safe_methods) / sizeof(safe_methods[0]),
	               sizeof(safe_methods[0]), cmp_str) != NULL;
}

int mgw_replay_carries_state(const struct mgw_jrpc_msg *m)
{
	return mgw_jrpc_params_has(m, "requestState") ||
	       mgw_jrpc_params_has(m, "inputResponses");
}

enum mgw_replay_verdict mgw_replay_judge(const struct mgw_jrpc_msg *m,
                                         int route_replay,
                                         mgw_replay_tool_fn tool_safe,
                                         const void *arg)
{
	if (route_replay == MGW_REPLAY_ALWAYS)
		return MGW_REPLAY_OK_ROUTE;
	if (!m)
		return MGW_REPLAY_OK_METHOD;   /* GET / DELETE */
	if (m->kind == MGW_JRPC_BATCH)
		return MGW_REPLAY_NO_BATCH;
	if (m->kind == MGW_JRPC_INVALID)
		return MGW_REPLAY_NO_UNREAD;
	if (mgw_replay_carries_state(m))
		return MGW_REPLAY_NO_STATE;
	if (m->kind != MGW_JRPC_REQUEST)
		return MGW_REPLAY_OK_METHOD;   /* notification, response */
	if (m->method && strcmp(m->method, "tools/call") == 0) {
		if (tool_safe && m->name && tool_safe(arg, m->name, strlen(m->name)))
			return MGW_REPLAY_OK_TOOL;
		return MGW_REPLAY_NO_TOOL;
	}
	return mgw_replay_method_safe(m->method) ? MGW_REPLAY_OK_METHOD
	                                         : MGW_REPLAY_NO_METHOD;
}

int mgw_replay_group_tool_safe(const void *arg, const char *name, size_t len)
{
	const struct mgw_upstream_group *g = arg;

	return g && g->replay &&
	       mgw_replay_tools_safe(&g->replay->tools, name, len, mgw_now_ms());
}

void mgw_replay_refusal_msg(enum mgw_replay_verdict v,
                            const struct mgw_jrpc_msg *m, char *buf, size_t n)
{
	const char *lead = "upstream lost mid-request; not replayed:";

	switch (v) {
	case MGW_REPLAY_NO_TOOL:
		snprintf(buf, n, "%s tool '%.200s' is not known to be idempotent "
		         "(no readOnlyHint or idempotentHint in the latest "
		         "tools/list seen)", lead, m && m->name ? m->name : "");
		break;
	case MGW_REPLAY_NO_BATCH:
		snprintf(buf, n, "%s a batch may hold calls that are not "
		         "idempotent", lead);
		break;
	case MGW_REPLAY_NO_METHOD:
		snprintf(buf, n, "%s %.100s is not safe to repeat", lead,
		         m && m->method ? m->method : "the request");
		break;
	case MGW_REPLAY_NO_STATE:
		snprintf(buf, n, "%s it carries requestState or inputResponses "
		         "(a multi round-trip request)", lead);
		break;
	default:
		snprintf(buf, n, "%s the body was not read as a JSON-RPC message "
		         "(%.160s), and may be a call that is not idempotent",
		         lead, m ? m->error_msg : "");
		break;
	}
}

void mgw_replay_count(struct mgw_txn *t, int replayed)
{
	const struct mgw_metrics *m = t->pl->metrics;
	struct mgw_metrics_worker *w = t->pl->mx;
	struct mgw_replay_group *g = t->route && t->route->group
	                             ? t->route->group->replay : NULL;

	if (g)
		atomic_fetch_add(replayed ? &g->replayed : &g->refused, 1);
	if (m && w && w->replays && t->route && t->route->index < m->n_routes) {
		atomic_uint_fast64_t *c =
			&w->replays[t->route->index * 2 + (replayed ? 0 : 1)];

		/* only this worker writes its block */
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
		                      memory_order_relaxed);
	}
}

/* ---- a group's tools -------------------------------------------------------- */

/* 1 while the set learned at tt->learned_ms is still good at now_ms (a
 * worker's clock read just before another's learn is not "later"). */
static int fresh(const struct mgw_replay_tools *tt, uint64_t now_ms)
{
	return tt->learned_ms &&
	       (now_ms < tt->learned_ms || now_ms - tt->learned_ms <= tt->ttl_ms);
}

int mgw_replay_group_init(struct mgw_replay_group *g)
{
	memset(g, 0, sizeof(*g));
	atomic_init(&g->replayed, 0);
	atomic_init(&g->refused, 0);
	atomic_init(&g->learned, 0);
	g->tools.ttl_ms = MGW_REPLAY_TOOLS_TTL_MS;
	return pthread_mutex_init(&g->tools.mu, NULL) == 0 ? 0 : MGW_ENOMEM;
}

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void mgw_replay_group_deinit(struct mgw_replay_group *g)
{
	names_free(g->tools.names, g->tools.n);
	g->tools.names = NULL;
	g->tools.n = 0;
	pthread_mutex_destroy(&g->tools.mu);
}

/* Installs the sorted set v (n names, bytes) in place of tt's; frees the
 * old one.  Lock held. */
static void install(struct mgw_replay_tools *tt, char **v, size_t n,
                    size_t bytes, uint64_t now_ms)
{
	names_free(tt->names, tt->n);
	tt->names = v;
	tt->n = n;
	tt->bytes = bytes;
	tt->learned_ms = now_ms ? now_ms : 1;
}

void mgw_replay_group_carry(struct mgw_replay_group *to,
                            struct mgw_replay_group *from)
{
	char **v = NULL;
	size_t n = 0, bytes = 0;
	uint64_t at;

	atomic_store(&to->replayed, atomic_load(&from->replayed));
	atomic_store(&to->refused, atomic_load(&from->refused));
	atomic_store(&to->learned, atomic_load(&from->learned));
	pthread_mutex_lock(&from->tools.mu);
	at = from->tools.learned_ms;
	if (from->tools.n && (v = calloc(from->tools.n, sizeof(*v)))) {
		for (; n < from->tools.n; n++) {
			if (!(v[n] = strdup(from->tools.names[n])))
				break;
			bytes += strlen(v[n]) + 1;
		}
	}
	pthread_mutex_unlock(&from->tools.mu);
	if (v && n < from->tools.n) {
		names_free(v, n);   /* no memory: the new group learns afresh */
		return;
	}
	pthread_mutex_lock(&to->tools.mu);
	install(&to->tools, v, n, bytes, at);
	pthread_mutex_unlock(&to->tools.mu);
}

/* Adds name (len) to the array being built, within the bounds.  Returns
 * 0 (added or skipped) or MGW_ENOMEM. */
static int add_name(char **v, size_t *n, size_t *bytes, const char *name,
                    size_t len)
{
	if (len == 0 || len > MGW_REPLAY_TOOL_NAME_MAX ||
	    *n >= MGW_REPLAY_TOOLS_MAX || *bytes + len + 1 > MGW_REPLAY_TOOLS_BYTES)
		return 0;
	if (!(v[*n] = malloc(len + 1)))
		return MGW_ENOMEM;
	memcpy(v[*n], name, len);
	v[*n][len] = '\0';
	(*n)++;
	*bytes += len + 1;
	return 0;
}

/* Sorts v and drops duplicates (n updated, bytes too). */
static void sort_unique(char **v, size_t *n, size_t *bytes)
{
	size_t k = 0;

	qsort(v, *n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < *n; i++) {
		if (k && strcmp(v[k - 1], v[i]) == 0) {
			*bytes -= strlen(v[i]) + 1;
			free(v[i]);
			continue;
		}
		v[k++] = v[i];
	}
	*n = k;
}

int mgw_replay_tools_learn(struct mgw_replay_tools *tt, const json_t *result,
                           int merge, uint64_t now_ms)
{
	const char **found = NULL;
	char **v = NULL;
	size_t nf = 0, n = 0, bytes = 0, keep = 0;
	int rc;

	rc = mgw_repin_safe_tools(result, &found, &nf);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&tt->mu);
	if (merge && fresh(tt, now_ms))
		keep = tt->n;
	v = calloc(keep + nf + 1, sizeof(*v));
	rc = v ? 0 : MGW_ENOMEM;
	for (size_t i = 0; rc == 0 && i < keep; i++)
		rc = add_name(v, &n, &bytes, tt->names[i], strlen(tt->names[i]));
	for (size_t i = 0; rc == 0 && i < nf; i++)
		rc = add_name(v, &n, &bytes, found[i], strlen(found[i]));
	if (rc == 0) {
		sort_unique(v, &n, &bytes);
		install(tt, v, n, bytes, now_ms);
		v = NULL;
	}
	pthread_mutex_unlock(&tt->mu);
	if (v)
		names_free(v, n);
	free(found);
	return rc;
}

int mgw_replay_tools_learn_body(struct mgw_replay_tools *tt, const void *body,
                                size_t len, int is_sse, size_t max_depth,
                                int merge, uint64_t now_ms)
{
	json_t *resp = mgw_sse_body_response(body, len, is_sse, max_depth);
	json_t *res = resp ? json_object_get(resp, "result") : NULL;
	int rc = json_is_object(res) ? mgw_replay_tools_learn(tt, res, merge, now_ms)
	                             : MGW_EINVAL;

	json_decref(resp);
	return rc;
}

int mgw_replay_tools_safe(struct mgw_replay_tools *tt, const char *name,
                          size_t len, uint64_t now_ms)
{
	char key[MGW_REPLAY_TOOL_NAME_MAX + 1];
	const char *kp = key;
	int found = 0;

	if (len == 0 || len > MGW_REPLAY_TOOL_NAME_MAX)
		return 0;
	memcpy(key, name, len);
	key[len] = '\0';
	pthread_mutex_lock(&tt->mu);
	if (fresh(tt, now_ms) && tt->n)
		found = bsearch(&kp, tt->names, tt->n, sizeof(*tt->names),
		                cmp_str) != NULL;
	pthread_mutex_unlock(&tt->mu);
	return found;
}

size_t mgw_replay_tools_count(struct mgw_replay_tools *tt, uint64_t now_ms)
{
	size_t n = 0;

	pthread_mutex_lock(&tt->mu);
	if (fresh(tt, now_ms))
		n = tt->n;
	pthread_mutex_unlock(&tt->mu);
	return n;
}

uint64_t mgw_replay_tools_learned_ms(struct mgw_replay_tools *tt)
{
	uint64_t t;

	pthread_mutex_lock(&tt->mu);
	t = tt->learned_ms;
	pthread_mutex_unlock(&tt->mu);
	return t;
}
