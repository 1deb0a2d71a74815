/* signals.h - SIGTERM/SIGINT handling on an event loop. */
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
/* Removes the handlers; NULL is allowed. */
void mgw_signals_free(struct mgw_signals *s);

#endif
