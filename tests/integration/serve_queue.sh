#!/usr/bin/env bash
# serve_queue.sh - a server's queue of requests waiting for a connection
# (upstreams[].max_queue; doc/serve.md, "Retries"), with real backends:
# one worker, max_connections 1 and max_queue 1 per server, and replica A
# frozen (SIGSTOP) so that its one connection stays busy:
#  a. a tasks/get of a task A owns takes A's connection, a second one waits
#     in A's queue, a third is answered 503 / -32008 at once and is never
#     sent to B (a task's owner is the only server that can answer it);
#  b. an ordinary tools/call meanwhile goes to B, whichever server the
#     round robin picked first: a full queue moves a request on, it does
#     not refuse it while another server can take it;
#  c. the refusals are counted per server (/mcpgw/stats queue_full,
#     mcpgw_upstream_queue_full_total), and once A runs again the two
#     requests it held are answered (nothing lost).
. "$(dirname "$0")/lib.sh"
require_tools curl jq
require_mcpgw
watchdog 120

start_backend --era modern --id A --tasks memory
A=$B_ADDR
A_PID=$B_PID
start_backend --era modern --id B --tasks memory
B=$B_ADDR

cat >"$T_DIR/q.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
mode: stateless
workers: 1
upstreams:
  - name: pool
    balancer: round_robin
    affinity: task
    max_connections: 1
    max_idle: 1
    max_queue: 1
    servers:
      - url: http://$A
      - url: http://$B
routes:
  - upstream: pool
    retries: 2
    timeouts:
      connect: 20s
EOF
"$MCPGW" check-config -q -c "$T_DIR/q.yaml" || fail "check-config refuses max_queue"
start_serve -c "$T_DIR/q.yaml"
G=$G_ADDR
GU=$G_URL

# a task owned by A (the round robin alternates: at most two tries)
TA=
for i in 1 2 3; do
	task_create "$GU" 60000
	assert_code "slow_job $i as a task" 200
	if [ "$(bstat "$A" '.tasks_created // 0')" -ge 1 ]; then TA=$TID; break; fi
done
[ -n "$TA" ] || fail "no task landed on A in three creations"
tget "$GU" "$TA"
assert_eq "the task is routed to A while A runs" working "$ST"

sidx() { # the index of ADDR in the gateway's servers
	gstat "$G" "[.upstreams[0].servers[].url] | index(\"http://$1\")"
}
IA=$(sidx "$A")
IB=$(sidx "$B")
inflight_a() { gstat "$G" ".upstreams[0].servers[$IA].in_flight"; }
qfull() { gstat "$G" ".upstreams[0].servers[$1].queue_full"; }
b_unknown=$(bstat "$B" '.tasks_unknown // 0')
b_calls=$(bstat "$B" '.requests_by_method["tools/call"] // 0')

TGET=$(tbody 21 tasks/get "{\"taskId\":\"$TA\"}")
TH=(-H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tasks/get" -H "Mcp-Name: $TA")

kill -STOP "$A_PID"
bg_post q1 "$GU" "$TGET" "${TH[@]}"
Q1=$BG_PID
poll_until 10 eval '[ "$(inflight_a)" = 1 ]'
bg_post q2 "$GU" "$TGET" "${TH[@]}"
Q2=$BG_PID
poll_until 10 eval '[ "$(inflight_a)" = 2 ]'
held=$(inflight_a)
# a: the owner's queue is full
post "$GU" "$(tbody 22 tasks/get "{\"taskId\":\"$TA\"}")" "${TH[@]}"
c3=$CODE
b3=$BODY
# b: two ordinary calls: one of them is first offered to A
modern "$GU" 23 tools/call '{"name":"echo","arguments":{"text":"q1"}}'
c4=$CODE
t4=$(tool_text)
modern "$GU" 24 tools/call '{"name":"echo","arguments":{"text":"q2"}}'
c5=$CODE
t5=$(tool_text)
qa=$(qfull "$IA")
qb=$(qfull "$IB")
metric_a=$(curl -sS --max-time 5 "http://$G/metrics" | awk -v s="http://$A" '
	index($0, "mcpgw_upstream_queue_full_total{") == 1 && index($0, "server=\"" s "\"") { print $2 }')
kill -CONT "$A_PID"

assert_eq "A holds one request on its connection and one in its queue" 2 "$held"
CODE=$c3 BODY=$b3
assert_code "a: a third tasks/get of A's task, A's queue full" 503
assert_jq "a: answered -32008 overloaded for its id" \
	'.error.code == -32008 and .id == 22'
assert_eq "a: B was never asked for A's task" "$b_unknown" "$(bstat "$B" '.tasks_unknown // 0')"
assert_eq "b: an echo while A's queue is full" "200 q1" "$c4 $t4"
assert_eq "b: a second echo" "200 q2" "$c5 $t5"
assert_eq "b: both echoes were answered by B" $((b_calls + 2)) \
	"$(bstat "$B" '.requests_by_method["tools/call"] // 0')"
[ "${qa:-0}" -ge 2 ] || fail "c: stats queue_full of A is '$qa', want at least 2 (the task and an echo)"
assert_eq "c: no refusal counted on B" 0 "$qb"
assert_eq "c: mcpgw_upstream_queue_full_total of A" "$qa" "$metric_a"

wait_pid "$Q1" 30 || fail "c: the request on A's connection did not end after SIGCONT"
wait_pid "$Q2" 30 || fail "c: the queued request did not end after SIGCONT"
for q in q1 q2; do
	bg_result "$q"
	assert_code "c: $q, held while A was stopped, answered" 200
	assert_jq "c: $q reports the task working" '.result.status == "working" and .id == 21'
done
tget "$GU" "$TA"
assert_eq "the queue is free again" working "$ST"
finish
