/* serve-t.h - the run-time state of `mcpgw serve` on its main thread
 * (private to serve_cmd.c and reload.c). */
#ifndef MGW_PROXY_SERVE_T_H
#define MGW_PROXY_SERVE_T_H

#include <stdatomic.h>

#include <event2/event.h>

#include "conf/config-t.h"
#include "auth/keyring.h"
#include "http/connlim.h"
#include "proxy/ratelimit.h"
#include "core/cli-t.h"
#include "net/serve_listeners.h"
#include "proxy/route-t.h"
#include "proxy/stateful-t.h"
#include "proxy/upstream-t.h"
#include "proxy/worker-t.h"

/* One configuration generation: the snapshot and what was built from it
 * for the workers to share.  A reload makes a new one current; the old
 * one lives on while pipelines of it still run requests (refs counts
 * them) and is freed on the main thread when refs reaches 0. */
struct mgw_serve_gen {
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_routes *routes;
	struct mgw_sf_shared *sf;       /* stateful and auto modes */
	struct mgw_keyring *keys;       /* auth: the keys tokens are checked
	                                 * with (fetched on the main loop) */
	atomic_int refs;                /* retired pipelines not yet freed */
	int stores_owner;               /* the session stores were opened
	                                 * with this snapshot's settings (they
	                                 * borrow its strings): cfg is kept
	                                 * until the end */
	unsigned seq;                   /* 1 at start, +1 per reload */
	struct mgw_serve_gen *next;     /* older retired generations */
};

/* One bound listener: what was asked, and the address every worker's
 * socket got. */
struct mgw_serve_lst {
	char address[256];
	char cert[1024], key[1024];
	char bound[MGW_BOUND_LEN];
};

struct serve_flags;

struct serve {
	struct event_base *base;        /* main thread: signals, health */
	struct mgw_serve_gen *gen;      /* current */
	struct mgw_serve_gen *retired;  /* older ones still in use */
	struct mgw_config *cfg;         /* gen->cfg */
	struct mgw_upstreams *ups;      /* gen->ups */
	struct mgw_routes *routes;      /* gen->routes */
	struct mgw_sf_shared *sf;       /* gen->sf */
	struct mgw_health *health;      /* probes gen->ups */
	struct mgw_config *stores_cfg;  /* the snapshot the session stores
	                                 * were opened with (freed last) */
	struct mgw_worker **workers;
	unsigned n_workers;
	struct mgw_liveness *live;      /* the workers' loop stamps */
	struct mgw_metrics *metrics;    /* the workers' counters (GET /metrics) */
	struct mgw_rl_table *rlt;       /* the routes' rate-limit buckets,
	                                 * every worker's, across reloads */
	struct mgw_mrtr_set *mrtr;      /* the requestState digests of the
	                                 * routes' mrtr: guard, every
	                                 * worker's, across reloads */
	struct mgw_http_connlim *connlim; /* connections per client address,
	                                 * every worker's listeners (or NULL:
	                                 * no such limit) */
	struct mgw_park park;           /* reloads stop the workers here */
	struct mgw_serve_lst lst[MGW_CLI_MAX_LISTEN];
	size_t n_lst;
	const struct serve_flags *flags; /* the command line, applied over
	                                 * every file loaded */
	const char *path;               /* -c FILE, or NULL */
	struct event *exited_ev;
	struct event *drain_ev;         /* the drain delay's timer */
	struct event *gc_ev;            /* frees retired generations */
	int park_ok;                    /* park initialised */
	int stopping;
	int failed;                     /* a worker ended on its own */
	unsigned reloads, reloads_failed;
};

/* serve_cmd.c: turns a loaded file into what serve runs: the command
 * line over it, the probes of its mode, the listeners to bind (ls, *n).
 * Returns 0 or an exit code (the reason printed). */
int mgw_serve_prepare(const struct serve_flags *f, struct mgw_config *cfg,
                      struct mgw_listen_spec *ls, size_t *n);
/* serve_cmd.c: the log settings of cfg (and the command line): level,
 * access log on or off, its format; at start (reload 0) the access log
 * file is opened too, a reload keeps the one open.  Returns 0 or an exit
 * code. */
int mgw_serve_apply_logs(const struct serve_flags *f,
                         const struct mgw_config *cfg, int reload);
/* serve_cmd.c: the number of workers cfg asks for. */
unsigned mgw_serve_workers(const struct mgw_config *cfg);
/* serve_cmd.c: binds ls (n of them) in every worker, prints their
 * "listening on" lines, records them in sv->lst from index first.
 * Returns 0 or an exit code. */
int mgw_serve_bind(struct serve *sv, const struct mgw_listen_spec *ls,
                   size_t n, size_t first);

#endif
