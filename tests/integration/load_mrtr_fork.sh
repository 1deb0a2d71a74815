#!/bin/bash
# load_mrtr_fork.sh - the MRTR flow's re-presentation (fork_every,
# fork_round): after every Nth dialogue that ended in a booking, the load
# client sends one of its retries again with the requestState it carried
# then - the time-travel case of SEP-2322 - and counts the answer as
# forked (a second booking) or refused.  One virtual user, so the counts
# are exact: D dialogues with fork_every K re-present floor(D/K) states.
# Against one replica: sealed state without --single-use forks every
# time (and the replica books D + D/K times); with --single-use, and with
# memory state (used up by its first presentation), every re-presentation
# is refused and nothing is booked twice; fork_round 1 re-presents the
# first retry, whose dialogue runs its remaining rounds again.  A
# fork_every on a call that is not mrtr is refused.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 180

D=9
K=3
R=3
F=$((D / K))
stat() { curl -sS --max-time 5 "http://$1/stats" | jq -r ".$2"; }

# scenario NAME FORK_ROUND: one user, D dialogues of R rounds
scenario() {
	cat >"$T_DIR/$1.yaml" <<EOF
dialect: modern
calls:
  - tool: book
    flow: mrtr
    arguments: {rounds: $R}
    fork_every: $K
    fork_round: $2
    answers:
      date: {action: accept, content: {date: "2026-08-01"}}
      confirm: {action: accept, content: {confirm: true}}
      "*": {action: accept, content: {note: "aisle"}}
phases:
  - concurrency: 1
    requests: $D
EOF
}

# fork_case NAME FORK_ROUND [backend options...]: one fresh replica, one run
fork_case() {
	local name=$1 round=$2
	shift 2
	start_backend --era modern --id "$name" "$@"
	ADDR=$B_ADDR
	scenario "$name" "$round"
	run_load "$name" --scenario "$T_DIR/$name.yaml" --target "http://$ADDR/mcp"
	assert_load_exit "$name: the run succeeds" 0
	assert_eq "$name: every dialogue booked" "$D $D" "$(lj '"\(.total.ok) \(.total.dialogues)"')"
	assert_eq "$name: rounds of the dialogues only" $((D * R)) "$(lj .total.rounds)"
	assert_eq "$name: one dialogue in $K re-presented" $F "$(lj .total.represented)"
	assert_eq "$name: the plan in the report" "$K $round" \
		"$(lj '.config.calls[0] | "\(.fork_every) \(.fork_round)"')"
}

fork_case sealed 0 --request-state sealed
assert_eq "sealed: every re-presentation forked" "$F 0" "$(lj '"\(.total.forked) \(.total.refused)"')"
assert_eq "sealed: the replica booked the forks too" $((D + F)) "$(stat "$ADDR" mrtr_completed)"
assert_eq "sealed: per-tool counts" "$F $F" "$(lj '"\(.total.per_tool.book.represented) \(.total.per_tool.book.forked)"')"
TEXT=$(timeout 60 "$MCPGW" load --scenario "$T_DIR/sealed.yaml" --target "http://$ADDR/mcp" 2>&1)
assert_match "sealed: the text report names the forks" \
	"$F old states re-presented: $F forked, 0 refused" "$TEXT"

fork_case sealed_single 0 --request-state sealed --single-use
assert_eq "sealed --single-use: every re-presentation refused" "0 $F" "$(lj '"\(.total.forked) \(.total.refused)"')"
assert_eq "sealed --single-use: nothing booked twice" $D "$(stat "$ADDR" mrtr_completed)"
assert_eq "sealed --single-use: the replica's refusals" $F "$(stat "$ADDR" mrtr_refusals)"

fork_case memory 0 --request-state memory
assert_eq "memory: a used state is gone, every re-presentation refused" "0 $F" \
	"$(lj '"\(.total.forked) \(.total.refused)"')"
assert_eq "memory: no state loss counted for a refused re-presentation" 0 "$(lj .total.failures.state_lost)"
assert_eq "memory: nothing booked twice" $D "$(stat "$ADDR" mrtr_completed)"

# fork_round 1: the first retry again; its dialogue asks rounds 2..R anew
fork_case first 1 --request-state sealed
assert_eq "fork_round 1: forked" "$F 0" "$(lj '"\(.total.forked) \(.total.refused)"')"
assert_eq "fork_round 1: states issued: R per dialogue, R-1 per fork" \
	$((D * R + F * (R - 1))) "$(stat "$ADDR" mrtr_states_issued)"
assert_eq "fork_round 1: booked" $((D + F)) "$(stat "$ADDR" mrtr_completed)"

# fork_every belongs to mrtr calls
cat >"$T_DIR/bad.yaml" <<EOF
calls:
  - {tool: echo, fork_every: 2}
EOF
OUTB=$(timeout 30 "$MCPGW" load --scenario "$T_DIR/bad.yaml" --target "http://$ADDR/mcp" 2>&1)
assert_eq "fork_every on a plain call: usage error" 2 $?
assert_match "fork_every on a plain call: the message" "fork_every and fork_round belong to an mrtr call" "$OUTB"
finish
