#!/bin/bash
# stateful_redis_restart.sh - the redis session store after Redis loses
# its data: two "mcpgw serve" processes share sessions through a real
# redis-server without persistence.  redis-server is SIGKILLed and started
# again, empty, on the same port; past the gateways' cache_ttl every
# session alive before still works through both gateways (each gateway
# wrote back what it held: store_writeback event, counted), and a session
# DELETEd before stays deleted.  Then FLUSHALL (the data gone with no
# reconnect): the same again.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node redis-server redis-cli
require_mcpgw
watchdog 120

start_redis
declare -A ADDR
for r in r1 r2; do
	start_backend --era legacy --id "$r"
	ADDR[$r]=$B_ADDR
done
ALL=("${ADDR[r1]}" "${ADDR[r2]}")

PREFIX="itest:$T_NAME:"
SF_SESSIONS="  store: redis
  idle_timeout: 10m
  redis:
    url: $REDIS_URL
    cache_ttl: 1s
    timeout: 500ms
    key_prefix: \"$PREFIX\"" sf_config "$T_DIR/gw.yaml" stateful "${ALL[@]}"
start_serve -c "$T_DIR/gw.yaml"
GA=$G_URL
GAADDR=$G_ADDR
GAERR=$G_ERR
start_serve -c "$T_DIR/gw.yaml"
GB=$G_URL
GBADDR=$G_ADDR
GBERR=$G_ERR

# restart_redis: SIGKILL and start again, empty, on the same port.
restart_redis() {
	local i=0
	kill_wait "$REDIS_PID" KILL 10 || die "redis-server did not die"
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' \
		--dir "$T_DIR" --appendonly no --daemonize no --protected-mode yes \
		>>"$T_DIR/redis.out" 2>>"$T_DIR/redis.err" &
	REDIS_PID=$!
	track_pid "$REDIS_PID"
	while [ $i -lt 100 ]; do
		[ "$(timeout 2 redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	die "redis-server did not start again on port $REDIS_PORT"
}
# tomb_written: the tombstone of DELSID is in Redis (<prefix>tomb:<hex
# SHA-256 of the id>), i.e. the gateway that deleted it wrote it back.
tomb_written() {
	[ "$(timeout 5 redis-cli -p "$REDIS_PORT" exists "${PREFIX}tomb:$(sha_of "$DELSID")")" = 1 ]
}
session_keys() {
	timeout 5 redis-cli -p "$REDIS_PORT" --scan --pattern "$PREFIX*" |
		grep -Ec "^$PREFIX[0-9a-f]{32}\$"
}

# --- sessions on both gateways, one deleted --------------------------------------------------------
SIDS=()
for k in 1 2 3 4 5 6 7 8; do
	if [ $((k % 2)) = 0 ]; then G=$GA; else G=$GB; fi
	sf_init "$G" || continue
	SIDS+=("$SID")
done
[ ${#SIDS[@]} = 8 ] || die "could not open eight sessions"
for SID in "${SIDS[@]}"; do # both caches hold every session
	lwho "$GA"
	lwho "$GB"
done
DELSID=${SIDS[0]}
SIDS=("${SIDS[@]:1}")
SID=$DELSID
req DELETE "$GB" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE on B" '2[0-9][0-9]'
assert_eq "Redis holds the seven live sessions" 7 "$(session_keys)"

# check_all WHAT: every live session works through both gateways (past
# their cache_ttl), the deleted one is 404 on both.
check_all() {
	local lost="" g
	sleep 1.5 # past cache_ttl: the gateways must ask Redis again
	for SID in "${SIDS[@]}"; do
		for g in "$GA" "$GB"; do
			lwho "$g"
			[ "$CODE" = 200 ] || lost="$lost ${SID:0:6}@${g#http://}:$CODE"
		done
	done
	assert_eq "$1: every session works through both gateways (0 lost)" "" "$lost"
	SID=$DELSID
	for g in "$GA" "$GB"; do
		lwho "$g"
		assert_code "$1: the deleted session stays deleted (${g#http://})" 404
	done
}

# --- Redis restarted empty -----------------------------------------------------------------------
RUN0=$(timeout 5 redis-cli -p "$REDIS_PORT" info server | tr -d '\r' | sed -n 's/^run_id://p')
restart_redis
RUN1=$(timeout 5 redis-cli -p "$REDIS_PORT" info server | tr -d '\r' | sed -n 's/^run_id://p')
assert_ne "a new redis-server (run_id)" "$RUN0" "$RUN1"
wrote_back() { [ "$(session_keys)" -ge 7 ] 2>/dev/null; }
poll_until 15 wrote_back && ok "the gateways wrote the sessions back" ||
	fail "Redis holds $(session_keys) sessions after the restart"
poll_until 15 tomb_written && ok "B wrote the tombstone of its DELETE back" ||
	fail "no tombstone of the deleted session in Redis"
check_all "Redis restarted empty"
NOLOG=""
for e in "$GAERR" "$GBERR"; do
	grep -Eq 'event=store_writeback store=redis .*phase=start sessions=[0-9]+' "$e" ||
		NOLOG="$NOLOG $(basename "$e")"
done
assert_eq "each gateway logged its write-back (store_writeback)" "" "$NOLOG"
WB=$(($(gstat "$GAADDR" '.sessions.store.writebacks') + $(gstat "$GBADDR" '.sessions.store.writebacks')))
assert_cmp "write-backs counted" "$WB" '>=' 2
RS=$(($(gstat "$GAADDR" '.sessions.store.restored_writeback') + $(gstat "$GBADDR" '.sessions.store.restored_writeback')))
assert_cmp "sessions written back counted" "$RS" '>=' 7
M=0
for a in "$GAADDR" "$GBADDR"; do
	n=$(curl -sS --max-time 5 "http://$a/metrics" 2>/dev/null |
		sed -n 's/^mcpgw_session_store_restored_total{store="redis",how="writeback"} //p')
	M=$((M + ${n:-0}))
done
assert_cmp "the metric of sessions written back" "$M" '>=' 7
assert_eq "the deleted session is not in Redis" 0 \
	"$(timeout 5 redis-cli -p "$REDIS_PORT" exists "$PREFIX$DELSID")"

# --- FLUSHALL: lost without a reconnect -----------------------------------------------------------
timeout 5 redis-cli -p "$REDIS_PORT" flushall >/dev/null || die "FLUSHALL failed"
check_all "after FLUSHALL"
poll_until 15 wrote_back && ok "after FLUSHALL: the sessions are in Redis again" ||
	fail "after FLUSHALL Redis holds $(session_keys) sessions"

# --- a DELETE after the restart stays deleted through the next restart ----------------------------
SID=${SIDS[0]}
DELSID=$SID
SIDS=("${SIDS[@]:1}")
req DELETE "$GA" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE on A" '2[0-9][0-9]'
tomb_written || fail "DELETE on A: no tombstone in Redis"
restart_redis
poll_until 15 tomb_written && ok "a second restart: A wrote its tombstone back" ||
	fail "a second restart: no tombstone of the session deleted on A"
check_all "a second restart"

finish
