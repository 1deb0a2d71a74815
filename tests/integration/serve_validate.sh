#!/bin/bash
# serve_validate.sh - "mcpgw serve" checks the SEP-2243 mirrored headers of
# modern requests before contacting any upstream: a mismatch, a missing
# header or a bad base64 sentinel is answered 400 with JSON-RPC error
# -32020 carrying the request's id, and the replicas never see the request
# (their /debug/requests stay empty).  Well-formed sentinels pass.  With
# validate_headers: false the request goes through and the replica judges
# it.  The gateway's own failures (no upstream, timeout, body too large)
# are JSON-RPC errors with the request id and a code in -32000..-32019.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node base64
require_mcpgw
watchdog 90

start_backend --era modern --id r1 --record 100
R1=$B_ADDR
start_backend --era modern --id r2 --record 100
R2=$B_ADDR

# tcp probes: nothing but client traffic reaches the replicas
serve_conf() { # FILE [ROUTE_YAML [TOP_YAML [SERVER_URL]]]
	cat >"$1" <<EOF
listeners:
  - address: 127.0.0.1:0
${3:-}
upstreams:
  - name: pool
    servers:
      - url: ${4:-http://$R1}
$([ -z "${4:-}" ] && echo "      - url: http://$R2")
    health:
      type: tcp
      interval: 1s
${2:-}
EOF
}
serve_conf "$T_DIR/serve.yaml"
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL

b64() { printf '%s' "$1" | base64 -w 0; }

# bad WHAT ID BODY_PARAMS_METHOD HEADERS...: expects 400 / -32020 naming ID.
# The body is a well-formed modern request for METHOD with PARAMS.
bad() {
	local what=$1 id=$2 method=$3 params=$4
	shift 4
	post "$GW" "$(modern_body "$id" "$method" "$params")" "$@"
	assert_code "$what: rejected" 400
	assert_jq "$what: JSON-RPC error -32020 with the request id" \
		".error.code == -32020 and .id == $id"
}
V=(-H "MCP-Protocol-Version: $MODERN_VERSION")
ECHO='{"name":"echo","arguments":{"text":"x"}}'

bad "Mcp-Method differs from the body" 101 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Method: tools/list' -H 'Mcp-Name: echo'
bad "Mcp-Method missing" 102 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Name: echo'
bad "MCP-Protocol-Version missing" 103 tools/call "$ECHO" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
bad "MCP-Protocol-Version differs from _meta" 104 tools/call "$ECHO" \
	-H 'MCP-Protocol-Version: 2025-11-25' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
bad "Mcp-Name differs from params.name" 105 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: add'
bad "Mcp-Name missing on tools/call" 106 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Method: tools/call'
bad "Mcp-Name differs from params.uri on resources/read" 107 resources/read '{"uri":"file:///a.txt"}' \
	"${V[@]}" -H 'Mcp-Method: resources/read' -H 'Mcp-Name: file:///b.txt'
bad "Mcp-Method sent twice" 108 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Method: tools/call' \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
bad "base64 sentinel without padding" 109 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Method: tools/call' \
	-H 'Mcp-Name: =?base64?ZWNobw?='
bad "base64 sentinel with characters outside the alphabet" 110 tools/call "$ECHO" "${V[@]}" \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: =?base64?ZW!o*w==?='
bad "base64 sentinel naming another tool" 111 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Method: tools/call' \
	-H "Mcp-Name: =?base64?$(b64 add)?="
bad "base64 sentinel that is not UTF-8" 112 tools/call "$ECHO" "${V[@]}" -H 'Mcp-Method: tools/call' \
	-H "Mcp-Name: =?base64?$(printf '\xff\xfe' | base64 -w 0)?="
bad "raw non-ASCII Mcp-Name (should have been a sentinel)" 113 tools/call '{"name":"échø","arguments":{}}' \
	"${V[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: échø'
# a string id is echoed as a string
post "$GW" "$(modern_body '"req-α"' tools/call "$ECHO")" "${V[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: nope'
assert_code "string id: rejected" 400
assert_jq "string id: echoed in the -32020 error" '.error.code == -32020 and .id == "req-α"'
# over HTTP/2 as well
post "$GW" "$(modern_body 114 tools/call "$ECHO")" "${V[@]}" -H 'Mcp-Method: tools/list' -H 'Mcp-Name: echo' --http2-prior-knowledge
assert_code "h2c: mismatch rejected" 400
assert_jq "h2c: -32020 with the id" '.error.code == -32020 and .id == 114'

# JSON bodies the gateway's reader refuses are answered by the gateway:
# the route was chosen on Mcp-Method / Mcp-Name, which it could not check
# against such a body (a duplicate "name" is read as either value by
# different parsers).  The error carries no id (none could be read).
unreadable() { # WHAT CODE MESSAGE_ERE BODY
	post "$GW" "$4" "${V[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
	assert_code "$1: refused" 400
	assert_jq "$1: JSON-RPC error $2 naming why" \
		".error.code == $2 and .id == null and (.error.message | test(\"$3\"))"
}
M='"_meta":{"io.modelcontextprotocol/protocolVersion":"'"$MODERN_VERSION"'","io.modelcontextprotocol/clientCapabilities":{}}'
unreadable "a duplicate params.name" -32600 duplicate \
	'{"jsonrpc":"2.0","id":115,"method":"tools/call","params":{"name":"echo","name":"add","arguments":{"a":1,"b":2},'"$M"'}}'
DEEP_OPEN=$(printf '[%.0s' $(seq 1 70)) DEEP_CLOSE=$(printf ']%.0s' $(seq 1 70))
unreadable "arguments nested past the limit" -32600 nesting \
	'{"jsonrpc":"2.0","id":116,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","d":'"$DEEP_OPEN$DEEP_CLOSE"'},'"$M"'}}'
# (an integer beyond 64 bits is valid JSON and passes: serve_numbers.sh)
# more values than the reader builds (262144): a bounded parse, not a
# heap many times the body (an empty array costs ~110 bytes of jansson)
{
	printf '{"jsonrpc":"2.0","id":119,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","pad":['
	head -c 262144 /dev/zero | tr '\0' '\n' | sed 's/.*/[],/' | tr -d '\n'
	printf '[]]},%s}}' "$M"
} >"$T_DIR/many-values.json"
unreadable "more than 262144 JSON values" -32600 "more than 262144 values" "@$T_DIR/many-values.json"
unreadable "a JSON syntax error" -32700 "parse error" \
	'{"jsonrpc":"2.0","id":118,"method":"tools/call","params":{"name":"echo",}}'

assert_eq "no rejected request reached a replica" "" \
	"$({ rec "$R1"; rec "$R2"; } | jq -r '.requests[]? | "\(.method) \(.target)"')"

# --- sentinels that decode to the body's value pass -------------------------------------
post "$GW" "$(modern_body 201 tools/call "$ECHO")" "${V[@]}" -H 'Mcp-Method: tools/call' \
	-H "Mcp-Name: =?base64?$(b64 echo)?="
assert_code "a sentinel for a plain name passes" 200
assert_eq "the replica answered the call" x "$(tool_text)"
post "$GW" "$(modern_body 202 tools/call '{"name":"échø ","arguments":{}}')" "${V[@]}" -H 'Mcp-Method: tools/call' \
	-H "Mcp-Name: =?base64?$(b64 'échø ')?="
assert_code "a sentinel for a non-ASCII name with a trailing space passes the gateway" 200
assert_jq "the replica itself judged it (unknown tool -32602)" '.error.code == -32602 and .id == 202'
post "$GW" "$(modern_body 203 tools/call "$ECHO")" -H "mcp-protocol-version: $MODERN_VERSION" \
	-H 'MCP-METHOD: tools/call' -H 'mcp-name:   echo  '
assert_code "header names in any case, values trimmed" 200
N=$({ rec "$R1"; rec "$R2"; } | jq -r '.requests[]? | select(.method == "POST")' | jq -s length)
assert_eq "exactly the three valid requests reached the replicas" 3 "$N"
stop_serve

# --- validate_headers: false leaves the judgement to the replica ---------------------------
serve_conf "$T_DIR/novalidate.yaml" "routes:
  - upstream: pool
    validate_headers: false"
start_serve -c "$T_DIR/novalidate.yaml"
rec_clear "$R1"
rec_clear "$R2"
post "$G_URL" "$(modern_body 301 tools/call "$ECHO")" "${V[@]}" -H 'Mcp-Method: tools/list' -H 'Mcp-Name: echo'
assert_code "validate_headers false: the mismatch is forwarded and the replica refuses it" 400
assert_jq "validate_headers false: the replica's -32020" '.error.code == -32020 and .id == 301'
assert_eq "validate_headers false: the replica saw it" 1 \
	"$({ rec "$R1"; rec "$R2"; } | jq -r '.requests[]? | select(.method == "POST")' | jq -s length)"
# A body the gateway's reader refuses goes through unjudged as well, byte
# for byte: here a duplicate member.
BIG='{"jsonrpc":"2.0","id":302,"method":"tools/call","params":{"name":"echo","arguments":{"text":"huge"},'"$M"',"huge":1,"huge":2}}'
BIG_SHA=$(printf '%s' "$BIG" | sha256sum | cut -d' ' -f1)
post "$G_URL" "$BIG" "${V[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
assert_eq "validate_headers false: a duplicate member is forwarded byte for byte" 1 \
	"$({ rec "$R1"; echo; rec "$R2"; } | jq -r --arg s "$BIG_SHA" '.requests[]? | select(.body_sha256 == $s) | .body_sha256' 2>/dev/null | grep -c .)"
stop_serve

# --- the gateway's own errors ------------------------------------------------------------------
# gerr WHAT STATUS_ERE CODE ID: the last answer is the gateway's JSON-RPC error.
gerr() {
	assert_code "$1" "$2"
	assert_jq "$1: JSON-RPC error $3 with the request id" ".error.code == $3 and .id == $4"
}
# nothing listens on DEAD
DEAD_PORT=$(free_port)
serve_conf "$T_DIR/dead.yaml" "" "" "http://127.0.0.1:$DEAD_PORT"
start_serve -c "$T_DIR/dead.yaml"
modern "$G_URL" 401 tools/call "$ECHO"
assert_code "only upstream dead: 502 or 503" '50[23]'
assert_jq "only upstream dead: an error in -32000..-32019 with the id" \
	'.error.code <= -32000 and .error.code >= -32019 and .id == 401'
# after the first probe the server is down: no healthy upstream, 503 / -32001
wait_no_upstream() {
	modern "$G_URL" 402 tools/call "$ECHO"
	[ "$CODE" = 503 ]
}
poll_until 10 wait_no_upstream
gerr "no healthy upstream" 503 -32001 402
stop_serve

# a first-byte timeout: 504 / -32003
serve_conf "$T_DIR/slow.yaml" "routes:
  - upstream: pool
    retries: 0
    timeouts:
      first_byte: 500ms"
start_serve -c "$T_DIR/slow.yaml"
modern "$G_URL" 403 tools/call '{"name":"sleep","arguments":{"ms":5000}}'
gerr "first-byte timeout" 504 -32003 403
stop_serve

# a body over limits.max_body_bytes: 413 / -32004
serve_conf "$T_DIR/small.yaml" "" "limits:
  max_body_bytes: 1KiB"
start_serve -c "$T_DIR/small.yaml"
modern "$G_URL" 404 tools/call "$(jq -cn --arg t "$(head -c 3000 /dev/zero | tr '\0' x)" '{name:"echo",arguments:{text:$t}}')"
assert_code "body too large" 413
assert_jq "body too large: JSON-RPC error -32004" '.error.code == -32004'
modern "$G_URL" 405 tools/call "$ECHO"
assert_code "a small body on the same gateway still passes" 200

finish
