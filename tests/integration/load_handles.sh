#!/bin/bash
# load_handles.sh - modern handle loss as "mcpgw load" sees it: the
# counter flow (counter_create, then counter_increment on the handle) over
# two modern replicas with a new connection per request.  With --state
# memory a handle minted by one replica is unknown to the other: handle
# losses are counted (the replicas' own counters agree) and the handle is
# recreated, while every request is reported; with hmac handles (a shared
# key) or redis-backed ones nothing is lost.  A max-handle-losses gate
# fails the memory run (exit 1) and passes the others.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq openssl redis-server redis-cli
require_mcpgw
watchdog 240

N=300
KEYS=$T_DIR/keys
echo "k1 $(openssl rand -hex 32)" >"$KEYS"
start_redis

stat() { curl -sS --max-time 5 "http://$1/stats" | jq -r ".$2"; }

# design NAME [backend options...]: two fresh replicas, one counter run.
design() {
	local name=$1 a1 a2
	shift
	start_backend --era modern --id "$name-1" "$@"
	a1=$B_ADDR
	start_backend --era modern --id "$name-2" "$@"
	a2=$B_ADDR
	run_load "handles-$name" --target "http://$a1/mcp" --target "http://$a2/mcp" \
		--dialect modern --connection new --tool counter \
		--concurrency 4 --requests $N --seed 5 --max-handle-losses 0
	REPLICA_LOSSES=$(( $(stat "$a1" handle_losses) + $(stat "$a2" handle_losses) ))
	assert_eq "$name: every request reported" $N "$(lj .total.requests)"
	assert_eq "$name: the report is modern" modern "$(lj .dialect)"
	assert_eq "$name: no session losses in the modern era" 0 "$(lj .total.failures.session_lost)"
}

design memory --state memory
LOST=$(lj .total.failures.handle_lost)
assert_load_exit "memory: the handle-loss gate fails" 1
assert_cmp "memory: handles lost" "$LOST" ">" 0
assert_eq "memory: requests = ok + handle losses" $N "$(lj '.total.ok + .total.failures.handle_lost')"
assert_eq "memory: the replicas saw exactly the losses counted" "$LOST" "$REPLICA_LOSSES"
assert_eq "memory: per-tool row" "$LOST" "$(lj .total.per_tool.counter.failures.handle_lost)"
assert_eq "memory: gate recorded as failed" false "$(lj '.gates.checks[] | select(.name == "max_handle_losses") | .passed')"
assert_eq "memory: gate value" "$LOST" "$(lj '.gates.checks[] | select(.name == "max_handle_losses") | .value')"
assert_cmp "memory: the lost handles were recreated (calls still succeed)" "$(lj .total.ok)" ">" 0

design hmac --state hmac --key-file "$KEYS"
assert_load_exit "hmac: the handle-loss gate passes" 0
assert_eq "hmac: no handle lost" 0 "$(lj .total.failures.handle_lost)"
assert_eq "hmac: all ok" $N "$(lj .total.ok)"
assert_eq "hmac: replicas agree" 0 "$REPLICA_LOSSES"

design redis --state redis --redis "$REDIS_URL"
assert_load_exit "redis: the handle-loss gate passes" 0
assert_eq "redis: no handle lost" 0 "$(lj .total.failures.handle_lost)"
assert_eq "redis: all ok" $N "$(lj .total.ok)"
assert_eq "redis: replicas agree" 0 "$REPLICA_LOSSES"

finish
