#!/bin/bash
# backend_record.sh - the test aids of "mcpgw backend" that the gateway
# tests stand on: --record N (GET/DELETE /debug/requests: headers in
# arrival order, body digest, ring of N) and the ticks tool (an SSE answer
# whose events are spaced and stamped with their send time, cancellable).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node sha256sum
require_mcpgw
watchdog 60

# --- off by default ---------------------------------------------------------
start_backend --era modern
req GET "http://$B_ADDR/debug/requests"
assert_code "without --record /debug/requests does not exist" 404

# --- usage errors -------------------------------------------------------------
"$MCPGW" backend --listen 127.0.0.1:0 --record 0 >/dev/null 2>"$T_DIR/usage.err"
assert_eq "--record 0 is a usage error" 2 "$?"
"$MCPGW" backend --listen 127.0.0.1:0 --record 10001 >/dev/null 2>>"$T_DIR/usage.err"
assert_eq "--record 10001 is a usage error" 2 "$?"
"$MCPGW" backend --help | grep -q -- '--record N'
assert_eq "--help documents --record" 0 "$?"

# --- what is recorded ---------------------------------------------------------
start_backend --era modern --record 3
DBG=http://$B_ADDR/debug/requests
BODY_SENT=$(modern_body 5 tools/call '{"name":"echo","arguments":{"text":"x"},"_meta":{"z":1,"a":"é"}}')
printf '%s' "$BODY_SENT" >"$T_DIR/sent.json"
post "$B_URL" "$BODY_SENT" -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' \
	-H 'Mcp-Name: echo' -H 'X-Second: b' -H 'X-First: a' -H 'X-Second: c'
assert_code "recorded request is served normally" 200
req GET "$DBG"
assert_code "GET /debug/requests" 200
REC=$BODY
assert_eq "one request recorded" 1 "$(printf '%s' "$REC" | jq '.requests | length')"
assert_eq "capacity" 3 "$(printf '%s' "$REC" | jq '.capacity')"
E=$(printf '%s' "$REC" | jq -c '.requests[0]')
assert_eq "method" POST "$(printf '%s' "$E" | jq -r .method)"
assert_eq "target" /mcp "$(printf '%s' "$E" | jq -r .target)"
assert_eq "http version" 1.1 "$(printf '%s' "$E" | jq -r .http_version)"
assert_eq "body length" "$(wc -c <"$T_DIR/sent.json" | tr -d ' ')" "$(printf '%s' "$E" | jq -r .body_length)"
assert_eq "body sha256 is that of the bytes sent" "$(sha256sum <"$T_DIR/sent.json" | cut -d' ' -f1)" \
	"$(printf '%s' "$E" | jq -r .body_sha256)"
assert_eq "headers in arrival order, duplicates kept" "X-Second=b X-First=a X-Second=c" \
	"$(printf '%s' "$E" | jq -r '[.headers[] | select(.[0] | test("^X-")) | "\(.[0])=\(.[1])"] | join(" ")')"
assert_eq "header names keep their case" "Mcp-Name" \
	"$(printf '%s' "$E" | jq -r '[.headers[][0] | select(ascii_downcase == "mcp-name")][0]')"

# Reading the record does not add to it; other paths are recorded.
req GET "http://$B_ADDR/whoami"
req GET "$DBG"
assert_eq "/debug/requests itself is not recorded" "/mcp /whoami" \
	"$(printf '%s' "$BODY" | jq -r '[.requests[].target] | join(" ")')"

# HTTP/2 requests say so (names arrive lowercase).
post "$B_URL" "$BODY_SENT" --http2-prior-knowledge -H "MCP-Protocol-Version: $MODERN_VERSION" \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
req GET "$DBG"
assert_eq "an h2 request is recorded as http_version 2" 2 "$(printf '%s' "$BODY" | jq -r '.requests[-1].http_version')"
assert_eq "same body, same digest over h2" "$(printf '%s' "$E" | jq -r .body_sha256)" \
	"$(printf '%s' "$BODY" | jq -r '.requests[-1].body_sha256')"

# The ring keeps the last 3; seq shows what was evicted.
for i in 1 2 3; do req GET "http://$B_ADDR/healthz?n=$i"; done
req GET "$DBG"
assert_eq "ring keeps the last N" "/healthz?n=1 /healthz?n=2 /healthz?n=3" \
	"$(printf '%s' "$BODY" | jq -r '[.requests[].target] | join(" ")')"
assert_eq "seq numbers count every request" "4 5 6 6" \
	"$(printf '%s' "$BODY" | jq -r '[.requests[].seq, .total] | map(tostring) | join(" ")')"

req DELETE "$DBG"
assert_code "DELETE /debug/requests" 204
req GET "$DBG"
assert_eq "DELETE empties the record" 0 "$(printf '%s' "$BODY" | jq '.requests | length')"
req POST "$DBG"
assert_code "POST /debug/requests is not allowed" 405

# --- ticks ----------------------------------------------------------------------
TICKS='{"name":"ticks","arguments":{"count":3,"interval_ms":200},"_meta":{"progressToken":"tk"}}'
modern "$B_URL" 9 tools/call "$TICKS"
assert_code "ticks" 200
assert_match "ticks answers an event stream" '^text/event-stream' "$(hdr content-type)"
assert_eq "ticks: three progress notifications 1..3 of 3, then the result" "1/3 2/3 3/3 result" \
	"$(sse_messages | jq -r 'if .method == "notifications/progress" then "\(.params.progress)/\(.params.total)" elif has("result") then "result" else "other" end' | tr '\n' ' ' | sed 's/ $//')"
assert_eq "ticks: a comment after each event" 3 "$(tr -d '\r' <"$BODYF" | grep -c '^: tick [0-9]/3 sent_ms=[0-9]*$')"
# Send stamps never go backwards, and the comment repeats the event's stamp.
STAMPS=$(sse_messages | jq -r 'select(.method) | .params.message | capture("sent_ms=(?<t>[0-9]+)").t')
CSTAMPS=$(tr -d '\r' <"$BODYF" | sed -n 's/^: tick [0-9]*\/[0-9]* sent_ms=\([0-9]*\)$/\1/p')
assert_eq "ticks: comments carry the events' stamps" "$(echo $STAMPS)" "$(echo $CSTAMPS)"
assert_eq "ticks: stamps are ordered" "$(echo $STAMPS)" "$(printf '%s\n' $STAMPS | sort -n | tr '\n' ' ' | sed 's/ $//')"
assert_eq "ticks result" "ticked 3 times" "$(tool_text)"

modern "$B_URL" 10 tools/call '{"name":"ticks","arguments":{"count":2,"interval_ms":0},"_meta":{"io.modelcontextprotocol/logLevel":"info"}}'
assert_eq "ticks with logLevel: log messages" "1 2" \
	"$(sse_messages | jq -r 'select(.method == "notifications/message") | .params.data.tick' | tr '\n' ' ' | sed 's/ $//')"
modern "$B_URL" 11 tools/call '{"name":"ticks","arguments":{"count":2,"interval_ms":0}}'
assert_eq "ticks without token or logLevel: no notifications, only the result" 1 "$(sse_messages | grep -c .)"
assert_eq "ticks without token or logLevel: still one comment per tick" 2 "$(tr -d '\r' <"$BODYF" | grep -c '^: tick ')"
modern "$B_URL" 12 tools/call '{"name":"ticks","arguments":{"count":1001,"interval_ms":1}}'
assert_jq "ticks: too many is a tool error" '.result.isError == true'
modern "$B_URL" 13 tools/call '{"name":"ticks","arguments":{"count":100,"interval_ms":1000}}'
assert_jq "ticks: longer than 60 s in all is a tool error" '.result.isError == true'

# Cancellation: the client reads the first tick and leaves.
req GET "http://$B_ADDR/stats"
C0=$(printf '%s' "$BODY" | jq -r .cancelled)
stream_open tk 10 POST "$B_URL" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: ticks' \
	--data-binary "$(modern_body 14 tools/call '{"name":"ticks","arguments":{"count":50,"interval_ms":200},"_meta":{"progressToken":1}}')"
TK=$S_PID
wait_match "$T_DIR/tk.body" '^: tick 1/50' 5 || fail "ticks: first tick not seen within 5 s"
kill -TERM "$TK" 2>/dev/null
wait_pid "$TK" 5
i=0
C1=$C0
while [ $i -lt 50 ] && [ "$C1" = "$C0" ]; do
	sleep 0.1
	req GET "http://$B_ADDR/stats"
	C1=$(printf '%s' "$BODY" | jq -r .cancelled)
	i=$((i + 1))
done
assert_eq "ticks: a client that leaves cancels the call" "$((C0 + 1))" "$C1"
assert_nomatch "ticks: the stream ended before the last tick" ': tick 50/50' "$(cat "$T_DIR/tk.body")"

finish
