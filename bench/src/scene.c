/* scene.c - which cells each scene runs.  The cells follow the field
 * study the bench reproduces (seeds/000): scale-out is its M1 (replicas
 * 1/2/4 x connection mode x era, 200 rps), handles its M2 (the three
 * modern handle designs at 100 rps), pod-kill its M3 (one replica of two
 * killed at 20 s of 60 s, 100 rps); gateway-kill and redis-outage measure
 * what the study left open (the gateway's own failure, the state store's
 * outage).  Every scene adds the gateway path next to the direct one, so
 * each table compares the two under the same conditions.  mrtr, fork and
 * tasks measure the state of the 2026-07-28 revision that is not a
 * session: multi round-trip requestState (where it lives, and whether an
 * old one can be presented twice) and tasks (where their records live,
 * and whether the gateway's task affinity finds them). */
#include "autoconf.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/scene.h"

static const char *const scene_names[MGW_BENCH_SCENE_N] = {
	"scale-out", "handles", "pod-kill", "gateway-kill", "redis-outage",
	"mrtr", "fork", "tasks", "demo", "soak",
};

static const char *const scene_titles[MGW_BENCH_SCENE_N] = {
	"Scale-out: replicas 1, 2 and 4 in both connection modes and both eras",
	"Handle designs: modern counters kept in replica memory, HMAC-signed, "
	"or in Redis",
	"Pod kill: one of two replicas killed mid-run and replaced on its port",
	"Gateway kill: one of two gateways killed mid-run and replaced",
	"Redis outage: redis-server killed mid-run and restarted empty, or a "
	"Sentinel set's master killed and its replica promoted",
	"MRTR: book dialogues with their requestState in replica memory, "
	"sealed or in Redis, one of two replicas killed mid-run",
	"Fork: every booking's last round presented again with its old "
	"requestState (sealed), direct, through the gateway, and through its "
	"single-use guard",
	"Tasks: task records in replica memory or in Redis, one of two "
	"replicas killed mid-run, direct and through the gateway with and "
	"without task affinity",
	"Demo: a legacy fleet of 2, a pod kill, direct vs gateway",
	"Soak: the gateway under steady load for a long run, a replica "
	"killed and replaced every interval",
};

const char *mgw_bench_scene_name(enum mgw_bench_scene s)
{
	return s < MGW_BENCH_SCENE_N ? scene_names[s] : "?";
}

const char *mgw_bench_scene_title(enum mgw_bench_scene s)
{
	return s < MGW_BENCH_SCENE_N ? scene_titles[s] : "?";
}

int mgw_bench_scene_parse(const char *name, enum mgw_bench_scene *out)
{
	for (int i = 0; i < MGW_BENCH_SCENE_N; i++)
		if (strcmp(name, scene_names[i]) == 0) {
			*out = (enum mgw_bench_scene)i;
			return 0;
		}
	return MGW_EINVAL;
}

const char *mgw_bench_path_name(enum mgw_bench_path p)
{
	switch (p) {
	case MGW_BENCH_DIRECT: return "direct";
	case MGW_BENCH_GATEWAY: return "gateway";
	case MGW_BENCH_GATEWAY_HA: return "gateway-ha";
	case MGW_BENCH_EXTERNAL: return "external";
	}
	return "?";
}

const char *mgw_bench_era_name(enum mgw_bench_era e)
{
	return e == MGW_BENCH_LEGACY ? "legacy" : "modern";
}

const char *mgw_bench_conn_name(enum mgw_bench_conn c)
{
	return c == MGW_BENCH_CONN_NEW ? "new" : "reuse";
}

const char *mgw_bench_state_name(enum mgw_bench_state s)
{
	switch (s) {
	case MGW_BENCH_STATE_MEMORY: return "memory";
	case MGW_BENCH_STATE_HMAC: return "hmac";
	case MGW_BENCH_STATE_REDIS: return "redis";
	case MGW_BENCH_STATE_NONE: break;
	}
	return NULL;
}

const char *mgw_bench_store_name(enum mgw_bench_store s)
{
	switch (s) {
	case MGW_BENCH_STORE_MEMORY: return "memory";
	case MGW_BENCH_STORE_SEALED: return "sealed";
	case MGW_BENCH_STORE_REDIS: return "redis";
	case MGW_BENCH_STORE_NONE: break;
	}
	return NULL;
}

const char *mgw_bench_victim_name(enum mgw_bench_victim v)
{
	switch (v) {
	case MGW_BENCH_VICTIM_REPLICA: return "replica";
	case MGW_BENCH_VICTIM_GATEWAY: return "gateway";
	case MGW_BENCH_VICTIM_REDIS: return "redis";
	case MGW_BENCH_VICTIM_NONE: break;
	}
	return NULL;
}

int mgw_bench_scene_kills(enum mgw_bench_scene s)
{
	return s == MGW_BENCH_POD_KILL || s == MGW_BENCH_GATEWAY_KILL ||
	       s == MGW_BENCH_REDIS_OUTAGE || s == MGW_BENCH_DEMO ||
	       s == MGW_BENCH_SOAK || s == MGW_BENCH_MRTR ||
	       s == MGW_BENCH_TASKS;
}

int mgw_bench_scene_stateful(enum mgw_bench_scene s)
{
	return s == MGW_BENCH_MRTR || s == MGW_BENCH_FORK || s == MGW_BENCH_TASKS;
}

/* A dialogue is 4 requests (3 rounds), a task 3 to 4 (the call and its
 * polls), each on a new connection: 50 of them a second is the others'
 * request rate. */
double mgw_bench_scene_rate(enum mgw_bench_scene s)
{
	if (mgw_bench_scene_stateful(s))
		return 50.0;
	return s == MGW_BENCH_SCALE_OUT ? 200.0 : 100.0;
}

double mgw_bench_scene_duration(enum mgw_bench_scene s, int quick)
{
	if (mgw_bench_scene_kills(s))
		return quick ? 6.0 : 60.0;
	return quick ? 4.0 : 30.0;
}

double mgw_bench_scene_kill_at(enum mgw_bench_scene s, int quick)
{
	(void)s;
	return quick ? 2.0 : 20.0;
}

const char *mgw_bench_flow_name(enum mgw_bench_flow f)
{
	switch (f) {
	case MGW_BENCH_FLOW_MRTR: return "mrtr";
	case MGW_BENCH_FLOW_FORK: return "fork";
	case MGW_BENCH_FLOW_TASK: return "task";
	case MGW_BENCH_FLOW_PLAIN: break;
	}
	return NULL;
}

/* What a stateful cell adds to its name: where the state lives, then
 * the gateway's feature ("sealed request state, single-use guard"); a
 * plain cell whose gateway learns the tools' annotations says so. */
static void keep_suffix(const struct mgw_bench_cell *c, char *buf, size_t len)
{
	buf[0] = '\0';
	if (c->flow == MGW_BENCH_FLOW_PLAIN && c->learn_tools) {
		snprintf(buf, len, ", tools learned");
		return;
	}
	if (c->flow == MGW_BENCH_FLOW_PLAIN || c->keep == MGW_BENCH_STORE_NONE)
		return;
	snprintf(buf, len, ", %s %s%s%s", mgw_bench_store_name(c->keep),
	         c->flow == MGW_BENCH_FLOW_TASK ? "tasks" : "request state",
	         c->guard ? ", single-use guard" : "",
	         c->affinity ? ", task affinity" : "");
}

/* The cell's name: era, path (an external path by its given name),
 * a gateway-ha's session store, replicas, then what varies within the
 * scene: the connection mode (scale-out), the handle design, where
 * request states or tasks live. */
void mgw_bench_cell_name(struct mgw_bench_cell *c, const char *ext_name,
                         int show_conn)
{
	char path[64], keep[80], *s;
	size_t i, j;

	if (c->path == MGW_BENCH_EXTERNAL)
		snprintf(path, sizeof(path), "%s", ext_name);
	else if (c->path == MGW_BENCH_GATEWAY_HA && c->store != MGW_BENCH_STORE_NONE)
		snprintf(path, sizeof(path), "gateway-ha (%s%s)",
		         mgw_bench_store_name(c->store),
		         c->sentinel ? ", sentinel" : "");
	else
		snprintf(path, sizeof(path), "%s", mgw_bench_path_name(c->path));
	keep_suffix(c, keep, sizeof(keep));
	/* names are short by construction; a long --external-name is cut */
	if (snprintf(c->name, sizeof(c->name), "%s %s %d replica%s%s%s%s%s%s",
	         mgw_bench_era_name(c->era), path, c->replicas,
	         c->replicas == 1 ? "" : "s",
	         show_conn ? (c->conn == MGW_BENCH_CONN_NEW ? ", new conn"
	                                                    : ", reuse")
	                   : "",
	         c->state != MGW_BENCH_STATE_NONE ? ", " : "",
	         c->state != MGW_BENCH_STATE_NONE ? mgw_bench_state_name(c->state)
	                                          : "",
	         c->state != MGW_BENCH_STATE_NONE ? " handles" : "", keep) >=
	    (int)sizeof(c->name))
		c->name[sizeof(c->name) - 1] = '\0';
	s = c->name;
	for (i = 0, j = 0; s[i] && j + 1 < sizeof(c->slug); i++) {
		unsigned char ch = (unsigned char)s[i];

		if (isalnum(ch))
			c->slug[j++] = (char)tolower(ch);
		else if (j > 0 && c->slug[j - 1] != '-')
			c->slug[j++] = '-';
	}
	while (j > 0 && c->slug[j - 1] == '-')
		j--;
	c->slug[j] = '\0';
}

struct builder {
	struct mgw_bench_cell *cells;
	size_t cap, n;
	int overflow;
	const struct mgw_bench_opts *o;
	enum mgw_bench_scene scene;
	double rate, duration, kill_at;
	int show_conn;
};

static void add(struct builder *b, enum mgw_bench_path path,
                enum mgw_bench_era era, int replicas, enum mgw_bench_conn conn,
                enum mgw_bench_state state, enum mgw_bench_store store,
                enum mgw_bench_victim victim)
{
	struct mgw_bench_cell *c;

	if (b->n >= b->cap) {
		b->overflow = 1;
		return;
	}
	c = &b->cells[b->n++];
	memset(c, 0, sizeof(*c));
	c->scene = b->scene;
	c->path = path;
	c->era = era;
	c->replicas = replicas;
	c->conn = conn;
	c->state = state;
	c->store = store;
	c->victim = victim;
	c->offered_rps = b->rate;
	c->duration_s = b->duration;
	c->kill_at_s = victim != MGW_BENCH_VICTIM_NONE ? b->kill_at : 0;
	if (b->o->users >= 0)
		c->users = b->o->users;
	else if (mgw_bench_scene_kills(b->scene))
		c->users = MGW_BENCH_KILL_USERS;
	mgw_bench_cell_name(c, b->o->external_name ? b->o->external_name : "external",
	          b->show_conn);
}

/* A cell of the stateful scenes: modern, 2 replicas, a new connection
 * per request (the load client's own spread over the replicas direct;
 * the stateless gateway's round robin spreads them too). */
static void add_state(struct builder *b, enum mgw_bench_path path,
                      enum mgw_bench_flow flow, enum mgw_bench_store keep,
                      int guard, int affinity)
{
	struct mgw_bench_cell *c;
	enum mgw_bench_victim v = mgw_bench_scene_kills(b->scene)
	                              ? MGW_BENCH_VICTIM_REPLICA
	                              : MGW_BENCH_VICTIM_NONE;

	add(b, path, MGW_BENCH_MODERN, 2, MGW_BENCH_CONN_NEW,
	    MGW_BENCH_STATE_NONE, MGW_BENCH_STORE_NONE, v);
	if (b->overflow)
		return;
	c = &b->cells[b->n - 1];
	c->flow = flow;
	c->keep = keep;
	c->guard = guard;
	c->affinity = affinity;
	mgw_bench_cell_name(c, "external", 0);
}

/* Memory state is lost whenever a round lands on the other replica, the
 * kill or not; sealed and redis state must survive both. */
static void mrtr(struct builder *b)
{
	const enum mgw_bench_path paths[] = { MGW_BENCH_DIRECT,
		                              MGW_BENCH_GATEWAY };

	for (size_t p = 0; p < 2; p++)
		for (int k = MGW_BENCH_STORE_MEMORY; k <= MGW_BENCH_STORE_REDIS; k++)
			add_state(b, paths[p], MGW_BENCH_FLOW_MRTR,
			          (enum mgw_bench_store)k, 0, 0);
}

/* Sealed state without --single-use: the replicas accept an old state
 * again, and so does a gateway without the guard; the guard refuses it. */
static void fork_scene(struct builder *b)
{
	const enum mgw_bench_store k = MGW_BENCH_STORE_SEALED;

	add_state(b, MGW_BENCH_DIRECT, MGW_BENCH_FLOW_FORK, k, 0, 0);
	add_state(b, MGW_BENCH_GATEWAY, MGW_BENCH_FLOW_FORK, k, 0, 0);
	add_state(b, MGW_BENCH_GATEWAY, MGW_BENCH_FLOW_FORK, k, 1, 0);
}

/* Memory tasks: polled on the other replica, lost, unless the gateway
 * routes polls to the task's owner; then only the killed owner's tasks
 * are.  Redis tasks are the reference: any replica answers. */
static void tasks(struct builder *b)
{
	const enum mgw_bench_store mem = MGW_BENCH_STORE_MEMORY,
	                           red = MGW_BENCH_STORE_REDIS;
	const enum mgw_bench_flow t = MGW_BENCH_FLOW_TASK;

	add_state(b, MGW_BENCH_DIRECT, t, mem, 0, 0);
	add_state(b, MGW_BENCH_GATEWAY, t, mem, 0, 0);
	add_state(b, MGW_BENCH_GATEWAY, t, mem, 0, 1);
	add_state(b, MGW_BENCH_DIRECT, t, red, 0, 0);
	add_state(b, MGW_BENCH_GATEWAY, t, red, 0, 0);
}

static void scale_out(struct builder *b)
{
	static const int reps[] = { 1, 2, 4 };
	const enum mgw_bench_conn conns[] = { MGW_BENCH_CONN_NEW,
		                              MGW_BENCH_CONN_REUSE };

	b->show_conn = 1;
	for (int e = MGW_BENCH_LEGACY; e <= MGW_BENCH_MODERN; e++)
		for (size_t r = 0; r < 3; r++)
			for (size_t k = 0; k < 2; k++)
				add(b, MGW_BENCH_DIRECT, (enum mgw_bench_era)e, reps[r],
				    conns[k], MGW_BENCH_STATE_NONE, MGW_BENCH_STORE_NONE,
				    MGW_BENCH_VICTIM_NONE);
	/* The gateway at the widest fleet, where the direct path loses most */
	for (int e = MGW_BENCH_LEGACY; e <= MGW_BENCH_MODERN; e++)
		for (size_t k = 0; k < 2; k++)
			add(b, MGW_BENCH_GATEWAY, (enum mgw_bench_era)e, 4, conns[k],
			    MGW_BENCH_STATE_NONE,
			    e == MGW_BENCH_LEGACY ? MGW_BENCH_STORE_MEMORY
			                          : MGW_BENCH_STORE_NONE,
			    MGW_BENCH_VICTIM_NONE);
	if (b->o->external)
		for (size_t k = 0; k < 2; k++)
			add(b, MGW_BENCH_EXTERNAL, MGW_BENCH_LEGACY, 4, conns[k],
			    MGW_BENCH_STATE_NONE, MGW_BENCH_STORE_NONE,
			    MGW_BENCH_VICTIM_NONE);
}

static void handles(struct builder *b)
{
	const enum mgw_bench_path paths[] = { MGW_BENCH_DIRECT,
		                              MGW_BENCH_GATEWAY };

	/* A new connection per request spreads a virtual user's calls over
	 * both replicas, as kube-proxy does: what a handle design must
	 * survive.  The stateless gateway spreads them the same way. */
	for (size_t p = 0; p < 2; p++)
		for (int s = MGW_BENCH_STATE_MEMORY; s <= MGW_BENCH_STATE_REDIS; s++)
			add(b, paths[p], MGW_BENCH_MODERN, 2, MGW_BENCH_CONN_NEW,
			    (enum mgw_bench_state)s, MGW_BENCH_STORE_NONE,
			    MGW_BENCH_VICTIM_NONE);
}

static void pod_kill(struct builder *b, int demo)
{
	const enum mgw_bench_conn re = MGW_BENCH_CONN_REUSE;
	const enum mgw_bench_victim v = MGW_BENCH_VICTIM_REPLICA;

	add(b, MGW_BENCH_DIRECT, MGW_BENCH_LEGACY, 2, re, MGW_BENCH_STATE_NONE,
	    MGW_BENCH_STORE_NONE, v);
	add(b, MGW_BENCH_GATEWAY, MGW_BENCH_LEGACY, 2, re, MGW_BENCH_STATE_NONE,
	    MGW_BENCH_STORE_MEMORY, v);
	if (b->o->external)
		add(b, MGW_BENCH_EXTERNAL, MGW_BENCH_LEGACY, 2, re,
		    MGW_BENCH_STATE_NONE, MGW_BENCH_STORE_NONE, v);
	if (demo)
		return;
	add(b, MGW_BENCH_DIRECT, MGW_BENCH_MODERN, 2, re, MGW_BENCH_STATE_NONE,
	    MGW_BENCH_STORE_NONE, v);
	add(b, MGW_BENCH_GATEWAY, MGW_BENCH_MODERN, 2, re, MGW_BENCH_STATE_NONE,
	    MGW_BENCH_STORE_NONE, v);
	/* the same with the gateway's tools_probe and a client that lists
	 * the tools: the read-only echo becomes replayable, so the calls in
	 * flight on the killed replica are sent again (issue 17's target);
	 * the cell above shows the refusal when nothing was learned */
	add(b, MGW_BENCH_GATEWAY, MGW_BENCH_MODERN, 2, re, MGW_BENCH_STATE_NONE,
	    MGW_BENCH_STORE_NONE, v);
	if (!b->overflow) {
		b->cells[b->n - 1].learn_tools = 1;
		mgw_bench_cell_name(&b->cells[b->n - 1], "external", 0);
	}
	for (int s = MGW_BENCH_STATE_MEMORY; s <= MGW_BENCH_STATE_REDIS; s++)
		add(b, MGW_BENCH_DIRECT, MGW_BENCH_MODERN, 2, re,
		    (enum mgw_bench_state)s, MGW_BENCH_STORE_NONE, v);
}

static void gateway_kill(struct builder *b)
{
	const enum mgw_bench_conn re = MGW_BENCH_CONN_REUSE;
	const enum mgw_bench_victim v = MGW_BENCH_VICTIM_GATEWAY;

	/* memory: each gateway keeps its own sessions (the control: what
	 * sharing buys); sealed and redis share them. */
	for (int s = MGW_BENCH_STORE_MEMORY; s <= MGW_BENCH_STORE_REDIS; s++) {
		add(b, MGW_BENCH_GATEWAY_HA, MGW_BENCH_LEGACY, 2, re,
		    MGW_BENCH_STATE_NONE, (enum mgw_bench_store)s, v);
		/* sealed: a DELETE through one gateway must hold on the other,
		 * the killed one's successor included (shared tombstones) */
		if (s == MGW_BENCH_STORE_SEALED && b->n > 0 && !b->overflow)
			b->cells[b->n - 1].delete_after = MGW_BENCH_DELETE_AFTER;
	}
	add(b, MGW_BENCH_GATEWAY_HA, MGW_BENCH_MODERN, 2, re,
	    MGW_BENCH_STATE_NONE, MGW_BENCH_STORE_NONE, v);
}

static void redis_outage(struct builder *b)
{
	const enum mgw_bench_conn re = MGW_BENCH_CONN_REUSE;
	const enum mgw_bench_victim v = MGW_BENCH_VICTIM_REDIS;

	add(b, MGW_BENCH_DIRECT, MGW_BENCH_MODERN, 2, re, MGW_BENCH_STATE_REDIS,
	    MGW_BENCH_STORE_NONE, v);
	/* redis-server has no persistence here: it comes back empty, and
	 * the gateways' write-back puts their sessions back */
	add(b, MGW_BENCH_GATEWAY_HA, MGW_BENCH_LEGACY, 2, re,
	    MGW_BENCH_STATE_NONE, MGW_BENCH_STORE_REDIS, v);
	/* the master of a Sentinel set killed: the replica takes over */
	add(b, MGW_BENCH_GATEWAY_HA, MGW_BENCH_LEGACY, 2, re,
	    MGW_BENCH_STATE_NONE, MGW_BENCH_STORE_REDIS, v);
	if (b->n > 0 && !b->overflow) {
		struct mgw_bench_cell *c = &b->cells[b->n - 1];

		c->sentinel = 1;
		mgw_bench_cell_name(c, "external", 0);
	}
}

int mgw_bench_cell_selected(const struct mgw_bench_cell *c,
                            const char *const *filters, size_t n)
{
	if (n == 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (fnmatch(filters[i], c->slug, 0) == 0 ||
		    fnmatch(filters[i], c->name, 0) == 0)
			return 1;
	return 0;
}

int mgw_bench_scene_cells(enum mgw_bench_scene s,
                          const struct mgw_bench_opts *o,
                          struct mgw_bench_cell *cells, size_t cap)
{
	struct builder b;
	size_t k = 0;

	memset(&b, 0, sizeof(b));
	b.cells = cells;
	b.cap = cap;
	b.o = o;
	b.scene = s;
	b.rate = o->rate > 0 ? o->rate : mgw_bench_scene_rate(s);
	b.duration = o->duration_s > 0 ? o->duration_s
	                               : mgw_bench_scene_duration(s, o->quick);
	b.kill_at = o->kill_at_s > 0 ? o->kill_at_s
	                             : mgw_bench_scene_kill_at(s, o->quick);
	switch (s) {
	case MGW_BENCH_SCALE_OUT: scale_out(&b); break;
	case MGW_BENCH_HANDLES: handles(&b); break;
	case MGW_BENCH_POD_KILL: pod_kill(&b, 0); break;
	case MGW_BENCH_GATEWAY_KILL: gateway_kill(&b); break;
	case MGW_BENCH_REDIS_OUTAGE: redis_outage(&b); break;
	case MGW_BENCH_MRTR: mrtr(&b); break;
	case MGW_BENCH_FORK: fork_scene(&b); break;
	case MGW_BENCH_TASKS: tasks(&b); break;
	case MGW_BENCH_DEMO: pod_kill(&b, 1); break;
	case MGW_BENCH_SOAK: break; /* one cell, built by soak.c */
	case MGW_BENCH_SCENE_N: return MGW_EINVAL;
	}
	if (b.overflow)
		return MGW_ELIMIT;
	for (size_t i = 0; i < b.n; i++)
		if (mgw_bench_cell_selected(&cells[i], o->filters, o->n_filters))
			cells[k++] = cells[i];
	return (int)k;
}
