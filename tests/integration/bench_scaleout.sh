#!/usr/bin/env bash
# bench_scaleout.sh - mcpgw-bench scale-out --quick: every cell runs once,
# report.json obeys the aggregation rules (recomputed here from the run
# files it lists), the outputs have their shape, and the cells show the
# study's shape: the legacy direct path at 2 and 4 replicas with a new
# connection per request loses sessions, one replica and the stateful
# gateway lose none, the modern era loses nothing anywhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
watchdog 600

bench_run so scale-out --quick --cooldown-max 0
assert_eq "bench exit status" 0 "$BENCH_STATUS"
check_outputs scale-out 16
check_aggregation
bench_sanitizers

S=scale-out
for r in 2 4; do
	assert_cmp "legacy direct $r replicas, new conn: session losses" \
		"$(cellv $S "legacy direct $r replicas, new conn" .session_losses)" '>' 0
	assert_eq "legacy direct $r replicas, new conn: saturated" true \
		"$(cellv $S "legacy direct $r replicas, new conn" .saturated)"
done
for c in "legacy direct 1 replica, new conn" "legacy direct 1 replica, reuse"; do
	assert_eq "$c: no session loss" 0 "$(cellv $S "$c" .session_losses)"
done
for c in "legacy gateway 4 replicas, new conn" "legacy gateway 4 replicas, reuse"; do
	assert_eq "$c: valid" 1 "$(cellv $S "$c" .valid)"
	assert_eq "$c: no session loss (stateful gateway)" 0 "$(cellv $S "$c" .session_losses)"
	assert_match "$c: re-pins read from the gateway" '^[0-9]+$' "$(cellv $S "$c" .repins)"
done
assert_eq "modern cells lose nothing" 0 "$(rj '[.scenes[0].cells[] | select(.era == "modern") |
	.session_losses + .handle_losses] | add')"
assert_eq "direct cells have no re-pin count" '[null]' \
	"$(rj '[.scenes[0].cells[] | select(.path == "direct") | .repins] | unique | tostring')"
# every run record names its conditions and the load client's report
assert_eq "run records carry the load report" 16 "$(cd "$OUT" && jq -s \
	'[.[] | select(.load.total.requests > 0 and .conditions.offered_rps == 200)] | length' \
	$(jq -r '.scenes[].cells[].runs[]' report.json))"
finish
