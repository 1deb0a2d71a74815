/* redis_store_test.c - unit tests for modules/redis_store/redis_store.c
 * against a real redis-server started here on an ephemeral loopback port.
 * Two store instances in one process stand for two gateways (each with
 * its own local cache and its own injected clocks); every wait is bounded
 * in time.  The last tests kill redis-server by PID and restart it on the
 * same port. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "conf/config.h"
#include "core/errors.h"
#include "core/log.h"
#include "modules/redis_store/redis_store.h"
#include "session/session.h"
#include "session/store.h"
#include "../redisd.h"
#include "../session/harness.h"

#define WAIT_S 10.0
#define BODY "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}"
#define INITIALIZED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"

static struct redisd rd;

/* One "gateway": a store with its own clocks and one view on the loop. */
struct gw {
	struct th_clock clk;
	struct mgw_session_store *st;
	struct mgw_session_view *v;
};

struct fx {
	struct event_base *base;
	struct event *tick;     /* keeps EVLOOP_ONCE from blocking long */
	struct mgw_config *cfg;
	struct gw a, b;
};

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs the loop until *flag is non-zero, WAIT_S at most. */
static void pump(struct fx *f, const int *flag)
{
	double end = now_s() + WAIT_S;

	while (!*flag && now_s() < end)
		event_base_loop(f->base, EVLOOP_ONCE);
	assert_true(*flag);
}

/* Runs the loop for about secs (for reconnect attempts to happen). */
static void pump_for(struct fx *f, double secs)
{
	double end = now_s() + secs;

	while (now_s() < end)
		event_base_loop(f->base, EVLOOP_ONCE);
}

static void gw_open(struct fx *f, struct gw *g)
{
	struct mgw_session_env env;
	char err[256] = "";

	th_clock_init(&g->clk);
	env = th_env(&g->clk);
	g->st = mgw_session_store_new(&f->cfg->serve.sessions, &env, err,
	                              sizeof(err));
	if (!g->st)
		fail_msg("store: %s", err);
	g->v = mgw_session_view_new(g->st, f->base, err, sizeof(err));
	if (!g->v)
		fail_msg("view: %s", err);
}

static void gw_close(struct gw *g)
{
	mgw_session_view_free(g->v);
	mgw_session_store_free(g->st);
	g->v = NULL;
	g->st = NULL;
}

static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct timeval tv = {0, 5000};

	assert_non_null(f);
	f->base = event_base_new();
	assert_non_null(f->base);
	f->tick = event_new(f->base, -1, EV_PERSIST, on_tick, NULL);
	event_add(f->tick, &tv);
	f->cfg = th_config();
	f->cfg->serve.sessions.store = MGW_SESSION_STORE_REDIS;
	free(f->cfg->serve.sessions.redis.url);
	f->cfg->serve.sessions.redis.url = strdup(rd.url);
	f->cfg->serve.sessions.redis.timeout = 1.0;
	return f;
}

static void fx_open(struct fx *f)
{
	gw_open(f, &f->a);
	gw_open(f, &f->b);
}

static void fx_free(struct fx *f)
{
	if (f->a.st)
		gw_close(&f->a);
	if (f->b.st)
		gw_close(&f->b);
	mgw_config_free(f->cfg);
	event_free(f->tick);
	event_base_free(f->base);
	free(f);
}

/* ---- running operations ---- */

static void check_started(int rc, struct th_result *r)
{
	assert_int_equal(rc, 0);
	/* Never inside the call. */
	assert_int_equal(r->calls, 0);
}

static int run_create(struct fx *f, struct gw *g, struct mgw_session *draft,
                      struct mgw_session **out)
{
	struct th_result r = {0};

	check_started(mgw_session_create(g->v, draft, th_record, &r, NULL), &r);
	pump(f, &r.calls);
	assert_int_equal(r.calls, 1);
	if (out)
		*out = r.rec;
	else
		mgw_session_unref(r.rec);
	return r.status;
}

static int run_lookup(struct fx *f, struct gw *g, const char *id,
                      const unsigned char *principal, struct mgw_session **out)
{
	struct th_result r = {0};

	check_started(mgw_session_lookup(g->v, id, strlen(id), principal,
	                                 th_record, &r, NULL), &r);
	pump(f, &r.calls);
	assert_int_equal(r.calls, 1);
	if (out)
		*out = r.rec;
	else
		mgw_session_unref(r.rec);
	return r.status;
}

static int run_update(struct fx *f, struct gw *g, struct mgw_session *rec,
                      uint64_t expect, struct mgw_session **out)
{
	struct th_result r = {0};

	check_started(mgw_session_update(g->v, rec, expect, th_record, &r, NULL),
	              &r);
	pump(f, &r.calls);
	assert_int_equal(r.calls, 1);
	if (out)
		*out = r.rec;
	else
		mgw_session_unref(r.rec);
	return r.status;
}

static int run_remove(struct fx *f, struct gw *g, const char *id)
{
	struct th_result r = {0};

	check_started(mgw_session_remove(g->v, id, strlen(id), th_record, &r,
	                                 NULL), &r);
	pump(f, &r.calls);
	assert_int_equal(r.calls, 1);
	assert_null(r.rec);
	return r.status;
}

/* A fresh session created on g; returns it (a reference). */
static struct mgw_session *make_session(struct fx *f, struct gw *g,
                                        const char *url, const char *sid)
{
	struct mgw_session *rec = NULL;

	assert_int_equal(run_create(f, g, th_draft(BODY, url, sid), &rec), 0);
	assert_non_null(rec);
	return rec;
}

/* A re-pinned copy of rec. */
static struct mgw_session *repinned(const struct mgw_session *rec,
                                    const char *url, const char *sid)
{
	struct mgw_session *c = mgw_session_dup(rec);

	assert_non_null(c);
	assert_int_equal(mgw_session_repin(c, url, sid), 0);
	return c;
}

static struct mgw_session_stats stats_of(struct gw *g)
{
	struct mgw_session_stats s;

	mgw_session_store_stats(g->st, &s);
	return s;
}

/* Makes every cache entry of g older than cache_ttl. */
static void age_cache(struct fx *f, struct gw *g)
{
	g->clk.mono_ms += (uint64_t)(f->cfg->serve.sessions.redis.cache_ttl *
	                             1000.0) + 1;
}

/* ---- fixtures ---- */

static int group_setup(void **state)
{
	(void)state;
	mgw_log_set_level(MGW_LOG_ERROR);
	assert_int_equal(mgw_redis_store_register(), 0);
	return redisd_start(&rd, 0) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	redisd_kill(&rd);
	return 0;
}

static int setup(void **state)
{
	redisReply *r;

	if (!rd.pid && redisd_start(&rd, rd.port) != 0)
		return -1;
	r = redisd_cmd(&rd, "FLUSHALL");
	if (r)
		freeReplyObject(r);
	*state = fx_new();
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* ---- tests ---- */

/* Registration: `sessions.store: redis` builds this store; registering
 * again is harmless. */
static void test_registered(void **state)
{
	struct fx *f = *state;

	assert_int_equal(mgw_redis_store_register(), 0);
	fx_open(f);
	assert_string_equal(stats_of(&f->a).store, "redis");
	assert_int_equal(mgw_session_store_max_id(f->a.st),
	                 2 * MGW_SESSION_ID_HEX_BYTES);
}

/* A session created on gateway A is found on gateway B with the same
 * pin and every field, the initialize body byte for byte (NUL and 0xff
 * included), and it lives in Redis under the configured prefix. */
static void test_shared_between_gateways(void **state)
{
	static const unsigned char body[] = "{\"init\":\"\x00\xff\x01 \\u0000\"}";
	struct fx *f = *state;
	struct mgw_session *d = mgw_session_new(), *a = NULL, *b = NULL;
	static const char *const tools[] = {"read_file", "add"};
	unsigned char who[MGW_SESSION_DIGEST_LEN];

	free(f->cfg->serve.sessions.redis.key_prefix);
	f->cfg->serve.sessions.redis.key_prefix = strdup("test:gw:");
	fx_open(f);
	assert_int_equal(mgw_session_set_init(d, body, sizeof(body) - 1), 0);
	assert_int_equal(mgw_session_set_pin(d, "http://10.0.0.1:8080",
	                                     "up-sid-1"), 0);
	assert_int_equal(mgw_session_set_protocol_version(d, "2025-11-25"), 0);
	assert_int_equal(mgw_session_add_init_header(d, "MCP-Protocol-Version",
	                                             "2025-11-25"), 0);
	assert_int_equal(mgw_session_add_init_header(d, "X-Trace", "a b\tc"), 0);
	mgw_session_principal_digest("Bearer t", 8, who);
	mgw_session_set_principal(d, who);
	assert_int_equal(run_create(f, &f->a, d, &a), 0);
	assert_int_equal(a->id_len, 32);
	assert_int_equal(a->version, 0);
	assert_int_equal(redisd_int(&rd, "EXISTS test:gw:%s", a->id), 1);
	assert_int_equal(redisd_int(&rd, "EXISTS mcpgw:session:%s", a->id), 0);

	/* The late notifications/initialized and a tools/list arrive. */
	{
		struct mgw_session *c = mgw_session_dup(a), *out = NULL;

		assert_int_equal(mgw_session_set_initialized(c, INITIALIZED,
		                                             strlen(INITIALIZED)), 0);
		assert_int_equal(mgw_session_set_safe_tools(c, tools, 2), 0);
		assert_int_equal(run_update(f, &f->a, c, 0, &out), 0);
		assert_int_equal(out->version, 1);
		mgw_session_unref(out);
	}

	assert_int_equal(run_lookup(f, &f->b, a->id, who, &b), 0);
	assert_string_equal(b->id, a->id);
	assert_int_equal(b->version, 1);
	assert_int_equal(b->init_len, sizeof(body) - 1);
	assert_memory_equal(b->init_body, body, sizeof(body) - 1);
	assert_string_equal(b->pin_url, "http://10.0.0.1:8080");
	assert_string_equal(b->upstream_sid, "up-sid-1");
	assert_int_equal(b->pin_gen, 0);
	assert_string_equal(b->protocol_version, "2025-11-25");
	assert_int_equal(b->n_init_headers, 2);
	assert_string_equal(b->init_headers[1].name, "X-Trace");
	assert_string_equal(b->init_headers[1].value, "a b\tc");
	assert_int_equal(b->initialized_len, strlen(INITIALIZED));
	assert_memory_equal(b->initialized_body, INITIALIZED, strlen(INITIALIZED));
	assert_int_equal(b->tools_known, 1);
	assert_true(mgw_session_tool_replay_safe(b, "add", 3));
	assert_false(mgw_session_tool_replay_safe(b, "write", 5));
	assert_int_equal(b->bound, 1);
	assert_memory_equal(b->principal, who, sizeof(who));
	assert_int_equal(b->created_s, a->created_s);
	assert_int_equal(b->expires_s, a->expires_s);
	assert_int_equal(mgw_session_pin_tag(b), mgw_session_pin_tag(a));
	assert_int_equal(stats_of(&f->b).cache_misses, 1);
	mgw_session_unref(a);
	mgw_session_unref(b);
}

/* A replayed header with an empty value (a client sent
 * "MCP-Protocol-Version:" with nothing after it) survives the round trip
 * through Redis: it is written with length 0, which used to read back as
 * "no value" and made the whole record unreadable (404 on gateway B). */
static void test_empty_header_value(void **state)
{
	struct fx *f = *state;
	struct mgw_session *d = mgw_session_new(), *a = NULL, *b = NULL;

	fx_open(f);
	assert_int_equal(mgw_session_set_init(d, "{}", 2), 0);
	assert_int_equal(mgw_session_set_pin(d, "http://10.0.0.1:8080", NULL), 0);
	assert_int_equal(mgw_session_add_init_header(d, "MCP-Protocol-Version",
	                                             ""), 0);
	assert_int_equal(run_create(f, &f->a, d, &a), 0);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, &b), 0);
	assert_int_equal(b->n_init_headers, 1);
	assert_string_equal(b->init_headers[0].name, "MCP-Protocol-Version");
	assert_string_equal(b->init_headers[0].value, "");
	mgw_session_unref(a);
	mgw_session_unref(b);
}

/* An update on A reaches B once B's cached copy is older than cache_ttl
 * (B's clock is moved, not the test's). */
static void test_update_visible_after_cache_ttl(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a, *b = NULL, *out = NULL;

	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, &b), 0);
	assert_string_equal(b->pin_url, "http://r1");
	mgw_session_unref(b);

	assert_int_equal(run_update(f, &f->a, repinned(a, "http://r2", "s2"), 0,
	                            &out), 0);
	assert_int_equal(out->version, 1);
	assert_int_equal(out->pin_gen, 1);
	mgw_session_unref(out);

	/* Within cache_ttl B answers from its cache: the old pin. */
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, &b), 0);
	assert_string_equal(b->pin_url, "http://r1");
	mgw_session_unref(b);
	age_cache(f, &f->b);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, &b), 0);
	assert_string_equal(b->pin_url, "http://r2");
	assert_string_equal(b->upstream_sid, "s2");
	assert_int_equal(b->version, 1);
	mgw_session_unref(b);
	mgw_session_unref(a);
}

/* Two gateways re-pin the same version at the same time: Redis runs one
 * script after the other, one wins, the other gets MGW_ECONFLICT with the
 * winner's record, and both (and a third gateway) converge on one pin. */
static void test_concurrent_cas(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a, *b = NULL, *c = NULL;
	struct th_result ra = {0}, rb = {0};
	struct th_result *win, *lose;
	struct gw g3;

	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, &b), 0);
	assert_int_equal(b->version, 0);
	assert_int_equal(mgw_session_update(f->a.v, repinned(a, "http://rA", "sA"),
	                                    0, th_record, &ra, NULL), 0);
	assert_int_equal(mgw_session_update(f->b.v, repinned(b, "http://rB", "sB"),
	                                    0, th_record, &rb, NULL), 0);
	assert_int_equal(ra.calls + rb.calls, 0);
	for (double end = now_s() + WAIT_S; ra.calls + rb.calls < 2 &&
	     now_s() < end;)
		event_base_loop(f->base, EVLOOP_ONCE);
	assert_int_equal(ra.calls, 1);
	assert_int_equal(rb.calls, 1);
	win = ra.status == 0 ? &ra : &rb;
	lose = ra.status == 0 ? &rb : &ra;
	assert_int_equal(win->status, 0);
	assert_int_equal(lose->status, MGW_ECONFLICT);
	assert_non_null(lose->rec);
	assert_int_equal(win->rec->version, 1);
	assert_int_equal(lose->rec->version, 1);
	assert_string_equal(lose->rec->pin_url, win->rec->pin_url);
	assert_string_equal(lose->rec->upstream_sid, win->rec->upstream_sid);

	/* A third gateway sees the winner. */
	gw_open(f, &g3);
	assert_int_equal(run_lookup(f, &g3, a->id, NULL, &c), 0);
	assert_string_equal(c->pin_url, win->rec->pin_url);
	assert_int_equal(c->version, 1);
	mgw_session_unref(c);
	/* And the loser's own cache holds the winner now (no stale pin). */
	assert_int_equal(run_lookup(f, lose == &ra ? &f->a : &f->b, a->id, NULL,
	                            &c), 0);
	assert_string_equal(c->pin_url, win->rec->pin_url);
	mgw_session_unref(c);
	assert_true(stats_of(lose == &ra ? &f->a : &f->b).conflicts == 1);
	gw_close(&g3);
	mgw_session_unref(ra.rec);
	mgw_session_unref(rb.rec);
	mgw_session_unref(a);
	mgw_session_unref(b);
}

/* DELETE removes the key and the local entry; a second DELETE and later
 * lookups answer not found; another gateway notices after cache_ttl. */
static void test_delete(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a, *b = NULL;

	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, &b), 0);
	mgw_session_unref(b);
	assert_int_equal(run_remove(f, &f->a, a->id), 0);
	assert_int_equal(redisd_int(&rd, "EXISTS mcpgw:session:%s", a->id), 0);
	assert_int_equal(run_lookup(f, &f->a, a->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(run_remove(f, &f->a, a->id), MGW_ENOTFOUND);
	assert_int_equal(stats_of(&f->a).deleted, 1);
	age_cache(f, &f->b);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), MGW_ENOTFOUND);
	/* An update of a deleted session: not found, nothing recreated. */
	assert_int_equal(run_update(f, &f->b, repinned(a, "http://r2", "s2"), 0,
	                            NULL), MGW_ENOTFOUND);
	assert_int_equal(redisd_int(&rd, "EXISTS mcpgw:session:%s", a->id), 0);
	mgw_session_unref(a);
}

/* Expiry is Redis' TTL: idle_timeout (refreshed by every fetch), never
 * past the lifetime; a key whose TTL ran out is gone for every gateway;
 * a lifetime that ended is not found (and counted expired). */
static void test_ttl_expiry(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a, *b = NULL;
	long long ttl;

	f->cfg->serve.sessions.idle_timeout = 60;
	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	ttl = redisd_int(&rd, "PTTL mcpgw:session:%s", a->id);
	assert_true(ttl > 50000 && ttl <= 60000);

	/* A fetch refreshes the TTL (idle expiry counts from the last use). */
	assert_int_equal(redisd_int(&rd, "PEXPIRE mcpgw:session:%s 5000", a->id),
	                 1);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, &b), 0);
	mgw_session_unref(b);
	ttl = redisd_int(&rd, "PTTL mcpgw:session:%s", a->id);
	assert_true(ttl > 50000 && ttl <= 60000);

	/* The key lost while B's cache still holds the session (Redis
	 * restarted empty, flushed): B puts it back from its cache. */
	assert_int_equal(redisd_int(&rd, "PEXPIRE mcpgw:session:%s 1", a->id), 1);
	for (int i = 0; i < 200 &&
	     redisd_int(&rd, "EXISTS mcpgw:session:%s", a->id) != 0; i++)
		usleep(10000);
	age_cache(f, &f->b);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), 0);
	assert_int_equal(redisd_int(&rd, "EXISTS mcpgw:session:%s", a->id), 1);
	assert_int_equal(stats_of(&f->b).restored_lookup, 1);

	/* The TTL runs out (made short here) on a session unused for the
	 * idle timeout (no cache holds it either): gone. */
	assert_int_equal(redisd_int(&rd, "PEXPIRE mcpgw:session:%s 1", a->id), 1);
	for (int i = 0; i < 200 &&
	     redisd_int(&rd, "EXISTS mcpgw:session:%s", a->id) != 0; i++)
		usleep(10000);
	f->b.clk.mono_ms += 60001;
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), MGW_ENOTFOUND);
	mgw_session_unref(a);

	/* Lifetime: the TTL never reaches past it... */
	f->cfg->serve.sessions.max_lifetime = 20;
	a = make_session(f, &f->a, "http://r1", "s1");
	ttl = redisd_int(&rd, "PTTL mcpgw:session:%s", a->id);
	assert_true(ttl > 0 && ttl <= 20000);
	/* ...and once it ended the session is not found (from the cache of
	 * A as from Redis for B, which deletes the key). */
	f->a.clk.wall_s += 21;
	f->b.clk.wall_s += 21;
	assert_int_equal(run_lookup(f, &f->a, a->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(redisd_int(&rd, "EXISTS mcpgw:session:%s", a->id), 0);
	assert_true(stats_of(&f->a).expired >= 1);
	assert_true(stats_of(&f->b).expired >= 1);
	mgw_session_unref(a);
}

/* A cache hit costs no Redis command at all (counted by Redis itself and
 * by the store); a miss costs exactly one. */
static void test_hit_makes_no_round_trip(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a;
	long long evals, dels;
	uint64_t rt, hits;

	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	evals = redisd_calls(&rd, "eval");
	dels = redisd_calls(&rd, "del");
	rt = stats_of(&f->a).round_trips;
	hits = stats_of(&f->a).cache_hits;
	assert_true(evals >= 1);
	for (int i = 0; i < 20; i++)
		assert_int_equal(run_lookup(f, &f->a, a->id, NULL, NULL), 0);
	assert_int_equal(redisd_calls(&rd, "eval"), evals);
	assert_int_equal(redisd_calls(&rd, "del"), dels);
	assert_int_equal(stats_of(&f->a).round_trips, rt);
	assert_int_equal(stats_of(&f->a).cache_hits, hits + 20);

	/* Stale: one fetch, then hits again. */
	age_cache(f, &f->a);
	assert_int_equal(run_lookup(f, &f->a, a->id, NULL, NULL), 0);
	assert_int_equal(run_lookup(f, &f->a, a->id, NULL, NULL), 0);
	assert_int_equal(redisd_calls(&rd, "eval"), evals + 1);
	assert_int_equal(stats_of(&f->a).round_trips, rt + 1);
	assert_int_equal(stats_of(&f->a).cache_misses, 1);

	/* An uncached miss on B: one round trip. */
	rt = stats_of(&f->b).round_trips;
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), 0);
	assert_int_equal(stats_of(&f->b).round_trips, rt + 1);
	assert_int_equal(redisd_calls(&rd, "eval"), evals + 2);
	mgw_session_unref(a);
}

/* cache_ttl 0: every lookup asks Redis (and still exactly once). */
static void test_cache_disabled(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a;
	long long evals;

	f->cfg->serve.sessions.redis.cache_ttl = 0;
	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	evals = redisd_calls(&rd, "eval");
	for (int i = 0; i < 3; i++)
		assert_int_equal(run_lookup(f, &f->a, a->id, NULL, NULL), 0);
	assert_int_equal(redisd_calls(&rd, "eval"), evals + 3);
	mgw_session_unref(a);
}

/* bind_principal: another principal is answered not found (from Redis and
 * from the cache alike); junk ids never reach Redis. */
static void test_principal_and_junk(void **state)
{
	struct fx *f = *state;
	struct mgw_session *d, *a = NULL;
	unsigned char p1[MGW_SESSION_DIGEST_LEN], p2[MGW_SESSION_DIGEST_LEN];
	long long evals;
	char upper[33];

	f->cfg->serve.sessions.bind_principal = 1;
	fx_open(f);
	mgw_session_principal_digest("Bearer one", 10, p1);
	mgw_session_principal_digest("Bearer two", 10, p2);
	d = th_draft(BODY, "http://r1", "s1");
	mgw_session_set_principal(d, p1);
	assert_int_equal(run_create(f, &f->a, d, &a), 0);
	assert_int_equal(run_lookup(f, &f->b, a->id, p2, NULL), MGW_ENOTFOUND);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(run_lookup(f, &f->b, a->id, p1, NULL), 0);
	assert_int_equal(run_lookup(f, &f->a, a->id, p2, NULL), MGW_ENOTFOUND);
	assert_true(stats_of(&f->b).rejected_principal >= 2);

	evals = redisd_calls(&rd, "eval");
	for (size_t i = 0; i < 32; i++)
		upper[i] = (char)(a->id[i] >= 'a' ? a->id[i] - 'a' + 'A' : a->id[i]);
	upper[32] = '\0';
	assert_int_equal(run_lookup(f, &f->b, "0123", NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(run_lookup(f, &f->b, upper, NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(run_lookup(f, &f->b, "*", NULL, NULL), MGW_ENOTFOUND);
	assert_int_equal(run_remove(f, &f->b, "*"), MGW_ENOTFOUND);
	assert_int_equal(redisd_calls(&rd, "eval"), evals);
	mgw_session_unref(a);
}

/* What Redis holds is not trusted blindly: a record that does not parse
 * is answered not found, and other data under the key is no crash. */
static void test_corrupt_record(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a;
	redisReply *r;

	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	r = redisd_cmd(&rd, "HSET mcpgw:session:%s d %b", a->id, "\x01\x00", 2);
	assert_non_null(r);
	freeReplyObject(r);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), MGW_ENOTFOUND);
	r = redisd_cmd(&rd, "HSET mcpgw:session:%s v notanumber", a->id);
	freeReplyObject(r);
	age_cache(f, &f->b);
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), MGW_ENOTFOUND);
	r = redisd_cmd(&rd, "DEL mcpgw:session:%s", a->id);
	freeReplyObject(r);
	r = redisd_cmd(&rd, "SET mcpgw:session:%s plain", a->id);
	freeReplyObject(r);
	age_cache(f, &f->b);
	/* WRONGTYPE: an error reply, no cached copy: MGW_EIO. */
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), MGW_EIO);
	mgw_session_unref(a);
}

/* A cancelled operation never calls back, even when its reply arrives;
 * a view freed with one still out completes it quietly. */
static void test_cancel(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a;
	struct th_result r = {0};
	struct mgw_session_op *op = NULL;

	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	assert_int_equal(mgw_session_lookup(f->b.v, a->id, a->id_len, NULL,
	                                    th_record, &r, &op), 0);
	assert_non_null(op);
	mgw_session_op_cancel(op);
	pump_for(f, 0.2);
	assert_int_equal(r.calls, 0);
	/* Its reply still filled B's cache: a hit now. */
	assert_int_equal(run_lookup(f, &f->b, a->id, NULL, NULL), 0);

	assert_int_equal(mgw_session_lookup(f->a.v, a->id, a->id_len, NULL,
	                                    th_record, &r, &op), 0);
	age_cache(f, &f->b);
	assert_int_equal(mgw_session_lookup(f->b.v, a->id, a->id_len, NULL,
	                                    th_record, &r, &op), 0);
	mgw_session_op_cancel(op);
	gw_close(&f->b);        /* the fetch is still out */
	pump(f, &r.calls);      /* A's lookup (a hit) */
	assert_int_equal(r.calls, 1);
	mgw_session_unref(r.rec);
	mgw_session_unref(a);
}

/* A server that accepts connections but never answers: the operation
 * fails within the timeout (no hang), and the connection is dropped and
 * retried. */
static void test_timeout(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	char url[64];
	struct th_result r = {0};
	struct mgw_session_stats s;

	assert_true(lfd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 16), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%u",
	         (unsigned)ntohs(sa.sin_port));
	free(f->cfg->serve.sessions.redis.url);
	f->cfg->serve.sessions.redis.url = strdup(url);
	f->cfg->serve.sessions.redis.timeout = 0.2;
	fx_open(f);
	check_started(mgw_session_lookup(f->a.v, "0123456789abcdef0123456789abcdef",
	                                 32, NULL, th_record, &r, NULL), &r);
	pump(f, &r.calls);
	assert_int_equal(r.status, MGW_EIO);
	s = stats_of(&f->a);
	assert_true(s.errors >= 1);
	assert_int_equal(s.unreachable, 1);
	assert_int_equal(s.outages, 1);
	/* Down: the next operations fail at once, nothing queued. */
	memset(&r, 0, sizeof(r));
	check_started(mgw_session_create(f->a.v, th_draft(BODY, "http://r", "s"),
	                                 th_record, &r, NULL), &r);
	pump(f, &r.calls);
	assert_int_equal(r.status, MGW_EIO);
	close(lfd);
}

/* Reads the file captured as stderr and counts lines holding needle. */
static int count_lines(const char *path, const char *needle)
{
	FILE *fp = fopen(path, "r");
	char line[1024];
	int n = 0;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, needle))
			n++;
	fclose(fp);
	return n;
}

/* Redis dies: cached sessions keep working (also past cache_ttl), an
 * uncached lookup fails at once, creates are refused, updates stay local;
 * the outage is logged once and counted.  Redis comes back on the same
 * port: the store reconnects by itself and works again. */
static void test_outage_and_recovery(void **state)
{
	struct fx *f = *state;
	struct mgw_session *s1, *s2, *got = NULL, *out = NULL;
	struct mgw_session_stats st;
	char logpath[] = "/tmp/mgw-redis-store-test-XXXXXX";
	int logfd = mkstemp(logpath), saved = dup(2);
	uint16_t port = rd.port;

	assert_true(logfd >= 0 && saved >= 0);
	fx_open(f);
	s1 = make_session(f, &f->a, "http://r1", "s1");   /* cached on A */
	s2 = make_session(f, &f->b, "http://r1", "s2");   /* not on A */
	mgw_log_set_level(MGW_LOG_INFO);
	fflush(stderr);
	dup2(logfd, 2);

	redisd_kill(&rd);
	/* Fresh in A's cache: no Redis needed at all. */
	assert_int_equal(run_lookup(f, &f->a, s1->id, NULL, NULL), 0);
	/* Past cache_ttl: Redis cannot be asked, the cache answers. */
	age_cache(f, &f->a);
	assert_int_equal(run_lookup(f, &f->a, s1->id, NULL, &got), 0);
	assert_string_equal(got->pin_url, "http://r1");
	mgw_session_unref(got);
	/* Not cached: an error, not a hang. */
	assert_int_equal(run_lookup(f, &f->a, s2->id, NULL, NULL), MGW_EIO);
	assert_int_equal(run_create(f, &f->a, th_draft(BODY, "http://r", "s"),
	                            NULL), MGW_EIO);
	assert_int_equal(run_remove(f, &f->a, s1->id), MGW_EIO);
	/* A re-pin during the outage: kept locally, served from the cache. */
	assert_int_equal(run_update(f, &f->a, repinned(s1, "http://r9", "s9"), 0,
	                            &out), 0);
	assert_int_equal(out->version, 1);
	mgw_session_unref(out);
	assert_int_equal(run_lookup(f, &f->a, s1->id, NULL, &got), 0);
	assert_string_equal(got->pin_url, "http://r9");
	mgw_session_unref(got);
	/* Several reconnect attempts and more requests: still one log. */
	pump_for(f, 0.8);
	for (int i = 0; i < 5; i++)
		assert_int_equal(run_lookup(f, &f->a, s1->id, NULL, NULL), 0);
	f->a.clk.mono_ms += 3000;
	st = stats_of(&f->a);
	assert_int_equal(st.unreachable, 1);
	assert_int_equal(st.outages, 1);
	assert_true(st.outage_ms >= 3000);
	assert_true(st.stale_hits >= 7);
	assert_int_equal(st.local_updates, 1);
	assert_true(st.errors >= 10);

	/* Back on the same port. */
	assert_int_equal(redisd_start(&rd, port), 0);
	for (double end = now_s() + WAIT_S; (stats_of(&f->a).unreachable ||
	     stats_of(&f->b).unreachable) && now_s() < end;)
		event_base_loop(f->base, EVLOOP_ONCE);
	st = stats_of(&f->a);
	assert_int_equal(st.unreachable, 0);
	assert_int_equal(st.outages, 1);
	assert_int_equal(stats_of(&f->b).unreachable, 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	mgw_log_set_level(MGW_LOG_ERROR);
	/* Once per transition and gateway (A and B each saw it). */
	assert_int_equal(count_lines(logpath, "event=store_down store=redis "), 2);
	assert_int_equal(count_lines(logpath, "event=store_up store=redis "), 2);
	close(logfd);
	unlink(logpath);

	/* The restarted Redis (no persistence) lost every session: the
	 * locally updated copy is put back (no gateway deleted it), and B,
	 * which never cached it, sees it from Redis. */
	assert_int_equal(run_lookup(f, &f->a, s1->id, NULL, &got), 0);
	assert_string_equal(got->pin_url, "http://r9");
	mgw_session_unref(got);
	assert_int_equal(run_lookup(f, &f->b, s1->id, NULL, &got), 0);
	assert_string_equal(got->pin_url, "http://r9");
	mgw_session_unref(got);
	/* And everything works again, shared between gateways. */
	mgw_session_unref(s2);
	s2 = make_session(f, &f->a, "http://r2", "x");
	assert_int_equal(run_lookup(f, &f->b, s2->id, NULL, &got), 0);
	assert_string_equal(got->pin_url, "http://r2");
	mgw_session_unref(got);
	mgw_session_unref(s1);
	mgw_session_unref(s2);
}

/* One store, two worker threads, each with its own loop and view (its own
 * connection), re-pinning the same session as fast as they can: every
 * update either wins or gets the current record, and the versions add up
 * (nothing lost, nothing applied twice). */
struct worker {
	struct mgw_session_store *st;
	const char *id;
	int wins, conflicts, failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct event_base *base = event_base_new();
	struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	struct timeval tv = {0, 5000};
	struct mgw_session_view *v;
	char err[256], url[64];
	double end = now_s() + 30;

	event_add(tick, &tv);
	v = mgw_session_view_new(w->st, base, err, sizeof(err));
	for (int i = 0; v && i < 50 && now_s() < end; i++) {
		struct th_result r = {0};
		struct mgw_session *c;

		if (mgw_session_lookup(v, w->id, strlen(w->id), NULL, th_record,
		                       &r, NULL) != 0)
			break;
		while (!r.calls && now_s() < end)
			event_base_loop(base, EVLOOP_ONCE);
		if (r.status != 0) {
			w->failures++;
			mgw_session_unref(r.rec);
			continue;
		}
		c = mgw_session_dup(r.rec);
		mgw_session_unref(r.rec);
		snprintf(url, sizeof(url), "http://w%p-%d", (void *)w, i);
		if (!c || mgw_session_repin(c, url, "sid") != 0) {
			w->failures++;
			mgw_session_unref(c);
			continue;
		}
		memset(&r, 0, sizeof(r));
		if (mgw_session_update(v, c, c->version, th_record, &r, NULL) != 0)
			break;
		while (!r.calls && now_s() < end)
			event_base_loop(base, EVLOOP_ONCE);
		if (r.status == 0)
			w->wins++;
		else if (r.status == MGW_ECONFLICT && r.rec)
			w->conflicts++;
		else
			w->failures++;
		mgw_session_unref(r.rec);
	}
	mgw_session_view_free(v);
	event_free(tick);
	event_base_free(base);
	return NULL;
}

static void test_threads(void **state)
{
	struct fx *f = *state;
	struct mgw_session *a, *got = NULL;
	struct worker w[2];
	pthread_t t[2];
	struct gw g3;

	f->cfg->serve.sessions.redis.cache_ttl = 0;
	fx_open(f);
	a = make_session(f, &f->a, "http://r1", "s1");
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){.st = f->a.st, .id = a->id};
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(w[0].failures + w[1].failures, 0);
	assert_int_equal(w[0].wins + w[0].conflicts, 50);
	assert_int_equal(w[1].wins + w[1].conflicts, 50);
	gw_open(f, &g3);
	assert_int_equal(run_lookup(f, &g3, a->id, NULL, &got), 0);
	assert_int_equal(got->version, (uint64_t)(w[0].wins + w[1].wins));
	assert_int_equal(got->pin_gen, (uint32_t)(w[0].wins + w[1].wins));
	mgw_session_unref(got);
	gw_close(&g3);
	mgw_session_unref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_registered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_between_gateways,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_header_value, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_update_visible_after_cache_ttl,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_cas, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ttl_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hit_makes_no_round_trip,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_disabled, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_principal_and_junk, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_record, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outage_and_recovery, setup,
		                                teardown),
	};

	if (!redisd_available()) {
		printf("redis-server not found: skipped\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
