#!/bin/bash
# serve_task_affinity.sh - task affinity (upstreams[].affinity: task;
# doc/serve.md, "Task affinity") with real backends keeping their tasks in
# memory (--tasks memory):
#  a. two workers, two replicas: every tasks/get, tasks/update and
#     tasks/cancel reaches the replica that created the task (no replica
#     ever answers "task not found"), the gateway's counters say so, and a
#     Mcp-Name that disagrees with params.taskId is refused;
#  b. the owner SIGKILLed: its task is answered the unknown-task error
#     (-32602) by the gateway, at once and again after the health checks
#     marked it down, and never sent to the other replica; a task the
#     gateway never saw still goes to the balancer;
#  c. without affinity the same fleet loses tasks: round robin sends
#     tasks/get to the replica that does not have it;
#  d. two gateways sharing task_affinity.redis: a task created through one
#     is routed to its owner by the other; Redis holds no raw task id.
. "$(dirname "$0")/lib.sh"
require_tools curl jq redis-server redis-cli node
require_mcpgw
watchdog 240

# tbody, tm, tget, task_create: lib.sh ("MCP: tasks").
create() { task_create "$@"; }

# gw_config FILE AFFINITY [EXTRA GROUP LINES] -- ADDR...
gw_config() {
	local f=$1 aff=$2 extra=$3 a
	shift 3
	{
		printf 'listeners:\n  - address: 127.0.0.1:0\nmode: stateless\nworkers: 2\n'
		printf 'upstreams:\n  - name: pool\n    balancer: round_robin\n'
		printf '    affinity: %s\n' "$aff"
		[ -n "$extra" ] && printf '%s\n' "$extra"
		printf '    servers:\n'
		for a in "$@"; do printf '      - url: http://%s\n' "$a"; done
		printf '    health:\n      method: GET\n      path: /healthz\n'
		printf '      interval: 300ms\n      timeout: 250ms\n      rise: 1\n      fall: 2\n'
		printf 'routes:\n  - upstream: pool\n    retries: 2\n'
	} >"$f"
}

# poll_rounds URL ROUNDS TASKID...: ROUNDS tasks/get of each (still
# working, all of them); sets LOST to the answers that were not "working".
poll_rounds() {
	local url=$1 n=$2 r t
	shift 2
	LOST=0
	for r in $(seq "$n"); do
		for t in "$@"; do
			tget "$url" "$t"
			[ "$ST" = working ] || LOST=$((LOST + 1))
		done
	done
}

unknown_on() { bstat "$1" '.tasks_unknown // 0'; }
created_on() { bstat "$1" '.tasks_created // 0'; }
down_in() { [ "$(gstat "$1" '.upstreams[0].servers_up')" = "$2" ]; }

# ---- a. routed to the owner, two workers ------------------------------
start_backend --era modern --id A --tasks memory
A=$B_ADDR
A_PID=$B_PID
start_backend --era modern --id B --tasks memory
B=$B_ADDR
gw_config "$T_DIR/aff.yaml" task "" "$A" "$B"
ALOG=$T_DIR/access.log
printf 'log:\n  access_format: json\n  access_file: %s\n' "$ALOG" >>"$T_DIR/aff.yaml"
"$MCPGW" check-config -q -c "$T_DIR/aff.yaml" ||
	fail "check-config refuses the affinity configuration"
start_serve -c "$T_DIR/aff.yaml"
G=$G_ADDR
GU=$G_URL

declare -a TIDS
for i in 1 2 3 4 5 6; do
	create "$GU" 60000
	assert_code "task-augmented slow_job $i through the gateway" 200
	[ -n "$TID" ] || fail "slow_job $i: no taskId in $BODY"
	TIDS+=("$TID")
done
# each worker's round robin alternates, and one of the two workers took
# at least two of the six
ca=$(created_on "$A")
cb=$(created_on "$B")
[ "$ca" -ge 1 ] && [ "$cb" -ge 1 ] && [ $((ca + cb)) = 6 ] ||
	fail "the six tasks are not spread over both replicas (A $ca, B $cb)"
assert_eq "stats: six tasks learned" 6 "$(gstat "$G" '.upstreams[0].tasks.learned')"
assert_eq "stats: six tasks known" 6 "$(gstat "$G" '.upstreams[0].tasks.known')"

poll_rounds "$GU" 5 "${TIDS[@]}"
assert_eq "30 tasks/get through two workers: every one found its task" 0 "$LOST"
assert_eq "no replica was asked for a task it does not hold" "0 0" \
	"$(unknown_on "$A") $(unknown_on "$B")"
assert_eq "stats: 30 routed to the owner" 30 "$(gstat "$G" '.upstreams[0].tasks.routed')"
assert_eq "stats: no miss" 0 "$(gstat "$G" '.upstreams[0].tasks.misses')"
# the access lines do not hold the task ids (they may be bearer handles)
poll_until 5 eval '[ "$(grep -c "\"mcp_method\":\"tasks/get\"" "$ALOG")" -ge 30 ]' ||
	fail "no 30 tasks/get access lines in $ALOG"
for t in "${TIDS[@]}"; do
	grep -qF "$t" "$ALOG" && fail "the access log holds the task id $t"
done
assert_match "a tasks/get access line shows the id's start and length" \
	'^t_[0-9a-f]{2}…\([0-9]+\)$' \
	"$(grep '"mcp_method":"tasks/get"' "$ALOG" | tail -n 1 | jq -r .mcp_name)"
routed=$(curl -sS --max-time 5 "http://$G/metrics" |
	awk '/^mcpgw_task_affinity_total\{upstream="pool",result="routed"\}/ {print $2}')
assert_eq "metrics: routed" 30 "$routed"

# tasks/update and tasks/cancel of a known task: the owner acknowledges
tm "$GU" 11 tasks/update "{\"taskId\":\"${TIDS[0]}\",\"inputResponses\":{}}"
assert_jq "tasks/update reaches the owner (ack)" '.result.resultType == "complete"'
tm "$GU" 12 tasks/cancel "{\"taskId\":\"${TIDS[1]}\"}"
assert_jq "tasks/cancel reaches the owner (ack)" '.result.resultType == "complete"'
assert_eq "still no unknown task on any replica" "0 0" \
	"$(unknown_on "$A") $(unknown_on "$B")"

# Mcp-Name must be the body's taskId (it is what intermediaries route on)
post "$GU" "$(tbody 13 tasks/get "{\"taskId\":\"${TIDS[0]}\"}")" \
	-H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tasks/get" \
	-H "Mcp-Name: ${TIDS[1]}"
assert_code "Mcp-Name naming another task" 400
assert_jq "refused with HeaderMismatch" '.error.code == -32020 and .id == 13'
post "$GU" "$(tbody 14 tasks/get "{\"taskId\":\"${TIDS[0]}\"}")" \
	-H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tasks/get"
assert_code "tasks/get without Mcp-Name" 400
assert_jq "missing Mcp-Name: HeaderMismatch" '.error.code == -32020'

# ---- b. the owner is killed -----------------------------------------------
# which of the tasks live on A: ask A directly (B's are unknown there)
declare -a ON_A ON_B
for t in "${TIDS[@]}"; do
	tget "http://$A/mcp" "$t"
	if [ "$ST" = -32602 ]; then ON_B+=("$t"); else ON_A+=("$t"); fi
done
[ "${#ON_A[@]}" -ge 1 ] && [ "${#ON_B[@]}" -ge 1 ] ||
	fail "expected tasks on both replicas (A: ${#ON_A[@]}, B: ${#ON_B[@]})"
b_unknown=$(unknown_on "$B")
kill -KILL "$A_PID"
wait "$A_PID" 2>/dev/null
tget "$GU" "${ON_A[0]}"
assert_code "tasks/get of the dead owner's task" 200
assert_jq "answered the unknown-task error by the gateway" \
	'.error.code == -32602 and .id == 9 and
	 (.error.message | test("no longer available"))'
poll_until 10 down_in "$G" 1 || fail "the health checks did not mark A down"
for t in "${ON_A[@]}"; do
	tget "$GU" "$t"
	assert_eq "A down: tasks/get of its task $t" -32602 "$ST"
done
tm "$GU" 15 tasks/cancel "{\"taskId\":\"${ON_A[0]}\"}"
assert_jq "A down: tasks/cancel of its task" '.error.code == -32602'
assert_eq "B was never asked for A's tasks" "$b_unknown" "$(unknown_on "$B")"
gone=$(gstat "$G" '.upstreams[0].tasks.owner_gone')
[ "${gone:-0}" -ge $((${#ON_A[@]} + 2)) ] ||
	fail "stats: owner_gone $gone, want at least $((${#ON_A[@]} + 2))"
for t in "${ON_B[@]}"; do
	tget "$GU" "$t"
	assert_ne "B's task $t still routed to B" -32602 "$ST"
done
# a task the gateway never saw: the balancer (B answers it is unknown)
tget "$GU" t_00000000000000000000000000000000
assert_jq "a task never seen goes to a replica, which does not know it" \
	'.error.code == -32602 and (.error.message | test("no longer") | not)'
assert_eq "stats: one miss" 1 "$(gstat "$G" '.upstreams[0].tasks.misses')"
stop_serve

# ---- c. without affinity, tasks in replica memory are lost ------------
start_backend --era modern --id C --tasks memory
C=$B_ADDR
start_backend --era modern --id D --tasks memory
D=$B_ADDR
gw_config "$T_DIR/none.yaml" none "" "$C" "$D"
start_serve -c "$T_DIR/none.yaml"
create "$G_URL" 60000
[ -n "$TID" ] || fail "no task created without affinity: $BODY"
unknown=0
for i in 1 2 3 4 5 6; do
	tget "$G_URL" "$TID"
	[ "$ST" = -32602 ] && unknown=$((unknown + 1))
done
[ "$unknown" -ge 1 ] ||
	fail "without affinity every tasks/get found the task (expected losses)"
assert_eq "the losses are the replicas' own unknown-task answers" \
	"$unknown" "$(($(unknown_on "$C") + $(unknown_on "$D")))"
assert_eq "no tasks section without affinity" null \
	"$(gstat "$G_ADDR" '.upstreams[0].tasks')"
stop_serve

# ---- d. two gateways, one Redis -----------------------------------------
start_redis
RL="    task_affinity:
      redis:
        url: $REDIS_URL
        timeout: 500ms"
gw_config "$T_DIR/r.yaml" task "$RL" "$C" "$D"
start_serve -c "$T_DIR/r.yaml"
G1=$G_ADDR
G1U=$G_URL
G1_PID=$G_PID
G1_ERR=$G_ERR
start_serve -c "$T_DIR/r.yaml"
G2=$G_ADDR
G2U=$G_URL
c_unknown=$(unknown_on "$C")
d_unknown=$(unknown_on "$D")
declare -a RT
for i in 1 2 3 4; do
	create "$G1U" 60000
	[ -n "$TID" ] || fail "no task through gateway 1: $BODY"
	RT+=("$TID")
done
poll_rounds "$G2U" 3 "${RT[@]}"
assert_eq "gateway 2 routes gateway 1's tasks to their owners" 0 "$LOST"
assert_eq "no replica was asked for a task it does not hold" \
	"$c_unknown $d_unknown" "$(unknown_on "$C") $(unknown_on "$D")"
assert_eq "gateway 2: each task found in Redis once" 4 \
	"$(gstat "$G2" '.upstreams[0].tasks.shared_hits')"
assert_eq "gateway 2: then known locally, all routed" 12 \
	"$(gstat "$G2" '.upstreams[0].tasks.routed')"
keys=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --scan --pattern 'mcpgw:task:*')
assert_eq "one Redis key per task" 4 "$(printf '%s\n' "$keys" | grep -c .)"
for t in "${RT[@]}"; do
	case $keys in *"$t"*) fail "Redis holds the raw task id $t" ;; esac
done
k=$(printf '%s\n' "$keys" | head -n 1)
assert_match "the key names the group and a SHA-256" \
	'^mcpgw:task:pool:[0-9a-f]{64}$' "$k"
ttl=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" pttl "$k")
[ "${ttl:-0}" -gt 0 ] && [ "$ttl" -le 300000 ] ||
	fail "the key expires with the task's ttlMs (300000), PTTL $ttl"
assert_match "the value names the owner" \
	" http://127\.0\.0\.1:[0-9]+$" "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" get "$k")"

# ---- e. a reload keeps the map; a server removed is an owner gone ------
declare -a ON_C ON_D
for t in "${RT[@]}"; do
	tget "http://$C/mcp" "$t"
	if [ "$ST" = -32602 ]; then ON_D+=("$t"); else ON_C+=("$t"); fi
done
if [ "${#ON_C[@]}" -ge 1 ] && [ "${#ON_D[@]}" -ge 1 ]; then
	gw_config "$T_DIR/r.yaml.tmp" task "$RL" "$C"
	mv "$T_DIR/r.yaml.tmp" "$T_DIR/r.yaml"
	done_lines() { grep -c "reload: done" "$G1_ERR" 2>/dev/null; }
	kill -HUP "$G1_PID"
	poll_until 10 eval '[ "$(done_lines)" -ge 1 ]' ||
		fail "gateway 1 did not reload: $(tail -n 3 "$G1_ERR")"
	d_unknown=$(unknown_on "$D")
	routed=$(gstat "$G1" '.upstreams[0].tasks.routed')
	tget "$G1U" "${ON_C[0]}"
	assert_eq "after the reload: C's task still routed to C" working "$ST"
	assert_eq "after the reload: the map was carried (routed, not missed)" \
		$((routed + 1)) "$(gstat "$G1" '.upstreams[0].tasks.routed')"
	tget "$G1U" "${ON_D[0]}"
	assert_jq "D removed from the group: its task is gone, from the gateway" \
		'.error.code == -32602 and (.error.message | test("no longer available"))'
	assert_eq "D was not asked" "$d_unknown" "$(unknown_on "$D")"
else
	fail "gateway 1 put all four tasks on one replica (C ${#ON_C[@]}, D ${#ON_D[@]})"
fi
finish
