#!/usr/bin/env bash
# bench_redis.sh - mcpgw-bench redis-outage --quick: redis-server is
# killed and restarted on its port; the kill is verified, the aggregation
# rules hold, the outage is visible to Redis-backed handles (lost or
# refused calls) while the gateways' cached sessions carry on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
require_tools redis-server
watchdog 300

bench_run ro redis-outage --quick --cooldown-max 0
assert_eq "bench exit status" 0 "$BENCH_STATUS"
check_outputs redis-outage 2
check_aggregation
check_kills
bench_sanitizers

c="modern direct 2 replicas, redis handles"
assert_cmp "$c: the outage shows" \
	"$(cellv redis-outage "$c" '.handle_losses + .other_failures')" '>' 0
assert_eq "legacy gateway-ha (redis): no session loss" 0 \
	"$(cellv redis-outage "legacy gateway-ha (redis) 2 replicas" .session_losses)"
assert_eq "the victim is redis" '["redis"]' \
	"$(rj '[.scenes[0].cells[].victim] | unique | tostring')"
assert_eq "the replacement answered PING" PING "$(cd "$OUT" && jq -r \
	'.kills[0].replacement.check' "$(rj '.scenes[0].cells[0].runs[0]')")"
finish
