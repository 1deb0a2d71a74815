/* engine_test.c - unit tests for src/load/engine.c (and stats.c through
 * it) with a fake agent: a test double of the agent.h API, defined here,
 * whose behaviour each call spec's arguments script ({"delay_ms": N,
 * "outcome": "session_lost", "reinit": 1, "hang": true}).  The checks are
 * on counts and on latency lower bounds that timers guarantee, never on
 * how fast anything ran. */
#include "autoconf.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <jansson.h>

#include "core/errors.h"
#include "load/agent.h"
#include "load/engine.h"
#include "load/histogram.h"
#include "load/stats.h"
#include "util/time.h"

/* ---- the fake agent ---- */

struct mgw_load_agent {
	struct event_base *base;
	struct event *ev;
	int busy, closing;
	const struct mgw_load_call_spec *spec;
	mgw_load_done_cb done;
	mgw_load_closed_cb closed;
	void *arg;
	uint64_t sent;
	unsigned calls;
};

static struct {
	int created, freed, closed;
	int call_while_busy;
	size_t max_inflight, inflight;
} fake;

static enum mgw_load_outcome outcome_of(const char *s)
{
	for (int o = 0; o < MGW_LOAD_OUTCOME_N; o++)
		if (strcmp(mgw_load_outcome_name((enum mgw_load_outcome)o), s) == 0)
			return (enum mgw_load_outcome)o;
	return MGW_LOAD_OK;
}

static void fake_fire(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_agent *a = arg;
	json_t *args = a->spec ? a->spec->arguments : NULL;
	struct mgw_load_result r = {.outcome = MGW_LOAD_OK, .status = 200,
	                            .bytes = 100, .sent_ns = a->sent};
	const char *o = json_string_value(json_object_get(args, "outcome"));

	(void)fd;
	(void)what;
	if (a->closing) {
		fake.closed++;
		a->closing = 0;
		a->closed(a, a->arg);
		return;
	}
	if (o)
		r.outcome = outcome_of(o);
	/* Like a legacy agent: its first call handshakes; "reinit" adds a
	 * recovery handshake to every call. */
	r.reinitialized = (a->calls == 1) +
	                  json_is_true(json_object_get(args, "reinit"));
	a->busy = 0;
	fake.inflight--;
	a->done(a, &r, a->arg);
}

struct mgw_load_agent *mgw_load_agent_new(struct event_base *base,
                                          struct mgw_client *client,
                                          const struct mgw_load_target *target,
                                          const struct mgw_load_agent_opts *opts)
{
	struct mgw_load_agent *a = calloc(1, sizeof(*a));

	(void)client;
	(void)target;
	(void)opts;
	assert_non_null(a);
	a->base = base;
	a->ev = evtimer_new(base, fake_fire, a);
	fake.created++;
	return a;
}

void mgw_load_agent_free(struct mgw_load_agent *a)
{
	if (!a)
		return;
	if (a->busy)
		fake.inflight--;
	event_free(a->ev);
	free(a);
	fake.freed++;
}

int mgw_load_agent_call(struct mgw_load_agent *a,
                        const struct mgw_load_call_spec *spec,
                        mgw_load_done_cb on_done, void *arg)
{
	json_int_t ms = json_integer_value(json_object_get(spec->arguments,
	                                                   "delay_ms"));
	struct timeval tv = {.tv_sec = ms / 1000,
	                     .tv_usec = (suseconds_t)(ms % 1000 * 1000)};

	if (a->busy) {
		fake.call_while_busy++;
		return MGW_ELIMIT;
	}
	a->busy = 1;
	a->calls++;
	a->spec = spec;
	a->done = on_done;
	a->arg = arg;
	a->sent = mgw_now_ns();
	if (++fake.inflight > fake.max_inflight)
		fake.max_inflight = fake.inflight;
	/* libevent counts from its cached loop time, which lags inside
	 * callbacks: refresh it so the delay really is at least ms. */
	event_base_update_cache_time(a->base);
	if (!json_is_true(json_object_get(spec->arguments, "hang")))
		evtimer_add(a->ev, &tv);
	return 0;
}

int mgw_load_agent_close(struct mgw_load_agent *a, mgw_load_closed_cb closed,
                         void *arg)
{
	struct timeval tv = {0, 0};

	if (a->closing)
		return MGW_ECLOSED;
	event_del(a->ev);
	if (a->busy) {
		a->busy = 0;
		fake.inflight--;
	}
	a->closing = 1;
	a->closed = closed;
	a->arg = arg;
	evtimer_add(a->ev, &tv);
	return 0;
}

enum mgw_era mgw_load_agent_era(const struct mgw_load_agent *a)
{
	(void)a;
	return MGW_ERA_IS_LEGACY;
}

/* ---- plan helpers ---- */

struct plan {
	struct mgw_load_conf conf;
	struct mgw_load_phase ph[4];
	struct mgw_load_call calls[4];
	char *urls[1];
};

static void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
	memset(&fake, 0, sizeof(fake));
	p->urls[0] = "http://127.0.0.1:9/mcp";
	p->conf.transport.type = MGW_LOAD_STDIO; /* no HTTP client needed */
	p->conf.transport.command = "true";
	p->conf.dialect = MGW_LOAD_LEGACY;
	p->conf.timeout = 5;
	p->conf.seed = 42;
	p->conf.phases = p->ph;
	p->conf.calls = p->calls;
}

static void add_call(struct plan *p, const char *name, double weight,
                     const char *args)
{
	struct mgw_load_call *c = &p->calls[p->conf.n_calls++];

	c->name = (char *)name;
	c->tool = (char *)name;
	c->weight = weight;
	c->arguments = json_loads(args, 0, NULL);
	assert_non_null(c->arguments);
}

static struct mgw_load_phase *add_phase(struct plan *p, const char *name,
                                        int mode, long conc, double rate,
                                        double duration, long long requests)
{
	struct mgw_load_phase *ph = &p->ph[p->conf.n_phases++];

	ph->name = (char *)name;
	ph->mode = mode;
	ph->concurrency = conc;
	ph->rate = rate;
	ph->duration = duration;
	ph->requests = requests;
	return ph;
}

static void plan_deinit(struct plan *p)
{
	for (size_t i = 0; i < p->conf.n_calls; i++)
		json_decref(p->calls[i].arguments);
}

static void on_finished(struct mgw_load_engine *e, void *arg)
{
	(void)e;
	event_base_loopbreak(arg);
}

struct stopper {
	struct mgw_load_engine *e;
};

static void on_stop_timer(evutil_socket_t fd, short what, void *arg)
{
	struct stopper *s = arg;

	(void)fd;
	(void)what;
	mgw_load_engine_stop(s->e);
}

/* Runs the plan to the end (bounded: the loop is also broken after
 * limit_s seconds, which fails the test).  stop_after_ms > 0 interrupts
 * the run then. */
/* When set, run() blocks its loop for block.for_ms at block.at_ms: every
 * timer due meanwhile fires late, as on a busy machine. */
static struct {
	int at_ms, for_ms;
} block;

static void on_block(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	usleep((useconds_t)block.for_ms * 1000);
}

static struct mgw_load_engine *run(struct plan *p, struct event_base **basep,
                                   double limit_s, int stop_after_ms)
{
	struct event_config *cfg = event_config_new();
	struct event_base *base;
	char err[256] = "";
	struct mgw_load_engine *e;
	struct timeval limit = mgw_tv(limit_s);
	struct stopper st;
	struct event *stop = NULL;

	/* As mcpgw load does: timers on the precise monotonic clock, the
	 * one mgw_now_ns() reads (libevent otherwise uses a coarse one). */
	assert_non_null(cfg);
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	assert_non_null(base);
	e = mgw_load_engine_new(base, &p->conf, err, sizeof(err));
	if (!e)
		print_error("engine_new: %s\n", err);
	assert_non_null(e);
	assert_int_equal(mgw_load_engine_start(e, on_finished, NULL, base), 0);
	assert_int_equal(mgw_load_engine_start(e, on_finished, NULL, base),
	                 MGW_EINVAL);
	if (stop_after_ms > 0) {
		struct timeval tv = {0, stop_after_ms * 1000};
		st.e = e;
		stop = evtimer_new(base, on_stop_timer, &st);
		evtimer_add(stop, &tv);
	}
	struct event *blk = NULL;

	if (block.at_ms > 0) {
		struct timeval tv = {block.at_ms / 1000, block.at_ms % 1000 * 1000};
		blk = evtimer_new(base, on_block, NULL);
		evtimer_add(blk, &tv);
	}
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	if (blk)
		event_free(blk);
	if (stop)
		event_free(stop);
	assert_true(mgw_load_engine_stats(e)->finished);
	*basep = base;
	return e;
}

static void done(struct mgw_load_engine *e, struct event_base *base)
{
	mgw_load_engine_free(e);
	event_base_free(base);
}

/* requests == ok + failures, and the timeline adds up to the phases. */
static void check_consistency(const struct mgw_load_stats *st)
{
	struct mgw_load_counts tl = {0}, ph = {0};

	for (size_t i = 0; i < st->n_timeline; i++) {
		tl.requests += st->timeline[i].c.requests;
		tl.ok += st->timeline[i].c.ok;
		tl.shed += st->timeline[i].c.shed;
		if (i > 0)
			assert_int_equal(st->timeline[i].t,
			                 st->timeline[i - 1].t + 1);
	}
	for (size_t p = 0; p < st->n_phases; p++) {
		const struct mgw_load_phase_stats *ps = &st->phases[p];
		uint64_t tools = 0;

		assert_true(ps->all.c.requests ==
		            ps->all.c.ok + mgw_load_failed(&ps->all.c));
		assert_true(ps->all.lat->count == ps->all.c.ok);
		for (size_t t = 0; t < st->n_tools; t++)
			tools += ps->tools[t].c.requests;
		assert_true(tools == ps->all.c.requests);
		ph.requests += ps->all.c.requests;
		ph.ok += ps->all.c.ok;
		ph.shed += ps->all.c.shed;
	}
	assert_true(tl.requests == ph.requests);
	assert_true(tl.ok == ph.ok);
	assert_true(tl.shed == ph.shed);
}

/* ---- tests ---- */

static void test_closed_exact_count(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_stats *st;

	(void)state;
	plan_init(&p);
	add_call(&p, "echo", 1, "{\"delay_ms\": 1}");
	add_phase(&p, "load", MGW_LOAD_CLOSED, 4, 0, 0, 101);
	e = run(&p, &base, 20, 0);
	st = mgw_load_engine_stats(e);
	assert_int_equal(st->phases[0].all.c.requests, 101);
	assert_int_equal(st->phases[0].all.c.ok, 101);
	assert_int_equal(st->total.all.c.requests, 101);
	assert_int_equal(fake.created, 4);
	assert_int_equal(fake.closed, 4);     /* every agent closed */
	assert_int_equal(fake.call_while_busy, 0);
	assert_true(fake.max_inflight <= 4);
	/* every latency at least the scripted 1 ms delay */
	assert_true(mgw_hist_min(st->phases[0].all.lat) >= 1000000);
	assert_true(st->era == MGW_ERA_IS_LEGACY);
	check_consistency(st);
	done(e, base);
	plan_deinit(&p);
}

static void test_closed_fewer_requests_than_users(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;

	(void)state;
	plan_init(&p);
	add_call(&p, "echo", 1, "{}");
	add_phase(&p, "load", MGW_LOAD_CLOSED, 8, 0, 0, 3);
	e = run(&p, &base, 10, 0);
	assert_int_equal(mgw_load_engine_stats(e)->phases[0].all.c.requests, 3);
	assert_int_equal(fake.created, 3);
	done(e, base);
	plan_deinit(&p);
}

static void test_warmup_excluded_and_agents_kept(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_stats *st;

	(void)state;
	plan_init(&p);
	add_call(&p, "echo", 1, "{}");
	add_phase(&p, "warmup", MGW_LOAD_CLOSED, 2, 0, 0, 10)->warmup = 1;
	add_phase(&p, "a", MGW_LOAD_CLOSED, 2, 0, 0, 20);
	add_phase(&p, "b", MGW_LOAD_CLOSED, 3, 0, 0, 30);
	e = run(&p, &base, 20, 0);
	st = mgw_load_engine_stats(e);
	assert_int_equal(st->phases[0].all.c.requests, 10);
	assert_int_equal(st->total.all.c.requests, 50);
	assert_int_equal(st->total.all.c.ok, 50);
	/* Agents survive phases (two from the warmup, one more for b), and
	 * the handshake each does on its first call is not a
	 * re-initialization. */
	assert_int_equal(fake.created, 3);
	assert_int_equal(st->phases[0].all.c.reinit, 0);
	assert_int_equal(st->total.all.c.reinit, 0);
	assert_true(st->total.concurrency == 3);
	check_consistency(st);
	done(e, base);
	plan_deinit(&p);
}

static void test_outcomes_counted_per_kind_and_tool(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_stats *st;
	const struct mgw_load_phase_stats *ps;

	(void)state;
	plan_init(&p);
	add_call(&p, "lost", 1, "{\"outcome\": \"session_lost\", \"reinit\": true}");
	add_call(&p, "echo", 3, "{}");
	add_call(&p, "handle", 1, "{\"outcome\": \"handle_lost\"}");
	add_call(&p, "echo", 1, "{\"outcome\": \"http_5xx\"}"); /* same row */
	add_phase(&p, "load", MGW_LOAD_CLOSED, 3, 0, 0, 600);
	e = run(&p, &base, 20, 0);
	st = mgw_load_engine_stats(e);
	ps = &st->phases[0];
	assert_int_equal(st->n_tools, 3); /* lost, echo, handle */
	assert_int_equal(ps->all.c.requests, 600);
	assert_true(ps->tools[0].c.fail[MGW_LOAD_SESSION_LOST] ==
	            ps->tools[0].c.requests);
	assert_true(ps->tools[0].c.reinit == ps->tools[0].c.requests);
	assert_true(ps->tools[2].c.fail[MGW_LOAD_HANDLE_LOST] ==
	            ps->tools[2].c.requests);
	assert_true(ps->tools[1].c.fail[MGW_LOAD_HTTP_5XX] +
	            ps->tools[1].c.ok == ps->tools[1].c.requests);
	/* the weighted mix reached every entry, echo (4/6) most */
	assert_true(ps->tools[0].c.requests > 0);
	assert_true(ps->tools[1].c.fail[MGW_LOAD_HTTP_5XX] > 0);
	assert_true(ps->tools[1].c.ok > ps->tools[0].c.requests);
	assert_true(ps->all.c.fail[MGW_LOAD_SESSION_LOST] ==
	            ps->tools[0].c.requests);
	/* failed calls are not in the latency histograms */
	assert_true(ps->all.lat->count == ps->tools[1].c.ok);
	assert_true(mgw_load_error_rate(&ps->all.c) > 0.3);
	check_consistency(st);
	done(e, base);
	plan_deinit(&p);
}

static void test_open_counts_every_tick(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_stats *st;
	const struct mgw_load_phase_stats *ps;

	(void)state;
	plan_init(&p);
	add_call(&p, "echo", 1, "{}");
	add_phase(&p, "open", MGW_LOAD_OPEN, 16, 200, 1.0, 0);
	e = run(&p, &base, 20, 0);
	st = mgw_load_engine_stats(e);
	ps = &st->phases[0];
	/* Ticks at start + k/200 s for every k with k/200 < 1 s: exactly 200,
	 * each either sent or shed, whatever the timers did. */
	assert_int_equal(ps->all.c.requests + ps->all.c.shed, 200);
	assert_true(ps->window_s >= 0.999);
	assert_true(mgw_load_offered_rps(ps, &ps->all) > 199 &&
	            mgw_load_offered_rps(ps, &ps->all) < 201);
	check_consistency(st);
	done(e, base);
	plan_deinit(&p);
}

/* A wakeup that comes late across the end of the phase (the loop blocked
 * from 850 to 1050 ms of a 1 s phase): the ticks that fell due before the
 * end still go out to the idle users, late, instead of being shed with
 * the end. */
static void test_open_late_wakeup_at_the_end(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_phase_stats *ps;

	(void)state;
	plan_init(&p);
	add_call(&p, "echo", 1, "{}");
	add_phase(&p, "open", MGW_LOAD_OPEN, 16, 20, 1.0, 0);
	block.at_ms = 850;
	block.for_ms = 200;
	e = run(&p, &base, 20, 0);
	block.at_ms = 0;
	ps = &mgw_load_engine_stats(e)->phases[0];
	assert_int_equal(ps->all.c.requests + ps->all.c.shed, 20);
	assert_int_equal(ps->all.c.shed, 0);
	assert_int_equal(ps->all.c.requests, 20);
	done(e, base);
	plan_deinit(&p);
}

static void test_open_request_budget(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_phase_stats *ps;

	(void)state;
	plan_init(&p);
	add_call(&p, "echo", 1, "{}");
	add_phase(&p, "open", MGW_LOAD_OPEN, 8, 500, 0, 50);
	e = run(&p, &base, 20, 0);
	ps = &mgw_load_engine_stats(e)->phases[0];
	assert_int_equal(ps->all.c.requests + ps->all.c.shed, 50);
	done(e, base);
	plan_deinit(&p);
}

/* A stalled backend (every call takes 300 ms) behind an in-flight bound
 * of 2 and a backlog of 2, offered 50 calls/s: most ticks are shed, and
 * the ticks that waited in the backlog report their wait. */
static void test_open_stall_corrected_and_shed(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_phase_stats *ps;
	struct mgw_load_phase *ph;

	(void)state;
	plan_init(&p);
	add_call(&p, "sleep", 1, "{\"delay_ms\": 300}");
	ph = add_phase(&p, "stall", MGW_LOAD_OPEN, 2, 50, 1.0, 0);
	ph->backlog = 2;
	e = run(&p, &base, 20, 0);
	ps = &mgw_load_engine_stats(e)->phases[0];
	assert_int_equal(ps->all.c.requests + ps->all.c.shed, 50);
	assert_true(ps->all.c.shed > 0);
	assert_true(fake.max_inflight <= 2);
	/* Service time is at least the stall... */
	assert_true(mgw_hist_min(ps->all.svc) >= 300000000);
	/* ...and the third tick (due at 40 ms) cannot start before a slot
	 * frees at 300 ms, so its corrected latency is at least 260 ms of
	 * waiting plus 300 ms of service. */
	assert_true(mgw_hist_max(ps->all.lat) >= 560000000);
	assert_true(mgw_hist_percentile(ps->all.lat, 99) >
	            mgw_hist_percentile(ps->all.svc, 99));
	check_consistency(mgw_load_engine_stats(e));
	done(e, base);
	plan_deinit(&p);
}

/* Ticks that wait longer than the timeout are shed, not sent late: with
 * one user busy 600 ms per call and a tick every 100 ms, a FIFO backlog
 * would send the fifth call 2 s after it was due; with a 150 ms timeout
 * no call that is sent has waited much more than that. */
static void test_open_backlog_expires(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_phase_stats *ps;

	(void)state;
	plan_init(&p);
	p.conf.timeout = 0.15;
	add_call(&p, "sleep", 1, "{\"delay_ms\": 600}");
	add_phase(&p, "stall", MGW_LOAD_OPEN, 1, 10, 3.0, 0)->backlog = 100;
	e = run(&p, &base, 20, 0);
	ps = &mgw_load_engine_stats(e)->phases[0];
	assert_int_equal(ps->all.c.requests + ps->all.c.shed, 30);
	assert_true(ps->all.c.requests >= 2);
	assert_true(ps->all.c.shed >= 15);
	assert_true(mgw_hist_max(ps->all.lat) < 1500000000ull);
	done(e, base);
	plan_deinit(&p);
}

static void test_hung_agent_counted_as_timeout(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_phase_stats *ps;

	(void)state;
	plan_init(&p);
	p.conf.timeout = 0.05;
	add_call(&p, "hang", 1, "{\"hang\": true}");
	add_phase(&p, "load", MGW_LOAD_CLOSED, 2, 0, 0, 2);
	e = run(&p, &base, 20, 0);
	ps = &mgw_load_engine_stats(e)->phases[0];
	assert_int_equal(ps->all.c.requests, 2);
	assert_int_equal(ps->all.c.fail[MGW_LOAD_TIMEOUT], 2);
	assert_int_equal(fake.freed, 2); /* the stuck agents were dropped */
	done(e, base);
	plan_deinit(&p);
}

static void test_interrupt_skips_later_phases(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_stats *st;

	(void)state;
	plan_init(&p);
	add_call(&p, "echo", 1, "{\"delay_ms\": 2}");
	add_phase(&p, "long", MGW_LOAD_CLOSED, 2, 0, 30, 0);
	add_phase(&p, "never", MGW_LOAD_CLOSED, 2, 0, 30, 0);
	e = run(&p, &base, 20, 100);
	st = mgw_load_engine_stats(e);
	assert_true(st->interrupted);
	assert_true(st->phases[0].ran);
	assert_false(st->phases[1].ran);
	assert_true(st->phases[0].all.c.requests > 0);
	assert_true(st->phases[0].duration_s < 29);
	assert_int_equal(fake.closed, 2);
	check_consistency(st);
	done(e, base);
	plan_deinit(&p);
}

static void test_think_time(void **state)
{
	struct plan p;
	struct event_base *base;
	struct mgw_load_engine *e;
	const struct mgw_load_phase_stats *ps;
	struct mgw_load_think t = {.kind = MGW_THINK_AGENT, .min = 0.1,
	                           .max = 0.2, .long_min = 5, .long_max = 10,
	                           .long_share = 0.25};

	(void)state;
	/* the agent-shaped draw: short unless v < long_share */
	assert_true(fabs(mgw_load_think_draw(&t, 0.5, 0.9) - 0.15) < 1e-12);
	assert_true(fabs(mgw_load_think_draw(&t, 0.5, 0.1) - 7.5) < 1e-12);
	t.kind = MGW_THINK_FIXED;
	assert_true(mgw_load_think_draw(&t, 0.7, 0.1) == 0.1);
	t.kind = MGW_THINK_NONE;
	assert_true(mgw_load_think_draw(&t, 0.7, 0.1) == 0);

	/* 2 users thinking 100 ms between calls for 0.5 s: each makes at
	 * most 5 calls (one at 0, then one per >= 100 ms). */
	plan_init(&p);
	p.conf.think = (struct mgw_load_think){.kind = MGW_THINK_FIXED,
	                                       .min = 0.1};
	add_call(&p, "echo", 1, "{}");
	add_phase(&p, "think", MGW_LOAD_CLOSED, 2, 0, 0.5, 0);
	e = run(&p, &base, 20, 0);
	ps = &mgw_load_engine_stats(e)->phases[0];
	assert_true(ps->all.c.requests >= 2);
	assert_true(ps->all.c.requests <= 10);
	done(e, base);
	plan_deinit(&p);
}

static void test_stats_error_rate_and_rps(void **state)
{
	struct mgw_load_counts c = {0};
	struct mgw_load_phase_stats ps = {0};

	(void)state;
	assert_true(mgw_load_error_rate(&c) == 0);
	c.requests = 90;
	c.ok = 80;
	c.fail[MGW_LOAD_TIMEOUT] = 10;
	c.shed = 10;
	/* (10 failed + 10 shed) / (90 + 10) */
	assert_true(mgw_load_error_rate(&c) == 0.2);
	ps.all.c = c;
	ps.window_s = 2;
	ps.duration_s = 4;
	assert_true(mgw_load_offered_rps(&ps, &ps.all) == 50);
	assert_true(mgw_load_achieved_rps(&ps, &ps.all) == 20);
	assert_string_equal(mgw_load_outcome_name(MGW_LOAD_CONNECT_ERROR),
	                    "connect_error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_error_rate_and_rps),
		cmocka_unit_test(test_closed_exact_count),
		cmocka_unit_test(test_closed_fewer_requests_than_users),
		cmocka_unit_test(test_warmup_excluded_and_agents_kept),
		cmocka_unit_test(test_outcomes_counted_per_kind_and_tool),
		cmocka_unit_test(test_open_counts_every_tick),
		cmocka_unit_test(test_open_late_wakeup_at_the_end),
		cmocka_unit_test(test_open_request_budget),
		cmocka_unit_test(test_open_stall_corrected_and_shed),
		cmocka_unit_test(test_open_backlog_expires),
		cmocka_unit_test(test_hung_agent_counted_as_timeout),
		cmocka_unit_test(test_interrupt_skips_later_phases),
		cmocka_unit_test(test_think_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
