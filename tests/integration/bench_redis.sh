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
check_outputs redis-outage 3
check_aggregation
check_kills
bench_sanitizers

c="modern direct 2 replicas, redis handles"
assert_cmp "$c: the outage shows" \
	"$(cellv redis-outage "$c" '.handle_losses + .other_failures')" '>' 0
assert_eq "legacy gateway-ha (redis): no session loss" 0 \
	"$(cellv redis-outage "legacy gateway-ha (redis) 2 replicas" .session_losses)"
# (a) no persistence: Redis comes back empty, the gateways' write-back
# puts their sessions back
E="legacy gateway-ha (redis) 2 replicas"
ERUN=$OUT/$(cellv redis-outage "$E" '.runs[0]')
assert_cmp "$E: the gateways wrote their sessions back" \
	"$(jq '[.gateway_stats[] | select(.when == "after the run") | .stats.sessions.store.writebacks // 0] | add' "$ERUN")" '>' 0
# (b) Sentinel: the master killed, the replica promoted
SN="legacy gateway-ha (redis, sentinel) 2 replicas"
assert_eq "$SN: no session loss" 0 "$(cellv redis-outage "$SN" .session_losses)"
assert_eq "$SN: a valid repetition" 1 "$(cellv redis-outage "$SN" .valid)"
SRUN=$OUT/$(cellv redis-outage "$SN" '.runs[0]')
assert_eq "$SN: the sentinels promoted the replica" "redis replica" "$(jq -r '.kills[0].failover.master' "$SRUN")"
assert_eq "$SN: ...on the replica's port" "$(jq -r '.processes[] | select(.role == "redis replica") | .port' "$SRUN")" \
	"$(jq -r '.kills[0].failover.master_port' "$SRUN")"
assert_eq "$SN: three sentinels ran" 3 "$(jq '[.processes[] | select(.role | startswith("redis sentinel"))] | length' "$SRUN")"
assert_match "$SN: the gateways find the master through the sentinels" 'master_name:' \
	"$(cat "$OUT/$(jq -r .logs "$SRUN")/gateway1.yaml")"
assert_eq "every cell passes 100 users" '[100]' "$(rj '[.scenes[0].cells[].users] | unique | tostring')"
assert_eq "no dump.rdb in the working directory" "" "$(ls dump.rdb 2>/dev/null)"
assert_eq "the victim is redis" '["redis"]' \
	"$(rj '[.scenes[0].cells[].victim] | unique | tostring')"
assert_eq "the replacement answered PING" PING "$(cd "$OUT" && jq -r \
	'.kills[0].replacement.check' "$(rj '.scenes[0].cells[0].runs[0]')")"
finish
