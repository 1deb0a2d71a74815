#!/bin/bash
# serve_hardening.sh - hostile-input classes "mcpgw serve" refuses before
# any upstream is contacted (issue 15):
# - an invalid Host (HTTP/1.1) or :authority / host (HTTP/2): a space, a
#   control byte, userinfo '@', a bad port, an empty host before a port,
#   a bad %-escape, two Host fields: 400 (JSON-RPC -32016 when the request
#   was JSON-RPC), never 500; over HTTP/2 what nghttp2 itself finds
#   malformed is reset with PROTOCOL_ERROR (RFC 9113 8.1.1) instead; the
#   reference backend (same HTTP layer) answers 400 too;
# - a singleton header the gateway reads (Authorization, Mcp-Session-Id,
#   MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, Origin)
#   sent twice, in any case: 400 naming it, with the request's id
#   (-32016; MCP's -32020 HeaderMismatch for MCP-Protocol-Version,
#   Mcp-Method and Mcp-Name, on legacy requests too), over HTTP/1.1 and
#   HTTP/2; Content-Length twice: 400 (HTTP layer);
# - security.allowed_origins: a listed origin (scheme and host compared
#   case-insensitively, default port implied) or the gateway's own host
#   ("self") passes, any other Origin and "null" get 403 / -32015 with the
#   request's id, a request without Origin passes; without the section
#   the gateway checks nothing (the backend's own 403 comes through).
# The replicas' /debug/requests show that no refused request reached them.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node nghttp
require_mcpgw
watchdog 120

start_backend --id r1 --record 500
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
security:
  allowed_origins: ["HTTP://LocalHost:8080", "https://app.example", "self"]
EOF
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL
GW_PORT=${G_ADDR##*:}

INIT='{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
posts() { rec "$R1" | jq '[.requests[]? | select(.method == "POST")] | length'; }

# ---- invalid Host, HTTP/1.1 -------------------------------------------------
post "$GW" "$INIT"
assert_code "control: a valid request passes" 200
BEFORE=$(posts)
h1_bad_host() { # WHAT HOST_VALUE
	post "$GW" "$INIT" -H "Host: $2"
	assert_code "HTTP/1.1 Host $1: 400" 400
	assert_jq "HTTP/1.1 Host $1: JSON-RPC -32016 naming Host" \
		'.error.code == -32016 and (.error.message | test("Host"))'
}
h1_bad_host "with a space" 'a b'
h1_bad_host "with userinfo" 'user@127.0.0.1'
h1_bad_host "with a port over 65535" '127.0.0.1:99999'
h1_bad_host "with a non-numeric port" '127.0.0.1:8x'
h1_bad_host "with an empty host before a port" ':8080'
h1_bad_host "with a bad %-escape" 'a%zzb'
h1_bad_host "with an unclosed IPv6 literal" '[::1:80'
h1_bad_host "with a bad IPv6 literal" '[::g]:80'
h1_bad_host "with a slash" 'a/b'
# raw HOST_LINES...: one HTTP/1.1 POST of INIT with these Host lines
# (curl keeps one Host); sets CODE and BODY from the answer.
raw() {
	local port=${G_ADDR##*:} l head="" resp
	for l in "$@"; do head+="$l"$'\r\n'; done
	resp=$(timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$port"'; printf "%s" "$1" >&3; cat <&3' _ \
		"POST /mcp HTTP/1.1"$'\r\n'"$head"$'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: '"${#INIT}"$'\r\nConnection: close\r\n\r\n'"$INIT" | tr -d '\r')
	CODE=$(printf '%s' "$resp" | head -n 1 | awk '{print $2}')
	BODY=$(printf '%s' "$resp" | sed '1,/^$/d')
	: >"$HDR"
}
raw "Host: a.example" "Host: b.example"
assert_code "HTTP/1.1 two Host fields: 400" 400
assert_match "HTTP/1.1 two Host fields: -32016 naming Host" '"code":-32016.*Host' "$BODY"
raw "Host: a.example" "host: a.example"
assert_code "HTTP/1.1 the same Host twice: 400" 400
raw "Host: a"$'\x01'"b"
assert_code "HTTP/1.1 Host with a control byte: 400" 400
raw
assert_code "HTTP/1.1 without Host: 400" 400
raw "Host: 127.0.0.1"
assert_code "raw control: one valid Host passes" 200
# plain text for a client that is not JSON-RPC
req GET "http://$G_ADDR/mcpgw/healthz" -H 'Host: a b'
assert_code "HTTP/1.1 invalid Host on a plain GET: 400" 400
assert_match "plain-text reason" 'invalid Host header' "$BODY"
for good in 'gw.example' 'gw.example:80' '[::1]:8080' '127.0.0.1' 'a-b.example:' 'x%41y'; do
	post "$GW" "$INIT" -H "Host: $good"
	assert_code "HTTP/1.1 valid Host '$good' passes" 200
done
AFTER=$(posts)
assert_eq "only the valid-Host requests reached the replica" $((BEFORE + 7)) "$AFTER"

# the reference backend shares the HTTP layer
req POST "http://$R1/mcp" -H 'Host: a b' -H 'Content-Type: application/json' --data-binary "$INIT"
assert_code "backend: HTTP/1.1 invalid Host: 400" 400
req POST "http://$R1/mcp" -H 'Host: :1' -H 'Content-Type: application/json' --data-binary "$INIT"
assert_code "backend: HTTP/1.1 empty host with a port: 400" 400

# ---- invalid :authority / host, HTTP/2 ---------------------------------------
# curl sends its Host option as :authority (a GET, so that the refusal
# does not race an upload).  h2 WHAT EXPECT HOST: EXPECT is a status, or
# "400|RST" for "400, or the stream reset by nghttp2 as malformed (curl
# reports a stream error)".
h2() {
	local what=$1 want=$2 got
	req GET "http://$G_ADDR/mcpgw/healthz" --http2-prior-knowledge \
		-H 'Accept: application/json' -H "Host: $3"
	got=$CODE
	if [ "$CODE" = 000 ] && grep -Eq 'PROTOCOL_ERROR|HTTP/2 framing layer' "$T_DIR/curl.err"; then
		got=RST
	fi
	if printf '%s' "$got" | grep -Eqx -- "$want"; then
		ok "HTTP/2 $what ($got)"
	else
		fail "HTTP/2 $what: expected $want, got $got: $BODY $(cat "$T_DIR/curl.err")"
	fi
	if [ "$got" = 400 ]; then
		assert_jq "HTTP/2 $what: -32016" '.error.code == -32016'
	fi
}
h2 ":authority with a space" "400|RST" 'a b'
h2 ":authority with userinfo" 400 'u@gw.example'
h2 ":authority with a port over 65535" "400|RST" 'gw.example:99999'
h2 ":authority with a non-numeric port" 400 'gw.example:8x'
h2 ":authority with an empty host before a port" "400|RST" ':8080'
h2 ":authority with a bad %-escape" 400 'a%zz'
h2 ":authority with a bad IPv6 literal" "400|RST" '[::g]:80'
h2 "valid :authority passes" 200 'gw.example:80'
# a host field next to :authority, and two of them (nghttp sends what it
# is given as regular fields)
h2n() { # WHAT EXPECT HEADERS...
	local what=$1 want=$2 st
	shift 2
	timeout 10 nghttp -v -n "$@" "http://$G_ADDR/mcpgw/healthz" >"$T_DIR/nghttp.out" 2>&1
	st=$(awk '/recv \(stream_id=[0-9]+\) :status:/ { s = $NF } END { print s }' "$T_DIR/nghttp.out")
	if [ -z "$st" ] && grep -q 'error_code=PROTOCOL_ERROR' "$T_DIR/nghttp.out"; then
		st=RST
	fi
	if printf '%s' "${st:-none}" | grep -Eqx -- "$want"; then
		ok "HTTP/2 $what (${st:-none})"
	else
		fail "HTTP/2 $what: expected $want, got ${st:-none}: $(head -c 300 "$T_DIR/nghttp.out")"
	fi
}
h2n "host field with userinfo" 400 -H "host: u@gw.example"
h2n "two host fields" "400|RST" -H "host: a.example" -H "host: a.example"
h2n "a valid host field passes" 200 -H "host: gw.example"

# ---- repeated singleton headers ------------------------------------------
BEFORE=$(posts)
for proto in --http1.1 --http2-prior-knowledge; do
	for h in "Authorization: Bearer a|Authorization: Bearer b" \
		"Mcp-Session-Id: s1|Mcp-Session-Id: s2" \
		"Mcp-Session-Id: s1|MCP-SESSION-ID: s1" \
		"MCP-Protocol-Version: 2025-06-18|MCP-Protocol-Version: 2025-06-18" \
		"Mcp-Method: initialize|mcp-method: tools/call" \
		"Mcp-Name: a|Mcp-Name: b" \
		"Last-Event-ID: 1|Last-Event-ID: 2" \
		"Origin: https://app.example|Origin: https://app.example"; do
		name=${h%%:*}
		code=-32016
		case $name in MCP-Protocol-Version | Mcp-Method | Mcp-Name) code=-32020 ;; esac
		post "$GW" "$INIT" "$proto" -H "${h%%|*}" -H "${h#*|}"
		assert_code "$proto: $name twice: 400" 400
		assert_jq "$proto: $name twice: $code naming it, with the id" \
			".error.code == $code and .id == 7 and (.error.message | ascii_downcase | contains(\"$(printf '%s' "$name" | tr 'A-Z' 'a-z')\"))"
	done
done
# HTTP/1.1 Content-Length twice: curl sends both custom lines
req POST "$GW" --http1.1 -H 'Content-Type: application/json' -H "Content-Length: ${#INIT}" -H "Content-Length: ${#INIT}" --data-binary "$INIT"
assert_code "HTTP/1.1 Content-Length twice: 400" 400
assert_eq "no request with a repeated header reached the replica" "$BEFORE" "$(posts)"
# a single one of each passes
post "$GW" "$INIT" -H 'Authorization: Bearer a' -H 'Last-Event-ID: 1'
assert_code "one Authorization and one Last-Event-ID pass" 200

# ---- Origin --------------------------------------------------------------
origin() { # WHAT ORIGIN EXPECTED_STATUS [curl options]
	local what=$1 o=$2 want=$3
	shift 3
	post "$GW" "$INIT" -H "Origin: $o" "$@"
	assert_code "Origin $what" "$want"
	if [ "$want" = 403 ]; then
		assert_jq "Origin $what: -32015 with the request id" \
			'.error.code == -32015 and .id == 7'
	fi
}
BEFORE=$(posts)
origin "listed (case differs)" "http://localhost:8080" 200
origin "listed, as written" "HTTP://LocalHost:8080" 200
origin "self (the gateway's own Host)" "http://127.0.0.1:$GW_PORT" 200
origin "self over HTTP/2" "http://127.0.0.1:$GW_PORT" 200 --http2-prior-knowledge
PASSED=$(posts)
assert_eq "the allowed requests reached the replica" $((BEFORE + 4)) "$PASSED"
origin "another port" "http://localhost:8081" 403
origin "another scheme" "https://localhost:8080" 403
origin "no port where the entry has one" "http://localhost" 403
origin "null" "null" 403
origin "with a path" "http://localhost:8080/x" 403
origin "unlisted" "http://evil.example" 403
origin "unlisted over HTTP/2" "http://evil.example" 403 --http2-prior-knowledge
origin "self's host on another port" "http://127.0.0.1:1" 403
req GET "http://$G_ADDR/mcpgw/healthz" -H 'Origin: http://evil.example'
assert_code "Origin check covers the gateway's own pages" 403
assert_eq "no refused Origin reached the replica" "$PASSED" "$(posts)"
post "$GW" "$INIT"
assert_code "no Origin: passes" 200

# ---- reload: the list follows the file on SIGHUP ------------------------------
hup() { # PATTERN: SIGHUP, then wait (bounded) for one more matching line
	local before i=0
	before=$(grep -c "$1" "$G_ERR")
	kill -HUP "$G_PID"
	while [ "$(grep -c "$1" "$G_ERR")" -le "$before" ]; do
		[ $i -lt 100 ] || die "no '$1' line after SIGHUP: $(tail -n 5 "$G_ERR")"
		sleep 0.1
		i=$((i + 1))
	done
}
cp "$T_DIR/serve.yaml" "$T_DIR/serve.orig.yaml"
sed -i 's|^  allowed_origins:.*|  allowed_origins: ["http://localhost:9999"]|' "$T_DIR/serve.yaml"
hup "reload: done"
origin "newly listed after reload" "http://localhost:9999" 200
origin "no longer listed after reload" "http://localhost:8080" 403
sed -i '/^security:/,$d' "$T_DIR/serve.yaml"
hup "reload: done"
post "$GW" "$INIT" -H 'Origin: http://evil.example'
assert_code "security section removed by reload: the backend judges the Origin" 403
assert_jq "the backend's answer after the reload" '.error.code == -32600'
cp "$T_DIR/serve.orig.yaml" "$T_DIR/serve.yaml"

# ---- default: no security section, no check --------------------------------
sed '/^security:/,$d' "$T_DIR/serve.yaml" >"$T_DIR/plain.yaml"
start_serve -c "$T_DIR/plain.yaml"
post "$G_URL" "$INIT" -H 'Origin: http://evil.example'
assert_code "no security section: the Origin reaches the backend, which refuses it" 403
assert_jq "the backend's own answer (-32600), not the gateway's" '.error.code == -32600'

# ---- configuration -----------------------------------------------------------
for badent in '"https://app.example/path"' '"app.example"' '"https://user@app.example"' '"https://app.example:0"' '42'; do
	sed "s|^  allowed_origins:.*|  allowed_origins: [$badent]|" "$T_DIR/serve.yaml" >"$T_DIR/bad.yaml"
	out=$("$MCPGW" check-config -c "$T_DIR/bad.yaml" 2>&1)
	rc=$?
	assert_ne "check-config refuses allowed_origins entry $badent" 0 "$rc"
	assert_match "check-config names security.allowed_origins" 'allowed_origins' "$out"
done
finish
