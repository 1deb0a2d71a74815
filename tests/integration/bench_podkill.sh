#!/usr/bin/env bash
# bench_podkill.sh - mcpgw-bench pod-kill --quick: every kill lands and is
# verified (reaped with SIGKILL, port refused, replacement healthy on the
# same port), the aggregation rules hold, the stateful gateway loses no
# session across the kill, HMAC and Redis handles survive it, the
# stateless gateway that learned the tools fails no call (what was in
# flight on the victim is replayed, nothing refused); and a run with
# --kill-signal TERM verifies a graceful stop instead.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
require_tools redis-server
watchdog 500

bench_run pk pod-kill --quick --cooldown-max 0
assert_eq "bench exit status" 0 "$BENCH_STATUS"
check_outputs pod-kill 8
check_aggregation
check_kills
bench_sanitizers

S=pod-kill
assert_eq "legacy gateway: no session loss across the kill" 0 \
	"$(cellv $S "legacy gateway 2 replicas" .session_losses)"
assert_match "legacy gateway: re-pins counted" '^[0-9]+$' \
	"$(cellv $S "legacy gateway 2 replicas" .repins)"
for d in hmac redis; do
	assert_eq "modern $d handles survive the kill" 0 \
		"$(cellv $S "modern direct 2 replicas, $d handles" .handle_losses)"
done
L="modern gateway 2 replicas, tools learned"
assert_eq "modern gateway, tools learned: no failed call across the kill" 0 \
	"$(cellv $S "$L" .other_failures)"
run=$(cellv $S "$L" '.runs[0]')
assert_eq "... its gateway learned the tools" true "$(cd "$OUT" && jq -r \
	'.gateway_stats[0].stats.upstreams[0].replays.tools_lists_learned > 0' "$run")"
assert_eq "... and refused no replay" 0 "$(cd "$OUT" && jq -r \
	'.gateway_stats[0].stats.upstreams[0].replays.refused' "$run")"
assert_eq "kill time from the load client's clock" 2 "$(cd "$OUT" && jq -r \
	'.kills[0].at_s | floor' "$(rj '.scenes[0].cells[0].runs[0]')")"
assert_eq "every run's clock is the load client's own (its clock.start_ns)" 0 \
	"$(cd "$OUT" && jq -s '[.[] | select(.load_clock_start_ns == null or
		.load_clock_start_ns != .load.clock.start_ns)] | length' \
		$(rj '.scenes[].cells[].runs[]'))"
assert_eq "the replacement took the victim's port" true "$(cd "$OUT" && jq -r \
	'[.processes[] | select(.role == "replica 1") | .port] | (length == 2 and .[0] == .[1])' \
	"$(rj '.scenes[0].cells[0].runs[0]')")"
assert_match "report.md states the kill" 'SIGKILL at 2 s' "$(cat "$OUT/report.md")"

# SIGTERM: every component stops gracefully, which counts as landed
bench_run pkterm pod-kill --quick --cooldown-max 0 --kill-signal TERM \
	--cell 'legacy-direct-*'
assert_eq "TERM: bench exit status" 0 "$BENCH_STATUS"
check_kills
assert_eq "TERM: the victim exited 0 on SIGTERM" "exited 0" "$(cd "$OUT" && jq -r \
	'.kills[0].status' "$(rj '.scenes[0].cells[0].runs[0]')")"
assert_eq "TERM: signal recorded" TERM "$(rj '.scenes[0].kill_signal')"
finish
