#!/bin/bash
# backend_legacy.sh - a full legacy (2025-11-25) session against
# "mcpgw backend --era legacy" over HTTP/1.1: initialize and version
# negotiation, session id minting, tools, session-bound counters, lost
# session statuses (404 and --lost-session-status 400), the standalone GET
# SSE stream with keep-alives and a pushed notification, DELETE, and the
# stats endpoint.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 60

start_backend --era legacy --id leg-A --sse-keepalive 200ms
URL=$B_URL
BASE=http://$B_ADDR

req GET "$BASE/healthz"
assert_code "GET /healthz" 200

# --- initialize: version negotiation and the session id ---------------------
legacy_init "$URL" || die "cannot open a legacy session"
assert_eq "negotiated version" "$LEGACY_VERSION" "$NEGOTIATED"
assert_match "Mcp-Session-Id has >= 128 bits of hex" '^[0-9A-Fa-f]{32,}$' "$SID"
SID1=$SID

post "$URL" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"itest","version":"1"}}}'
assert_code "initialize 2025-03-26" 200
assert_jq "older supported version is kept" '.result.protocolVersion == "2025-03-26"'
assert_jq "initialize result has serverInfo and tools capability" \
	'(.result.serverInfo.name | type) == "string" and (.result.capabilities.tools | type) == "object"'
assert_ne "each initialize mints a new session" "$SID1" "$(hdr mcp-session-id)"

post "$URL" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"itest","version":"1"}}}'
assert_code "initialize with an unknown version" 200
assert_jq "unknown version: server answers a version it supports" \
	'.result.protocolVersion | IN("2025-11-25", "2025-06-18", "2025-03-26")'

# --- requests inside the session ---------------------------------------------
SID=$SID1
legacy "$URL" 2 ping '{}'
assert_code "ping" 200
assert_jq "ping result is an empty object" '.id == 2 and .result == {}'

legacy "$URL" 3 tools/list '{}'
assert_code "tools/list" 200
TOOLS=$(rpc)
for t in echo add sleep whoami counter_create counter_increment; do
	if printf '%s' "$TOOLS" | jq -e --arg t "$t" '.result.tools | any(.name == $t and (.inputSchema.type == "object"))' >/dev/null; then
		ok "tools/list offers $t with an input schema"
	else
		fail "tools/list lacks $t (with inputSchema): $TOOLS"
	fi
done
assert_jq "read-only tools are annotated" \
	'[.result.tools[] | select(.name == "echo" or .name == "add" or .name == "whoami")] | all(.annotations.readOnlyHint == true)'
assert_jq "counter_increment is not marked read-only" \
	'.result.tools[] | select(.name == "counter_increment") | (.annotations.readOnlyHint // false) == false'
assert_jq "some tool is marked idempotent" '.result.tools | any(.annotations.idempotentHint == true)'

legacy "$URL" 4 tools/call '{"name":"echo","arguments":{"text":"hello, wörld"}}'
assert_code "tools/call echo" 200
assert_eq "echo returns its text" "hello, wörld" "$(tool_text)"
assert_jq "echo is not an error" '(.result.isError // false) == false'

legacy "$URL" 5 tools/call '{"name":"add","arguments":{"a":2,"b":40}}'
assert_match "add(2,40) = 42" '(^|[^0-9])42([^0-9]|$)' "$(tool_text)"

legacy "$URL" 6 tools/call '{"name":"whoami","arguments":{}}'
assert_match "whoami names the replica" 'leg-A' "$(tool_text)"

legacy "$URL" 7 tools/call '{"name":"no_such_tool","arguments":{}}'
assert_jq "unknown tool is an error" 'has("error") or .result.isError == true'

legacy "$URL" 8 tools/call '{"name":"counter_create","arguments":{}}'
HANDLE=$(jq_get 'select((.result.isError // false) == false) | .result.structuredContent.handle // .result.content[0].text // empty')
[ -n "$HANDLE" ] && ok "counter_create returned a handle" || fail "counter_create: no handle in $(rpc)"
legacy "$URL" 9 tools/call "$(jq -cn --arg h "$HANDLE" '{name:"counter_increment",arguments:{handle:$h}}')"
V1=$(jq_get '.result.structuredContent.value // .result.content[0].text // empty')
legacy "$URL" 10 tools/call "$(jq -cn --arg h "$HANDLE" '{name:"counter_increment",arguments:{handle:$h}}')"
V2=$(jq_get '.result.structuredContent.value // .result.content[0].text // empty')
assert_eq "first increment" 1 "$V1"
assert_eq "second increment" 2 "$V2"

# A counter lives in its session: another session does not know it.
legacy_init "$URL" || die "cannot open a second session"
SID2=$SID
legacy "$URL" 11 tools/call "$(jq -cn --arg h "$HANDLE" '{name:"counter_increment",arguments:{handle:$h}}')"
assert_jq "a counter of another session is a tool error" '.result.isError == true or has("error")'
SID=$SID1

# --- lost sessions -------------------------------------------------------------
post "$URL" '{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{}}' -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "request without Mcp-Session-Id" 400

SID=0123456789abcdef0123456789abcdef
legacy "$URL" 21 tools/list '{}'
assert_code "unknown session id (default status)" 404
SID=$SID1

post "$URL" '{"jsonrpc":"2.0","id":22,"method":"tools/list","params":{}}' \
	-H "Mcp-Session-Id: $SID1" -H 'MCP-Protocol-Version: 1999-01-01'
assert_code "unsupported MCP-Protocol-Version header in a session" 400

# DNS-rebinding protection: a present, foreign Origin is refused.
legacy "$URL" 23 ping '{}' -H 'Origin: http://evil.example'
assert_code "foreign Origin" 403

# --- standalone GET stream ------------------------------------------------------
NOTIFY=$(printf '%s' "$TOOLS" | jq -r '[.result.tools[].name | select(test("notif"))][0] // empty')
stream_open get 4 GET "$URL" -H 'Accept: text/event-stream' \
	-H "Mcp-Session-Id: $SID1" -H "MCP-Protocol-Version: $NEGOTIATED"
GET_PID=$S_PID
if wait_match "$T_DIR/get.body" '^:' 3; then
	ok "GET stream carries ':' keep-alive comments"
else
	fail "GET stream: no ':' keep-alive within 3 s; got: $(head -c 300 "$T_DIR/get.body")"
fi
assert_match "GET stream content type" '^text/event-stream' "$(stream_hdr get content-type)"
if [ -n "$NOTIFY" ]; then
	legacy "$URL" 30 tools/call "{\"name\":\"$NOTIFY\",\"arguments\":{\"text\":\"pushed-42\"}}"
	assert_code "tools/call $NOTIFY" 200
	assert_jq "$NOTIFY succeeded" '(.result.isError // false) == false'
	if wait_match "$T_DIR/get.body" '^data:.*pushed-42' 3; then
		ok "a notification was pushed on the GET stream"
	else
		fail "no notification on the GET stream after $NOTIFY: $(head -c 300 "$T_DIR/get.body")"
	fi
else
	fail "tools/list offers no notify tool, so a server push on the GET stream cannot be tested"
fi
wait_pid "$GET_PID" 6
[ $? -eq 28 ] && ok "GET stream stayed open until the client gave up" ||
	fail "GET stream ended early: $(cat "$T_DIR/get.curlerr")"

req GET "$URL" -H 'Accept: text/event-stream'
assert_code "GET without a session" 400

# --- stats -------------------------------------------------------------------------
req GET "$BASE/stats"
assert_code "GET /stats" 200
SESSIONS=$(printf '%s' "$BODY" | jq -r '.sessions // empty' 2>/dev/null)
assert_match "stats count the sessions held (>= 4 opened)" '^([4-9]|[1-9][0-9]+)$' "$SESSIONS"

# --- DELETE --------------------------------------------------------------------------
req DELETE "$URL" -H "Mcp-Session-Id: $SID2" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE ends the session" '2[0-9][0-9]'
SID=$SID2
legacy "$URL" 40 ping '{}'
assert_code "deleted session is unknown" 404
SID=$SID1
legacy "$URL" 41 ping '{}'
assert_code "other session unaffected by the DELETE" 200
req GET "$BASE/stats"
assert_eq "stats: one session fewer after DELETE" "$((SESSIONS - 1))" "$(printf '%s' "$BODY" | jq -r '.sessions // empty' 2>/dev/null)"

# --- --lost-session-status 400 --------------------------------------------------------
start_backend --era legacy --lost-session-status 400
SID=fedcba9876543210fedcba9876543210
NEGOTIATED=$LEGACY_VERSION
legacy "$B_URL" 50 tools/list '{}'
assert_code "unknown session with --lost-session-status 400" 400
post "$B_URL" '{"jsonrpc":"2.0","id":51,"method":"tools/list","params":{}}'
assert_code "missing session with --lost-session-status 400" 400

# --- --max-sessions ---------------------------------------------------------------------------
start_backend --era legacy --max-sessions 2
legacy_init "$B_URL" && legacy_init "$B_URL" || die "cannot open two sessions under --max-sessions 2"
KEEP=$SID
post "$B_URL" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"itest","version":"1"}}}'
assert_code "initialize beyond --max-sessions" 503
req DELETE "$B_URL" -H "Mcp-Session-Id: $KEEP" -H "MCP-Protocol-Version: $LEGACY_VERSION"
legacy_init "$B_URL" && ok "a DELETE frees a session slot"
# legacy counters of all sessions: at most --max-sessions in all, and a
# session that ends gives its counters back
for i in 1 2; do
	legacy "$B_URL" $((70 + i)) tools/call '{"name":"counter_create","arguments":{}}'
	assert_jq "counter $i of 2 created" '.result.isError != true and (.result.structuredContent.handle | startswith("s_"))'
done
legacy "$B_URL" 73 tools/call '{"name":"counter_create","arguments":{}}'
assert_jq "a third counter is refused (tool error)" '.result.isError == true and (.result.content[0].text | test("too many counters"))'
req DELETE "$B_URL" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $LEGACY_VERSION"
legacy_init "$B_URL" || die "cannot open a session after the DELETE"
legacy "$B_URL" 74 tools/call '{"name":"counter_create","arguments":{}}'
assert_jq "the ended session's counters were given back" '.result.isError != true'

# --- idle expiry ----------------------------------------------------------------------------
start_backend --era legacy --session-idle-timeout 1s
legacy_init "$B_URL" || die "cannot open a session on the expiring backend"
legacy "$B_URL" 60 ping '{}'
assert_code "fresh session answers" 200
# Not a timing assertion: wait well past the 1 s idle timeout, then look.
sleep 3
legacy "$B_URL" 61 ping '{}'
assert_code "session expired after its idle timeout" 404

finish
