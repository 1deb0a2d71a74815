/* agent.c - a virtual user of `mcpgw load` (see agent.h): the state
 * machine of one logical call.
 *
 * A call is a short chain of messages, each sent only once the previous
 * one was answered: the era probe (auto, until the era is known), the
 * legacy handshake (initialize, notifications/initialized; whenever the
 * agent has no session), tools/list (once per session or, modern, once),
 * the handle's creation (handle flows, while none is held), and finally
 * the tools/call.  advance() picks the next message from the agent's
 * state; ld_answer() judges each answer and either advances or ends the
 * call with one outcome.  Recovery is deferred to the next call on
 * purpose: the call that found the session (or handle) gone reports it,
 * and the next one pays for the new handshake, as a real client would.
 *
 * on_done always runs from done_ev, never from inside an API call or a
 * transport callback, so the engine may call, close or free the agent
 * from it without re-entering the HTTP client. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/headers.h"
#include "load/agent_impl.h"
#include "mcp/json.h"
#include "util/decimal.h"
#include "util/time.h"

static void advance(struct mgw_load_agent *a);

/* ---- messages ---- */

void ld_msg_free(struct ld_msg *m)
{
	if (!m)
		return;
	free(m->body);
	mgw_headers_deinit(&m->hdr);
	free(m);
}

/* Appends n bytes of s at *w. */
static char *put(char *w, const char *s, size_t n)
{
	memcpy(w, s, n);
	return w + n;
}

/* m's body: the JSON-RPC envelope written around params (stolen; may be
 * NULL), which alone goes through the JSON writer.  method is one of the
 * client's own literals (printable ASCII, no quote or backslash). */
static int set_body(struct ld_msg *m, const char *method, json_t *params)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\"", idk[] = ",\"id\":",
	                  mk[] = ",\"method\":\"", pk[] = ",\"params\":";
	char id[MGW_DEC_BUF], *p = NULL, *w;
	size_t plen = 0, ilen = 0, mlen = strlen(method);

	if (params) {
		p = mgw_json_dump(params, &plen);
		json_decref(params);
		if (!p)
			return MGW_ENOMEM;
	}
	if (m->id)
		ilen = mgw_dec(id, (uint64_t)m->id);
	m->body = malloc(sizeof(head) + sizeof(idk) + ilen + sizeof(mk) + mlen +
	                 sizeof(pk) + plen + 2);
	if (!m->body) {
		free(p);
		return MGW_ENOMEM;
	}
	w = put(m->body, head, sizeof(head) - 1);
	if (m->id) {
		w = put(w, idk, sizeof(idk) - 1);
		w = put(w, id, ilen);
	}
	w = put(w, mk, sizeof(mk) - 1);
	w = put(w, method, mlen);
	*w++ = '"';
	if (p) {
		w = put(w, pk, sizeof(pk) - 1);
		w = put(w, p, plen);
		free(p);
	}
	*w++ = '}';
	*w = '\0';
	m->body_len = (size_t)(w - m->body);
	return 0;
}

struct ld_msg *ld_msg_build(struct mgw_load_agent *a, const char *method,
                            json_t *params, int notification)
{
	struct ld_msg *m = calloc(1, sizeof(*m));

	if (!m) {
		json_decref(params);
		return NULL;
	}
	mgw_headers_init(&m->hdr);
	m->http_method = "POST";
	m->rpc_method = method;
	m->id = notification ? 0 : a->next_id++;
	if (set_body(m, method, params) != 0 ||
	    mgw_headers_adds(&m->hdr, "Content-Type", "application/json") != 0 ||
	    mgw_headers_adds(&m->hdr, "Accept",
	                     "application/json, text/event-stream") != 0) {
		ld_msg_free(m);
		return NULL;
	}
	return m;
}

/* A request in the agent's era. */
static struct ld_msg *era_request(struct mgw_load_agent *a, const char *method,
                                  const char *name, json_t *params)
{
	if (a->era == MGW_ERA_IS_MODERN)
		return ld_modern_request(a, method, name, params);
	return ld_legacy_request(a, method, params);
}

/* ---- handles ---- */

static struct ld_handle *handle_slot(struct mgw_load_agent *a,
                                     const struct mgw_load_call_spec *spec,
                                     int create)
{
	struct ld_handle *h;

	for (size_t i = 0; i < a->n_handles; i++)
		if (a->handles[i].spec == spec)
			return &a->handles[i];
	if (!create)
		return NULL;
	h = realloc(a->handles, (a->n_handles + 1) * sizeof(*h));
	if (!h)
		return NULL;
	a->handles = h;
	h = &a->handles[a->n_handles++];
	h->spec = spec;
	h->handle = NULL;
	return h;
}

static const char *handle_get(struct mgw_load_agent *a,
                              const struct mgw_load_call_spec *spec)
{
	struct ld_handle *h = handle_slot(a, spec, 0);

	return h ? h->handle : NULL;
}

static int handle_set(struct mgw_load_agent *a,
                      const struct mgw_load_call_spec *spec, const char *v)
{
	struct ld_handle *h = handle_slot(a, spec, 1);
	char *c = v ? strdup(v) : NULL;

	if (!h || (v && !c)) {
		free(c);
		return MGW_ENOMEM;
	}
	free(h->handle);
	h->handle = c;
	return 0;
}

void ld_legacy_drop_session(struct mgw_load_agent *a)
{
	free(a->session_id);
	a->session_id = NULL;
	a->initialized = 0;
	a->session_calls = 0;
	a->listed = 0;
	a->negotiated[0] = '\0';
	/* legacy counters live in the session: their handles died with it */
	for (size_t i = 0; i < a->n_handles; i++) {
		free(a->handles[i].handle);
		a->handles[i].handle = NULL;
	}
}

/* ---- tool results ---- */

/* First text content of a CallToolResult, or "". */
static const char *result_text(const json_t *result)
{
	json_t *content = json_object_get(result, "content");
	size_t i;
	json_t *c;

	json_array_foreach(content, i, c) {
		json_t *t = json_object_get(c, "text");
		if (json_is_string(t))
			return json_string_value(t);
	}
	return "";
}

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return n == 0;
}

/* The handle a result carries: structuredContent.handle, else (create
 * only) the text. */
static const char *result_handle(const json_t *result, int text_too)
{
	json_t *h = json_object_get(json_object_get(result, "structuredContent"),
	                            "handle");
	const char *t;

	if (json_is_string(h) && json_string_length(h) > 0)
		return json_string_value(h);
	if (!text_too)
		return NULL;
	t = result_text(result);
	return t[0] ? t : NULL;
}

/* ---- ending a call ---- */

static void set_detail(struct mgw_load_agent *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_detail(struct mgw_load_agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->detail, sizeof(a->detail), fmt, ap);
	va_end(ap);
}

static void mrtr_reset(struct mgw_load_agent *a)
{
	free(a->mrtr_state);
	a->mrtr_state = NULL;
	json_decref(a->mrtr_responses);
	a->mrtr_responses = NULL;
}

static void fork_reset(struct mgw_load_agent *a)
{
	free(a->fork_state);
	a->fork_state = NULL;
	json_decref(a->fork_responses);
	a->fork_responses = NULL;
	a->fork_rounds = 0;
	a->forking = 0;
}

/* Ends the call: nothing of it is in flight any more (the caller made
 * sure); on_done is scheduled. */
static void finish(struct mgw_load_agent *a, enum mgw_load_outcome out)
{
	mrtr_reset(a);
	fork_reset(a);
	a->res.outcome = out;
	a->res.detail = out == MGW_LOAD_OK ? NULL : a->detail;
	a->step = LD_ST_IDLE;
	evtimer_del(a->tmo_ev);
	if (a->poll_ev)
		evtimer_del(a->poll_ev);
	ld_auth_cancel(&a->auth_wait);
	ld_msg_free(a->msg);
	a->msg = NULL;
	a->done_pending = 1;
	event_active(a->done_ev, 0, 0);
}

static void on_done_ev(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_agent *a = arg;
	struct mgw_load_result r;
	char detail[LD_DETAIL_MAX];
	mgw_load_done_cb cb;
	void *cb_arg;

	(void)fd;
	(void)what;
	if (a->step == LD_ST_CLOSED && a->on_closed) {
		mgw_load_closed_cb closed = a->on_closed;

		a->on_closed = NULL;
		closed(a, a->closed_arg); /* may free a */
		return;
	}
	if (!a->done_pending)
		return;
	/* Copies: the engine may start the next call (which resets a->res)
	 * or free the agent from inside the callback. */
	r = a->res;
	if (r.detail) {
		snprintf(detail, sizeof(detail), "%s", r.detail);
		r.detail = detail;
	}
	cb = a->on_done;
	cb_arg = a->done_arg;
	a->done_pending = 0;
	a->in_call = 0;
	a->spec = NULL;
	a->on_done = NULL;
	cb(a, &r, cb_arg);
}

/* The answer is a failure of the transport or an HTTP error status:
 * ends the call with the matching outcome. */
static void fail_answer(struct mgw_load_agent *a, const struct ld_answer *ans)
{
	const char *msg = NULL;
	json_t *e;

	switch (ans->kind) {
	case LD_ANS_FAILED:
		set_detail(a, "%s", ans->detail ? ans->detail : "no answer");
		finish(a, MGW_LOAD_CONNECT_ERROR);
		return;
	case LD_ANS_TIMEOUT:
		set_detail(a, "%s", ans->detail ? ans->detail : "timeout");
		finish(a, MGW_LOAD_TIMEOUT);
		return;
	case LD_ANS_RESPONSE:
		e = json_object_get(ans->resp, "error");
		msg = json_string_value(json_object_get(e, "message"));
		set_detail(a, "JSON-RPC error %" JSON_INTEGER_FORMAT ": %s",
		           json_integer_value(json_object_get(e, "code")),
		           msg ? msg : "");
		finish(a, MGW_LOAD_RPC_ERROR);
		return;
	case LD_ANS_ACCEPTED:
		set_detail(a, "HTTP %d without a JSON-RPC response", ans->status);
		finish(a, MGW_LOAD_CONNECT_ERROR);
		return;
	case LD_ANS_STATUS:
		break;
	}
	e = json_object_get(ans->resp, "error");
	msg = json_string_value(json_object_get(e, "message"));
	if (msg)
		set_detail(a, "HTTP %d: %s", ans->status, msg);
	else
		set_detail(a, "HTTP %d", ans->status);
	if (a->era == MGW_ERA_IS_LEGACY && a->msg && a->msg->with_session) {
		if (mgw_load_session_lost(ans->status, e,
		                          a->opts->lost_session_match)) {
			ld_legacy_drop_session(a);
			finish(a, MGW_LOAD_SESSION_LOST);
			return;
		}
		if (ans->status >= 500) {
			/* Whatever broke, the session cannot be trusted: start a
			 * new one next time, but count what was seen. */
			ld_legacy_drop_session(a);
			finish(a, MGW_LOAD_HTTP_5XX);
			return;
		}
	}
	/* The spec's advice on HeaderMismatch: fetch the tool schemas (the
	 * tool may declare x-mcp-header parameters) before trying again. */
	if (a->era == MGW_ERA_IS_MODERN && ans->status == 400 &&
	    json_integer_value(json_object_get(e, "code")) == MGW_MCP_HEADER_MISMATCH &&
	    a->msg && a->msg->rpc_method &&
	    strcmp(a->msg->rpc_method, "tools/call") == 0)
		a->want_list = 1;
	finish(a, ans->status >= 500 ? MGW_LOAD_HTTP_5XX : MGW_LOAD_HTTP_4XX);
}

/* ---- sending ---- */

static void transmit(struct mgw_load_agent *a)
{
	int rc;

	/* the status reported is the last message's: a call that fails with
	 * none (a reset, a timeout) must not show its handshake's 200 */
	a->res.status = 0;
	/* a dialogue's service time runs from its first round */
	if (a->step == LD_ST_CALL && !(a->res.rounds && a->res.sent_ns))
		a->res.sent_ns = mgw_now_ns();
	a->auth_gen = a->auth ? ld_auth_gen(a->auth) : 0;
	rc = a->stdio ? ld_stdio_send(a, a->msg) : ld_http_send(a, a->msg);
	if (rc != 0) {
		if (a->step == LD_ST_CALL)
			a->res.sent_ns = 0;
		set_detail(a, "cannot send: %s", mgw_strerror(rc));
		a->conn_broken = 1;
		if (a->step == LD_ST_DELETE) {
			a->step = LD_ST_CLOSED;
			evtimer_del(a->tmo_ev);
			event_active(a->done_ev, 0, 0);
			return;
		}
		finish(a, MGW_LOAD_CONNECT_ERROR);
	}
}

static void on_auth_ready(struct ld_auth_wait *w, void *arg)
{
	struct mgw_load_agent *a = arg;

	(void)w;
	a->step = a->after_auth;
	transmit(a);
}

/* Takes m as the message in flight for step st and sends it, running the
 * auth command first when its output is needed and not there yet. */
static void send_msg(struct mgw_load_agent *a, struct ld_msg *m,
                     enum ld_step st)
{
	ld_msg_free(a->msg);
	a->msg = m;
	a->step = st;
	a->auth_retried = 0;
	if (!m) {
		set_detail(a, "no memory for a request");
		if (st == LD_ST_DELETE) {
			a->step = LD_ST_CLOSED;
			event_active(a->done_ev, 0, 0);
			return;
		}
		finish(a, MGW_LOAD_CONNECT_ERROR);
		return;
	}
	if (a->auth && ld_auth_gen(a->auth) == 0) {
		a->after_auth = st;
		a->step = LD_ST_AUTH;
		ld_auth_refresh(a->auth, 0, &a->auth_wait, on_auth_ready, a);
		return;
	}
	transmit(a);
}

/* The tools/call of the spec, with the held handle for a handle flow. */
static struct ld_msg *call_msg(struct mgw_load_agent *a)
{
	const struct mgw_load_call_spec *spec = a->spec;
	json_t *args, *params;
	struct ld_msg *m;

	if (spec->flow == MGW_LOAD_FLOW_COUNTER) {
		const char *h = handle_get(a, spec);

		args = spec->arguments ? json_copy(spec->arguments) : json_object();
		if (!args || json_object_set_new(args, spec->handle_arg ?
		                                       spec->handle_arg : "handle",
		                                 json_string(h)) != 0) {
			json_decref(args);
			return NULL;
		}
	} else {
		args = spec->arguments ? json_incref(spec->arguments) : json_object();
	}
	params = json_pack("{s:s, s:o}", "name", spec->tool, "arguments", args);
	if (!params)
		return NULL;
	/* an MRTR retry: the original request plus the answers and the
	 * state echoed */
	if ((a->mrtr_state &&
	     json_object_set_new(params, "requestState",
	                         json_string(a->mrtr_state)) != 0) ||
	    (a->mrtr_responses &&
	     json_object_set(params, "inputResponses", a->mrtr_responses) != 0)) {
		json_decref(params);
		return NULL;
	}
	/* 2025-11-25: the client asks for a task on the request itself */
	if (spec->flow == MGW_LOAD_FLOW_TASK && a->era == MGW_ERA_IS_LEGACY &&
	    json_object_set_new(params, "task", json_object()) != 0) {
		json_decref(params);
		return NULL;
	}
	m = era_request(a, "tools/call", spec->tool, params);
	/* a plain call's success is all the agent reads of its result */
	if (m && spec->flow == MGW_LOAD_FLOW_CALL && !a->forking)
		m->quick = 1;
	return m;
}

static void advance(struct mgw_load_agent *a)
{
	const struct mgw_load_call_spec *spec = a->spec;

	if (a->era == MGW_ERA_UNKNOWN) {
		send_msg(a, ld_auto_probe(a), LD_ST_PROBE);
	} else if (a->era == MGW_ERA_IS_LEGACY && !a->stdio && a->initialized &&
	           a->session_id && a->opts->delete_after &&
	           a->session_calls >= a->opts->delete_after) {
		send_msg(a, ld_legacy_delete(a), LD_ST_END_DELETE);
	} else if (a->era == MGW_ERA_IS_LEGACY && !a->initialized) {
		ld_legacy_drop_session(a);
		send_msg(a, ld_legacy_initialize(a), LD_ST_INIT);
	} else if ((a->opts->list_tools && !a->listed) || a->want_list) {
		send_msg(a, era_request(a, "tools/list", NULL, json_object()),
		         LD_ST_LIST);
	} else if (spec->flow == MGW_LOAD_FLOW_COUNTER && !handle_get(a, spec)) {
		const char *ct = spec->create_tool ? spec->create_tool
		                                   : "counter_create";
		json_t *p = json_pack("{s:s, s:{}}", "name", ct, "arguments");

		send_msg(a, p ? era_request(a, "tools/call", ct, p) : NULL,
		         LD_ST_CREATE);
	} else {
		if (a->era == MGW_ERA_IS_LEGACY)
			a->session_calls++;
		send_msg(a, call_msg(a), LD_ST_CALL);
	}
}

/* ---- ending a session on purpose (delete_after) ---- */

/* The DELETE was answered: a session the server let go is presented
 * again (a ping with its id) through the next target; one it would not
 * delete (405, an error) is just left. */
static void on_end_delete(struct mgw_load_agent *a, const struct ld_answer *ans)
{
	struct ld_msg *m;

	if (ans->kind != LD_ANS_ACCEPTED && ans->kind != LD_ANS_RESPONSE) {
		ld_legacy_drop_session(a);
		a->planned_new = 1;
		advance(a);
		return;
	}
	m = ld_legacy_request(a, "ping", json_object());
	if (m)
		m->other_target = 1;
	send_msg(a, m, LD_ST_END_CHECK);
}

/* The deleted id's check: refused as a lost session is what must happen;
 * served (2xx) is a DELETE undone.  No verdict (no answer, a 5xx) leaves
 * it unchecked.  The call then goes on in a new session. */
static void on_end_check(struct mgw_load_agent *a, const struct ld_answer *ans)
{
	const json_t *e = json_object_get(ans->resp, "error");
	int served = ans->kind == LD_ANS_RESPONSE || ans->kind == LD_ANS_ACCEPTED;

	if (served || (ans->kind == LD_ANS_STATUS &&
	               mgw_load_session_lost(ans->status, e,
	                                     a->opts->lost_session_match)))
		a->res.deletes++;
	ld_legacy_drop_session(a);
	a->planned_new = 1;
	if (served) {
		set_detail(a, "a deleted session was served again through another "
		           "target (HTTP %d)", ans->status);
		finish(a, MGW_LOAD_DELETED_SERVED);
		return;
	}
	advance(a);
}

/* ---- answers ---- */

static void on_probe(struct mgw_load_agent *a, const struct ld_answer *ans)
{
	enum mgw_era era = ld_auto_verdict(ans);

	if (era == MGW_ERA_UNKNOWN) {
		fail_answer(a, ans);
		return;
	}
	a->era = era;
	mgw_debug(NULL, "load: the server speaks the %s era",
	          era == MGW_ERA_IS_MODERN ? "modern" : "legacy");
	advance(a);
}

/* The answers to a round's inputRequests from the spec's answers (by
 * name, else "*"); NULL with a->detail set when one has none. */
static json_t *mrtr_answers(struct mgw_load_agent *a, const json_t *reqs)
{
	const json_t *answers = a->spec->answers;
	json_t *out = json_object(), *v;
	const char *key;
	void *it;

	for (it = json_object_iter((json_t *)reqs); out && it;
	     it = json_object_iter_next((json_t *)reqs, it)) {
		key = json_object_iter_key(it);
		v = json_object_get(answers, key);
		if (!v)
			v = json_object_get(answers, "*");
		if (!v) {
			set_detail(a, "no answer for input request '%.60s'", key);
			json_decref(out);
			return NULL;
		}
		if (json_object_set(out, key, v) != 0) {
			set_detail(a, "no memory for inputResponses");
			json_decref(out);
			return NULL;
		}
	}
	if (!out)
		set_detail(a, "no memory for inputResponses");
	return out;
}

/* fork_every: keeps a copy of the retry about to go out when it is the
 * one to re-present (fork_round, or every one when it is 0: the last
 * one stays).  Returns 0, or MGW_ENOMEM. */
static int fork_keep(struct mgw_load_agent *a)
{
	const struct mgw_load_call_spec *spec = a->spec;

	if (spec->fork_every <= 0 ||
	    (spec->fork_round > 0 && (long)a->res.rounds != spec->fork_round))
		return 0;
	free(a->fork_state);
	json_decref(a->fork_responses);
	a->fork_state = a->mrtr_state ? strdup(a->mrtr_state) : NULL;
	a->fork_responses = a->mrtr_responses ? json_deep_copy(a->mrtr_responses)
	                                      : NULL;
	if ((a->mrtr_state && !a->fork_state) ||
	    (a->mrtr_responses && !a->fork_responses))
		return MGW_ENOMEM;
	return 0;
}

/* After a dialogue that ended with a result: 1 when its kept retry is
 * due to be re-presented (every fork_every-th such dialogue of this
 * agent), which is then sent as it went the first time. */
static int fork_start(struct mgw_load_agent *a)
{
	if (a->spec->flow != MGW_LOAD_FLOW_MRTR || a->spec->fork_every <= 0 ||
	    a->forking)
		return 0;
	a->dialogues_done++;
	if (!a->fork_state || a->dialogues_done % (unsigned long)a->spec->fork_every)
		return 0;
	mrtr_reset(a);
	a->mrtr_state = a->fork_state;
	a->mrtr_responses = a->fork_responses;
	a->fork_state = NULL;
	a->fork_responses = NULL;
	a->forking = 1;
	a->res.represented = 1;
	send_msg(a, call_msg(a), LD_ST_CALL);
	return 1;
}

/* The answer to a re-presented state that is not a result: refused
 * when the server (or a gateway in front of it) said so - a JSON-RPC
 * error, or a 4xx such as the gateway's 409 -31023 - and the dialogue
 * itself stays a success; no answer at all fails the call as usual. */
static void fork_answer(struct mgw_load_agent *a, const struct ld_answer *ans)
{
	if (ans->kind == LD_ANS_RESPONSE ||
	    (ans->kind == LD_ANS_STATUS && ans->status >= 400 &&
	     ans->status < 500)) {
		a->res.refused = 1;
		finish(a, MGW_LOAD_OK);
		return;
	}
	fail_answer(a, ans);
}

/* An input_required result of an MRTR dialogue: the next round (the
 * original request again, a new id, inputResponses when the server asked
 * for input, requestState only when it gave one) or, past max_rounds or
 * without an answer, the end of the dialogue. */
static void mrtr_round(struct mgw_load_agent *a, const json_t *result)
{
	const json_t *reqs = json_object_get(result, "inputRequests");
	const json_t *rs = json_object_get(result, "requestState");
	json_t *resp = NULL;

	/* both are optional, but one of them must be there (spec: server
	 * requirements); without inputRequests the retry goes at once */
	if ((reqs && !json_is_object(reqs)) || (rs && !json_is_string(rs)) ||
	    (!reqs && !rs)) {
		set_detail(a, "malformed input_required result (inputRequests not "
		           "an object, requestState not a string, or neither)");
		finish(a, MGW_LOAD_RPC_ERROR);
		return;
	}
	if ((long)(a->forking ? a->fork_rounds : a->res.rounds) >=
	    a->spec->max_rounds) {
		set_detail(a, "still input_required after %ld rounds%s",
		           a->spec->max_rounds,
		           a->forking ? " of a re-presented state" : "");
		finish(a, MGW_LOAD_TOOL_ERROR);
		return;
	}
	if (reqs && !(resp = mrtr_answers(a, reqs))) {
		finish(a, MGW_LOAD_TOOL_ERROR);
		return;
	}
	mrtr_reset(a);
	a->mrtr_responses = resp;
	if (rs && !(a->mrtr_state = strdup(json_string_value(rs)))) {
		set_detail(a, "no memory for requestState");
		finish(a, MGW_LOAD_CONNECT_ERROR);
		return;
	}
	if (a->forking) {
		a->fork_rounds++;
	} else {
		a->res.rounds++;
		if (fork_keep(a) != 0) {
			set_detail(a, "no memory for the state to re-present");
			finish(a, MGW_LOAD_CONNECT_ERROR);
			return;
		}
	}
	send_msg(a, call_msg(a), LD_ST_CALL);
}

/* The server does not have the state a retry gave back: the mcpgw
 * backend's codes for a state unknown here (another replica's memory
 * state) and one it cannot open (sealed with a key it lacks).  Only a
 * retry of a dialogue carries a state; a first round cannot lose one. */
static int mrtr_state_lost(const struct mgw_load_agent *a,
                           const struct ld_answer *ans)
{
	json_int_t code;

	if (a->spec->flow != MGW_LOAD_FLOW_MRTR || !a->mrtr_state || !ans->resp ||
	    a->forking)
		return 0;
	code = json_integer_value(json_object_get(json_object_get(ans->resp, "error"),
	                                          "code"));
	return code == -32040 || code == -32041;
}

/* ---- tasks ---- */

/* Bounds on the poll interval a server suggests: a server asking for 0
 * must not make the client spin, one asking for an hour must not
 * outlast every call timeout unseen. */
#define POLL_MIN_MS 10
#define POLL_MAX_MS 5000
#define POLL_DEFAULT_MS 100

static void take_poll_interval(struct mgw_load_agent *a, const json_t *task)
{
	const json_t *p = json_object_get(task, a->era == MGW_ERA_IS_MODERN
	                                              ? "pollIntervalMs"
	                                              : "pollInterval");
	json_int_t v;

	if (!json_is_integer(p))
		return;
	v = json_integer_value(p);
	a->poll_ms = (uint32_t)(v < POLL_MIN_MS ? POLL_MIN_MS
	                        : v > POLL_MAX_MS ? POLL_MAX_MS : v);
}

static void schedule_poll(struct mgw_load_agent *a)
{
	struct timeval tv = {a->poll_ms / 1000, (a->poll_ms % 1000) * 1000};

	ld_msg_free(a->msg);
	a->msg = NULL;
	a->step = LD_ST_POLL_WAIT;
	evtimer_add(a->poll_ev, &tv);
}

static void on_poll_timer(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_agent *a = arg;
	json_t *p = json_pack("{s:s}", "taskId", a->task_id);

	(void)fd;
	(void)what;
	if (a->step != LD_ST_POLL_WAIT) {
		json_decref(p);
		return;
	}
	a->res.polls++;
	send_msg(a, p ? era_request(a, "tasks/get", a->task_id, p) : NULL,
	         LD_ST_POLL);
}

/* The CreateTaskResult of either era, or NULL: modern, resultType "task"
 * with the Task's fields; legacy, {task: Task}. */
static const json_t *created_task(const struct mgw_load_agent *a,
                                  const json_t *result)
{
	const char *rt;

	if (a->era == MGW_ERA_IS_MODERN) {
		rt = json_string_value(json_object_get(result, "resultType"));
		return rt && strcmp(rt, "task") == 0 ? result : NULL;
	}
	return json_is_object(json_object_get(result, "task"))
	               ? json_object_get(result, "task") : NULL;
}

/* Starts polling the task.  Returns 0, or -1 when the task has no id
 * (the call was finished). */
static int start_task(struct mgw_load_agent *a, const json_t *task)
{
	const char *id = json_string_value(json_object_get(task, "taskId"));

	if (!id || !id[0] || strlen(id) >= sizeof(a->task_id)) {
		set_detail(a, "a task without a usable taskId");
		finish(a, MGW_LOAD_RPC_ERROR);
		return -1;
	}
	snprintf(a->task_id, sizeof(a->task_id), "%s", id);
	a->res.tasks = 1;
	a->poll_ms = POLL_DEFAULT_MS;
	take_poll_interval(a, task);
	schedule_poll(a);
	return 0;
}

static void on_tool_result(struct mgw_load_agent *a, const json_t *result);

/* A -32602 to tasks/get or tasks/result: this replica does not know the
 * task (both eras' "Task not found"). */
static int task_unknown(const struct ld_answer *ans)
{
	json_t *e = json_object_get(ans->resp, "error");

	return ans->kind == LD_ANS_RESPONSE &&
	       json_integer_value(json_object_get(e, "code")) == -32602;
}

static void on_task_state(struct mgw_load_agent *a, const json_t *task)
{
	const char *st = json_string_value(json_object_get(task, "status"));
	const char *why = json_string_value(json_object_get(task, "statusMessage"));
	json_t *p;

	if (st && (!strcmp(st, "working") || !strcmp(st, "input_required"))) {
		take_poll_interval(a, task);
		schedule_poll(a);
	} else if (st && !strcmp(st, "completed")) {
		if (a->era == MGW_ERA_IS_MODERN) {
			on_tool_result(a, json_object_get(task, "result"));
			return;
		}
		/* 2025-11-25: the result is retrieved with tasks/result */
		p = json_pack("{s:s}", "taskId", a->task_id);
		send_msg(a, p ? era_request(a, "tasks/result", NULL, p) : NULL,
		         LD_ST_TASK_RESULT);
	} else {
		set_detail(a, "task %s%s%s", st ? st : "in an unknown status",
		           why ? ": " : "", why ? why : "");
		finish(a, MGW_LOAD_RPC_ERROR);
	}
}

static void on_call_result(struct mgw_load_agent *a, const json_t *result)
{
	const char *rt = json_string_value(json_object_get(result, "resultType"));
	const json_t *task;

	if (a->spec->flow == MGW_LOAD_FLOW_MRTR && rt &&
	    strcmp(rt, "input_required") == 0) {
		mrtr_round(a, result);
		return;
	}
	task = created_task(a, result);
	if (task) {
		start_task(a, task);
		return;
	}
	on_tool_result(a, result);
}

static void on_tool_result(struct mgw_load_agent *a, const json_t *result)
{
	const struct mgw_load_call_spec *spec = a->spec;
	const char *h;

	if (!json_is_object(result)) {
		set_detail(a, "a completed task without a result");
		finish(a, MGW_LOAD_RPC_ERROR);
		return;
	}

	if (a->forking) {
		/* the dialogue succeeded before; this answers the old state */
		if (json_is_true(json_object_get(result, "isError")))
			a->res.refused = 1;
		else
			a->res.forked = 1;
		finish(a, MGW_LOAD_OK);
		return;
	}
	if (json_is_true(json_object_get(result, "isError"))) {
		const char *t = result_text(result);

		set_detail(a, "%s", t[0] ? t : "tool error");
		if (contains_ci(t, "unknown handle")) {
			if (spec->flow == MGW_LOAD_FLOW_COUNTER)
				handle_set(a, spec, NULL);
			finish(a, MGW_LOAD_HANDLE_LOST);
			return;
		}
		finish(a, MGW_LOAD_TOOL_ERROR);
		return;
	}
	if (spec->flow == MGW_LOAD_FLOW_COUNTER &&
	    (h = result_handle(result, 0)) != NULL &&
	    handle_set(a, spec, h) != 0) {
		set_detail(a, "no memory for a handle");
		finish(a, MGW_LOAD_CONNECT_ERROR);
		return;
	}
	if (fork_start(a))
		return;
	finish(a, MGW_LOAD_OK);
}

static void on_create_result(struct mgw_load_agent *a, const json_t *result)
{
	const char *h;

	if (json_is_true(json_object_get(result, "isError"))) {
		const char *t = result_text(result);

		set_detail(a, "%s: %s", a->spec->create_tool ? a->spec->create_tool
		                                              : "counter_create",
		           t[0] ? t : "tool error");
		finish(a, MGW_LOAD_TOOL_ERROR);
		return;
	}
	h = result_handle(result, 1);
	if (!h) {
		set_detail(a, "no handle in the result of %s",
		           a->spec->create_tool ? a->spec->create_tool
		                                : "counter_create");
		finish(a, MGW_LOAD_TOOL_ERROR);
		return;
	}
	if (handle_set(a, a->spec, h) != 0) {
		set_detail(a, "no memory for a handle");
		finish(a, MGW_LOAD_CONNECT_ERROR);
		return;
	}
	advance(a);
}

void ld_answer(struct mgw_load_agent *a, const struct ld_answer *ans)
{
	json_t *result = NULL;

	a->res.bytes += ans->bytes;
	if (ans->status)
		a->res.status = ans->status;
	if (a->step == LD_ST_END_CHECK) {
		/* beside the agent's connection: says nothing about it */
		on_end_check(a, ans);
		return;
	}
	if (ans->kind == LD_ANS_FAILED || (ans->kind == LD_ANS_TIMEOUT &&
	                                   !a->stdio)) {
		/* HTTP: a timeout drops the connection too (ld_http_broken) */
		a->conn_broken = 1;
	} else if (ans->kind != LD_ANS_TIMEOUT && a->conn_broken) {
		a->conn_broken = 0;
		a->res.reconnected++;
	}
	if (a->step == LD_ST_DELETE) {
		a->step = LD_ST_CLOSED;
		evtimer_del(a->tmo_ev);
		event_active(a->done_ev, 0, 0);
		return;
	}
	/* Expired credentials: run the auth command again and send the same
	 * message once more (it was refused, so nothing happened). */
	if (ans->kind == LD_ANS_STATUS && ans->status == 401 && a->auth &&
	    !a->auth_retried) {
		a->auth_retried = 1;
		a->after_auth = a->step;
		a->step = LD_ST_AUTH;
		ld_auth_refresh(a->auth, a->auth_gen, &a->auth_wait, on_auth_ready, a);
		return;
	}
	if (a->step == LD_ST_PROBE) {
		on_probe(a, ans);
		return;
	}
	if (a->step == LD_ST_END_DELETE) {
		on_end_delete(a, ans);
		return;
	}
	if (ans->quick_ok && a->step == LD_ST_CALL) {
		/* a plain success, read by the transport's skim: what
		 * on_call_result concludes of one */
		finish(a, MGW_LOAD_OK);
		return;
	}
	if (ans->kind == LD_ANS_RESPONSE)
		result = json_object_get(ans->resp, "result");
	switch (a->step) {
	case LD_ST_INIT:
		if (!result) {
			fail_answer(a, ans);
			return;
		}
		if (ld_legacy_take_init(a, ans, a->detail, sizeof(a->detail)) != 0) {
			finish(a, MGW_LOAD_RPC_ERROR);
			return;
		}
		/* a new session after our own DELETE is no recovery */
		if (!a->planned_new)
			a->res.reinitialized++;
		a->planned_new = 0;
		send_msg(a, ld_legacy_initialized(a), LD_ST_INITIALIZED);
		return;
	case LD_ST_INITIALIZED:
		/* 202 is the rule; a server that answers the notification
		 * with some JSON body has still accepted it */
		if (ans->kind != LD_ANS_ACCEPTED && ans->kind != LD_ANS_RESPONSE) {
			fail_answer(a, ans);
			return;
		}
		a->initialized = 1;
		advance(a);
		return;
	case LD_ST_LIST:
		if (!result) {
			fail_answer(a, ans);
			return;
		}
		if (a->era == MGW_ERA_IS_MODERN)
			ld_modern_learn_tools(a, result);
		a->listed = 1;
		a->want_list = 0;
		advance(a);
		return;
	case LD_ST_CREATE:
		if (!result) {
			fail_answer(a, ans);
			return;
		}
		on_create_result(a, result);
		return;
	case LD_ST_CALL:
		if (!result && a->forking) {
			fork_answer(a, ans);
			return;
		}
		if (!result && mrtr_state_lost(a, ans)) {
			json_t *e = json_object_get(ans->resp, "error");
			const char *m = json_string_value(json_object_get(e, "message"));

			set_detail(a, "state lost after %u rounds: %" JSON_INTEGER_FORMAT
			           " %s", a->res.rounds,
			           json_integer_value(json_object_get(e, "code")),
			           m ? m : "");
			finish(a, MGW_LOAD_STATE_LOST);
			return;
		}
		if (!result) {
			fail_answer(a, ans);
			return;
		}
		on_call_result(a, result);
		return;
	case LD_ST_POLL:
	case LD_ST_TASK_RESULT:
		if (!result && task_unknown(ans)) {
			set_detail(a, "task %s unknown to the replica polled", a->task_id);
			finish(a, MGW_LOAD_TASK_LOST);
		} else if (!result) {
			fail_answer(a, ans);
		} else if (a->step == LD_ST_POLL) {
			on_task_state(a, result);
		} else {
			on_tool_result(a, result);
		}
		return;
	default:
		/* an answer nobody waits for (cancelled meanwhile) */
		return;
	}
}

const struct mgw_headers *ld_auth_fields(const struct mgw_load_agent *a)
{
	if (a->auth && ld_auth_gen(a->auth) > 0)
		return ld_auth_headers(a->auth);
	return a->opts->auth_headers;
}

/* ---- timeouts ---- */

static void cancel_inflight(struct mgw_load_agent *a)
{
	ld_auth_cancel(&a->auth_wait);
	if (a->stdio)
		ld_stdio_cancel(a);
	else
		ld_http_cancel(a);
}

static void on_tmo(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_agent *a = arg;

	(void)fd;
	(void)what;
	cancel_inflight(a);
	evtimer_del(a->poll_ev);
	/* a connection that gave no answer in time is not used again: the
	 * next call reconnects (counted when it is answered) */
	if (!a->stdio) {
		ld_http_broken(a);
		a->conn_broken = 1;
	}
	if (a->closing) {
		/* the DELETE (or the auth run before it) took too long */
		if (a->step != LD_ST_CLOSED) {
			a->step = LD_ST_CLOSED;
			event_active(a->done_ev, 0, 0);
		}
		return;
	}
	if (a->step == LD_ST_IDLE || a->step == LD_ST_CLOSED)
		return;
	if (a->step == LD_ST_CALL)
		set_detail(a, "no answer within %gs", a->opts->timeout);
	else
		set_detail(a, "no answer within %gs (while %s)", a->opts->timeout,
		           a->step == LD_ST_PROBE ? "probing the era" :
		           a->step == LD_ST_INIT || a->step == LD_ST_INITIALIZED
		                   ? "initializing" :
		           a->step == LD_ST_LIST ? "listing tools" :
		           a->step == LD_ST_CREATE ? "creating a handle" :
		           a->step == LD_ST_END_DELETE ||
		           a->step == LD_ST_END_CHECK ? "ending the session" :
		           a->step == LD_ST_POLL || a->step == LD_ST_POLL_WAIT ||
		           a->step == LD_ST_TASK_RESULT ? "polling the task"
		                                   : "running the auth command");
	finish(a, MGW_LOAD_TIMEOUT);
}

static void arm_timeout(struct mgw_load_agent *a)
{
	if (a->opts->timeout > 0) {
		struct timeval tv = mgw_tv(a->opts->timeout);
		evtimer_add(a->tmo_ev, &tv);
	}
}

/* ---- API ---- */

static void pick_version(char *out, size_t len, const char *want,
                         const char *const *list, const char *dflt)
{
	snprintf(out, len, "%s",
	         want && mgw_mcp_version_in(want, list) ? want : dflt);
}

struct mgw_load_agent *mgw_load_agent_new(struct event_base *base,
                                          struct mgw_client *client,
                                          const struct mgw_load_target *target,
                                          const struct mgw_load_agent_opts *opts)
{
	struct mgw_load_agent *a;
	int http = target && target->urls && target->n_urls > 0;
	int sio = target && target->stdio_cmd && target->stdio_cmd[0];

	if (!base || !target || !opts || http == sio || (http && !client))
		return NULL;
	if (opts->dialect != MGW_LOAD_LEGACY && opts->dialect != MGW_LOAD_MODERN &&
	    opts->dialect != MGW_LOAD_AUTO)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->base = base;
	a->target = target;
	a->opts = opts;
	a->stdio = sio;
	a->next_id = 1;
	a->era = opts->dialect == MGW_LOAD_LEGACY ? MGW_ERA_IS_LEGACY :
	         opts->dialect == MGW_LOAD_MODERN ? MGW_ERA_IS_MODERN
	                                          : MGW_ERA_UNKNOWN;
	pick_version(a->legacy_version, sizeof(a->legacy_version),
	             opts->protocol_version, mgw_mcp_legacy_versions,
	             MGW_MCP_LEGACY_LATEST);
	pick_version(a->modern_version, sizeof(a->modern_version),
	             opts->protocol_version, mgw_mcp_modern_versions,
	             MGW_MCP_MODERN_VERSION);
	a->client_info = json_pack("{s:s, s:s}", "name",
	                           opts->client_name ? opts->client_name
	                                             : "mcpgw-load",
	                           "version",
	                           opts->client_version ? opts->client_version
	                                                : PACKAGE_VERSION);
	a->done_ev = event_new(base, -1, 0, on_done_ev, a);
	a->tmo_ev = evtimer_new(base, on_tmo, a);
	a->poll_ev = evtimer_new(base, on_poll_timer, a);
	if (!a->client_info || !a->done_ev || !a->tmo_ev || !a->poll_ev)
		goto fail;
	if (opts->auth_command && opts->auth_command[0]) {
		a->auth = ld_auth_get(base, opts->auth_command);
		if (!a->auth)
			goto fail;
	}
	if (sio ? ld_stdio_init(a) : ld_http_init(a, client))
		goto fail;
	return a;
fail:
	mgw_load_agent_free(a);
	return NULL;
}

void mgw_load_agent_free(struct mgw_load_agent *a)
{
	if (!a)
		return;
	ld_auth_cancel(&a->auth_wait);
	if (a->stdio)
		ld_stdio_deinit(a);
	else
		ld_http_deinit(a);
	if (a->auth)
		ld_auth_put(a->auth);
	if (a->done_ev)
		event_free(a->done_ev);
	if (a->tmo_ev)
		event_free(a->tmo_ev);
	if (a->poll_ev)
		event_free(a->poll_ev);
	ld_msg_free(a->msg);
	ld_legacy_drop_session(a);
	mrtr_reset(a);
	fork_reset(a);
	free(a->handles);
	json_decref(a->client_info);
	for (size_t i = 0; i < 3; i++)
		json_decref(a->modern_meta[i]);
	json_decref(a->tool_headers);
	free(a);
}

int mgw_load_agent_call(struct mgw_load_agent *a,
                        const struct mgw_load_call_spec *spec,
                        mgw_load_done_cb on_done, void *arg)
{
	if (a->closing)
		return MGW_ECLOSED;
	if (a->in_call)
		return MGW_ELIMIT;
	if (!spec || !spec->tool || !on_done)
		return MGW_EINVAL;
	a->in_call = 1;
	a->spec = spec;
	a->on_done = on_done;
	a->done_arg = arg;
	memset(&a->res, 0, sizeof(a->res));
	a->res.dialogue = spec->flow == MGW_LOAD_FLOW_MRTR;
	mrtr_reset(a);
	fork_reset(a);
	a->detail[0] = '\0';
	arm_timeout(a);
	advance(a);
	return 0;
}

int mgw_load_agent_close(struct mgw_load_agent *a, mgw_load_closed_cb closed,
                         void *arg)
{
	if (a->closing)
		return MGW_ECLOSED;
	a->closing = 1;
	a->on_closed = closed;
	a->closed_arg = arg;
	if (a->in_call) {
		/* cancelled without its on_done, whatever its state */
		cancel_inflight(a);
		evtimer_del(a->tmo_ev);
		evtimer_del(a->poll_ev);
		ld_msg_free(a->msg);
		a->msg = NULL;
		a->in_call = 0;
		a->done_pending = 0;
		a->step = LD_ST_IDLE;
	}
	if (!a->stdio && a->era == MGW_ERA_IS_LEGACY && a->session_id) {
		arm_timeout(a);
		send_msg(a, ld_legacy_delete(a), LD_ST_DELETE);
		return 0;
	}
	a->step = LD_ST_CLOSED;
	event_active(a->done_ev, 0, 0);
	return 0;
}

enum mgw_era mgw_load_agent_era(const struct mgw_load_agent *a)
{
	return a->era;
}
