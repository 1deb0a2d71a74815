/* health.h - active health checks of upstream servers.
 *
 * One checker serves every worker: it runs on one event loop (the main
 * thread's) and publishes each server's verdict through the shared atomic
 * in struct mgw_upstream_server (mgw_upstream_set_health), which workers
 * read when they pick.  Per server, every `interval` (the first probe at
 * start, then spread with a little jitter so servers are not probed in
 * lock step) one probe runs, bounded by `timeout`; a probe is never
 * started while the previous one of that server is still running.
 *
 * Probes.  `type: http` sends `method` to the server's probe path (the
 * URL's prefix + "/mcp" unless `path` is set) through the HTTP client
 * layer on a fresh connection each time (a pooled connection could hide a
 * dead listener), with the group's protocol and TLS settings; it passes
 * when the response status equals `expect_status` and the response ends
 * within the timeout.  A non-empty body goes out with Content-Type
 * application/json and Accept "application/json, text/event-stream"; when
 * the body is a JSON-RPC request the SEP-2243 headers are mirrored from
 * it (MCP-Protocol-Version from _meta, Mcp-Method, Mcp-Name), so a modern
 * server that validates them accepts the probe; `headers` are added last.
 * `type: tcp` passes when a TCP connection is established (then closed).
 *
 * The default probe speaks both eras.  When a group's probe is left at
 * its default (a POST of the modern server/discover request to the
 * server's /mcp, expecting 200; interval, timeout, rise and fall may be
 * set), an answer that shows a legacy-era MCP server
 * (MGW_PROBE_LEGACY: 400, 404 or 405 with a JSON-RPC error body, which is
 * what a legacy server says to a request without a session) passes too:
 * the server is alive and speaks MCP, in the older era.  A configured
 * probe passes on its expect_status only.
 *
 * The first round.  When every server of a group has answered its first
 * probe, and all in the same telling way, one line is logged at warn:
 * every server answered as a legacy server while the mode is stateless
 * (their sessions break across servers: use auto), or while the probe
 * was configured (they are marked down), or every server answered 404
 * (a URL path that does not lead to the MCP endpoint; a doubled path,
 * hints.h, is said at start by `mcpgw serve` instead).
 *
 * Hysteresis (mgw_health_sm_feed).  A server starts up and undecided: the
 * first probe decides alone (so a replica that is dead at start is out
 * after one probe, and a live one stays in).  After that an up server goes
 * down after `fall` failures in a row and a down server comes back after
 * `rise` successes in a row.  Transitions are logged at info:
 * "upstream NAME down: REASON" and "upstream NAME up". */
#ifndef MGW_PROXY_HEALTH_H
#define MGW_PROXY_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "proxy/health-t.h"
#include "proxy/upstream-t.h"

/* Starts sm: up, undecided. */
void mgw_health_sm_init(struct mgw_health_sm *sm);

/* Feeds one probe result (ok = 1 passed, 0 failed) with the group's rise
 * and fall (both >= 1).  Returns the transition it caused, if any. */
enum mgw_health_change mgw_health_sm_feed(struct mgw_health_sm *sm, int ok,
                                          uint32_t rise, uint32_t fall);

/* Classifies a probe answer: its status, what the probe expects and the
 * start of the body (len bytes; at most a few KiB are kept). */
enum mgw_probe_answer mgw_health_classify(int status, int expect_status,
                                          const void *body, size_t len);

/* 1 when h is the default HTTP probe (method, path, body, headers and
 * expect_status as built in), whose legacy answers pass. */
int mgw_health_conf_is_default(const struct mgw_health_conf *h);

/* Creates a checker on base for every server of ups whose group has
 * health.enabled (others stay up for good).  Nothing runs until
 * mgw_health_start.  Returns NULL on no memory or with a message in err
 * (e.g. a probe header the client layer refuses). */
struct mgw_health *mgw_health_new(struct event_base *base,
                                  struct mgw_upstreams *ups, char *err,
                                  size_t errlen);

/* Schedules the first probe of every checked server (from the loop, not
 * from inside this call).  Returns 0. */
int mgw_health_start(struct mgw_health *h);

/* Stops every probe (in-flight ones are cancelled; no verdict changes
 * afterwards) and frees.  Must be called from base's thread while its
 * loop is not dispatching a callback of h.  NULL allowed. */
void mgw_health_free(struct mgw_health *h);

/* After a reload, before mgw_health_start: each probe of h whose server
 * old also probed (same group name, same URL) goes on from old's verdict
 * and runs; h's counters start from old's.  Main thread. */
void mgw_health_adopt(struct mgw_health *h, const struct mgw_health *old);

/* Number of servers under active checks. */
size_t mgw_health_count(const struct mgw_health *h);

/* Copies the counters into *st. */
void mgw_health_stats(const struct mgw_health *h, struct mgw_health_stats *st);

#endif
