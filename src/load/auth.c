/* auth.c - credentials from an auth command for `mcpgw load`: the
 * command (sh -c) prints header fields, which replace the static ones on
 * every request; it runs before the first request and again when a
 * request is refused with 401 (an expired token).
 *
 * One runner per (event base, command) is shared by every agent, so a
 * run of 1,000 agents starts the command once, and a burst of 401s after
 * an expiry starts it once more: an agent says which generation of the
 * fields it used, and a run is only started when no newer one exists or
 * is on its way.  The command runs without blocking the loop (its stdout
 * is read through a bufferevent) and is always reaped. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/headers.h"
#include "load/agent_impl.h"

/* Longest output accepted from the command. */
#define AUTH_OUT_MAX (64u * 1024)

struct ld_auth {
	struct ld_auth *next;
	struct event_base *base;
	char *cmd;
	unsigned refs;
	unsigned gen;               /* completed runs */
	struct mgw_headers hdr;     /* fields of the last good run */
	struct ld_child ch;         /* the run in progress (pid 0: none) */
	struct bufferevent *bev;    /* its stdout */
	struct ld_auth_wait *head, *tail;
	struct event *notify_ev;    /* wakes waiters from the loop */
	struct event *reap_ev;
	pid_t zombie;
	unsigned reap_polls;
};

/* Runners alive in this process.  mcpgw load runs one loop on one
 * thread; nothing here is thread-safe. */
static struct ld_auth *runners;

int ld_auth_parse(const char *out, size_t len, struct mgw_headers *h)
{
	const char *p = out, *end = out + len;
	size_t nlines = 0, nfields = 0;
	const char *single = NULL;
	size_t single_len = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;
		const char *colon;
		size_t n;

		n = (size_t)(le - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n > 0) {
			nlines++;
			colon = memchr(p, ':', n);
			if (colon && colon > p &&
			    mgw_header_name_valid(p, (size_t)(colon - p))) {
				const char *v = colon + 1;
				size_t vl = n - (size_t)(v - p);

				while (vl > 0 && (*v == ' ' || *v == '\t')) {
					v++;
					vl--;
				}
				while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
					vl--;
				if (!mgw_header_value_valid(v, vl) ||
				    mgw_headers_add(h, p, (size_t)(colon - p), v, vl) != 0)
					return MGW_EINVAL;
				nfields++;
			} else {
				single = p;
				single_len = n;
			}
		}
		p = eol ? eol + 1 : end;
	}
	if (nfields > 0 && single)
		return MGW_EINVAL; /* a line that is not a field among fields */
	if (nfields == 0) {
		/* one bare line: the value of Authorization ("Bearer ...") */
		if (nlines != 1 || !single || !mgw_header_value_valid(single, single_len))
			return MGW_EINVAL;
		while (single_len > 0 && (single[single_len - 1] == ' ' ||
		                          single[single_len - 1] == '\t'))
			single_len--;
		if (single_len == 0 ||
		    mgw_headers_add(h, "Authorization", 13, single, single_len) != 0)
			return MGW_EINVAL;
	}
	return 0;
}

const struct mgw_headers *ld_auth_headers(const struct ld_auth *au)
{
	return &au->hdr;
}

unsigned ld_auth_gen(const struct ld_auth *au)
{
	return au->gen;
}

static void unlink_wait(struct ld_auth_wait *w)
{
	struct ld_auth *au = w->auth;

	if (w->prev)
		w->prev->next = w->next;
	else
		au->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		au->tail = w->prev;
	w->prev = w->next = NULL;
	w->queued = 0;
}

void ld_auth_cancel(struct ld_auth_wait *w)
{
	if (w && w->queued)
		unlink_wait(w);
}

/* Serves every waiter whose generation is now outdated.  One at a time
 * from the head, since a callback may queue or cancel waiters. */
static void on_notify(evutil_socket_t fd, short what, void *arg)
{
	struct ld_auth *au = arg;
	struct ld_auth_wait *w;
	size_t guard = 1u << 20;

	(void)fd;
	(void)what;
	while (guard-- > 0) {
		for (w = au->head; w && w->seen >= au->gen; w = w->next)
			;
		if (!w)
			break;
		unlink_wait(w);
		w->cb(w, w->arg);
	}
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
	struct ld_auth *au = arg;
	static const struct timeval tv = {0, 50000};

	(void)fd;
	(void)what;
	if (!au->zombie || ld_child_try_reap(au->zombie)) {
		au->zombie = 0;
		return;
	}
	if (++au->reap_polls >= 100) {
		ld_child_kill_reap(au->zombie);
		au->zombie = 0;
		return;
	}
	evtimer_add(au->reap_ev, &tv);
}

/* The run ended (its stdout closed, or it failed to start): take its
 * output, reap it, and wake the waiters. */
static void run_done(struct ld_auth *au, int ok)
{
	struct mgw_headers h;
	struct evbuffer *in;
	pid_t pid = au->ch.pid;

	mgw_headers_init(&h);
	if (au->bev) {
		in = bufferevent_get_input(au->bev);
		if (ok) {
			size_t n = evbuffer_get_length(in);
			const char *s = (const char *)evbuffer_pullup(in, -1);

			if (!s || ld_auth_parse(s, n, &h) != 0)
				ok = 0;
		}
		bufferevent_free(au->bev);
		au->bev = NULL;
	}
	au->ch.pid = 0;
	if (pid && !ld_child_try_reap(pid)) {
		static const struct timeval tv = {0, 50000};

		if (au->zombie)
			ld_child_kill_reap(au->zombie);
		au->zombie = pid;
		au->reap_polls = 0;
		evtimer_add(au->reap_ev, &tv);
	}
	if (ok) {
		mgw_headers_deinit(&au->hdr);
		au->hdr = h;
	} else {
		mgw_headers_deinit(&h);
		mgw_warn(NULL, "load: the auth command gave no usable header "
		         "fields; keeping the previous ones");
	}
	au->gen++;
	event_active(au->notify_ev, 0, 0);
}

static void on_auth_read(struct bufferevent *bev, void *arg)
{
	struct ld_auth *au = arg;

	if (evbuffer_get_length(bufferevent_get_input(bev)) > AUTH_OUT_MAX)
		run_done(au, 0);
}

static void on_auth_event(struct bufferevent *bev, short what, void *arg)
{
	struct ld_auth *au = arg;

	(void)bev;
	if (what & BEV_EVENT_EOF)
		run_done(au, 1);
	else if (what & BEV_EVENT_ERROR)
		run_done(au, 0);
}

static void start_run(struct ld_auth *au)
{
	if (ld_spawn(au->cmd, 0, 0, &au->ch) != 0) {
		mgw_warn(NULL, "load: cannot start the auth command");
		run_done(au, 0);
		return;
	}
	au->bev = bufferevent_socket_new(au->base, au->ch.out_fd,
	                                 BEV_OPT_CLOSE_ON_FREE);
	if (!au->bev) {
		close(au->ch.out_fd);
		au->ch.out_fd = -1;
		run_done(au, 0);
		return;
	}
	au->ch.out_fd = -1;
	bufferevent_setcb(au->bev, on_auth_read, NULL, on_auth_event, au);
	bufferevent_enable(au->bev, EV_READ);
}

void ld_auth_refresh(struct ld_auth *au, unsigned seen, struct ld_auth_wait *w,
                     ld_auth_cb cb, void *arg)
{
	ld_auth_cancel(w);
	w->auth = au;
	w->cb = cb;
	w->arg = arg;
	w->seen = seen;
	w->queued = 1;
	w->next = NULL;
	w->prev = au->tail;
	if (au->tail)
		au->tail->next = w;
	else
		au->head = w;
	au->tail = w;
	if (au->gen > seen)
		event_active(au->notify_ev, 0, 0); /* newer fields exist */
	else if (!au->ch.pid && !au->bev)
		start_run(au);
	/* else: the run in progress serves it */
}

struct ld_auth *ld_auth_get(struct event_base *base, const char *cmd)
{
	struct ld_auth *au;

	for (au = runners; au; au = au->next)
		if (au->base == base && strcmp(au->cmd, cmd) == 0) {
			au->refs++;
			return au;
		}
	au = calloc(1, sizeof(*au));
	if (!au)
		return NULL;
	au->base = base;
	au->refs = 1;
	au->ch.in_fd = au->ch.out_fd = -1;
	mgw_headers_init(&au->hdr);
	au->cmd = strdup(cmd);
	au->notify_ev = event_new(base, -1, 0, on_notify, au);
	au->reap_ev = evtimer_new(base, on_reap, au);
	if (!au->cmd || !au->notify_ev || !au->reap_ev) {
		free(au->cmd);
		if (au->notify_ev)
			event_free(au->notify_ev);
		if (au->reap_ev)
			event_free(au->reap_ev);
		free(au);
		return NULL;
	}
	au->next = runners;
	runners = au;
	return au;
}

void ld_auth_put(struct ld_auth *au)
{
	struct ld_auth **pp;

	if (!au || --au->refs > 0)
		return;
	for (pp = &runners; *pp; pp = &(*pp)->next)
		if (*pp == au) {
			*pp = au->next;
			break;
		}
	while (au->head)
		unlink_wait(au->head);
	if (au->bev)
		bufferevent_free(au->bev);
	if (au->ch.pid)
		ld_child_kill_reap(au->ch.pid);
	if (au->zombie)
		ld_child_kill_reap(au->zombie);
	event_free(au->notify_ev);
	event_free(au->reap_ev);
	mgw_headers_deinit(&au->hdr);
	free(au->cmd);
	free(au);
}
