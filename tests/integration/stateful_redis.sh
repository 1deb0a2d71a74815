#!/bin/bash
# stateful_redis.sh - the redis session store (modules/redis_store) with a
# real redis-server started by the test: two "mcpgw serve" processes
# share the session mapping.  Sessions created on gateway A are served by
# gateway B on the same replicas (no replay); a re-pin made by A is
# followed by B once its local cache entry is gone (no second replay); a
# DELETE on B ends the session for A too; A is SIGKILLed and the sessions
# go on through B.  Then redis-server is stopped: the sessions in a
# gateway's local cache keep working, and the outage is logged and
# counted.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node redis-server redis-cli
require_mcpgw
watchdog 60

start_redis
declare -A ADDR PID
for r in r1 r2 r3; do
	start_backend --era legacy --id "$r"
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done
ALL=("${ADDR[r1]}" "${ADDR[r2]}" "${ADDR[r3]}")

redis_conf() { # FILE CACHE_TTL
	SF_SESSIONS="  store: redis
  redis:
    url: $REDIS_URL
    cache_ttl: $2
    timeout: 500ms
    key_prefix: \"itest:$T_NAME:\"" sf_config "$1" stateful "${ALL[@]}"
}
redis_conf "$T_DIR/short.yaml" 1s
redis_conf "$T_DIR/long.yaml" 30s
start_serve -c "$T_DIR/short.yaml"
GA=$G_URL
GAPID=$G_PID
start_serve -c "$T_DIR/short.yaml"
GB=$G_URL
GBADDR=$G_ADDR

# --- sessions created on A, served by B ----------------------------------------------------------
declare -A PIN
SIDS=()
for k in 1 2 3 4; do
	sf_init "$GA" || continue
	SIDS+=("$SID")
	lwho "$GA"
	PIN[$SID]=$WHO
done
[ ${#SIDS[@]} = 4 ] || die "could not open four sessions on A"
KEYS=$(timeout 5 redis-cli -p "$REDIS_PORT" --scan --pattern "itest:$T_NAME:*" | grep -c .)
assert_cmp "the sessions are in Redis (under the key prefix)" "$KEYS" '>=' 4
I0=$(init_sum "${ALL[@]}")
FAILED=""
for SID in "${SIDS[@]}"; do
	lwho "$GB"
	[ "$CODE" = 200 ] && [ "$WHO" = "${PIN[$SID]}" ] || FAILED="$FAILED ${SID:0:6}:$CODE:$WHO/${PIN[$SID]}"
done
assert_eq "B serves A's sessions on their replicas" "" "$FAILED"
assert_eq "... with no replay" "$I0" "$(init_sum "${ALL[@]}")"

# --- a re-pin by A is followed by B ------------------------------------------------------------------
SID=${SIDS[0]}
DEAD=${PIN[$SID]}
SURV=()
for r in r1 r2 r3; do [ "$r" = "$DEAD" ] || SURV+=("${ADDR[$r]}"); done
I0=$(init_sum "${SURV[@]}")
kill_wait "${PID[$DEAD]}" KILL 5 || fail "$DEAD did not die"
lwho "$GA"
assert_code "A re-pins the session of the killed replica $DEAD" 200
NEWPIN=$WHO
assert_ne "A: onto another replica" "$DEAD" "$NEWPIN"
assert_eq "A: one replay" "$((I0 + 1))" "$(init_sum "${SURV[@]}")"
sleep 1.5 # past B's cache_ttl (1 s): B must read the session from Redis again
lwho "$GB"
assert_code "B: the re-pinned session" 200
assert_eq "B: follows A's new pin" "$NEWPIN" "$WHO"
assert_eq "B: without a replay of its own" "$((I0 + 1))" "$(init_sum "${SURV[@]}")"
start_backend --listen "${ADDR[$DEAD]}" --era legacy --id "$DEAD"
PID[$DEAD]=$B_PID

# --- DELETE on B ends the session for A -------------------------------------------------------------
# a session on a replica that was not restarted (it still knows it)
KEEP=()
DELSID=""
for s in "${SIDS[@]:1}"; do
	if [ -z "$DELSID" ] && [ "${PIN[$s]}" != "$DEAD" ]; then DELSID=$s; else KEEP+=("$s"); fi
done
[ -n "$DELSID" ] || die "every session was on $DEAD"
SID=$DELSID
HOME_ADDR=${ADDR[${PIN[$SID]}]}
D0=$(bstat "$HOME_ADDR" .sessions_deleted)
req DELETE "$GB" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE on B of a session created on A" '2[0-9][0-9]'
deleted_upstream() { [ "$(bstat "$HOME_ADDR" .sessions_deleted)" -gt "${D0:-0}" ] 2>/dev/null; }
poll_until 5 deleted_upstream && ok "the DELETE ended the upstream session" ||
	fail "sessions_deleted of ${PIN[$SID]} stayed $D0"
lwho "$GB"
assert_code "B: the deleted session is 404" 404
sleep 1.5 # past A's cache_ttl
lwho "$GA"
assert_code "A: the session deleted on B is 404" 404
req DELETE "$GA" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "A: DELETE of the session deleted on B" 404

# --- A dies; the sessions go on through B ---------------------------------------------------------
kill_wait "$GAPID" KILL 5 || fail "gateway A did not die"
FAILED=""
for SID in "${KEEP[@]}" "${SIDS[0]}"; do
	lwho "$GB"
	[ "$CODE" = 200 ] || FAILED="$FAILED ${SID:0:6}:$CODE"
done
assert_eq "after A was killed the sessions go on through B" "" "$FAILED"
sf_init "$GB" || fail "B: a new session"

# --- Redis stops: cached sessions keep working -----------------------------------------------------
start_serve -c "$T_DIR/long.yaml"
GC=$G_URL
GCADDR=$G_ADDR
sf_init "$GC" || die "C: no session"
CSIDS=("$SID" "${KEEP[@]}")
for SID in "${CSIDS[@]}"; do
	lwho "$GC"
	PIN[$SID]=$WHO
	[ "$CODE" = 200 ] || fail "C: session ${SID:0:6} before the outage: $CODE"
done
E0=$(gstat "$GCADDR" '.sessions.store.errors')
kill_wait "$REDIS_PID" TERM 10 || fail "redis-server did not stop"
log "redis-server stopped (status $STOP_STATUS)"
FAILED=""
for k in 1 2; do
	for SID in "${CSIDS[@]}"; do
		lwho "$GC"
		[ "$CODE" = 200 ] && [ "$WHO" = "${PIN[$SID]}" ] || FAILED="$FAILED ${SID:0:6}:$CODE:$WHO"
	done
done
assert_eq "Redis down: the sessions in C's local cache keep working" "" "$FAILED"
legacy "$GC" 30 tools/call '{"name":"echo","arguments":{"text":"no redis"}}'
assert_eq "Redis down: echo in a cached session" "no redis" "$(tool_text)"
# something that needs Redis: a new session
post "$GC" "$INIT_BODY"
log "Redis down: a new initialize was answered $CODE"
assert_code "Redis down: a new session that cannot be stored is refused" 503
assert_jq "... with the session-store error (-32013)" '.id == 1 and .error.code == -32013'
counted() { [ "$(gstat "$GCADDR" '.sessions.store.errors')" -gt "${E0:-0}" ] 2>/dev/null; }
poll_until 5 counted && ok "Redis down: the outage is counted" ||
	fail "Redis down: the gateway's store error counter stayed ${E0:-0}: $(curl -sS --max-time 5 "http://$GCADDR$GW_STATS_PATH" | head -c 600)"
if grep -Eq ' warn  event=store_down store=redis ' "$G_ERR"; then
	ok "Redis down: the outage is logged (an event at warn)"
else
	fail "Redis down: nothing about Redis in the gateway's log: $(grep -i redis "$G_ERR" | tail -n 3)"
fi

finish
