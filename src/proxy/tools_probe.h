/* tools_probe.h - the gateway asks a group's servers for their modern
 * tools/list itself, as it probes their health, so that the group knows
 * which tools are safe to replay (replay.h).  upstreams[].tools_probe:
 * true asks at start (before the first tools/call), then every
 * MGW_TOOLS_PROBE_INTERVAL_S (sooner again after a failure), to one
 * available server in turn.  auto (the default) asks only once a
 * tools/list of clients' traffic has taught the group, and then only
 * when what was learned last is half its lifetime old: clients list
 * their tools once and call them for hours, while what was learned is
 * forgotten MGW_REPLAY_TOOLS_TTL_MS after the last list; a failed auto
 * probe waits the whole interval.  A modern tools/list needs no session; a
 * legacy server's refusal simply teaches nothing.  The first page only
 * (a cursor-paged list teaches its first page; clients' own tools/list
 * answers teach the rest).  Runs on the main thread's loop with the
 * health checker's HTTP client; doc/serve.md ("Requests lost in
 * flight"). */
#ifndef MGW_PROXY_TOOLS_PROBE_H
#define MGW_PROXY_TOOLS_PROBE_H

#include <stddef.h>

#include <event2/event.h>

#include "http/client-t.h"
#include "proxy/upstream-t.h"

#define MGW_TOOLS_PROBE_INTERVAL_S 300.0  /* half the tools' lifetime */
#define MGW_TOOLS_PROBE_RETRY_S 10.0      /* after a failed probe */
#define MGW_TOOLS_PROBE_AUTO_CHECK_S 30.0 /* auto: how often it looks
                                           * whether traffic taught the
                                           * group yet */
#define MGW_TOOLS_PROBE_BODY_MAX (1024 * 1024)

struct mgw_tools_probe;

/* A prober of group g (which must outlive it) through client.  NULL on
 * failure, with err set. */
struct mgw_tools_probe *mgw_tools_probe_new(struct event_base *base,
                                            struct mgw_client *client,
                                            struct mgw_upstream_group *g,
                                            char *err, size_t errlen);
/* The first probe now, then periodic. */
void mgw_tools_probe_start(struct mgw_tools_probe *p);
/* Probes sent and answers learned from (tests, logs). */
void mgw_tools_probe_counts(const struct mgw_tools_probe *p, size_t *sent,
                            size_t *learned);
/* Stops and frees (call before the client is freed; NULL allowed). */
void mgw_tools_probe_free(struct mgw_tools_probe *p);

#endif
