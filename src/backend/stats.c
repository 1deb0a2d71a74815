/* stats.c - the GET /stats document.  Tests and the churn bench read it
 * to see which replica served what, how many sessions were lost or
 * replayed (initialize_count), and how many handles went missing. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/mrtr.h"
#include "backend/state.h"
#include "backend/strmap.h"
#include "backend/tasks.h"
#include "http/server.h"
#include "util/time.h"

const char *mgw_be_era_name(enum mgw_era_conf era)
{
	switch (era) {
	case MGW_ERA_LEGACY: return "legacy";
	case MGW_ERA_MODERN: return "modern";
	case MGW_ERA_DUAL: return "dual";
	}
	return "?";
}

const char *mgw_be_state_name(enum mgw_state_conf state)
{
	switch (state) {
	case MGW_STATE_MEMORY: return "memory";
	case MGW_STATE_HMAC: return "hmac";
	case MGW_STATE_REDIS: return "redis";
	}
	return "?";
}

void mgw_be_stats_method(struct mgw_be_stats *st, const char *method)
{
	const char *name = method ? method : "(response)";

	for (size_t i = 0; i < st->n_methods; i++) {
		if (strcmp(st->methods[i].name, name) == 0) {
			st->methods[i].count++;
			return;
		}
	}
	if (st->n_methods < MGW_BE_METHOD_SLOTS &&
	    strlen(name) < sizeof(st->methods[0].name)) {
		snprintf(st->methods[st->n_methods].name,
		         sizeof(st->methods[0].name), "%s", name);
		st->methods[st->n_methods].count = 1;
		st->n_methods++;
		return;
	}
	st->other_methods++;
}

#define U(v) json_integer((json_int_t)(v))

json_t *mgw_be_stats_json(const struct mgw_backend *be)
{
	const struct mgw_be_stats *st = &be->stats;
	json_t *o = json_object(), *by = json_object(), *store = json_object();
	size_t get_streams = 0, listen_streams = 0;

	for (const struct mgw_be_stream *s = be->streams; s; s = s->next) {
		if (s->kind == MGW_BE_STREAM_GET)
			get_streams++;
		else
			listen_streams++;
	}
	for (size_t i = 0; i < st->n_methods; i++)
		json_object_set_new(by, st->methods[i].name, U(st->methods[i].count));
	if (st->other_methods)
		json_object_set_new(by, "(other)", U(st->other_methods));
	json_object_set_new(store, "design", json_string(mgw_be_state_name(be->conf.state)));
	if (be->store && be->store->ops->describe)
		be->store->ops->describe(be->store, store);

	json_object_set_new(o, "id", json_string(be->conf.id ? be->conf.id : ""));
	json_object_set_new(o, "era", json_string(mgw_be_era_name(be->conf.era)));
	json_object_set_new(o, "state", json_string(mgw_be_state_name(be->conf.state)));
	json_object_set_new(o, "sessions", U(be->sessions ? mgw_strmap_count(be->sessions) : 0));
	json_object_set_new(o, "sessions_created", U(st->sessions_created));
	json_object_set_new(o, "sessions_expired", U(st->sessions_expired));
	json_object_set_new(o, "sessions_deleted", U(st->sessions_deleted));
	json_object_set_new(o, "initialize_count", U(st->initialize_count));
	json_object_set_new(o, "requests", U(st->requests));
	json_object_set_new(o, "requests_by_method", by);
	json_object_set_new(o, "http_requests", U(st->http_requests));
	json_object_set_new(o, "lost_session_rejections", U(st->lost_session_rejections));
	json_object_set_new(o, "missing_session_rejections", U(st->missing_session_rejections));
	json_object_set_new(o, "handle_losses", U(st->handle_losses));
	json_object_set_new(o, "header_mismatches", U(st->header_mismatches));
	json_object_set_new(o, "unsupported_versions", U(st->unsupported_versions));
	json_object_set_new(o, "tool_calls", U(st->tool_calls));
	json_object_set_new(o, "tool_errors", U(st->tool_errors));
	json_object_set_new(o, "cancelled", U(st->cancelled));
	json_object_set_new(o, "sse_streams_open", U(be->n_streams));
	json_object_set_new(o, "get_streams_open", U(get_streams));
	json_object_set_new(o, "listen_streams_open", U(listen_streams));
	json_object_set_new(o, "sse_streams_total", U(st->sse_streams_total));
	json_object_set_new(o, "notifications_pushed", U(st->notifications_pushed));
	json_object_set_new(o, "state_store", store);
	mgw_mrtr_describe(be, o);
	mgw_be_tasks_describe(be, o);
	json_object_set_new(o, "uptime_s", json_real((double)(mgw_now_ms() - be->start_ms) / 1000.0));
	json_object_set_new(o, "connections", U(be->http ? mgw_http_server_connections(be->http) : 0));
	json_object_set_new(o, "inflight", U(be->http ? mgw_http_server_inflight(be->http) : 0));
	return o;
}
