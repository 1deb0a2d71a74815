/* reload.h - configuration generations of `mcpgw serve` and the reload
 * on SIGHUP (reload.c).  Main thread only. */
#ifndef MGW_PROXY_RELOAD_H
#define MGW_PROXY_RELOAD_H

#include <event2/event.h>

#include "proxy/serve-t.h"

/* A generation of cfg (taken over: freed with it, unless it opens the
 * session stores, see stores_owner): upstream groups, routes and, in the
 * stateful modes, the handler's shared state — the same stores as
 * prev_sf when given, else new stores with expiry sweeps on house.
 * Returns NULL with a message in err (cfg is then still the caller's). */
struct mgw_serve_gen *mgw_serve_gen_new(struct mgw_config *cfg,
                                        struct mgw_sf_shared *prev_sf,
                                        struct event_base *house, char *err,
                                        size_t errlen);
/* Frees g; its snapshot too unless g->stores_owner.  NULL allowed. */
void mgw_serve_gen_free(struct mgw_serve_gen *g);
/* Frees sv's retired generations that no pipeline uses (all: every one,
 * at exit, after the workers were freed). */
void mgw_serve_gen_collect(struct serve *sv, int all);

/* Reloads sv->path (SIGHUP): logs "reload: done ..." at warn, or
 * "reload refused ..." with the reason (a file:line:col error, a change
 * that needs a restart) at error and keeps the running configuration. */
void mgw_serve_reload(struct serve *sv);

#endif
