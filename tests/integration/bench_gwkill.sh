#!/usr/bin/env bash
# bench_gwkill.sh - mcpgw-bench gateway-kill --quick: one of two gateways
# is killed and replaced; every kill is verified, the aggregation rules
# hold, and gateways sharing sessions (sealed tokens, Redis) lose none.
# Every cell runs the kill scenes' 100 virtual users; in the sealed cell
# they end their sessions with DELETE every 5 calls and present the id
# through the other gateway: none is served again (shared tombstones).
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
assert_eq "every cell passes 100 users" '[100]' "$(rj '[.scenes[0].cells[].users] | unique | tostring')"
RUN0=$OUT/$(rj '.scenes[0].cells[0].runs[0]')
assert_match "the load client got --users 100" ' --users 100 ' "$(jq -r .load_command "$RUN0") "
assert_eq "...and says so in its report" 100 "$(jq -r .load.config.users "$RUN0")"
S="legacy gateway-ha (sealed) 2 replicas"
assert_eq "$S: DELETE every 5 calls" 5 "$(cellv gateway-kill "$S" .delete_sessions)"
assert_eq "$S: no deleted session served again" 0 "$(cellv gateway-kill "$S" .deleted_served)"
SRUN=$OUT/$(cellv gateway-kill "$S" '.runs[0]')
assert_cmp "$S: sessions deleted and checked" "$(jq -r .load.total.session_deletes "$SRUN")" '>' 0
assert_match "$S: the gateways share tombstones in Redis" 'tombstones: redis' \
	"$(cat "$OUT/$(jq -r .logs "$SRUN")/gateway2.yaml")"
assert_eq "$S: its Redis is not the victim" gateway "$(jq -r .conditions.victim "$SRUN")"
assert_eq "the other cells delete no session" '[0]' \
	"$(rj '[.scenes[0].cells[] | select(.session_store != "sealed") | .delete_sessions] | unique | tostring')"
assert_eq "two gateways as targets" 2 "$(cd "$OUT" && jq -r '.targets | length' \
	"$(rj '.scenes[0].cells[0].runs[0]')")"
finish
