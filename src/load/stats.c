/* stats.c - the measurements of a `mcpgw load` run: per-phase and per-tool
 * rows, totals over the measured (non-warmup) phases, and the per-second
 * timeline cut from completion times. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "load/histogram.h"
#include "load/stats.h"

static const char *const outcome_names[MGW_LOAD_OUTCOME_N] = {
	[MGW_LOAD_OK] = "ok",
	[MGW_LOAD_SESSION_LOST] = "session_lost",
	[MGW_LOAD_HANDLE_LOST] = "handle_lost",
	[MGW_LOAD_HTTP_4XX] = "http_4xx",
	[MGW_LOAD_HTTP_5XX] = "http_5xx",
	[MGW_LOAD_RPC_ERROR] = "rpc_error",
	[MGW_LOAD_TOOL_ERROR] = "tool_error",
	[MGW_LOAD_TIMEOUT] = "timeout",
	[MGW_LOAD_CONNECT_ERROR] = "connect_error",
	[MGW_LOAD_TASK_LOST] = "task_lost",
	[MGW_LOAD_STATE_LOST] = "state_lost",
	[MGW_LOAD_DELETED_SERVED] = "deleted_served",
};

const char *mgw_load_outcome_name(enum mgw_load_outcome o)
{
	return (unsigned)o < MGW_LOAD_OUTCOME_N ? outcome_names[o] : "?";
}

static int row_init(struct mgw_load_row *r)
{
	memset(r, 0, sizeof(*r));
	r->lat = mgw_hist_new();
	r->svc = mgw_hist_new();
	return r->lat && r->svc ? 0 : MGW_ENOMEM;
}

static void row_deinit(struct mgw_load_row *r)
{
	mgw_hist_free(r->lat);
	mgw_hist_free(r->svc);
	r->lat = r->svc = NULL;
}

static void counts_add(struct mgw_load_counts *d, const struct mgw_load_counts *s)
{
	d->requests += s->requests;
	d->ok += s->ok;
	for (unsigned i = 0; i < MGW_LOAD_OUTCOME_N; i++)
		d->fail[i] += s->fail[i];
	d->shed += s->shed;
	d->reinit += s->reinit;
	d->reconnects += s->reconnects;
	d->dialogues += s->dialogues;
	d->rounds += s->rounds;
	d->represented += s->represented;
	d->forked += s->forked;
	d->refused += s->refused;
	d->tasks += s->tasks;
	d->polls += s->polls;
	d->deletes += s->deletes;
	d->bytes += s->bytes;
}

static void row_merge(struct mgw_load_row *d, const struct mgw_load_row *s)
{
	counts_add(&d->c, &s->c);
	mgw_hist_merge(d->lat, s->lat);
	mgw_hist_merge(d->svc, s->svc);
}

static int phase_init(struct mgw_load_phase_stats *ps, size_t n_tools)
{
	int rc = row_init(&ps->all);

	ps->tools = calloc(n_tools ? n_tools : 1, sizeof(*ps->tools));
	if (!ps->tools)
		return MGW_ENOMEM;
	for (size_t t = 0; t < n_tools; t++)
		if (row_init(&ps->tools[t]) != 0)
			rc = MGW_ENOMEM;
	return rc;
}

static void phase_deinit(struct mgw_load_phase_stats *ps, size_t n_tools)
{
	row_deinit(&ps->all);
	for (size_t t = 0; ps->tools && t < n_tools; t++)
		row_deinit(&ps->tools[t]);
	free(ps->tools);
	ps->tools = NULL;
}

void mgw_load_stats_free(struct mgw_load_stats *st)
{
	if (!st)
		return;
	for (size_t p = 0; st->phases && p < st->n_phases; p++)
		phase_deinit(&st->phases[p], st->n_tools);
	free(st->phases);
	phase_deinit(&st->total, st->n_tools);
	for (size_t t = 0; t < st->n_tools; t++)
		free(st->tools[t]);
	free(st->tools);
	free(st->call_tool);
	free(st->timeline);
	mgw_hist_free(st->cur_hist);
	free(st);
}

/* Tool rows by distinct call name: a scenario may list the same tool
 * twice with different arguments and still wants one row for it. */
static int map_tools(struct mgw_load_stats *st, const struct mgw_load_conf *conf)
{
	st->n_calls = conf->n_calls;
	st->call_tool = calloc(conf->n_calls ? conf->n_calls : 1,
	                       sizeof(*st->call_tool));
	st->tools = calloc(conf->n_calls ? conf->n_calls : 1, sizeof(*st->tools));
	if (!st->call_tool || !st->tools)
		return MGW_ENOMEM;
	for (size_t i = 0; i < conf->n_calls; i++) {
		const char *name = conf->calls[i].name;
		size_t t;

		for (t = 0; t < st->n_tools; t++)
			if (strcmp(st->tools[t], name) == 0)
				break;
		if (t == st->n_tools) {
			st->tools[t] = strdup(name);
			if (!st->tools[t])
				return MGW_ENOMEM;
			st->n_tools++;
		}
		st->call_tool[i] = t;
	}
	return 0;
}

struct mgw_load_stats *mgw_load_stats_new(const struct mgw_load_conf *conf)
{
	struct mgw_load_stats *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->n_phases = conf->n_phases;
	st->phases = calloc(conf->n_phases ? conf->n_phases : 1,
	                    sizeof(*st->phases));
	st->cur_hist = mgw_hist_new();
	if (!st->phases || !st->cur_hist || map_tools(st, conf) != 0)
		goto fail;
	for (size_t p = 0; p < conf->n_phases; p++) {
		struct mgw_load_phase_stats *ps = &st->phases[p];
		const struct mgw_load_phase *ph = &conf->phases[p];

		ps->name = ph->name;
		ps->warmup = ph->warmup;
		ps->mode = ph->mode;
		ps->concurrency = ph->concurrency;
		ps->rate = ph->rate;
		if (phase_init(ps, st->n_tools) != 0)
			goto fail;
	}
	st->total.name = "total";
	if (phase_init(&st->total, st->n_tools) != 0)
		goto fail;
	return st;
fail:
	mgw_load_stats_free(st);
	return NULL;
}

void mgw_load_stats_start(struct mgw_load_stats *st, uint64_t now)
{
	st->start_ns = now;
	st->cur_t = 0;
}

void mgw_load_stats_phase_start(struct mgw_load_stats *st, size_t p,
                                uint64_t now)
{
	struct mgw_load_phase_stats *ps = &st->phases[p];

	/* A second that begins with this phase is this phase's row. */
	st->live_phase = (uint32_t)p;
	mgw_load_stats_advance(st, now);
	ps->ran = 1;
	ps->start_ns = ps->issue_end_ns = ps->end_ns = now;
	if (now == st->start_ns)
		st->cur_phase = (uint32_t)p;
}

void mgw_load_stats_phase_issue_end(struct mgw_load_stats *st, size_t p,
                                    uint64_t now)
{
	st->phases[p].issue_end_ns = now;
	if (st->phases[p].end_ns < now)
		st->phases[p].end_ns = now;
}

void mgw_load_stats_phase_end(struct mgw_load_stats *st, size_t p,
                              uint64_t now)
{
	struct mgw_load_phase_stats *ps = &st->phases[p];

	if (ps->end_ns < now)
		ps->end_ns = now;
	ps->window_s = (double)(ps->issue_end_ns - ps->start_ns) / 1e9;
	ps->duration_s = (double)(ps->end_ns - ps->start_ns) / 1e9;
}

static void close_second(struct mgw_load_stats *st)
{
	struct mgw_load_tl_row *row;

	if (st->n_timeline >= MGW_LOAD_TL_MAX)
		goto reset;
	if (st->n_timeline == st->cap_timeline) {
		size_t cap = st->cap_timeline ? 2 * st->cap_timeline : 64;
		void *v = realloc(st->timeline, cap * sizeof(*st->timeline));

		if (!v)
			goto reset; /* the phases keep counting; only a row is lost */
		st->timeline = v;
		st->cap_timeline = cap;
	}
	row = &st->timeline[st->n_timeline++];
	row->t = st->cur_t;
	row->phase = st->cur_phase;
	row->c = st->cur;
	row->p50_ns = mgw_hist_percentile(st->cur_hist, 50);
	row->p99_ns = mgw_hist_percentile(st->cur_hist, 99);
reset:
	memset(&st->cur, 0, sizeof(st->cur));
	if (st->cur_hist->count)
		mgw_hist_reset(st->cur_hist);
	st->cur_t++;
	st->cur_phase = st->live_phase;
}

void mgw_load_stats_advance(struct mgw_load_stats *st, uint64_t now)
{
	uint64_t sec = now > st->start_ns ? (now - st->start_ns) / 1000000000u : 0;

	while (st->cur_t < sec && !st->finished)
		close_second(st);
}

static void count_result(struct mgw_load_counts *c,
                         const struct mgw_load_result *r)
{
	c->requests++;
	if (r->outcome == MGW_LOAD_OK)
		c->ok++;
	else if ((unsigned)r->outcome < MGW_LOAD_OUTCOME_N)
		c->fail[r->outcome]++;
	else
		c->fail[MGW_LOAD_CONNECT_ERROR]++; /* never: agents classify */
	c->reinit += r->reinitialized;
	c->tasks += r->tasks;
	c->polls += r->polls;
	c->deletes += r->deletes;
	c->reconnects += r->reconnected;
	c->dialogues += r->dialogue;
	c->rounds += r->rounds;
	c->represented += r->represented;
	c->forked += r->forked;
	c->refused += r->refused;
	c->bytes += r->bytes;
}

static void row_call(struct mgw_load_row *row, const struct mgw_load_result *r,
                     uint64_t lat, uint64_t svc)
{
	count_result(&row->c, r);
	if (r->outcome != MGW_LOAD_OK)
		return;
	mgw_hist_record(row->lat, lat);
	mgw_hist_record(row->svc, svc);
}

void mgw_load_stats_call(struct mgw_load_stats *st, size_t p, size_t call,
                         const struct mgw_load_result *r, uint64_t lat_ns,
                         uint64_t svc_ns, uint64_t now)
{
	struct mgw_load_phase_stats *ps = &st->phases[p];

	mgw_load_stats_advance(st, now);
	row_call(&ps->all, r, lat_ns, svc_ns);
	row_call(&ps->tools[st->call_tool[call]], r, lat_ns, svc_ns);
	if (ps->end_ns < now)
		ps->end_ns = now;
	count_result(&st->cur, r);
	if (r->outcome == MGW_LOAD_OK)
		mgw_hist_record(st->cur_hist, lat_ns);
	else if (st->n_samples < MGW_LOAD_FAIL_SAMPLES) {
		struct mgw_load_fail_sample *fs = &st->samples[st->n_samples++];

		fs->t_s = now > st->start_ns ? (double)(now - st->start_ns) / 1e9 : 0;
		fs->outcome = (int)r->outcome;
		fs->status = r->status;
		fs->call = call;
		snprintf(fs->detail, sizeof(fs->detail), "%s",
		         r->detail ? r->detail : "");
	}
}

void mgw_load_stats_shed(struct mgw_load_stats *st, size_t p, size_t call,
                         uint64_t now)
{
	struct mgw_load_phase_stats *ps = &st->phases[p];

	mgw_load_stats_advance(st, now);
	ps->all.c.shed++;
	ps->tools[st->call_tool[call]].c.shed++;
	st->cur.shed++;
}

int mgw_load_stats_finish(struct mgw_load_stats *st, uint64_t now)
{
	struct mgw_load_phase_stats *tot = &st->total;

	mgw_load_stats_advance(st, now);
	if (st->finished)
		return 0;
	/* The last, partial second gets its row too (a run shorter than a
	 * second still has one). */
	if (now > st->start_ns + (uint64_t)st->cur_t * 1000000000u ||
	    st->cur.requests || st->cur.shed || st->n_timeline == 0)
		close_second(st);
	st->finished = 1;
	for (size_t p = 0; p < st->n_phases; p++) {
		const struct mgw_load_phase_stats *ps = &st->phases[p];

		if (!ps->ran || ps->warmup)
			continue;
		if (!tot->ran) {
			tot->ran = 1;
			tot->start_ns = ps->start_ns;
			tot->mode = ps->mode;
			tot->concurrency = ps->concurrency;
			tot->rate = ps->rate;
		}
		/* A total over phases of different shapes has no single
		 * concurrency or rate: report the largest. */
		if (ps->concurrency > tot->concurrency)
			tot->concurrency = ps->concurrency;
		if (ps->rate > tot->rate)
			tot->rate = ps->rate;
		if (ps->mode != tot->mode)
			tot->mode = -1;
		tot->end_ns = ps->end_ns;
		tot->issue_end_ns = ps->issue_end_ns;
		tot->window_s += ps->window_s;
		tot->duration_s += ps->duration_s;
		row_merge(&tot->all, &ps->all);
		for (size_t t = 0; t < st->n_tools; t++)
			row_merge(&tot->tools[t], &ps->tools[t]);
	}
	return 0;
}

uint64_t mgw_load_failed(const struct mgw_load_counts *c)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < MGW_LOAD_OUTCOME_N; i++)
		n += c->fail[i];
	return n;
}

double mgw_load_error_rate(const struct mgw_load_counts *c)
{
	uint64_t tried = c->requests + c->shed;

	if (tried == 0)
		return 0;
	return (double)(mgw_load_failed(c) + c->shed) / (double)tried;
}

/* Offered: what the client tried to start, per second of the window in
 * which it was starting calls (open loop: the rate it held, shed ticks
 * included): every call started ends as a request, every tick not
 * started is shed. */
double mgw_load_offered_rps(const struct mgw_load_phase_stats *ps,
                            const struct mgw_load_row *row)
{
	if (ps->window_s <= 0)
		return 0;
	return (double)(row->c.requests + row->c.shed) / ps->window_s;
}

double mgw_load_achieved_rps(const struct mgw_load_phase_stats *ps,
                             const struct mgw_load_row *row)
{
	return ps->duration_s > 0 ? (double)row->c.ok / ps->duration_s : 0;
}
