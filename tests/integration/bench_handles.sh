#!/usr/bin/env bash
# bench_handles.sh - mcpgw-bench handles --quick: the aggregation rules
# hold, and the handle designs split as in the study: handles kept in
# replica memory are lost when a request reaches the other replica
# (directly or through the stateless gateway), HMAC-signed and
# Redis-backed handles are never lost.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
require_tools redis-server
watchdog 400

bench_run h handles --quick --cooldown-max 0
assert_eq "bench exit status" 0 "$BENCH_STATUS"
check_outputs handles 6
check_aggregation
bench_sanitizers

for p in direct gateway; do
	assert_cmp "modern $p memory handles: handle losses" \
		"$(cellv handles "modern $p 2 replicas, memory handles" .handle_losses)" '>' 0
	for d in hmac redis; do
		c="modern $p 2 replicas, $d handles"
		assert_eq "$c: valid" 1 "$(cellv handles "$c" .valid)"
		assert_eq "$c: no handle loss" 0 "$(cellv handles "$c" .handle_losses)"
		assert_eq "$c: not saturated" false "$(cellv handles "$c" .saturated)"
	done
done
assert_eq "state named per cell" '["hmac","memory","redis"]' \
	"$(rj '[.scenes[0].cells[].state] | unique | tostring')"
finish
