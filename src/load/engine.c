/* engine.c - the scheduler of `mcpgw load` (contract in engine.h).
 *
 * A run is a sequence of phases over one pool of virtual users ("slots",
 * each owning an agent that is created on first use and kept across phases
 * so that sessions and handles survive from the warmup into the measured
 * phases).  A phase is RUNNING while it starts calls, DRAINING while the
 * calls it started finish (they count in the phase that started them),
 * then the next one begins.  After the last phase every agent is closed
 * (a legacy session is deleted) and the run is FINISHED.
 *
 * Closed loop: slot i < concurrency starts a call, waits for it to end,
 * pauses for its think time, starts the next.  Open loop: tick k is due at
 * start + k / rate (absolute, so a late timer never shifts later ticks);
 * due ticks enter a bounded backlog and are handed to free slots while
 * fewer than `concurrency` calls are in flight.  A tick finding the backlog
 * full, still waiting when the timeout passes, or left over when the phase
 * ends is shed.  Latency counts from the intended time, so time spent
 * waiting for a free slot is part of it (coordinated omission corrected);
 * the service time from the actual send is kept beside it. */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "load/agent.h"
#include "load/engine.h"
#include "load/stats.h"
#include "net/tls_client.h"
#include "util/rand.h"
#include "util/time.h"
#include "util/url.h"

#define NS 1000000000ull

/* Grace beyond the per-call timeout before the engine gives up on an
 * agent that did not report (a bug on the agent side, or no timeout at
 * all), and the wait used when no timeout is configured. */
#define DRAIN_GRACE_NS (2 * NS)
#define DRAIN_NO_TIMEOUT_NS (60 * NS)

enum run_state {
	ST_NEW = 0,
	ST_RUNNING,   /* the current phase starts calls */
	ST_DRAINING,  /* the current phase waits for its calls */
	ST_CLOSING,   /* agents are being closed */
	ST_FINISHED,
};

struct slot {
	struct mgw_load_engine *e;
	struct mgw_load_agent *agent;
	size_t idx;
	int busy;                 /* a call in flight */
	int idle;                 /* on the idle stack (open loop) */
	int closing;
	int handshaken;           /* the agent's first initialize was seen */
	struct event *think;      /* closed loop: pause before the next call */
	size_t phase, call;
	uint64_t intended, started;
};

struct tick {
	uint64_t intended;
	size_t call;
};

struct mgw_load_engine {
	struct event_base *base;
	const struct mgw_load_conf *conf;
	struct mgw_client *client;
	SSL_CTX *tls;
	struct mgw_load_target target;
	struct mgw_load_agent_opts opts;
	struct mgw_headers auth;
	struct mgw_load_call_spec *specs;
	double *cum_weight;
	struct mgw_load_stats *st;
	uint64_t rng;
	uint64_t timeout_ns;

	struct slot **slots;
	size_t n_slots, cap_slots;
	struct slot **idle;       /* open loop: free slots, most recent last */
	size_t n_idle;
	int spread;               /* take the oldest idle slot, not the newest */
	size_t users;             /* open loop: exactly this many slots (0:
	                           * the concurrency with spread, else as
	                           * needed) */
	size_t inflight;

	enum run_state state;
	int started;
	int interrupted;
	size_t phase;
	uint64_t phase_start, phase_end_at; /* end_at: UINT64_MAX if none */
	uint64_t issued;          /* closed: calls started; open: ticks due */
	double tick_ns;
	struct tick *backlog;     /* ring */
	size_t bl_cap, bl_head, bl_len;
	size_t n_closing;

	struct event *tick_ev, *end_ev, *sec_ev, *drain_ev, *next_ev;
	uint32_t seconds;

	mgw_load_engine_cb finished, progress;
	void *arg;
};

static void start_phase(struct mgw_load_engine *e);
static void end_issue(struct mgw_load_engine *e, uint64_t at);
static void on_done(struct mgw_load_agent *a, const struct mgw_load_result *r,
                    void *arg);

/* ---- small helpers ---- */

static uint64_t rng_next(struct mgw_load_engine *e)
{
	uint64_t x = e->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return e->rng = x;
}

static double rng_unit(struct mgw_load_engine *e)
{
	return (double)(rng_next(e) >> 11) / 9007199254740992.0;
}

/* Arms ev to fire at the absolute monotonic time at (now if passed).
 * libevent adds a relative timeout to its cached loop time, which inside a
 * callback lags the clock; refreshing it keeps timers from firing early. */
static void arm_at(struct event *ev, uint64_t at)
{
	uint64_t now, d;

	event_base_update_cache_time(event_get_base(ev));
	now = mgw_now_ns();
	d = at > now ? at - now : 0;
	struct timeval tv = {.tv_sec = (time_t)(d / NS),
	                     .tv_usec = (suseconds_t)(d % NS / 1000)};

	event_add(ev, &tv);
}

static void defer(struct mgw_load_engine *e)
{
	event_active(e->next_ev, EV_TIMEOUT, 0);
}

static const struct mgw_load_phase *cur_phase(const struct mgw_load_engine *e)
{
	return &e->conf->phases[e->phase];
}

static size_t pick_call(struct mgw_load_engine *e)
{
	size_t n = e->conf->n_calls, lo = 0, hi = n - 1;
	double r = rng_unit(e) * e->cum_weight[n - 1];

	while (lo < hi) { /* first entry whose cumulative weight exceeds r */
		size_t mid = (lo + hi) / 2;
		if (e->cum_weight[mid] > r)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

double mgw_load_think_draw(const struct mgw_load_think *t, double u, double v)
{
	switch (t->kind) {
	case MGW_THINK_FIXED:
		return t->min;
	case MGW_THINK_UNIFORM:
		return t->min + u * (t->max - t->min);
	case MGW_THINK_AGENT:
		if (v < t->long_share)
			return t->long_min + u * (t->long_max - t->long_min);
		return t->min + u * (t->max - t->min);
	default:
		return 0;
	}
}

/* ---- slots ---- */

static void on_think(evutil_socket_t fd, short what, void *arg);

static struct slot *slot_get(struct mgw_load_engine *e, size_t i)
{
	struct slot *s;

	if (i < e->n_slots)
		return e->slots[i];
	if (e->n_slots == e->cap_slots) {
		size_t cap = e->cap_slots ? 2 * e->cap_slots : 16;
		struct slot **v = realloc(e->slots, cap * sizeof(*v));
		struct slot **w;

		if (!v)
			return NULL;
		e->slots = v;
		w = realloc(e->idle, cap * sizeof(*w));
		if (!w)
			return NULL;
		e->idle = w;
		e->cap_slots = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->e = e;
	s->idx = e->n_slots;
	s->think = evtimer_new(e->base, on_think, s);
	if (!s->think) {
		free(s);
		return NULL;
	}
	e->slots[e->n_slots++] = s;
	return s;
}

static void slot_free(struct slot *s)
{
	mgw_load_agent_free(s->agent);
	if (s->think)
		event_free(s->think);
	free(s);
}

static void idle_push(struct mgw_load_engine *e, struct slot *s)
{
	if (s->idle)
		return;
	s->idle = 1;
	e->idle[e->n_idle++] = s;
}

static struct slot *idle_pop(struct mgw_load_engine *e)
{
	struct slot *s;

	if (e->n_idle == 0)
		return NULL;
	if (e->spread) {
		/* the one idle the longest (n is at most the concurrency) */
		s = e->idle[0];
		memmove(e->idle, e->idle + 1, --e->n_idle * sizeof(*e->idle));
	} else {
		s = e->idle[--e->n_idle];
	}
	s->idle = 0;
	return s;
}

/* Starts call of spec index `call` on slot s; intended is the time it was
 * due (closed loop: now).  Returns 0, or a negative code when the slot
 * could not take the call (it is then left idle and the caller moves on). */
static int slot_start(struct slot *s, size_t call, uint64_t intended,
                      uint64_t now)
{
	struct mgw_load_engine *e = s->e;
	int rc;

	if (!s->agent) {
		s->agent = mgw_load_agent_new(e->base, e->client, &e->target,
		                              &e->opts);
		if (!s->agent) {
			mgw_err(NULL, "load: cannot create a virtual user");
			return MGW_ENOMEM;
		}
	}
	s->phase = e->phase;
	s->call = call;
	s->intended = intended;
	s->started = now;
	rc = mgw_load_agent_call(s->agent, &e->specs[call], on_done, s);
	if (rc != 0) {
		mgw_err(NULL, "load: virtual user %zu refused a call: %s", s->idx,
		        mgw_strerror(rc));
		return rc;
	}
	s->busy = 1;
	e->inflight++;
	return 0;
}

/* ---- closed loop ---- */

/* Starts the next call of closed-loop slot s if the phase still wants
 * one; ends the phase's issuing when its request budget is spent. */
static void closed_next(struct mgw_load_engine *e, struct slot *s)
{
	const struct mgw_load_phase *ph = cur_phase(e);
	uint64_t now;

	if (e->state != ST_RUNNING || s->idx >= (size_t)ph->concurrency)
		return;
	if (ph->requests > 0 && e->issued >= (uint64_t)ph->requests)
		return;
	now = mgw_now_ns();
	if (now >= e->phase_end_at) {
		end_issue(e, e->phase_end_at);
		return;
	}
	if (slot_start(s, pick_call(e), now, now) != 0)
		return;
	e->issued++;
	if (ph->requests > 0 && e->issued == (uint64_t)ph->requests)
		end_issue(e, now);
}

static void closed_after(struct mgw_load_engine *e, struct slot *s)
{
	double pause;

	if (e->state != ST_RUNNING)
		return;
	pause = mgw_load_think_draw(&e->conf->think, rng_unit(e), rng_unit(e));
	if (pause > 0) {
		arm_at(s->think, mgw_now_ns() + (uint64_t)(pause * 1e9));
		return;
	}
	closed_next(e, s);
}

static void on_think(evutil_socket_t fd, short what, void *arg)
{
	struct slot *s = arg;

	(void)fd;
	(void)what;
	closed_next(s->e, s);
}

/* ---- open loop ---- */

static uint64_t tick_time(const struct mgw_load_engine *e, uint64_t k)
{
	return e->phase_start + (uint64_t)llround((double)k * e->tick_ns);
}

static void shed(struct mgw_load_engine *e, size_t call, uint64_t now)
{
	mgw_load_stats_shed(e->st, e->phase, call, now);
}

/* Hands backlog ticks to free slots while the in-flight bound allows. */
static void dispatch(struct mgw_load_engine *e, uint64_t now)
{
	const struct mgw_load_phase *ph = cur_phase(e);

	while (e->bl_len > 0 && e->state == ST_RUNNING) {
		struct tick t = e->backlog[e->bl_head];
		struct slot *s = NULL;

		/* One that would time out before it is even sent is shed. */
		if (!e->timeout_ns || now - t.intended <= e->timeout_ns) {
			if (e->inflight >= (size_t)ph->concurrency)
				return;
			s = idle_pop(e);
			/* --users: all of them busy, the tick waits */
			if (!s && e->users && e->n_slots >= e->users)
				return;
			if (!s && !(s = slot_get(e, e->n_slots)))
				return;
		}
		e->bl_head = (e->bl_head + 1) % e->bl_cap;
		e->bl_len--;
		if (!s) {
			shed(e, t.call, now);
			continue;
		}
		if (slot_start(s, t.call, t.intended, now) != 0) {
			shed(e, t.call, now);
			idle_push(e, s);
			if (e->inflight == 0)
				end_issue(e, now); /* nothing can run */
			return;
		}
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_engine *e = arg;
	const struct mgw_load_phase *ph = cur_phase(e);
	uint64_t now = mgw_now_ns(), due, end_at = 0;
	int ending = 0;

	(void)fd;
	(void)what;
	if (e->state != ST_RUNNING)
		return;
	/* Every tick whose time has come, even several after a late wakeup:
	 * their intended times stay where the schedule put them.  A late
	 * wakeup may also reach past the end: the ticks due before it are
	 * still dispatched, then the phase ends. */
	while ((due = tick_time(e, e->issued)) <= now) {
		size_t call;

		if (due >= e->phase_end_at ||
		    (ph->requests > 0 && e->issued >= (uint64_t)ph->requests)) {
			ending = 1;
			end_at = due;
			break;
		}
		call = pick_call(e);
		e->issued++;
		if (e->bl_len == e->bl_cap) {
			shed(e, call, now);
			continue;
		}
		e->backlog[(e->bl_head + e->bl_len) % e->bl_cap] =
			(struct tick){.intended = due, .call = call};
		e->bl_len++;
	}
	dispatch(e, now);
	if (e->state != ST_RUNNING)
		return;
	if (ending) {
		end_issue(e, end_at);
		return;
	}
	if (ph->requests > 0 && e->issued >= (uint64_t)ph->requests) {
		end_issue(e, due); /* the window is requests / rate */
		return;
	}
	if (now >= e->phase_end_at) { /* the next tick is past the end */
		end_issue(e, e->phase_end_at);
		return;
	}
	arm_at(e->tick_ev, due < e->phase_end_at ? due : e->phase_end_at);
}

/* ---- phases ---- */

static void on_drain_timeout(evutil_socket_t fd, short what, void *arg);

/* The phase stops starting calls (at: when it should have, for the
 * window); its backlog is shed and it drains. */
static void end_issue(struct mgw_load_engine *e, uint64_t at)
{
	uint64_t now = mgw_now_ns(), wait;

	if (e->state != ST_RUNNING)
		return;
	e->state = ST_DRAINING;
	event_del(e->tick_ev);
	event_del(e->end_ev);
	for (size_t i = 0; i < e->n_slots; i++)
		event_del(e->slots[i]->think);
	while (e->bl_len > 0) {
		shed(e, e->backlog[e->bl_head].call, now);
		e->bl_head = (e->bl_head + 1) % e->bl_cap;
		e->bl_len--;
	}
	mgw_load_stats_phase_issue_end(e->st, e->phase, at);
	if (e->inflight == 0) {
		defer(e);
		return;
	}
	wait = e->timeout_ns ? e->timeout_ns + DRAIN_GRACE_NS : DRAIN_NO_TIMEOUT_NS;
	arm_at(e->drain_ev, now + wait);
}

static void on_end(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_engine *e = arg;

	(void)fd;
	(void)what;
	end_issue(e, e->phase_end_at);
}

/* Calls that never reported within timeout + grace: count them as timed
 * out and drop their agents (a fresh one takes the slot next time). */
static void on_drain_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_engine *e = arg;
	uint64_t now = mgw_now_ns();

	(void)fd;
	(void)what;
	for (size_t i = 0; i < e->n_slots; i++) {
		struct slot *s = e->slots[i];
		struct mgw_load_result r = {.outcome = MGW_LOAD_TIMEOUT,
		                            .detail = "no answer"};

		if (!s->busy)
			continue;
		mgw_warn(NULL, "load: virtual user %zu did not finish its call; "
		         "counted as a timeout", s->idx);
		mgw_load_agent_free(s->agent);
		s->agent = NULL;
		s->handshaken = 0;
		s->busy = 0;
		e->inflight--;
		mgw_load_stats_call(e->st, s->phase, s->call, &r,
		                    now - s->intended, now - s->started, now);
	}
	defer(e);
}

static int open_setup(struct mgw_load_engine *e, const struct mgw_load_phase *ph)
{
	size_t cap = ph->backlog > 0 ? (size_t)ph->backlog : (size_t)ph->concurrency;

	free(e->backlog);
	e->backlog = calloc(cap, sizeof(*e->backlog));
	if (!e->backlog)
		return MGW_ENOMEM;
	e->bl_cap = cap;
	e->bl_head = e->bl_len = 0;
	e->tick_ns = 1e9 / ph->rate;
	/* spread: every user from the start, taken in turn */
	while (e->spread && e->n_slots < (e->users ? e->users
	                                           : (size_t)ph->concurrency))
		if (!slot_get(e, e->n_slots))
			return MGW_ENOMEM;
	/* Most recently used agents last, so they are taken first (spread:
	 * the first user first). */
	e->n_idle = 0;
	for (size_t i = 0; i < e->n_slots; i++) {
		e->slots[i]->idle = 0;
		idle_push(e, e->slots[e->spread ? i : e->n_slots - 1 - i]);
	}
	return 0;
}

static void start_phase(struct mgw_load_engine *e)
{
	const struct mgw_load_phase *ph = cur_phase(e);
	uint64_t now = mgw_now_ns();

	e->state = ST_RUNNING;
	e->issued = 0;
	e->phase_start = now;
	e->phase_end_at = ph->duration > 0
		? now + (uint64_t)llround(ph->duration * 1e9) : UINT64_MAX;
	mgw_load_stats_phase_start(e->st, e->phase, now);
	mgw_info(NULL, "load: phase %s: %s, %s %g, %gs%s", ph->name,
	         ph->mode == MGW_LOAD_OPEN ? "open loop" : "closed loop",
	         ph->mode == MGW_LOAD_OPEN ? "rate" : "concurrency",
	         ph->mode == MGW_LOAD_OPEN ? ph->rate : (double)ph->concurrency,
	         ph->duration, ph->warmup ? " (warmup)" : "");
	if (e->phase_end_at != UINT64_MAX && ph->mode == MGW_LOAD_CLOSED)
		arm_at(e->end_ev, e->phase_end_at);
	if (ph->mode == MGW_LOAD_OPEN) {
		if (open_setup(e, ph) != 0) {
			mgw_err(NULL, "load: out of memory");
			end_issue(e, now);
			return;
		}
		arm_at(e->tick_ev, now);
		return;
	}
	for (size_t i = 0; i < (size_t)ph->concurrency && e->state == ST_RUNNING;
	     i++) {
		struct slot *s = slot_get(e, i);

		if (!s) {
			mgw_err(NULL, "load: out of memory");
			break;
		}
		closed_next(e, s);
	}
	if (e->state == ST_RUNNING && e->inflight == 0)
		end_issue(e, now); /* no virtual user could start */
}

static void on_closed(struct mgw_load_agent *a, void *arg);

static void finish(struct mgw_load_engine *e)
{
	e->state = ST_FINISHED;
	event_del(e->sec_ev);
	event_del(e->drain_ev);
	e->st->interrupted = e->interrupted;
	mgw_load_stats_finish(e->st, mgw_now_ns());
	if (e->finished)
		e->finished(e, e->arg);
}

/* All phases done: close every agent (legacy sessions get their DELETE),
 * bounded by the timeout. */
static void close_all(struct mgw_load_engine *e)
{
	uint64_t wait = e->timeout_ns ? e->timeout_ns + DRAIN_GRACE_NS : 10 * NS;

	e->state = ST_CLOSING;
	/* The era is the agents' to say; read it before they close. */
	for (size_t i = 0; i < e->n_slots && e->st->era == MGW_ERA_UNKNOWN; i++)
		if (e->slots[i]->agent)
			e->st->era = mgw_load_agent_era(e->slots[i]->agent);
	for (size_t i = 0; i < e->n_slots; i++) {
		struct slot *s = e->slots[i];

		if (!s->agent)
			continue;
		if (mgw_load_agent_close(s->agent, on_closed, s) == 0) {
			s->closing = 1;
			e->n_closing++;
		}
	}
	if (e->n_closing == 0) {
		finish(e);
		return;
	}
	arm_at(e->drain_ev, mgw_now_ns() + wait);
}

static void on_closed(struct mgw_load_agent *a, void *arg)
{
	struct slot *s = arg;
	struct mgw_load_engine *e = s->e;

	(void)a;
	s->closing = 0;
	if (--e->n_closing == 0 && e->state == ST_CLOSING)
		defer(e);
}

/* Runs from the loop whenever the run may move on: a drained phase ends
 * and the next starts, or the run closes and finishes. */
static void on_next(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_engine *e = arg;

	(void)fd;
	(void)what;
	if (e->state == ST_NEW) {
		if (e->conf->n_phases == 0 || e->interrupted)
			close_all(e);
		else
			start_phase(e);
		return;
	}
	if (e->state == ST_CLOSING) {
		finish(e);
		return;
	}
	if (e->state != ST_DRAINING || e->inflight > 0)
		return;
	event_del(e->drain_ev);
	mgw_load_stats_phase_end(e->st, e->phase, mgw_now_ns());
	e->phase++;
	if (e->interrupted || e->phase >= e->conf->n_phases) {
		close_all(e);
		return;
	}
	start_phase(e);
}

static void on_drain_or_close_timeout(evutil_socket_t fd, short what,
                                      void *arg)
{
	struct mgw_load_engine *e = arg;

	if (e->state == ST_CLOSING) {
		mgw_warn(NULL, "load: %zu virtual user(s) did not close in time",
		         e->n_closing);
		finish(e);
		return;
	}
	on_drain_timeout(fd, what, arg);
}

/* ---- call completion ---- */

static void on_done(struct mgw_load_agent *a, const struct mgw_load_result *r,
                    void *arg)
{
	struct slot *s = arg;
	struct mgw_load_engine *e = s->e;
	struct mgw_load_result adj;
	uint64_t now = mgw_now_ns();
	uint64_t sent = r->sent_ns && r->sent_ns >= s->started ? r->sent_ns
	                                                       : s->started;

	(void)a;
	if (!s->busy)
		return; /* a report after the engine gave up on the call */
	s->busy = 0;
	e->inflight--;
	/* An agent's first initialize is how it starts, not a recovery:
	 * the report counts re-initializations only. */
	if (r->reinitialized && !s->handshaken) {
		s->handshaken = 1;
		adj = *r;
		adj.reinitialized--;
		r = &adj;
	}
	if (r->outcome != MGW_LOAD_OK)
		mgw_debug(NULL, "load: %s: %s%s%s", e->specs[s->call].name,
		          mgw_load_outcome_name(r->outcome),
		          r->detail ? ": " : "", r->detail ? r->detail : "");
	mgw_load_stats_call(e->st, s->phase, s->call, r,
	                    now >= s->intended ? now - s->intended : 0,
	                    now >= sent ? now - sent : 0, now);
	if (e->state == ST_DRAINING) {
		if (e->inflight == 0)
			defer(e);
		return;
	}
	if (e->state != ST_RUNNING)
		return;
	if (cur_phase(e)->mode == MGW_LOAD_OPEN) {
		idle_push(e, s);
		dispatch(e, now);
		return;
	}
	closed_after(e, s);
	if (e->state == ST_RUNNING && e->inflight == 0) {
		/* Nothing in flight and nobody thinking: only refused calls
		 * get here; do not let the phase hang. */
		int thinking = 0;
		for (size_t i = 0; i < e->n_slots && !thinking; i++)
			thinking = evtimer_pending(e->slots[i]->think, NULL);
		if (!thinking)
			end_issue(e, now);
	}
}

static void on_second(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_engine *e = arg;
	uint64_t now = mgw_now_ns();

	(void)fd;
	(void)what;
	mgw_load_stats_advance(e->st, now);
	e->seconds++;
	arm_at(e->sec_ev, e->st->start_ns + (uint64_t)(e->seconds + 1) * NS);
	if (e->progress)
		e->progress(e, e->arg);
}

/* ---- setup ---- */

static int build_auth(struct mgw_load_engine *e, char *err, size_t errlen)
{
	const struct mgw_load_auth_conf *a = &e->conf->auth;

	mgw_headers_init(&e->auth);
	for (size_t i = 0; i < a->n_headers; i++) {
		const struct mgw_load_header *h = &a->headers[i];
		const char *v = h->value;

		if (h->env) {
			v = getenv(h->env);
			if (!v) {
				snprintf(err, errlen, "auth header %s: environment "
				         "variable %s is not set", h->name, h->env);
				return MGW_EINVAL;
			}
		}
		if (!mgw_header_value_valid(v, strlen(v))) {
			snprintf(err, errlen, "auth header %s: the value has "
			         "control characters", h->name);
			return MGW_EINVAL;
		}
		if (mgw_headers_adds(&e->auth, h->name, v) != 0) {
			snprintf(err, errlen, "out of memory");
			return MGW_ENOMEM;
		}
	}
	if (a->n_headers)
		e->opts.auth_headers = &e->auth;
	e->opts.auth_command = a->command;
	return 0;
}

static int build_specs(struct mgw_load_engine *e)
{
	const struct mgw_load_conf *c = e->conf;
	double sum = 0;

	e->specs = calloc(c->n_calls, sizeof(*e->specs));
	e->cum_weight = calloc(c->n_calls, sizeof(*e->cum_weight));
	if (!e->specs || !e->cum_weight)
		return MGW_ENOMEM;
	for (size_t i = 0; i < c->n_calls; i++) {
		const struct mgw_load_call *k = &c->calls[i];

		e->specs[i] = (struct mgw_load_call_spec){
			.name = k->name, .flow = (enum mgw_load_flow)k->flow,
			.tool = k->tool, .arguments = k->arguments,
			.weight = k->weight, .create_tool = k->create_tool,
			.handle_arg = k->handle_arg, .answers = k->answers,
			.max_rounds = k->max_rounds,
			.fork_every = k->fork_every, .fork_round = k->fork_round,
		};
		sum += k->weight;
		e->cum_weight[i] = sum;
	}
	return 0;
}

static int needs_tls(const struct mgw_load_conf *c)
{
	for (size_t i = 0; i < c->transport.n_targets; i++) {
		struct mgw_url u;

		if (mgw_url_parse(c->transport.targets[i], &u, NULL, 0) == 0 &&
		    u.tls)
			return 1;
	}
	return 0;
}

static int build_transport(struct mgw_load_engine *e, char *err, size_t errlen)
{
	const struct mgw_load_conf *c = e->conf;
	struct mgw_client_limits lim;
	long most = 1;

	e->target.conn = (enum mgw_load_conn)c->transport.connection;
	e->spread = c->spread_users || c->users > 0;
	e->users = (size_t)c->users;
	e->target.reconnect_after = (unsigned long)c->transport.reconnect_after;
	e->target.http2 = c->transport.http2;
	e->target.ca_file = c->transport.ca_file;
	if (c->transport.type == MGW_LOAD_STDIO) {
		e->target.stdio_cmd = c->transport.command;
		return 0;
	}
	e->target.urls = c->transport.targets;
	e->target.n_urls = c->transport.n_targets;
	if (needs_tls(c)) {
		char why[256];

		e->tls = mgw_tls_client_ctx(c->transport.ca_file, 1, why,
		                            sizeof(why));
		if (!e->tls) {
			snprintf(err, errlen, "TLS: %s", why);
			return MGW_EINVAL;
		}
		e->target.tls = e->tls;
	}
	for (size_t p = 0; p < c->n_phases; p++)
		if (c->phases[p].concurrency > most)
			most = c->phases[p].concurrency;
	mgw_client_limits_default(&lim);
	/* Every virtual user may hold a connection of its own to one origin;
	 * the agents' own timeout is the real bound, these are backstops. */
	lim.max_conns_per_origin = (size_t)most + 8;
	lim.max_idle_per_origin = (size_t)most + 8;
	lim.max_pending_per_origin = 2 * (size_t)most + 64;
	lim.tmo.connect = c->timeout > 0 && c->timeout < 10 ? c->timeout : 10;
	lim.tmo.first_byte = lim.tmo.idle = c->timeout > 0 ? c->timeout + 1 : 300;
	lim.tmo.total = 0;
	e->client = mgw_client_new(e->base, &lim);
	if (!e->client) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	return 0;
}

struct mgw_load_engine *mgw_load_engine_new(struct event_base *base,
                                            const struct mgw_load_conf *conf,
                                            char *err, size_t errlen)
{
	struct mgw_load_engine *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->base = base;
	e->conf = conf;
	mgw_headers_init(&e->auth);
	e->opts = (struct mgw_load_agent_opts){
		.dialect = (enum mgw_load_dialect)conf->dialect,
		.timeout = conf->timeout,
		.protocol_version = conf->protocol_version,
		.client_name = conf->client_name,
		.list_tools = conf->list_tools,
		.lost_session_match = conf->lost_session_match,
		.delete_after = (unsigned long)conf->delete_sessions,
	};
	e->timeout_ns = conf->timeout > 0 ? (uint64_t)(conf->timeout * 1e9) : 0;
	if (conf->seed)
		e->rng = (uint64_t)conf->seed * 0x9e3779b97f4a7c15ull;
	else if (mgw_random_bytes(&e->rng, sizeof(e->rng)) != 0)
		e->rng = mgw_now_ns();
	if (!e->rng)
		e->rng = 0x2545f4914f6cdd1dull;
	if (build_auth(e, err, errlen) != 0 ||
	    build_transport(e, err, errlen) != 0)
		goto fail;
	e->st = mgw_load_stats_new(conf);
	e->tick_ev = evtimer_new(base, on_tick, e);
	e->end_ev = evtimer_new(base, on_end, e);
	e->sec_ev = evtimer_new(base, on_second, e);
	e->drain_ev = evtimer_new(base, on_drain_or_close_timeout, e);
	e->next_ev = event_new(base, -1, 0, on_next, e);
	if (build_specs(e) != 0 || !e->st || !e->tick_ev || !e->end_ev ||
	    !e->sec_ev || !e->drain_ev || !e->next_ev) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return e;
fail:
	mgw_load_engine_free(e);
	return NULL;
}

void mgw_load_engine_free(struct mgw_load_engine *e)
{
	struct event *evs[5];

	if (!e)
		return;
	evs[0] = e->tick_ev;
	evs[1] = e->end_ev;
	evs[2] = e->sec_ev;
	evs[3] = e->drain_ev;
	evs[4] = e->next_ev;
	/* Agents first: they may hold requests on the client. */
	for (size_t i = 0; i < e->n_slots; i++)
		slot_free(e->slots[i]);
	free(e->slots);
	free(e->idle);
	for (size_t i = 0; i < 5; i++)
		if (evs[i])
			event_free(evs[i]);
	mgw_client_free(e->client);
	if (e->tls)
		SSL_CTX_free(e->tls);
	mgw_headers_deinit(&e->auth);
	mgw_load_stats_free(e->st);
	free(e->specs);
	free(e->cum_weight);
	free(e->backlog);
	free(e);
}

int mgw_load_engine_start(struct mgw_load_engine *e,
                          mgw_load_engine_cb finished,
                          mgw_load_engine_cb progress, void *arg)
{
	uint64_t now = mgw_now_ns();

	if (e->started)
		return MGW_EINVAL;
	e->finished = finished;
	e->progress = progress;
	e->arg = arg;
	e->started = 1;
	mgw_load_stats_start(e->st, now);
	arm_at(e->sec_ev, now + NS);
	defer(e); /* the first phase starts from the loop */
	return 0;
}

void mgw_load_engine_stop(struct mgw_load_engine *e)
{
	if (e->state >= ST_CLOSING)
		return;
	e->interrupted = 1;
	end_issue(e, mgw_now_ns());
}

const struct mgw_load_stats *mgw_load_engine_stats(
	const struct mgw_load_engine *e)
{
	return e->st;
}

size_t mgw_load_engine_phase(const struct mgw_load_engine *e)
{
	return e->phase;
}

size_t mgw_load_engine_inflight(const struct mgw_load_engine *e)
{
	return e->inflight;
}
