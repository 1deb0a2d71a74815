#!/bin/bash
# stateful_inflight.sh - a request that reached its replica and then lost
# it (SIGKILL while the answer is pending) is replayed after the re-pin
# only when that is safe: a tools/call of a tool that the session's
# tools/list annotated read-only or idempotent (sleep) is replayed and
# the client gets its result; a non-idempotent one (counter_increment) is
# not sent again anywhere and the client gets a JSON-RPC error with its
# id; nor is a read-only tool the gateway has not seen annotated in this
# session; a request that is not a tools/call (tools/list) is replayed;
# and on a route with "replay: always" even a non-idempotent call
# (notify) is.  The session itself goes on after every case.  A call
# that times out waiting for a free connection to its replica (the
# gateway's connection limit) is answered 504 and moves nothing.
#
# Replica r1 holds every answer back 1 s (--delay-ms) so a call is
# surely in flight when it is killed; it has nearly all the weight, so
# new sessions land on it, and r2/r3 take the re-pinned ones.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node sha256sum
require_mcpgw
watchdog 60

start_backend --era legacy --id r1 --record 200 --delay-ms 1000
R1=$B_ADDR
R1PID=$B_PID
start_backend --era legacy --id r2 --record 200
R2=$B_ADDR
start_backend --era legacy --id r3 --record 200
R3=$B_ADDR

SF_WORKERS=1 SF_WEIGHTS="1000 1 1" SF_GROUP='    outlier:
      consecutive_connect_failures: 3
      base_ejection: 300ms
      max_ejection: 600ms' \
	sf_config "$T_DIR/safe.yaml" stateful "$R1" "$R2" "$R3"
SF_WORKERS=1 SF_WEIGHTS="1000 1 1" SF_REPLAY=always SF_GROUP='    outlier:
      consecutive_connect_failures: 3
      base_ejection: 300ms
      max_ejection: 600ms' \
	sf_config "$T_DIR/always.yaml" stateful "$R1" "$R2" "$R3"
start_serve -c "$T_DIR/safe.yaml"
GW=$G_URL
GWADDR=$G_ADDR
GWPID=$G_PID

# r1_session URL: a new session pinned to r1 (restarted when dead); sets SID.
r1_session() {
	local url=$1 k
	if ! kill -0 "$R1PID" 2>/dev/null || is_zombie "$R1PID"; then
		start_backend --listen "$R1" --era legacy --id r1 --record 200 --delay-ms 1000
		R1PID=$B_PID
	fi
	for k in 1 2 3 4 5 6 7 8 9 10; do
		sf_init "$url" || return 1
		lwho "$url"
		[ "$WHO" = r1 ] && return 0
		req DELETE "$url" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
		sleep 0.3
	done
	fail "no session landed on r1 in 10 tries (last whoami: $CODE $WHO)"
	return 1
}

# inflight NAME URL ID TOOLCALL_PARAMS_JSON | METHOD:PARAMS: sends the
# request in session SID in the background, waits until r1 holds it,
# SIGKILLs r1 and collects the answer (CODE/BODY via bg_result).  Sets
# CALL_SHA to the body's digest.
inflight() {
	local name=$1 url=$2 id=$3 method=$4 params=$5 body
	body="{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"$method\",\"params\":$params}"
	CALL_SHA=$(sha_of "$body")
	rec_clear "$R2"
	rec_clear "$R3"
	I0=$(init_sum "$R2" "$R3")
	bg_post "$name" "$url" "$body" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
	local bp=$BG_PID
	wait_inflight "http://$R1" 1 || fail "$name: the call never reached r1"
	kill_wait "$R1PID" KILL 5 || fail "$name: r1 did not die"
	wait_pid "$bp" 15
	bg_result "$name"
	log "$name: HTTP $CODE $(printf '%s' "$BODY" | head -c 300)"
}

# elsewhere: how many times the last call's bytes reached r2 or r3.
elsewhere() { echo $(($(rec_sha "$R2" "$CALL_SHA") + $(rec_sha "$R3" "$CALL_SHA"))); }

# goes_on WHAT: the session answers again, on r2 or r3.
goes_on() {
	fg_result
	lwho "$GW_NOW"
	assert_code "$1: the session goes on afterwards" 200
	assert_match "$1: ... re-pinned to a survivor" '^r[23]$' "$WHO"
}

# --- A: a non-idempotent tools/call is not replayed -------------------------------------------------
GW_NOW=$GW
r1_session "$GW" || die "no session on r1"
legacy "$GW" 2 tools/list '{}'
assert_jq "A: tools/list seen by the gateway: counter_increment is not read-only" \
	'.result.tools[] | select(.name == "counter_increment") | (.annotations.readOnlyHint // false) == false and (.annotations.idempotentHint // false) == false'
legacy "$GW" 3 tools/call '{"name":"counter_create","arguments":{}}'
HANDLE=$(jq_get '.result.structuredContent.handle // empty')
[ -n "$HANDLE" ] || fail "A: counter_create gave no handle: $(rpc)"
RF0=$(gstat "$GWADDR" '.sessions.replays_refused')
inflight A "$GW" 41 tools/call "{\"name\":\"counter_increment\",\"arguments\":{\"handle\":\"$HANDLE\"}}"
assert_code "A: counter_increment lost in flight is answered as an error" 502
assert_jq "A: the gateway's not-replayed error (-32010) carrying the request id and a message" \
	'.id == 41 and .error.code == -32010 and (.error.message | length) > 0'
assert_eq "A: counter_increment was not sent to another replica" 0 "$(elsewhere)"
assert_eq "A: the gateway counted the refused replay" "$((RF0 + 1))" \
	"$(gstat "$GWADDR" '.sessions.replays_refused')"
goes_on A

# --- B: an idempotent tool the session saw annotated is replayed -------------------------------------
r1_session "$GW" || die "no session on r1"
legacy "$GW" 2 tools/list '{}'
assert_jq "B: sleep is annotated read-only/idempotent" \
	'.result.tools[] | select(.name == "sleep") | .annotations.readOnlyHint == true or .annotations.idempotentHint == true'
IR0=$(gstat "$GWADDR" .sessions.inflight_replayed)
inflight B "$GW" 42 tools/call '{"name":"sleep","arguments":{"ms":100}}'
assert_code "B: sleep lost in flight is replayed and succeeds" 200
assert_jq "B: its own result" '.id == 42 and .result.content[0].text == "slept 100 ms"'
assert_eq "B: the call reached a survivor exactly once" 1 "$(elsewhere)"
assert_eq "B: after one replayed initialize" "$((I0 + 1))" "$(init_sum "$R2" "$R3")"
assert_eq "B: counted once as replayed in flight" "$((IR0 + 1))" "$(gstat "$GWADDR" .sessions.inflight_replayed)"
goes_on B

# --- C: no tools/list seen in this session: not known to be safe ---------------------------------------
r1_session "$GW" || die "no session on r1"
inflight C "$GW" 43 tools/call '{"name":"sleep","arguments":{"ms":100}}'
assert_code "C: sleep without the session's tools/list is not replayed" 502
assert_jq "C: the not-replayed error (-32010) carrying the request id" '.id == 43 and .error.code == -32010'
assert_eq "C: the call was not sent to another replica" 0 "$(elsewhere)"
goes_on C

# --- D: a request that is not a tools/call is replayed ---------------------------------------------------
r1_session "$GW" || die "no session on r1"
IR0=$(gstat "$GWADDR" .sessions.inflight_replayed)
inflight D "$GW" 44 tools/list '{}'
assert_code "D: tools/list lost in flight is replayed" 200
assert_jq "D: its own result" '.id == 44 and (.result.tools | map(.name) | index("echo") != null)'
assert_eq "D: tools/list reached a survivor exactly once" 1 "$(elsewhere)"
assert_eq "D: counted once as replayed in flight" "$((IR0 + 1))" "$(gstat "$GWADDR" .sessions.inflight_replayed)"
goes_on D
sf_stop_serve "$GWPID"

# --- E: replay: always replays even a non-idempotent call ------------------------------------------------
start_serve -c "$T_DIR/always.yaml"
GW_NOW=$G_URL
r1_session "$G_URL" || die "no session on r1 (replay: always)"
legacy "$G_URL" 2 tools/list '{}'
IR0=$(gstat "$G_ADDR" .sessions.inflight_replayed)
inflight E "$G_URL" 45 tools/call '{"name":"notify","arguments":{"text":"again"}}'
assert_code "E: replay: always - notify lost in flight is replayed" 200
assert_jq "E: its own result" '.id == 45 and has("result")'
assert_eq "E: notify reached a survivor exactly once" 1 "$(elsewhere)"
assert_eq "E: counted once as replayed in flight" "$((IR0 + 1))" "$(gstat "$G_ADDR" .sessions.inflight_replayed)"
goes_on E

# --- a full connection pool is not a lost replica ------------------------------------------
# One connection per replica (max_connections: 1, one worker): while a
# slow call holds it, the session's next calls wait for it and time out
# (connect timeout 500 ms).  That is the gateway's own limit: each gets
# 504 / -32003 saying so, the session is not re-pinned, and the replica
# is not ejected (three in a row would otherwise meet the default
# consecutive_connect_failures).
start_backend --era legacy --id p1
P1=$B_ADDR
start_backend --era legacy --id p2
P2=$B_ADDR
SF_WORKERS=1 SF_GROUP='    max_connections: 1
    max_idle: 1' SF_ROUTE='    timeouts:
      connect: 500ms' sf_config "$T_DIR/pool.yaml" stateful "$P1" "$P2"
start_serve -c "$T_DIR/pool.yaml"
sf_init "$G_URL" || die "no session (pool)"
lwho "$G_URL"
HOME_ID=$WHO
case $HOME_ID in p1) HOME_ADDR=$P1 ;; p2) HOME_ADDR=$P2 ;; *) die "pool: whoami said '$HOME_ID'" ;; esac
REP0=$(gstat "$G_ADDR" .sessions.repins_total)
bg_post slow "$G_URL" '{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":4000}}}' \
	-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
SLOW=$BG_PID
wait_inflight "http://$HOME_ADDR" 1 || fail "pool: the slow call never reached $HOME_ID"
for k in 1 2 3; do
	lwho "$G_URL"
	assert_code "pool full ($k): the waiting call times out" 504
	assert_jq "pool full ($k): -32003 naming the wait" \
		'.id == 7 and .error.code == -32003 and (.error.message | test("free connection"))'
done
wait_pid "$SLOW" 10
bg_result slow
assert_code "pool full: the slow call itself completed" 200
fg_result
lwho "$G_URL"
assert_eq "pool full: the session stayed on its replica" "$HOME_ID" "$WHO"
assert_eq "pool full: no re-pin" "$REP0" "$(gstat "$G_ADDR" .sessions.repins_total)"
assert_eq "pool full: no replica ejected" 0 "$(gstat "$G_ADDR" '[.upstreams[].servers[].ejections] | add')"
sf_stop_serve

finish
