/* harness.c - shared helpers of the session store tests (harness.h). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "conf/config.h"
#include "session/session.h"
#include "session/store.h"
#include "harness.h"

#define START_WALL 1700000000LL

void th_clock_init(struct th_clock *c)
{
	c->mono_ms = 1000000;
	c->wall_s = START_WALL;
}

static uint64_t mono(void *arg)
{
	return ((struct th_clock *)arg)->mono_ms;
}

static int64_t wall(void *arg)
{
	return ((struct th_clock *)arg)->wall_s;
}

struct mgw_session_env th_env(struct th_clock *c)
{
	struct mgw_session_env e = {
		.mono_ms = mono, .wall_s = wall, .clock_arg = c,
	};

	return e;
}

struct mgw_config *th_config(void)
{
	struct mgw_config *c = mgw_config_defaults();

	assert_non_null(c);
	return c;
}

struct mgw_session *th_draft(const char *body, const char *url,
                             const char *sid)
{
	struct mgw_session *s = mgw_session_new();

	assert_non_null(s);
	assert_int_equal(mgw_session_set_init(s, body, strlen(body)), 0);
	assert_int_equal(mgw_session_set_pin(s, url, sid), 0);
	assert_int_equal(mgw_session_set_protocol_version(s, "2025-11-25"), 0);
	assert_int_equal(mgw_session_add_init_header(s, "MCP-Protocol-Version",
	                                             "2025-11-25"), 0);
	return s;
}

void th_record(void *arg, int status, struct mgw_session *rec)
{
	struct th_result *r = arg;

	if (r->in_call && *r->in_call)
		fail_msg("callback ran inside the call that started it");
	r->calls++;
	r->status = status;
	r->rec = rec;
}

void th_spin(struct event_base *base)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
}

void th_wait(struct event_base *base, struct th_result *r)
{
	for (int i = 0; i < 1000 && r->calls == 0; i++)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_int_equal(r->calls, 1);
}

static int finish(struct mgw_session_view *v, int rc, struct th_result *r,
                  struct mgw_session **rec)
{
	assert_int_equal(rc, 0);
	/* Never inside the call: nothing may have been delivered yet. */
	assert_int_equal(r->calls, 0);
	th_wait(v->base, r);
	if (rec)
		*rec = r->rec;
	else
		mgw_session_unref(r->rec);
	return r->status;
}

int th_create(struct mgw_session_view *v, struct mgw_session *draft,
              struct mgw_session **rec)
{
	struct th_result r = {0};

	return finish(v, mgw_session_create(v, draft, th_record, &r, NULL), &r,
	              rec);
}

int th_lookup(struct mgw_session_view *v, const char *id,
              const unsigned char *principal, struct mgw_session **rec)
{
	struct th_result r = {0};

	return finish(v, mgw_session_lookup(v, id, strlen(id), principal,
	                                    th_record, &r, NULL), &r, rec);
}

int th_update(struct mgw_session_view *v, struct mgw_session *s,
              uint64_t expect, struct mgw_session **rec)
{
	struct th_result r = {0};

	return finish(v, mgw_session_update(v, s, expect, th_record, &r, NULL),
	              &r, rec);
}

int th_remove(struct mgw_session_view *v, const char *id)
{
	struct th_result r = {0};

	return finish(v, mgw_session_remove(v, id, strlen(id), th_record, &r,
	                                    NULL), &r, NULL);
}
