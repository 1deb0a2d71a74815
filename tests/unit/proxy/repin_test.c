/* repin_test.c - unit tests for src/proxy/repin.c.
 *
 * The decisions: pin checks by server state, lost-session answers per
 * configuration, replay safety of requests lost in flight, conflicts,
 * tools/list annotations.  Then the state machine itself, run against
 * in-process fake legacy MCP servers (an HTTP server per replica on the
 * test's loop) and a real memory store: one replay for many waiters, a
 * failed replay moves to the next replica, attempts are bounded, a pin
 * someone else set is adopted with no replay (before the replay, and
 * after it by losing the compare-and-set, whose fresh upstream session is
 * then DELETEd), a session deleted meanwhile, and a run whose waiters
 * all left is cancelled. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "conf/config.h"
#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "http/server.h"
#include "mcp/jsonrpc.h"
#include "proxy/pool.h"
#include "proxy/repin.h"
#include "proxy/route.h"
#include "proxy/upstream.h"
#include "session/session.h"
#include "session/store.h"
#include "util/time.h"

static char err[512];

/* ---- decisions ----------------------------------------------------------- */

static const char one_group[] =
	"upstreams:\n"
	"  - name: g\n"
	"    health: {enabled: false}\n"
	"    servers:\n"
	"      - url: http://127.0.0.1:9001\n"
	"      - url: http://127.0.0.1:9002/p\n";

static void test_pin_check(void **state)
{
	struct mgw_config *cfg = mgw_config_load_string("t.yaml", one_group,
	                                                strlen(one_group), err,
	                                                sizeof(err));
	struct mgw_upstreams *ups;
	struct mgw_upstream_group *g;
	uint64_t now = mgw_now_ms();

	(void)state;
	assert_non_null(cfg);
	ups = mgw_upstreams_new(&cfg->serve, err, sizeof(err));
	assert_non_null(ups);
	g = &ups->groups[0];
	assert_ptr_equal(mgw_repin_server_by_url(g, "http://127.0.0.1:9002/p"),
	                 &g->servers[1]);
	assert_null(mgw_repin_server_by_url(g, "http://127.0.0.1:9003"));
	assert_null(mgw_repin_server_by_url(g, NULL));

	assert_int_equal(mgw_repin_pin_check(&g->servers[0], now), -1);
	assert_int_equal(mgw_repin_pin_check(NULL, now), MGW_REPIN_UNPINNED);
	mgw_upstream_set_health(&g->servers[0], 0);
	assert_int_equal(mgw_repin_pin_check(&g->servers[0], now), MGW_REPIN_DEAD);
	mgw_upstream_set_health(&g->servers[0], 1);
	atomic_store(&g->servers[0].ejected_until, now + 60000);
	assert_int_equal(mgw_repin_pin_check(&g->servers[0], now), MGW_REPIN_EJECTED);
	atomic_store(&g->servers[0].ejected_until, 0);
	mgw_upstream_set_draining(&g->servers[1], 1);
	assert_int_equal(mgw_repin_pin_check(&g->servers[1], now), MGW_REPIN_DRAINING);
	assert_string_equal(mgw_repin_reason_name(MGW_REPIN_LOST_400), "lost_400");
	assert_string_equal(mgw_repin_reason_name(MGW_REPIN_REFUSED), "refused");
	mgw_upstreams_free(ups);
	mgw_config_free(cfg);
}

static void test_lost_session(void **state)
{
	struct mgw_lost_session_conf c = {
		.status = {404, 400}, .n_status = 2, .body_contains = "session",
	};
	static const char b1[] = "{\"error\":{\"message\":\"Session not found\"}}";
	static const char b2[] = "Bad Request: Unsupported protocol version";

	(void)state;
	assert_int_equal(mgw_repin_lost_status(&c, 404), MGW_LOST_YES);
	assert_int_equal(mgw_repin_lost_status(&c, 400), MGW_LOST_MAYBE);
	assert_int_equal(mgw_repin_lost_status(&c, 200), MGW_LOST_NO);
	assert_int_equal(mgw_repin_lost_status(&c, 500), MGW_LOST_NO);
	assert_int_equal(mgw_repin_lost_body(&c, b1, strlen(b1)), 1);
	assert_int_equal(mgw_repin_lost_body(&c, b2, strlen(b2)), 0);
	assert_int_equal(mgw_repin_lost_body(&c, "SESSION", 7), 1);
	assert_int_equal(mgw_repin_lost_body(&c, "sessio", 6), 0);
	assert_int_equal(mgw_repin_lost_body(&c, NULL, 0), 0);
	/* an empty needle: every listed status is a lost session */
	c.body_contains = "";
	assert_int_equal(mgw_repin_lost_status(&c, 400), MGW_LOST_YES);
	/* 404 not listed: not lost */
	c.status[0] = 410;
	c.body_contains = "session";
	assert_int_equal(mgw_repin_lost_status(&c, 404), MGW_LOST_NO);
	assert_int_equal(mgw_repin_lost_status(&c, 410), MGW_LOST_MAYBE);
	assert_int_equal(mgw_repin_lost_reason(404), MGW_REPIN_LOST_404);
	assert_int_equal(mgw_repin_lost_reason(400), MGW_REPIN_LOST_400);
	assert_int_equal(mgw_repin_lost_reason(410), MGW_REPIN_LOST_OTHER);
}

static void classify(const char *body, struct mgw_jrpc_msg *m)
{
	assert_int_equal(mgw_jrpc_classify(body, strlen(body), 0, m), 0);
}

static void test_replay_safe(void **state)
{
	struct mgw_session *s = mgw_session_new();
	const char *const safe[] = {"sleep", "echo"};
	struct mgw_jrpc_msg m;

	(void)state;
	assert_non_null(s);
	assert_int_equal(mgw_session_set_safe_tools(s, safe, 2), 0);

	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	         "\"params\":{\"name\":\"sleep\",\"arguments\":{}}}", &m);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_OK_TOOL);
	mgw_jrpc_msg_deinit(&m);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	         "\"params\":{\"name\":\"counter_increment\"}}", &m);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_NO_TOOL);
	assert_int_equal(mgw_repin_replay_safe(&m, NULL, MGW_REPLAY_SAFE), MGW_REPLAY_NO_TOOL);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_ALWAYS), MGW_REPLAY_OK_ROUTE);
	mgw_jrpc_msg_deinit(&m);
	/* a tools/call without a name is not known safe */
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", &m);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_NO_TOOL);
	mgw_jrpc_msg_deinit(&m);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &m);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_OK_METHOD);
	mgw_jrpc_msg_deinit(&m);
	classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}", &m);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_OK_METHOD);
	mgw_jrpc_msg_deinit(&m);
	classify("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}]", &m);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_NO_BATCH);
	mgw_jrpc_msg_deinit(&m);
	/* bodies the gateway's reader refuses but an upstream may accept
	 * (a duplicate member, nesting past the limit) could be a
	 * tools/call: never replayed unless the route says always (numbers
	 * of any size are read since issue 16) */
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	         "\"params\":{\"name\":\"echo\",\"name\":\"counter_increment\"}}", &m);
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_NO_UNREAD);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_ALWAYS), MGW_REPLAY_OK_ROUTE);
	mgw_jrpc_msg_deinit(&m);
	{
		char deep[1024];
		int n = snprintf(deep, sizeof(deep), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		                 "\"method\":\"tools/call\",\"params\":{\"name\":"
		                 "\"echo\",\"arguments\":{\"n\":");

		for (int i = 0; i < 200; i++)
			deep[n++] = '[';
		for (int i = 0; i < 200; i++)
			deep[n++] = ']';
		memcpy(deep + n, "}}}", 4);
		classify(deep, &m);
	}
	assert_int_equal(m.kind, MGW_JRPC_INVALID);
	assert_int_equal(mgw_repin_replay_safe(&m, s, MGW_REPLAY_SAFE), MGW_REPLAY_NO_UNREAD);
	mgw_jrpc_msg_deinit(&m);
	assert_int_equal(mgw_repin_replay_safe(NULL, s, MGW_REPLAY_SAFE), MGW_REPLAY_OK_METHOD);
	mgw_session_unref(s);
}

static void test_conflict(void **state)
{
	struct mgw_session *w = mgw_session_new();

	(void)state;
	w->pin_gen = 3;
	assert_int_equal(mgw_repin_on_conflict(3, w), MGW_REPIN_RETRY);
	assert_int_equal(mgw_repin_on_conflict(2, w), MGW_REPIN_ADOPT);
	mgw_session_unref(w);
}

static void test_safe_tools(void **state)
{
	static const char doc[] =
		"{\"tools\":["
		"{\"name\":\"a\",\"annotations\":{\"readOnlyHint\":true}},"
		"{\"name\":\"b\",\"annotations\":{\"idempotentHint\":true,\"readOnlyHint\":false}},"
		"{\"name\":\"c\",\"annotations\":{\"readOnlyHint\":false}},"
		"{\"name\":\"d\",\"annotations\":{\"readOnlyHint\":\"true\"}},"
		"{\"name\":\"e\"},"
		"{\"annotations\":{\"readOnlyHint\":true}},"
		"{\"name\":\"f\",\"annotations\":{\"destructiveHint\":false}}]}";
	json_t *r = json_loads(doc, 0, NULL);
	const char **names;
	size_t n;

	(void)state;
	assert_non_null(r);
	assert_int_equal(mgw_repin_safe_tools(r, &names, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "a");
	assert_string_equal(names[1], "b");
	free(names);
	json_decref(r);
	r = json_loads("{\"x\":1}", 0, NULL);
	assert_int_equal(mgw_repin_safe_tools(r, &names, &n), MGW_EINVAL);
	json_decref(r);
}

/* ---- the state machine against fake replicas -------------------------------- */

#define N_SRV 3

/* One fake legacy replica. */
struct fake {
	struct mgw_http_server *http;
	char addr[80];
	int index;
	int fail_init;       /* answer initialize 500 */
	int inits, notifies, deletes;
	int minted;
	char last_sid[64];   /* Mcp-Session-Id of the last notification */
	struct fx *fx;
};

struct fx {
	struct event_base *base;
	struct fake srv[N_SRV];
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_routes *routes;
	struct mgw_upool *pool;
	struct mgw_session_store *store;
	struct mgw_session_view *view, *view2;
	struct mgw_repin_counters cnt;
	struct mgw_repin_map map;
	struct mgw_session *rec;   /* the session as the trigger saw it */
	/* on the first notification: re-pin the stored record to this
	 * server, as another gateway would (-1: no) */
	int steal_to;
	int repinned_hook;
};

static void on_fake(struct mgw_http_exchange *x, void *arg);

static void noop_cb(void *arg, int status, struct mgw_session *rec)
{
	(void)arg;
	(void)status;
	mgw_session_unref(rec);
}

/* What another gateway does: moves the stored record to server to. */
static void steal(struct fx *f, int to)
{
	struct mgw_session *d = mgw_session_dup(f->rec);
	char sid[32];

	/* the memory store applies it at the call; the answer is dropped */
	assert_non_null(d);
	snprintf(sid, sizeof(sid), "stolen-%d", to);
	assert_int_equal(mgw_session_repin(d, f->cfg->serve.upstreams[0].servers[to].url,
	                                   sid), 0);
	assert_int_equal(mgw_session_update(f->view2, d, f->rec->version, noop_cb,
	                                    NULL, NULL), 0);
}

static void on_fake(struct mgw_http_exchange *x, void *arg)
{
	struct fake *s = arg;
	size_t len;
	const unsigned char *body = mgw_http_req_body(x, &len);
	struct mgw_headers h;
	char sid[32], res[256];

	mgw_headers_init(&h);
	if (strcmp(mgw_http_method(x), "DELETE") == 0) {
		s->deletes++;
		mgw_http_respond(x, 200, NULL, NULL, NULL, 0);
		return;
	}
	if (len && memmem(body, len, "\"initialize\"", 12)) {
		s->inits++;
		if (s->fail_init) {
			mgw_http_respond(x, 500, NULL, "text/plain", "no", 2);
			return;
		}
		snprintf(sid, sizeof(sid), "up-%d-%d", s->index, ++s->minted);
		mgw_headers_adds(&h, "Mcp-Session-Id", sid);
		snprintf(res, sizeof(res), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
		         "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		         "\"serverInfo\":{\"name\":\"fake\",\"version\":\"1\"}}}");
		mgw_http_respond(x, 200, &h, "application/json", res, strlen(res));
		mgw_headers_deinit(&h);
		return;
	}
	if (len && memmem(body, len, "notifications/initialized", 25)) {
		const char *v = mgw_http_req_header(x, "mcp-session-id");
		const char *pv = mgw_http_req_header(x, "mcp-protocol-version");

		s->notifies++;
		snprintf(s->last_sid, sizeof(s->last_sid), "%s", v ? v : "");
		/* the version the replay negotiated is the one it announces */
		assert_non_null(pv);
		assert_string_equal(pv, "2025-06-18");
		if (s->fx->steal_to != -1) {
			/* -2: to the other of servers 1 and 2 */
			steal(s->fx, s->fx->steal_to >= 0 ? s->fx->steal_to
			                                  : 3 - s->index);
			s->fx->steal_to = -1;
		}
		mgw_http_respond(x, 202, NULL, NULL, NULL, 0);
		return;
	}
	mgw_http_respond(x, 400, NULL, "text/plain", "?", 1);
}

static void on_hook(void *arg, const struct mgw_session *rec,
                    const struct mgw_upstream_server *srv)
{
	struct fx *f = arg;

	(void)rec;
	(void)srv;
	f->repinned_hook++;
}

static void on_created(void *arg, int status, struct mgw_session *rec)
{
	struct fx *f = arg;

	assert_int_equal(status, 0);
	f->rec = rec;
}

static void pump_until(struct fx *f, const int *flag, int want)
{
	uint64_t end = mgw_now_ms() + 5000;

	while (*flag < want && mgw_now_ms() < end)
		event_base_loop(f->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

static void pump_ms(struct fx *f, int ms)
{
	uint64_t end = mgw_now_ms() + (uint64_t)ms;

	while (mgw_now_ms() < end)
		event_base_loop(f->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct mgw_http_limits lim;
	char doc[1024];
	struct mgw_session *d;
	struct mgw_repin_env env;
	int created = 0;
	static const char init_body[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		"{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

	assert_non_null(f);
	f->steal_to = -1;
	f->base = event_base_new();
	mgw_http_limits_default(&lim);
	for (int i = 0; i < N_SRV; i++) {
		f->srv[i].index = i;
		f->srv[i].fx = f;
		f->srv[i].http = mgw_http_server_new(f->base, &lim, on_fake, &f->srv[i]);
		assert_int_equal(mgw_http_server_listen(f->srv[i].http, "127.0.0.1:0",
		                                        NULL, f->srv[i].addr,
		                                        sizeof(f->srv[i].addr)), 0);
	}
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    health: {enabled: false}\n"
	         "    outlier: {consecutive_connect_failures: 0, consecutive_5xx: 0}\n"
	         "    servers:\n"
	         "      - url: http://%s\n"
	         "      - url: http://%s\n"
	         "      - url: http://%s\n"
	         "sessions:\n"
	         "  store: memory\n",
	         f->srv[0].addr, f->srv[1].addr, f->srv[2].addr);
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err, sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	assert_non_null(f->ups);
	f->routes = mgw_routes_new(&f->cfg->serve, f->ups, err, sizeof(err));
	assert_non_null(f->routes);
	f->pool = mgw_upool_new(f->base, f->ups, 1, 42, err, sizeof(err));
	assert_non_null(f->pool);
	f->store = mgw_session_store_new(&f->cfg->serve.sessions, NULL, err,
	                                 sizeof(err));
	assert_non_null(f->store);
	f->view = mgw_session_view_new(f->store, f->base, err, sizeof(err));
	f->view2 = mgw_session_view_new(f->store, f->base, err, sizeof(err));
	assert_non_null(f->view);
	assert_non_null(f->view2);

	/* a session pinned to server 0 */
	d = mgw_session_new();
	assert_int_equal(mgw_session_set_init(d, init_body, strlen(init_body)), 0);
	assert_int_equal(mgw_session_set_pin(d, f->cfg->serve.upstreams[0].servers[0].url,
	                                     "up-0-old"), 0);
	assert_int_equal(mgw_session_set_protocol_version(d, "2025-06-18"), 0);
	assert_int_equal(mgw_session_create(f->view, d, on_created, f, NULL), 0);
	while (!f->rec && created++ < 1000)
		event_base_loop(f->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_non_null(f->rec);

	memset(&env, 0, sizeof(env));
	env.pool = f->pool;
	env.sconf = &f->cfg->serve.sessions;
	env.cnt = &f->cnt;
	env.on_repinned = on_hook;
	env.hook_arg = f;
	assert_int_equal(mgw_repin_map_init(&f->map, &env), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mgw_repin_map_deinit(&f->map);
	pump_ms(f, 20);
	mgw_session_unref(f->rec);
	mgw_session_view_free(f->view);
	mgw_session_view_free(f->view2);
	mgw_session_store_free(f->store);
	mgw_upool_free(f->pool);
	for (int i = 0; i < N_SRV; i++)
		mgw_http_server_free(f->srv[i].http);
	mgw_routes_free(f->routes);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
	event_base_free(f->base);
	free(f);
	return 0;
}

/* One waiting request. */
struct waiter {
	struct mgw_repin_waiter w;
	int done;
	int status;
	struct mgw_session *rec;
	struct mgw_upstream_server *srv;
	int *n_done;
};

static void on_done(void *arg, int status, struct mgw_session *rec,
                    struct mgw_upstream_server *srv)
{
	struct waiter *w = arg;

	w->done++;
	w->status = status;
	w->rec = rec;
	w->srv = srv;
	(*w->n_done)++;
}

static void join(struct fx *f, struct waiter *w, int *n_done, int failed,
                 enum mgw_repin_reason reason, unsigned attempts, int *joined)
{
	struct mgw_repin_params p;

	memset(w, 0, sizeof(*w));
	w->w.cb = on_done;
	w->w.arg = w;
	w->n_done = n_done;
	memset(&p, 0, sizeof(p));
	p.view = f->view;
	p.route = &f->routes->v[0];
	p.rec = f->rec;
	p.failed = failed >= 0 ? &f->ups->groups[0].servers[failed] : NULL;
	p.reason = reason;
	p.target = "/mcp";
	p.max_attempts = attempts;
	assert_int_equal(mgw_repin_join(&f->map, &p, &w->w, joined), 0);
}

static int idx(struct fx *f, const struct mgw_upstream_server *s)
{
	return s ? (int)(s - f->ups->groups[0].servers) : -1;
}

static void test_run_one_replay_for_many(void **state)
{
	struct fx *f = *state;
	struct waiter w[3];
	int n_done = 0, joined, k;

	join(f, &w[0], &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	assert_int_equal(joined, 0);
	assert_int_equal(mgw_repin_in_progress(&f->map, f->view, f->rec->id), 1);
	join(f, &w[1], &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	assert_int_equal(joined, 1);
	join(f, &w[2], &n_done, -1, MGW_REPIN_UNPINNED, 2, &joined);
	assert_int_equal(joined, 1);
	/* never inside the call */
	assert_int_equal(n_done, 0);
	pump_until(f, &n_done, 3);
	assert_int_equal(n_done, 3);
	k = idx(f, w[0].srv);
	assert_true(k == 1 || k == 2);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(w[i].done, 1);
		assert_int_equal(w[i].status, 0);
		assert_ptr_equal(w[i].srv, w[0].srv);
		assert_non_null(w[i].rec);
		assert_string_equal(w[i].rec->pin_url, w[0].srv->conf->url);
		assert_int_equal(w[i].rec->pin_gen, 1);
		assert_string_equal(w[i].rec->id, f->rec->id);
	}
	/* one initialize and one notifications/initialized, in the new
	 * upstream session, and nothing on the failed replica */
	assert_int_equal(f->srv[k].inits, 1);
	assert_int_equal(f->srv[k].notifies, 1);
	assert_string_equal(f->srv[k].last_sid, w[0].rec->upstream_sid);
	assert_int_equal(f->srv[0].inits + f->srv[3 - k].inits, 0);
	assert_int_equal(atomic_load(&f->cnt.replays), 1);
	assert_int_equal(atomic_load(&f->cnt.repinned), 1);
	assert_int_equal(atomic_load(&f->cnt.waited), 2);
	assert_int_equal(atomic_load(&f->cnt.started[MGW_REPIN_REFUSED]), 1);
	assert_int_equal(f->repinned_hook, 1);
	assert_int_equal(mgw_repin_in_progress(&f->map, f->view, f->rec->id), 0);
	for (int i = 0; i < 3; i++)
		mgw_session_unref(w[i].rec);
}

static void test_run_next_replica_after_failure(void **state)
{
	struct fx *f = *state;
	struct waiter w;
	int n_done = 0, joined;

	f->srv[1].fail_init = 1;
	join(f, &w, &n_done, 0, MGW_REPIN_DEAD, 2, &joined);
	pump_until(f, &n_done, 1);
	assert_int_equal(w.status, 0);
	assert_int_equal(idx(f, w.srv), 2);
	assert_int_equal(f->srv[2].inits, 1);
	assert_int_equal(atomic_load(&f->cnt.replays), 1 + f->srv[1].inits);
	assert_int_equal(atomic_load(&f->cnt.replay_failures), f->srv[1].inits);
	mgw_session_unref(w.rec);
}

static void test_run_bounded(void **state)
{
	struct fx *f = *state;
	struct waiter w;
	int n_done = 0, joined;

	f->srv[1].fail_init = 1;
	f->srv[2].fail_init = 1;
	join(f, &w, &n_done, 0, MGW_REPIN_LOST_404, 2, &joined);
	pump_until(f, &n_done, 1);
	assert_int_equal(w.status, MGW_EPROTO);
	assert_null(w.rec);
	assert_int_equal(atomic_load(&f->cnt.replays), 2);
	assert_int_equal(atomic_load(&f->cnt.failed), 1);
	assert_int_equal(f->repinned_hook, 0);
	/* the replica that forgot the session is only a last resort: two
	 * attempts went to the others */
	assert_int_equal(f->srv[0].inits, 0);
}

static void test_run_lost_on_single_replica(void **state)
{
	struct fx *f = *state;
	struct waiter w;
	int n_done = 0, joined;

	/* the others are gone: the replica that answered "lost" (it
	 * restarted) takes the session again */
	mgw_upstream_set_health(&f->ups->groups[0].servers[1], 0);
	mgw_upstream_set_health(&f->ups->groups[0].servers[2], 0);
	join(f, &w, &n_done, 0, MGW_REPIN_LOST_404, 2, &joined);
	pump_until(f, &n_done, 1);
	assert_int_equal(w.status, 0);
	assert_int_equal(idx(f, w.srv), 0);
	assert_int_equal(f->srv[0].inits, 1);
	assert_int_equal(w.rec->pin_gen, 1);
	assert_string_not_equal(w.rec->upstream_sid, "up-0-old");
	mgw_session_unref(w.rec);
}

static void test_run_adopts_before_replay(void **state)
{
	struct fx *f = *state;
	struct waiter w;
	int n_done = 0, joined;

	/* someone re-pinned it to server 2 after our trigger looked */
	steal(f, 2);
	pump_ms(f, 5);
	join(f, &w, &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	pump_until(f, &n_done, 1);
	assert_int_equal(w.status, 0);
	assert_int_equal(idx(f, w.srv), 2);
	assert_string_equal(w.rec->upstream_sid, "stolen-2");
	assert_int_equal(atomic_load(&f->cnt.replays), 0);
	assert_int_equal(atomic_load(&f->cnt.adopted), 1);
	mgw_session_unref(w.rec);
}

static void test_run_conflict_unusable_winner(void **state)
{
	struct fx *f = *state;
	struct waiter w;
	int n_done = 0, joined;

	/* another gateway moves it to server 2 while our replay runs on
	 * server 1, but server 2 is down for us: ours goes on top of the
	 * winner's version */
	mgw_upstream_set_health(&f->ups->groups[0].servers[2], 0);
	f->steal_to = 2;
	join(f, &w, &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	pump_until(f, &n_done, 1);
	assert_int_equal(w.status, 0);
	assert_int_equal(idx(f, w.srv), 1);
	assert_int_equal(w.rec->pin_gen, 2);
	assert_string_equal(w.rec->upstream_sid, f->srv[1].last_sid);
	assert_int_equal(atomic_load(&f->cnt.repinned), 1);
	pump_ms(f, 50);
	assert_int_equal(f->srv[1].deletes, 0);
	mgw_session_unref(w.rec);
}

static void test_run_conflict_adopts_winner(void **state)
{
	struct fx *f = *state;
	struct waiter w;
	int n_done = 0, joined, mine, theirs;

	/* the winner moved it to the other healthy replica: adopt that pin
	 * and end the upstream session our replay made */
	f->steal_to = -2;
	join(f, &w, &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	pump_until(f, &n_done, 1);
	assert_int_equal(w.status, 0);
	mine = f->srv[1].inits ? 1 : 2;
	theirs = 3 - mine;
	assert_int_equal(f->srv[mine].inits, 1);
	assert_int_equal(idx(f, w.srv), theirs);
	assert_int_equal(w.rec->pin_gen, 1);
	assert_string_equal(w.rec->upstream_sid, theirs == 1 ? "stolen-1" : "stolen-2");
	assert_int_equal(atomic_load(&f->cnt.adopted), 1);
	assert_int_equal(atomic_load(&f->cnt.repinned), 0);
	pump_until(f, &f->srv[mine].deletes, 1);
	assert_int_equal(f->srv[mine].deletes, 1);
	assert_int_equal(atomic_load(&f->cnt.upstream_deletes), 1);
	mgw_session_unref(w.rec);
}

static void test_run_cancelled(void **state)
{
	struct fx *f = *state;
	struct waiter w[2];
	int n_done = 0, joined;

	join(f, &w[0], &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	join(f, &w[1], &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	mgw_repin_leave(&w[0].w);
	assert_int_equal(mgw_repin_in_progress(&f->map, f->view, f->rec->id), 1);
	mgw_repin_leave(&w[1].w);
	assert_int_equal(mgw_repin_in_progress(&f->map, f->view, f->rec->id), 0);
	mgw_repin_leave(&w[1].w); /* not waiting: no-op */
	pump_ms(f, 100);
	assert_int_equal(n_done, 0);
	assert_int_equal(f->map.n_runs, 0);
}

static void on_removed(void *arg, int status, struct mgw_session *rec)
{
	int *done = arg;

	assert_int_equal(status, 0);
	mgw_session_unref(rec);
	*done = 1;
}

static void test_run_session_gone(void **state)
{
	struct fx *f = *state;
	struct waiter w;
	int n_done = 0, joined, removed = 0;

	assert_int_equal(mgw_session_remove(f->view2, f->rec->id, f->rec->id_len,
	                                    on_removed, &removed, NULL), 0);
	pump_until(f, &removed, 1);
	join(f, &w, &n_done, 0, MGW_REPIN_REFUSED, 2, &joined);
	pump_until(f, &n_done, 1);
	assert_int_equal(w.status, MGW_ENOTFOUND);
	assert_int_equal(atomic_load(&f->cnt.replays), 0);
	assert_int_equal(atomic_load(&f->cnt.gone), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pin_check),
		cmocka_unit_test(test_lost_session),
		cmocka_unit_test(test_replay_safe),
		cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_safe_tools),
		cmocka_unit_test_setup_teardown(test_run_one_replay_for_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_next_replica_after_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_lost_on_single_replica, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_adopts_before_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_conflict_unusable_winner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_conflict_adopts_winner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_cancelled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_session_gone, setup, teardown),
	};

	mgw_log_set_level(MGW_LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
