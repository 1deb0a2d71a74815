#!/usr/bin/env bash
# bench_prekill.sh - kill verification: with --test-prekill the victim is
# SIGKILLed before the load starts, so the scheduled kill finds it dead.
# That repetition must be invalid (not a run without losses): the cell
# reports valid 0 and no numbers, the reason names the early death, the
# table marks it, and the bench exits 1 (a cell without a valid run).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
watchdog 200

bench_run pre pod-kill --quick --cooldown-max 0 --test-prekill \
	--cell 'modern direct 2 replicas'
assert_eq "bench exit status" 1 "$BENCH_STATUS"
C="modern direct 2 replicas"
assert_eq "n" 1 "$(cellv pod-kill "$C" .n)"
assert_eq "valid" 0 "$(cellv pod-kill "$C" .valid)"
assert_eq "no throughput claimed" null "$(cellv pod-kill "$C" .achieved_rps.median)"
assert_eq "no losses claimed" null "$(cellv pod-kill "$C" .session_losses)"
assert_match "reason" 'already exited before the kill' \
	"$(cellv pod-kill "$C" '.invalid[0].reason')"
RUN=$OUT/$(cellv pod-kill "$C" '.runs[0]')
assert_eq "run record invalid" false "$(jq -r .valid "$RUN")"
assert_eq "kill record: victim was dead" false "$(jq -r '.kills[0].alive_before' "$RUN")"
assert_eq "kill record: not landed" false "$(jq -r '.kills[0].valid' "$RUN")"
assert_match "table marks the cell" '^\| modern direct 2 replicas \| 100 \| 0† \| – ' \
	"$(grep '^| modern direct 2 replicas |' "$OUT/report.md")"
assert_match "report.md gives the reason" 'already exited before the kill' "$(cat "$OUT/report.md")"
check_aggregation
finish
