/* soak_report.c - from a soak's run record to its figures and verdict.
 *
 * Growth is the end sample against the start sample, the start being the
 * first sample due after the warm-up: a gateway's first seconds fill its
 * pools, caches and allocator arenas, and counting those as growth would
 * fail every run.  The end is the last sample, taken while the load still
 * ran (samples are due before the planned end only).  A loss is a call
 * the load client saw fail, whatever the reason; shed ticks (calls the
 * client never sent because it had no free virtual user) are reported
 * beside the losses, not among them: nothing reached the gateway. */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/src/soak_report.h"

static double num(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(round(v * 1000.0) / 1000.0) : json_null();
}

/* A failure kind of the load report that is not a loss (see above). */
static int not_a_loss(const char *kind)
{
	return strcmp(kind, "shed") == 0;
}

/* One sample in the results' compact shape. */
static json_t *compact_sample(const json_t *s)
{
	const json_t *load = json_object_get(s, "load");

	return json_pack("{s:O, s:O, s:O, s:O, s:O, s:O}",
		"t_s", json_object_get(s, "t_s"),
		"rss_kib", json_object_get(s, "rss_kib"),
		"fds", json_object_get(s, "fds"),
		"done", json_is_object(load) ? json_object_get(load, "requests")
		                             : json_null(),
		"lost", json_is_object(load) ? json_object_get(load, "failed")
		                             : json_null(),
		"kills", json_object_get(s, "kills"));
}

/* start, end, max and growth of one sampled figure (key) over samples,
 * the start being the first sample due at or after warmup_s. */
static json_t *figure(const json_t *samples, const char *key, double warmup_s)
{
	double start = NAN, end = NAN, max = NAN, start_t = NAN, end_t = NAN;
	double growth = NAN;
	const json_t *s;
	size_t i;

	json_array_foreach(samples, i, s) {
		double v = num(json_object_get(s, key));
		double due = num(json_object_get(s, "due_s"));

		if (isnan(v))
			continue;
		if (isnan(max) || v > max)
			max = v;
		if (isnan(start) && due >= warmup_s - 1e-9) {
			start = v;
			start_t = num(json_object_get(s, "t_s"));
		}
		if (!isnan(start)) {
			end = v;
			end_t = num(json_object_get(s, "t_s"));
		}
	}
	/* one sample is no trend: start and end must be two */
	if (!isnan(start) && start > 0 && !isnan(end) && end_t > start_t)
		growth = (end - start) / start * 100.0;
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}",
		"start", num_or_null(start), "start_t_s", num_or_null(start_t),
		"end", num_or_null(end), "end_t_s", num_or_null(end_t),
		"max", num_or_null(max), "growth_pct", num_or_null(growth));
}

static json_t *losses(const json_t *failures, json_int_t *total)
{
	json_t *by = json_object();
	const char *k;
	json_t *v;

	*total = 0;
	json_object_foreach((json_t *)failures, k, v) {
		if (not_a_loss(k) || !json_is_integer(v) || json_integer_value(v) <= 0)
			continue;
		*total += json_integer_value(v);
		json_object_set(by, k, v);
	}
	return json_pack("{s:I, s:o}", "total", *total, "by_reason", by);
}

static json_t *kills(const json_t *rec, int planned, int *done, int *verified)
{
	json_t *at = json_array();
	const json_t *k;
	size_t i;

	*done = *verified = 0;
	json_array_foreach(json_object_get(rec, "kills"), i, k) {
		(*done)++;
		if (json_is_true(json_object_get(k, "valid")) &&
		    json_is_true(json_object_get(json_object_get(k, "replacement"),
		                                 "healthy")))
			(*verified)++;
		json_array_append(at, json_object_get(k, "at_s"));
	}
	return json_pack("{s:i, s:i, s:i, s:o}", "planned", planned, "done", *done,
	                 "verified", *verified, "at_s", at);
}

/* Sums key over the replays of every upstream group of stats. */
static json_t *sum_replays(const json_t *stats, const char *key)
{
	const json_t *u;
	json_int_t sum = 0;
	size_t i;
	int any = 0;

	json_array_foreach(json_object_get(stats, "upstreams"), i, u) {
		const json_t *v = json_object_get(json_object_get(u, "replays"), key);

		if (json_is_integer(v)) {
			sum += json_integer_value(v);
			any = 1;
		}
	}
	return any ? json_integer(sum) : json_null();
}

/* The gateway's replays and re-pins, from its last counters read. */
static json_t *gateway(const json_t *rec)
{
	const json_t *gs = json_object_get(rec, "gateway_stats"), *last = NULL;
	const json_t *e, *repinned;
	size_t i;

	json_array_foreach(gs, i, e)
		if (json_is_object(json_object_get(e, "stats")))
			last = json_object_get(e, "stats");
	repinned = json_object_get(json_object_get(last, "sessions"), "repinned");
	return json_pack("{s:o, s:o, s:O}",
		"replayed", sum_replays(last, "replayed"),
		"refused", sum_replays(last, "refused"),
		"repinned", json_is_integer(repinned) ? repinned : json_null());
}

static void target(json_t *arr, int *all, const char *name, double limit,
                   double value, int passed)
{
	json_array_append_new(arr, json_pack("{s:s, s:o, s:o, s:b}",
		"name", name, "limit", num_or_null(limit),
		"value", num_or_null(value), "passed", passed));
	if (!passed)
		*all = 0;
}

json_t *mgw_bench_soak_results(const json_t *rec,
                               const struct mgw_bench_soak_targets *t)
{
	const json_t *samples = json_object_get(rec, "samples");
	const json_t *total = json_object_get(json_object_get(rec, "load"),
	                                      "total");
	const json_t *lat = json_object_get(total, "latency_ms");
	const json_t *fails = json_object_get(total, "failures");
	json_t *out, *compact = json_array(), *rss, *fds, *targets = json_array();
	json_int_t lost = 0;
	double rss_g, fds_g, achieved = num(json_object_get(total,
	                                                    "achieved_rps"));
	int done = 0, verified = 0, all = 1;
	int valid = json_is_true(json_object_get(rec, "valid"));
	const json_t *s;
	size_t i;

	json_array_foreach(samples, i, s)
		json_array_append_new(compact, compact_sample(s));
	rss = figure(samples, "rss_kib", t->warmup_s);
	fds = figure(samples, "fds", t->warmup_s);
	rss_g = num(json_object_get(rss, "growth_pct"));
	fds_g = num(json_object_get(fds, "growth_pct"));
	out = json_pack("{s:b, s:O?, s:o, s:o, s:o, s:o}",
		"valid", valid,
		"invalid_reason", json_object_get(rec, "invalid_reason"),
		"warmup_s", num_or_null(t->warmup_s),
		"samples", compact,
		"rss_kib", rss,
		"fds", fds);
	if (!out)
		return NULL;
	json_object_set_new(out, "load", json_pack("{s:O?, s:O?, s:o, s:o, s:o, "
	                                            "s:O?}",
		"requests", json_object_get(total, "requests"),
		"ok", json_object_get(total, "ok"),
		"achieved_rps", num_or_null(achieved),
		"p50_ms", num_or_null(num(json_object_get(lat, "p50"))),
		"p99_ms", num_or_null(num(json_object_get(lat, "p99"))),
		"shed", json_object_get(fails, "shed")));
	json_object_set_new(out, "losses", losses(fails, &lost));
	json_object_set(out, "first_failures", json_is_array(json_object_get(
		json_object_get(rec, "load"), "first_failures"))
		? json_object_get(json_object_get(rec, "load"), "first_failures")
		: json_array());
	json_object_set_new(out, "kills", kills(rec, t->kills_planned, &done,
	                                        &verified));
	json_object_set_new(out, "gateway", gateway(rec));
	target(targets, &all, "run valid (fleet up, load report read)", 1,
	       valid, valid);
	target(targets, &all, "kills verified (of planned)", t->kills_planned,
	       verified, verified == t->kills_planned);
	target(targets, &all, "RSS growth % (at most)", t->max_growth_pct, rss_g,
	       !isnan(rss_g) && rss_g <= t->max_growth_pct);
	target(targets, &all, "open fds growth % (at most)", t->max_growth_pct,
	       fds_g, !isnan(fds_g) && fds_g <= t->max_growth_pct);
	target(targets, &all, "losses (at most)", (double)t->max_losses,
	       (double)lost, total && lost <= t->max_losses);
	json_object_set_new(out, "targets", targets);
	json_object_set_new(out, "passed", json_boolean(all));
	return out;
}

static void print_figure(FILE *f, const char *what, const json_t *fig,
                         double scale, const char *unit)
{
	double st = num(json_object_get(fig, "start")),
	       en = num(json_object_get(fig, "end")),
	       mx = num(json_object_get(fig, "max")),
	       g = num(json_object_get(fig, "growth_pct"));

	fprintf(f, "  %-9s start %.1f%s (t=%.0f s)  end %.1f%s (t=%.0f s)  max "
	        "%.1f%s  growth ", what, st / scale, unit,
	        num(json_object_get(fig, "start_t_s")), en / scale, unit,
	        num(json_object_get(fig, "end_t_s")), mx / scale, unit);
	if (isnan(g))
		fputs("n/a\n", f);
	else
		fprintf(f, "%+.2f %%\n", g);
}

void mgw_bench_soak_summary(FILE *f, const json_t *r)
{
	const json_t *load = json_object_get(r, "load"),
	             *ls = json_object_get(r, "losses"),
	             *k = json_object_get(r, "kills"),
	             *gw = json_object_get(r, "gateway"), *t, *v;
	const char *key;
	size_t i;

	fprintf(f, "\nsoak: %zu samples, warm-up %.0f s\n",
	        json_array_size(json_object_get(r, "samples")),
	        num(json_object_get(r, "warmup_s")));
	print_figure(f, "RSS", json_object_get(r, "rss_kib"), 1024.0, " MiB");
	print_figure(f, "open fds", json_object_get(r, "fds"), 1.0, "");
	fprintf(f, "  load      %lld calls, %lld ok, %.1f rps achieved, p50 %.2f "
	        "ms, p99 %.2f ms, shed %lld\n",
	        (long long)json_integer_value(json_object_get(load, "requests")),
	        (long long)json_integer_value(json_object_get(load, "ok")),
	        num(json_object_get(load, "achieved_rps")),
	        num(json_object_get(load, "p50_ms")),
	        num(json_object_get(load, "p99_ms")),
	        (long long)json_integer_value(json_object_get(load, "shed")));
	fprintf(f, "  kills     %lld planned, %lld done, %lld verified\n",
	        (long long)json_integer_value(json_object_get(k, "planned")),
	        (long long)json_integer_value(json_object_get(k, "done")),
	        (long long)json_integer_value(json_object_get(k, "verified")));
	fprintf(f, "  gateway   replayed %lld, refused %lld",
	        (long long)json_integer_value(json_object_get(gw, "replayed")),
	        (long long)json_integer_value(json_object_get(gw, "refused")));
	if (json_is_integer(json_object_get(gw, "repinned")))
		fprintf(f, ", sessions re-pinned %lld", (long long)
		        json_integer_value(json_object_get(gw, "repinned")));
	fprintf(f, "\n  losses    %lld",
	        (long long)json_integer_value(json_object_get(ls, "total")));
	i = 0;
	json_object_foreach((json_t *)json_object_get(ls, "by_reason"), key, v)
		fprintf(f, "%s%s %lld", i++ ? ", " : " (", key,
		        (long long)json_integer_value(v));
	fputs(i ? ")\n" : "\n", f);
	if (!json_is_true(json_object_get(r, "valid")))
		fprintf(f, "  INVALID   %s\n", json_string_value(
		            json_object_get(r, "invalid_reason")));
	fputs("targets:\n", f);
	json_array_foreach(json_object_get(r, "targets"), i, t) {
		double val = num(json_object_get(t, "value"));

		fprintf(f, "  %s  %s: ", json_is_true(json_object_get(t, "passed"))
		                          ? "PASS" : "MISS",
		        json_string_value(json_object_get(t, "name")));
		if (isnan(val))
			fputs("not measured", f);
		else
			fprintf(f, "%g", val);
		fprintf(f, " (limit %g)\n", num(json_object_get(t, "limit")));
	}
	fprintf(f, "soak %s\n", json_is_true(json_object_get(r, "passed"))
	                        ? "passed: every target met"
	                        : "FAILED: a target was missed");
}
