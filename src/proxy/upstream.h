/* upstream.h - upstream groups at run time: building them from the
 * configuration, choosing a server for an attempt (balancers in
 * balancer.c), feeding attempt outcomes to passive outlier ejection, and
 * in-flight accounting.  Read upstream-t.h first for the threading
 * contract; `now` is always monotonic milliseconds (mgw_now_ms()).
 *
 * A server is *available* when all of these hold:
 *   - not draining;
 *   - the active health check has it up (always true without checks);
 *   - it is not ejected: its ejection deadline is 0 or has passed.
 * Re-admission after an ejection needs no timer: once the deadline has
 * passed the server is available again, unless the active check has
 * meanwhile marked it down, in which case it returns only after `rise`
 * successful probes. */
#ifndef MGW_PROXY_UPSTREAM_H
#define MGW_PROXY_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/conf_serve-t.h"
#include "http/client-t.h"
#include "proxy/upstream-t.h"

/* Builds the groups of conf (which must stay alive until
 * mgw_upstreams_free): parses server URLs, builds hash rings and one
 * client TLS context per group with https servers, and the retry budget.
 * Every server starts available.  Returns NULL with a message in err
 * (a bad URL, an unreadable CA file) or on no memory. */
struct mgw_upstreams *mgw_upstreams_new(const struct mgw_serve_conf *conf,
                                        char *err, size_t errlen);

/* Frees everything; NULL allowed.  No worker or health checker may use
 * ups any more. */
void mgw_upstreams_free(struct mgw_upstreams *ups);

/* The server of ups in the group called group_name with the configured
 * URL url, or NULL: how a reload recognises an unchanged server. */
struct mgw_upstream_server *mgw_upstreams_same_server(
	const struct mgw_upstreams *ups, const char *group_name,
	const char *url);

/* After a reload: every server of next that old also had (same group
 * name, same URL) takes old's health verdict, ejection and its counters;
 * new servers start available; a group's replay-safe tools and its task
 * map (affinity: task) carry over too.  Returns how many were carried
 * over.
 * Main thread, before any worker uses next. */
size_t mgw_upstreams_adopt(struct mgw_upstreams *next,
                           const struct mgw_upstreams *old);

/* The group called name, or NULL. */
struct mgw_upstream_group *mgw_upstreams_find(const struct mgw_upstreams *ups,
                                              const char *name);

/* Per-worker balancer state for ups; seed 0 draws a random seed, any
 * other value makes the picker's choices reproducible (tests).  Returns
 * NULL on no memory.  Free with mgw_upstream_picker_free (NULL allowed)
 * before ups. */
struct mgw_upstream_picker *mgw_upstream_picker_new(
	const struct mgw_upstreams *ups, uint64_t seed);
void mgw_upstream_picker_free(struct mgw_upstream_picker *pk);

/* Chooses a server of g for one attempt with g's balancer, skipping
 * servers that are not available at now and the n_exclude servers in
 * exclude (those this request already tried, so that a retry lands on a
 * different replica).  key/keylen is the value of g's hash_header for the
 * hash balancer (NULL when the request lacks it: the pick falls back to
 * smooth round robin); other balancers ignore it.  Returns NULL when no
 * server qualifies.  pk must be the calling worker's own picker.  Does not
 * change the in-flight count: call mgw_upstream_acquire once the attempt
 * is started. */
struct mgw_upstream_server *mgw_upstream_group_pick(
	struct mgw_upstream_picker *pk, const struct mgw_upstream_group *g,
	const char *key, size_t keylen,
	const struct mgw_upstream_server *const *exclude, size_t n_exclude,
	uint64_t now);

/* Frees t's list (the servers are not the list's). */
void mgw_upstream_tried_free(struct mgw_upstream_tried *t);

/* 1 if s may take a new attempt at now (see the top of this file).  May
 * end an ejection whose deadline has passed (logged once, at info). */
int mgw_upstream_available(struct mgw_upstream_server *s, uint64_t now);

/* Where s stands at now, for logs and status output. */
enum mgw_upstream_state mgw_upstream_state(struct mgw_upstream_server *s,
                                           uint64_t now);
const char *mgw_upstream_state_name(enum mgw_upstream_state st);

/* Counts an attempt on s as in flight (least_request reads it) / ends it.
 * Every acquire must be matched by exactly one release. */
void mgw_upstream_acquire(struct mgw_upstream_server *s);
void mgw_upstream_release(struct mgw_upstream_server *s);

/* Feeds one attempt's outcome to passive outlier detection.  status is
 * the HTTP status for MGW_UPSTREAM_HTTP_5XX and MGW_UPSTREAM_OK (ignored
 * otherwise).  A success or a status below 500 resets both failure
 * counters; a connect failure increments the connect counter, a 5xx or
 * post-connect failure the other one (and resets the connect counter: the
 * server was reachable).  When a counter reaches its configured threshold
 * (0 disables it), s is ejected for base_ejection * 2^streak capped at
 * max_ejection, where streak counts the ejections in a row and restarts
 * at 0 when the previous ejection ended more than max_ejection before
 * now.  An ejection is skipped when no other server of the group is
 * available, so passive detection never empties a group by itself (the
 * active check still can).  Returns 1 if this call ejected s, else 0.
 * Safe from any worker thread. */
int mgw_upstream_report(struct mgw_upstream_server *s,
                        enum mgw_upstream_outcome outcome, int status,
                        uint64_t now);

/* Reports a failed request e on s (NULL allowed: nothing) to passive
 * outlier detection: a connect failure when e happened while connecting,
 * else a failure.  A refused HTTP/2 stream (the server shedding load or
 * restarting) and a timeout waiting for a free pooled connection (the
 * gateway's own limit) say nothing about s and are not reported. */
void mgw_upstream_report_error(struct mgw_upstream_server *s,
                               const struct mgw_client_error *e, uint64_t now);

/* Sets or clears the draining flag (a draining server takes no new
 * attempts; those in flight finish). */
void mgw_upstream_set_draining(struct mgw_upstream_server *s, int on);

/* Fills cfg to declare s as a client-layer origin (host, port, protocol,
 * the group's TLS context, SNI from tls.sni or the host, s->name).  The
 * strings point into s and g: valid as long as ups. */
void mgw_upstream_origin_cfg(const struct mgw_upstream_server *s,
                             struct mgw_client_origin_cfg *cfg);

/* Applies a health-check verdict (called by the health checker; tests may
 * call it directly).  Logs nothing: the caller logs the transition; a
 * change of state is counted (n_went_down, n_went_up). */
void mgw_upstream_set_health(struct mgw_upstream_server *s, int up);

#endif
