#!/bin/bash
# stateful_sealed_redis.sh - sealed sessions with shared tombstones
# (sessions.sealed.tombstones: redis, issue 15): a DELETE through one
# gateway is honoured by every gateway sharing the key file and the Redis.
# - a session made on A and used through B; DELETE through A; B (which had
#   it cached) answers 404 session_not_found once its last check is older
#   than cache_ttl, and a gateway that never saw the session at once;
# - the tombstone is one Redis key, <prefix>tomb:<hex SHA-256 of the
#   token>, expiring with the token (PTTL within max_lifetime); the token
#   itself is not in Redis;
# - cache hits checked within cache_ttl ask Redis nothing (Redis' own
#   EXISTS call count);
# - Redis down: on_redis_error: serve (default) serves an unchecked token
#   (counted in the store's errors), refuse answers 503 (-32013);
# - without tombstones: redis (the default, local) B still serves the
#   session A deleted: the documented limit.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node openssl redis-server redis-cli
require_mcpgw
watchdog 120

start_backend --era legacy --id r1
R1=$B_ADDR
start_backend --era legacy --id r2
R2=$B_ADDR
start_redis
RC() { timeout 5 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@" 2>/dev/null; }

printf 'k1 %s\n' "$(openssl rand -hex 32)" >"$T_DIR/k.keys"
# conf FILE TTL [extra sealed: lines]: a stateful gateway, sealed store,
# shared tombstones with cache_ttl TTL
conf() {
	SF_WORKERS=2 SF_SESSIONS="  store: sealed
  key_file: $T_DIR/k.keys
  max_lifetime: 1h
  sealed:
    tombstones: redis${3:+
$3}
  redis:
    url: $REDIS_URL
    timeout: 500ms
    cache_ttl: $2" sf_config "$1" stateful "$R1" "$R2"
}
conf "$T_DIR/short.yaml" 300ms
conf "$T_DIR/long.yaml" 1h
conf "$T_DIR/refuse.yaml" 1h "    on_redis_error: refuse"
exists_calls() { RC INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_exists:calls=\([0-9]*\).*/\1/p' | grep . || echo 0; }

start_serve -c "$T_DIR/short.yaml"
GA=$G_URL
start_serve -c "$T_DIR/short.yaml"
GB=$G_URL
GBADDR=$G_ADDR

# ---- create on A, use through B, DELETE through A, B refuses ---------------------
sf_init "$GA" || die "no session on A"
lwho "$GA"
assert_code "A serves its session" 200
PINNED=$WHO
lwho "$GB"
assert_code "B serves A's session (token opened, no tombstone)" 200
assert_eq "B uses the same replica" "$PINNED" "$WHO"
E0=$(gstat "$GBADDR" '.sessions.store.errors')
req DELETE "$GA" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE through A" '2[0-9][0-9]'
TOKSHA=$(sha_of "$SID")
KEYS=$(RC --scan --pattern 'mcpgw:session:tomb:*')
assert_eq "one tombstone in Redis, named by the token's SHA-256" "mcpgw:session:tomb:$TOKSHA" "$KEYS"
PTTL=$(RC PTTL "mcpgw:session:tomb:$TOKSHA")
[ "${PTTL:-0}" -gt 0 ] 2>/dev/null && [ "$PTTL" -le 3600000 ] &&
	ok "the tombstone expires with the token (PTTL $PTTL ms <= max_lifetime)" ||
	fail "tombstone PTTL: '$PTTL'"
assert_eq "the token itself is not stored in Redis" "" "$(RC --scan | grep -F -- "$SID")"
b_refuses() { lwho "$GB"; [ "$CODE" = 404 ]; }
poll_until 10 b_refuses && ok "B answers 404 for the session A deleted (its cached check aged past cache_ttl)" ||
	fail "B still answers $CODE for the deleted session"
assert_jq "B: session_not_found (-32011)" '.error.code == -32011'
lwho "$GA"
assert_code "A: 404 too" 404
start_serve -c "$T_DIR/short.yaml"
GC=$G_URL
lwho "$GC"
assert_code "a gateway that never saw the session: 404 at once" 404
assert_eq "no Redis error was counted on B" "$E0" "$(gstat "$GBADDR" '.sessions.store.errors')"

# ---- fresh cache hits ask Redis nothing -----------------------------------------------
start_serve -c "$T_DIR/long.yaml"
GD=$G_URL
start_serve -c "$T_DIR/long.yaml"
GE=$G_URL
GEADDR=$G_ADDR
sf_init "$GD" || die "no session on D"
X0=$(exists_calls)
FAILED=""
for k in 1 2 3 4; do lwho "$GD"; [ "$CODE" = 200 ] || FAILED="$FAILED D#$k:$CODE"; done
assert_eq "D: its own session served" "" "$FAILED"
assert_eq "D: a session it created is never checked (nobody can have deleted it unseen)" "$X0" "$(exists_calls)"
for k in 1 2 3 4; do lwho "$GE"; [ "$CODE" = 200 ] || FAILED="$FAILED E#$k:$CODE"; done
assert_eq "E: D's session served" "" "$FAILED"
assert_eq "E: one EXISTS for four requests (cache hits within cache_ttl)" "$((X0 + 1))" "$(exists_calls)"
DSID=$SID
DNEG=$NEGOTIATED

# ---- Redis down --------------------------------------------------------------------------
sf_init "$GD" || die "no second session on D"
S2=$SID
start_serve -c "$T_DIR/refuse.yaml"
GF=$G_URL
EE0=$(gstat "$GEADDR" '.sessions.store.errors')
kill_wait "$REDIS_PID" TERM 10 || fail "redis-server did not stop"
SID=$S2
lwho "$GE"
assert_code "Redis down, on_redis_error: serve: an unchecked token is served" 200
counted() { [ "$(gstat "$GEADDR" '.sessions.store.errors')" -gt "${EE0:-0}" ] 2>/dev/null; }
counted && ok "... and counted in the store's errors" || fail "errors stayed $EE0"
lwho "$GF"
assert_code "Redis down, on_redis_error: refuse: 503" 503
assert_jq "... session_store (-32013)" '.error.code == -32013'
SID=$DSID
NEGOTIATED=$DNEG
lwho "$GE"
assert_code "a session checked within cache_ttl is served from the cache meanwhile" 200
req DELETE "$GD" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE with Redis down (serve): honoured locally" '2[0-9][0-9]'
lwho "$GD"
assert_code "D: 404 after its own DELETE" 404

# ---- without shared tombstones: the documented limit --------------------------------------
SF_WORKERS=1 SF_SESSIONS="  store: sealed
  key_file: $T_DIR/k.keys" sf_config "$T_DIR/local.yaml" stateful "$R1" "$R2"
start_serve -c "$T_DIR/local.yaml"
GL1=$G_URL
start_serve -c "$T_DIR/local.yaml"
GL2=$G_URL
sf_init "$GL1" || die "no session on L1"
lwho "$GL2"
assert_code "local tombstones: L2 serves L1's session" 200
req DELETE "$GL1" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE through L1" '2[0-9][0-9]'
lwho "$GL1"
assert_code "L1: 404 after its DELETE" 404
lwho "$GL2"
assert_code "L2 (no shared tombstones) still serves it: the documented limit" 200

finish
