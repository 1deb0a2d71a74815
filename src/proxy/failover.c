/* failover.c - the policy for failed upstream attempts (failover.h). */
#include "autoconf.h"

#include "proxy/failover.h"

int mgw_fo_not_sent(unsigned flags)
{
	return (flags & MGW_CLIENT_F_NOT_SENT) && !(flags & MGW_CLIENT_F_RESP_BYTES);
}

static struct mgw_fo_out act(enum mgw_fo_action a, enum mgw_repin_reason r)
{
	struct mgw_fo_out o;

	o.action = a;
	o.reason = r;
	return o;
}

/* Name resolution, TCP connect or TLS failed: nobody answered there. */
static int connect_failed(const struct mgw_fo_in *in)
{
	return (in->flags & MGW_CLIENT_F_CONNECT) || in->cls == MGW_CLIENT_E_DNS ||
	       in->cls == MGW_CLIENT_E_CONNECT || in->cls == MGW_CLIENT_E_TLS;
}

/* A session request lost in flight (sent, then the replica went away). */
static struct mgw_fo_out lost_in_flight(const struct mgw_fo_in *in)
{
	if (in->replay >= MGW_REPLAY_NO_TOOL)
		return act(MGW_FO_REFUSE, 0);
	if (in->replays >= in->max_replays)
		return act(MGW_FO_FAIL, 0);
	/* Lost on this replica twice in a row: it is going away, even if
	 * nothing says so yet (a dying process closes its connections one
	 * at a time, and its listen queue still completes handshakes). */
	if (in->same_as_last_loss)
		return act(MGW_FO_REPLAY_REPIN, MGW_REPIN_LOST_INFLIGHT);
	return act(MGW_FO_REPLAY, 0);
}

/* A stateless request that reached the server and lost it: sent again
 * to another server only when it is safe to (replay.h) and the route's
 * retries allow. */
static struct mgw_fo_out stateless_lost(const struct mgw_fo_in *in,
                                        int retries_left)
{
	/* waited for a connection, or a slow server: it may still run */
	if ((in->flags & MGW_CLIENT_F_QUEUED) || in->cls == MGW_CLIENT_E_TIMEOUT)
		return act(MGW_FO_FAIL, 0);
	/* a malformed answer: the server is there, and answered */
	if (in->cls != MGW_CLIENT_E_CLOSED && in->cls != MGW_CLIENT_E_RESET)
		return act(MGW_FO_FAIL, 0);
	if (in->replay >= MGW_REPLAY_NO_TOOL)
		return act(MGW_FO_REFUSE, 0);
	return act(retries_left ? MGW_FO_REPLAY : MGW_FO_FAIL, 0);
}

static struct mgw_fo_out session(const struct mgw_fo_in *in)
{
	/* every connection to the pinned replica busy: the gateway's
	 * limit, not a lost replica; moving the session would not help */
	if (in->flags & MGW_CLIENT_F_QUEUED)
		return act(MGW_FO_FAIL, 0);
	if (mgw_fo_not_sent(in->flags))
		return act(MGW_FO_REPIN, MGW_REPIN_REFUSED);
	/* a slow replica is not a lost one: the request may still run */
	if (in->cls == MGW_CLIENT_E_TIMEOUT)
		return act(MGW_FO_FAIL, 0);
	return lost_in_flight(in);
}

struct mgw_fo_out mgw_failover_decide(const struct mgw_fo_in *in)
{
	int retries_left = in->attempts <= in->retries;

	if (in->streaming)
		return act(MGW_FO_ABORT, 0);
	switch (in->req) {
	case MGW_FO_STATELESS:
		/* the owner of the task refused or failed to connect: no
		 * other server has the task (a live one that lost a pooled
		 * connection is asked again below) */
		if (in->pinned && connect_failed(in))
			return act(MGW_FO_GONE, 0);
		if (mgw_fo_not_sent(in->flags))
			return act(retries_left ? MGW_FO_RETRY : MGW_FO_FAIL, 0);
		return stateless_lost(in, retries_left);
	case MGW_FO_INIT:
		/* no session exists yet: an initialize that did not reach a
		 * replica, or lost it before the answer, goes to another */
		return act((mgw_fo_not_sent(in->flags) ||
		            in->cls == MGW_CLIENT_E_CLOSED ||
		            in->cls == MGW_CLIENT_E_RESET) && retries_left
		           ? MGW_FO_RETRY : MGW_FO_FAIL, 0);
	case MGW_FO_DELETE:
		return act(MGW_FO_DROP, 0);
	case MGW_FO_SESSION:
		return session(in);
	}
	return act(MGW_FO_FAIL, 0);
}

const char *mgw_fo_action_name(enum mgw_fo_action a)
{
	static const char *const names[] = {
		"fail", "abort", "retry", "drop", "repin", "refuse", "replay",
		"replay_repin", "gone",
	};

	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}
