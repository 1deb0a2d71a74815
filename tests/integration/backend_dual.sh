#!/bin/bash
# backend_dual.sh - "mcpgw backend --era dual" serves a legacy session and
# modern stateless calls on one endpoint, deciding by how each request
# opens, and keeps the two apart (a legacy request still needs its
# session; a modern one never does).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 60

start_backend --era dual --id dual-A --sse-keepalive 200ms
URL=$B_URL

# Legacy session.
legacy_init "$URL" || die "dual: cannot open a legacy session"
assert_eq "dual: legacy version negotiated" "$LEGACY_VERSION" "$NEGOTIATED"
assert_match "dual: session id minted" '^[0-9A-Fa-f]{32,}$' "$SID"
legacy "$URL" 2 tools/call '{"name":"echo","arguments":{"text":"legacy side"}}'
assert_code "dual: legacy tools/call" 200
assert_eq "dual: legacy echo" "legacy side" "$(tool_text)"
assert_jq "dual: legacy result carries content" '.result.content | type == "array"'
legacy "$URL" 3 tools/call '{"name":"counter_create","arguments":{}}'
LHANDLE=$(jq_get 'select((.result.isError // false) == false) | .result.structuredContent.handle // .result.content[0].text // empty')
legacy "$URL" 4 tools/call "$(jq -cn --arg h "$LHANDLE" '{name:"counter_increment",arguments:{handle:$h}}')"
assert_eq "dual: session counter" 1 "$(jq_get '.result.structuredContent.value // .result.content[0].text // empty')"

# Modern calls on the same port, interleaved with the session.
modern "$URL" 10 server/discover '{}'
assert_code "dual: server/discover" 200
assert_jq "dual: discover lists $MODERN_VERSION" ".result.supportedVersions | index(\"$MODERN_VERSION\") != null"
modern "$URL" 11 tools/call '{"name":"echo","arguments":{"text":"modern side"}}'
assert_code "dual: modern tools/call" 200
assert_eq "dual: modern echo" "modern side" "$(tool_text)"
assert_jq "dual: modern result has resultType" '.result.resultType == "complete"'
assert_nomatch "dual: no session minted for a modern call" '.' "$(hdr mcp-session-id)"

modern "$URL" 12 tools/call '{"name":"echo","arguments":{"text":"x"}}' -H 'Mcp-Method: tools/list'
assert_code "dual: modern header mismatch still rejected" 400
assert_jq "dual: mismatch is -32020" '.error.code == -32020'

# The session is still there after the modern traffic.
legacy "$URL" 5 tools/call '{"name":"whoami","arguments":{}}'
assert_code "dual: session survives modern traffic" 200
assert_match "dual: whoami" 'dual-A' "$(tool_text)"

# Legacy rules still hold for legacy requests.
post "$URL" '{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{}}' -H "MCP-Protocol-Version: $LEGACY_VERSION"
assert_code "dual: legacy request without a session" 400
SAVED=$SID
SID=00112233445566778899aabbccddeeff
legacy "$URL" 7 ping '{}'
assert_code "dual: unknown session" 404
SID=$SAVED

# GET with the session opens the legacy stream.
stream_open get 2 GET "$URL" -H 'Accept: text/event-stream' \
	-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
wait_pid "$S_PID" 5
assert_match "dual: GET stream is event-stream" '^text/event-stream' "$(stream_hdr get content-type)"
assert_match "dual: GET stream keep-alive" '^:' "$(head -n 1 "$T_DIR/get.body")"

# DELETE ends the session; modern calls carry on.
req DELETE "$URL" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "dual: DELETE" '2[0-9][0-9]'
legacy "$URL" 8 ping '{}'
assert_code "dual: deleted session" 404
modern "$URL" 13 tools/call '{"name":"add","arguments":{"a":1,"b":1}}'
assert_match "dual: modern after DELETE" '(^|[^0-9])2([^0-9]|$)' "$(tool_text)"

finish
