#!/usr/bin/env bash
# bench_gwkill.sh - mcpgw-bench gateway-kill --quick: one of two gateways
# is killed and replaced; every kill is verified, the aggregation rules
# hold, and gateways sharing sessions (sealed tokens, Redis) lose none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
require_tools redis-server
watchdog 400

bench_run gk gateway-kill --quick --cooldown-max 0
assert_eq "bench exit status" 0 "$BENCH_STATUS"
check_outputs gateway-kill 4
check_aggregation
check_kills
bench_sanitizers

for st in sealed redis; do
	assert_eq "legacy gateway-ha ($st): no session loss" 0 \
		"$(cellv gateway-kill "legacy gateway-ha ($st) 2 replicas" .session_losses)"
done
assert_eq "the victim is a gateway" '["gateway"]' \
	"$(rj '[.scenes[0].cells[].victim] | unique | tostring')"
assert_eq "two gateways as targets" 2 "$(cd "$OUT" && jq -r '.targets | length' \
	"$(rj '.scenes[0].cells[0].runs[0]')")"
finish
