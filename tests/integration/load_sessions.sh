#!/bin/bash
# load_sessions.sh - legacy session loss as "mcpgw load" sees it, with no
# gateway in front: two legacy replicas as --targets and a new connection
# per request (what a per-connection balancer does to a session) lose
# sessions, each counted once (the replicas' own rejection counters agree)
# and followed by a re-initialization, while every request is still
# reported; one replica, or keep-alive connections, lose none.  Killing
# the replica that holds sessions mid-run stops no virtual user for good:
# they reconnect, re-initialize on the survivor and go on, and each ends
# its session there with DELETE.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 240

N=400

# stat ADDR FIELD: one counter of a replica's GET /stats.
stat() { curl -sS --max-time 5 "http://$1/stats" | jq -r ".$2"; }

start_backend --era legacy --id r1
A1=$B_ADDR
P1=$B_PID
start_backend --era legacy --id r2 --lost-session-status 400
A2=$B_ADDR
P2=$B_PID

# Two replicas, a new connection per request.  r2 answers a lost session
# with 400 (as many deployed servers do), r1 with the spec's 404: both
# count as session losses.
run_load two-new --target "http://$A1/mcp" --target "http://$A2/mcp" \
	--dialect legacy --connection new --tool echo --arg text=x \
	--concurrency 4 --requests $N --seed 11
assert_load_exit "two replicas, new connections" 0
assert_eq "two/new: every request reported" $N "$(lj .total.requests)"
LOST=$(lj .total.failures.session_lost)
REINIT=$(lj .total.reinitializations)
assert_cmp "two/new: sessions lost" "$LOST" ">" 0
assert_cmp "two/new: and re-initialized after (all but the last per user)" "$REINIT" ">=" $((LOST - 4))
assert_cmp "two/new: no re-initialization without a loss" "$REINIT" "<=" "$LOST"
assert_eq "two/new: requests = ok + losses" $N "$(lj '.total.ok + .total.failures.session_lost')"
REJ=$(( $(stat "$A1" lost_session_rejections) + $(stat "$A2" lost_session_rejections) ))
# Every loss counted is a rejection by a replica; a replica also rejects a
# handshake's notifications/initialized or a final DELETE that lands on
# the other one, which are not calls and not counted.
assert_cmp "two/new: each counted loss is a replica's rejection" "$REJ" ">=" "$LOST"
assert_cmp "two/new: no rejected call went uncounted" "$REJ" "<=" $((LOST + REINIT + 4 + 4))
assert_eq "two/new: losses in the table column" "$LOST" "$(lj '[.timeline[].session_lost] | add')"
assert_eq "two/new: per-tool row counts them" "$LOST" "$(lj .total.per_tool.echo.failures.session_lost)"

# The same over keep-alive connections: each user stays on its replica.
run_load two-reuse --target "http://$A1/mcp" --target "http://$A2/mcp" \
	--dialect legacy --connection reuse --tool echo --arg text=x \
	--concurrency 4 --requests $N
assert_load_exit "two replicas, keep-alive" 0
assert_eq "two/reuse: all ok" $N "$(lj .total.ok)"
assert_eq "two/reuse: no session loss" 0 "$(lj .total.failures.session_lost)"
assert_eq "two/reuse: no re-initialization" 0 "$(lj .total.reinitializations)"

# Keep-alive, but a new connection (to a target drawn again) every 5
# requests: a user switching replicas loses its session, as clients do
# behind a per-connection balancer whenever they reconnect.
run_load two-reconnect --target "http://$A1/mcp" --target "http://$A2/mcp" \
	--dialect legacy --connection reuse --reconnect-after 5 --tool echo \
	--arg text=x --concurrency 4 --requests $N --seed 5
assert_load_exit "two replicas, reconnect after 5" 0
assert_eq "two/reconnect: every request reported" $N "$(lj .total.requests)"
assert_cmp "two/reconnect: sessions lost on a switch" "$(lj .total.failures.session_lost)" ">" 0
assert_cmp "two/reconnect: and re-initialized" "$(lj .total.reinitializations)" ">" 0
assert_eq "two/reconnect: in the report's config" 5 "$(lj .config.reconnect_after)"
# ... and with one replica a reconnect keeps the session
run_load one-reconnect --target "http://$A1/mcp" --dialect legacy \
	--connection reuse --reconnect-after 2 --tool echo --arg text=x \
	--concurrency 4 --requests $N
assert_load_exit "one replica, reconnect after 2" 0
assert_eq "one/reconnect: all ok" $N "$(lj .total.ok)"
assert_eq "one/reconnect: no session loss" 0 "$(lj .total.failures.session_lost)"

# One replica, new connections: the session is always known.
run_load one-new --target "http://$A1/mcp" --dialect legacy --connection new \
	--tool echo --arg text=x --concurrency 4 --requests $N
assert_load_exit "one replica, new connections" 0
assert_eq "one/new: all ok" $N "$(lj .total.ok)"
assert_eq "one/new: no session loss" 0 "$(lj .total.failures.session_lost)"
assert_eq "one/new: no re-initialization" 0 "$(lj .total.reinitializations)"

# Kill mid-run.  Fresh replicas so their counters start at zero.
start_backend --era legacy --id k1
K1=$B_ADDR
KP1=$B_PID
start_backend --era legacy --id k2
K2=$B_ADDR
KP2=$B_PID
start_load kill --target "http://$K1/mcp" --target "http://$K2/mcp" \
	--dialect legacy --connection reuse --tool echo --arg text=x \
	--concurrency 4 --duration 5s --timeout 2s
both_busy() {
	[ "$(($(stat "$K1" sessions) + $(stat "$K2" sessions)))" -ge 4 ]
}
poll_until 10 both_busy || fail "kill: the 4 virtual users never held sessions"
sleep 1
S1=$(stat "$K1" sessions)
S2=$(stat "$K2" sessions)
# kill the replica holding sessions (the one with more)
if [ "$S2" -ge "$S1" ]; then
	VICTIM=$KP2 SURVIVOR=$K1 MOVED=$S2
else
	VICTIM=$KP1 SURVIVOR=$K2 MOVED=$S1
fi
log "sessions before the kill: $S1 / $S2; killing pid $VICTIM"
kill -KILL "$VICTIM"
wait "$VICTIM" 2>/dev/null
wait_load
assert_load_exit "kill mid-run" 0
assert_cmp "kill: users on the killed replica felt it" \
	"$(lj '.total.failures.connect_error + .total.failures.session_lost + .total.failures.timeout')" ">=" "$MOVED"
assert_cmp "kill: and re-initialized" "$(lj .total.reinitializations)" ">=" "$MOVED"
assert_cmp "kill: reconnects counted" "$(lj .total.reconnects)" ">=" 1
assert_cmp "kill: calls succeed in the last second" "$(lj '.timeline[-1].ok')" ">" 0
assert_cmp "kill: and in the one before" "$(lj '.timeline[-2].ok')" ">" 0
# Every user ended on the survivor and deleted its session there: no
# user stopped for good.
assert_eq "kill: all 4 users ended their sessions on the survivor" 4 "$(stat "$SURVIVOR" sessions_deleted)"
assert_eq "kill: no session left behind" 0 "$(stat "$SURVIVOR" sessions)"

finish
