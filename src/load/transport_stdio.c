/* transport_stdio.c - the stdio transport of a load agent: the agent
 * launches its own MCP server (sh -c COMMAND) and speaks newline-delimited
 * JSON-RPC on the server's stdin and stdout, through non-blocking pipes
 * and bufferevents.  Responses are matched by id; notifications from the
 * server are skipped, its requests (ping, and anything else) answered so
 * it never waits on us.
 *
 * A server that exits (or closes a pipe, or writes a line over the
 * limit) fails the message in flight, which the agent reports as
 * CONNECT_ERROR; it is reaped, and the next message launches a new one
 * after an exponential backoff (100 ms doubling to 5 s, reset by the
 * first response), so a crashing command cannot spin the machine. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "load/agent_impl.h"
#include "mcp/jsonrpc.h"
#include "util/time.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define REAP_POLL_S 0.05
#define REAP_POLLS 100

static void deliver(struct mgw_load_agent *a, enum ld_ans_kind kind,
                    json_t *resp, const char *detail, uint64_t bytes)
{
	struct ld_answer ans;

	memset(&ans, 0, sizeof(ans));
	ans.kind = kind;
	ans.resp = resp;
	ans.body = "";
	ans.detail = detail;
	ans.bytes = bytes;
	ld_answer(a, &ans);
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_agent *a = arg;
	struct ld_stdio *s = &a->sio;
	static const struct timeval tv = {0, 50000};

	(void)fd;
	(void)what;
	if (!s->zombie || ld_child_try_reap(s->zombie)) {
		s->zombie = 0;
		return;
	}
	if (++s->reap_polls >= REAP_POLLS) {
		/* closed its stdout but lives on: end it */
		ld_child_kill_reap(s->zombie);
		s->zombie = 0;
		return;
	}
	evtimer_add(s->reap_ev, &tv);
}

static void close_pipes(struct ld_stdio *s)
{
	if (s->in)
		bufferevent_free(s->in);
	if (s->out)
		bufferevent_free(s->out);
	s->in = s->out = NULL;
}

/* The server is gone (or must go): reap it, schedule the next launch,
 * fail what waited for it. */
static void died(struct mgw_load_agent *a, const char *why)
{
	struct ld_stdio *s = &a->sio;
	uint64_t backoff;
	pid_t pid = s->ch.pid;

	close_pipes(s);
	s->ch.pid = 0;
	if (pid && !ld_child_try_reap(pid)) {
		static const struct timeval tv = {0, 50000};

		if (s->zombie)
			ld_child_kill_reap(s->zombie);
		s->zombie = pid;
		s->reap_polls = 0;
		evtimer_add(s->reap_ev, &tv);
	}
	s->fails++;
	backoff = BACKOFF_MIN_MS << (s->fails < 7 ? s->fails - 1 : 6);
	if (backoff > BACKOFF_MAX_MS)
		backoff = BACKOFF_MAX_MS;
	s->next_launch_ms = mgw_now_ms() + backoff;
	mgw_info(NULL, "load: stdio server (pid %ld) %s; next launch in %llu ms",
	         (long)pid, why, (unsigned long long)backoff);
	/* a legacy session lives exactly as long as its server process */
	if (a->era == MGW_ERA_IS_LEGACY)
		ld_legacy_drop_session(a);
	event_del(s->answer_ev);
	if (s->want_id || s->accepted_ev) {
		s->want_id = 0;
		s->accepted_ev = 0;
		snprintf(s->detail, sizeof(s->detail), "stdio server %s", why);
		deliver(a, LD_ANS_FAILED, NULL, s->detail, 0);
	}
}

/* Answers a request the server sent us. */
static void answer_server(struct mgw_load_agent *a, const struct mgw_jrpc_msg *m)
{
	size_t len;
	char *body;

	if (strcmp(m->method, "ping") == 0)
		body = mgw_jrpc_result_body(mgw_jrpc_id(m), json_object(), &len);
	else
		body = mgw_jrpc_error_body(mgw_jrpc_id(m), MGW_JRPC_METHOD_NOT_FOUND,
		                           "Method not found", NULL, &len);
	if (body && a->sio.in) {
		bufferevent_write(a->sio.in, body, len);
		bufferevent_write(a->sio.in, "\n", 1);
	}
	free(body);
}

static void handle_line(struct mgw_load_agent *a, const char *line, size_t n)
{
	struct ld_stdio *s = &a->sio;
	struct mgw_jrpc_msg m;

	if (n == 0 || mgw_jrpc_classify(line, n, 0, &m) != 0)
		return;
	if (m.kind == MGW_JRPC_REQUEST) {
		answer_server(a, &m);
	} else if (m.kind == MGW_JRPC_RESPONSE && s->want_id && mgw_jrpc_id(&m) &&
	           json_is_integer(mgw_jrpc_id(&m)) && json_integer_value(mgw_jrpc_id(&m)) == s->want_id) {
		json_t *root = json_incref(mgw_jrpc_root(&m));

		s->want_id = 0;
		s->fails = 0;
		mgw_jrpc_msg_deinit(&m);
		deliver(a, LD_ANS_RESPONSE, root, NULL, n + 1);
		json_decref(root);
		return;
	}
	/* notifications, stale responses, noise: skipped */
	mgw_jrpc_msg_deinit(&m);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct mgw_load_agent *a = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n;
	char *line;

	while (a->sio.out == bev &&
	       (line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF)) != NULL) {
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		handle_line(a, line, n);
		free(line);
	}
	if (a->sio.out == bev && evbuffer_get_length(in) > LD_MAX_STDIO_LINE)
		died(a, "wrote a line over the limit");
}

static void on_out_event(struct bufferevent *bev, short what, void *arg)
{
	struct mgw_load_agent *a = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		died(a, "exited");
}

static void on_in_event(struct bufferevent *bev, short what, void *arg)
{
	struct mgw_load_agent *a = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		died(a, "closed its stdin");
}

static int launch(struct mgw_load_agent *a)
{
	struct ld_stdio *s = &a->sio;
	int quiet = mgw_log_get_level() < MGW_LOG_DEBUG;

	if (ld_spawn(a->target->stdio_cmd, 1, quiet, &s->ch) != 0) {
		s->fails++;
		s->next_launch_ms = mgw_now_ms() + BACKOFF_MAX_MS;
		return MGW_EIO;
	}
	s->in = bufferevent_socket_new(a->base, s->ch.in_fd, BEV_OPT_CLOSE_ON_FREE);
	if (s->in)
		s->ch.in_fd = -1;
	s->out = bufferevent_socket_new(a->base, s->ch.out_fd, BEV_OPT_CLOSE_ON_FREE);
	if (s->out)
		s->ch.out_fd = -1;
	if (!s->in || !s->out) {
		if (s->ch.in_fd >= 0)
			close(s->ch.in_fd);
		if (s->ch.out_fd >= 0)
			close(s->ch.out_fd);
		close_pipes(s);
		ld_child_kill_reap(s->ch.pid);
		s->ch.pid = 0;
		return MGW_ENOMEM;
	}
	bufferevent_setcb(s->out, on_read, NULL, on_out_event, a);
	bufferevent_setcb(s->in, NULL, NULL, on_in_event, a);
	bufferevent_enable(s->out, EV_READ);
	bufferevent_enable(s->in, EV_WRITE);
	mgw_debug(NULL, "load: started stdio server (pid %ld): %s",
	          (long)s->ch.pid, a->target->stdio_cmd);
	return 0;
}

static void on_answer_ev(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_agent *a = arg;

	(void)fd;
	(void)what;
	if (!a->sio.accepted_ev)
		return;
	a->sio.accepted_ev = 0;
	deliver(a, LD_ANS_ACCEPTED, NULL, NULL, 0);
}

static int write_msg(struct mgw_load_agent *a, const struct ld_msg *m)
{
	struct ld_stdio *s = &a->sio;

	if (bufferevent_write(s->in, m->body, m->body_len) != 0 ||
	    bufferevent_write(s->in, "\n", 1) != 0)
		return MGW_ENOMEM;
	if (m->id == 0) {
		/* a notification has no answer on stdio: accepted once
		 * written, told from the loop */
		s->accepted_ev = 1;
		event_active(s->answer_ev, 0, 0);
	} else {
		s->want_id = m->id;
	}
	return 0;
}

static void on_launch(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_load_agent *a = arg;
	struct ld_stdio *s = &a->sio;
	const struct ld_msg *m = s->pending;
	int rc;

	(void)fd;
	(void)what;
	s->pending = NULL;
	if (!m)
		return;
	rc = launch(a);
	if (rc == 0)
		rc = write_msg(a, m);
	if (rc != 0) {
		snprintf(s->detail, sizeof(s->detail),
		         "cannot start the stdio server: %s", mgw_strerror(rc));
		deliver(a, LD_ANS_FAILED, NULL, s->detail, 0);
	}
}

int ld_stdio_init(struct mgw_load_agent *a)
{
	struct ld_stdio *s = &a->sio;

	s->ch.in_fd = s->ch.out_fd = -1;
	s->launch_ev = evtimer_new(a->base, on_launch, a);
	s->reap_ev = evtimer_new(a->base, on_reap, a);
	s->answer_ev = event_new(a->base, -1, 0, on_answer_ev, a);
	if (!s->launch_ev || !s->reap_ev || !s->answer_ev)
		return MGW_ENOMEM;
	return 0;
}

int ld_stdio_send(struct mgw_load_agent *a, const struct ld_msg *m)
{
	struct ld_stdio *s = &a->sio;

	if (!m->body)
		return MGW_EINVAL; /* DELETE has no stdio meaning */
	if (!s->ch.pid) {
		uint64_t now = mgw_now_ms();

		if (now < s->next_launch_ms) {
			struct timeval tv = mgw_tv((double)(s->next_launch_ms - now) / 1000.0);

			s->pending = m;
			evtimer_add(s->launch_ev, &tv);
			return 0;
		}
		if (launch(a) != 0)
			return MGW_EIO;
	}
	return write_msg(a, m);
}

void ld_stdio_cancel(struct mgw_load_agent *a)
{
	struct ld_stdio *s = &a->sio;

	if (s->want_id && s->in) {
		json_t *p = json_pack("{s:I, s:s}", "requestId", (json_int_t)s->want_id,
		                      "reason", "timeout");
		size_t len;
		char *body = mgw_jrpc_notification_body("notifications/cancelled",
		                                        p, &len);

		if (body) {
			bufferevent_write(s->in, body, len);
			bufferevent_write(s->in, "\n", 1);
		}
		free(body);
	}
	s->want_id = 0;
	s->accepted_ev = 0;
	s->pending = NULL;
	if (s->launch_ev)
		evtimer_del(s->launch_ev);
	if (s->answer_ev)
		event_del(s->answer_ev);
}

void ld_stdio_deinit(struct mgw_load_agent *a)
{
	struct ld_stdio *s = &a->sio;

	s->want_id = 0;
	s->pending = NULL;
	close_pipes(s);
	if (s->ch.pid)
		ld_child_kill_reap(s->ch.pid);
	if (s->zombie)
		ld_child_kill_reap(s->zombie);
	if (s->launch_ev)
		event_free(s->launch_ev);
	if (s->reap_ev)
		event_free(s->reap_ev);
	if (s->answer_ev)
		event_free(s->answer_ev);
	memset(s, 0, sizeof(*s));
}
