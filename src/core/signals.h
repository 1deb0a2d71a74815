/* signals.h - SIGTERM/SIGINT (and for servers SIGHUP) handling on an
 * event loop. */
#ifndef MGW_CORE_SIGNALS_H
#define MGW_CORE_SIGNALS_H

#include <event2/event.h>

typedef void (*mgw_stop_cb)(int signo, void *arg);

struct mgw_signals;

/* Routes SIGTERM and SIGINT to on_stop, from the loop (never from the
 * signal handler).  A second signal while stopping forces immediate exit
 * (status 1).  Returns NULL on failure. */
struct mgw_signals *mgw_signals_new(struct event_base *base, mgw_stop_cb on_stop,
                                    void *arg);
/* For servers: SIGHUP (a terminal gone, a supervisor's "reload") is
 * logged and otherwise ignored instead of ending the process; there is
 * no reload.  Returns 0 or -1. */
int mgw_signals_ignore_hup(struct mgw_signals *s, struct event_base *base);
/* What a server installs before its "listening on" lines, so that a
 * signal from a supervisor that saw them is a graceful stop: the two of
 * mgw_signals_new, and SIGHUP ignored.  Returns NULL on failure (nothing
 * left installed). */
struct mgw_signals *mgw_signals_server_new(struct event_base *base,
                                           mgw_stop_cb on_stop, void *arg);
/* SIGHUP calls on_reload (from the loop) instead of being ignored, unless
 * a stop is under way. */
void mgw_signals_on_reload(struct mgw_signals *s, mgw_stop_cb on_reload,
                           void *arg);
/* SIGUSR1 ("reopen your log files", what logrotate's postrotate sends)
 * runs on_reopen(arg) from the loop.  Separate from the stop signals and
 * SIGHUP; removed by mgw_signals_free.  Returns 0 or -1. */
int mgw_signals_on_reopen(struct mgw_signals *s, struct event_base *base,
                          void (*on_reopen)(void *arg), void *arg);
/* Removes the handlers; NULL is allowed. */
void mgw_signals_free(struct mgw_signals *s);

#endif
