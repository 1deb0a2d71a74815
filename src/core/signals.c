/* signals.c - deliver SIGTERM/SIGINT to the event loop as a stop request. */
#include "autoconf.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/log.h"
#include "core/signals.h"

struct mgw_signals {
	struct event *term;
	struct event *intr;
	struct event *hup;
	mgw_stop_cb on_stop;
	void *arg;
	mgw_stop_cb on_reload;          /* SIGHUP, or NULL: ignored */
	void *reload_arg;
	int stopping;
	/* SIGUSR1: reopen log files (mgw_signals_on_reopen) */
	struct event *usr1;
	void (*on_reopen)(void *arg);
	void *reopen_arg;
};

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_signals *s = arg;
	int signo = (int)fd;

	(void)what;
	if (s->stopping) {
		mgw_warn(NULL, "second signal %d while stopping: exiting now", signo);
		_exit(1);
	}
	s->stopping = 1;
	mgw_info(NULL, "signal %d: stopping gracefully", signo);
	s->on_stop(signo, s->arg);
}

/* SIGHUP: a terminal that went away, or a supervisor's "reload".  It
 * reloads when the command said how; it never kills the process. */
static void on_hup(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_signals *s = arg;

	(void)fd;
	(void)what;
	if (s->on_reload && !s->stopping) {
		s->on_reload(SIGHUP, s->reload_arg);
		return;
	}
	mgw_warn(NULL, "SIGHUP ignored: %s", s->stopping ? "stopping" :
	         "this command has no reload; restart to apply a new "
	         "configuration");
}

void mgw_signals_on_reload(struct mgw_signals *s, mgw_stop_cb on_reload,
                           void *arg)
{
	s->on_reload = on_reload;
	s->reload_arg = arg;
}

struct mgw_signals *mgw_signals_new(struct event_base *base, mgw_stop_cb on_stop,
                                    void *arg)
{
	struct mgw_signals *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->on_stop = on_stop;
	s->arg = arg;
	s->term = evsignal_new(base, SIGTERM, on_signal, s);
	s->intr = evsignal_new(base, SIGINT, on_signal, s);
	if (!s->term || !s->intr || evsignal_add(s->term, NULL) != 0 ||
	    evsignal_add(s->intr, NULL) != 0) {
		mgw_signals_free(s);
		return NULL;
	}
	return s;
}

int mgw_signals_ignore_hup(struct mgw_signals *s, struct event_base *base)
{
	if (s->hup)
		return 0;
	s->hup = evsignal_new(base, SIGHUP, on_hup, s);
	if (!s->hup || evsignal_add(s->hup, NULL) != 0)
		return -1;
	return 0;
}

struct mgw_signals *mgw_signals_server_new(struct event_base *base,
                                           mgw_stop_cb on_stop, void *arg)
{
	struct mgw_signals *s = mgw_signals_new(base, on_stop, arg);

	if (s && mgw_signals_ignore_hup(s, base) != 0) {
		mgw_signals_free(s);
		return NULL;
	}
	return s;
}

static void on_usr1(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_signals *s = arg;

	(void)fd;
	(void)what;
	s->on_reopen(s->reopen_arg);
}

int mgw_signals_on_reopen(struct mgw_signals *s, struct event_base *base,
                          void (*on_reopen)(void *arg), void *arg)
{
	if (s->usr1)
		return -1;
	s->on_reopen = on_reopen;
	s->reopen_arg = arg;
	s->usr1 = evsignal_new(base, SIGUSR1, on_usr1, s);
	if (!s->usr1 || evsignal_add(s->usr1, NULL) != 0)
		return -1;
	return 0;
}

void mgw_signals_free(struct mgw_signals *s)
{
	if (!s)
		return;
	if (s->usr1)
		event_free(s->usr1);
	if (s->term)
		event_free(s->term);
	if (s->intr)
		event_free(s->intr);
	if (s->hup)
		event_free(s->hup);
	free(s);
}
