#!/bin/bash
# load_reconnect.sh - "mcpgw load --connection reuse" after a broken
# connection (issue 17).  Two targets; one is SIGSTOPped mid-run, so the
# keep-alive connections to it fall silent (no error, no close): a
# virtual user whose call gets no answer within --timeout drops that
# connection and opens a new one to a target drawn again, and counts a
# reconnect when it is answered there.  A target killed and restarted on
# the same port: the calls refused meanwhile are connect errors, the
# users reconnect when it is back.  The text report names what the
# failures said (not only the JSON's first_failures).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 90

# start_load without --quiet: the text report goes to $LOAD_OUT
start_text_load() {
	local name=$1
	shift
	LOAD_JSON=$T_DIR/$name.json
	LOAD_OUT=$T_DIR/load-$name.out
	LOAD_ERR=$T_DIR/load-$name.err
	"$MCPGW" load --json "$LOAD_JSON" "$@" >"$LOAD_OUT" 2>"$LOAD_ERR" &
	L_PID=$!
	track_pid "$L_PID"
}

start_backend --era modern --id m1
A1=$B_ADDR
P1=$B_PID
start_backend --era modern --id m2
A2=$B_ADDR

# --- a silent target: timeouts lead to a reconnect ----------------------------------------
start_text_load silent --target "http://$A1/mcp" --target "http://$A2/mcp" --dialect modern \
	--connection reuse --reconnect-after 50 --tool echo --arg text=x --concurrency 4 \
	--duration 5s --timeout 500ms --seed 3
# m1 in use before the stop (--reconnect-after: every user draws a
# target again every 50 calls, so each comes to the stopped one)
m1_calls() { [ "$(bstat "$A1" '.requests_by_method["tools/call"] // 0')" -gt 0 ] 2>/dev/null; }
poll_until 5 m1_calls || fail "silent: m1 got no call"
sleep 0.5
kill -STOP "$P1"
wait_load
kill -CONT "$P1"
assert_load_exit "silent target" 0
assert_cmp "silent: calls timed out on the stopped target" "$(lj .total.failures.timeout)" '>=' 1
assert_cmp "silent: users reconnected after the timeouts" "$(lj .total.reconnects)" '>=' 1
assert_cmp "silent: calls went on" "$(lj .total.ok)" '>' 0
assert_match "silent: the text report says why" 'timeout: no answer within 0.5s' "$(cat "$LOAD_OUT")"

# --- a target killed and restarted on its port: connect errors, then back -------------------
kill_wait "$P1" TERM 5 || fail "m1 did not stop"
start_backend --era modern --id m1b
A1=$B_ADDR
P1=$B_PID
start_text_load restart --target "http://$A1/mcp" --dialect modern --connection reuse \
	--tool echo --arg text=x --concurrency 2 --rate 20 --duration 5s --seed 4
sleep 1.5
kill_wait "$P1" KILL 5 || fail "m1b did not die"
sleep 0.5
start_backend --listen "$A1" --era modern --id m1c
wait_load
assert_load_exit "restarted target" 0
assert_cmp "restart: refused calls counted" "$(lj .total.failures.connect_error)" '>=' 1
assert_cmp "restart: users reconnected once it was back" "$(lj .total.reconnects)" '>=' 1
assert_cmp "restart: calls answered by the restarted target" \
	"$(bstat "$A1" '.requests_by_method["tools/call"] // 0')" '>' 0
assert_match "restart: the text report says why" 'connect_error: .*refused' "$(cat "$LOAD_OUT")"
finish
