#!/bin/bash
# serve_numbers.sh - RFC 8259 numbers of any size and precision pass the
# gateway with validation on (issue 16): an integer beyond 64 bits in
# _meta, in the arguments or as the id, 1e400, -0, 1E-400, a fraction of
# 300 digits.  Each request reaches the replica byte for byte (the SHA-256
# of the recorded body is the one sent), over HTTP/1.1 and h2c; the
# replica's answer and the gateway's own error answers (a SEP-2243
# mismatch, checked before any upstream) name a big id by its exact text.
# Syntax is still checked: a malformed number is -32700, and an id that
# is not an integer (1e400, as 1.5) is -32600.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq sha256sum
require_mcpgw
watchdog 90

start_backend --era modern --id r1 --record 200
R1=$B_ADDR
cat >"$T_DIR/serve.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: pool
    servers:
      - url: http://$R1
    health:
      type: tcp
      interval: 1s
EOF
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL

H=(-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')
M='"io.modelcontextprotocol/protocolVersion":"'"$MODERN_VERSION"'","io.modelcontextprotocol/clientCapabilities":{}'
BIG=12345678901234567890123
FRAC=0.$(printf '3%.0s' $(seq 1 300))
# body ID ARGS META_EXTRA: a tools/call of echo, written as text (a JSON
# tool would rewrite the numbers)
body() {
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"n"%s},"_meta":{%s%s}}}' \
		"$1" "$2" "$3" "$M"
}

# passes WHAT BODY [curl options]: answered by the replica (200, the echo)
# and received there byte for byte.
passes() {
	local what=$1 b=$2
	shift 2
	post "$GW" "$b" "${H[@]}" "$@"
	assert_code "$what: forwarded" 200
	assert_eq "$what: the replica answered" n "$(tool_text)"
	assert_eq "$what: received byte for byte" 1 "$(rec_sha "$R1" "$(sha_of "$b")")"
}

for v in 1.1 2; do
	opt=(--http1.1)
	[ "$v" = 2 ] && opt=(--http2-prior-knowledge)
	rec_clear "$R1"
	passes "h$v: a 23-digit integer in _meta" "$(body 1 "" "\"big\":$BIG,")" "${opt[@]}"
	passes "h$v: a negative integer beyond 64 bits in _meta" \
		"$(body 2 "" '"n":-18446744073709551617,')" "${opt[@]}"
	passes "h$v: 1e400 in the arguments" "$(body 3 ',"x":1e400' "")" "${opt[@]}"
	passes "h$v: -0 and 1E-400 in the arguments" "$(body 4 ',"a":-0,"b":1E-400,"c":-1E+400' "")" "${opt[@]}"
	passes "h$v: a 300-digit fraction in arguments and _meta" \
		"$(body 5 ",\"f\":$FRAC" "\"f\":-$FRAC,")" "${opt[@]}"
	passes "h$v: an integer beyond 64 bits in the arguments" \
		"$(body 6 ',"a":18446744073709551616,"b":1' "")" "${opt[@]}"
	# a big id: the replica's answer names it by its exact text
	passes "h$v: a 30-digit id" "$(body 123456789012345678901234567890 "" "")" "${opt[@]}"
	assert_match "h$v: the answer carries the id's text" \
		'"id":123456789012345678901234567890[,}]' "$BODY"
	assert_eq "h$v: HTTP version" "$v" "$HTTPV"

	# the gateway's own answer: a SEP-2243 mismatch, before any upstream
	rec_clear "$R1"
	post "$GW" "$(body -98765432109876543210987 ',"x":1e400' "")" \
		-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' \
		-H 'Mcp-Name: add' "${opt[@]}"
	assert_code "h$v: a mismatch with a big id: refused" 400
	assert_jq "h$v: -32020" '.error.code == -32020'
	assert_match "h$v: the gateway's error names the id by its text" \
		'"id":-98765432109876543210987[,}]' "$BODY"
	# still refused: a malformed number, an id that is no integer
	post "$GW" "$(body 7 ',"x":01' "")" "${H[@]}" "${opt[@]}"
	assert_code "h$v: a leading zero: refused" 400
	assert_jq "h$v: -32700" '.error.code == -32700 and .id == null'
	post "$GW" "$(body 1e400 "" "")" "${H[@]}" "${opt[@]}"
	assert_code "h$v: id 1e400: refused" 400
	assert_jq "h$v: -32600, id must be an integer or a string" \
		'.error.code == -32600 and (.error.message | test("id must be"))'
	assert_eq "h$v: no refused request reached the replica" 0 \
		"$(rec "$R1" | jq '[.requests[]? | select(.method == "POST")] | length')"
done

finish
