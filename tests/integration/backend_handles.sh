#!/bin/bash
# backend_handles.sh - modern counter handles (SEP-2567) under the three
# --state designs, each with two replicas: memory (a handle is lost on the
# other replica: tool error "unknown handle"), hmac (self-contained signed
# handles shared through a key file; tampering and a foreign key are
# refused), and redis (a real redis-server started here; both replicas
# share the counter; a dead store is a tool error, not a crash or hang).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node redis-server redis-cli openssl
require_mcpgw
watchdog 90

# create URL: sets H to the handle of a new counter (empty on failure).
create() {
	H=""
	modern "$1" 1 tools/call '{"name":"counter_create","arguments":{}}'
	[ "$CODE" = 200 ] || { fail "counter_create on $1: HTTP $CODE $BODY"; return; }
	H=$(jq_get 'select((.result.isError // false) == false) | .result.structuredContent.handle // .result.content[0].text // empty')
}

# incr URL HANDLE: one counter_increment; sets VALUE, NEWHANDLE, ISERR, TEXT.
incr() {
	modern "$1" 2 tools/call "$(jq -cn --arg h "$2" '{name:"counter_increment",arguments:{handle:$h}}')"
	ISERR=$(jq_get 'if has("error") then "rpc-error" else (.result.isError // false | tostring) end')
	TEXT=$(jq_get '.error.message // ([.result.content[]?.text] | join(" "))')
	VALUE=$(jq_get '.result.structuredContent.value // empty')
	NEWHANDLE=$(jq_get '.result.structuredContent.handle // empty')
	if [ -z "$VALUE" ] && [ "$ISERR" = false ]; then
		VALUE=$(printf '%s' "$TEXT" | grep -Eo -- '-?[0-9]+' | head -n 1)
	fi
}

# ---------------------------------------------------------------- memory
start_backend --era modern --state memory --id mem-A
A=$B_URL
start_backend --era modern --state memory --id mem-B
B=$B_URL
create "$A"
[ -n "$H" ] && ok "memory: counter_create returns a handle" || fail "memory: no handle"
incr "$A" "$H"
assert_eq "memory: increment on the same replica" "1" "$VALUE"
incr "$A" "$H"
assert_eq "memory: second increment" "2" "$VALUE"
incr "$B" "$H"
assert_eq "memory: the other replica answers a tool error" true "$ISERR"
assert_match "memory: error says unknown handle" '[Uu]nknown handle' "$TEXT"
assert_code "memory: handle loss is a tool error, not an HTTP error" 200
incr "$A" "no-such-handle"
assert_eq "memory: garbage handle is a tool error" true "$ISERR"

# ---------------------------------------------------------------- hmac
KEYS=$T_DIR/keys
{
	echo "# test keys"
	echo "k1 $(openssl rand -hex 32)"
} >"$KEYS"
OTHER=$T_DIR/other-keys
echo "k1 $(openssl rand -hex 32)" >"$OTHER"

start_backend --era modern --state hmac --key-file "$KEYS" --id hmac-A
A=$B_URL
start_backend --era modern --state hmac --key-file "$KEYS" --id hmac-B
B=$B_URL
start_backend --era modern --state hmac --key-file "$OTHER" --id hmac-C
C=$B_URL

create "$A"
H0=$H
assert_match "hmac: handle is visible ASCII in four dot-separated fields" '^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' "$H0"
incr "$B" "$H0"
assert_eq "hmac: a handle from A works on B" "1" "$VALUE"
H1=$NEWHANDLE
[ -n "$H1" ] && ok "hmac: increment returns a new handle" || fail "hmac: no new handle in $(rpc)"
assert_ne "hmac: the new handle differs" "$H0" "$H1"
incr "$A" "$H1"
assert_eq "hmac: the new handle continues on A" "2" "$VALUE"

# Tamper: change one character of the MAC (last field) and of the payload.
flip() { # STRING POS: replaces the character at POS by a different one
	local s=$1 p=$2 c=${1:$2:1} r=A
	[ "$c" = A ] && r=B
	printf '%s' "${s:0:$p}$r${s:$((p + 1))}"
}
incr "$B" "$(flip "$H1" $((${#H1} - 2)))"
assert_eq "hmac: a handle with a tampered MAC is refused" true "$ISERR"
PAYLOAD_POS=$(($(printf '%s' "$H1" | cut -d. -f1-2 | wc -c) + 1))
incr "$B" "$(flip "$H1" "$PAYLOAD_POS")"
assert_eq "hmac: a handle with a tampered payload is refused" true "$ISERR"
incr "$B" "v1.zz.$(printf '%s' "$H1" | cut -d. -f3-)"
assert_eq "hmac: a handle with an unknown key id is refused" true "$ISERR"
incr "$C" "$H1"
assert_eq "hmac: a replica with a different key refuses the handle" true "$ISERR"
incr "$A" "garbage"
assert_eq "hmac: a malformed handle is refused" true "$ISERR"
incr "$A" "$H1"
assert_eq "hmac: the genuine handle still works after the refusals" "2" "$VALUE"

# ---------------------------------------------------------------- redis
start_redis
start_backend --era modern --state redis --redis "$REDIS_URL" --id redis-A
A=$B_URL
RA_PID=$B_PID
start_backend --era modern --state redis --redis "$REDIS_URL" --id redis-B
B=$B_URL
RB_PID=$B_PID

create "$A"
[ -n "$H" ] && ok "redis: counter_create returns a handle" || fail "redis: no handle"
incr "$B" "$H"
assert_eq "redis: a handle from A works on B" "1" "$VALUE"
incr "$A" "$H"
assert_eq "redis: both replicas share the counter" "2" "$VALUE"
incr "$B" "$H"
assert_eq "redis: and again on B" "3" "$VALUE"
KEYS_IN_REDIS=$(timeout 5 redis-cli -p "$REDIS_PORT" dbsize)
assert_match "redis: the counter lives in redis" '^[1-9][0-9]*$' "$KEYS_IN_REDIS"
incr "$A" "unknown-handle-$$"
assert_eq "redis: an unknown handle is a tool error" true "$ISERR"

# Kill the store: the replica answers a tool error in bounded time.
RC=$(stop_pid "$REDIS_PID" KILL 5)
log "redis-server killed (status $RC)"
incr "$A" "$H"
assert_code "redis down: the request is answered" 200
assert_eq "redis down: a tool error" true "$ISERR"
assert_match "redis down: says the state store is unavailable" 'state store unavailable' "$TEXT"
create "$B"
assert_eq "redis down: counter_create is a tool error too" true "$(jq_get 'if has("error") then "true" else (.result.isError // false | tostring) end')"
if kill -0 "$RA_PID" 2>/dev/null && kill -0 "$RB_PID" 2>/dev/null; then
	ok "redis down: both replicas are still running"
else
	fail "redis down: a replica died"
fi
modern "$A" 3 tools/call '{"name":"echo","arguments":{"text":"still here"}}'
assert_eq "redis down: stateless tools still work" "still here" "$(tool_text)"

# Bring redis back on the same port: the replicas reconnect (bounded wait).
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$T_DIR" \
	--daemonize no >"$T_DIR/redis2.out" 2>&1 &
track_pid $!
i=0
while [ $i -lt 50 ] && [ "$(timeout 2 redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" != PONG ]; do
	sleep 0.1
	i=$((i + 1))
done
i=0
H3=""
while [ $i -lt 20 ]; do
	modern "$A" 4 tools/call '{"name":"counter_create","arguments":{}}'
	if [ "$(jq_get '.result.isError // false')" = false ]; then
		H3=$(jq_get '.result.structuredContent.handle // .result.content[0].text // empty')
		break
	fi
	sleep 0.5
	i=$((i + 1))
done
[ -n "$H3" ] && ok "redis back: replica A serves counters again" ||
	fail "redis back: replica A did not recover within 10 s: $(rpc)"
incr "$B" "$H3"
assert_eq "redis back: replica B shares the new counter" "1" "$VALUE"

finish
