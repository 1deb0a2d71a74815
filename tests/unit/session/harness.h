/* harness.h - shared helpers of the session store tests: an injected
 * clock, a configuration snapshot to tweak, drafts, and running one store
 * operation to completion on a test event loop. */
#ifndef MGW_TEST_SESSION_HARNESS_H
#define MGW_TEST_SESSION_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "conf/config-t.h"
#include "session/session-t.h"
#include "session/store-t.h"

struct th_clock {
	uint64_t mono_ms;
	int64_t wall_s;
};

/* A fresh clock at a fixed start and an env using it (no house loop). */
void th_clock_init(struct th_clock *c);
struct mgw_session_env th_env(struct th_clock *c);

/* A defaults snapshot (mgw_config_defaults); its sessions conf is what
 * tests tweak before making a store.  Free with mgw_config_free. */
struct mgw_config *th_config(void);

/* A draft holding body as initialize, pinned to url / sid (either may be
 * NULL), protocol version "2025-11-25", one replay header. */
struct mgw_session *th_draft(const char *body, const char *url,
                             const char *sid);

/* The result of one operation. */
struct th_result {
	int calls;              /* how many times the callback ran */
	int status;
	struct mgw_session *rec;
	int *in_call;           /* when set: the callback fails the test if
	                         * *in_call is non-zero */
};

/* The callback recording into a struct th_result. */
void th_record(void *arg, int status, struct mgw_session *rec);

/* Runs base until r->calls is non-zero (bounded: fails the test after
 * 1000 loop passes).  Exactly one call is expected. */
void th_wait(struct event_base *base, struct th_result *r);

/* Runs one pass of base without blocking. */
void th_spin(struct event_base *base);

/* Each runs one operation to completion; returns the status and leaves
 * the record (a reference the caller drops) in *rec when rec != NULL. */
int th_create(struct mgw_session_view *v, struct mgw_session *draft,
              struct mgw_session **rec);
int th_lookup(struct mgw_session_view *v, const char *id,
              const unsigned char *principal, struct mgw_session **rec);
int th_update(struct mgw_session_view *v, struct mgw_session *r,
              uint64_t expect, struct mgw_session **rec);
int th_remove(struct mgw_session_view *v, const char *id);

#endif
