#!/bin/bash
# backend_sse.sh - response framing and concurrency of "mcpgw backend":
# --sse always answers every request as an event stream (a progress
# notification, then the response), in both eras; --sse never answers
# JSON even to clients that accept SSE; slow requests (--delay-ms, the
# sleep tool) do not hold up other requests.  Checks completion order,
# never wall-clock time.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 60

# --- --sse always ----------------------------------------------------------------
start_backend --era dual --sse always --id sse-A
URL=$B_URL

modern "$URL" 1 tools/call '{"name":"echo","arguments":{"text":"streamed"},"_meta":{"progressToken":"tok-1"}}'
assert_code "sse always: modern tools/call" 200
assert_match "sse always: modern answer is an event stream" '^text/event-stream' "$(hdr content-type)"
MSGS=$(sse_messages)
N_NOTE=$(printf '%s\n' "$MSGS" | jq -s 'map(has("method") and (has("id") | not)) | index(true) // -1')
N_RESP=$(printf '%s\n' "$MSGS" | jq -s 'map(has("id") and has("result")) | index(true) // -1')
if [ "$N_NOTE" -ge 0 ] && [ "$N_RESP" -gt "$N_NOTE" ]; then
	ok "sse always: a notification comes before the response"
else
	fail "sse always: expected a notification before the response; events: $MSGS"
fi
assert_match "sse always: the notification is progress for our token" \
	'"notifications/progress".*"tok-1"|"tok-1".*"notifications/progress"' "$(printf '%s\n' "$MSGS" | head -n 1)"
assert_eq "sse always: response echoes" streamed "$(tool_text)"
assert_eq "sse always: the response is the last event" "$N_RESP" "$(($(printf '%s\n' "$MSGS" | grep -c .) - 1))"
assert_eq "sse always: events are 'event: message' or unnamed" "" \
	"$(tr -d '\r' <"$BODYF" | grep '^event:' | grep -v '^event: message$' | head -n 1)"

# Legacy requests on the same server are streamed too.
legacy_init "$URL" || die "sse always: cannot open a legacy session"
legacy "$URL" 2 tools/call '{"name":"add","arguments":{"a":20,"b":22},"_meta":{"progressToken":7}}'
assert_match "sse always: legacy answer is an event stream" '^text/event-stream' "$(hdr content-type)"
assert_match "sse always: legacy add" '(^|[^0-9])42([^0-9]|$)' "$(tool_text)"
assert_match "sse always: legacy stream has a progress notification" '"notifications/progress"' "$(sse_messages | head -n 1)"

# A notification is still answered 202, not with a stream.
post "$URL" '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "sse always: a notification is answered 202" 202

# --- --sse never ------------------------------------------------------------------------
start_backend --era dual --sse never
modern "$B_URL" 3 tools/call '{"name":"echo","arguments":{"text":"plain"},"_meta":{"progressToken":"tok-2"}}'
assert_code "sse never: tools/call" 200
assert_match "sse never: answer is JSON" '^application/json' "$(hdr content-type)"
assert_eq "sse never: echo" plain "$(tool_text)"
assert_jq "sse never: body is exactly the response" '.id == 3 and has("result")'

# --- slow requests do not block others -------------------------------------------------------
start_backend --era modern --id slow-A
SLOW=$B_URL
HDRS=(-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call')
: >"$T_DIR/order"
bg_post sleeper "$SLOW" "$(modern_body 10 tools/call '{"name":"sleep","arguments":{"ms":2000}}')" \
	"${HDRS[@]}" -H 'Mcp-Name: sleep'
SLEEP_PID=$BG_PID
wait_inflight "${SLOW%/mcp}" 1 || fail "the sleep request did not reach the server"
modern "$SLOW" 11 tools/call '{"name":"echo","arguments":{"text":"fast"}}'
assert_eq "fast request answered while sleep(2000) is in flight" fast "$(tool_text)"
if [ -s "$T_DIR/order" ]; then
	fail "sleep(2000) ended before the fast request: order $(tr '\n' ' ' <"$T_DIR/order")"
else
	ok "the fast request finished first"
fi
modern "$SLOW" 12 server/discover '{}'
assert_code "discover answered while sleep is in flight" 200
wait_pid "$SLEEP_PID" 8
bg_result sleeper
assert_code "sleep(2000) completes" 200
assert_jq "sleep result is not an error" 'has("result") and (.result.isError // false) == false'
fg_result

# Cancellation: a client that goes away mid-call is noticed (stats
# "cancelled"), over HTTP/1.1 and HTTP/2, and the server carries on.
for proto in --http1.1 --http2-prior-knowledge; do
	req GET "${SLOW%/mcp}/stats"
	C0=$(printf '%s' "$BODY" | jq -r '.cancelled')
	modern "$SLOW" 13 tools/call '{"name":"sleep","arguments":{"ms":30000}}' "$proto" --max-time 1
	assert_eq "cancel $proto: the client gave up (no answer)" 000 "$CODE"
	i=0
	C1=$C0
	while [ $i -lt 30 ] && [ "$C1" = "$C0" ]; do
		sleep 0.1
		req GET "${SLOW%/mcp}/stats"
		C1=$(printf '%s' "$BODY" | jq -r '.cancelled')
		i=$((i + 1))
	done
	assert_eq "cancel $proto: the server saw the call cancelled" "$((C0 + 1))" "$C1"
	# inflight counts the /stats request itself
	assert_eq "cancel $proto: nothing else in flight" 1 "$(printf '%s' "$BODY" | jq -r '.inflight')"
done
modern "$SLOW" 14 tools/call '{"name":"echo","arguments":{"text":"after cancel"}}'
assert_eq "server serves after cancellations" "after cancel" "$(tool_text)"

# --delay-ms: concurrent requests on separate connections all finish.
start_backend --era modern --delay-ms 500
DELAYED=$B_URL
: >"$T_DIR/order"
PIDS=""
for n in 1 2 3 4; do
	bg_post "d$n" "$DELAYED" "$(modern_body "$n" tools/call "{\"name\":\"echo\",\"arguments\":{\"text\":\"d$n\"}}")" \
		"${HDRS[@]}" -H 'Mcp-Name: echo'
	PIDS="$PIDS $BG_PID"
done
for p in $PIDS; do
	wait_pid "$p" 8
done
for n in 1 2 3 4; do
	bg_result "d$n"
	assert_code "delay-ms: concurrent request $n" 200
	assert_eq "delay-ms: request $n got its own answer" "d$n" "$(tool_text)"
done
fg_result

# With --delay-ms, a sleep(1500) still finishes after a concurrent echo.
: >"$T_DIR/order"
bg_post slow2 "$DELAYED" "$(modern_body 20 tools/call '{"name":"sleep","arguments":{"ms":1500}}')" \
	"${HDRS[@]}" -H 'Mcp-Name: sleep'
P1=$BG_PID
wait_inflight "${DELAYED%/mcp}" 1 || fail "the sleep request did not reach the delayed server"
bg_post fast2 "$DELAYED" "$(modern_body 21 tools/call '{"name":"echo","arguments":{"text":"f"}}')" \
	"${HDRS[@]}" -H 'Mcp-Name: echo'
P2=$BG_PID
wait_pid "$P1" 8
wait_pid "$P2" 8
assert_eq "delay-ms: completion order" "fast2 slow2" "$(tr '\n' ' ' <"$T_DIR/order" | sed 's/ $//')"

finish
