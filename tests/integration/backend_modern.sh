#!/bin/bash
# backend_modern.sh - modern-era (2026-07-28) requests against
# "mcpgw backend --era modern": server/discover, tools with valid SEP-2243
# mirrored headers, every kind of header/body mismatch and missing header
# (400/-32020), the base64 sentinel, unsupported versions (400/-32022 with
# the supported list), unknown methods (404/-32601), GET/DELETE (405), a
# stray session header, resultType and serverInfo on results, and the
# long-lived subscriptions/listen SSE stream.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node base64
require_mcpgw
watchdog 60

start_backend --era modern --id mod-A --sse-keepalive 200ms
URL=$B_URL
SERVERINFO='"io.modelcontextprotocol/serverInfo"'

# assert_rejected WHAT STATUS CODE: the last answer is an HTTP error with a
# JSON-RPC error body carrying CODE.
assert_rejected() {
	assert_code "$1" "$2"
	assert_jq "$1: JSON-RPC error $3" ".error.code == $3"
}

# --- discovery and results ---------------------------------------------------------
modern "$URL" 1 server/discover '{}'
assert_code "server/discover" 200
assert_jq "discover lists $MODERN_VERSION" ".result.supportedVersions | index(\"$MODERN_VERSION\") != null"
assert_jq "discover has capabilities.tools" '(.result.capabilities.tools | type) == "object"'
assert_jq "discover carries serverInfo in _meta" "(.result._meta.$SERVERINFO.name | type) == \"string\""
assert_jq "discover resultType complete" '.result.resultType == "complete"'

modern "$URL" 2 tools/list '{}'
assert_code "tools/list" 200
assert_jq "tools/list has the six tools" \
	'[.result.tools[].name] as $n | ["echo","add","sleep","whoami","counter_create","counter_increment"] | all(. as $t | $n | index($t) != null)'
assert_jq "tools/list resultType" '.result.resultType == "complete"'
assert_jq "tools/list marks echo read-only" '.result.tools[] | select(.name == "echo") | .annotations.readOnlyHint == true'
TOOLS=$(rpc)

modern "$URL" 3 tools/call '{"name":"echo","arguments":{"text":"modern ☃"}}'
assert_code "tools/call echo" 200
assert_eq "echo text" "modern ☃" "$(tool_text)"
assert_jq "tools/call resultType complete" '.result.resultType == "complete"'
assert_jq "tools/call result _meta serverInfo" "(.result._meta.$SERVERINFO | type) == \"object\""
assert_jq "response id echoes the request id" '.id == 3 and .jsonrpc == "2.0"'

modern "$URL" 4 tools/call '{"name":"add","arguments":{"a":-5,"b":12}}'
assert_match "add(-5,12) = 7" '(^|[^0-9-])7([^0-9]|$)' "$(tool_text)"

modern "$URL" 5 tools/call '{"name":"whoami","arguments":{}}'
assert_match "whoami names mod-A" 'mod-A' "$(tool_text)"

modern "$URL" "\"str-id\"" tools/call '{"name":"echo","arguments":{"text":"x"}}'
assert_jq "string request ids are echoed" '.id == "str-id"'

# A stray legacy session header is ignored by a modern-only server.
modern "$URL" 6 tools/call '{"name":"echo","arguments":{"text":"stray"}}' \
	-H 'Mcp-Session-Id: 0123456789abcdef0123456789abcdef'
assert_code "stray Mcp-Session-Id ignored" 200
assert_eq "stray session: echo still answers" stray "$(tool_text)"

# --- SEP-2243 mismatches and missing headers -------------------------------------------
ECHO_BODY=$(modern_body 10 tools/call '{"name":"echo","arguments":{"text":"hi"}}')
# raw_post NAME_HEADER_OR_EMPTY [extra curl options]: echo body with the
# given header set (each of the three standard headers passed explicitly).
raw_post() { post "$URL" "$ECHO_BODY" "$@"; }

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
assert_code "explicit valid headers" 200

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/list' -H 'Mcp-Name: echo'
assert_rejected "Mcp-Method differs from method" 400 -32020

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: add'
assert_rejected "Mcp-Name differs from params.name" 400 -32020

raw_post -H 'MCP-Protocol-Version: 2025-11-25' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
assert_rejected "MCP-Protocol-Version differs from _meta" 400 -32020

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Name: echo'
assert_rejected "missing Mcp-Method" 400 -32020

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call'
assert_rejected "missing Mcp-Name on tools/call" 400 -32020

raw_post -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
assert_code "missing MCP-Protocol-Version" 400
assert_jq "missing MCP-Protocol-Version: a modern error" '.error.code == -32020 or .error.code == -32022'

# Base64 sentinel: "echo" encoded is accepted, a wrong or broken one is not.
B64_ECHO=$(printf 'echo' | base64)
raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H "Mcp-Name: =?base64?$B64_ECHO?="
assert_code "Mcp-Name as base64 sentinel" 200
assert_eq "sentinel request answered" hi "$(tool_text)"

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H "Mcp-Name: =?base64?$(printf 'add' | base64)?="
assert_rejected "sentinel naming another tool" 400 -32020

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: =?base64?!!not*base64?='
assert_rejected "malformed base64 sentinel" 400 -32020

raw_post -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H "Mcp-Name: =?base64?$(printf '\xff\xfe' | base64)?="
assert_rejected "sentinel that is not UTF-8" 400 -32020

# A declared Mcp-Param-* header (x-mcp-header) must match its argument.
PARAM_TOOL=$(printf '%s' "$TOOLS" | jq -r '[.result.tools[] | select(.inputSchema.properties // {} | any(has("x-mcp-header")))][0].name // empty')
if [ -n "$PARAM_TOOL" ]; then
	PROP=$(printf '%s' "$TOOLS" | jq -r --arg t "$PARAM_TOOL" '.result.tools[] | select(.name == $t) | .inputSchema.properties | to_entries[] | select(.value | has("x-mcp-header")) | .key' | head -n 1)
	HNAME=$(printf '%s' "$TOOLS" | jq -r --arg t "$PARAM_TOOL" --arg p "$PROP" '.result.tools[] | select(.name == $t) | .inputSchema.properties[$p]["x-mcp-header"]')
	PTYPE=$(printf '%s' "$TOOLS" | jq -r --arg t "$PARAM_TOOL" --arg p "$PROP" '.result.tools[] | select(.name == $t) | .inputSchema.properties[$p].type')
	case $PTYPE in
	integer | number) VAL=7 BAD=8 ARG=7 ;;
	boolean) VAL=true BAD=false ARG=true ;;
	*) VAL=abc BAD=abd ARG='"abc"' ;;
	esac
	ARGS=$(printf '%s' "$TOOLS" | jq -c --arg t "$PARAM_TOOL" --arg p "$PROP" --argjson v "$ARG" '
		.result.tools[] | select(.name == $t) | .inputSchema as $s |
		reduce ($s.required // [])[] as $r ({}; . + {($r): (if $s.properties[$r].type == "string" then "s" elif $s.properties[$r].type == "boolean" then true else 1 end)}) |
		. + {($p): $v}')
	modern "$URL" 11 tools/call "{\"name\":\"$PARAM_TOOL\",\"arguments\":$ARGS}" -H "Mcp-Param-$HNAME: $VAL"
	assert_code "Mcp-Param-$HNAME matching its argument" 200
	modern "$URL" 12 tools/call "{\"name\":\"$PARAM_TOOL\",\"arguments\":$ARGS}" -H "Mcp-Param-$HNAME: $BAD"
	assert_rejected "Mcp-Param-$HNAME differing from its argument" 400 -32020
	modern "$URL" 13 tools/call "{\"name\":\"$PARAM_TOOL\",\"arguments\":$ARGS}"
	assert_rejected "declared Mcp-Param-$HNAME missing" 400 -32020
else
	log "note: no tool declares x-mcp-header; Mcp-Param-* validation not exercised"
fi

# --- versions and methods --------------------------------------------------------------
BODY27=$(modern_body 20 tools/list '{}' 2099-01-01)
post "$URL" "$BODY27" -H 'MCP-Protocol-Version: 2099-01-01' -H 'Mcp-Method: tools/list'
assert_rejected "unsupported protocol version" 400 -32022
assert_jq "-32022 lists the supported versions" ".error.data.supported | index(\"$MODERN_VERSION\") != null"

modern "$URL" 21 no/such_method '{}'
assert_rejected "unknown method" 404 -32601

modern "$URL" 22 ping '{}'
assert_code "ping does not exist in the modern era" 404

post "$URL" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"itest","version":"1"}}}'
assert_code "legacy initialize on a modern-only server" 400
assert_nomatch "no session minted by a modern-only server" '.' "$(hdr mcp-session-id)"

post "$URL" '{"jsonrpc":"2.0","id":1,"method":"tools/list"'
assert_code "truncated JSON" 400
assert_jq "truncated JSON: parse error" '.error.code == -32700'

# A readable id is echoed in the error (JSON-RPC 2.0 section 5.1), even
# when the rest of the request is invalid.
post "$URL" '{"jsonrpc":"2.0","id":7,"method":42}'
assert_code "method not a string" 400
assert_jq "method not a string: -32600 naming id 7" '.error.code == -32600 and .id == 7'

# A modern notification is accepted with 202 and no body.
NOTE=$(jq -cn --arg v "$MODERN_VERSION" '{jsonrpc:"2.0",method:"notifications/cancelled",params:{requestId:99,
	_meta:{"io.modelcontextprotocol/protocolVersion":$v,"io.modelcontextprotocol/clientCapabilities":{}}}}')
post "$URL" "$NOTE" -H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: notifications/cancelled'
assert_code "modern notification" 202
assert_eq "202 has no body" "" "$BODY"

# Media types: a non-JSON body type and an Accept without JSON are refused.
req POST "$URL" -H 'Content-Type: text/plain' -H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/list' \
	--data-binary "$(modern_body 40 tools/list '{}')"
assert_code "POST with Content-Type text/plain" 415
req POST "$URL" -H 'Content-Type: application/json' -H 'Accept: text/html' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/list' \
	--data-binary "$(modern_body 41 tools/list '{}')"
assert_code "POST whose Accept excludes JSON" 406

req GET "$URL" -H 'Accept: text/event-stream'
assert_code "GET on a modern-only endpoint" 405
req DELETE "$URL"
assert_code "DELETE on a modern-only endpoint" 405

# --- subscriptions/listen: a stream that stays open ------------------------------------------
LISTEN=$(modern_body 30 subscriptions/listen '{"notifications":{"toolsListChanged":true}}')
stream_open listen 3 POST "$URL" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: subscriptions/listen' \
	--data-binary "$LISTEN"
LPID=$S_PID
# Meanwhile the server keeps answering others.
wait_match "$T_DIR/listen.body" '^:|^data:' 2
modern "$URL" 31 tools/call '{"name":"echo","arguments":{"text":"during listen"}}'
assert_eq "requests are served while a listen stream is open" "during listen" "$(tool_text)"
# A change notification reaches the subscriber that asked for it.
if printf '%s' "$TOOLS" | jq -e '.result.tools | any(.name == "list_changed")' >/dev/null; then
	modern "$URL" 32 tools/call '{"name":"list_changed","arguments":{}}'
	assert_code "list_changed" 200
	if wait_match "$T_DIR/listen.body" '^data:.*notifications/tools/list_changed' 2; then
		ok "listen stream received notifications/tools/list_changed"
	else
		fail "listen stream: no tools/list_changed after list_changed: $(head -c 400 "$T_DIR/listen.body")"
	fi
fi
wait_pid "$LPID" 6
RC=$?
assert_eq "listen stream still open when the client gave up (curl 28)" 28 "$RC"
assert_match "listen answers text/event-stream" '^text/event-stream' "$(stream_hdr listen content-type)"
assert_match "listen answers 200" '^HTTP/[0-9.]+ 200' "$(head -n 1 "$T_DIR/listen.hdr")"
KEEPALIVES=$(grep -c '^:' "$T_DIR/listen.body")
assert_match "listen stream carries several ':' keep-alives (got $KEEPALIVES)" '^([2-9]|[1-9][0-9]+)$' "$KEEPALIVES"
BODYF=$T_DIR/listen.body
FIRST=$(sse_messages | head -n 1)
BODYF=$T_DIR/last.body
assert_match "first listen message acknowledges the subscription" '"notifications/subscriptions/acknowledged"' "$FIRST"

finish
