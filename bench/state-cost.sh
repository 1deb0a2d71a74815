#!/usr/bin/env bash
# bench/state-cost.sh - what each place for MRTR requestState and task
# records costs, counted rather than timed: the bytes of a requestState
# per round (the replicas' GET /stats mrtr_state_bytes_total over
# mrtr_states_issued), the replicas' own count of Redis commands
# (mrtr_store_ops), and what Redis executed (INFO commandstats after
# CONFIG RESETSTAT: commands run inside a Lua script counted too), per
# dialogue and per task; and what the gateway's guard (mrtr: {single_use:
# true, shared: redis}) and task affinity (task_affinity.redis) send to
# Redis.  Everything on 127.0.0.1 with ephemeral ports.
#
#   bench/state-cost.sh [-n DIALOGUES]     (default 200, 4 users)
#
# Needs mcpgw ($MCPGW, or the build's), redis-server, redis-cli, jq, curl.
# Output: one block per case on stdout (doc/state-costs.md quotes it).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
N=200
while getopts n: o; do
	case $o in
	n) N=$OPTARG ;;
	*) echo "usage: $0 [-n DIALOGUES]" >&2; exit 2 ;;
	esac
done
M=${MCPGW:-$top/_build/dev/mcpgw}
[ -x "$M" ] || { echo "no mcpgw at $M (set MCPGW)" >&2; exit 2; }

rp=$(free_port)
redis-server --port "$rp" --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
wait_port "$rp" || { echo "redis-server did not listen" >&2; exit 1; }
R=redis://127.0.0.1:$rp
echo "k1 $(openssl rand -hex 32)" >"$work/key"

# backend NAME [options...]: a modern replica; sets ADDR
backend() {
	local name=$1
	shift
	"$M" backend --listen 127.0.0.1:0 --era modern --id "$name" \
		--log-level warn "$@" >"$work/$name.out" 2>"$work/$name.err" &
	pids+=($!)
	ADDR=$(first_line "$work/$name.out")
}
# commands Redis executed since the last reset, "NAME=CALLS" per line
commands() {
	redis-cli -p "$rp" INFO commandstats | tr -d '\r' |
		sed -n 's/^cmdstat_\([a-z]*\):calls=\([0-9]*\),.*/\1=\2/p' |
		grep -v -E '^(config|info|ping|client|hello|command|select)=' | sort | tr '\n' ' '
	echo
}
reset() { redis-cli -p "$rp" CONFIG RESETSTAT >/dev/null; }
# sum KEY ADDR...: a /stats counter summed over replicas
sum() {
	local k=$1 a t=0
	shift
	for a in "$@"; do t=$((t + $(curl -sS "http://$a/stats" | jq -r ".$k // 0"))); done
	echo "$t"
}
scenario() {
	cat >"$work/mrtr.yaml" <<EOF
dialect: modern
calls:
  - tool: book
    flow: mrtr
    arguments: {rounds: $1}
    answers:
      date: {action: accept, content: {date: "2026-08-01"}}
      confirm: {action: accept, content: {confirm: true}}
      "*": {action: accept, content: {note: "window seat"}}
phases:
  - {concurrency: 4, requests: $N}
EOF
}
# dialogues ROUNDS ADDR1 ADDR2: N dialogues spread over two replicas
dialogues() {
	local r=$1
	shift
	"$M" load --quiet --scenario "$work/mrtr.yaml" --connection new \
		$(for a in "$@"; do echo --target "http://$a/mcp"; done) --json "$work/l.json"
	jq -r '.total | "\(.ok) of \(.dialogues) dialogues booked, \(.rounds) rounds, \(.failures.state_lost) state losses"' "$work/l.json"
}

for design in memory sealed redis; do
	extra=()
	[ "$design" = sealed ] && extra=(--key-file "$work/key")
	[ "$design" = redis ] && extra=(--redis "$R")
	for rounds in 3 10; do
		# memory state lives in one replica: one target, else it is lost
		backend "$design-$rounds-a" --request-state "$design" "${extra[@]}"
		A=$ADDR
		set -- "$A"
		if [ "$design" != memory ]; then
			backend "$design-$rounds-b" --request-state "$design" "${extra[@]}"
			set -- "$A" "$ADDR"
		fi
		scenario "$rounds"
		reset
		echo "== $design, $rounds rounds, $# replica(s): $(dialogues "$rounds" "$@")"
		issued=$(sum mrtr_states_issued "$@")
		bytes=$(sum mrtr_state_bytes_total "$@")
		done_=$(sum mrtr_completed "$@")
		ops=$(sum mrtr_store_ops "$@")
		echo "   requestState bytes per round: $(jq -n "$bytes / $issued * 10 | round / 10")" \
			"(max $(curl -sS "http://$A/stats" | jq -r .mrtr_state_bytes_max))"
		echo "   replicas' store commands per dialogue: $(jq -n "$ops / $done_ * 10 | round / 10")"
		echo "   Redis executed: $(commands)"
	done
done

backend tasks-a --tasks redis --redis "$R"
A=$ADDR
backend tasks-b --tasks redis --redis "$R"
B=$ADDR
reset
"$M" load --quiet --tool task --arg ms=300 --dialect modern --concurrency 8 \
	--requests "$N" --connection new --target "http://$A/mcp" \
	--target "http://$B/mcp" --json "$work/t.json"
echo "== tasks in Redis, 2 replicas: $(jq -r '.total | "\(.ok) of \(.tasks) tasks, \(.task_polls) polls, \(.failures.task_lost) lost"' "$work/t.json")"
echo "   Redis executed: $(commands)"

# the gateway: guard and task affinity both shared through Redis, over
# two sealed replicas with memory tasks
backend gw-a --request-state sealed --key-file "$work/key"
A=$ADDR
backend gw-b --request-state sealed --key-file "$work/key"
B=$ADDR
gp=$(free_port)
cat >"$work/gw.yaml" <<EOF
listeners: [{address: "127.0.0.1:$gp"}]
mode: stateless
upstreams:
  - name: pool
    balancer: round_robin
    affinity: task
    task_affinity: {redis: {url: "$R"}}
    servers: [{url: "http://$A"}, {url: "http://$B"}]
routes:
  - upstream: pool
    mrtr: {single_use: true, ttl: 10m, shared: redis}
mrtr_guard: {redis: {url: "$R"}}
EOF
"$M" serve -c "$work/gw.yaml" --log-level warn >"$work/gw.out" 2>"$work/gw.err" &
pids+=($!)
wait_port "$gp" || { echo "mcpgw serve did not listen: $(cat "$work/gw.err")" >&2; exit 1; }
scenario 3
reset
"$M" load --quiet --scenario "$work/mrtr.yaml" --target "http://127.0.0.1:$gp/mcp" --json "$work/l.json"
echo "== guard (shared: redis), 3 rounds through the gateway: $(jq -r '.total | "\(.ok) of \(.dialogues) dialogues, \(.rounds) rounds"' "$work/l.json")"
echo "   Redis executed: $(commands)"
echo "   guard: $(curl -sS "http://127.0.0.1:$gp/mcpgw/stats" | jq -c .mrtr_guard)"
reset
"$M" load --quiet --tool task --arg ms=300 --dialect modern --concurrency 8 \
	--requests "$N" --target "http://127.0.0.1:$gp/mcp" --json "$work/t.json"
echo "== task affinity (task_affinity.redis), memory tasks through the gateway: $(jq -r '.total | "\(.ok) of \(.tasks) tasks, \(.task_polls) polls, \(.failures.task_lost) lost"' "$work/t.json")"
echo "   Redis executed: $(commands)"
echo "   affinity: $(curl -sS "http://127.0.0.1:$gp/mcpgw/stats" | jq -c '.upstreams[0].tasks')"
