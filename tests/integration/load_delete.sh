#!/bin/bash
# load_delete.sh - "mcpgw load --delete-sessions N" (issue 17): a legacy
# virtual user ends its session with DELETE after N calls, presents the
# deleted id (a ping) through the other target, which must refuse it
# (404), then starts a new session (not counted as a reinitialization).
# Against two gateways sharing sealed sessions:
# - with shared tombstones (sessions.sealed.tombstones: redis) the deleted
#   sessions stay deleted: deleted_served 0, and every check counted;
# - with the default local tombstones the other gateway opens the token
#   and serves it again: deleted_served > 0 (the documented limit, and
#   the proof that the check can see it);
# - a bad value is a usage error.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq openssl redis-server
require_mcpgw
watchdog 90

start_backend --era legacy --id d1
R1=$B_ADDR
start_backend --era legacy --id d2
R2=$B_ADDR
start_redis
printf 'k1 %s\n' "$(openssl rand -hex 32)" >"$T_DIR/k.keys"

# conf FILE TOMBSTONES: two workers, sealed store over the Redis
conf() {
	SF_SESSIONS="  store: sealed
  key_file: $T_DIR/k.keys
  sealed:
    tombstones: $2
  redis:
    url: $REDIS_URL
    timeout: 500ms" sf_config "$1" stateful "$R1" "$R2"
}
conf "$T_DIR/shared.yaml" redis
conf "$T_DIR/local.yaml" local

# drive NAME CONF: two gateways of CONF, 12 users, a DELETE every 3 calls
drive() {
	local ga gb
	start_serve -c "$2"
	ga=$G_URL
	start_serve -c "$2"
	gb=$G_URL
	run_load "$1" --target "$ga" --target "$gb" --dialect legacy --tool echo \
		--arg text=x --rate 60 --duration 3s --users 12 --delete-sessions 3 \
		--list-tools --seed 7
}

drive shared "$T_DIR/shared.yaml"
assert_load_exit "shared tombstones" 0
assert_eq "--delete-sessions: in the report's configuration" 3 "$(lj .config.delete_sessions)"
assert_cmp "shared tombstones: sessions deleted and checked" "$(lj .total.session_deletes)" '>=' 12
assert_eq "shared tombstones: no deleted session served again" 0 "$(lj .total.failures.deleted_served)"
assert_eq "shared tombstones: no session lost" 0 "$(lj .total.failures.session_lost)"
assert_eq "shared tombstones: every call answered" "$(lj .total.requests)" "$(lj .total.ok)"
assert_eq "planned new sessions are no reinitializations" 0 "$(lj .total.reinitializations)"

drive local "$T_DIR/local.yaml"
assert_cmp "local tombstones: the other gateway serves deleted sessions" \
	"$(lj .total.failures.deleted_served)" '>' 0
assert_match "local tombstones: the failure says why" 'deleted session was served again' \
	"$(lj '[.first_failures[].detail] | join(" ")')"

for bad in -1 x; do
	run_load bad --target "http://$R1/mcp" --delete-sessions "$bad"
	assert_eq "--delete-sessions $bad: usage error" 2 "$LOAD_STATUS"
	assert_match "--delete-sessions $bad: says why" 'invalid --delete-sessions' "$(cat "$LOAD_ERR")"
done
finish
