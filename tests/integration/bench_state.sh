#!/usr/bin/env bash
# bench_state.sh - mcpgw-bench mrtr, fork and tasks --quick: the state of
# the 2026-07-28 revision that is not a session.  mrtr: dialogues whose
# requestState lives in replica memory lose it (state_lost) direct and
# through the stateless gateway, sealed (a shared key file) and Redis
# state lose none across the pod kill; the state's bytes per round are
# the replicas' own counts (a reference for memory and Redis, the grown
# state for sealed) and Redis costs its store operations per dialogue.
# fork: every dialogue's last round presented again with its old sealed
# state is acted on again (a second booking) direct and through a gateway
# without the guard, and refused by the gateway's single-use guard (its
# own counter agrees).  tasks: memory tasks polled on the other replica
# are lost direct and through the gateway without affinity (even before
# the kill); with affinity: task only those whose owner was killed, each
# answered by the gateway itself; Redis tasks lose none.  Every kill
# lands, the aggregation rules hold, the reports carry the state tables.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
require_tools redis-server
watchdog 580

# --------------------------------------------------------------- mrtr
S=mrtr
bench_run mrtr mrtr --quick --cooldown-max 0
assert_eq "mrtr: bench exit status" 0 "$BENCH_STATUS"
check_outputs mrtr 6
check_aggregation
check_kills
bench_sanitizers
for p in direct gateway; do
	c="modern $p 2 replicas"
	assert_cmp "mrtr $p: memory state lost" \
		"$(cellv $S "$c, memory request state" .state_losses)" '>' 0
	for k in sealed redis; do
		assert_eq "mrtr $p: $k state survives the kill and the spread" 0 \
			"$(cellv $S "$c, $k request state" .state_losses)"
		assert_cmp "mrtr $p: $k dialogues counted" \
			"$(cellv $S "$c, $k request state" .dialogues)" '>' 0
	done
	# a reference: rm1. / rr1. and 32 hex digits; sealed carries the state
	for k in memory redis; do
		assert_eq "mrtr $p: $k state is a 36-byte reference" 36 \
			"$(cellv $S "$c, $k request state" '.state_bytes_per_round | floor')"
	done
	assert_cmp "mrtr $p: a sealed state carries its content" \
		"$(cellv $S "$c, sealed request state" '.state_bytes_per_round | floor')" '>' 200
	# two Redis commands a round (SET, EVAL), three rounds; a dialogue
	# lost in the kill adds commands without a booking
	assert_cmp "mrtr $p: redis store operations per dialogue" \
		"$(cellv $S "$c, redis request state" '.store_ops_per_dialogue | floor')" '>=' 6
	assert_eq "mrtr $p: no store operations without redis" null \
		"$(cellv $S "$c, sealed request state" .store_ops_per_dialogue)"
done
assert_match "mrtr: report.md has the state table" \
	'\| cell \| dialogues \| rounds \| state lost \| other failures \| requestState bytes per round \| store ops per dialogue \|' \
	"$(cat "$OUT/report.md")"
assert_eq "mrtr: the state table has a row per cell" 6 \
	"$(sed -n '/^| cell | dialogues |/,/^$/p' "$OUT/report.md" | grep -c '^| modern')"
assert_match "mrtr: report.html's legend names MRTR state losses" \
	'state lost \(MRTR requestState\)' "$(cat "$OUT/report.html")"
assert_match "mrtr: report.csv has the new columns" \
	'state_losses,task_losses,flow,keep,guard,affinity' "$(head -n 1 "$OUT/report.csv")"

# --------------------------------------------------------------- fork
S=fork
bench_run fork fork --quick --cooldown-max 0
assert_eq "fork: bench exit status" 0 "$BENCH_STATUS"
check_outputs fork 3
check_aggregation
bench_sanitizers
for p in direct gateway; do
	c="modern $p 2 replicas, sealed request state"
	R=$(cellv $S "$c" .represented)
	assert_cmp "fork $p: old states re-presented" "$R" '>' 0
	assert_eq "fork $p: every re-presentation forked (booked twice)" "$R" \
		"$(cellv $S "$c" .forked)"
	assert_eq "fork $p: none refused" 0 "$(cellv $S "$c" .refused)"
	assert_eq "fork $p: forks are a loss kind of the chart" "$R" \
		"$(cellv $S "$c" .failures.forked)"
done
c="modern gateway 2 replicas, sealed request state, single-use guard"
R=$(cellv $S "$c" .represented)
assert_cmp "fork guard: old states re-presented" "$R" '>' 0
assert_eq "fork guard: no fork" 0 "$(cellv $S "$c" .forked)"
assert_eq "fork guard: every re-presentation refused" "$R" "$(cellv $S "$c" .refused)"
assert_eq "fork guard: the gateway's counter agrees" "$R" "$(cellv $S "$c" .guard_refused)"
assert_eq "fork guard: the dialogues themselves went through" \
	"$(cellv $S "$c" .dialogues)" "$(cd "$OUT" && jq -s '[.[].load.total.ok] | add' \
		$(rj '.scenes[0].cells[2].runs[]'))"
assert_match "fork guard: the route's guard in the gateway's configuration" \
	'mrtr: \{single_use: true' "$(cat "$OUT"/logs/fork/*single-use-guard-r01/gateway1.yaml)"
assert_match "fork: report.md has the fork table" \
	'\| cell \| dialogues \| re-presented \| forked \| refused \| refused by the guard \|' \
	"$(cat "$OUT/report.md")"
assert_match "fork: report.html's legend names forks" 'forked \(an old requestState' \
	"$(cat "$OUT/report.html")"

# --------------------------------------------------------------- tasks
S=tasks
bench_run tasks tasks --quick --cooldown-max 0
assert_eq "tasks: bench exit status" 0 "$BENCH_STATUS"
check_outputs tasks 5
check_aggregation
check_kills
bench_sanitizers
# lost tasks in the load's first second: before the kill (at 2 s)
early() {
	(cd "$OUT" && jq -s '[.[].load.timeline[] | select(.t == 0) | .task_lost] | add' \
		$(jq -r --arg c "$1" '.scenes[0].cells[] | select(.cell == $c) | .runs[]' report.json))
}
for p in direct gateway; do
	c="modern $p 2 replicas, memory tasks"
	assert_cmp "tasks $p: memory tasks polled elsewhere are lost" \
		"$(cellv $S "$c" .task_losses)" '>' 0
	assert_cmp "tasks $p: lost before any kill" "$(early "$c")" '>' 0
	assert_eq "tasks $p: redis tasks survive" 0 \
		"$(cellv $S "modern $p 2 replicas, redis tasks" .task_losses)"
	assert_cmp "tasks $p: redis tasks counted" \
		"$(cellv $S "modern $p 2 replicas, redis tasks" .tasks)" '>' 0
done
c="modern gateway 2 replicas, memory tasks, task affinity"
assert_cmp "tasks affinity: tasks counted" "$(cellv $S "$c" .tasks)" '>' 0
assert_eq "tasks affinity: nothing lost before the kill" 0 "$(early "$c")"
assert_eq "tasks affinity: every lost task was the killed owner's (answered by the gateway)" \
	"$(cellv $S "$c" .task_owner_gone)" "$(cellv $S "$c" .task_losses)"
assert_cmp "tasks affinity: fewer losses than without" \
	"$(cellv $S "$c" .task_losses)" '<' "$(cellv $S "modern gateway 2 replicas, memory tasks" .task_losses)"
assert_eq "tasks: no owner counter without affinity" null \
	"$(cellv $S "modern gateway 2 replicas, memory tasks" .task_owner_gone)"
assert_match "tasks: affinity in the gateway's configuration" 'affinity: task' \
	"$(cat "$OUT"/logs/tasks/*task-affinity-r01/gateway1.yaml)"
assert_match "tasks: report.md has the tasks table" \
	'\| cell \| tasks \| polls \| task lost \| owner gone \(gateway\) \| other failures \|' \
	"$(cat "$OUT/report.md")"
assert_match "tasks: report.html's legend names task losses" 'task lost' \
	"$(cat "$OUT/report.html")"
finish
