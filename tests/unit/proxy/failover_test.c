/* failover_test.c - the failover policy (src/proxy/failover.c) as a
 * table: one row per case of failover.h and of doc/serve.md's stateful
 * mode ("what a lost replica costs"), the facts of a failed attempt in,
 * the action and re-pin reason out. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "proxy/failover.h"

#define NS MGW_CLIENT_F_NOT_SENT
#define RB MGW_CLIENT_F_RESP_BYTES
#define QU MGW_CLIENT_F_QUEUED
#define CO MGW_CLIENT_F_CONNECT

struct row {
	const char *what;
	struct mgw_fo_in in;
	enum mgw_fo_action action;
	enum mgw_repin_reason reason;
};

/* in: req, streaming, cls, flags, attempts, retries, replay, replays,
 *     max_replays, same_as_last_loss, pinned */
static const struct row rows[] = {
	/* stateless balancing */
	{"stateless: refused, retries left",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CONNECT, NS | CO, 1, 1, 0, 0, 0, 0, 0},
	 MGW_FO_RETRY, 0},
	{"stateless: refused, retries used up",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CONNECT, NS | CO, 2, 1, 0, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"stateless: h2 REFUSED_STREAM before any byte",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_REFUSED, NS, 1, 2, 0, 0, 0, 0, 0},
	 MGW_FO_RETRY, 0},
	{"stateless: not sent but response bytes seen, not safe (-32010)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, NS | RB, 1, 2,
	  MGW_REPLAY_NO_TOOL, 0, 0, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"stateless: sent, then closed, a tool not known safe (-32010)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 1, 2,
	  MGW_REPLAY_NO_TOOL, 0, 0, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"stateless: timeout",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_TIMEOUT, 0, 1, 2, 0, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	/* stateless, pinned to a task's owner (affinity: task) */
	{"pinned: the owner refused the connection: gone",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CONNECT, NS | CO, 1, 1,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 1},
	 MGW_FO_GONE, 0},
	{"pinned: refused, retries used up: still gone",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CONNECT, NS | CO, 3, 1,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 1},
	 MGW_FO_GONE, 0},
	{"pinned: the owner's name did not resolve: gone",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_DNS, NS | CO, 1, 1, 0, 0, 0, 0, 1},
	 MGW_FO_GONE, 0},
	{"pinned: TLS with the owner failed: gone",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_TLS, NS | CO, 1, 1, 0, 0, 0, 0, 1},
	 MGW_FO_GONE, 0},
	{"pinned: a pooled connection closed before sending: asked again",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, NS, 1, 1, 0, 0, 0, 0, 1},
	 MGW_FO_RETRY, 0},
	{"pinned: waited for a connection: a retry, not gone",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_TIMEOUT, NS | QU, 1, 1, 0, 0, 0, 0, 1},
	 MGW_FO_RETRY, 0},
	{"pinned: tasks/get lost in flight: replayed (to the owner)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 1, 1,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 1},
	 MGW_FO_REPLAY, 0},
	{"pinned: tasks/update lost in flight: not replayed",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 1, 1,
	  MGW_REPLAY_NO_METHOD, 0, 0, 0, 1},
	 MGW_FO_REFUSE, 0},
	{"pinned: timeout: an error, not gone",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_TIMEOUT, 0, 1, 1,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 1},
	 MGW_FO_FAIL, 0},
	{"pinned: the answer had started: cut",
	 {MGW_FO_STATELESS, 1, MGW_CLIENT_E_CONNECT, CO, 1, 1, 0, 0, 0, 0, 1},
	 MGW_FO_ABORT, 0},
	/* stateless: lost in flight (sent; closed or reset before a complete
	 * answer), judged by replay.h */
	{"stateless: lost in flight, a safe method: replayed",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 1, 2,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 0},
	 MGW_FO_REPLAY, 0},
	{"stateless: reset in flight, a tool annotated idempotent: replayed",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_RESET, 0, 1, 1,
	  MGW_REPLAY_OK_TOOL, 0, 0, 0, 0},
	 MGW_FO_REPLAY, 0},
	{"stateless: collected answer cut short, replay: always",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, RB, 1, 1,
	  MGW_REPLAY_OK_ROUTE, 0, 0, 0, 0},
	 MGW_FO_REPLAY, 0},
	{"stateless: lost in flight, safe, retries used up",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 3, 2,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"stateless: lost in flight, no retries configured",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 1, 0,
	  MGW_REPLAY_OK_TOOL, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"stateless: unsafe beats retries-used-up (-32010)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 3, 2,
	  MGW_REPLAY_NO_TOOL, 0, 0, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"stateless: lost in flight, requestState (-32010)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 1, 2,
	  MGW_REPLAY_NO_STATE, 0, 0, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"stateless: lost in flight, a method not safe by the spec (-32010)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_RESET, 0, 1, 2,
	  MGW_REPLAY_NO_METHOD, 0, 0, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"stateless: lost in flight, a batch (-32010)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_CLOSED, 0, 1, 2,
	  MGW_REPLAY_NO_BATCH, 0, 0, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"stateless: waited for a connection, then timed out",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_TIMEOUT, QU, 1, 2,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"stateless: timeout of a safe method (it may still run)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_TIMEOUT, 0, 1, 2,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"stateless: malformed answer of a safe method (server is there)",
	 {MGW_FO_STATELESS, 0, MGW_CLIENT_E_PROTO, RB, 1, 2,
	  MGW_REPLAY_OK_METHOD, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"stateless: SSE head sent, then cut: never replayed",
	 {MGW_FO_STATELESS, 1, MGW_CLIENT_E_CLOSED, RB, 1, 2,
	  MGW_REPLAY_OK_ROUTE, 0, 0, 0, 0},
	 MGW_FO_ABORT, 0},
	{"stateless: cut mid-stream",
	 {MGW_FO_STATELESS, 1, MGW_CLIENT_E_CLOSED, RB, 1, 2, 0, 0, 0, 0, 0},
	 MGW_FO_ABORT, 0},
	/* initialize: no session yet */
	{"initialize: refused, retries left",
	 {MGW_FO_INIT, 0, MGW_CLIENT_E_CONNECT, NS | CO, 1, 1, 0, 0, 0, 0, 0},
	 MGW_FO_RETRY, 0},
	{"initialize: replica closed before the answer",
	 {MGW_FO_INIT, 0, MGW_CLIENT_E_CLOSED, 0, 1, 1, 0, 0, 0, 0, 0},
	 MGW_FO_RETRY, 0},
	{"initialize: replica reset before the answer",
	 {MGW_FO_INIT, 0, MGW_CLIENT_E_RESET, 0, 1, 1, 0, 0, 0, 0, 0},
	 MGW_FO_RETRY, 0},
	{"initialize: closed, retries used up",
	 {MGW_FO_INIT, 0, MGW_CLIENT_E_CLOSED, 0, 2, 1, 0, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"initialize: timeout",
	 {MGW_FO_INIT, 0, MGW_CLIENT_E_TIMEOUT, 0, 1, 1, 0, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	{"initialize: invalid answer",
	 {MGW_FO_INIT, 0, MGW_CLIENT_E_PROTO, RB, 1, 1, 0, 0, 0, 0, 0},
	 MGW_FO_FAIL, 0},
	/* DELETE: best effort upstream, the mapping goes */
	{"delete: upstream failed",
	 {MGW_FO_DELETE, 0, MGW_CLIENT_E_CONNECT, NS | CO, 1, 0, 0, 0, 0, 0, 0},
	 MGW_FO_DROP, 0},
	{"delete: timeout",
	 {MGW_FO_DELETE, 0, MGW_CLIENT_E_TIMEOUT, 0, 1, 0, 0, 0, 0, 0, 0},
	 MGW_FO_DROP, 0},
	/* requests of a session */
	{"session: GET stream cut (client reconnects, then re-pinned)",
	 {MGW_FO_SESSION, 1, MGW_CLIENT_E_CLOSED, RB, 1, 0, 0, 0, 2, 0, 0},
	 MGW_FO_ABORT, 0},
	{"session: waited for a connection (gateway limit)",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_TIMEOUT, NS | QU, 1, 0, 0, 0, 2, 0, 0},
	 MGW_FO_FAIL, 0},
	{"session: refused (connect refused, REFUSED_STREAM, GOAWAY)",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CONNECT, NS | CO, 1, 0, 0, 0, 2, 0, 0},
	 MGW_FO_REPIN, MGW_REPIN_REFUSED},
	{"session: refused even with replays used up",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_REFUSED, NS, 3, 0, 0, 2, 2, 1, 0},
	 MGW_FO_REPIN, MGW_REPIN_REFUSED},
	{"session: timeout (may still run there)",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_TIMEOUT, 0, 1, 0,
	  MGW_REPLAY_OK_METHOD, 0, 2, 0, 0},
	 MGW_FO_FAIL, 0},
	{"session: lost in flight, not a tools/call",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 1, 0,
	  MGW_REPLAY_OK_METHOD, 0, 2, 0, 0},
	 MGW_FO_REPLAY, 0},
	{"session: lost in flight, tool annotated idempotent",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_RESET, 0, 1, 0,
	  MGW_REPLAY_OK_TOOL, 0, 2, 0, 0},
	 MGW_FO_REPLAY, 0},
	{"session: lost in flight, route says replay always",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 1, 0,
	  MGW_REPLAY_OK_ROUTE, 0, 2, 0, 0},
	 MGW_FO_REPLAY, 0},
	{"session: lost twice on the same replica",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 2, 0,
	  MGW_REPLAY_OK_METHOD, 1, 2, 1, 0},
	 MGW_FO_REPLAY_REPIN, MGW_REPIN_LOST_INFLIGHT},
	{"session: lost again, on another replica than before",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 2, 0,
	  MGW_REPLAY_OK_METHOD, 1, 2, 0, 0},
	 MGW_FO_REPLAY, 0},
	{"session: lost in flight, replays used up",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 3, 0,
	  MGW_REPLAY_OK_METHOD, 2, 2, 1, 0},
	 MGW_FO_FAIL, 0},
	{"session: lost in flight, tool not known safe (-32010)",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 1, 0,
	  MGW_REPLAY_NO_TOOL, 0, 2, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"session: lost in flight, a batch (-32010)",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 1, 0,
	  MGW_REPLAY_NO_BATCH, 0, 2, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"session: lost in flight, unread body (-32010)",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_RESET, 0, 1, 0,
	  MGW_REPLAY_NO_UNREAD, 0, 2, 0, 0},
	 MGW_FO_REFUSE, 0},
	{"session: unsafe beats replays-used-up",
	 {MGW_FO_SESSION, 0, MGW_CLIENT_E_CLOSED, 0, 3, 0,
	  MGW_REPLAY_NO_TOOL, 2, 2, 1, 0},
	 MGW_FO_REFUSE, 0},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mgw_fo_out o = mgw_failover_decide(&rows[i].in);

		if (o.action != rows[i].action)
			fail_msg("%s: got %s, want %s", rows[i].what,
			         mgw_fo_action_name(o.action),
			         mgw_fo_action_name(rows[i].action));
		if ((o.action == MGW_FO_REPIN || o.action == MGW_FO_REPLAY_REPIN) &&
		    o.reason != rows[i].reason)
			fail_msg("%s: reason %d, want %d", rows[i].what, (int)o.reason,
			         (int)rows[i].reason);
	}
}

static void test_not_sent(void **state)
{
	(void)state;
	assert_true(mgw_fo_not_sent(NS));
	assert_true(mgw_fo_not_sent(NS | CO));
	assert_false(mgw_fo_not_sent(NS | RB));
	assert_false(mgw_fo_not_sent(0));
	assert_string_equal(mgw_fo_action_name(MGW_FO_REPLAY_REPIN), "replay_repin");
	assert_string_equal(mgw_fo_action_name((enum mgw_fo_action)99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_not_sent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
