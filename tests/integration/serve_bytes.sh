#!/bin/bash
# serve_bytes.sh - what "mcpgw serve" (stateless) delivers to a modern
# replica is what the client sent: bodies with unusual _meta (unicode,
# escapes, big numbers, look-alike keys, odd whitespace, key order, a
# chunked upload, a large body) arrive byte-identical (SHA-256 recorded by
# "mcpgw backend --record"); end-to-end headers (MCP-Protocol-Version,
# Mcp-Method, Mcp-Name, Mcp-Param-*, traceparent, Authorization (the group
# opts in with upstream_auth: passthrough), unknown ones, a stray
# Mcp-Session-Id) arrive unchanged and in order; hop-by-hop
# fields (RFC 9110 7.6.1, and those named in Connection) are removed; the
# client's Forwarded / X-Forwarded-For are not trusted and the gateway's
# own are appended.  GET and DELETE on the MCP endpoint answer 405.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node sha256sum
require_mcpgw
watchdog 90

start_backend --era modern --id direct --record 50
DIRECT=$B_ADDR
start_backend --era modern --id r1 --record 200
R1=$B_ADDR
start_backend --era modern --id r2 --record 200
R2=$B_ADDR

# TCP health probes: the replicas' records then hold only client traffic.
# The stateless mode (not the default auto): GET and DELETE answer 405.
# upstream_auth: passthrough, so that Authorization is one of the
# end-to-end fields compared (the default, strip, removes it:
# serve_upstream_auth.sh).
cat >"$T_DIR/serve.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
mode: stateless
upstreams:
  - name: pool
    upstream_auth: passthrough
    servers:
      - url: http://$R1
      - url: http://$R2
    health:
      type: tcp
      interval: 1s
EOF
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL
GWADDR=$G_ADDR
MCPH=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')

# find_sha SHA: the recorded request (JSON) with that body digest on
# either replica, or nothing.
find_sha() {
	{ rec "$R1"; echo; rec "$R2"; } | jq -c --arg s "$1" '.requests[]? | select(.body_sha256 == $s)' 2>/dev/null | head -n 1
}

# send_file NAME FILE NAME_HEADER [curl options...]: POSTs FILE's exact
# bytes through the gateway as tools/call with matching SEP-2243 headers,
# then checks the replica got the same bytes.
send_file() {
	local what=$1 f=$2 mname=$3 sha len got
	shift 3
	sha=$(sha256sum <"$f" | cut -d' ' -f1)
	len=$(wc -c <"$f" | tr -d ' ')
	req POST "$GW" "${MCPH[@]}" -H "MCP-Protocol-Version: $MODERN_VERSION" \
		-H 'Mcp-Method: tools/call' -H "Mcp-Name: $mname" --data-binary "@$f" "$@"
	assert_code "$what: answered" 200
	got=$(find_sha "$sha")
	if [ -n "$got" ]; then
		ok "$what: the replica received the exact bytes ($len bytes, sha256 ${sha:0:12}…)"
		assert_eq "$what: body length" "$len" "$(printf '%s' "$got" | jq -r .body_length)"
	else
		fail "$what: no replica recorded a body with sha256 $sha ($len bytes); recorded: $({ rec "$R1"; rec "$R2"; } | jq -c '[.requests[]? | {len: .body_length, sha: .body_sha256[0:12]}]' | tr '\n' ' ')"
	fi
}

META_STD='"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}'

# --- bodies -----------------------------------------------------------------------
# unicode, raw and escaped (a surrogate pair), in keys and values
printf '%s' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ünïcödé ☃ 日本"},"_meta":{'"$META_STD"',"x.example/ключ":"значение 🎉","x.example/esc":"\ud83c\udf89 \u00e9 \u2603"}}}' >"$T_DIR/b1.json"
# escapes the parser decodes: \/ in the method, \u0065 in the tool name,
# control escapes, quotes and backslashes
printf '%s' '{"jsonrpc":"2.0","id":2,"method":"tools\/call","params":{"name":"\u0065cho","arguments":{"text":"tab\there \"quoted\" back\\slash\nline \/ \b\f\r"},"_meta":{'"$META_STD"',"x.example\/path":"a\/b"}}}' >"$T_DIR/b2.json"
# numbers a double cannot hold exactly, negative zero, exponents
printf '%s' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"n"},"_meta":{'"$META_STD"',"big":9007199254740993,"neg":-9223372036854775808,"real":123456789012345678901234567890.5,"tiny":1E-7,"exp":1.0e+2,"zero":-0,"pi":3.14159265358979323846264338327950288,"max":1.7976931348623157e308}}}' >"$T_DIR/b3.json"
# look-alike keys: case, trailing space, composed vs decomposed é, an
# escaped key equal to no other after decoding
printf '%s' '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"keys"},"_meta":{'"$META_STD"',"a":1,"A":2,"a ":3," a":4,"caf\u00e9":5,"cafe\u0301":6,"x.example/k":7,"x.example\/k2":8}}}' >"$T_DIR/b4.json"
# odd whitespace (tabs, CRLF, spaces around ':' and ',') and unusual key
# order (id last, params before method, _meta before name)
printf '{ \t"params" :\r\n {"_meta"\t:\t{ "io.modelcontextprotocol/clientCapabilities" : { } ,\n\n "io.modelcontextprotocol/protocolVersion":"2026-07-28" } ,"arguments":{ "text" : "  spaced  " } , "name":"echo"\t} ,\r\n"method" : "tools/call",  "jsonrpc":"2.0" ,"id":"id-5"  }\r\n\t \n' >"$T_DIR/b5.json"

send_file "unicode _meta" "$T_DIR/b1.json" echo
send_file "escaped method, name and _meta" "$T_DIR/b2.json" echo
assert_eq "escaped body: the tool saw the decoded text" "$(printf 'tab\there "quoted" back\\slash\nline / \b\f\r')" "$(tool_text)"
send_file "big numbers" "$T_DIR/b3.json" echo
send_file "look-alike _meta keys" "$T_DIR/b4.json" echo
send_file "odd whitespace and key order" "$T_DIR/b5.json" echo
assert_jq "odd whitespace: the answer names the string id" '.id == "id-5"'
send_file "unicode _meta over h2c" "$T_DIR/b1.json" echo --http2-prior-knowledge
send_file "big numbers over h2c" "$T_DIR/b3.json" echo --http2-prior-knowledge
send_file "chunked upload (HTTP/1.1 Transfer-Encoding)" "$T_DIR/b4.json" echo -H 'Transfer-Encoding: chunked'

# A large body (about 300 KB of text) in one request.
BIGTEXT=$(head -c 225000 /dev/urandom | base64 -w 0)
printf '%s' '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'"$BIGTEXT"'"},"_meta":{'"$META_STD"'}}}' >"$T_DIR/b6.json"
send_file "large body" "$T_DIR/b6.json" echo
send_file "large body over h2c" "$T_DIR/b6.json" echo --http2-prior-knowledge

# A body the gateway's reader refuses (an integer beyond 64 bits, say)
# is refused by the gateway on a validating route and forwarded byte for
# byte on a route with validate_headers: false (serve_validate.sh).

# --- headers --------------------------------------------------------------------------
# The same request goes once straight to a recording replica (what the
# client put on the wire, in order) and once through the gateway.
E2E=(
	-H "MCP-Protocol-Version: $MODERN_VERSION"
	-H 'Mcp-Method: tools/call'
	-H 'Mcp-Name: echo_region'
	-H 'Mcp-Param-Region: eu-west-1'
	-H 'Mcp-Param-Unknown-To-Gateway: =?base64?w6l0w6k=?='
	-H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
	-H 'tracestate: vendor=opaque'
	-H 'Authorization: Bearer s3cr3t.t0ken'
	-H 'X-Custom: a,  b ;q=0.5'
	-H 'Mcp-Session-Id: stray-session-0123456789'
	-H 'X-Custom: second'
	-H 'Cache-Control: no-cache'
)
HOP=(
	-H 'Connection: keep-alive, X-Hop-Secret'
	-H 'X-Hop-Secret: must-not-pass'
	-H 'Keep-Alive: timeout=5, max=100'
	-H 'TE: trailers'
	-H 'Upgrade: example/1'
	-H 'Proxy-Connection: keep-alive'
	-H 'Transfer-Encoding: chunked'
)
SPOOF=(
	-H 'X-Forwarded-For: 203.0.113.9'
	-H 'Forwarded: for=203.0.113.9;proto=https'
	-H 'X-Real-IP: 203.0.113.9'
)
HBODY=$(modern_body 20 tools/call '{"name":"echo_region","arguments":{"region":"eu-west-1","text":"headers"}}')
printf '%s' "$HBODY" >"$T_DIR/h.json"
HSHA=$(sha256sum <"$T_DIR/h.json" | cut -d' ' -f1)

# Fields the transport rewrites by design and that the comparison leaves
# out: Host (checked apart), Content-Length / Transfer-Encoding (framing).
NORM='[.headers[] | select(.[0] | ascii_downcase | IN("host","content-length","transfer-encoding") | not) | [(.[0] | ascii_downcase), .[1]]]'
HOPS='["connection","keep-alive","te","upgrade","proxy-connection","x-hop-secret","transfer-encoding","x-forwarded-for","forwarded","x-real-ip"]'

check_headers() { # LABEL CURL_PROTO_OPTION HOP_FIELDS?
	local label=$1 proto=$2 withhop=$3 sent got exp
	local extra=("${E2E[@]}" "${SPOOF[@]}")
	[ "$withhop" = 1 ] && extra+=("${HOP[@]}")
	rec_clear "$DIRECT"
	req POST "http://$DIRECT/mcp" "${MCPH[@]}" "${extra[@]}" "$proto" --data-binary "@$T_DIR/h.json"
	assert_code "$label: direct request accepted" 200
	sent=$(rec "$DIRECT" | jq -c '.requests[-1]')
	req POST "$GW" "${MCPH[@]}" "${extra[@]}" "$proto" --data-binary "@$T_DIR/h.json"
	assert_code "$label: through the gateway" 200
	assert_eq "$label: echo_region answered" "[eu-west-1] headers" "$(tool_text)"
	assert_eq "$label: no session header in the answer" "" "$(hdr mcp-session-id)"
	got=$(find_sha "$HSHA" | head -n 1)
	[ -n "$got" ] || { fail "$label: the request did not reach a replica"; return; }
	# expected: what the client sent, minus hop-by-hop and spoofed fields
	exp=$(printf '%s' "$sent" | jq -c --argjson hops "$HOPS" "$NORM | map(select(.[0] | IN(\$hops[]) | not))")
	assert_eq "$label: end-to-end headers arrive unchanged and in order" "$exp" \
		"$(printf '%s' "$got" | jq -c "$NORM | map(select(.[0] | IN(\"forwarded\", \"x-forwarded-for\") | not))")"
	assert_eq "$label: Forwarded and X-Forwarded-For are appended after them" "forwarded x-forwarded-for" \
		"$(printf '%s' "$got" | jq -r "$NORM | .[-2:] | map(.[0]) | sort | join(\" \")")"
	assert_eq "$label: X-Forwarded-For names the client only" "127.0.0.1" "$(rec_header "$got" x-forwarded-for | tr '\n' '|' | sed 's/|$//')"
	assert_match "$label: Forwarded names the client" '^for=127\.0\.0\.1;proto=http(;|$)' "$(rec_header "$got" forwarded | tr '\n' '|')"
	assert_nomatch "$label: nothing of the client's forwarding claims" '203\.0\.113\.9' "$(printf '%s' "$got" | jq -c .headers)"
	assert_eq "$label: the client's authority is kept (Host)" "$GWADDR" "$(rec_header "$got" host | tr '\n' '|' | sed 's/|$//')"
	for h in Authorization traceparent Mcp-Session-Id Mcp-Param-Unknown-To-Gateway; do
		assert_eq "$label: $h unchanged" "$(rec_header "$sent" "$h")" "$(rec_header "$got" "$h")"
	done
	if [ "$withhop" = 1 ]; then
		assert_eq "$label: hop-by-hop fields removed" "" \
			"$(printf '%s' "$got" | jq -r --argjson hops '["connection","keep-alive","te","upgrade","proxy-connection","x-hop-secret","x-real-ip"]' '.headers[] | select(.[0] | ascii_downcase | IN($hops[])) | .[0]')"
	fi
	rec_clear "$R1"
	rec_clear "$R2"
}
check_headers "h1" --http1.1 1
check_headers "h2c" --http2-prior-knowledge 0

# --- forwarded.trust_client: the chain is extended, not replaced ----------------
cat >"$T_DIR/trust.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
forwarded:
  trust_client: true
upstreams:
  - name: pool
    servers:
      - url: http://$R1
    health:
      type: tcp
EOF
start_serve -c "$T_DIR/trust.yaml"
TRUSTED=$G_ADDR
rec_clear "$R1"
req POST "http://$TRUSTED/mcp" "${MCPH[@]}" "${E2E[@]}" "${SPOOF[@]}" --data-binary "@$T_DIR/h.json"
assert_code "trust_client: answered" 200
GOT=$(rec "$R1" | jq -c '.requests[-1]')
assert_eq "trust_client: X-Forwarded-For extended with the client" "203.0.113.9, 127.0.0.1" "$(rec_header "$GOT" x-forwarded-for | tr '\n' '|' | sed 's/|$//')"
assert_match "trust_client: the client's Forwarded is kept and ours follows" \
	'^for=203\.0\.113\.9;proto=https\|for=127\.0\.0\.1;proto=http' "$(rec_header "$GOT" forwarded | tr '\n' '|')"
stop_serve

# --- 405 for GET / DELETE on the MCP endpoint --------------------------------------------
rec_clear "$R1"
rec_clear "$R2"
req GET "$GW" -H 'Accept: application/json, text/event-stream' -H "MCP-Protocol-Version: $MODERN_VERSION"
assert_code "GET /mcp answers 405" 405
assert_match "GET /mcp: Allow names POST" 'POST' "$(hdr allow)"
assert_jq "GET /mcp: a JSON-RPC error in the gateway's range" '.error.code <= -32000 and .error.code >= -32019'
req DELETE "$GW" -H 'Accept: application/json, text/event-stream' -H 'Mcp-Session-Id: stray-session-0123456789'
assert_code "DELETE /mcp answers 405" 405
assert_match "DELETE /mcp: Allow names POST" 'POST' "$(hdr allow)"
req GET "$GW" -H 'Accept: text/event-stream' --http2-prior-knowledge
assert_code "GET /mcp over h2c (a legacy-style stream request) answers 405" 405
assert_eq "GET/DELETE were answered by the gateway: no replica saw them" "" \
	"$({ rec "$R1"; rec "$R2"; } | jq -r '.requests[]? | select(.method == "GET" or .method == "DELETE") | "\(.method) \(.target)"')"
# Other paths are not the MCP endpoint and pass through.
req GET "http://$GWADDR/.well-known/oauth-protected-resource"
assert_code "GET on another path is forwarded (the replica answers 404)" 404
assert_eq "the replica saw that GET" "/.well-known/oauth-protected-resource" \
	"$({ rec "$R1"; rec "$R2"; } | jq -r '.requests[]? | select(.method == "GET") | .target' | head -n 1)"

finish
